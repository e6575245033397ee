/* stage.c - see stage.h */
#include "stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "stage_array.h"
#include "stage_find.h"
#include "statefile.h"



/* What a directive needs now. */
typedef enum {
	V_START,     /* never started, or lost: start it */
	V_PENDING,   /* started, not visible yet (within StartVisibleGrace) */
	V_RUNNING,
	V_DONE,
	V_KEPT,      /* stage-in done in an earlier attempt: not repeated */
	V_FAILED,    /* its transfer failed (data_* starts it again) */
	V_BROKEN,    /* a mv failed after moving data: never restarted */
} verdict_t;

typedef struct {
	const cbb_directive_t *d;
	verdict_t v;
	const cbb_transfer_t *x; /* the transfer that stands for it */
	bool lost;               /* an earlier transfer of it was lost */
	uint32_t kept_from;      /* V_KEPT: the attempt that staged it */
	bool shared;             /* the array's shared stage-in stands for it */
	char comment[CBB_KEY_MAX];
} dview_t;

static void make_record(const cbb_job_ctx_t *j, cbb_rec_t *r,
			cbb_key_type_t type, uint32_t attempt, uint32_t index,
			char kind, const char *id)
{
	memset(r, 0, sizeof(*r));
	r->restart = j->restart;
	r->submit = j->submit;
	r->type = (int)type;
	r->attempt = attempt;
	r->index = index;
	r->made = (int64_t)time(NULL);
	r->kind = kind;
	snprintf(r->id, sizeof(r->id), "%s", id && id[0] ? id : "-");
}

/* an array's shared stage-ins are recorded for the whole array */
static bool for_array(cbb_key_type_t type, char kind)
{
	return type == CBB_KEY_SHARED && kind != CBB_REC_JOINED;
}

static void write_records(cbb_job_ctx_t *j, const cbb_rec_t *r, size_t n,
			  bool array)
{
	cbb_err_t e;
	int rc;

	if (n == 0)
		return;
	cbb_err_clear(&e);
	rc = array ? cbb_shared_add(j->sd, j->array_job_id, r, n, &e)
		   : cbb_recs_add(j->sd, j->job_id, r, n, &e);
	if (rc < 0)
		cbb_job_log(j, CBB_LOG_ERROR, "%s", e.msg);
}

static void add_record(cbb_job_ctx_t *j, cbb_key_type_t type,
		       uint32_t attempt, uint32_t index, char kind,
		       const char *id)
{
	cbb_rec_t r;

	make_record(j, &r, type, attempt, index, kind, id);
	write_records(j, &r, 1, for_array(type, kind));
}

/*
 * The records of one batch of starts, each file written once: a data_in
 * of N directives opens the job's record file twice, not 2N times.
 */
typedef struct {
	cbb_rec_t *own, *array;
	size_t n_own, n_array;
} batch_t;

static void batch_add(const cbb_job_ctx_t *j, batch_t *b,
		      cbb_key_type_t type, uint32_t attempt, uint32_t index,
		      char kind, const char *id)
{
	if (for_array(type, kind))
		make_record(j, &b->array[b->n_array++], type, attempt, index,
			    kind, id);
	else
		make_record(j, &b->own[b->n_own++], type, attempt, index,
			    kind, id);
}

static void batch_write(cbb_job_ctx_t *j, batch_t *b)
{
	write_records(j, b->own, b->n_own, false);
	write_records(j, b->array, b->n_array, true);
	b->n_own = b->n_array = 0;
}

/* Decide what each directive of `stage` needs (views has plan->n room). */
static size_t view(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, const cbb_transfers_t *have,
		   const cbb_recs_t *recs, const cbb_recs_t *shared,
		   dview_t *out)
{
	cbb_key_type_t type = cbb_stage_key(stage);
	uint32_t a = cbb_attempt(j, stage);
	int64_t now = (int64_t)time(NULL);
	size_t i, n = 0;

	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		dview_t *v = &out[n];
		const cbb_rec_t *r;
		const cbb_transfer_t *x;
		long kept;

		if (d->stage != stage || d->skip)
			continue;
		n++;
		memset(v, 0, sizeof(*v));
		v->d = d;
		v->shared = cbb_is_shared(j, d, stage);
		if (v->shared) {
			x = cbb_pick_shared(have, d);
			r = cbb_open_record(shared, CBB_KEY_SHARED, 0, d->index,
					&v->lost);
		} else {
			x = cbb_pick(have, type, d->index, (long)a, NULL);
			r = cbb_open_record(recs, (int)type, a, d->index, &v->lost);
		}
		v->x = x;
		if (x && !cbb_transfer_failed(x)) {
			v->v = cbb_transfer_succeeded(x) ? V_DONE : V_RUNNING;
			continue;
		}
		if (r && !cbb_rec_visible(r, have, v->shared ? CBB_KEY_SHARED : type,
				      v->shared ? 0 : a, d->index)) {
			if (now - r->made < (int64_t)j->cfg->start_visible_grace_s) {
				v->v = V_PENDING; /* newer than any failure */
				continue;
			}
			cbb_job_log(j, CBB_LOG_ERROR, "line %u: %s transfer %s started %lld "
			      "s ago never showed up on the Conduit server "
			      "(StartVisibleGrace=%u s): it is lost; starting "
			      "the directive again", d->line,
			      cbb_stage_word(stage), r->kind == CBB_REC_STARTED ?
			      r->id : "(unconfirmed)", (long long)(now - r->made),
			      j->cfg->start_visible_grace_s);
			if (v->shared)
				add_record(j, CBB_KEY_SHARED, 0, d->index,
					   CBB_REC_LOST, r->id);
			else
				add_record(j, type, a, d->index, CBB_REC_LOST,
					   r->id);
			v->lost = true;
			v->v = V_START;
			continue;
		}
		if (x) {
			/* a move that failed after moving data is not redone */
			v->v = d->action == CBB_MV && x->started ? V_BROKEN :
								    V_FAILED;
			continue;
		}
		kept = stage == CBB_STAGE_IN && !d->every_attempt && a > 0 ?
			       cbb_kept_from(have, d, a) : -1;
		if (kept >= 0) {
			v->v = V_KEPT;
			v->kept_from = (uint32_t)kept;
			continue;
		}
		v->v = V_START;
	}
	return n;
}

/* Fill a start request for view v (its comment kept in v->comment). */
static void fill_start(cbb_job_ctx_t *j, dview_t *v, cbb_key_type_t type,
		       uint32_t attempt, cbb_start_t *s)
{
	const cbb_directive_t *d = v->d;
	cbb_key_t k;

	memset(&k, 0, sizeof(k));
	k.job_id = v->shared ? j->array_job_id : j->job_id;
	memcpy(k.cluster, j->cluster, sizeof(k.cluster));
	k.restart = v->shared ? 0 : attempt;
	k.index = d->index;
	k.type = v->shared ? CBB_KEY_SHARED : type;
	k.line = d->line;
	cbb_key_format(v->comment, sizeof(v->comment), &k);
	memset(s, 0, sizeof(*s));
	s->user = j->user;
	s->action = cbb_action_of(d);
	s->sources = (const char *const *)d->sources;
	s->nsources = d->nsources;
	s->destination = d->destination;
	s->comment = v->comment;
}

/* The line a transfer was started for (its key), else the directive's. */
static unsigned line_of(const dview_t *v)
{
	cbb_key_t k;

	if (v->x && cbb_key_parse(v->x->comment, &k) && k.line)
		return k.line;
	return v->d->line;
}

static void broken_mv(cbb_err_t *err, const dview_t *v)
{
	char msg[CBB_ERR_MAX / 2];

	snprintf(msg, sizeof(msg), "%s", v->x->error_message);
	cbb_one_line(msg);
	cbb_err(err, "line %u: mv failed after it began moving data (transfer "
		"%s: %s: %s); it is not restarted: check the source and "
		"destination, then requeue", line_of(v), v->x->id,
		cbb_error_name(v->x->error), msg);
}

static void failed_transfer(cbb_err_t *err, cbb_stage_t stage,
			    const dview_t *v)
{
	char msg[CBB_ERR_MAX - 200];
	const char *why = "";

	snprintf(msg, sizeof(msg), "%s", v->x->error_message[0] ?
		 v->x->error_message : "(no message)");
	cbb_one_line(msg);
	if (v->lost && v->d->action == CBB_MV)
		why = " (an earlier transfer of this mv was lost by the "
		      "Conduit server after it started: its source may "
		      "already have been moved)";
	cbb_err(err, "line %u: %s %s failed: %s: %s%s", line_of(v),
		cbb_stage_word(stage), v->d->action == CBB_MV ? "mv" : "cp",
		cbb_error_name(v->x->error), msg, why);
}

/*
 * Whether a hurried teardown found this attempt over (statefile.h,
 * cbb_over_mark): Slurm can still run a stage hook after it.
 */
static bool attempt_over(const cbb_job_ctx_t *j)
{
	return cbb_over_for(j->sd, j->job_id, j->submit);
}

/*
 * The teardown came while start_views worked: stop what this call
 * started for the job alone, by id (Query may not show it yet), and
 * forget the job's records.  An array's shared stage-in serves the other
 * tasks: one started stays; one not sent is marked refused, so that they
 * start it at once instead of waiting for it to show up.
 */
static void undo_starts(cbb_job_ctx_t *j, dview_t **which, cbb_start_t *req,
			size_t k, bool sent)
{
	cbb_stop_t *stop = calloc(k ? k : 1, sizeof(*stop));
	size_t i, n = 0;

	for (i = 0; i < k; i++) {
		if (which[i]->shared) {
			if (!sent)
				add_record(j, CBB_KEY_SHARED, 0, which[i]->d->index,
					   CBB_REC_REFUSED, NULL);
		} else if (sent && req[i].ok && stop) {
			stop[n].id = req[i].id;
			stop[n].user = j->user;
			n++;
		}
	}
	if (n)
		(void)cbb_conduit_stop(j->g, stop, n);
	free(stop);
	cbb_state_forget(j->sd, j->job_id);
	cbb_job_log(j, CBB_LOG_VERBOSE, "the job is over and its buffer was torn "
		      "down meanwhile: %zu transfer(s) stopped, none left "
		      "running", n);
}

/*
 * Start the views marked V_START (and, when `retry_failed`, V_FAILED),
 * all at once.  Records each outcome (conduit.h's answers): an unsure one
 * (MAYBE) is never repeated here (the polls decide once StartVisibleGrace
 * has passed); one the server said to try again (RETRY) is counted in
 * *deferred, its message in `later`, and left to the next poll.  Returns
 * how many were started (or may have been), -1 (err set) when Conduit
 * refused one.
 */
static long start_views(cbb_job_ctx_t *j, cbb_stage_t stage, dview_t *views,
			size_t n, bool retry_failed, size_t *deferred,
			cbb_err_t *later, cbb_err_t *err)
{
	cbb_key_type_t type = cbb_stage_key(stage);
	uint32_t a = cbb_attempt(j, stage);
	cbb_start_t *req;
	dview_t **which;
	batch_t b = { NULL, NULL, 0, 0 };
	size_t i, k = 0;
	long started = 0;
	int rc = 0;

	req = calloc(n ? n : 1, sizeof(*req));
	which = calloc(n ? n : 1, sizeof(*which));
	b.own = calloc(2 * (n ? n : 1), sizeof(*b.own));
	if (!req || !which || !b.own) {
		free(req);
		free(which);
		free(b.own);
		return cbb_err(err, "conduit: out of memory");
	}
	b.array = b.own + (n ? n : 1);
	for (i = 0; i < n; i++)
		if (views[i].v == V_START ||
		    (retry_failed && views[i].v == V_FAILED)) {
			fill_start(j, &views[i], type, a, &req[k]);
			which[k++] = &views[i];
		}
	/*
	 * Recorded as unsure before the request leaves: a hook killed while
	 * it waits for the answer (slurmctld kills its scripts when it shuts
	 * down) leaves a record the next poll waits on, never a start that
	 * nothing remembers and the next poll repeats (a second mv).
	 */
	for (i = 0; i < k; i++)
		batch_add(j, &b, which[i]->shared ? CBB_KEY_SHARED : type,
			  which[i]->shared ? 0 : a, which[i]->d->index,
			  CBB_REC_UNSURE, NULL);
	batch_write(j, &b);
	if (k && attempt_over(j)) {
		undo_starts(j, which, req, k, false);
		k = 0;
	}
	if (k)
		cbb_conduit_start(j->g, req, k, false);
	for (i = 0; i < k; i++) {
		cbb_key_type_t rt = which[i]->shared ? CBB_KEY_SHARED : type;
		uint32_t ra = which[i]->shared ? 0 : a;

		if (req[i].ok) {
			batch_add(j, &b, rt, ra, which[i]->d->index,
				  CBB_REC_STARTED, req[i].id);
			started++;
		} else if (req[i].answer == CBB_ANSWER_MAYBE) {
			/* it may exist: never start it twice (recorded above) */
			cbb_job_log(j, CBB_LOG_INFO, "line %u: start not confirmed (%s); "
			      "waiting for it to show up",
			      which[i]->d->line, req[i].message);
			started++;
		} else if (req[i].answer == CBB_ANSWER_RETRY) {
			/* nothing was started: the next poll starts it */
			batch_add(j, &b, rt, ra, which[i]->d->index,
				  CBB_REC_REFUSED, NULL);
			cbb_job_log(j, CBB_LOG_INFO, "line %u: %s not started yet (%s); "
			      "the next poll starts it",
			      which[i]->d->line, cbb_stage_word(stage), req[i].message);
			if (*deferred == 0)
				cbb_err(later, "line %u: %s", which[i]->d->line,
					req[i].message);
			(*deferred)++;
		} else {
			/* refused: nothing was started */
			batch_add(j, &b, rt, ra, which[i]->d->index,
				  CBB_REC_REFUSED, NULL);
			if (rc == 0)
				rc = cbb_err(err, "line %u: %s",
					     which[i]->d->line, req[i].message);
		}
	}
	batch_write(j, &b);
	if (started && attempt_over(j)) {
		undo_starts(j, which, req, k, true);
		started = 0;
	}
	free(req);
	free(which);
	free(b.own);
	return rc < 0 ? -1 : started;
}

/*
 * The stage-out of an attempt that a requeue interrupted is best effort:
 * the attempt may have been stopped before it wrote its outputs, and
 * failing the stage would hold the job instead of running it again.
 */
static bool best_effort(const cbb_job_ctx_t *j, cbb_stage_t stage)
{
	return stage == CBB_STAGE_OUT && j->requeued;
}

/* Whether an interrupted attempt's failed stage-out was logged already. */
static bool noted(const cbb_recs_t *recs, uint32_t index, uint32_t attempt)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		if (recs->v[i].kind == CBB_REC_NOTED &&
		    recs->v[i].type == CBB_KEY_POST &&
		    recs->v[i].attempt == attempt && recs->v[i].index == index)
			return true;
	return false;
}

static bool uses_shared(const dview_t *views, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (views[i].shared)
			return true;
	return false;
}

/* Whether the plan has directives of a stage, skipped ones too. */
static bool plan_has(const cbb_plan_t *plan, cbb_stage_t stage)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (plan->v[i].stage == stage)
			return true;
	return false;
}

static size_t count_stage(const cbb_plan_t *plan, cbb_stage_t stage)
{
	size_t i, n = 0;

	for (i = 0; i < plan->n; i++)
		n += plan->v[i].stage == stage && !plan->v[i].skip;
	return n;
}

/*
 * The records and one Query for a stage.  Returns 0; -1 (err set) when
 * StateDir is unusable; -2 (err set; *again: not a refusal) when the
 * Query failed.  Frees what it filled on failure.
 */
static int gather(cbb_job_ctx_t *j, cbb_stage_t stage,
		  cbb_transfers_t *have, cbb_recs_t *recs, cbb_recs_t *shared,
		  bool *again, cbb_err_t *err)
{
	*again = false;
	have->v = NULL;
	have->n = 0;
	shared->v = NULL;
	shared->n = 0;
	if (cbb_recs_load(j->sd, j->job_id, j->restart, j->submit,
			  recs, err) < 0)
		return -1;
	if (stage == CBB_STAGE_IN && j->array_job_id &&
	    cbb_shared_load(j->sd, j->array_job_id, shared,
			    err) < 0) {
		cbb_recs_free(recs);
		return -1;
	}
	if (cbb_find_query(j, have, again, err) < 0) {
		cbb_recs_free(recs);
		cbb_recs_free(shared);
		return -2;
	}
	cbb_find_drop_foreign(j, stage, have);
	return 0;
}

/*
 * Take the array's lock for a stage-in that shares transfers, so that
 * two tasks never both start one (they run in separate processes).
 * 1: taken (or not needed); 0: another task holds it for longer than a
 * moment: come back at the next poll.
 */

int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage, cbb_err_t *err)
{
	size_t want = count_stage(plan, stage), n, i, there = 0, kept = 0;
	cbb_transfers_t have;
	cbb_recs_t recs, shared;
	dview_t *views;
	bool again;
	long started = 0;
	size_t deferred = 0;
	cbb_err_t later;
	int rc = 0, lock;

	if (want == 0)
		return 0;
	cbb_err_clear(&later);
	if (attempt_over(j)) {
		cbb_job_log(j, CBB_LOG_VERBOSE, "%s: the job is over and its buffer "
			      "torn down; nothing started",
			      cbb_stage_word(stage));
		return 0;
	}
	if (!cbb_shared_lock_for(j, plan, stage, &lock)) {
		cbb_job_log(j, CBB_LOG_VERBOSE, "%s: another task of array %u is "
			    "starting the shared transfers; the polls go on "
			    "from there", cbb_stage_word(stage), j->array_job_id);
		return 0;
	}
	rc = gather(j, stage, &have, &recs, &shared, &again, err);
	if (rc < 0) {
		cbb_shared_unlock(lock);
		if (rc == -1 || !again)
			return -1;
		/* the polls start everything once the server answers */
		(void)cbb_down_since(j->sd, j->job_id);
		cbb_job_log(j, CBB_LOG_INFO, "%s: %s; the polls will start the "
		      "transfers when the server answers",
		      cbb_stage_word(stage), err->msg);
		cbb_err_clear(err);
		return 0;
	}
	views = calloc(want, sizeof(*views));
	if (!views) {
		rc = cbb_err(err, "conduit: out of memory");
		goto out;
	}
	n = view(j, plan, stage, &have, &recs, &shared, views);
	for (i = 0; i < n && rc == 0; i++) {
		if (views[i].v == V_BROKEN && !best_effort(j, stage)) {
			broken_mv(err, &views[i]);
			rc = -1;
		}
		there += views[i].v == V_RUNNING || views[i].v == V_DONE ||
			 views[i].v == V_PENDING;
		kept += views[i].v == V_KEPT;
	}
	if (rc == 0) {
		/* a stage-in is run again after a failure when Slurm runs it
		 * again (the user fixed it and released the job); a stage-out
		 * failure stands */
		started = start_views(j, stage, views, n, stage == CBB_STAGE_IN,
				      &deferred, &later, err);
		rc = started < 0 ? -1 : 0;
		/* what the server would not take yet: the polls start it,
		 * within the same grace as an outage */
		if (rc == 0 && deferred)
			(void)cbb_down_since(j->sd, j->job_id);
		cbb_join_shared(j, uses_shared(views, n), &recs, &shared);
	}
	cbb_job_log(j, CBB_LOG_VERBOSE, "%s (attempt %u): started %ld transfer(s), %zu "
	      "already there, %zu done in an earlier attempt, %zu left to "
	      "the polls", cbb_stage_word(stage), cbb_attempt(j, stage),
	      started < 0 ? 0 : started, there, kept, deferred);
	free(views);
out:
	cbb_shared_unlock(lock);
	cbb_recs_free(&recs);
	cbb_recs_free(&shared);
	cbb_transfers_free(&have);
	return rc;
}

/*
 * The server did not answer a poll, or would not take a start yet: BUSY
 * within the grace, then FAILED.
 */
static int server_down(cbb_job_ctx_t *j, cbb_stage_t stage, const char *what,
		       cbb_err_t *err)
{
	unsigned grace = stage == CBB_STAGE_IN ? j->cfg->down_grace_s :
						 j->cfg->out_down_grace_s;
	const char *knob = stage == CBB_STAGE_IN ? "ServerDownGrace" :
						   "StageOutDownGrace";
	time_t now = time(NULL), since = cbb_down_since(j->sd, j->job_id);
	char last[CBB_ERR_MAX];

	if (now - since < (time_t)grace) {
		/* "server down for N s" is what admins and the e2e grep for */
		cbb_job_log(j, CBB_LOG_INFO, "%s: %s (server %s for %lld s; waiting "
		      "up to %s=%u s)", cbb_stage_word(stage), err->msg,
		      strcmp(what, "unreachable") ? what : "down",
		      (long long)(now - since), knob, grace);
		return CBB_POLL_BUSY;
	}
	memcpy(last, err->msg, sizeof(last));
	cbb_err_clear(err);
	cbb_err(err, "conduit: server %s for %lld s (%s=%u s): "
		"%.900s", what, (long long)(now - since), knob, grace, last);
	return CBB_POLL_FAILED;
}

int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, cbb_err_t *err)
{
	size_t want = count_stage(plan, stage), n, i;
	size_t busy = 0, done = 0, pending = 0, kept = 0, missing = 0;
	cbb_transfers_t have;
	cbb_recs_t recs, shared;
	dview_t *views = NULL;
	bool again;
	size_t deferred = 0;
	cbb_err_t later;
	int rc = CBB_POLL_DONE, lock;

	/* nothing to wait for, unless all of a stage-out was skipped and
	 * the job still gets its summary */
	if (want == 0 && !(j->account && stage == CBB_STAGE_OUT &&
			   plan_has(plan, CBB_STAGE_OUT)))
		return CBB_POLL_DONE;
	if (!cbb_shared_lock_for(j, plan, stage, &lock))
		return CBB_POLL_BUSY; /* another task is starting them */
	cbb_err_clear(&later);
	switch (gather(j, stage, &have, &recs, &shared, &again, err)) {
	case -1:
		cbb_shared_unlock(lock);
		return CBB_POLL_FAILED;
	case -2: /* a failure to ask is an outage until the grace is over;
		    a refusal is final */
		cbb_shared_unlock(lock);
		return again ? server_down(j, stage, "unreachable", err) :
			       CBB_POLL_FAILED;
	default:
		break;
	}
	views = calloc(want ? want : 1, sizeof(*views));
	if (!views) {
		rc = cbb_err(err, "conduit: out of memory");
		goto out;
	}
	n = view(j, plan, stage, &have, &recs, &shared, views);
	for (i = 0; i < n; i++) {
		if (views[i].v == V_BROKEN || views[i].v == V_FAILED) {
			if (views[i].v == V_BROKEN)
				broken_mv(err, &views[i]);
			else
				failed_transfer(err, stage, &views[i]);
			if (!best_effort(j, stage)) {
				rc = CBB_POLL_FAILED;
				goto out;
			}
			if (!noted(&recs, views[i].d->index, cbb_attempt(j, stage))) {
				cbb_job_log(j, CBB_LOG_ERROR, "stage-out of attempt %u, "
				      "which a requeue interrupted: %s; the job goes "
				      "on to its next attempt",
				      cbb_attempt(j, stage), err->msg);
				add_record(j, CBB_KEY_POST, cbb_attempt(j, stage),
					   views[i].d->index, CBB_REC_NOTED, NULL);
			}
			cbb_err_clear(err);
			done++;
			continue;
		}
		busy += views[i].v == V_RUNNING;
		done += views[i].v == V_DONE;
		pending += views[i].v == V_PENDING;
		kept += views[i].v == V_KEPT;
		missing += views[i].v == V_START;
	}
	if (missing && start_views(j, stage, views, n, false, &deferred,
				   &later, err) < 0) {
		rc = CBB_POLL_FAILED;
		goto out;
	}
	/* the grace runs from the first poll that could not start one */
	if (deferred) {
		rc = server_down(j, stage, "not taking transfers", &later);
		if (rc == CBB_POLL_FAILED) {
			cbb_err(err, "%s", later.msg);
			goto out;
		}
	} else {
		cbb_down_clear(j->sd, j->job_id);
	}
	cbb_join_shared(j, uses_shared(views, n), &recs, &shared);
	if (busy || pending || missing || deferred) {
		cbb_job_log(j, CBB_LOG_DEBUG, "%s (attempt %u): %zu done, %zu running, %zu "
		      "not visible yet, %zu started now",
		      cbb_stage_word(stage), cbb_attempt(j, stage), done + kept,
		      busy, pending, missing);
		rc = CBB_POLL_BUSY;
	}
	/* the stage is over for this attempt: summarise it */
	if (rc == CBB_POLL_DONE)
		cbb_account(j, plan, stage, &have, &recs);
out:
	cbb_shared_unlock(lock);
	free(views);
	cbb_recs_free(&recs);
	cbb_recs_free(&shared);
	cbb_transfers_free(&have);
	return rc;
}

/* A transfer of a stage-in (the job's own or its array's shared one). */
static bool is_stage_in(const cbb_transfer_t *x)
{
	cbb_key_t k;

	return cbb_key_parse(x->comment, &k) &&
	       (k.type == CBB_KEY_PRE || k.type == CBB_KEY_SHARED);
}

static bool still_runs(const cbb_transfer_t *x)
{
	return !x->validation_only && !cbb_transfer_failed(x) &&
	       !cbb_transfer_succeeded(x);
}

long cbb_stage_in_active(cbb_job_ctx_t *j, cbb_err_t *err)
{
	cbb_transfers_t have;
	bool again;
	size_t i;
	long n = 0;

	if (cbb_find_query(j, &have, &again, err) < 0)
		return -1;
	for (i = 0; i < have.n; i++)
		n += still_runs(&have.v[i]) && is_stage_in(&have.v[i]);
	cbb_transfers_free(&have);
	return n;
}

int cbb_stage_teardown(cbb_job_ctx_t *j, bool abort_active, bool in_only,
		       cbb_err_t *err)
{
	cbb_transfers_t have;
	cbb_stop_t *req;
	size_t i, n = 0, failed;
	bool again;

	if (cbb_find_query(j, &have, &again, err) < 0)
		return -1;
	req = calloc(have.n ? have.n : 1, sizeof(*req));
	if (!req) {
		cbb_transfers_free(&have);
		return cbb_err(err, "conduit: out of memory");
	}
	for (i = 0; i < have.n; i++) {
		const cbb_transfer_t *x = &have.v[i];
		cbb_key_t k;

		if (!still_runs(x) || (in_only && !is_stage_in(x)))
			continue;
		/* an array's shared stage-in only when no task waits on it */
		if (cbb_key_parse(x->comment, &k) && k.type == CBB_KEY_SHARED &&
		    !j->abort_shared)
			continue;
		req[n].id = x->id;
		req[n].user = j->user;
		n++;
	}
	if (!abort_active || n == 0) {
		if (n)
			cbb_job_log(j, CBB_LOG_INFO, "teardown leaves %zu active "
			      "transfer(s) running", n);
		free(req);
		cbb_transfers_free(&have);
		return 0;
	}
	failed = cbb_conduit_stop(j->g, req, n);
	for (i = 0; i < n && failed; i++)
		if (!req[i].ok)
			cbb_err(err, "conduit: could not abort transfer %s: %s",
				req[i].id, req[i].message);
	cbb_job_log(j, CBB_LOG_VERBOSE, "teardown aborted %zu of %zu active transfer(s)", n - failed, n);
	free(req);
	cbb_transfers_free(&have);
	return failed ? -1 : 0;
}

int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		       cbb_err_t *err)
{
	size_t want = count_stage(plan, CBB_STAGE_IN), i, n = 0, decided = 0;
	cbb_start_t *req;
	dview_t *views;
	int rc = 0;

	req = calloc(want ? want : 1, sizeof(*req));
	views = calloc(want ? want : 1, sizeof(*views));
	if (!req || !views) {
		free(req);
		free(views);
		cbb_job_log(j, CBB_LOG_ERROR, "remote validation skipped: out of memory");
		return 0;
	}
	for (i = 0; i < plan->n; i++)
		if (plan->v[i].stage == CBB_STAGE_IN) {
			views[n].d = &plan->v[i];
			fill_start(j, &views[n], CBB_KEY_VALIDATE, 0, &req[n]);
			n++;
		}
	if (n)
		cbb_conduit_start(j->g, req, n, true);
	for (i = 0; i < n && rc == 0; i++)
		if (req[i].answer == CBB_ANSWER_REFUSED) {
			rc = cbb_err(err, "line %u: #%s_PRE: Conduit refused it: "
				     "%s", views[i].d->line, j->cfg->directive,
				     req[i].message);
		} else if (!req[i].ok) {
			cbb_job_log(j, CBB_LOG_INFO, "line %u: remote validation not "
			      "possible (%s); accepted",
			      views[i].d->line, req[i].message);
			req[i].id[0] = '\0';
			decided++;
		}
	while (decided < n && rc == 0) {
		cbb_transfers_t t;
		cbb_err_t e;
		bool tr;
		char rx[CBB_KEY_MAX];

		if (cbb_grpc_left_ms(j->g) < 20) {
			cbb_job_log(j, CBB_LOG_INFO, "remote validation still running "
			      "after %u ms (SubmitTimeout); accepted",
			      cbb_grpc_spent_ms(j->g));
			break;
		}
		cbb_err_clear(&e);
		cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, 0);
		if (cbb_conduit_query(j->g, j->user, rx, &t, &tr, &e) < 0) {
			cbb_job_log(j, CBB_LOG_INFO, "remote validation: %s; accepted", e.msg);
			break;
		}
		decided = 0;
		for (i = 0; i < n; i++) {
			size_t k;
			const cbb_transfer_t *x = NULL;

			if (!req[i].id[0]) {
				decided++;
				continue;
			}
			for (k = 0; k < t.n && !x; k++)
				if (!strcmp(t.v[k].id, req[i].id))
					x = &t.v[k];
			if (!x)
				continue;
			if (cbb_transfer_failed(x)) {
				char msg[CBB_ERR_MAX / 2];

				snprintf(msg, sizeof(msg), "%s", x->error_message);
				cbb_one_line(msg);
				rc = cbb_err(err, "line %u: #%s_PRE: Conduit "
					     "rejected it: %s", views[i].d->line,
					     j->cfg->directive, msg);
				break;
			}
			if (x->state == CBB_TS_VALIDATION_COMPLETE && !x->active)
				decided++;
		}
		cbb_transfers_free(&t);
		if (decided < n && rc == 0) {
			unsigned left = cbb_grpc_left_ms(j->g);
			struct timespec ts = { 0, (long)(left < 50 ? left : 50) *
						   1000000L };

			nanosleep(&ts, NULL);
		}
	}
	free(req);
	free(views);
	return rc;
}

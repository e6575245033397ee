/*
 * stage.c - starting a stage (data_in, data_out, and what a poll finds
 * missing): the start requests, the unsure record written before each
 * leaves, what Conduit answered, and a teardown that came meanwhile.
 * stage.h has the contract; stage_int.h what the stage files share.
 */
#include "stage_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_array.h"
#include "stage_find.h"

/* Fill a start request for view v (its comment kept in v->comment). */
void cbb_stage_fill_start(cbb_job_ctx_t *j, dview_t *v, cbb_key_type_t type,
			  uint32_t attempt, cbb_start_t *s)
{
	const cbb_directive_t *d = v->d;
	cbb_key_t k;

	memset(&k, 0, sizeof(k));
	k.job_id = v->shared ? j->array_job_id : j->job_id;
	memcpy(k.cluster, j->cluster, sizeof(k.cluster));
	k.attempt = v->shared ? 0 : attempt;
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
				cbb_stage_record(j, CBB_KEY_SHARED, 0, which[i]->d->index,
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
long cbb_stage_start_views(cbb_job_ctx_t *j, cbb_stage_t stage, dview_t *views,
			   size_t n, bool retry_failed, size_t *deferred,
			   cbb_err_t *later, cbb_err_t *err)
{
	cbb_key_type_t type = cbb_stage_key(stage);
	uint32_t a = cbb_attempt(j, stage);
	cbb_start_t *req;
	dview_t **which;
	cbb_batch_t b = { NULL, NULL, 0, 0 };
	size_t i, k = 0;
	long started = 0, again = 0;
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
			cbb_stage_fill_start(j, &views[i], type, a, &req[k]);
			which[k++] = &views[i];
		}
	/*
	 * Recorded as unsure before the request leaves: a hook killed while
	 * it waits for the answer (slurmctld kills its scripts when it shuts
	 * down) leaves a record the next poll waits on, never a start that
	 * nothing remembers and the next poll repeats (a second mv).
	 */
	for (i = 0; i < k; i++)
		cbb_batch_add(j, &b, which[i]->shared ? CBB_KEY_SHARED : type,
			  which[i]->shared ? 0 : a, which[i]->d->index,
			  CBB_REC_UNSURE, NULL);
	cbb_batch_write(j, &b);
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
			cbb_batch_add(j, &b, rt, ra, which[i]->d->index,
				  CBB_REC_STARTED, req[i].id);
			started++;
			again += which[i]->lost || which[i]->x;
		} else if (req[i].answer == CBB_ANSWER_MAYBE) {
			/* it may exist: never start it twice (recorded above) */
			cbb_job_log(j, CBB_LOG_INFO, "line %u: start not confirmed (%s); "
			      "waiting for it to show up",
			      which[i]->d->line, req[i].message);
			started++;
			again += which[i]->lost || which[i]->x;
		} else if (req[i].answer == CBB_ANSWER_RETRY) {
			/* nothing was started: the next poll starts it */
			cbb_batch_add(j, &b, rt, ra, which[i]->d->index,
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
			cbb_batch_add(j, &b, rt, ra, which[i]->d->index,
				  CBB_REC_REFUSED, NULL);
			if (rc == 0)
				rc = cbb_err(err, "line %u: %s",
					     which[i]->d->line, req[i].message);
		}
	}
	cbb_batch_write(j, &b);
	if (started && attempt_over(j)) {
		undo_starts(j, which, req, k, true);
		started = again = 0;
	}
	/* for the hook's AuditLog record */
	j->started += (unsigned)started;
	j->retried += (unsigned)again;
	free(req);
	free(which);
	free(b.own);
	return rc < 0 ? -1 : started;
}

/*
 * The records and one Query for a stage.  Returns 0; -1 (err set) when
 * StateDir is unusable; -2 (err set; *again: not a refusal) when the
 * Query failed.  Frees what it filled on failure.
 */
int cbb_stage_gather(cbb_job_ctx_t *j, cbb_stage_t stage, cbb_transfers_t *have,
		     cbb_recs_t *recs, cbb_recs_t *shared, bool *again,
		     cbb_err_t *err)
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

int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_stage_t stage,
		    cbb_err_t *err)
{
	size_t want = cbb_plan_count(plan, stage, false), n, i;
	size_t there = 0, kept = 0;
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
	rc = cbb_stage_gather(j, stage, &have, &recs, &shared, &again, err);
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
	n = cbb_stage_view(j, plan, stage, &have, &recs, &shared, views);
	for (i = 0; i < n && rc == 0; i++) {
		if (views[i].v == V_BROKEN && !cbb_stage_best_effort(j, stage)) {
			cbb_verdict_broken_mv(err, &views[i]);
			rc = -1;
		}
		if (views[i].v == V_ASIDE_FAILED && !cbb_stage_best_effort(j, stage))
			rc = cbb_err(err, "%s", views[i].why.msg);
		there += views[i].v == V_RUNNING || views[i].v == V_DONE ||
			 views[i].v == V_PENDING || views[i].v == V_ASIDE;
		kept += views[i].v == V_KEPT;
	}
	if (rc == 0) {
		/* a stage-in is run again after a failure when Slurm runs it
		 * again (the user fixed it and released the job); a stage-out
		 * failure stands */
		started = cbb_stage_start_views(j, stage, views, n, stage == CBB_STAGE_IN,
				      &deferred, &later, err);
		rc = started < 0 ? -1 : 0;
		/* what the server would not take yet: the polls start it,
		 * within the same grace as an outage */
		if (rc == 0 && deferred)
			(void)cbb_down_since(j->sd, j->job_id);
		cbb_join_shared(j, cbb_views_shared(views, n), &recs, &shared);
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

/*
 * decide.c - what each directive of a stage needs, from the facts alone
 * (facts.h): start it, wait for it to show up, it runs, it is done (now
 * or in an earlier attempt), it failed, it is a mv that failed after
 * moving data, Conduit is asked about its paths first, or an earlier
 * attempt's output goes aside first (requeue.c); and the stage's answer.
 * Pure: no I/O, no locks, no clock; the same facts give the same
 * decision (tests/unit/test_decide.c holds the table).
 *
 * Where a directory lands (docs/directives.md): `cp -r SRC DST` with one
 * source and DST without a trailing '/' means what POSIX cp means: DST
 * holds the tree when DST does not exist, DST/basename(SRC) when it is a
 * directory.  Conduit's data movers differ (its rsync mover puts a tree
 * under its own name inside a destination it creates), so such a
 * directive asks Conduit what DST is first (a probe: ValidateTransfer,
 * nothing moves) and is sent as the mover will place it: DST itself when
 * it exists, its parent with a trailing '/' when DST is new and has the
 * tree's name.  A new DST of another name cannot be had from a mover
 * that keeps a directory's name: refused before anything moves.  A mv
 * without -r asks whether each source is a directory first, and refuses
 * one (rsync would skip it and Conduit then delete it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "pick.h"
#include "stage.h"

/* ---- where a directory lands ----------------------------------------- */

static size_t trimmed(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return n;
}

/* The last name of a path (trailing slashes ignored): start and length. */
static const char *last_name(const char *p, size_t *len)
{
	size_t n = trimmed(p);
	const char *b = p + n;

	while (b > p && b[-1] != '/')
		b--;
	*len = (size_t)(p + n - b);
	return b;
}

/* One source, -r, a destination without a trailing '/', and a mover
 * that keeps a tree's name: where it lands depends on what the
 * destination is (DataMover=pftool places it as cp -r does). */
static bool placement_needed(const cbb_facts_t *f, const cbb_directive_t *d)
{
	size_t n = strlen(d->destination);

	return f->keeps_names && d->recursive && d->nsources == 1 &&
	       !(n > 1 && d->destination[n - 1] == '/');
}

/* A new destination with the tree's own name: its parent, "into". */
static const char *into_parent(cbb_decision_t *d, const cbb_directive_t *dd)
{
	size_t sl, dl, n = trimmed(dd->destination);
	const char *sb = last_name(dd->sources[0], &sl);
	const char *db = last_name(dd->destination, &dl);
	char *out;

	if (sl == 0 || sl != dl || memcmp(sb, db, sl))
		return NULL;
	n = (size_t)(db - dd->destination); /* the parent, with its '/' */
	if (n == 0)
		return NULL;
	out = cbb_arena_alloc(&d->arena, n + 1);
	if (out) {
		memcpy(out, dd->destination, n);
		out[n] = '\0';
	}
	return out;
}

static const char *verb(const cbb_directive_t *dd)
{
	return dd->action == CBB_MV ? (dd->recursive ? "mv -r" : "mv") :
				      (dd->recursive ? "cp -r" : "cp");
}

/*
 * The probes a directive needs before it starts in this attempt, sent
 * when missing; N_START once all are answered (v->dest placed), N_PROBE
 * while any is out, N_BLOCKED or N_FAILED when an answer says no.
 */
static cbb_need_t probes(const cbb_facts_t *f, cbb_decision_t *d, size_t k)
{
	cbb_view_t *v = &d->v[k];
	const cbb_directive_t *dd = v->d;
	const cbb_recs_t *recs = v->shared ? &f->shared_recs : &f->recs;
	uint32_t job = v->shared ? f->array_job_id : f->job_id;
	uint32_t att = v->shared ? 0 : f->attempt;
	bool need_req = placement_needed(f, dd) ||
			(!v->shared && cbb_runs_again(dd, f->stage));
	bool need_tgt = !v->shared && cbb_runs_again(dd, f->stage);
	bool need_src = !dd->recursive && dd->action == CBB_MV;
	const cbb_transfer_t *req = NULL, *x;
	bool wait = false;
	cbb_key_t key;
	size_t i;
	int st;

	/* the directive as written: asked when needed; one asked at
	 * submission (SubmitValidation=remote) is heeded too, and asked
	 * again when Slurm starts the stage again after a failure */
	st = cbb_probe_state(f, recs, job, att, dd->index, CBB_PROBE_REQ,
			     dd->destination, &req);
	if (st == PROBE_ANSWERED && cbb_transfer_failed(req) && !f->resend) {
		v->x = req;
		return N_FAILED;
	}
	if ((st == PROBE_ANSWERED && cbb_transfer_failed(req)) ||
	    (need_req && st == PROBE_NONE)) {
		cbb_view_key(f, v, CBB_KEY_PROBE, CBB_PROBE_REQ, &key);
		if (cbb_decision_send(d, k, &key, true, cbb_action_of(dd),
				      (const char *const *)dd->sources,
				      dd->nsources, dd->destination,
				      v->shared) < 0)
			return N_BLOCKED;
		wait = true;
		req = NULL;
	} else if (st == PROBE_WAIT) {
		wait = true; /* asked at submission: its answer comes first */
	}
	/* what each target held before this attempt writes (for a later
	 * attempt's move-aside), and whether each source of a mv without
	 * -r is a directory */
	for (i = 0; i < dd->nsources && (need_tgt || need_src); i++) {
		size_t bl, dl = trimmed(dd->destination);
		const char *b = last_name(dd->sources[i], &bl);
		char *t = NULL, *slash = NULL;

		if (need_tgt) {
			t = cbb_arena_alloc(&d->arena, dl + bl + 2);
			if (!t)
				return N_BLOCKED;
			snprintf(t, dl + bl + 2, "%.*s/%.*s",
				 dl == 1 ? 0 : (int)dl, dd->destination,
				 (int)bl, b);
			st = cbb_probe_state(f, recs, job, att, dd->index,
					     CBB_PROBE_TARGET + (uint32_t)i, t, &x);
			if (st == PROBE_NONE) {
				cbb_view_key(f, v, CBB_KEY_PROBE,
					     CBB_PROBE_TARGET + (uint32_t)i, &key);
				if (cbb_decision_send(d, k, &key, true, CBB_COPY,
						      (const char *const *)&dd->sources[i],
						      1, t, v->shared) < 0)
					return N_BLOCKED;
			}
			wait = wait || st != PROBE_ANSWERED;
		}
		if (need_src) {
			size_t sl = strlen(dd->sources[i]);

			slash = cbb_arena_alloc(&d->arena, sl + 2);
			if (!slash)
				return N_BLOCKED;
			snprintf(slash, sl + 2, "%s/", dd->sources[i]);
			st = cbb_probe_state(f, recs, job, att, dd->index,
					     CBB_PROBE_SOURCE + (uint32_t)i, slash,
					     &x);
			if (st == PROBE_NONE) {
				cbb_view_key(f, v, CBB_KEY_PROBE,
					     CBB_PROBE_SOURCE + (uint32_t)i, &key);
				if (cbb_decision_send(d, k, &key, true, CBB_COPY,
						      (const char *const *)&dd->sources[i],
						      1, slash, v->shared) < 0)
					return N_BLOCKED;
				wait = true;
			} else if (st == PROBE_WAIT) {
				wait = true;
			} else if (x->dest_info == CBB_DEST_IS_DIR) {
				v->why_kind = CBB_FAIL_AS_WRITTEN;
				cbb_err(&v->why, "line %u: %s: %s is a directory: "
					"write %s -r to move a directory (nothing "
					"was moved)", dd->line, verb(dd),
					dd->sources[i], dd->action == CBB_MV ?
					"mv" : "cp");
				return N_BLOCKED;
			}
		}
	}
	if (wait)
		return N_PROBE;
	if (req && cbb_transfer_failed(req)) {
		v->x = req;
		return N_FAILED;
	}
	if (placement_needed(f, dd) && req && req->dest_info == CBB_DEST_NOT_EXIST) {
		size_t sl, dl;
		const char *sb = last_name(dd->sources[0], &sl);

		v->dest = into_parent(d, dd);
		if (!v->dest) {
			(void)last_name(dd->destination, &dl);
			v->why_kind = CBB_FAIL_AS_WRITTEN;
			cbb_err(&v->why, "line %u: %s: %s does not exist and is "
				"not named %.*s: Conduit's data mover keeps a "
				"directory's name (DataMover=rsync), so the tree "
				"would land in %s/%.*s; write %s/ to put it "
				"there, or name the destination .../%.*s "
				"(nothing was moved)", dd->line, verb(dd),
				dd->destination, (int)sl, sb, dd->destination,
				(int)sl, sb, dd->destination, (int)sl, sb);
			return N_BLOCKED;
		}
	}
	return N_START;
}

/* A cp without -r that copied nothing: was its source a directory? */
static cbb_need_t empty_copy(const cbb_facts_t *f, cbb_decision_t *d,
			     size_t k)
{
	cbb_view_t *v = &d->v[k];
	const cbb_directive_t *dd = v->d;
	const cbb_recs_t *recs = v->shared ? &f->shared_recs : &f->recs;
	uint32_t job = v->shared ? f->array_job_id : f->job_id;
	uint32_t att = v->shared ? 0 : f->attempt;
	bool wait = false;
	cbb_key_t key;
	size_t i;

	if (dd->recursive || dd->action != CBB_CP || v->x->files ||
	    v->x->dirs || v->x->bytes)
		return N_DONE;
	for (i = 0; i < dd->nsources; i++) {
		size_t sl = strlen(dd->sources[i]);
		char *slash = cbb_arena_alloc(&d->arena, sl + 2);
		const cbb_transfer_t *x;
		int st;

		if (!slash)
			return N_BLOCKED;
		snprintf(slash, sl + 2, "%s/", dd->sources[i]);
		st = cbb_probe_state(f, recs, job, att, dd->index,
				     CBB_PROBE_SOURCE + (uint32_t)i, slash, &x);
		if (st == PROBE_NONE) {
			cbb_view_key(f, v, CBB_KEY_PROBE,
				     CBB_PROBE_SOURCE + (uint32_t)i, &key);
			if (cbb_decision_send(d, k, &key, true, CBB_COPY,
					      (const char *const *)&dd->sources[i],
					      1, slash, v->shared) < 0)
				return N_BLOCKED;
		}
		if (st != PROBE_ANSWERED) {
			wait = true;
		} else if (x->dest_info == CBB_DEST_IS_DIR) {
			v->why_kind = CBB_FAIL_AS_WRITTEN;
			cbb_err(&v->why, "line %u: cp: %s is a directory: nothing "
				"was copied; write cp -r to copy a directory",
				dd->line, dd->sources[i]);
			return N_BLOCKED;
		}
	}
	return wait ? N_PROBE : N_DONE;
}

/* ---- one directive ----------------------------------------------------- */

/* Whether the task's own records say it joined its array's stage-ins. */
static bool task_joined(const cbb_recs_t *recs)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		if (recs->v[i].kind == CBB_REC_JOINED)
			return true;
	return false;
}

/* Never started, lost, or to be started again: its probes, its aside. */
static cbb_need_t to_start(const cbb_facts_t *f, cbb_decision_t *d, size_t k)
{
	cbb_view_t *v = &d->v[k];
	cbb_need_t n;

	if (!v->shared && f->attempt > 0 && cbb_runs_again(v->d, f->stage)) {
		n = cbb_requeue_gate(f, d, k);
		if (n != N_START)
			return n;
	}
	return probes(f, d, k);
}

static cbb_need_t decide_one(const cbb_facts_t *f, cbb_decision_t *d,
			     size_t k)
{
	cbb_view_t *v = &d->v[k];
	const cbb_directive_t *dd = v->d;
	cbb_key_type_t rtype = v->shared ? CBB_KEY_SHARED : f->type;
	uint32_t ratt = v->shared ? 0 : f->attempt;
	const cbb_recs_t *recs = v->shared ? &f->shared_recs : &f->recs;
	const cbb_transfer_t *x;
	const cbb_rec_t *r;
	long kept;

	x = v->shared ? cbb_pick_shared(&f->have, dd) :
			cbb_pick(&f->have, f->type, dd->index, (long)f->attempt,
				 NULL);
	r = cbb_open_record(recs, (int)rtype, ratt, dd->index, -1, &v->lost);
	v->x = x;
	if (x && !cbb_transfer_failed(x))
		return cbb_transfer_succeeded(x) ? empty_copy(f, d, k) :
						   N_RUNNING;
	if (r && !cbb_rec_visible(r, &f->have, (int)rtype, ratt, dd->index,
				  -1)) {
		if (f->now - r->made < (int64_t)f->visible_grace_s)
			return N_PENDING; /* newer than any failure */
		cbb_decision_log(d, CBB_LOG_ERROR, "line %u: %s transfer %s "
				 "started %lld s ago never showed up on the "
				 "Conduit server (StartVisibleGrace=%u s): it "
				 "is lost; starting the directive again",
				 dd->line, cbb_stage_word(f->stage),
				 r->kind == CBB_REC_STARTED ? r->id :
				 "(unconfirmed)", (long long)(f->now - r->made),
				 f->visible_grace_s);
		if (cbb_decision_note(d, rtype, ratt, dd->index, CBB_REC_LOST,
				      r->id, v->shared) < 0)
			return N_BLOCKED;
		v->lost = v->again = true;
		return to_start(f, d, k);
	}
	if (x && v->shared && !r && !(dd->action == CBB_MV && x->started) &&
	    !task_joined(&f->recs)) {
		/* the tasks that waited on it are gone, and the last one's
		 * teardown aborted it and forgot its records: it failed
		 * before this task came; start it again */
		v->again = true;
		return to_start(f, d, k);
	}
	if (x) {
		/* a move that failed after moving data is not redone */
		if (dd->action == CBB_MV && x->started)
			return N_BROKEN;
		/* a stage-in is started again when Slurm runs it again (the
		 * user fixed it and released the job); a stage-out's
		 * failure stands */
		if (f->resend && f->stage == CBB_STAGE_IN) {
			v->again = true;
			return to_start(f, d, k);
		}
		return N_FAILED;
	}
	kept = f->stage == CBB_STAGE_IN && !dd->every_attempt &&
	       f->attempt > 0 ? cbb_kept_from(&f->have, dd, f->attempt) : -1;
	if (kept >= 0) {
		v->kept_from = (uint32_t)kept;
		return N_KEPT;
	}
	return to_start(f, d, k);
}

/* ---- the stage --------------------------------------------------------- */

/* The line a transfer was started for (its key), else the directive's. */
static unsigned line_of(const cbb_view_t *v)
{
	const cbb_key_t *k;
	cbb_key_t tmp;

	if (v->x && (k = cbb_transfer_key(v->x, &tmp)) && k->line)
		return k->line;
	return v->d->line;
}

static void failure_of(const cbb_facts_t *f, const cbb_view_t *v,
		       cbb_result_t *r)
{
	char msg[CBB_ERR_MAX - 200];
	const char *why = "";

	if (v->need == N_BLOCKED) {
		r->fail = v->why_kind ? v->why_kind : CBB_FAIL_INTERNAL;
		cbb_err(&r->err, "%s", v->why.msg[0] ? v->why.msg :
			"conduit_bb: out of memory");
		return;
	}
	snprintf(msg, sizeof(msg), "%s", v->x->error_message[0] ?
		 v->x->error_message : "(no message)");
	cbb_one_line(msg);
	if (v->need == N_BROKEN) {
		r->fail = CBB_FAIL_BROKEN_MV;
		cbb_err(&r->err, "line %u: mv failed after it began moving data "
			"(transfer %s: %s: %s); it is not restarted: check the "
			"source and destination, then requeue", line_of(v),
			v->x->id, cbb_error_name(v->x->error), msg);
		return;
	}
	if (v->lost && v->d->action == CBB_MV)
		why = " (an earlier transfer of this mv was lost by the "
		      "Conduit server after it started: its source may "
		      "already have been moved)";
	r->fail = CBB_FAIL_TRANSFER;
	cbb_err(&r->err, "line %u: %s %s failed: %s: %s%s", line_of(v),
		cbb_stage_word(f->stage), v->d->action == CBB_MV ? "mv" : "cp",
		cbb_error_name(v->x->error), msg, why);
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

/* Whether this stage of this attempt was summarised already. */
static bool accounted(const cbb_facts_t *f)
{
	size_t i;

	for (i = 0; i < f->recs.n; i++)
		if (f->recs.v[i].kind == CBB_REC_ACCOUNTED &&
		    f->recs.v[i].type == (int)f->type &&
		    f->recs.v[i].attempt == f->attempt)
			return true;
	return false;
}

int cbb_decide(const cbb_facts_t *f, cbb_decision_t *d)
{
	const cbb_plan_t *plan = f->plan;
	size_t i, k, n = 0;
	bool fails;

	memset(d, 0, sizeof(*d));
	cbb_arena_init(&d->arena);
	d->res.state = CBB_POLL_DONE;
	for (i = 0; i < plan->n; i++)
		n += plan->v[i].stage == f->stage && !plan->v[i].skip;
	d->v = calloc(n ? n : 1, sizeof(*d->v));
	if (!d->v)
		goto oom;
	for (i = 0; i < plan->n; i++) {
		cbb_view_t *v;

		if (plan->v[i].stage != f->stage || plan->v[i].skip)
			continue;
		v = &d->v[d->n];
		v->d = &plan->v[i];
		v->dest = v->d->destination;
		v->shared = f->shared && f->shared[i];
		d->join = d->join || v->shared;
		v->need = decide_one(f, d, d->n);
		d->n++;
	}
	for (k = 0; k < d->n; k++) {
		cbb_view_t *v = &d->v[k];

		/* a start's failures the hook reports: a broken mv or one that
		 * cannot be done at once, a poll's every failure; a failed
		 * stage-out in data_out is left to the polls */
		fails = v->need == N_BROKEN || v->need == N_BLOCKED ||
			(v->need == N_FAILED && !f->starting);
		if (fails && f->best_effort) {
			cbb_result_t r;

			memset(&r, 0, sizeof(r));
			failure_of(f, v, &r);
			if (!noted(&f->recs, v->d->index, f->attempt)) {
				cbb_decision_log(d, CBB_LOG_ERROR, "stage-out of "
						 "attempt %u, which a requeue "
						 "interrupted: %s; the job goes "
						 "on to its next attempt",
						 f->attempt, r.err.msg);
				if (cbb_decision_note(d, CBB_KEY_POST, f->attempt,
						      v->d->index, CBB_REC_NOTED,
						      NULL, false) < 0)
					goto oom;
			}
			d->done++;
			continue;
		}
		if (fails && d->res.state != CBB_POLL_FAILED) {
			d->res.state = CBB_POLL_FAILED;
			failure_of(f, v, &d->res);
		}
		d->failed += v->need == N_FAILED || v->need == N_BROKEN;
		d->done += v->need == N_DONE;
		d->running += v->need == N_RUNNING;
		d->pending += v->need == N_PENDING;
		d->kept += v->need == N_KEPT;
		d->missing += v->need == N_START;
		d->waiting += v->need == N_PROBE || v->need == N_ASIDE;
	}
	if (d->res.state == CBB_POLL_FAILED)
		return 0;
	/* a hurried teardown's mark covers this attempt: its stage-in was
	 * stopped and its buffer torn down.  What its transfers say still
	 * counts (a failure above, or all done); nothing is sent for it
	 * again, and a stage that is not done is over */
	if (f->over && f->stage == CBB_STAGE_IN) {
		d->nsend = 0;
		d->need_lock = false;
		if (d->done + d->kept < d->n) {
			d->res.state = CBB_POLL_FAILED;
			d->res.fail = CBB_FAIL_OVER;
			cbb_err(&d->res.err, "the job is over and its buffer "
				"was torn down: stage-in stopped, nothing "
				"started again");
		}
		return 0;
	}
	for (k = 0; k < d->n; k++) {
		cbb_view_t *v = &d->v[k];
		cbb_key_t key;

		if (v->need != N_START)
			continue;
		cbb_view_key(f, v, f->type, 0, &key);
		if (cbb_decision_send(d, k, &key, false, cbb_action_of(v->d),
				      (const char *const *)v->d->sources,
				      v->d->nsources, v->dest, v->shared) < 0)
			goto oom;
	}
	if (d->running || d->pending || d->missing || d->waiting)
		d->res.state = CBB_POLL_BUSY;
	else if (f->account && !f->starting && !accounted(f) &&
		 cbb_decision_note(d, f->type, f->attempt, 0,
				   CBB_REC_ACCOUNTED, NULL, false) == 0)
		d->account = true; /* over for this attempt: summarised once */
	return 0;
oom:
	d->res.state = CBB_POLL_FAILED;
	d->res.fail = CBB_FAIL_INTERNAL;
	cbb_err(&d->res.err, "conduit_bb: out of memory");
	return -1;
}

void cbb_outage(const cbb_facts_t *f, const char *what, const char *msg,
		cbb_result_t *r)
{
	int64_t since = f->down_since ? f->down_since : f->now;
	char last[CBB_ERR_MAX];

	snprintf(last, sizeof(last), "%s", msg);
	cbb_err_clear(&r->err);
	if (f->now - since < (int64_t)f->down_grace_s) {
		/* "server down for N s" is what admins and the e2e grep for */
		r->state = CBB_POLL_BUSY;
		r->fail = CBB_FAIL_NONE;
		cbb_err(&r->err, "%s: %.900s (server %s for %lld s; waiting up "
			"to %s=%u s)", cbb_stage_word(f->stage), last,
			strcmp(what, "unreachable") ? what : "down",
			(long long)(f->now - since), f->grace_knob,
			f->down_grace_s);
		return;
	}
	r->state = CBB_POLL_FAILED;
	r->fail = CBB_FAIL_OUTAGE;
	cbb_err(&r->err, "conduit: server %s for %lld s (%s=%u s): %.900s",
		what, (long long)(f->now - since), f->grace_knob,
		f->down_grace_s, last);
}

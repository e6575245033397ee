/*
 * stage.c - the stage hooks' one pass (stage.h): gather the facts,
 * decide, act (facts.h), and what the answer means for the hook.  A
 * start (data_in, data_out) starts what is missing and, while Conduit
 * answers the probes some directives wait for, asks again within the
 * hook's budget; a poll (test_data_*) does one pass and says DONE, BUSY
 * or FAILED.  An array's shared stage-ins are decided under the array's
 * lock; a move-aside under the job's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "act.h"
#include "facts.h"
#include "pick.h"
#include "stage.h"

/* How long a hook waits for the job's lock. */
#define CBB_JOB_LOCK_MS 200
/* A start waits for its probes while this much of its budget is left,
 * asking every so often. */
#define CBB_PROBE_RESERVE_MS 2000
#define CBB_PROBE_EVERY_MS 150

/*
 * Decide and act.  A decision that starts a move-aside is taken again
 * under the job's lock, from the records as they are then; when another
 * hook of the job holds it, nothing is done now (BUSY).
 */
static void pass(cbb_job_ctx_t *j, cbb_facts_t *f, cbb_decision_t *d,
		 cbb_act_t *a)
{
	cbb_err_t err;
	int lock;

	memset(a, 0, sizeof(*a));
	if (cbb_decide(f, d) < 0 || !d->need_lock) {
		if (d->res.fail != CBB_FAIL_INTERNAL)
			cbb_act(j, f, d, a);
		return;
	}
	lock = cbb_job_lock(j->sd, j->job_id, CBB_JOB_LOCK_MS);
	cbb_decision_free(d);
	cbb_err_clear(&err);
	if (lock < 0 || cbb_facts_reload(j, f, &err) < 0) {
		if (lock >= 0)
			cbb_lock_release(lock);
		/* another hook of the job decides it; or StateDir failed */
		memset(d, 0, sizeof(*d));
		cbb_arena_init(&d->arena);
		d->res.state = err.msg[0] ? CBB_POLL_FAILED : CBB_POLL_BUSY;
		d->res.fail = err.msg[0] ? CBB_FAIL_STATEDIR : CBB_FAIL_NONE;
		d->res.err = err;
		return;
	}
	if (cbb_decide(f, d) == 0)
		cbb_act(j, f, d, a);
	cbb_lock_release(lock);
}

/*
 * What act's answers mean for the stage's answer r.  A start never hands
 * Slurm a failure for what may pass (a server not taking transfers yet):
 * it marks the outage, and the polls wait it out within the grace.
 */
static void answers(cbb_job_ctx_t *j, cbb_facts_t *f, const cbb_act_t *a,
		    cbb_result_t *r)
{
	if (a->oom || a->refused.msg[0]) {
		r->state = CBB_POLL_FAILED;
		r->fail = a->oom ? CBB_FAIL_INTERNAL : CBB_FAIL_REFUSED;
		cbb_err(&r->err, "%s", a->refused.msg);
		return;
	}
	if (a->deferred) {
		/* the grace runs from the first time it could not start one */
		f->down_since = a->down_since;
		if (r->state != CBB_POLL_FAILED && !f->starting) {
			cbb_outage(f, "not taking transfers", a->later.msg, r);
			if (r->state == CBB_POLL_BUSY)
				cbb_job_log(j, CBB_LOG_INFO, "%s", r->err.msg);
		}
	}
}

int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_stage_t stage,
		   cbb_err_t *err)
{
	cbb_decision_t d;
	cbb_facts_t f;
	cbb_act_t a;
	cbb_result_t r;

	/* nothing to wait for, unless all of a stage-out was skipped and
	 * the job still gets its summary */
	if (cbb_plan_count(plan, stage, false) == 0 &&
	    !(j->account && stage == CBB_STAGE_OUT &&
	      cbb_plan_count(plan, CBB_STAGE_OUT, true)))
		return CBB_POLL_DONE;
	memset(&d, 0, sizeof(d));
	memset(&r, 0, sizeof(r));
	if (cbb_facts_gather(j, plan, stage, false, true, &f, err) < 0)
		return CBB_POLL_FAILED;
	if (f.busy) {
		r.state = CBB_POLL_BUSY; /* another task is starting them */
		goto out;
	}
	if (f.answer != CBB_ANSWER_OK) {
		/* a failure to ask is an outage until the grace is over; a
		 * refusal is final */
		if (f.answer == CBB_ANSWER_REFUSED) {
			r.state = CBB_POLL_FAILED;
			cbb_err(&r.err, "%s", f.query_err.msg);
		} else {
			if (!f.down_since)
				f.down_since = (int64_t)cbb_down_since(j->sd,
								       j->job_id);
			cbb_outage(&f, "unreachable", f.query_err.msg, &r);
			if (r.state == CBB_POLL_BUSY)
				cbb_job_log(j, CBB_LOG_INFO, "%s", r.err.msg);
		}
		goto out;
	}
	pass(j, &f, &d, &a);
	r = d.res;
	answers(j, &f, &a, &r);
	if (r.fail == CBB_FAIL_OVER) {
		/* nothing was sent for it; the hook asks Slurm whether the
		 * job is over and says so in Slurm's words, aborting what
		 * still runs (cbb_stage_job_ended) */
		r.state = CBB_POLL_BUSY;
		r.fail = CBB_FAIL_NONE;
		cbb_err_clear(&r.err);
		goto out;
	}
	if (r.state == CBB_POLL_FAILED) {
		j->failed += (unsigned)d.failed; /* for the hook's record */
	} else if (r.state == CBB_POLL_BUSY) {
		cbb_job_log(j, CBB_LOG_DEBUG, "%s (attempt %u): %zu done, %zu "
			    "running, %zu not visible yet, %zu started now, %zu "
			    "waiting on probes or move-asides",
			    cbb_stage_word(stage), f.attempt, d.done + d.kept,
			    d.running, d.pending, d.missing, d.waiting);
	} else if (d.account) {
		/* the stage is over for this attempt: summarise it */
		cbb_account(j, &f, &d);
	}
out:
	if (r.state == CBB_POLL_FAILED)
		cbb_err(err, "%s", r.err.msg);
	cbb_decision_free(&d);
	cbb_facts_free(&f);
	return r.state;
}

int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_stage_t stage,
		    cbb_err_t *err)
{
	cbb_decision_t d;
	cbb_facts_t f;
	cbb_act_t a;
	cbb_result_t r;
	size_t started = 0;
	int rc = 0;

	if (cbb_plan_count(plan, stage, false) == 0)
		return 0;
	if (cbb_over_for(j->sd, j->job_id, j->submit)) {
		cbb_job_log(j, CBB_LOG_VERBOSE, "%s: the job is over and its "
			    "buffer torn down; nothing started",
			    cbb_stage_word(stage));
		return 0;
	}
	memset(&d, 0, sizeof(d));
	if (cbb_facts_gather(j, plan, stage, true, true, &f, err) < 0)
		return -1;
	if (f.busy) {
		cbb_job_log(j, CBB_LOG_VERBOSE, "%s: another task of array %u is "
			    "starting the shared transfers; the polls go on "
			    "from there", cbb_stage_word(stage), j->array_job_id);
		goto out;
	}
	if (f.answer != CBB_ANSWER_OK) {
		if (f.answer == CBB_ANSWER_REFUSED) {
			rc = cbb_err(err, "%s", f.query_err.msg);
		} else {
			/* the polls start everything once the server answers */
			(void)cbb_down_since(j->sd, j->job_id);
			cbb_job_log(j, CBB_LOG_INFO, "%s: %s; the polls will start "
				    "the transfers when the server answers",
				    cbb_stage_word(stage), f.query_err.msg);
		}
		goto out;
	}
	for (;;) {
		pass(j, &f, &d, &a);
		r = d.res;
		answers(j, &f, &a, &r);
		started += a.started;
		if (r.state == CBB_POLL_FAILED) {
			rc = cbb_err(err, "%s", r.err.msg);
			break;
		}
		/* probes answered while the hook has time: start at once */
		if (!d.waiting || a.undone ||
		    cbb_grpc_left_ms(j->g) < CBB_PROBE_RESERVE_MS)
			break;
		{
			struct timespec ts = { 0, CBB_PROBE_EVERY_MS * 1000000L };

			nanosleep(&ts, NULL);
		}
		cbb_decision_free(&d);
		f.resend = false;
		if (cbb_facts_reload(j, &f, err) < 0) {
			rc = -1;
			goto out;
		}
		cbb_facts_requery(j, &f);
		if (f.answer != CBB_ANSWER_OK)
			goto out; /* the polls go on from here */
	}
	cbb_job_log(j, CBB_LOG_VERBOSE, "%s (attempt %u): started %zu "
		    "transfer(s), %zu already there, %zu done in an earlier "
		    "attempt, %zu waiting on probes or move-asides",
		    cbb_stage_word(stage), f.attempt, started,
		    d.running + d.done + d.pending, d.kept, d.waiting);
out:
	cbb_decision_free(&d);
	cbb_facts_free(&f);
	return rc;
}

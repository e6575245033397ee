/*
 * stage_poll.c - what happens on a poll (test_data_in, test_data_out):
 * one Query, each directive's verdict, what is missing started, an
 * outage or a server that will not take transfers waited out within its
 * grace, and the stage summarised once it is over; before it, what
 * --when= skips, and whether the job is over meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

#include "account.h"
#include "array.h"
#include "jobstate.h"
#include "outcome.h"
#include "stage_array.h"
#include "stage_find.h"

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

int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_stage_t stage,
		   cbb_err_t *err)
{
	size_t want = cbb_plan_count(plan, stage, false), n, i;
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
			   cbb_plan_count(plan, CBB_STAGE_OUT, true)))
		return CBB_POLL_DONE;
	if (!cbb_shared_lock_for(j, plan, stage, &lock))
		return CBB_POLL_BUSY; /* another task is starting them */
	cbb_err_clear(&later);
	switch (cbb_stage_gather(j, stage, &have, &recs, &shared, &again, err)) {
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
	n = cbb_stage_view(j, plan, stage, &have, &recs, &shared, views);
	for (i = 0; i < n; i++) {
		if (views[i].v == V_BROKEN || views[i].v == V_FAILED ||
		    views[i].v == V_ASIDE_FAILED) {
			if (views[i].v == V_BROKEN)
				cbb_verdict_broken_mv(err, &views[i]);
			else if (views[i].v == V_ASIDE_FAILED)
				cbb_err(err, "%s", views[i].why.msg);
			else
				cbb_verdict_failed(err, stage, &views[i]);
			if (!cbb_stage_best_effort(j, stage)) {
				size_t f;

				/* every failed one, for the hook's record */
				for (f = 0; f < n; f++)
					j->failed += views[f].v == V_FAILED ||
						     views[f].v == V_BROKEN;
				rc = CBB_POLL_FAILED;
				goto out;
			}
			if (!noted(&recs, views[i].d->index, cbb_attempt(j, stage))) {
				cbb_job_log(j, CBB_LOG_ERROR, "stage-out of attempt %u, "
				      "which a requeue interrupted: %s; the job goes "
				      "on to its next attempt",
				      cbb_attempt(j, stage), err->msg);
				cbb_stage_record(j, CBB_KEY_POST, cbb_attempt(j, stage),
					   views[i].d->index, CBB_REC_NOTED, NULL);
			}
			cbb_err_clear(err);
			done++;
			continue;
		}
		busy += views[i].v == V_RUNNING || views[i].v == V_ASIDE;
		done += views[i].v == V_DONE;
		pending += views[i].v == V_PENDING;
		kept += views[i].v == V_KEPT;
		missing += views[i].v == V_START;
	}
	if (missing && cbb_stage_start_views(j, stage, views, n, false, &deferred,
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
	cbb_join_shared(j, cbb_views_shared(views, n), &recs, &shared);
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

/*
 * #CONDUIT_POST --when=: mark the directives this job's outcome skips
 * (the stage code leaves them alone) and record each once per attempt for
 * bbstat, logging it the first time.  Stage-out only; a record that
 * cannot be written only costs the bbstat row.
 */
void cbb_stage_apply_when(const cbb_job_ctx_t *j, cbb_plan_t *plan)
{
	cbb_outcome_t o;
	cbb_recs_t had;
	cbb_err_t err;
	uint32_t a = cbb_attempt(j, CBB_STAGE_OUT);
	size_t i, k;

	cbb_outcome(j->have_state, j->job_state, j->have_exit, j->exit_code,
		    &o);
	for (i = 0; i < plan->n; i++) {
		cbb_directive_t *d = &plan->v[i];

		d->skip = d->stage == CBB_STAGE_OUT && !cbb_when_runs(d->when, &o);
	}
	cbb_err_clear(&err);
	if (cbb_skips_load(j->sd, j->job_id, j->restart, j->submit, &had,
			   &err) < 0)
		return;
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		cbb_rec_t r;
		char id[sizeof(r.id)], text[48];

		if (!d->skip)
			continue;
		for (k = 0; k < had.n; k++)
			if (had.v[k].kind == CBB_REC_SKIPPED &&
			    had.v[k].attempt == a && had.v[k].index == d->index)
				break;
		if (k < had.n)
			continue;
		snprintf(id, sizeof(id), "%s:%s:%u:%s", cbb_when_name(d->when),
			 o.why, d->line, j->user);
		cbb_job_rec(j, &r, CBB_KEY_POST, a, d->index, CBB_REC_SKIPPED,
			    id);
		if (cbb_skips_add(j->sd, j->job_id, &r, &err) < 0)
			break;
		cbb_outcome_text(o.why, text, sizeof(text));
		cbb_job_log(j, CBB_LOG_INFO, "line %u: stage-out skipped "
			    "(when=%s, %s)", d->line, cbb_when_name(d->when),
			    text);
	}
	cbb_recs_free(&had);
}

/*
 * A job cancelled while its transfers run does not always get a
 * teardown: when the cancel and the teardown reach slurmscriptd in the
 * wrong order, the kill meant for the stage-in scripts kills the
 * teardown, and Slurm keeps polling test_data_in.  So a poll looks at
 * whether the job is over, and if it is it aborts the transfers.  The
 * job's state comes from job_info (slurmctld's snapshot at the hook's
 * launch, at no cost); only when job_info has none, or one not known
 * here, is Slurm asked (squeue) when the buffer has been torn down, and
 * otherwise at most every CBB_ASK_EVERY_S seconds while transfers still
 * run.  Returns 1 (err set) when the job is over, else 0.  Stage-in
 * only: stage-out always runs after the job is over.
 */
#define CBB_ASK_EVERY_S 10

int cbb_stage_job_ended(cbb_job_ctx_t *j, bool now, cbb_err_t *err)
{
	cbb_job_facts_t f;
	cbb_err_t abort_err;
	char sq[4200];
	const char *word = "";
	time_t asked_at = time(NULL);
	int over = j->have_state ? cbb_state_over(j->job_state, &word) : -1;
	int lock;

	if (over == 0)
		return 0;
	memset(&f, 0, sizeof(f));
	if (over == 1) {
		f.cls = CBB_JOB_OVER;
		snprintf(f.state, sizeof(f.state), "%s", word);
	} else {
		if (!now && !cbb_ask_due(j->sd, j->job_id, CBB_ASK_EVERY_S))
			return 0;
		cbb_job_state(cbb_conf_squeue(j->cfg, sq, sizeof(sq)),
			      j->job_id, CBB_SQUEUE_TIMEOUT_MS, &f);
	}
	if (f.cls != CBB_JOB_OVER && f.cls != CBB_JOB_GONE)
		return 0;
	cbb_over_mark(j->sd, j->job_id, asked_at);
	cbb_err_clear(&abort_err);
	lock = cbb_array_decide(j);
	/* the teardown that would have forgotten the job may never come;
	 * but what could not be aborted keeps its records, for a sweep
	 * (cbb_stage_sweep) to stop once the server answers */
	if (cbb_stage_teardown(j, true, false, &abort_err) < 0)
		cbb_job_note(j, CBB_LOG_ERROR, abort_err.msg);
	else
		cbb_state_forget(j->sd, j->job_id);
	cbb_array_release(j, lock);
	cbb_err(err, "job %u is %s: stage-in stopped, its transfers aborted",
		j->job_id, f.state[0] ? f.state : "gone");
	return 1;
}

/*
 * stage_poll.c - what happens on a poll (test_data_in, test_data_out):
 * one Query, each directive's verdict, what is missing started, an
 * outage or a server that will not take transfers waited out within its
 * grace, and the stage summarised once it is over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

#include "account.h"
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
		if (views[i].v == V_BROKEN || views[i].v == V_FAILED) {
			if (views[i].v == V_BROKEN)
				cbb_verdict_broken_mv(err, &views[i]);
			else
				cbb_verdict_failed(err, stage, &views[i]);
			if (!cbb_stage_best_effort(j, stage)) {
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
		busy += views[i].v == V_RUNNING;
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

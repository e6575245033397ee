/*
 * teardown.c - a job's transfers when it goes: the two teardowns Slurm
 * asks for, a poll that finds the job over, whether its records show a
 * stage-in never seen to end, how many stage-ins still run, and
 * aborting the active ones (an array's shared stage-ins only when no
 * other task waits on them).  What Conduit then reports for an aborted
 * transfer is its own (docs/admin.md, "Cancelling a stage"): an abort
 * is asked for, and Conduit's mover may still be copying.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage.h"

#include "array.h"
#include "facts.h"
#include "jobstate.h"
#include "lost.h"
#include "outcome.h"

/* A transfer of a stage-in (the job's own or its array's shared one). */
static bool is_stage_in(const cbb_transfer_t *x)
{
	cbb_key_t tmp;
	const cbb_key_t *k = cbb_transfer_key(x, &tmp);

	return k && (k->type == CBB_KEY_PRE || k->type == CBB_KEY_SHARED);
}

static bool still_runs(const cbb_transfer_t *x)
{
	return !x->validation_only && !cbb_transfer_failed(x) &&
	       !cbb_transfer_succeeded(x);
}

/* Every transfer of the job (and its array's shared stage-ins), from
 * one Query; -1 (err set) when it failed. */
static int job_transfers(cbb_job_ctx_t *j, cbb_transfers_t *have,
			 cbb_err_t *err)
{
	static const cbb_plan_t none;
	cbb_facts_t f;

	have->v = NULL;
	have->n = 0;
	if (cbb_facts_gather(j, &none, CBB_STAGE_IN, false, true, &f, err) < 0)
		return -1;
	if (f.answer != CBB_ANSWER_OK) {
		cbb_err(err, "%s", f.query_err.msg);
		cbb_facts_free(&f);
		return -1;
	}
	*have = f.have;
	f.have.v = NULL;
	f.have.n = 0;
	cbb_facts_free(&f);
	return 0;
}

bool cbb_stage_in_unfinished(cbb_job_ctx_t *j)
{
	cbb_recs_t r;
	cbb_err_t err;
	uint32_t uid;
	bool open;

	cbb_err_clear(&err);
	if (cbb_recs_load(j->sd, j->job_id, UINT32_MAX, 0, &r, &err) < 0)
		return false;
	open = cbb_recs_stage_in_open(&r, &uid);
	cbb_recs_free(&r);
	return open;
}

long cbb_stage_in_active(cbb_job_ctx_t *j, cbb_err_t *err)
{
	cbb_transfers_t have;
	size_t i;
	long n = 0;

	if (job_transfers(j, &have, err) < 0)
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

	if (job_transfers(j, &have, err) < 0)
		return -1;
	req = calloc(have.n ? have.n : 1, sizeof(*req));
	if (!req) {
		cbb_transfers_free(&have);
		return cbb_err(err, "conduit: out of memory");
	}
	for (i = 0; i < have.n; i++) {
		const cbb_transfer_t *x = &have.v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (!still_runs(x) || (in_only && !is_stage_in(x)))
			continue;
		/* an array's shared stage-in only when no task waits on it */
		if ((k = cbb_transfer_key(x, &tmp)) && k->type == CBB_KEY_SHARED &&
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
	/* an abort asked for and taken, not a copy known to have stopped:
	 * Conduit's mover may go on writing (docs/admin.md) */
	cbb_job_log(j, CBB_LOG_VERBOSE, "teardown: Conduit took the abort of "
		    "%zu of %zu active transfer(s)", n - failed, n);
	free(req);
	cbb_transfers_free(&have);
	return failed ? -1 : 0;
}

/*
 * Without hurry: a job whose records show a stage-in never seen to end
 * costs a Query (a job that ran costs nothing), and one with a stage-in
 * still running an squeue.
 */
static void stop_orphaned_stage_in(cbb_job_ctx_t *j)
{
	cbb_job_facts_t f;
	cbb_err_t err;
	char sq[4200];
	time_t asked_at;
	long n;

	cbb_err_clear(&err);
	if (!cbb_stage_in_unfinished(j))
		goto alone;
	if (cbb_grpc_open(j->g, j->cfg, 0, &err) < 0)
		goto failed;
	n = cbb_stage_in_active(j, &err);
	if (n < 0)
		goto failed;
	if (n == 0)
		goto alone;
	asked_at = time(NULL);
	cbb_job_state(cbb_conf_squeue(j->cfg, sq, sizeof(sq)), j->job_id,
		      CBB_SQUEUE_TIMEOUT_MS, &f);
	if (f.cls != CBB_JOB_OVER && f.cls != CBB_JOB_GONE)
		goto alone;
	cbb_over_mark(j->sd, j->job_id, asked_at);
	cbb_job_log(j, CBB_LOG_INFO, "teardown: the job is %s with %ld "
		    "stage-in transfer(s) still running: aborting them",
		    f.state[0] ? f.state : "gone", n);
	if (cbb_stage_teardown(j, true, true, &err) < 0)
		goto failed;
	return;
failed:
	cbb_job_note(j, CBB_LOG_ERROR, err.msg);
	return;
alone:
	cbb_job_log(j, CBB_LOG_VERBOSE, "teardown: leaving transfers alone");
}

void cbb_stage_teardown_done(cbb_job_ctx_t *j)
{
	/* the last task of an array to go takes its shared records */
	int lock = cbb_array_teardown(j);

	stop_orphaned_stage_in(j);
	cbb_array_release(j, lock);
	/* a stage-out Slurm dropped still running: its records stay, and
	 * the sweeps follow it to its end (lost.c) */
	if (cbb_lost_teardown(j))
		return;
	cbb_sd_forget(j->sd, j->job_id);
}

int cbb_stage_teardown_hurried(cbb_job_ctx_t *j, cbb_err_t *err)
{
	cbb_job_facts_t f;
	char sq[4200];
	time_t asked_at = time(NULL);
	int rc, lock;

	cbb_job_state(cbb_conf_squeue(j->cfg, sq, sizeof(sq)), j->job_id,
		      CBB_SQUEUE_TIMEOUT_MS, &f);
	if (f.cls == CBB_JOB_UNKNOWN)
		return cbb_err(err, "job %u: teardown: cannot learn the job's "
			       "state from squeue; nothing aborted (Slurm "
			       "retries)", j->job_id);
	cbb_job_log(j, CBB_LOG_VERBOSE, "teardown (hurry, job state %s): %s",
		    f.state[0] ? f.state : "gone", f.cls == CBB_JOB_ALIVE ?
		    "leaving transfers alone" : "aborting active transfers");
	if (f.cls == CBB_JOB_ALIVE)
		return 0;
	/* before anything is aborted: a stage hook still to come starts nothing */
	cbb_over_mark(j->sd, j->job_id, asked_at);
	rc = cbb_grpc_open(j->g, j->cfg, 0, err);
	if (rc == 0) {
		lock = cbb_array_teardown(j);
		rc = cbb_stage_teardown(j, true, false, err);
		cbb_array_release(j, lock);
	}
	/* a stage-in that could not be aborted keeps its records: if every
	 * retry of this teardown fails too, a sweep stops it once the server
	 * answers (cbb_stage_sweep) */
	if (rc == 0 || !cbb_stage_in_unfinished(j))
		cbb_sd_forget(j->sd, j->job_id);
	return rc;
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
	int over = j->have_state ? cbb_job_state_over(j->job_state, &word) : -1;
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
		cbb_sd_forget(j->sd, j->job_id);
	cbb_array_release(j, lock);
	cbb_err(err, "job %u is %s: stage-in stopped, an abort of its transfers "
		"asked of Conduit", j->job_id, f.state[0] ? f.state : "gone");
	return 1;
}

/*
 * stage_teardown.c - a job's transfers at teardown: whether its records
 * show a stage-in never seen to end, how many stage-ins still run, and
 * aborting the active ones (an array's shared stage-ins only when no
 * other task waits on them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

#include "array.h"
#include "jobstate.h"
#include "stage_find.h"

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
	cbb_job_log(j, CBB_LOG_VERBOSE, "teardown aborted %zu of %zu active transfer(s)", n - failed, n);
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
	cbb_state_forget(j->sd, j->job_id);
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
		cbb_state_forget(j->sd, j->job_id);
	return rc;
}

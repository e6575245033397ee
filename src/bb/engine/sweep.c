/*
 * sweep.c - the sweep for other jobs' orphaned stage-ins (stage.h,
 * cbb_stage_sweep): which jobs StateDir's records show with a stage-in
 * never seen to end, what Slurm says of them (one squeue), and for each
 * one cancelled in stage-in or forgotten, what its hurried teardown would
 * have done.  At the top of the stage engine: the hooks call it once done
 * with their own job; it calls the teardown code and the layers below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage.h"

#include "array.h"
#include "jobstate.h"
#include "lost.h"

/* At most one sweep this often over all hooks (seconds). */
#define SWEEP_EVERY_S 1
/* Record files read per sweep, and jobs asked about with one squeue. */
#define SWEEP_READ 32
#define SWEEP_ASK 8
/* squeue's time limit in a sweep (milliseconds): at least this much, or
 * half of what the hook's budget leaves, whichever is more (a loaded
 * host runs squeue slowly; the sweep's time is the hook's own) */
#define SWEEP_SQUEUE_MS 2000
/* How many job ids one readdir of StateDir takes in at most. */
#define SWEEP_LIST_MAX 4096
/* The time a sweep leaves the hook's budget for a job's Query and Stop. */
#define SWEEP_RPC_MIN_MS 500

/* Cancelled in stage-in or forgotten: not a job that ran (or runs). */
static bool stopped_in_stage_in(const cbb_job_facts_t *f)
{
	return f->cls == CBB_JOB_GONE ||
	       (f->cls == CBB_JOB_OVER && (!strcmp(f->state, "CANCELLED") ||
					   !strcmp(f->state, "DEADLINE")));
}

/*
 * A job cancelled in stage-in (or one Slurm has forgotten): what its
 * hurried teardown would have done.  Returns false when the sweep should
 * stop (no time left, or the server does not answer).
 */
static bool stop_job(cbb_job_ctx_t *self, uint32_t id, uint32_t uid,
		     const cbb_job_facts_t *f, time_t asked_at)
{
	cbb_job_ctx_t j;
	cbb_err_t err;
	char who[48];
	int lock, rc;
	long n;

	/* (no job of its own: `conduit-bb recover`) */
	if (self->job_id)
		snprintf(who, sizeof(who), "sweep (from job %u)", self->job_id);
	else
		snprintf(who, sizeof(who), "conduit-bb recover");

	if (cbb_grpc_left_ms(self->g) < SWEEP_RPC_MIN_MS)
		return false;
	cbb_job_ctx_init(&j, self->cfg, self->g, self->cluster, id, uid);
	j.sd = self->sd;
	j.log = self->log;
	j.log_ud = self->log_ud;
	/* a task of an array: its array's shared stage-in is its too, as
	 * its own hurried teardown would see it (a join recorded for
	 * another user is another job's) */
	j.array_job_id = cbb_joined_of(j.sd, id, uid, NULL);
	cbb_err_clear(&err);
	n = cbb_stage_in_active(&j, &err);
	if (n < 0) {
		cbb_job_log(&j, CBB_LOG_VERBOSE, "%s: %s", who, err.msg);
		return false;
	}
	/* before anything is aborted: a stage hook still to come starts
	 * nothing (statefile.h, cbb_over_mark) */
	cbb_over_mark(j.sd, id, asked_at);
	if (n > 0) {
		cbb_job_log(&j, CBB_LOG_INFO, "%s: the job is %s with %ld "
			    "stage-in transfer(s) still running and no hook of "
			    "its own left to stop them: aborting them", who,
			    f->state[0] ? f->state : "gone", n);
		/* the last task of its array to go: the shared stage-in goes
		 * too, under the array's lock (cbb_array_decide) */
		lock = cbb_array_decide(&j);
		rc = cbb_stage_teardown(&j, true, true, &err);
		cbb_array_release(&j, lock);
		if (rc < 0) {
			cbb_job_log(&j, CBB_LOG_ERROR, "%s: %s", who, err.msg);
			return true; /* its records stay: the next sweep retries */
		}
	}
	cbb_sd_forget(j.sd, id);
	return true;
}

/*
 * Up to SWEEP_ASK jobs other than `self` whose records show an open
 * stage-in, or a saved stage-out never seen to end (out[]: lost.c), read
 * from a window of StateDir's jobs that moves on at every sweep (so each
 * job's turn comes), into ask[] with their uids.
 */
static size_t pick_jobs(cbb_job_ctx_t *me, uint32_t *ask, uint32_t *uids,
			bool *out)
{
	cbb_statedir_t *sd = me->sd;
	uint32_t self = me->job_id;
	uint32_t *ids = calloc(SWEEP_LIST_MAX, sizeof(*ids));
	size_t n, i, start, read = 0, asked = 0;
	cbb_err_t err;

	n = ids ? cbb_sd_jobs(sd, ids, SWEEP_LIST_MAX) : 0;
	start = n ? (size_t)time(NULL) * SWEEP_READ % n : 0;
	for (i = 0; i < n && read < SWEEP_READ && asked < SWEEP_ASK; i++) {
		uint32_t id = ids[(start + i) % n], uid;
		cbb_recs_t r;
		bool open;

		if (id == self)
			continue;
		read++;
		cbb_err_clear(&err);
		if (cbb_recs_try_load(sd, id, &r, &err) <= 0)
			continue; /* busy (its own hooks are at it) or none */
		open = cbb_recs_stage_in_open(&r, &uid);
		out[asked] = false;
		if (cbb_outplan_exists(sd, id)) {
			/* a stage-out never seen to end (lost.c) */
			cbb_lost_t l;

			if (cbb_lost_load(sd, id, &l, &err) == 0) {
				out[asked] = cbb_lost_open(&l, &r);
				if (out[asked])
					uid = l.uid;
				cbb_lost_free(&l);
			} else {
				cbb_job_log(me, CBB_LOG_VERBOSE, "sweep: job "
					    "%u: %s", id, err.msg);
			}
		}
		cbb_recs_free(&r);
		if ((!open && !out[asked]) || uid == CBB_UID_UNKNOWN ||
		    uid == 0)
			continue;
		ask[asked] = id;
		uids[asked++] = uid;
	}
	/* a stage-out plan with no records at all (a data_out killed
	 * before its first start): not in the list above */
	n = ids && asked < SWEEP_ASK && read < SWEEP_READ ?
		    cbb_outplan_jobs(sd, ids, SWEEP_LIST_MAX) : 0;
	for (i = 0; i < n && read < SWEEP_READ && asked < SWEEP_ASK; i++) {
		static const cbb_recs_t none;
		cbb_lost_t l;

		if (ids[i] == self || cbb_share_started_ms(sd, ids[i]))
			continue;
		read++;
		cbb_err_clear(&err);
		if (cbb_lost_load(sd, ids[i], &l, &err) < 0) {
			cbb_job_log(me, CBB_LOG_VERBOSE, "sweep: job %u: %s",
				    ids[i], err.msg);
			continue;
		}
		if (cbb_lost_open(&l, &none) && l.uid != 0) {
			out[asked] = true;
			ask[asked] = ids[i];
			uids[asked++] = l.uid;
		}
		cbb_lost_free(&l);
	}
	free(ids);
	return asked;
}

/* squeue's limit now: see SWEEP_SQUEUE_MS; 0 when no time is left */
static long squeue_ms(const cbb_job_ctx_t *self)
{
	long left = (long)cbb_grpc_left_ms(self->g) - SWEEP_RPC_MIN_MS;

	if (left <= 0)
		return 0;
	return left / 2 > SWEEP_SQUEUE_MS ? left / 2
	       : (left < SWEEP_SQUEUE_MS ? left : SWEEP_SQUEUE_MS);
}

void cbb_stage_sweep(cbb_job_ctx_t *self)
{
	uint32_t ask[SWEEP_ASK], uids[SWEEP_ASK];
	bool out[SWEEP_ASK];
	cbb_job_facts_t f[SWEEP_ASK];
	char sq[4200];
	size_t asked, i;
	bool alone = false;
	time_t asked_at;
	cbb_err_t err;
	long ms;
	int held;

	if (!self->sd || !self->g || !cbb_sweep_due(self->sd, SWEEP_EVERY_S, &held))
		return;
	asked = pick_jobs(self, ask, uids, out);
	if (asked && !self->g->multi) {
		cbb_err_clear(&err);
		if (cbb_grpc_open(self->g, self->cfg, 0, &err) < 0)
			asked = 0;
	}
	/* one squeue for all of them; Slurm that does not answer: not now */
	asked_at = time(NULL);
	ms = squeue_ms(self);
	if (asked && (ms == 0 ||
		      cbb_jobs_state(cbb_conf_squeue(self->cfg, sq, sizeof(sq)),
				     ask, asked, ms, f) < 0))
		asked = 0;
	for (i = 0; i < asked; i++) {
		/* one that a list leaves out is asked alone (Slurm may have
		 * forgotten it), one per sweep */
		if (f[i].cls == CBB_JOB_UNKNOWN && asked > 1 && !alone) {
			alone = true;
			cbb_job_state(cbb_conf_squeue(self->cfg, sq, sizeof(sq)),
				      ask[i], (ms = squeue_ms(self)) ? ms : 1,
				      &f[i]);
		}
		if (out[i]) {
			/* a stage-out Slurm dropped: finished (lost.c) */
			if (cbb_outplan_dropped(self->sd, ask[i],
						cbb_job_ended_for_good(&f[i]),
						f[i].state))
				(void)cbb_lost_finish(self, ask[i], &f[i],
						      "sweep");
			if (cbb_grpc_left_ms(self->g) < SWEEP_RPC_MIN_MS)
				break;
			continue;
		}
		if (stopped_in_stage_in(&f[i]) &&
		    !stop_job(self, ask[i], uids[i], &f[i], asked_at))
			break;
	}
	cbb_lock_release(held);
}

int cbb_stage_stop_cancelled(cbb_job_ctx_t *self, uint32_t id)
{
	cbb_job_facts_t f;
	cbb_recs_t r;
	cbb_err_t err;
	uint32_t uid = CBB_UID_UNKNOWN;
	time_t asked_at = time(NULL);
	bool open;

	cbb_err_clear(&err);
	if (cbb_recs_try_load(self->sd, id, &r, &err) <= 0)
		return 0; /* none (or its own teardown is at it) */
	open = cbb_recs_stage_in_open(&r, &uid);
	cbb_recs_free(&r);
	if (!open || uid == CBB_UID_UNKNOWN || uid == 0)
		return 0;
	memset(&f, 0, sizeof(f));
	f.cls = CBB_JOB_OVER;
	snprintf(f.state, sizeof(f.state), "CANCELLED");
	return stop_job(self, id, uid, &f, asked_at) ? 0 : -1;
}

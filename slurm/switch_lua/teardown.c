/*
 * teardown.c - switch/lua in slurmctld: job_complete (ctld.h).  Run by a
 * worker; an EAGAIN answer (with block_job_complete) or a helper that
 * could not start goes back in the queue until switch_retries, counted on
 * the job record so a restart keeps the count; a failed teardown drains
 * the run's nodes (switch_drain_on_failure).
 */
#include "src/common/slurm_xlator.h"

#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/job_record.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "swl.h"
#include "ctld.h"

static void teardown_run(swl_work_t *w);
static void teardown_done(task_t *t, bool failed, const char *why);

static void cannot_queue(task_t *t)
{
	teardown_done(t, true, "cannot start a worker thread");
}

/*
 * A teardown task from what the job record holds now, or, `previous`,
 * of a requeued job's previous run, started from the new run's
 * job_start: the job record already holds the new run, so the task
 * carries the previous run's ids from its jobinfo, and no nodes (the
 * record's are the new run's: a failure is logged, nothing drained).
 */
void swl_start_teardown(job_record_t *job_ptr, swl_jobinfo_t *ji,
			bool eagain_ok, bool previous)
{
	task_t *t = swl_task_new(job_ptr, false);

	t->seq = ji->seq;
	if (previous) {
		t->sluid = ji->sluid;
		t->restart_cnt = ji->restart_cnt;
		t->start_time = ji->start_time;
		xfree(t->nodes);
		snprintf(t->what, sizeof(t->what), "JobId=%u job_complete "
			 "(run %u): ", job_ptr->job_id,
			 (unsigned)ji->restart_cnt);
	}
	swl_task_set_blob(t, ji->blob, ji->blob_len);
	t->eagain_ok = eagain_ok || swl_block_job_complete();
	ji->state = SWL_TEARDOWN;
	ji->busy = true;
	swl_touched();
	t->work.run = teardown_run;
	t->fail = cannot_queue;
	swl_task_queue(t);
}

/*
 * A teardown for a setup that did not report (timed out, exited, or
 * its result came for a run that is over): job_complete with a nil
 * jobinfo, or with the jobinfo a late setup returned.  The job record
 * keeps nothing of it.
 */
void swl_start_orphan_teardown(const task_t *setup,
			       const unsigned char *blob, size_t blob_len)
{
	task_t *t = swl_task_clone(setup);

	t->start = false;
	t->seq = 0;
	t->job = NULL;
	swl_task_set_blob(t, blob, blob_len);
	t->eagain_ok = swl_block_job_complete();
	t->work.not_before = 0;
	t->work.run = teardown_run;
	t->fail = cannot_queue;
	snprintf(t->what, sizeof(t->what), "JobId=%u job_complete: ",
		 setup->job_id);
	swl_task_queue(t);
}

/* ---- job_complete --------------------------------------------------------- */

void swl_ctld_job_complete(void *arg)
{
	job_record_t *job_ptr = arg;
	swl_jobinfo_t *ji = swl_jobinfo_of(job_ptr);

	if (!ji)
		return; /* declined, failed, or never set up */
	switch (ji->state) {
	case SWL_SETUP:
		/* the setup thread tears down what it made, when it ends */
		ji->flags |= SWL_F_ENDED;
		swl_touched();
		return;
	case SWL_READY:
		swl_start_teardown(job_ptr, ji, false, false);
		return;
	case SWL_TEARDOWN:
		/* after a restart Slurm runs a COMPLETING job's teardown
		 * again: so do we, with the same jobinfo */
		if (!ji->busy)
			swl_start_teardown(job_ptr, ji, true, false);
		return;
	case SWL_DONE:
		return;
	}
}

static void drain(const task_t *t, const char *why)
{
	char reason[256];

	if (!t->nodes || !t->nodes[0]) {
		error("%s: %s%s: nothing drained (the nodes of that run are "
		      "not known)", SWL_TYPE, t->what, why);
		return;
	}
	if (!swl_conf.drain_on_failure) {
		error("%s: %s%s: nodes %s not drained "
		      "(switch_drain_on_failure=no)", SWL_TYPE, t->what, why,
		      t->nodes);
		return;
	}
	snprintf(reason, sizeof(reason), "switch/lua: JobId=%u teardown "
		 "failed: %s", t->job_id, why);
	error("%s: %sdraining %s: %s", SWL_TYPE, t->what, t->nodes, why);
	drain_nodes(t->nodes, reason, slurm_conf.slurm_user_id);
}

static void teardown_done(task_t *t, bool failed, const char *why)
{
	job_record_t *job_ptr;
	swl_jobinfo_t *ji;
	bool same_record;

	lock_slurmctld(swl_job_node_write);
	if (swl_halted()) {
		unlock_slurmctld(swl_job_node_write);
		return;
	}
	if (failed)
		drain(t, why);
	job_ptr = t->seq ? swl_same_run(t, &ji, &same_record) : NULL;
	if (job_ptr && ji->state == SWL_TEARDOWN) {
		ji->state = SWL_DONE;
		ji->busy = false;
		ji->retries = 0;
		xfree(ji->blob);
		ji->blob_len = 0;
		swl_touched();
	}
	unlock_slurmctld(swl_job_node_write);
}

/* Count an EAGAIN on the job record, so a restart keeps the count. */
static unsigned count_retry(const task_t *t)
{
	job_record_t *job_ptr;
	swl_jobinfo_t *ji;
	bool same_record;
	unsigned n = 0;

	lock_slurmctld(swl_job_node_write);
	if ((job_ptr = t->seq ? swl_same_run(t, &ji, &same_record) : NULL)) {
		n = ++ji->retries;
		swl_touched();
	}
	unlock_slurmctld(swl_job_node_write);
	return n;
}

/* One job_complete call; true when t went back in the queue to be
 * called again (EAGAIN, or a helper that could not run). */
static bool teardown(task_t *t)
{
	swl_call_t c;
	char why[192] = "";
	bool failed = true, not_run;

	log_flag(SWITCH, "%s: %scalling switch.lua", SWL_TYPE, t->what);
	swl_call("job_complete", t->what, &t->table, t->blob ? t->blob :
		 (const unsigned char *)"n", t->blob ? t->blob_len : 1, &c);
	if (swl_halted()) {
		swl_call_free(&c);
		return false;
	}
	not_run = c.outcome == SWL_NOT_RUN;
	if ((c.outcome == SWL_OK && c.rc == EAGAIN && t->eagain_ok) ||
	    not_run) {
		/* counted on the job record, so a restart keeps the count;
		 * once the record is purged (MinJobAge) or replaced, here:
		 * the retries end either way.  A helper that could not be
		 * started (fork's EAGAIN under load) is retried the same,
		 * not drained at once */
		unsigned n = t->seq && !not_run ? count_retry(t) : 0;

		/* the task keeps the count too, so that it goes on from
		 * where the record was when the record is gone */
		if (!n)
			n = ++t->tries;
		else
			t->tries = n;
		if (not_run)
			snprintf(why, sizeof(why), "%s: %.120s",
				 swl_outcome_str(&c), c.msg);
		else
			snprintf(why, sizeof(why), "EAGAIN more than "
				 "switch_retries=%u times", swl_conf.retries);
		if (n <= swl_conf.retries) {
			verbose("%s: %s%s (%u of %u): again in %us",
				SWL_TYPE, t->what,
				not_run ? "not run" : "EAGAIN", n,
				swl_conf.retries, swl_conf.retry_interval_s);
			t->work.not_before = time(NULL) +
					     (time_t)swl_conf.retry_interval_s;
			if (swl_pool_add(&t->work)) {
				swl_call_free(&c);
				return true;
			}
			snprintf(why, sizeof(why), "cannot queue the retry");
		}
	} else if (c.outcome == SWL_OK && c.rc == EAGAIN) {
		snprintf(why, sizeof(why), "EAGAIN, without "
			 "block_job_complete");
	} else if (c.outcome == SWL_OK && c.rc < 0) {
		snprintf(why, sizeof(why), "returned %d", c.rc);
	} else if (c.outcome == SWL_OK) {
		if (c.rc > 0)
			info("%s: %sreturned %d (logged only)", SWL_TYPE,
			     t->what, c.rc);
		else
			verbose("%s: %storn down", SWL_TYPE, t->what);
		failed = false;
	} else {
		snprintf(why, sizeof(why), "%s: %.120s", swl_outcome_str(&c),
			 c.msg);
	}
	swl_call_free(&c);
	teardown_done(t, failed, why);
	return false;
}


static void teardown_run(swl_work_t *w)
{
	task_t *t = (task_t *)w;

	if (!swl_halted() && teardown(t))
		return; /* queued again: not ours to free */
	swl_task_free(t);
}

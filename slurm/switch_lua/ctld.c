/*
 * ctld.c - switch/lua in slurmctld: job_start without ever blocking the
 * scheduler (how: ctld.h).
 *
 * While job_start runs the job is held the way PrologSlurmctld holds
 * it: details->prolog_running is raised and JOB_CONFIGURING set, so no
 * step can be created and the batch script waits; the thread lowers
 * prolog_running exactly once (prolog_running_decr, which launches the
 * job when nothing else holds it).  A failed setup requeues the job, or
 * cancels it when it cannot be requeued, once: the jobinfo is gone
 * before the requeue, so Slurm's own job_complete call finds nothing.

 */
#include "src/common/slurm_xlator.h"

#include <signal.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/job_record.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"
#include "src/stepmgr/srun_comm.h"

#include "ops.h"
#include "swl.h"
#include "ctld.h"

static time_t ctld_started;   /* when this slurmctld loaded the plugin */

static void setup_run(swl_work_t *w);
static void setup_done(task_t *t, swl_call_t *c);

/* a setup that cannot be queued fails as a helper that cannot run */
static void cannot_queue(task_t *t)
{
	swl_call_t c;

	memset(&c, 0, sizeof(c));
	c.outcome = SWL_NOT_RUN;
	snprintf(c.msg, sizeof(c.msg), "no worker thread");
	setup_done(t, &c);
}

static task_t *setup_task(job_record_t *job_ptr, swl_jobinfo_t *ji)
{
	task_t *t = swl_task_new(job_ptr, true);

	t->seq = ji->seq;
	t->work.run = setup_run;
	t->fail = cannot_queue;
	return t;
}

static void hold(job_record_t *job_ptr)
{
	job_ptr->details->prolog_running++;
	job_state_set_flag(job_ptr, JOB_CONFIGURING);
}

/*
 * Have all the job's nodes answered this slurmctld?  Not in the first
 * seconds after a restart: their state comes from the state file until
 * they register again, and a step is refused meanwhile.
 */
static bool nodes_answer(job_record_t *job_ptr)
{
	node_record_t *node_ptr;

	if (!job_ptr->node_bitmap)
		return true;
	for (int i = 0; (node_ptr = next_node_bitmap(job_ptr->node_bitmap, &i));
	     i++)
		if (IS_NODE_NO_RESPOND(node_ptr) || IS_NODE_UNKNOWN(node_ptr) ||
		    node_ptr->last_response < ctld_started)
			return false;
	return true;
}

#define RELEASE_WAIT_S 60

/*
 * Lower an accepted job's hold once its nodes answer (at most
 * RELEASE_WAIT_S later).  A step created before that is refused as
 * "nodes busy", and srun then backs off for minutes: this is what a
 * setup run again right after a restart would meet.  A queued task,
 * looked at after 1, 2, 4, then every 8 seconds: no thread of its own,
 * and the job and node locks a few times a minute, not every second.
 */
static void release_run(swl_work_t *w)
{
	task_t *t = (task_t *)w;
	job_record_t *job_ptr;
	time_t now = time(NULL);
	unsigned step;

	lock_slurmctld(swl_job_node_write);
	if (swl_halted() || !(job_ptr = find_job_record(t->job_id)) ||
	    (const void *)job_ptr != t->job) {
		unlock_slurmctld(swl_job_node_write);
		swl_task_free(t);
		return;
	}
	if (nodes_answer(job_ptr) || now - t->since >= RELEASE_WAIT_S ||
	    !IS_JOB_RUNNING(job_ptr)) {
		log_flag(SWITCH, "%s: %sthe job's nodes answer: released",
			 SWL_TYPE, t->what);
		prolog_running_decr(job_ptr);
		unlock_slurmctld(swl_job_node_write);
		swl_task_free(t);
		return;
	}
	unlock_slurmctld(swl_job_node_write);
	step = t->tries < 3 ? 1U << t->tries : 8;
	t->tries++;
	t->work.not_before = now + (time_t)step;
	if (!swl_pool_add(&t->work))
		swl_task_free(t); /* (only while no worker at all runs: this
				     one does) */
}

/* The pool cannot take the release: lowered now. */
static void release_now(task_t *t)
{
	job_record_t *job_ptr = find_job_record(t->job_id);

	if (job_ptr && (const void *)job_ptr == t->job)
		prolog_running_decr(job_ptr);
}

/* prolog_running_decr now, or once the nodes answer (under the locks) */
static void release(job_record_t *job_ptr, const task_t *setup)
{
	task_t *t;

	if (nodes_answer(job_ptr)) {
		prolog_running_decr(job_ptr);
		return;
	}
	info("%s: %pJ: its nodes do not answer yet: held until they do",
	     SWL_TYPE, job_ptr);
	t = swl_task_clone(setup);
	t->work.run = release_run;
	t->fail = release_now;
	t->tries = 0;
	t->since = time(NULL);
	t->work.not_before = t->since + 1;
	swl_task_queue(t);
}

void swl_ctld_job_start(void *arg)
{
	job_record_t *job_ptr = arg;
	swl_jobinfo_t *old = swl_jobinfo_of(job_ptr), *ji;
	task_t *t;

	if (!job_ptr->network || !job_ptr->network[0] || !job_ptr->details)
		return; /* the contract: only jobs that asked for --network */
	/* a requeued job's previous run: a teardown Slurm never got to
	 * run (a restart in between) runs now; the record starts afresh */
	if (old && old->state == SWL_TEARDOWN && !old->busy)
		swl_start_teardown(job_ptr, old, true, true);
	if (old && old->state == SWL_READY) /* ended without job_complete */
		swl_start_teardown(job_ptr, old, false, true);
	swl_jobinfo_destroy(job_ptr->switch_jobinfo);
	job_ptr->switch_jobinfo = NULL;

	ji = swl_jobinfo_new();
	ji->state = SWL_SETUP;
	ji->job_id = job_ptr->job_id;
	ji->sluid = job_ptr->step_id.sluid;
	ji->restart_cnt = job_ptr->restart_cnt;
	ji->start_time = job_ptr->start_time;
	ji->busy = true;
	job_ptr->switch_jobinfo = ji;
	hold(job_ptr);

	t = setup_task(job_ptr, ji);
	log_flag(SWITCH, "%s: %sheld while switch.lua sets it up", SWL_TYPE,
		 t->what);
	swl_task_queue(t);
}

static char killed_msg[] = "switch setup failed, job killed";

/* A failed setup: requeue, or cancel what cannot be requeued. */
static void fail_job(job_record_t *job_ptr, const char *reason)
{
	job_record_t *target = job_ptr;
	int rc = SLURM_ERROR;

	if (job_ptr->het_job_id)
		target = find_job_record(job_ptr->het_job_id);
	if (target)
		rc = job_requeue_internal(0, target, false, 0);
	if (target && (rc == SLURM_SUCCESS || rc == ESLURM_JOB_PENDING)) {
		info("%s: %pJ requeued: %s", SWL_TYPE, job_ptr, reason);
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(reason);
		return;
	}
	info("%s: %pJ cancelled (cannot be requeued: %s): %s", SWL_TYPE,
	     job_ptr, target ? slurm_strerror(rc) : "no het job leader",
	     reason);
	srun_user_message(job_ptr, killed_msg);
	/* a het job is cancelled whole, through its leader, as Slurm does
	 * for a failed PrologSlurmctld (prep_slurmctld.c) */
	if (job_ptr->het_job_id) {
		job_record_t *leader = job_ptr->het_job_list ? job_ptr :
				       find_job_record(job_ptr->het_job_id);

		if (leader)
			(void)het_job_signal(leader, SIGKILL, 0, 0, false);
		else
			error("%s: no het job leader found for %pJ",
			      SWL_TYPE, job_ptr);
	} else {
		job_signal(job_ptr, SIGKILL, 0, 0, false);
	}
	job_ptr->state_reason = FAIL_LAUNCH;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = xstrdup(reason);
}

static void setup_done(task_t *t, swl_call_t *c)
{
	bool accepted = c->outcome == SWL_OK && c->rc == SLURM_SUCCESS &&
			c->value.tag == '{';
	bool declined = c->outcome == SWL_OK && c->rc == SLURM_SUCCESS &&
			c->value.tag != '{';
	/* the script cannot say what it left: teardown with nil */
	bool abandoned = c->outcome == SWL_TIMED_OUT ||
			 c->outcome == SWL_EXITED || c->outcome == SWL_UNSAVED;
	const unsigned char *blob = NULL;
	size_t blob_len = 0;
	job_record_t *job_ptr;
	swl_jobinfo_t *ji;
	bool same_record;

	if (accepted) {
		/* the value as it came: one wire value, a table */
		const unsigned char *end = c->run.answer + c->run.answer_len;
		swl_val_t v;

		blob = c->value.s - 1;
		blob_len = (size_t)(swl_get(blob, end, &v) - blob);
	}
	if (accepted)
		verbose("%s: %saccepted", SWL_TYPE, t->what);
	else if (declined)
		verbose("%s: %sdeclined (no jobinfo)", SWL_TYPE, t->what);
	else if (c->outcome == SWL_OK)
		error("%s: %sreturned %d: the setup failed", SWL_TYPE,
		      t->what, c->rc);
	else
		error("%s: %s%s: %s", SWL_TYPE, t->what,
		      swl_outcome_str(c), c->msg);

	lock_slurmctld(swl_job_node_write);
	if (swl_halted()) {
		unlock_slurmctld(swl_job_node_write);
		return;
	}
	job_ptr = swl_same_run(t, &ji, &same_record);
	if (job_ptr && ji->state == SWL_SETUP) {
		bool ended = ji->flags & SWL_F_ENDED;

		ji->busy = false;
		if (accepted) {
			ji->blob = xmalloc(blob_len);
			memcpy(ji->blob, blob, blob_len);
			ji->blob_len = (uint32_t)blob_len;
			ji->state = SWL_READY;
			if (ended) /* Slurm's job_complete came meanwhile */
				swl_start_teardown(job_ptr, ji, true, false);
		} else {
			swl_jobinfo_destroy(ji);
			job_ptr->switch_jobinfo = NULL;
			if (!declined && !ended)
				fail_job(job_ptr, c->outcome == SWL_TIMED_OUT ?
					 "switch setup timed out" :
					 "switch setup failed");
			if (abandoned)
				swl_start_orphan_teardown(t, NULL, 0);
		}
		if ((accepted || declined) && !ended)
			release(job_ptr, t); /* the job is launched */
		else
			prolog_running_decr(job_ptr);
		swl_touched();
	} else {
		/*
		 * Not this run any more (requeued, or the record is gone):
		 * what a late setup made is torn down, nothing else changes.
		 * The hold it raised is still the record's own: lowered.
		 */
		job_record_t *rec = same_record ? find_job_record(t->job_id) :
						  NULL;
		swl_jobinfo_t *mine = swl_jobinfo_of(rec);

		info("%s: %sits job changed while it ran (requeued, or over): "
		     "result dropped", SWL_TYPE, t->what);
		if (mine && mine->seq == t->seq) {
			/* requeued while set up: this run's record goes */
			swl_jobinfo_destroy(mine);
			rec->switch_jobinfo = NULL;
			swl_touched();
		}
		if (rec && rec->details && rec->details->prolog_running)
			prolog_running_decr(rec);
		if (accepted)
			swl_start_orphan_teardown(t, blob, blob_len);
		else if (abandoned)
			swl_start_orphan_teardown(t, NULL, 0);
	}
	unlock_slurmctld(swl_job_node_write);
}

static void setup_run(swl_work_t *w)
{
	task_t *t = (task_t *)w;

	if (!swl_halted()) {
		swl_call_t c;

		swl_call("job_start", t->what, &t->table, NULL, 0, &c);
		if (!swl_halted())
			setup_done(t, &c);
		swl_call_free(&c);
	}
	swl_task_free(t);
}

void swl_setup_again(job_record_t *job_ptr, swl_jobinfo_t *ji)
{
	ji->busy = true;
	hold(job_ptr);
	swl_task_queue(setup_task(job_ptr, ji));
}

/* ---- load ------------------------------------------------------------------- */

int swl_ctld_init(void)
{
	if (!find_job_record || !lock_slurmctld || !unlock_slurmctld ||
	    !job_requeue_internal || !job_signal || !het_job_signal ||
	    !prolog_running_decr ||
	    !drain_nodes || !srun_user_message || !schedule_job_save ||
	    !slurm_job_state_set_flag || !&job_list) {
		error("%s: slurmctld does not export what this plugin needs "
		      "(built against another Slurm?)", SWL_TYPE);
		return SLURM_ERROR;
	}
	ctld_started = time(NULL);
	swl_pool_init(swl_conf.workers);
	return SLURM_SUCCESS;
}

void swl_ctld_fini(void)
{
	/* workers still running apply nothing after this; idle ones end,
	 * and the tasks still queued are not run */
	swl_pool_fini();
}

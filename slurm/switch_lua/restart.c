/*
 * restart.c - switch/lua in slurmctld after a restart (ctld.h).
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/job_record.h"
#include "src/common/list.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "swl.h"
#include "ctld.h"

/*
 * Slurm forgets a held job's prolog_running on restart and re-runs only
 * PrologSlurmctld (read_config.c _sync_nodes_to_jobs); a COMPLETING
 * job's teardown it runs again itself (deallocate_nodes, so
 * swl_ctld_job_complete above).  What is left: setups that were running
 * (held and run again, as the contract asks), teardowns of jobs no
 * longer COMPLETING, and jobs that ended with their jobinfo still
 * READY (the state was saved between their end and job_complete).
 */
static int restart_one(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	swl_jobinfo_t *ji = swl_jobinfo_of(job_ptr);
	task_t *t;

	if (!ji || ji->busy)
		return 0;
	switch (ji->state) {
	case SWL_SETUP:
		if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr) &&
		    !(ji->flags & SWL_F_ENDED) && job_ptr->details &&
		    ji->restart_cnt == job_ptr->restart_cnt &&
		    ji->sluid == job_ptr->step_id.sluid) {
			info("%s: %pJ: its setup was running when slurmctld "
			     "stopped: held, job_start runs again", SWL_TYPE,
			     job_ptr);
			swl_setup_again(job_ptr, ji);
		} else {
			/* over before its setup reported: torn down blind */
			info("%s: %pJ: its setup was running when slurmctld "
			     "stopped and the job is over: job_complete with "
			     "no jobinfo", SWL_TYPE, job_ptr);
			t = swl_task_new(job_ptr, true);
			swl_jobinfo_destroy(ji);
			job_ptr->switch_jobinfo = NULL;
			swl_start_orphan_teardown(t, NULL, 0);
			swl_task_free(t);
		}
		swl_touched();
		return 0;
	case SWL_TEARDOWN:
		info("%s: %pJ: its teardown was running when slurmctld stopped: "
		     "job_complete runs again", SWL_TYPE, job_ptr);
		swl_start_teardown(job_ptr, ji, true, false);
		return 0;
	case SWL_READY:
		if (IS_JOB_FINISHED(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
			swl_start_teardown(job_ptr, ji, true, false);
		return 0;
	}
	return 0;
}

static void *restart_thread(void *arg)
{
	/* switch_p_restore runs before the job state is read, holding the
	 * write locks until it is: this waits for that */
	lock_slurmctld(swl_job_node_write);
	if (!swl_halted() && job_list)
		list_for_each(job_list, restart_one, NULL);
	unlock_slurmctld(swl_job_node_write);
	return NULL;
}

void swl_ctld_restore(void)
{
	if (!swl_detached(restart_thread, "swl_restart", NULL))
		error("%s: cannot start the restart thread: %m", SWL_TYPE);
}


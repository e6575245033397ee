/*
 * task.c - the task a job's hook hands to slurmctld's workers (ctld.h):
 * the job as switch.lua sees it, copied under Slurm's locks; and
 * finding the job again when the task's helper is done.
 */
#include "src/common/slurm_xlator.h"

#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/job_record.h"
#include "src/common/read_config.h"
#include "src/common/sluid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "swl.h"
#include "ctld.h"

const slurmctld_lock_t swl_job_node_write = {
	.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
	.fed = READ_LOCK,
};

void swl_task_free(task_t *t)
{
	swl_out_free(&t->table);
	xfree(t->nodes);
	xfree(t->blob);
	xfree(t);
}

void swl_task_set_blob(task_t *t, const unsigned char *blob, size_t len)
{
	xfree(t->blob);
	t->blob_len = 0;
	if (!len)
		return;
	t->blob = xmalloc(len);
	memcpy(t->blob, blob, len);
	t->blob_len = (uint32_t)len;
}

/* A copy of a task that owns its own table, nodes and blob. */
task_t *swl_task_clone(const task_t *src)
{
	task_t *t = xmalloc(sizeof(*t));

	*t = *src;
	t->work.next = NULL;
	swl_out_init(&t->table);
	swl_put_raw(&t->table, src->table.data, src->table.len);
	t->nodes = xstrdup(src->nodes);
	t->blob = NULL;
	swl_task_set_blob(t, src->blob, src->blob_len);
	return t;
}

void swl_touched(void)
{
	if (&last_job_update)
		last_job_update = time(NULL);
	schedule_job_save();
}

/* The job table of the contract: job_id, user, nodes, partition, ... */
task_t *swl_task_new(job_record_t *job_ptr, bool start)
{
	task_t *t = xmalloc(sizeof(*t));
	char sluid[64];

	t->start = start;
	t->job_id = job_ptr->job_id;
	t->job = job_ptr;
	t->sluid = job_ptr->step_id.sluid;
	t->restart_cnt = job_ptr->restart_cnt;
	t->start_time = job_ptr->start_time;
	t->nodes = xstrdup(job_ptr->nodes);
	snprintf(t->what, sizeof(t->what), "JobId=%u %s: ", job_ptr->job_id,
		 start ? "job_start" : "job_complete");
	print_sluid(job_ptr->step_id.sluid, sluid, sizeof(sluid));

	swl_out_init(&t->table);
	swl_open(&t->table);
	swl_kv_int(&t->table, "job_id", job_ptr->job_id);
	swl_kv_str(&t->table, "sluid", sluid);
	swl_kv_int(&t->table, "restart_cnt", job_ptr->restart_cnt);
	swl_kv_int(&t->table, "user_id", job_ptr->user_id);
	swl_kv_int(&t->table, "group_id", job_ptr->group_id);
	swl_kv_str(&t->table, "user_name", job_ptr->user_name);
	swl_kv_str(&t->table, "account", job_ptr->account);
	swl_kv_str(&t->table, "partition", job_ptr->partition);
	swl_kv_str(&t->table, "nodes", job_ptr->nodes);
	swl_kv_int(&t->table, "num_nodes", job_ptr->node_cnt);
	swl_kv_str(&t->table, "network", job_ptr->network);
	swl_kv_str(&t->table, "cluster", slurm_conf.cluster_name);
	swl_kv_bool(&t->table, "batch", job_ptr->batch_flag != 0);
	if (job_ptr->het_job_id)
		swl_kv_int(&t->table, "het_job_id", job_ptr->het_job_id);
	swl_close(&t->table);
	return t;
}

bool swl_task_queue(task_t *t)
{
	if (swl_pool_add(&t->work))
		return true;
	/* no worker at all: the task fails now, as a helper that could
	 * not run would (a setup: the hold lowered and the job requeued
	 * with the reason; a teardown: logged, drained) */
	error("%s: %scannot start a worker thread: %m", SWL_TYPE, t->what);
	if (t->fail)
		t->fail(t);
	swl_task_free(t);
	return false;
}

swl_jobinfo_t *swl_jobinfo_of(job_record_t *job_ptr)
{
	swl_jobinfo_t *ji = job_ptr ? job_ptr->switch_jobinfo : NULL;

	return ji && ji->magic == SWL_MAGIC ? ji : NULL;
}

job_record_t *swl_same_run(const task_t *t, swl_jobinfo_t **jip,
			   bool *same_record)
{
	job_record_t *job_ptr = find_job_record(t->job_id);
	swl_jobinfo_t *ji;

	*jip = NULL;
	*same_record = job_ptr && (const void *)job_ptr == t->job;
	if (!*same_record)
		return NULL;
	ji = swl_jobinfo_of(job_ptr);
	/* (not start_time: a node power-up moves it within one run) */
	if (!ji || ji->seq != t->seq || job_ptr->step_id.sluid != t->sluid ||
	    job_ptr->restart_cnt != t->restart_cnt)
		return NULL;
	*jip = ji;
	return job_ptr;
}

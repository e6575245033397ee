/*
 * ctld.h - what slurmctld's parts of the switch/lua plugin share (ctld.c,
 * teardown.c, restart.c, task.c): the task a hook hands to the pool, and
 * finding its job again.
 *
 * Slurm calls switch_p_job_start and switch_p_job_complete inside
 * select_nodes and deallocate_nodes, under its job and node write locks
 * (../shared/reference/switch-plugin-slurm.md).  Both only copy what the
 * hook needs (a task), mark the job, queue the task and return.  A
 * worker (pool.c) runs the helper, then takes the locks, finds the job
 * again by id and applies the result only when the job record, its run
 * (sluid and restart count) and its jobinfo (a sequence number unique in
 * this slurmctld) are still the ones it was started for.
 *
 * slurmctld-only symbols are weak: srun and slurmd load this plugin too.
 * Must be included after Slurm's headers and swl.h.
 */
#ifndef SWL_CTLD_H
#define SWL_CTLD_H

#include "pool.h"

#pragma weak find_job_record
#pragma weak lock_slurmctld
#pragma weak unlock_slurmctld
#pragma weak job_requeue_internal
#pragma weak job_signal
#pragma weak het_job_signal
#pragma weak prolog_running_decr
#pragma weak drain_nodes
#pragma weak srun_user_message
#pragma weak schedule_job_save
#pragma weak slurm_job_state_set_flag
#pragma weak job_list
#pragma weak last_job_update

/* What a worker needs: copied under the locks, used without them. */
typedef struct task {
	swl_work_t work;       /* first: the pool's */
	void (*fail)(struct task *t); /* it cannot be queued */
	bool start;            /* job_start, else job_complete */
	uint32_t job_id;
	const void *job;       /* the record, compared, never followed */
	uint64_t seq;          /* of the jobinfo it works for; 0: none */
	uint64_t sluid;
	uint16_t restart_cnt;
	time_t start_time;
	swl_out_t table;       /* the job as switch.lua sees it */
	char *nodes;           /* the nodes to drain on a failed teardown */
	unsigned char *blob;   /* job_complete's jobinfo; NULL: nil */
	uint32_t blob_len;
	time_t since;          /* a release: waited for since then */
	bool eagain_ok;        /* EAGAIN means "again", not a failure */
	unsigned tries;        /* teardowns answered EAGAIN or not run, when
				  the job record cannot keep the count;
				  a release: checks so far */
	char what[64];         /* "JobId=N job_start: " for the log */
} task_t;

extern const slurmctld_lock_t swl_job_node_write;

/* task.c */
task_t *swl_task_new(job_record_t *job_ptr, bool start);
task_t *swl_task_clone(const task_t *src);
void swl_task_free(task_t *t);
/* The task's job_complete jobinfo: a copy of blob (none when len is 0). */
void swl_task_set_blob(task_t *t, const unsigned char *blob, size_t len);
/* Queue t to run at t->work.not_before; t->fail(t) and freed if it
 * cannot be queued.  false then. */
bool swl_task_queue(task_t *t);
/* The record's jobinfo, or NULL. */
swl_jobinfo_t *swl_jobinfo_of(job_record_t *job_ptr);
/* The job again, by id: NULL unless the same record, run and jobinfo.
 * Under the job lock. */
job_record_t *swl_same_run(const task_t *t, swl_jobinfo_t **jip,
			   bool *same_record);
/* The job records changed: saved soon. */
void swl_touched(void);

/* ctld.c: hold the job and run job_start again (a restart) */
void swl_setup_again(job_record_t *job_ptr, swl_jobinfo_t *ji);

/* teardown.c */
void swl_start_teardown(job_record_t *job_ptr, swl_jobinfo_t *ji,
			bool eagain_ok, bool previous);
void swl_start_orphan_teardown(const task_t *setup,
			       const unsigned char *blob, size_t blob_len);

#endif

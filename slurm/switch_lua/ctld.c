/*
 * ctld.c - switch/lua in slurmctld: job_start and job_complete without
 * ever blocking the scheduler.
 *
 * Slurm calls switch_p_job_start and switch_p_job_complete inside
 * select_nodes and deallocate_nodes, under its job and node write locks
 * (../shared/reference/switch-plugin-slurm.md).  Both only copy what the
 * hook needs (a "task"), mark the job, queue the task and return.  A
 * fixed pool of workers (at most MAX_HELPERS threads, started as the
 * queue needs them and kept) runs the tasks: the helper, then the locks,
 * finds the
 * job again by id and applies the result only when the job record, its
 * run (sluid and restart count) and its jobinfo (a sequence
 * number unique in this slurmctld) are still the ones it was started
 * for.
 *
 * While job_start runs the job is held the way PrologSlurmctld holds
 * it: details->prolog_running is raised and JOB_CONFIGURING set, so no
 * step can be created and the batch script waits; the thread lowers
 * prolog_running exactly once (prolog_running_decr, which launches the
 * job when nothing else holds it).  A failed setup requeues the job, or
 * cancels it when it cannot be requeued, once: the jobinfo is gone
 * before the requeue, so Slurm's own job_complete call finds nothing.
 *
 * slurmctld-only symbols are weak: srun and slurmd load this plugin too.
 */
#include "src/common/slurm_xlator.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/job_record.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/sluid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/switch.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"
#include "src/stepmgr/srun_comm.h"

#include "ops.h"
#include "swl.h"

/* Only slurmctld has these; elsewhere they are NULL and unused. */
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
#pragma weak slurmctld_config
#pragma weak slurmctld_primary
#pragma weak last_job_update

#define MAX_HELPERS 64  /* workers, so helpers at once; more tasks queue */

static volatile sig_atomic_t stopping;

/*
 * Work that must stop: the plugin is being unloaded, or this slurmctld is
 * a backup handing control back to the primary (it goes on running, in
 * standby: what its workers would apply belongs to the primary now).
 */
static bool halted(void)
{
	return stopping ||
	       (&slurmctld_config && &slurmctld_primary &&
		slurmctld_config.resume_backup && !slurmctld_primary);
}
static time_t ctld_started;   /* when this slurmctld loaded the plugin */

/* What a thread needs: copied under the locks, used without them. */
typedef struct {
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
	bool release;          /* a hold to lower once the nodes answer, */
	time_t since;          /* waited for since then */
	bool eagain_ok;        /* EAGAIN means "again", not a failure */
	unsigned tries;        /* teardowns answered EAGAIN or not run, when
				  the job record cannot keep the count */
	time_t not_before;     /* a retry waits in the queue until then */
	char what[64];         /* "JobId=N job_start: " for the log */
	void *next;            /* the queue's */
} task_t;

static const slurmctld_lock_t job_node_write = {
	.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
	.fed = READ_LOCK,
};

static void task_free(task_t *t)
{
	swl_out_free(&t->table);
	xfree(t->nodes);
	xfree(t->blob);
	xfree(t);
}

/* The task's job_complete jobinfo: a copy of blob (none when len is 0). */
static void task_set_blob(task_t *t, const unsigned char *blob, size_t len)
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
static task_t *task_clone(const task_t *src)
{
	task_t *t = xmalloc(sizeof(*t));

	*t = *src;
	swl_out_init(&t->table);
	swl_put_raw(&t->table, src->table.data, src->table.len);
	t->nodes = xstrdup(src->nodes);
	t->blob = NULL;
	task_set_blob(t, src->blob, src->blob_len);
	return t;
}

static void touched(void)
{
	if (&last_job_update)
		last_job_update = time(NULL);
	schedule_job_save();
}

/* The job table of the contract: job_id, user, nodes, partition, ... */
static task_t *task_new(job_record_t *job_ptr, bool start)
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

static swl_jobinfo_t *jobinfo_of(job_record_t *job_ptr)
{
	swl_jobinfo_t *ji = job_ptr ? job_ptr->switch_jobinfo : NULL;

	return ji && ji->magic == SWL_MAGIC ? ji : NULL;
}

/* The job again, by id: NULL unless the same record, run and jobinfo. */
static job_record_t *same_run(const task_t *t, swl_jobinfo_t **jip,
			      bool *same_record)
{
	job_record_t *job_ptr = find_job_record(t->job_id);
	swl_jobinfo_t *ji;

	*jip = NULL;
	*same_record = job_ptr && (const void *)job_ptr == t->job;
	if (!*same_record)
		return NULL;
	ji = jobinfo_of(job_ptr);
	/* (not start_time: a node power-up moves it within one run) */
	if (!ji || ji->seq != t->seq || job_ptr->step_id.sluid != t->sluid ||
	    job_ptr->restart_cnt != t->restart_cnt)
		return NULL;
	*jip = ji;
	return job_ptr;
}

/* ---- threads -------------------------------------------------------------- */

static int detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t tid;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the helper does the work: a small stack is plenty */
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	rc = pthread_create(&tid, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc;
}

/*
 * The queue and its workers.  A task waits in the queue, not in a thread
 * of its own: a burst of thousands of --network jobs is thousands of
 * small queued tasks and at most MAX_HELPERS threads.  A teardown retry
 * (EAGAIN) goes back in the queue with the time it may run again, so a
 * retry never holds a worker while it waits.
 */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static task_t *q_head, *q_tail;
static unsigned q_workers, q_idle;

static void *worker(void *arg);

/* Queue t, and start a worker if none is idle and the pool has room.
 * false: no worker exists and none could be started (t not queued). */
static bool enqueue(task_t *t)
{
	bool ok = true;

	slurm_mutex_lock(&q_lock);
	t->next = NULL;
	if (q_tail)
		q_tail->next = t;
	else
		q_head = t;
	q_tail = t;
	if (!q_idle && q_workers < MAX_HELPERS) {
		if (!detached(worker, NULL)) {
			q_workers++;
		} else if (!q_workers) {
			/* nothing would ever run it: take it back */
			task_t *prev = NULL, *x;

			for (x = q_head; x != t; x = x->next)
				prev = x;
			if (prev)
				prev->next = NULL;
			else
				q_head = NULL;
			q_tail = prev;
			ok = false;
		}
	}
	slurm_cond_signal(&q_cond);
	slurm_mutex_unlock(&q_lock);
	return ok;
}

/* The first task that may run now, out of the queue; or NULL and, in
 * *wake, when the earliest waiting retry may run (0: none waits). */
static task_t *dequeue(time_t now, time_t *wake)
{
	task_t *prev = NULL, *t;

	*wake = 0;
	for (t = q_head; t; prev = t, t = t->next) {
		if (t->not_before > now) {
			if (!*wake || t->not_before < *wake)
				*wake = t->not_before;
			continue;
		}
		if (prev)
			prev->next = t->next;
		else
			q_head = t->next;
		if (q_tail == t)
			q_tail = prev;
		t->next = NULL;
		return t;
	}
	return NULL;
}

static void run_task(task_t *t);

static void *worker(void *arg)
{
	(void)arg;
	slurm_mutex_lock(&q_lock);
	while (!halted()) {
		time_t wake;
		task_t *t = dequeue(time(NULL), &wake);

		if (!t) {
			q_idle++;
			if (wake) {
				struct timespec ts = { .tv_sec = wake };

				slurm_cond_timedwait(&q_cond, &q_lock, &ts);
			} else {
				slurm_cond_wait(&q_cond, &q_lock);
			}
			q_idle--;
			continue;
		}
		slurm_mutex_unlock(&q_lock);
		run_task(t);
		slurm_mutex_lock(&q_lock);
	}
	q_workers--;
	slurm_mutex_unlock(&q_lock);
	return NULL;
}

static void setup_done(task_t *t, swl_call_t *c);
static void teardown_done(task_t *t, bool failed, const char *why);

static void spawn(task_t *t)
{
	if (!enqueue(t)) {
		/* no worker at all: the task fails now, as a helper that
		 * could not run would (a setup: the hold lowered and the job
		 * requeued with the reason; a teardown: logged, drained) */
		swl_call_t c;

		memset(&c, 0, sizeof(c));
		c.outcome = SWL_NOT_RUN;
		snprintf(c.msg, sizeof(c.msg), "no worker thread");
		error("%s: %scannot start a worker thread: %m", plugin_type,
		      t->what);
		if (t->start)
			setup_done(t, &c);
		else
			teardown_done(t, true, "cannot start a worker thread");
		task_free(t);
	}
}

/* ---- job_start ------------------------------------------------------------ */

/*
 * A teardown task from what the job record holds now, or, `previous`,
 * of a requeued job's previous run, started from the new run's
 * job_start: the job record already holds the new run, so the task
 * carries the previous run's ids from its jobinfo, and no nodes (the
 * record's are the new run's: a failure is logged, nothing drained).
 */
static void start_teardown_of(job_record_t *job_ptr, swl_jobinfo_t *ji,
			      bool eagain_ok, bool previous)
{
	task_t *t = task_new(job_ptr, false);

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
	task_set_blob(t, ji->blob, ji->blob_len);
	t->eagain_ok = eagain_ok || swl_block_job_complete();
	ji->state = SWL_TEARDOWN;
	ji->busy = true;
	touched();
	spawn(t);
}

static void start_teardown(job_record_t *job_ptr, swl_jobinfo_t *ji,
			   bool eagain_ok)
{
	start_teardown_of(job_ptr, ji, eagain_ok, false);
}

/*
 * A teardown for a setup that did not report (timed out, exited, or
 * its result came for a run that is over): job_complete with a nil
 * jobinfo, or with the jobinfo a late setup returned.  The job record
 * keeps nothing of it.
 */
static void start_orphan_teardown(const task_t *setup,
				  const unsigned char *blob, size_t blob_len)
{
	task_t *t = task_clone(setup);

	t->start = false;
	t->seq = 0;
	t->job = NULL;
	task_set_blob(t, blob, blob_len);
	t->eagain_ok = swl_block_job_complete();
	snprintf(t->what, sizeof(t->what), "JobId=%u job_complete: ",
		 setup->job_id);
	spawn(t);
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
 * setup run again right after a restart would meet.  A queued task
 * (run_task), looked at after 1, 2, 4, then every 8 seconds: no thread
 * of its own, and the job and node locks a few times a minute, not
 * every second.
 */
static bool release_check(task_t *t)
{
	job_record_t *job_ptr;
	time_t now = time(NULL);
	unsigned step;

	lock_slurmctld(job_node_write);
	if (halted()) {
		unlock_slurmctld(job_node_write);
		return false;
	}
	job_ptr = find_job_record(t->job_id);
	if (!job_ptr || (const void *)job_ptr != t->job) {
		unlock_slurmctld(job_node_write);
		return false;
	}
	if (nodes_answer(job_ptr) || now - t->since >= RELEASE_WAIT_S ||
	    !IS_JOB_RUNNING(job_ptr)) {
		debug("%s: %sthe job's nodes answer: released", plugin_type,
		      t->what);
		prolog_running_decr(job_ptr);
		unlock_slurmctld(job_node_write);
		return false;
	}
	unlock_slurmctld(job_node_write);
	step = t->tries < 3 ? 1U << t->tries : 8;
	t->tries++;
	t->not_before = now + (time_t)step;
	return enqueue(t);
}

/* prolog_running_decr now, or once the nodes answer */
static void release(job_record_t *job_ptr, const task_t *setup)
{
	task_t *t;

	if (nodes_answer(job_ptr)) {
		prolog_running_decr(job_ptr);
		return;
	}
	info("%s: %pJ: its nodes do not answer yet: held until they do",
	     plugin_type, job_ptr);
	t = task_clone(setup);
	t->release = true;
	t->tries = 0;
	t->since = time(NULL);
	t->not_before = t->since + 1;
	if (!enqueue(t)) {
		task_free(t);
		prolog_running_decr(job_ptr);
	}
}

void swl_ctld_job_start(void *arg)
{
	job_record_t *job_ptr = arg;
	swl_jobinfo_t *old = jobinfo_of(job_ptr), *ji;
	task_t *t;

	if (!job_ptr->network || !job_ptr->network[0] || !job_ptr->details)
		return; /* the contract: only jobs that asked for --network */
	/* a requeued job's previous run: a teardown Slurm never got to
	 * run (a restart in between) runs now; the record starts afresh */
	if (old && old->state == SWL_TEARDOWN && !old->busy)
		start_teardown_of(job_ptr, old, true, true);
	if (old && old->state == SWL_READY) /* ended without job_complete */
		start_teardown_of(job_ptr, old, false, true);
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

	t = task_new(job_ptr, true);
	t->seq = ji->seq;
	debug("%s: %sheld while switch.lua sets it up", plugin_type, t->what);
	spawn(t);
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
		info("%s: %pJ requeued: %s", plugin_type, job_ptr, reason);
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(reason);
		return;
	}
	info("%s: %pJ cancelled (cannot be requeued: %s): %s", plugin_type,
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
			      plugin_type, job_ptr);
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
		verbose("%s: %saccepted", plugin_type, t->what);
	else if (declined)
		verbose("%s: %sdeclined (no jobinfo)", plugin_type, t->what);
	else if (c->outcome == SWL_OK)
		error("%s: %sreturned %d: the setup failed", plugin_type,
		      t->what, c->rc);
	else
		error("%s: %s%s: %s", plugin_type, t->what,
		      swl_outcome_str(c), c->msg);

	lock_slurmctld(job_node_write);
	if (halted()) {
		unlock_slurmctld(job_node_write);
		return;
	}
	job_ptr = same_run(t, &ji, &same_record);
	if (job_ptr && ji->state == SWL_SETUP) {
		bool ended = ji->flags & SWL_F_ENDED;

		ji->busy = false;
		if (accepted) {
			ji->blob = xmalloc(blob_len);
			memcpy(ji->blob, blob, blob_len);
			ji->blob_len = (uint32_t)blob_len;
			ji->state = SWL_READY;
			if (ended) /* Slurm's job_complete came meanwhile */
				start_teardown(job_ptr, ji, true);
		} else {
			swl_jobinfo_destroy(ji);
			job_ptr->switch_jobinfo = NULL;
			if (!declined && !ended)
				fail_job(job_ptr, c->outcome == SWL_TIMED_OUT ?
					 "switch setup timed out" :
					 "switch setup failed");
			if (abandoned)
				start_orphan_teardown(t, NULL, 0);
		}
		if ((accepted || declined) && !ended)
			release(job_ptr, t); /* the job is launched */
		else
			prolog_running_decr(job_ptr);
		touched();
	} else {
		/*
		 * Not this run any more (requeued, or the record is gone):
		 * what a late setup made is torn down, nothing else changes.
		 * The hold it raised is still the record's own: lowered.
		 */
		job_record_t *rec = same_record ? find_job_record(t->job_id) :
						  NULL;
		swl_jobinfo_t *mine = jobinfo_of(rec);

		info("%s: %sits job changed while it ran (requeued, or over): "
		     "result dropped", plugin_type, t->what);
		if (mine && mine->seq == t->seq) {
			/* requeued while set up: this run's record goes */
			swl_jobinfo_destroy(mine);
			rec->switch_jobinfo = NULL;
			touched();
		}
		if (rec && rec->details && rec->details->prolog_running)
			prolog_running_decr(rec);
		if (accepted)
			start_orphan_teardown(t, blob, blob_len);
		else if (abandoned)
			start_orphan_teardown(t, NULL, 0);
	}
	unlock_slurmctld(job_node_write);
}

/* ---- job_complete --------------------------------------------------------- */

void swl_ctld_job_complete(void *arg)
{
	job_record_t *job_ptr = arg;
	swl_jobinfo_t *ji = jobinfo_of(job_ptr);

	if (!ji)
		return; /* declined, failed, or never set up */
	switch (ji->state) {
	case SWL_SETUP:
		/* the setup thread tears down what it made, when it ends */
		ji->flags |= SWL_F_ENDED;
		touched();
		return;
	case SWL_READY:
		start_teardown(job_ptr, ji, false);
		return;
	case SWL_TEARDOWN:
		/* after a restart Slurm runs a COMPLETING job's teardown
		 * again: so do we, with the same jobinfo */
		if (!ji->busy)
			start_teardown(job_ptr, ji, true);
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
		      "not known)", plugin_type, t->what, why);
		return;
	}
	if (!swl_conf.drain_on_failure) {
		error("%s: %s%s: nodes %s not drained "
		      "(switch_drain_on_failure=no)", plugin_type, t->what, why,
		      t->nodes);
		return;
	}
	snprintf(reason, sizeof(reason), "switch/lua: JobId=%u teardown "
		 "failed: %s", t->job_id, why);
	error("%s: %sdraining %s: %s", plugin_type, t->what, t->nodes, why);
	drain_nodes(t->nodes, reason, slurm_conf.slurm_user_id);
}

static void teardown_done(task_t *t, bool failed, const char *why)
{
	job_record_t *job_ptr;
	swl_jobinfo_t *ji;
	bool same_record;

	lock_slurmctld(job_node_write);
	if (halted()) {
		unlock_slurmctld(job_node_write);
		return;
	}
	if (failed)
		drain(t, why);
	job_ptr = t->seq ? same_run(t, &ji, &same_record) : NULL;
	if (job_ptr && ji->state == SWL_TEARDOWN) {
		ji->state = SWL_DONE;
		ji->busy = false;
		ji->retries = 0;
		xfree(ji->blob);
		ji->blob_len = 0;
		touched();
	}
	unlock_slurmctld(job_node_write);
}

/* Count an EAGAIN on the job record, so a restart keeps the count. */
static unsigned count_retry(const task_t *t)
{
	job_record_t *job_ptr;
	swl_jobinfo_t *ji;
	bool same_record;
	unsigned n = 0;

	lock_slurmctld(job_node_write);
	if ((job_ptr = t->seq ? same_run(t, &ji, &same_record) : NULL)) {
		n = ++ji->retries;
		touched();
	}
	unlock_slurmctld(job_node_write);
	return n;
}

/* One job_complete call; true when t went back in the queue to be
 * called again (EAGAIN, or a helper that could not run). */
static bool teardown(task_t *t)
{
	swl_call_t c;
	char why[192] = "";
	bool failed = true, not_run;

	swl_call("job_complete", t->what, &t->table, t->blob ? t->blob :
		 (const unsigned char *)"n", t->blob ? t->blob_len : 1, &c);
	if (halted()) {
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

		if (!n)
			n = ++t->tries;
		if (not_run)
			snprintf(why, sizeof(why), "%s: %.120s",
				 swl_outcome_str(&c), c.msg);
		else
			snprintf(why, sizeof(why), "EAGAIN more than "
				 "switch_retries=%u times", swl_conf.retries);
		if (n <= swl_conf.retries) {
			verbose("%s: %s%s (%u of %u): again in %us",
				plugin_type, t->what,
				not_run ? "not run" : "EAGAIN", n,
				swl_conf.retries, swl_conf.retry_interval_s);
			t->not_before = time(NULL) +
					(time_t)swl_conf.retry_interval_s;
			if (enqueue(t)) {
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
			info("%s: %sreturned %d (logged only)", plugin_type,
			     t->what, c.rc);
		else
			verbose("%s: %storn down", plugin_type, t->what);
		failed = false;
	} else {
		snprintf(why, sizeof(why), "%s: %.120s", swl_outcome_str(&c),
			 c.msg);
	}
	swl_call_free(&c);
	teardown_done(t, failed, why);
	return false;
}

static bool release_check(task_t *t);

static void run_task(task_t *t)
{
	if (!halted()) {
		if (t->release) {
			if (release_check(t))
				return; /* queued again */
		} else if (t->start) {
			swl_call_t c;

			swl_call("job_start", t->what, &t->table, NULL, 0, &c);
			if (!halted())
				setup_done(t, &c);
			swl_call_free(&c);
		} else if (teardown(t)) {
			return; /* queued again: not ours to free */
		}
	}
	task_free(t);
}

/* ---- after a restart ------------------------------------------------------ */

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
	swl_jobinfo_t *ji = jobinfo_of(job_ptr);
	task_t *t;

	if (!ji || ji->busy)
		return 0;
	switch (ji->state) {
	case SWL_SETUP:
		t = task_new(job_ptr, true);
		if (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr) &&
		    !(ji->flags & SWL_F_ENDED) && job_ptr->details &&
		    ji->restart_cnt == job_ptr->restart_cnt &&
		    ji->sluid == job_ptr->step_id.sluid) {
			info("%s: %pJ: its setup was running when slurmctld "
			     "stopped: held, job_start runs again", plugin_type,
			     job_ptr);
			ji->busy = true;
			hold(job_ptr);
			t->seq = ji->seq;
			spawn(t);
		} else {
			/* over before its setup reported: torn down blind */
			info("%s: %pJ: its setup was running when slurmctld "
			     "stopped and the job is over: job_complete with "
			     "no jobinfo", plugin_type, job_ptr);
			swl_jobinfo_destroy(ji);
			job_ptr->switch_jobinfo = NULL;
			start_orphan_teardown(t, NULL, 0);
			task_free(t);
		}
		touched();
		return 0;
	case SWL_TEARDOWN:
		info("%s: %pJ: its teardown was running when slurmctld stopped: "
		     "job_complete runs again", plugin_type, job_ptr);
		start_teardown(job_ptr, ji, true);
		return 0;
	case SWL_READY:
		if (IS_JOB_FINISHED(job_ptr) && !IS_JOB_COMPLETING(job_ptr))
			start_teardown(job_ptr, ji, true);
		return 0;
	}
	return 0;
}

static void *restart_thread(void *arg)
{
	/* switch_p_restore runs before the job state is read, holding the
	 * write locks until it is: this waits for that */
	lock_slurmctld(job_node_write);
	if (!halted() && job_list)
		list_for_each(job_list, restart_one, NULL);
	unlock_slurmctld(job_node_write);
	return NULL;
}

void swl_ctld_restore(void)
{
	if (detached(restart_thread, NULL))
		error("%s: cannot start the restart thread: %m", plugin_type);
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
		      "(built against another Slurm?)", plugin_type);
		return SLURM_ERROR;
	}
	stopping = 0;
	ctld_started = time(NULL);
	return SLURM_SUCCESS;
}

void swl_ctld_fini(void)
{
	/* threads still running apply nothing after this; idle workers
	 * end, and the tasks still queued are not run */
	slurm_mutex_lock(&q_lock);
	stopping = 1;
	slurm_cond_broadcast(&q_cond);
	slurm_mutex_unlock(&q_lock);
}

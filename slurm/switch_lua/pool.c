/* pool.c - see pool.h */
#include "src/common/slurm_xlator.h"

#include <pthread.h>
#include <signal.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/read_config.h"
#include "src/common/threadpool.h"
#include "src/slurmctld/slurmctld.h"

#include "pool.h"

/* Only slurmctld has these; elsewhere they are NULL and unused. */
#pragma weak slurmctld_config
#pragma weak slurmctld_primary

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static swl_work_t *q_head, *q_tail;
static unsigned q_workers, q_idle, q_max = 1;
static volatile sig_atomic_t stopping;

bool swl_halted(void)
{
	return stopping ||
	       (&slurmctld_config &&
		(slurmctld_config.shutdown_time ||
		 (&slurmctld_primary && slurmctld_config.resume_backup &&
		  !slurmctld_primary)));
}

bool swl_detached(void *(*fn)(void *), const char *name, void *arg)
{
	/* (not slurm_thread_create_detached: it is fatal when no thread
	 * can be had, and a guest must never take slurmctld down) */
	return threadpool_create(fn, name, arg, true, name, NULL,
				 __func__) == SLURM_SUCCESS;
}

/* The first item that may run now, out of the queue; or NULL and, in
 * *wake, when the earliest waiting one may run (0: none waits). */
static swl_work_t *take(time_t now, time_t *wake)
{
	swl_work_t *prev = NULL, *w;

	*wake = 0;
	for (w = q_head; w; prev = w, w = w->next) {
		if (w->not_before > now) {
			if (!*wake || w->not_before < *wake)
				*wake = w->not_before;
			continue;
		}
		if (prev)
			prev->next = w->next;
		else
			q_head = w->next;
		if (q_tail == w)
			q_tail = prev;
		w->next = NULL;
		return w;
	}
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	slurm_mutex_lock(&q_lock);
	while (!swl_halted()) {
		time_t wake;
		swl_work_t *w = take(time(NULL), &wake);

		if (!w) {
			q_idle++;
			if (wake) {
				struct timespec ts = { .tv_sec = wake };

				slurm_cond_timedwait(&q_cond, &q_lock, &ts);
			} else {
				/* woken by new work or swl_pool_fini; a
				 * shutdown is seen within a minute */
				struct timespec ts = {
					.tv_sec = time(NULL) + 60 };

				slurm_cond_timedwait(&q_cond, &q_lock, &ts);
			}
			q_idle--;
			continue;
		}
		slurm_mutex_unlock(&q_lock);
		w->run(w);
		slurm_mutex_lock(&q_lock);
	}
	q_workers--;
	slurm_mutex_unlock(&q_lock);
	return NULL;
}

bool swl_pool_add(swl_work_t *w)
{
	bool ok = true;

	slurm_mutex_lock(&q_lock);
	w->next = NULL;
	if (q_tail)
		q_tail->next = w;
	else
		q_head = w;
	q_tail = w;
	if (!q_idle && q_workers < q_max) {
		if (swl_detached(worker, "swl_worker", NULL)) {
			q_workers++;
			log_flag(SWITCH, "switch/lua: worker %u of at most %u "
				 "started", q_workers, q_max);
		} else if (!q_workers) {
			/* nothing would ever run it: take it back */
			swl_work_t *prev = NULL, *x;

			for (x = q_head; x != w; x = x->next)
				prev = x;
			if (prev)
				prev->next = NULL;
			else
				q_head = NULL;
			q_tail = prev;
			ok = false;
		} else {
			error("switch/lua: cannot start another worker "
			      "thread (%u run): queued for them", q_workers);
		}
	}
	slurm_cond_signal(&q_cond);
	slurm_mutex_unlock(&q_lock);
	return ok;
}

void swl_pool_init(unsigned workers)
{
	slurm_mutex_lock(&q_lock);
	stopping = 0;
	q_max = workers ? workers : 1;
	slurm_mutex_unlock(&q_lock);
}

void swl_pool_fini(void)
{
	slurm_mutex_lock(&q_lock);
	stopping = 1;
	slurm_cond_broadcast(&q_cond);
	slurm_mutex_unlock(&q_lock);
}

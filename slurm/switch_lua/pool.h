/*
 * pool.h - slurmctld's workers for the switch/lua plugin: a queue of
 * work and at most switch_workers threads (Slurm's threadpool), started
 * as the queue needs them and kept.  A burst of thousands of --network
 * jobs is thousands of small queued items and at most switch_workers
 * threads; a retry goes back in the queue with the time it may run
 * again, so no thread sleeps through a wait.
 */
#ifndef SWL_POOL_H
#define SWL_POOL_H

#include <stdbool.h>
#include <time.h>

typedef struct swl_work swl_work_t;
struct swl_work {
	void (*run)(swl_work_t *w);  /* runs without the pool's lock */
	time_t not_before;           /* not run before this time */
	swl_work_t *next;            /* the queue's */
};

/* Ready for work, with at most `workers` threads. */
void swl_pool_init(unsigned workers);
/* Idle workers end; queued work is never run. */
void swl_pool_fini(void);
/*
 * Queue w, and start a worker if none is idle and the pool has room.
 * false: no worker exists and none could be started (w is not queued;
 * the caller still owns it).
 */
bool swl_pool_add(swl_work_t *w);
/*
 * Must work stop?  The plugin is being unloaded, slurmctld is shutting
 * down, or it is a backup handing control back to the primary: what a
 * worker would apply belongs to someone else now.
 */
bool swl_halted(void);
/* A thread of Slurm's threadpool for fn, detached; false if none. */
bool swl_detached(void *(*fn)(void *), const char *name, void *arg);

#endif

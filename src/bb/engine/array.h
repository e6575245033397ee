/*
 * array.h - when a task of a job array goes (a teardown, or a poll that
 * finds it over): whether another task still waits on the array's shared
 * stage-ins, and if none does, the array's shared records go.  The
 * stage code's side (which directives a task shares, the lock every
 * start decision is taken under) is array.h; which directives can
 * be shared is cbb_directive_shared() in directive.h.
 */
#ifndef CBB_ARRAY_H
#define CBB_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/*
 * For a teardown, or a poll that finds j over (j->array_job_id set):
 * whether the array's shared stage-ins are j's to abort, in
 * j->abort_shared.  They are when no other task that joined them is
 * alive (one squeue for the array; unknown counts as alive; records of
 * another array that had the id count for nothing and are left alone).
 * Then the array's lock is kept and returned (else -1) until
 * cbb_array_release: the transfers are aborted and the array's records
 * forgotten before any other task can look at them, so none joins a
 * transfer that is about to be aborted.
 */
int cbb_array_decide(cbb_job_ctx_t *j);

/* For a teardown (no job_info): set j's array, then cbb_array_decide. */
int cbb_array_teardown(cbb_job_ctx_t *j);

/* After the abort: the array's shared records go, and its lock. */
void cbb_array_release(cbb_job_ctx_t *j, int lock);

#endif

/*
 * array.h - when a task of a job array goes (a teardown, or a poll that
 * finds it over): whether another task still waits on the array's shared
 * stage-ins, and if none does, the array's shared records go.  The
 * stage code's side (which directives a task shares, the lock every
 * start decision is taken under) is stage_array.h; which directives can
 * be shared is cbb_directive_shared() in directive.h.
 */
#ifndef CBB_ARRAY_H
#define CBB_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/*
 * Whether another task that joined j's array's shared stage-ins is not
 * over (one squeue for the array; unknown counts as waiting; records of
 * another array that had the id count for nothing, and are left alone).
 * With none left, the array's shared records go.
 */
bool cbb_array_others_wait(const cbb_job_ctx_t *j);

/* For a teardown (no job_info): set j's array and abort_shared. */
void cbb_array_teardown(cbb_job_ctx_t *j);

#endif

/*
 * array.h - the hooks' side of one shared stage-in per job array
 * (stage_array.h is the stage code's; which directives the tasks share
 * is cbb_directive_shared() in directive.h): whether another task still
 * waits on the array's shared stage-ins when one goes, and how many
 * tasks joined them (bbstat).
 */
#ifndef CBB_ARRAY_H
#define CBB_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bbcall.h"
#include "stage.h"

/*
 * Whether another task that joined j's array's shared stage-ins is not
 * over (one squeue for the array; unknown counts as waiting; records of
 * another array that had the id count for nothing, and are left alone).
 * With none left, the array's shared records go.
 */
bool cbb_array_others_wait(cbb_bbcall_t *c, const cbb_job_ctx_t *j);

/* The array a task joined (its own StateDir records), or 0. */
uint32_t cbb_array_of(cbb_bbcall_t *c, uint32_t job_id);

/* For a teardown (no job_info): set j's array and abort_shared. */
void cbb_array_teardown(cbb_bbcall_t *c, cbb_job_ctx_t *j);

/* How many tasks joined an array's shared stage-ins. */
unsigned cbb_array_joined(cbb_bbcall_t *c, uint32_t array_job_id);

#endif

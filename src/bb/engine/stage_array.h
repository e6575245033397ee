/*
 * stage_array.h - one shared stage-in per job array, inside the stage
 * code: which directives an array task shares (in its first attempt,
 * those cbb_directive_shared() marked: d->shared), the array's lock that
 * every start decision is taken under (so two tasks never start the same
 * shared transfer), and the record that a task joined them (teardown
 * asks whether another task still waits; bbstat counts them).  Internal
 * to bb; docs/directives.md, "Job arrays", says what users see.
 */
#ifndef CBB_STAGE_ARRAY_H
#define CBB_STAGE_ARRAY_H

#include "stage.h"
#include "statefile.h"

bool cbb_any_shared(const cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage);
/*
 * Take the array's lock when the stage shares transfers (waits at most
 * a moment).  1: taken or not needed (*fd -1); 0: another task holds
 * it: come back at the next poll.  Release with cbb_shared_unlock(*fd).
 */
int cbb_shared_lock_for(cbb_job_ctx_t *j, const cbb_plan_t *plan,
			cbb_stage_t stage, int *fd);
/* Whether the task's own records say it joined its array's stage-ins. */
bool cbb_task_joined(const cbb_recs_t *recs);
/* Record once that this task uses its array's shared stage-ins. */
void cbb_join_shared(cbb_job_ctx_t *j, bool uses, const cbb_recs_t *recs,
		     const cbb_recs_t *shared);

#endif

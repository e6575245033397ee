/*
 * pick.h - which transfer stands for a directive.  A job's Query can
 * return several transfers for one directive (retries, requeued
 * attempts, an array's shared stage-in); these choose one, the same way
 * for the stage code, accounting and bbstat.  Uses only job.h below it.
 */
#ifndef CBB_PICK_H
#define CBB_PICK_H

#include "conduit.h"
#include "directive.h"
#include "job.h"
#include "key.h"

/*
 * The transfer that stands for a directive of one attempt (attempt < 0:
 * any), and how many exist: running beats finished beats failed, newer
 * beats older.
 */
const cbb_transfer_t *cbb_pick(const cbb_transfers_t *t, cbb_key_type_t type,
			       uint32_t index, long attempt, unsigned *attempts);

/* The array's shared transfer of a directive: same index and content. */
const cbb_transfer_t *cbb_pick_shared(const cbb_transfers_t *t,
				      const cbb_directive_t *d);

/*
 * The transfer that stands for directive d in the current attempt of
 * `stage` (an array's shared stage-in included), or NULL.
 */
const cbb_transfer_t *cbb_stage_pick(const cbb_job_ctx_t *j,
				     const cbb_transfers_t *have,
				     const cbb_directive_t *d, cbb_stage_t stage);

/* Whether an array's shared stage-in stands for directive d (stage-in,
 * the first attempt of an array task, a directive marked shared). */
bool cbb_is_shared(const cbb_job_ctx_t *j, const cbb_directive_t *d,
		   cbb_stage_t stage);

/* Conduit's action for a directive (cp/mv, with -r). */
cbb_conduit_action_t cbb_action_of(const cbb_directive_t *d);
/* The same expanded sources, destination and action as the directive. */
bool cbb_same_transfer(const cbb_transfer_t *x, const cbb_directive_t *d);

#endif

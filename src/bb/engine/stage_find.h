/*
 * stage_find.h - what the server and StateDir say about a directive,
 * for the stage engine (stage_verdict.c, stage_aside.c,
 * stage_teardown.c, stage_sweep.c): the job's transfers from one Query
 * (which of them stands for a directive is pick.h's), whether an
 * earlier attempt already staged it, what StateDir's records say about
 * starts the server has not shown yet, and whether they show a stage-in
 * that was never seen to end.  One Query fetches the job's transfers
 * (an array task's and its array's shared ones); transfers of an
 * earlier job with the same id are dropped.  Internal to bb.
 */
#ifndef CBB_STAGE_FIND_H
#define CBB_STAGE_FIND_H

#include "stage.h"
#include "statefile.h"

/* One Query: the job's transfers of every attempt (see above). */
int cbb_find_query(cbb_job_ctx_t *j, cbb_transfers_t *out, bool *transport,
		   cbb_err_t *err);
/* Drop transfers an earlier job with the same id left (not for a
 * requeued job's stage-out, submitted before Slurm's current time). */
void cbb_find_drop_foreign(cbb_job_ctx_t *j, cbb_stage_t stage,
			   cbb_transfers_t *t);

/* A stage-in directive an earlier attempt finished: that attempt, or -1. */
long cbb_kept_from(const cbb_transfers_t *t, const cbb_directive_t *d,
		   uint32_t attempt);
/* Whether a start record's transfer is among the visible ones. */
bool cbb_rec_visible(const cbb_rec_t *r, const cbb_transfers_t *t,
		     cbb_key_type_t type, uint32_t attempt, uint32_t index);
/*
 * The newest start record of a directive, unless a "lost" record closed
 * it; *lost: whether any transfer of it was lost before.
 */
const cbb_rec_t *cbb_open_record(const cbb_recs_t *recs, int type,
				 uint32_t attempt, uint32_t index, bool *lost);

/*
 * Whether records show a stage-in (the job's own, or joining its
 * array's) in an attempt that was never seen to end: no ACCOUNTED record
 * of that attempt's stage-in (a poll that finds a stage over writes
 * one).  *uid gets the job's uid when a record names it (else
 * CBB_UID_UNKNOWN).
 */
bool cbb_recs_stage_in_open(const cbb_recs_t *r, uint32_t *uid);

#endif

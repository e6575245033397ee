/*
 * stage_int.h - what the stage engine's files share (stage.c,
 * stage_records.c, stage_aside.c, stage_verdict.c, stage_poll.c,
 * stage_teardown.c, stage_validate.c, stage_sweep.c); nothing outside
 * them includes it.  stage.h is the contract for the hooks.
 */
#ifndef CBB_STAGE_INT_H
#define CBB_STAGE_INT_H

#include "stage.h"
#include "statefile.h"

/* What a directive needs now. */
typedef enum {
	V_START,     /* never started, or lost: start it */
	V_PENDING,   /* started, not visible yet (within StartVisibleGrace) */
	V_RUNNING,
	V_DONE,
	V_KEPT,      /* stage-in done in an earlier attempt: not repeated */
	V_FAILED,    /* its transfer failed (data_* starts it again) */
	V_BROKEN,    /* a mv failed after moving data: never restarted */
	V_ASIDE,     /* waits while an earlier attempt's output goes aside */
	V_ASIDE_FAILED, /* that could not be done (why) */
} verdict_t;

typedef struct {
	const cbb_directive_t *d;
	verdict_t v;
	const cbb_transfer_t *x; /* the transfer that stands for it */
	bool lost;               /* an earlier transfer of it was lost */
	uint32_t kept_from;      /* V_KEPT: the attempt that staged it */
	bool shared;             /* the array's shared stage-in stands for it */
	char comment[CBB_KEY_MAX];
	cbb_err_t why;           /* V_ASIDE_FAILED: the line and why */
} dview_t;

/*
 * The records of one batch of starts, each file written once: a data_in
 * of N directives opens the job's record file twice, not 2N times.
 */
typedef struct {
	cbb_rec_t *own, *array;
	size_t n_own, n_array;
} cbb_batch_t;

/* stage_records.c */
/* Write one record (an array's shared stage-in's to the array's file). */
void cbb_stage_record(cbb_job_ctx_t *j, cbb_key_type_t type,
		      uint32_t attempt, uint32_t index, char kind,
		      const char *id);
/* Add a record to a batch (own and array room: as many as directives). */
void cbb_batch_add(const cbb_job_ctx_t *j, cbb_batch_t *b,
		   cbb_key_type_t type, uint32_t attempt, uint32_t index,
		   char kind, const char *id);
/* Write the batch, one append per file, and empty it. */
void cbb_batch_write(cbb_job_ctx_t *j, cbb_batch_t *b);

/* stage_aside.c */
enum {
	CBB_ASIDE_GO = 0,     /* nothing in the way (any more): start it */
	CBB_ASIDE_WAIT = 1,   /* a move-aside runs (or was started now) */
	CBB_ASIDE_FAILED = -1 /* it could not be done (err: line and why) */
};
/*
 * Before directive d starts for attempt `attempt` of `stage` (it has no
 * transfer of that attempt yet): whether an earlier attempt's output is
 * in its way, and if so move it aside (started here when due); see
 * stage_aside.c.  `have` is the job's transfers from this hook's Query.
 */
int cbb_aside_gate(cbb_job_ctx_t *j, const cbb_directive_t *d,
		   cbb_stage_t stage, uint32_t attempt,
		   const cbb_transfers_t *have, cbb_err_t *err);

/* stage_verdict.c */
/* Decide what each directive of `stage` needs (out has plan->n room). */
size_t cbb_stage_view(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		      cbb_stage_t stage, const cbb_transfers_t *have,
		      const cbb_recs_t *recs, const cbb_recs_t *shared,
		      dview_t *out);
/* The error of a mv that failed after it began moving data. */
void cbb_verdict_broken_mv(cbb_err_t *err, const dview_t *v);
/* The error of a failed transfer. */
void cbb_verdict_failed(cbb_err_t *err, cbb_stage_t stage,
			const dview_t *v);
/* The stage-out of an attempt a requeue interrupted: best effort. */
bool cbb_stage_best_effort(const cbb_job_ctx_t *j, cbb_stage_t stage);
/* Whether an array's shared stage-in stands for any of the views. */
bool cbb_views_shared(const dview_t *views, size_t n);

/* stage.c */
/* Fill a start request for view v (its comment kept in v->comment). */
void cbb_stage_fill_start(cbb_job_ctx_t *j, dview_t *v, cbb_key_type_t type,
			  uint32_t attempt, cbb_start_t *s);
/*
 * Start the views marked V_START (and V_FAILED with retry_failed), all
 * at once; see stage.c.  How many were started, -1 (err set) when
 * Conduit refused one.
 */
long cbb_stage_start_views(cbb_job_ctx_t *j, cbb_stage_t stage,
			   dview_t *views, size_t n, bool retry_failed,
			   size_t *deferred, cbb_err_t *later, cbb_err_t *err);
/*
 * The records and one Query for a stage: 0; -1 (err set) when StateDir
 * is unusable; -2 (err set; *again: not a refusal) when the Query failed.
 */
int cbb_stage_gather(cbb_job_ctx_t *j, cbb_stage_t stage,
		     cbb_transfers_t *have, cbb_recs_t *recs,
		     cbb_recs_t *shared, bool *again, cbb_err_t *err);

#endif

/*
 * stage.h - what the staging hooks do, in plain C over the Conduit client.
 *
 * Every function is safe to repeat and to race for the same job.  A
 * job's transfers are found on Conduit by their comment key (key.h),
 * and StateDir remembers what was started (statefile.h): a transfer that
 * Query does not show yet is waited for, for StartVisibleGrace, and one
 * that never shows up (a server that lost its database, a failover) is
 * declared lost and started again.  A directive is started only when
 * neither Conduit nor the record shows it running or done.
 *
 * Identity: the key's RESTART field is the run attempt a transfer serves.
 * Stage-in runs before attempt `restart_cnt`; stage-out runs after it,
 * except that Slurm requeues first and stages out after, so a stage-out
 * seen while the job is pending again belongs to attempt restart_cnt-1.
 */
#ifndef CBB_STAGE_H
#define CBB_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "conduit.h"
#include "directive.h"
#include "key.h"
#include "log.h"

typedef struct {
	const cbb_config_t *cfg;
	cbb_grpc_t *g;
	char cluster[CBB_CLUSTER_MAX];
	uint32_t job_id;
	uint32_t restart;  /* Slurm's restart count (job_info.restart_cnt) */
	int64_t submit;    /* this attempt's submit time; 0: unknown */
	bool requeued;     /* pending again: a stage-out is the attempt before */
	uint32_t array_job_id; /* an array task's array (0: not a task) */
	uint32_t array_task_id; /* the task's index (CBB_NO_VAL: none) */
	const char *admin_comment; /* job_info.admin_comment (may be NULL) */
	bool account;      /* summarise the job when its staging ends */
	bool abort_shared; /* teardown: no other task waits on the array's
			      shared stage-ins, abort them too */
	char user[16];     /* the job's uid, as Conduit's `user` */
	/* where log lines go (never stdout/stderr) */
	cbb_log_fn log;
	void *log_ud;
} cbb_job_ctx_t;

enum { CBB_POLL_DONE = 0, CBB_POLL_BUSY = 1, CBB_POLL_FAILED = -1 };

void cbb_job_ctx_init(cbb_job_ctx_t *j, const cbb_config_t *cfg,
		      cbb_grpc_t *g, const char *cluster, uint32_t job_id,
		      uint32_t uid);

/* The run attempt a stage of the job serves now (see above). */
uint32_t cbb_attempt(const cbb_job_ctx_t *j, cbb_stage_t stage);

/*
 * data_in / data_out: one Query, then start every directive of `stage`
 * that is not running, done, or waiting to show up, all at once; never
 * waits for a transfer.  A server that cannot be reached is left to the
 * polls (they start what is missing once it answers).
 */
int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage, cbb_err_t *err);

/*
 * test_data_in / test_data_out: one Query.  DONE when every directive's
 * transfer is FINALIZED (or, for stage-in, was in an earlier attempt),
 * BUSY while any runs or has yet to show up, FAILED (err names the line
 * and Conduit's error) as soon as one fails.  What is missing (lost, or
 * never started) is started here.  An unreachable server is BUSY for
 * ServerDownGrace (stage-in) or StageOutDownGrace (stage-out), then
 * FAILED.
 */
int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, cbb_err_t *err);

/*
 * The transfer that stands for directive d in the current attempt of
 * `stage` (an array's shared stage-in included), or NULL.
 */
const cbb_transfer_t *cbb_stage_pick(const cbb_job_ctx_t *j,
				     const cbb_transfers_t *have,
				     const cbb_directive_t *d, cbb_stage_t stage);

/*
 * job_teardown: abort the job's active transfers (every attempt; only
 * its stage-ins with `in_only`) when `abort_active`; otherwise leave
 * them.  "Already over" counts as done.  An array task's shared
 * stage-ins are aborted only with abort_shared.
 */
int cbb_stage_teardown(cbb_job_ctx_t *j, bool abort_active, bool in_only,
		       cbb_err_t *err);

/*
 * How many of the job's stage-in transfers still run (one Query), or -1
 * (err set).
 */
long cbb_stage_in_active(cbb_job_ctx_t *j, cbb_err_t *err);

/*
 * job_process with SubmitValidation=remote: ValidateTransfer for every
 * stage-in directive at once, then poll until each is decided, all within
 * the connection's budget (SubmitTimeout).  Returns -1 (err set) only for
 * a directive Conduit refused or whose validation failed; a timeout, an
 * unreachable or busy server accepts and logs.
 */
int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		       cbb_err_t *err);

/*
 * The transfer that stands for a directive of one attempt (attempt < 0:
 * any), and how many exist: running beats finished beats failed, newer
 * beats older.
 */
const cbb_transfer_t *cbb_pick(const cbb_transfers_t *t, cbb_key_type_t type,
			       uint32_t index, long attempt, unsigned *attempts);

#endif

/*
 * stage.h - what the staging hooks do, in plain C over the Conduit client.
 *
 * Every function is safe to repeat and to race for the same job: the
 * job's transfers are found again on Conduit by their comment key
 * (key.h), never remembered locally, and a transfer is only started when
 * a lookup shows it is not there.
 */
#ifndef CBB_STAGE_H
#define CBB_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "conduit.h"
#include "directive.h"
#include "key.h"

typedef struct {
	const cbb_config_t *cfg;
	cbb_grpc_t *g;
	char cluster[CBB_CLUSTER_MAX];
	uint32_t job_id;
	uint32_t restart;
	char user[16];  /* the job's uid, as Conduit's `user` */
	/* where log lines go (never stdout/stderr) */
	void (*log)(void *ud, int level, const char *msg);
	void *log_ud;
} cbb_job_ctx_t;

enum { CBB_POLL_DONE = 0, CBB_POLL_BUSY = 1, CBB_POLL_FAILED = -1 };

void cbb_job_ctx_init(cbb_job_ctx_t *j, const cbb_config_t *cfg,
		      cbb_grpc_t *g, const char *cluster, uint32_t job_id,
		      uint32_t restart, uint32_t uid);

/*
 * data_in / data_out: one Query, then start every directive of `stage`
 * that has no live or finished transfer, all at once; never waits.
 */
int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage, cbb_err_t *err);

/*
 * test_data_in / test_data_out: exactly one Query.  DONE when every
 * directive's transfer is FINALIZED, BUSY while any runs, FAILED (err
 * names the line and Conduit's error) as soon as one fails.  An
 * unreachable server is BUSY for ServerDownGrace, then FAILED.
 */
int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, cbb_err_t *err);

/*
 * job_teardown: abort the job's active transfers (all restarts) when
 * `abort_active`; otherwise leave them.  "Already over" counts as done.
 */
int cbb_stage_teardown(cbb_job_ctx_t *j, bool abort_active, cbb_err_t *err);

/*
 * job_process with SubmitValidation=remote: ValidateTransfer for every
 * stage-in directive at once, then poll until each is decided, all within
 * `deadline_ms`.  Returns -1 (err set) only for a transfer Conduit
 * rejected; a timeout or an unreachable server accepts and logs.
 */
int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		       unsigned deadline_ms, cbb_err_t *err);

/* The transfer that stands for a directive now, and how many exist. */
const cbb_transfer_t *cbb_pick(const cbb_transfers_t *t, cbb_key_type_t type,
			       uint32_t index, long restart, unsigned *attempts);

#endif

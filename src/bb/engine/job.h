/*
 * job.h - the bottom of the stage code: one job as the stage code sees
 * it (config, connection, ids, Slurm's facts about this attempt, the
 * logger), the run attempt a stage serves, and its log lines.  Every
 * other bb file may use it; it uses only core, key.h and the record
 * type of statefile.h.
 *
 * Attempts: the key's RESTART field (key.h) is the run attempt a
 * transfer serves.  Stage-in runs before attempt `restart` (Slurm's
 * restart count); stage-out runs after it, except that Slurm requeues
 * first and stages out after, so a stage-out seen while the job is
 * pending again belongs to attempt restart-1.
 */
#ifndef CBB_JOB_H
#define CBB_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "conduit.h"
#include "directive.h"
#include "key.h"
#include "log.h"
#include "statefile.h"

typedef struct {
	const cbb_config_t *cfg;
	cbb_grpc_t *g;
	cbb_statedir_t *sd; /* the call's StateDir handle (NULL: none) */
	char cluster[CBB_CLUSTER_MAX];
	uint32_t job_id;
	uint32_t restart;  /* Slurm's restart count (job_info.restart_cnt) */
	int64_t submit;    /* this attempt's submit time; 0: unknown */
	bool requeued;     /* pending again: a stage-out is the attempt before */
	uint32_t array_job_id; /* an array task's array (0: not a task) */
	uint32_t array_task_id; /* the task's index (CBB_NO_VAL: none) */
	const char *admin_comment; /* job_info.admin_comment (may be NULL) */
	bool have_state;   /* job_info had job_state ... */
	uint32_t job_state; /* ... its base state and flags */
	bool have_exit;    /* job_info had exit_code ... */
	uint32_t exit_code; /* ... the script's wait status */
	bool account;      /* summarise the job when its staging ends */
	bool abort_shared; /* teardown: no other task waits on the array's
			      shared stage-ins, abort them too */
	const char *finished_by; /* a stage-out Slurm dropped, finished
			      by a "sweep", the "teardown" or "conduit-bb
			      recover" (lost.c): its AuditLog lines say
			      which; else NULL */
	uint32_t uid;      /* the job's user */
	char user[16];     /* the same as text: Conduit's `user` */
	/* what this hook call started, for its AuditLog hook record: the
	 * transfers (or starts not confirmed), and of them those of a
	 * directive that had a transfer before (lost by the server, or
	 * failed and started again); and the failed transfers a poll
	 * found when it failed the stage */
	unsigned started, retried, failed;
	/* where log lines go (never stdout/stderr) */
	cbb_log_fn log;
	void *log_ud;
} cbb_job_ctx_t;

void cbb_job_ctx_init(cbb_job_ctx_t *j, const cbb_config_t *cfg,
		      cbb_grpc_t *g, const char *cluster, uint32_t job_id,
		      uint32_t uid);

/* The run attempt a stage of the job serves now (see above). */
uint32_t cbb_attempt(const cbb_job_ctx_t *j, cbb_stage_t stage);

/*
 * The stage-out of an attempt that a requeue interrupted is best effort:
 * the attempt may have been stopped before it wrote its outputs, and
 * failing the stage would hold the job instead of running it again.
 */
bool cbb_stage_best_effort(const cbb_job_ctx_t *j, cbb_stage_t stage);

/* The key type of a stage's own transfers (PRE or POST). */
cbb_key_type_t cbb_stage_key(cbb_stage_t stage);
/* "stage-in" or "stage-out", as log lines and errors say it. */
const char *cbb_stage_word(cbb_stage_t stage);

/* A finished line as it is (no prefix) through the job's logger. */
void cbb_job_note(const cbb_job_ctx_t *j, int level, const char *msg);

/* A log line "job <id>: ..." through the job's logger (never stdout). */
void cbb_job_log(const cbb_job_ctx_t *j, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif

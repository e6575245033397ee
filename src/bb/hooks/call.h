/*
 * bbcall.h - the burst-buffer hooks' per-call context: the core call
 * context (config, cluster, answer, queued logs) plus what a bb hook
 * learns and opens: job facts from job_info, the job script and its
 * parsed plan, the gRPC connection and the transfers it read.
 *
 * Everything is freed by the context's __gc, so a Lua error anywhere in
 * a hook leaks nothing.  Pass &c->base where core wants a cbb_call_t.
 */
#ifndef CBB_BBCALL_H
#define CBB_BBCALL_H

#include <time.h>

#include "conduit.h"
#include "directive.h"
#include "grpc.h"
#include "job.h"
#include "luahost.h"
#include "statefile.h"
#include "symbols.h"

typedef struct {
	cbb_call_t base;     /* first, so the core context is the userdata */
	cbb_plan_t plan;
	char *script;
	size_t script_len;
	cbb_job_t job;
	char *user_name; /* owned copies behind job's pointers */
	char *work_dir;
	char *name;
	char *bb_state;      /* job_info.burst_buffer_state, may be NULL */
	char *admin_comment; /* job_info.admin_comment, may be NULL */
	uint32_t restart;    /* job_info.restart_cnt */
	uint32_t job_state;  /* job_info.job_state: base state and flags */
	int64_t submit_time; /* job_info.submit_time (0: unknown) */
	bool have_state;     /* job_info had job_state */
	bool have_exit;      /* job_info had exit_code */
	uint32_t exit_code;  /* job_info.exit_code: the script's wait status */
	cbb_grpc_t grpc;     /* open while grpc.multi != NULL */
	cbb_statedir_t sd;   /* StateDir, once the cluster is known */
	cbb_transfers_t transfers;
	/* a timed hook (cbb_bbcall_timed): its AuditLog hook record */
	const char *hook;    /* "slurm_bb_data_in" ...; NULL: not timed */
	const char *stage;   /* "in", "out" or NULL */
	struct timespec t0;  /* CLOCK_MONOTONIC at the call's start */
	const cbb_job_ctx_t *counts; /* a stage hook's job: what it started */
	bool sweep;          /* finish sweeps StateDir for other jobs'
				orphaned stage-ins (stage.h,
				cbb_stage_sweep), as job.job_id's hook */
} cbb_bbcall_t;

/* Push a new, empty bb call context (a userdata) and return it. */
cbb_bbcall_t *cbb_bbcall_new(lua_State *L);
/*
 * The same for a hook whose calls the AuditLog records (audit.h): the
 * clock starts now, and cbb_bbcall_finish (or cbb_bbcall_record) writes
 * the hook record when AuditLog is set.  `hook` and `stage` are static.
 */
cbb_bbcall_t *cbb_bbcall_timed(lua_State *L, const char *hook,
			       const char *stage);
/*
 * Write the hook record of a timed call that ends with rc and msg (an
 * answer "BUSY" with rc 0 is a poll that goes on), once; a record that
 * cannot be written is logged at debug level.  cbb_bbcall_finish calls
 * it; a hook that answers otherwise calls it before flushing its logs.
 */
void cbb_bbcall_record(cbb_bbcall_t *c, int rc, const char *msg);

/*
 * The cluster name (cbb_call_cluster) and, with it, the call's StateDir
 * handle c->sd (opened at its first use, closed with the context).
 */
int cbb_bbcall_cluster(lua_State *L, cbb_bbcall_t *c, int job_info_idx,
		       cbb_err_t *err);

/*
 * A job context for this call: its config, cluster, StateDir handle and
 * queued logger, with the connection g (NULL: none yet).
 */
void cbb_bbcall_job_ctx(cbb_bbcall_t *c, cbb_job_ctx_t *j, cbb_grpc_t *g,
			uint32_t job_id, uint32_t uid);

/*
 * Finish a hook: sweep (when c->sweep, within what is left of the hook's
 * budget), write its hook record, flush the queued log lines, free the
 * context, push slurm.SUCCESS/ERROR (rc 0/-1) and msg when not NULL.
 * Returns the number of results, for `return cbb_bbcall_finish(...)`.
 */
int cbb_bbcall_finish(lua_State *L, cbb_bbcall_t *c, int rc, const char *msg);

/*
 * Fill c->job from the job_info table at `idx` (nil is allowed) and the
 * uid Slurm passed.  The uid always wins over anything else.
 * Returns 0, or -1 on out of memory.
 */
int cbb_bbcall_job(lua_State *L, cbb_bbcall_t *c, int idx, unsigned long uid);

/*
 * Read a whole script file into c->script (capped), or set err.  Call
 * after cbb_bbcall_job: a task that Slurm split off an array has no
 * script file of its own (Slurm keeps the array's), and then the
 * array's is read.
 */
int cbb_bbcall_read_script(cbb_bbcall_t *c, const char *path, cbb_err_t *err);
/* The same into any buffer (malloc'd, NUL-terminated). */
int cbb_read_job_script(const cbb_job_t *job, const char *path, char **text,
			size_t *len, cbb_err_t *err);

/*
 * When `path` is <state>/hash.<id%10>/job.<id>/<leaf> (Slurm's layout of
 * StateSaveLocation), copy <state> to `state` and return true.
 */
bool cbb_slurm_state_of(const char *path, uint32_t job_id, const char *leaf,
			char *state, size_t size);

#endif

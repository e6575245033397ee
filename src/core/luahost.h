/*
 * luahost.h - what the hooks need from the Lua host: logging through
 * Slurm's `slurm` table, job facts from job_info, and a per-call context
 * that owns every C allocation of a hook.
 *
 * The context is a full userdata with __gc, created before any C memory
 * is allocated, so a Lua error (which longjmps) can never leak it.
 */
#ifndef CBB_LUAHOST_H
#define CBB_LUAHOST_H

#include "buf.h"
#include "compat.h"
#include "config.h"
#include "conduit.h"
#include "directive.h"
#include "grpc.h"
#include "symbols.h"

enum {
	CBB_LOG_ERROR = -1,
	CBB_LOG_INFO = 0,
	CBB_LOG_VERBOSE = 1,
	CBB_LOG_DEBUG = 2,
};

typedef struct {
	cbb_config_t cfg;
	cbb_plan_t plan;
	char *script;
	size_t script_len;
	cbb_job_t job;
	char *user_name; /* owned copies behind job's pointers */
	char *work_dir;
	char *name;
	char *cluster;
	char *bb_state;      /* job_info.burst_buffer_state, may be NULL */
	uint32_t restart;    /* job_info.restart_cnt */
	uint32_t job_state;  /* job_info.job_state: base state and flags */
	int64_t submit_time; /* job_info.submit_time (0: unknown) */
	cbb_grpc_t grpc;     /* open while grpc.multi != NULL */
	cbb_transfers_t transfers;
	cbb_buf_t out;       /* a hook's text answer */
	cbb_buf_t logs;      /* "<level char><message>\0" records */
} cbb_call_t;

/* Push a new, empty call context (a userdata) and return it. */
cbb_call_t *cbb_call_new(lua_State *L);
/* Free everything the context owns; safe to call more than once. */
void cbb_call_done(cbb_call_t *c);

/*
 * Fill c->job from the job_info table at `idx` (nil is allowed) and the
 * uid Slurm passed.  The uid always wins over anything else.
 * Returns 0, or -1 on out of memory.
 */
int cbb_call_job(lua_State *L, cbb_call_t *c, int idx, unsigned long uid);

/*
 * Log one finished message through slurm.log / slurm.error.  Never
 * prints: without a `slurm` table the message is dropped.
 */
void cbb_log(lua_State *L, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Queue a log line from C code that must not call into Lua (a Lua error
 * would skip its cleanup); cbb_call_flush_logs() sends them afterwards.
 * Matches cbb_job_ctx_t's log callback.
 */
void cbb_call_queue_log(void *call, int level, const char *msg);
void cbb_call_flush_logs(lua_State *L, cbb_call_t *c);

/*
 * The cluster name: slurm.CLUSTER_NAME, else job_info.cluster (when
 * job_info_idx is not 0), else ClusterName from slurm.conf; -1 with a
 * one-line message when none is known.
 */
int cbb_call_cluster(lua_State *L, cbb_call_t *c, int job_info_idx,
		     cbb_err_t *err);

/*
 * The value at idx when it is a number that is a whole number from 0 to
 * max (NaN, infinities, fractions, negatives and strings are not).
 */
bool cbb_lua_whole(lua_State *L, int idx, double max, uint64_t *out);

/*
 * Read a whole script file into c->script (capped), or set err.  Call
 * after cbb_call_job: a task that Slurm split off an array has no script
 * file of its own (Slurm keeps the array's), and then the array's is
 * read.
 */
int cbb_call_read_script(cbb_call_t *c, const char *path, cbb_err_t *err);
/* The same into any buffer (malloc'd, NUL-terminated). */
int cbb_read_job_script(const cbb_job_t *job, const char *path, char **text,
			size_t *len, cbb_err_t *err);

/*
 * When `path` is <state>/hash.<id%10>/job.<id>/<leaf> (Slurm's layout of
 * StateSaveLocation), copy <state> to `state` and return true.
 */
bool cbb_slurm_state_of(const char *path, uint32_t job_id, const char *leaf,
			char *state, size_t size);

/* Parse a decimal uid/gid argument; returns -1 when it is not one. */
long cbb_arg_id(lua_State *L, int idx);

/* Push slurm.SUCCESS / slurm.ERROR and an optional message. */
int cbb_push_result(lua_State *L, int rc, const char *msg, size_t len);

#endif

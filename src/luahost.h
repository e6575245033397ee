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

#include "compat.h"
#include "config.h"
#include "directive.h"
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

/* Parse a decimal uid/gid argument; returns -1 when it is not one. */
long cbb_arg_id(lua_State *L, int idx);

/* Push slurm.SUCCESS / slurm.ERROR and an optional message. */
int cbb_push_result(lua_State *L, int rc, const char *msg, size_t len);

#endif

/*
 * luahost.h - what both halves need from the Lua host: logging through
 * the host's `slurm` table, reading job_info fields, the cluster name,
 * and a per-call context that owns every C allocation of a hook.
 *
 * The context is a full userdata with __gc, created before any C memory
 * is allocated, so a Lua error (which longjmps) can never leak it.  A
 * half that needs more per call embeds cbb_call_t as the first member
 * of its own context and creates it with cbb_call_new_as() (the bb
 * half's is in bb/bbcall.h); the switch half uses cbb_call_t as is.
 */
#ifndef CBB_LUAHOST_H
#define CBB_LUAHOST_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "compat.h"
#include "config.h"
#include "err.h"
#include "log.h"

typedef struct cbb_call cbb_call_t;
struct cbb_call {
	cbb_config_t cfg;
	char *cluster;       /* set by cbb_call_cluster() */
	cbb_buf_t out;       /* a hook's text answer */
	cbb_buf_t logs;      /* "<level char><message>\0" records */
	void (*done)(cbb_call_t *c); /* frees what an embedding context owns */
};

/* Push a new, empty call context (a userdata) and return it. */
cbb_call_t *cbb_call_new(lua_State *L);
/*
 * The same for a context of `size` bytes that starts with a cbb_call_t;
 * `done` (may be NULL) frees the rest and must be safe to repeat.
 */
cbb_call_t *cbb_call_new_as(lua_State *L, size_t size,
			    void (*done)(cbb_call_t *));
/* Free everything the context owns; safe to call more than once. */
void cbb_call_done(cbb_call_t *c);

/*
 * job_info may be a table or a userdata-backed proxy; both are read
 * through __index.  A string field is copied (malloc) into *dst, left
 * alone when absent; -1 only on out of memory.
 */
int cbb_lua_field_string(lua_State *L, int idx, const char *key, char **dst);
/*
 * A string or number field as text into buf (cut to size); "" when the
 * field is absent, of another type, or idx is not a table or userdata.
 * Returns buf.
 */
const char *cbb_lua_field_text(lua_State *L, int idx, const char *key,
			       char *buf, size_t size);
/* A whole-number field from 0 to max, else dflt. */
uint64_t cbb_lua_field_whole(lua_State *L, int idx, const char *key,
			     double max, uint64_t dflt);

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

/* The argument at i when it is a string, else NULL (numbers are not). */
const char *cbb_lua_str(lua_State *L, int i);

/* Parse a decimal uid/gid argument; returns -1 when it is not one. */
long cbb_arg_id(lua_State *L, int idx);

/* Set each {name, function} of a NULL-ended list as a global. */
void cbb_register_globals(lua_State *L, const luaL_Reg *fns);

/* Push slurm.SUCCESS / slurm.ERROR and an optional message. */
int cbb_push_result(lua_State *L, int rc, const char *msg, size_t len);

#endif

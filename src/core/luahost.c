/* luahost.c - see luahost.h */
#include "luahost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define CALL_MT "conduit_bb.call"

static int call_gc(lua_State *L)
{
	cbb_call_t *c = lua_touserdata(L, 1);

	if (c)
		cbb_call_done(c);
	return 0;
}

cbb_call_t *cbb_call_new(lua_State *L)
{
	return cbb_call_new_as(L, sizeof(cbb_call_t), NULL);
}

cbb_call_t *cbb_call_new_as(lua_State *L, size_t size,
			    void (*done)(cbb_call_t *))
{
	cbb_call_t *c = lua_newuserdata(L, size);

	memset(c, 0, size);
	c->done = done;
	cbb_config_defaults(&c->cfg);
	cbb_buf_init(&c->out, 0);
	cbb_buf_init(&c->logs, (size_t)1 << 20);
	if (luaL_newmetatable(L, CALL_MT)) {
		lua_pushcfunction(L, call_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return c;
}

void cbb_call_done(cbb_call_t *c)
{
	if (c->done)
		c->done(c);
	cbb_buf_free(&c->out);
	cbb_buf_free(&c->logs);
	free(c->cluster);
	c->cluster = NULL;
	cbb_config_free(&c->cfg);
}

/* job_info may be a table or a userdata-backed proxy: read via __index. */
int cbb_lua_field_string(lua_State *L, int idx, const char *key, char **dst)
{
	const char *s;
	size_t n;

	lua_getfield(L, idx, key);
	s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
	if (s) {
		*dst = strndup(s, n);
		if (!*dst) {
			lua_pop(L, 1);
			return -1;
		}
	}
	lua_pop(L, 1);
	return 0;
}

const char *cbb_lua_field_text(lua_State *L, int idx, const char *key,
			       char *buf, size_t size)
{
	buf[0] = '\0';
	if (!lua_istable(L, idx) && !lua_isuserdata(L, idx))
		return buf;
	lua_getfield(L, idx, key);
	if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
		snprintf(buf, size, "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
	return buf;
}

bool cbb_lua_whole(lua_State *L, int idx, double max, uint64_t *out)
{
	lua_Number v;

	if (lua_type(L, idx) != LUA_TNUMBER)
		return false;
	v = lua_tonumber(L, idx);
	/* false for NaN and out of range, so the cast below is defined */
	if (!(v >= 0 && v <= max) || v != (lua_Number)(uint64_t)v)
		return false;
	*out = (uint64_t)v;
	return true;
}

uint64_t cbb_lua_field_whole(lua_State *L, int idx, const char *key,
			     double max, uint64_t dflt)
{
	uint64_t r = dflt;

	lua_getfield(L, idx, key);
	if (!cbb_lua_whole(L, -1, max, &r))
		r = dflt;
	lua_pop(L, 1);
	return r;
}

/*
 * How call_logger passes the message: slurm.log(level, msg) for a level
 * of log.h (0 and up), slurm.error(msg), or slurm.log_*("%s", msg) (the
 * log_* wrappers format all their arguments).
 */
enum { LOGGER_MSG_ONLY = -1, LOGGER_FORMAT = -2 };

/*
 * Call slurm.<name>(args...) if it is a function: 1 when called (errors
 * in the logger are swallowed), 0 when there is no such function.
 * Expects the slurm table on top of the stack.
 */
static int call_logger(lua_State *L, const char *name, int level,
		       const char *msg)
{
	int n = 0;

	lua_getfield(L, -1, name);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	if (level >= 0) {
		lua_pushinteger(L, level);
		n++;
	} else if (level == LOGGER_FORMAT) {
		lua_pushliteral(L, "%s"); /* log_*: the message is an argument */
		n++;
	}
	lua_pushstring(L, msg);
	if (lua_pcall(L, n + 1, 0, 0) != 0)
		lua_pop(L, 1); /* a broken logger must not break the hook */
	return 1;
}

void cbb_log(lua_State *L, int level, const char *fmt, ...)
{
	static const char *const by_level[] = { "log_info", "log_verbose",
						"log_debug" };
	char msg[1024];
	int n;
	va_list ap;

	n = snprintf(msg, sizeof(msg), "conduit_bb: ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);

	lua_getglobal(L, "slurm");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	/*
	 * burst_buffer/lua offers slurm.log(level, msg) and slurm.error(msg);
	 * switch/lua only promises log_info/log_error, which format.
	 */
	if (level == CBB_LOG_ERROR) {
		if (!call_logger(L, "error", LOGGER_MSG_ONLY, msg))
			call_logger(L, "log_error", LOGGER_FORMAT, msg);
	} else if (!call_logger(L, "log", level, msg) &&
		   !call_logger(L, by_level[level < CBB_LOG_INFO ||
					    level > CBB_LOG_DEBUG ? 0 : level],
				LOGGER_FORMAT, msg)) {
		call_logger(L, "log_info", LOGGER_FORMAT, msg);
	}
	lua_pop(L, 1);
}

void cbb_call_queue_log(void *call, int level, const char *msg)
{
	cbb_call_t *c = call;
	char lv = (char)('0' + (level < 0 ? 9 : level));

	/* on overflow the record is dropped, never half-written */
	if (cbb_buf_addc(&c->logs, lv) == 0 &&
	    cbb_buf_add(&c->logs, msg, strlen(msg) + 1) < 0)
		c->logs.len--;
}

void cbb_call_flush_logs(lua_State *L, cbb_call_t *c)
{
	size_t i = 0;

	while (i < c->logs.len) {
		const char *rec = c->logs.data + i;
		int level = rec[0] == '9' ? CBB_LOG_ERROR : rec[0] - '0';

		cbb_log(L, level, "%s", rec + 1);
		i += strlen(rec) + 1;
	}
	cbb_buf_reset(&c->logs);
}

int cbb_call_cluster(lua_State *L, cbb_call_t *c, int idx, cbb_err_t *err)
{
	const char *s = NULL;
	char conf[256], path[4096];

	lua_getglobal(L, "slurm");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "CLUSTER_NAME");
		if (lua_type(L, -1) == LUA_TSTRING)
			s = lua_tostring(L, -1);
		if (s && s[0] && !(c->cluster = strdup(s))) {
			lua_pop(L, 2);
			return cbb_err(err, "conduit_bb: out of memory");
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!c->cluster && idx != 0 &&
	    (lua_istable(L, idx) || lua_isuserdata(L, idx)) &&
	    cbb_lua_field_string(L, idx, "cluster", &c->cluster) < 0)
		return cbb_err(err, "conduit_bb: out of memory");
	if (c->cluster && !c->cluster[0]) {
		free(c->cluster);
		c->cluster = NULL;
	}
	if (c->cluster)
		return 0;
	if (cbb_slurm_cluster_name(path, sizeof(path), conf, sizeof(conf)) < 0)
		return cbb_err(err, "conduit_bb: the cluster name is unknown: "
			       "Slurm gave none and %s has no ClusterName", path);
	c->cluster = strdup(conf);
	return c->cluster ? 0 : cbb_err(err, "conduit_bb: out of memory");
}

const char *cbb_lua_str(lua_State *L, int i)
{
	return lua_type(L, i) == LUA_TSTRING ? lua_tostring(L, i) : NULL;
}

long cbb_arg_id(lua_State *L, int idx)
{
	const char *s = lua_type(L, idx) == LUA_TSTRING ||
				lua_type(L, idx) == LUA_TNUMBER ?
				lua_tostring(L, idx) : NULL;
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 4294967295UL)
		return -1;
	return (long)v;
}

void cbb_register_globals(lua_State *L, const luaL_Reg *fns)
{
	for (; fns->name; fns++) {
		lua_pushcfunction(L, fns->func);
		lua_setglobal(L, fns->name);
	}
}

int cbb_push_result(lua_State *L, int rc, const char *msg, size_t len)
{
	lua_pushinteger(L, rc == 0 ? 0 : -1); /* slurm.SUCCESS / ERROR */
	if (!msg)
		return 1;
	lua_pushlstring(L, msg, len);
	return 2;
}

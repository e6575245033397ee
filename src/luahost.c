/* luahost.c - see luahost.h */
#include "luahost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	cbb_call_t *c = lua_newuserdata(L, sizeof(*c));

	memset(c, 0, sizeof(*c));
	cbb_config_defaults(&c->cfg);
	if (luaL_newmetatable(L, CALL_MT)) {
		lua_pushcfunction(L, call_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return c;
}

void cbb_call_done(cbb_call_t *c)
{
	cbb_config_free(&c->cfg);
	cbb_plan_free(&c->plan);
	free(c->script);
	free(c->user_name);
	free(c->work_dir);
	free(c->name);
	c->script = c->user_name = c->work_dir = c->name = NULL;
	c->script_len = 0;
}

/* job_info may be a table or a userdata-backed proxy: read via __index. */
static int field_string(lua_State *L, int idx, const char *key, char **dst)
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

static uint32_t field_u32(lua_State *L, int idx, const char *key,
			  uint32_t dflt)
{
	lua_Number v;
	uint32_t r = dflt;

	lua_getfield(L, idx, key);
	if (lua_type(L, -1) == LUA_TNUMBER) {
		v = lua_tonumber(L, -1);
		if (v >= 0 && v <= 4294967295.0)
			r = (uint32_t)v;
	}
	lua_pop(L, 1);
	return r;
}

int cbb_call_job(lua_State *L, cbb_call_t *c, int idx, unsigned long uid)
{
	cbb_job_t *j = &c->job;

	memset(j, 0, sizeof(*j));
	j->array_task_id = CBB_NO_VAL;
	j->user_id = (uint32_t)uid;
	if (lua_type(L, idx) != LUA_TTABLE && lua_type(L, idx) != LUA_TUSERDATA)
		return 0;
	idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
	j->job_id = field_u32(L, idx, "job_id", 0);
	j->array_job_id = field_u32(L, idx, "array_job_id", 0);
	j->array_task_id = field_u32(L, idx, "array_task_id", CBB_NO_VAL);
	if (field_string(L, idx, "user_name", &c->user_name) < 0 ||
	    field_string(L, idx, "work_dir", &c->work_dir) < 0 ||
	    field_string(L, idx, "name", &c->name) < 0)
		return -1;
	j->user_name = c->user_name;
	j->work_dir = c->work_dir;
	j->name = c->name;
	return 0;
}

void cbb_log(lua_State *L, int level, const char *fmt, ...)
{
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
	if (level == CBB_LOG_ERROR) {
		lua_getfield(L, -1, "error");
		lua_pushstring(L, msg);
		n = 1;
	} else {
		lua_getfield(L, -1, "log");
		lua_pushinteger(L, level);
		lua_pushstring(L, msg);
		n = 2;
	}
	if (!lua_isfunction(L, -1 - n)) {
		lua_pop(L, n + 2);
		return;
	}
	if (lua_pcall(L, n, 0, 0) != 0)
		lua_pop(L, 1); /* a broken logger must not break the hook */
	lua_pop(L, 1);
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

int cbb_push_result(lua_State *L, int rc, const char *msg, size_t len)
{
	lua_pushinteger(L, rc == 0 ? 0 : -1); /* slurm.SUCCESS / ERROR */
	if (!msg)
		return 1;
	lua_pushlstring(L, msg, len);
	return 2;
}

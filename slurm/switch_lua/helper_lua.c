/*
 * helper_lua.c - switch-lua-run's Lua side (helper.h): values between
 * Lua and the wire form, slurm.to_json, and the slurm table a hook sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "frame.h"
#include "helper.h"
#include "wire.h"

#if LUA_VERSION_NUM < 502
#define lua_rawlen lua_objlen
#endif

#define NO_VAL     0xfffffffeU
#define NO_VAL16   0xfffeU
#define INFINITE   0xffffffffU
#define INFINITE16 0xffffU

/* ---- Lua <-> wire ------------------------------------------------------- */

/* Push the wire value v; returns 0, or -1 when it is not well formed. */
int swl_push_wire(lua_State *L, const swl_val_t *v)
{
	const unsigned char *p, *end;

	luaL_checkstack(L, 4, "switch-lua-run: values nest too deep");
	switch (v->tag) {
	case 'n':
		lua_pushnil(L);
		return 0;
	case 'f':
	case 't':
		lua_pushboolean(L, v->tag == 't');
		return 0;
	case 'i':
		lua_pushinteger(L, (lua_Integer)v->i);
		return 0;
	case 'd':
		lua_pushnumber(L, (lua_Number)v->d);
		return 0;
	case 's':
		lua_pushlstring(L, (const char *)v->s, v->n);
		return 0;
	case '{':
		lua_newtable(L);
		p = v->s;
		end = v->s + v->n;
		while (p < end) {
			swl_val_t k, x;

			p = swl_get(p, end, &k);
			if (!p || swl_push_wire(L, &k) < 0)
				return -1;
			p = swl_get(p, end, &x);
			if (!p || swl_push_wire(L, &x) < 0)
				return -1;
			lua_rawset(L, -3);
		}
		return 0;
	}
	return -1;
}

/*
 * Store the Lua value at idx.  Strings, numbers, booleans and tables of
 * them only; a table met twice on the way down (a cycle) is refused.
 * Returns NULL, or what cannot be stored.
 */
const char *swl_put_lua(lua_State *L, int idx, swl_out_t *o, int depth)
{
	const char *why;
	lua_Number d;

	idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		swl_put_nil(o);
		return NULL;
	case LUA_TBOOLEAN:
		swl_put_bool(o, lua_toboolean(L, idx));
		return NULL;
	case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
		if (lua_isinteger(L, idx)) {
			swl_put_int(o, (int64_t)lua_tointeger(L, idx));
			return NULL;
		}
#endif
		d = lua_tonumber(L, idx);
		/* whole numbers stay whole, so 5.1 and 5.4 store the same */
		if (d == floor(d) && fabs(d) < 9007199254740992.0)
			swl_put_int(o, (int64_t)d);
		else
			swl_put_double(o, (double)d);
		return NULL;
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, idx, &n);

		swl_put_str(o, s, n);
		return NULL;
	}
	case LUA_TTABLE:
		if (depth >= SWL_WIRE_DEPTH - 2)
			return "tables nested too deep (or a cycle)";
		luaL_checkstack(L, 4, "switch-lua-run: values nest too deep");
		swl_open(o);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			int kt = lua_type(L, -2);

			/* a table met again through shared subtables is
			 * written again: the output's cap bounds the walk */
			if (o->bad) {
				lua_pop(L, 2);
				return "more than the wire's 1 MiB";
			}
			if (kt != LUA_TSTRING && kt != LUA_TNUMBER &&
			    kt != LUA_TBOOLEAN) {
				lua_pop(L, 2);
				return "a key that is not a string, number or "
				       "boolean";
			}
			if ((why = swl_put_lua(L, -2, o, depth + 1)) ||
			    (why = swl_put_lua(L, -1, o, depth + 1))) {
				lua_pop(L, 2);
				return why;
			}
			lua_pop(L, 1);
		}
		swl_close(o);
		return NULL;
	}
	return lua_typename(L, lua_type(L, idx));
}

/* ---- slurm.to_json -------------------------------------------------------- */

/* JSON text is built in a C buffer (swl_out_t as plain bytes), so the
 * walk may push and pop on the Lua stack as it likes. */
static void add(swl_out_t *b, const char *s)
{
	swl_put_raw(b, s, strlen(s));
}

static void json_str(swl_out_t *b, const char *s, size_t n)
{
	size_t i;

	add(b, "\"");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			swl_put_raw(b, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			add(b, esc);
		} else {
			swl_put_raw(b, &s[i], 1);
		}
	}
	add(b, "\"");
}

/* table.sort comparator for keys of mixed types: by tostring */
static int key_less(lua_State *L)
{
	lua_getglobal(L, "tostring");
	lua_pushvalue(L, 1);
	lua_call(L, 1, 1);
	lua_getglobal(L, "tostring");
	lua_pushvalue(L, 2);
	lua_call(L, 1, 1);
	lua_pushboolean(L, strcmp(lua_tostring(L, -2), lua_tostring(L, -1)) < 0);
	return 1;
}

static void json_value(lua_State *L, int idx, swl_out_t *b, int depth);

static void json_table(lua_State *L, int idx, swl_out_t *b, int depth)
{
	size_t n = lua_rawlen(L, idx), count = 0, i;
	int keys;

	/* past the output's cap (shared subtables are written each time
	 * they are met): nothing more is walked */
	if (b->bad)
		return;

	lua_pushnil(L);
	while (lua_next(L, idx)) {
		count++;
		lua_pop(L, 1);
	}
	if (count == n && n > 0) { /* a sequence: an array */
		add(b, "[");
		for (i = 1; i <= n && !b->bad; i++) {
			if (i > 1)
				add(b, ",");
			lua_rawgeti(L, idx, (int)i);
			json_value(L, lua_gettop(L), b, depth + 1);
			lua_pop(L, 1);
		}
		add(b, "]");
		return;
	}
	/* an object, keys sorted: the same text on every call */
	lua_newtable(L);
	keys = lua_gettop(L);
	i = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_rawseti(L, keys, (int)++i);
	}
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "sort");
	lua_pushvalue(L, keys);
	lua_pushcfunction(L, key_less);
	lua_call(L, 2, 0);
	lua_pop(L, 1);
	add(b, "{");
	for (i = 1; i <= count; i++) {
		const char *k;
		size_t kn;

		if (b->bad)
			break;
		if (i > 1)
			add(b, ",");
		lua_rawgeti(L, keys, (int)i);
		lua_getglobal(L, "tostring");
		lua_pushvalue(L, -2);
		lua_call(L, 1, 1);
		k = lua_tolstring(L, -1, &kn);
		json_str(b, k, kn);
		add(b, ":");
		lua_pop(L, 1);
		lua_rawget(L, idx);
		json_value(L, lua_gettop(L), b, depth + 1);
		lua_pop(L, 1);
	}
	add(b, "}");
	lua_pop(L, 1);
}

static void json_value(lua_State *L, int idx, swl_out_t *b, int depth)
{
	char num[64];
	size_t n;
	const char *s;
	lua_Number d;

	luaL_checkstack(L, 8, "slurm.to_json: nested too deep");
	switch (depth > SWL_WIRE_DEPTH ? LUA_TNIL : lua_type(L, idx)) {
	case LUA_TBOOLEAN:
		add(b, lua_toboolean(L, idx) ? "true" : "false");
		return;
	case LUA_TNUMBER:
		d = lua_tonumber(L, idx);
		if (d != d || d == HUGE_VAL || d == -HUGE_VAL)
			add(b, "null");
		else {
			if (d == floor(d) && fabs(d) < 1e15)
				snprintf(num, sizeof(num), "%.0f", (double)d);
			else
				snprintf(num, sizeof(num), "%.17g", (double)d);
			add(b, num);
		}
		return;
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &n);
		json_str(b, s, n);
		return;
	case LUA_TTABLE:
		json_table(L, idx, b, depth);
		return;
	}
	add(b, "null");
}

/* slurm.to_json(value) -> string */
static int l_to_json(lua_State *L)
{
	swl_out_t b;

	lua_settop(L, 1);
	swl_out_init(&b);
	json_value(L, 1, &b, 0);
	if (b.bad) {
		swl_out_free(&b);
		return luaL_error(L, "slurm.to_json: out of memory");
	}
	lua_pushlstring(L, b.data ? (const char *)b.data : "", b.len);
	swl_out_free(&b);
	return 1;
}

/* ---- the slurm table ------------------------------------------------------ */

/* slurm.log_*(fmt, ...): string.format over all the arguments. */
static int l_log(lua_State *L)
{
	char level = (char)lua_tointeger(L, lua_upvalueindex(1));
	int n = lua_gettop(L);
	const char *msg;
	size_t len;

	lua_getglobal(L, "string");
	lua_getfield(L, -1, "format");
	lua_remove(L, -2);
	lua_insert(L, 1);
	lua_call(L, n, 1);
	msg = lua_tolstring(L, -1, &len);
	if (msg)
		swl_say(level, msg, len);
	return 0;
}

/* slurm.log(level, msg) and slurm.error(msg), as src/lua/slurm_lua.c
 * has them: level 0 info, 1 verbose, 2 and above debug */
static int l_log_level(lua_State *L)
{
	lua_Number n = luaL_optnumber(L, 1, 0);
	const char *msg;
	size_t len;

	msg = luaL_optlstring(L, 2, "", &len);
	swl_say(n >= 2 ? SWL_LOG_DEBUG : n >= 1 ? SWL_LOG_VERBOSE :
		SWL_LOG_INFO, msg, len);
	return 0;
}

static int l_error(lua_State *L)
{
	size_t len;
	const char *msg = luaL_optlstring(L, 1, "", &len);

	swl_say(SWL_LOG_ERROR, msg, len);
	return 0;
}

/* print(...): to the log, as Slurm's daemons have no terminal */
static int l_print(lua_State *L)
{
	int n = lua_gettop(L), i;
	swl_out_t b;

	swl_out_init(&b);
	for (i = 1; i <= n; i++) {
		const char *s;
		size_t len;

		lua_getglobal(L, "tostring");
		lua_pushvalue(L, i);
		lua_call(L, 1, 1);
		s = lua_tolstring(L, -1, &len);
		if (i > 1)
			swl_put_raw(&b, "\t", 1);
		if (s)
			swl_put_raw(&b, s, len);
		lua_pop(L, 1);
	}
	swl_say(SWL_LOG_INFO, b.data ? (const char *)b.data : "", b.len);
	swl_out_free(&b);
	return 0;
}

void swl_slurm_table(lua_State *L, const char *cluster)
{
	static const struct {
		const char *name;
		char level;
	} logs[] = {
		{ "log_error", SWL_LOG_ERROR }, { "log_info", SWL_LOG_INFO },
		{ "log_user", SWL_LOG_INFO }, { "log_verbose", SWL_LOG_VERBOSE },
		{ "log_debug", SWL_LOG_DEBUG }, { "log_debug2", SWL_LOG_DEBUG },
		{ "log_debug3", SWL_LOG_DEBUG }, { "log_debug4", SWL_LOG_DEBUG },
	};
	static const struct {
		const char *name;
		lua_Number v;
	} nums[] = {
		{ "SUCCESS", 0 }, { "ERROR", -1 }, { "FAILURE", -1 },
		{ "EAGAIN", EAGAIN }, { "NO_VAL", NO_VAL }, { "NO_VAL16", NO_VAL16 },
		{ "INFINITE", INFINITE }, { "INFINITE16", INFINITE16 },
	};
	size_t i;

	lua_newtable(L);
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		lua_pushinteger(L, logs[i].level);
		lua_pushcclosure(L, l_log, 1);
		lua_setfield(L, -2, logs[i].name);
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		lua_pushinteger(L, (lua_Integer)nums[i].v);
		lua_setfield(L, -2, nums[i].name);
	}
	lua_pushcfunction(L, l_to_json);
	lua_setfield(L, -2, "to_json");
	lua_pushcfunction(L, l_log_level);
	lua_setfield(L, -2, "log");
	lua_pushcfunction(L, l_error);
	lua_setfield(L, -2, "error");
	if (cluster) {
		lua_pushstring(L, cluster);
		lua_setfield(L, -2, "CLUSTER_NAME");
	}
	lua_setglobal(L, "slurm");
	lua_pushcfunction(L, l_print);
	lua_setglobal(L, "print");
}


/*
 * helper.c - switch-lua-run: runs one hook of switch.lua in a fresh Lua
 * state, for the switch/lua plugin (switch_lua.c), then exits.
 *
 * The plugin starts it in a process group of its own with stdin, stdout
 * and stderr on /dev/null, the request (wire.h) on fd 3 and the answer
 * stream (frame.h) on fd 4; it kills the whole group at switch_timeout
 * and again once the helper has exited.  The helper marks fd 4
 * close-on-exec first, so nothing the script starts can write to it, and
 * sends everything the script logs (slurm.log_*, print) back as 'L'
 * frames for the plugin to put in the daemon's log.
 *
 * Requests: { hook, script, cluster, args = { ... } }, where hook is
 * "load" (ask slurm_switch_block_job_complete and
 * slurm_switch_setup_special_steps) or the name of a hook without its
 * slurm_switch_ prefix (job_start, job_complete, step_preinit, step_init,
 * step_postfini).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "frame.h"
#include "wire.h"

#if LUA_VERSION_NUM < 502
#define lua_rawlen lua_objlen
#endif

#define NO_VAL     0xfffffffeU
#define NO_VAL16   0xfffeU
#define INFINITE   0xffffffffU
#define INFINITE16 0xffffU

/* ---- the answer stream --------------------------------------------------- */

static void write_all(const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(SWL_FD_ANSWER, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the plugin is gone: nobody to answer */
		c += w;
		n -= (size_t)w;
	}
}

static void frame(char type, const void *a, size_t na, const void *b,
		  size_t nb)
{
	unsigned char head[SWL_FRAME_HEAD];
	size_t n = na + nb;
	int i;

	head[0] = (unsigned char)type;
	for (i = 0; i < 4; i++)
		head[1 + i] = (unsigned char)(n >> (8 * i));
	write_all(head, sizeof(head));
	write_all(a, na);
	write_all(b, nb);
}

static void say(char level, const char *msg, size_t len)
{
	if (len > 16384)
		len = 16384;
	frame('L', &level, 1, msg, len);
}

static void sayf(char level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sayf(char level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say(level, msg, n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n :
	    sizeof(msg) - 1);
}

/* ---- Lua <-> wire ------------------------------------------------------- */

/* Push the wire value v; returns 0, or -1 when it is not well formed. */
static int push_wire(lua_State *L, const swl_val_t *v)
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
			if (!p || push_wire(L, &k) < 0)
				return -1;
			p = swl_get(p, end, &x);
			if (!p || push_wire(L, &x) < 0)
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
static const char *put_lua(lua_State *L, int idx, swl_out_t *o, int depth)
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
			if ((why = put_lua(L, -2, o, depth + 1)) ||
			    (why = put_lua(L, -1, o, depth + 1))) {
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
		say(level, msg, len);
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
	say(SWL_LOG_INFO, b.data ? (const char *)b.data : "", b.len);
	swl_out_free(&b);
	return 0;
}

static void slurm_table(lua_State *L, const char *cluster)
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
	if (cluster) {
		lua_pushstring(L, cluster);
		lua_setfield(L, -2, "CLUSTER_NAME");
	}
	lua_setglobal(L, "slurm");
	lua_pushcfunction(L, l_print);
	lua_setglobal(L, "print");
}

/* ---- one call --------------------------------------------------------------- */

typedef struct {
	swl_out_t out;
	const char *status;
	char msg[1024];
} answer_t;

static void answer_msg(answer_t *a, const char *status, const char *msg)
{
	a->status = status;
	snprintf(a->msg, sizeof(a->msg), "%s", msg ? msg : "");
}

static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	lua_pushstring(L, msg ? msg : "(error object is not a string)");
	return 1;
}

/* Load the script: a chunk that returns a number other than 0 refuses. */
static int load_script(lua_State *L, const char *script, answer_t *a)
{
	char msg[1024];

	lua_pushcfunction(L, traceback);
	if (luaL_loadfile(L, script) || lua_pcall(L, 0, 1, -2)) {
		snprintf(msg, sizeof(msg), "%s: %s", script,
			 lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
		answer_msg(a, "load", msg);
		return -1;
	}
	if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) != 0) {
		snprintf(msg, sizeof(msg), "%s: returned %g on load", script,
			 (double)lua_tonumber(L, -1));
		answer_msg(a, "load", msg);
		return -1;
	}
	lua_settop(L, 0);
	return 0;
}

/* Ask a yes/no hook; a missing one or an error is no. */
static bool ask(lua_State *L, const char *fn)
{
	bool v = false;

	lua_pushcfunction(L, traceback);
	lua_getglobal(L, fn);
	if (!lua_isfunction(L, -1)) {
		lua_settop(L, 0);
		return false;
	}
	if (lua_pcall(L, 0, 1, 1) != 0)
		sayf(SWL_LOG_ERROR, "%s", lua_tostring(L, -1));
	else
		v = lua_toboolean(L, -1);
	lua_settop(L, 0);
	return v;
}

/* step_init's env table as name -> string or false */
static void put_env(lua_State *L, int idx, swl_out_t *o)
{
	swl_open(o);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *name = lua_type(L, -2) == LUA_TSTRING ?
					   lua_tostring(L, -2) : NULL;
		char num[64];

		if (!name || !name[0] || strchr(name, '=')) {
			sayf(SWL_LOG_ERROR, "%s", "step_init: an environment name "
			    "that is not a string without '=' is left out");
			lua_pop(L, 1);
			continue;
		}
		switch (lua_type(L, -1)) {
		case LUA_TSTRING:
			swl_kv_str(o, name, lua_tostring(L, -1));
			break;
		case LUA_TNUMBER:
#if LUA_VERSION_NUM >= 503
			if (lua_isinteger(L, -1))
				snprintf(num, sizeof(num), "%lld",
					 (long long)lua_tointeger(L, -1));
			else
#endif
				snprintf(num, sizeof(num), "%.14g",
					 (double)lua_tonumber(L, -1));
			swl_kv_str(o, name, num);
			break;
		case LUA_TBOOLEAN:
			if (lua_toboolean(L, -1))
				swl_kv_str(o, name, "1");
			else
				swl_kv_bool(o, name, false);
			break;
		default:
			sayf(SWL_LOG_ERROR, "step_init: %s has a value that is "
			     "not a string, number or boolean: left out", name);
		}
		lua_pop(L, 1);
	}
	swl_close(o);
}

static void call_hook(lua_State *L, const char *hook, const swl_val_t *args,
		      answer_t *a)
{
	char fn[64], msg[1024];
	const unsigned char *p, *end;
	int nargs = 0, base;
	swl_val_t k, v;
	bool start = !strcmp(hook, "job_start");

	snprintf(fn, sizeof(fn), "slurm_switch_%s", hook);
	lua_pushcfunction(L, traceback);
	base = lua_gettop(L);
	lua_getglobal(L, fn);
	if (!lua_isfunction(L, -1)) {
		snprintf(msg, sizeof(msg), "switch.lua defines no %s", fn);
		answer_msg(a, "error", msg);
		return;
	}
	/* args = { [1] = ..., [2] = ... }: pushed in order, nil kept */
	if (args->tag == '{') {
		int i;

		for (i = 1; i <= 4; i++) {
			bool found = false;

			p = args->s;
			end = args->s + args->n;
			while (p && p < end) {
				p = swl_get(p, end, &k);
				p = p ? swl_get(p, end, &v) : NULL;
				if (p && k.tag == 'i' && k.i == i) {
					found = true;
					break;
				}
			}
			if (!found)
				break;
			if (push_wire(L, &v) < 0) {
				answer_msg(a, "error", "bad request");
				return;
			}
			nargs++;
		}
	}
	if (lua_pcall(L, nargs, 2, base) != 0) {
		answer_msg(a, "error", lua_tostring(L, -1));
		return;
	}
	/* results at base+1 (rc) and base+2 */
	if (lua_type(L, base + 1) != LUA_TNUMBER) {
		snprintf(msg, sizeof(msg), "%s returned %s, not a number", fn,
			 luaL_typename(L, base + 1));
		answer_msg(a, "badrc", msg);
		return;
	}
	{
		lua_Number rc = lua_tonumber(L, base + 1);

		if (rc != floor(rc) || fabs(rc) > 2147483647.0) {
			snprintf(msg, sizeof(msg), "%s returned %g, not a whole "
				 "number", fn, (double)rc);
			answer_msg(a, "badrc", msg);
			return;
		}
		swl_kv_int(&a->out, "rc", (int64_t)rc);
		if (start && rc == 0 && !lua_isnil(L, base + 2)) {
			swl_out_t ji;
			const char *why = NULL;
			char big[128];

			swl_out_init(&ji);
			if (!lua_istable(L, base + 2))
				why = luaL_typename(L, base + 2);
			else
				why = put_lua(L, base + 2, &ji, 0);
			if (!why && (ji.bad || ji.len > SWL_JOBINFO_MAX)) {
				snprintf(big, sizeof(big), "%s than %zu KiB (it "
					 "rides in the job's state and in every "
					 "step's credential)", ji.bad ?
					 "far more" : "more",
					 SWL_JOBINFO_MAX / 1024);
				why = big;
			}
			if (why) {
				snprintf(msg, sizeof(msg), "job_start's jobinfo "
					 "cannot be stored: %s", why);
				answer_msg(a, "unsaved", msg);
				swl_out_free(&ji);
				return;
			}
			swl_put_cstr(&a->out, "value");
			swl_put_raw(&a->out, ji.data, ji.len);
			swl_out_free(&ji);
		} else if (!strcmp(hook, "step_init") && lua_istable(L, base + 2)) {
			swl_put_cstr(&a->out, "value");
			put_env(L, base + 2, &a->out);
		} else if (!strcmp(hook, "step_init") &&
			   !lua_isnil(L, base + 2)) {
			sayf(SWL_LOG_ERROR, "%s", "step_init: its environment is not a "
			    "table: none set");
		}
	}
	a->status = "ok";
}

static int read_request(unsigned char **buf, size_t *len)
{
	size_t cap = 4096;
	unsigned char *b = malloc(cap);

	*len = 0;
	if (!b)
		return -1;
	for (;;) {
		ssize_t r;

		if (*len == cap) {
			unsigned char *nb;

			if (cap >= SWL_WIRE_MAX * 2 || !(nb = realloc(b, cap * 2))) {
				free(b);
				return -1;
			}
			b = nb;
			cap *= 2;
		}
		r = read(SWL_FD_REQUEST, b + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	close(SWL_FD_REQUEST);
	*buf = b;
	return 0;
}

static char *field_str(const swl_val_t *t, const char *k)
{
	swl_val_t v;
	char *s;

	if (!swl_field(t, k, &v) || v.tag != 's' || memchr(v.s, '\0', v.n))
		return NULL;
	s = malloc(v.n + 1);
	if (s) {
		memcpy(s, v.s, v.n);
		s[v.n] = '\0';
	}
	return s;
}

/*
 * The helper runs as root where slurmd or slurmstepd started it: nothing
 * of that place may steer it.  "/" as its working directory (Lua's
 * default search path tries ./?.lua before any C module: a
 * conduit_bb.lua planted in slurmd's directory would run as root), a
 * fixed environment (PATH, HOME, LANG, and only the variables that say
 * where the configs and Lua's modules are, as the daemon's own
 * environment set them: root's, never a user's; a relative entry of
 * Lua's search paths is dropped, absolute_paths), the daemon's oom_score_adj (-999 in
 * slurmstepd) back to 0, and no descriptor but stdio and the two pipes.
 */
static void seal(void)
{
	static const char *const keep[] = {
		"SLURM_CONF", "CONDUIT_BB_CONF", "LUA_PATH", "LUA_CPATH",
		"LUA_PATH_5_2", "LUA_CPATH_5_2", "LUA_PATH_5_3", "LUA_CPATH_5_3",
		"LUA_PATH_5_4", "LUA_CPATH_5_4",
	};
	char *kept[sizeof(keep) / sizeof(keep[0])];
	size_t i;
	int fd;

	if (chdir("/") < 0)
		_exit(2);
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		const char *v = getenv(keep[i]);

		kept[i] = v ? strdup(v) : NULL;
	}
	if (clearenv() != 0)
		_exit(2);
	if (setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1) < 0 ||
	    setenv("HOME", "/", 1) < 0 || setenv("LANG", "C", 1) < 0)
		_exit(2);
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (kept[i] && setenv(keep[i], kept[i], 1) < 0)
			_exit(2);
		free(kept[i]);
	}
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) != 1) {
			/* (a kernel without it: nothing to reset) */
		}
		close(fd);
	}
	if (close_range(SWL_FD_ANSWER + 1, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (fd = SWL_FD_ANSWER + 1; fd < (max > 0 ? max : 65536); fd++)
			close(fd);
	}
}

/* Lua's search paths without a relative entry (./?.lua, ./?.so): only
 * the system's directories, whatever the working directory holds. */
static void absolute_paths(lua_State *L)
{
	static const char *const which[] = { "path", "cpath" };
	size_t i;

	lua_getglobal(L, "package");
	for (i = 0; i < 2 && lua_istable(L, -1); i++) {
		const char *p, *e;
		luaL_Buffer b;
		bool first = true;

		lua_getfield(L, -1, which[i]);
		p = lua_tostring(L, -1);
		luaL_buffinit(L, &b);
		for (; p && *p; p = *e ? e + 1 : e) {
			e = strchr(p, ';');
			if (!e)
				e = p + strlen(p);
			if (*p != '/')
				continue;
			if (!first)
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, (size_t)(e - p));
			first = false;
		}
		luaL_pushresult(&b);
		lua_setfield(L, -3, which[i]);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

int main(void)
{
	unsigned char *req = NULL;
	size_t req_len = 0;
	swl_val_t top, args;
	answer_t a;
	char *hook, *script, *cluster;
	lua_State *L;

	/* if the daemon that asked dies, so does the answer */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fcntl(SWL_FD_ANSWER, F_SETFD, FD_CLOEXEC) < 0)
		return 2;
	seal();
	if (read_request(&req, &req_len) < 0 || !swl_valid(req, req_len) ||
	    !swl_get(req, req + req_len, &top) || top.tag != '{') {
		sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: bad request");
		return 2;
	}
	hook = field_str(&top, "hook");
	script = field_str(&top, "script");
	cluster = field_str(&top, "cluster");
	if (!hook || !script) {
		sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: request without hook or "
		    "script");
		return 2;
	}
	if (!swl_field(&top, "args", &args))
		args.tag = 'n';

	memset(&a, 0, sizeof(a));
	swl_out_init(&a.out);
	swl_open(&a.out);
	L = luaL_newstate();
	if (!L) {
		sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: out of memory");
		return 2;
	}
	luaL_openlibs(L);
	absolute_paths(L);
	slurm_table(L, cluster);
	if (load_script(L, script, &a) == 0) {
		if (!strcmp(hook, "load")) {
			bool block = ask(L, "slurm_switch_block_job_complete");
			bool special = ask(L, "slurm_switch_setup_special_steps");

			swl_kv_int(&a.out, "rc", 0);
			swl_put_cstr(&a.out, "value");
			swl_open(&a.out);
			swl_kv_bool(&a.out, "block_job_complete", block);
			swl_kv_bool(&a.out, "setup_special_steps", special);
			swl_close(&a.out);
			a.status = "ok";
		} else {
			call_hook(L, hook, &args, &a);
		}
	}
	swl_kv_str(&a.out, "status", a.status ? a.status : "error");
	if (a.msg[0])
		swl_kv_str(&a.out, "msg", a.msg);
	swl_close(&a.out);
	if (a.out.bad) {
		/* an answer the plugin can read, saying so (not an exit the
		 * plugin would report as "exited without returning") */
		swl_out_free(&a.out);
		swl_out_init(&a.out);
		swl_open(&a.out);
		swl_kv_str(&a.out, "status", "error");
		swl_kv_str(&a.out, "msg", "switch-lua-run: the hook's answer is "
			   "over 1 MiB");
		swl_close(&a.out);
	}
	frame('R', a.out.data, a.out.len, "", 0);
	/* the answer is out: nothing after it may lose it (a script's __gc
	 * finalizers that hang or fail run in lua_close, so it is not run;
	 * the process's memory goes with it) */
	_exit(0);
}

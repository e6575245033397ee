/*
 * helper.c - switch-lua-run: runs one hook of switch.lua in a fresh Lua
 * state, for the switch/lua plugin (switch_lua.c), then exits.
 *
 * The plugin starts it through Slurm's run_command() (run.c): a process
 * group of its own, the request (wire.h) on stdin, and stdout as the
 * answer stream (frame.h); it kills the whole group at switch_timeout
 * and again once the helper has exited.  The helper first seals itself
 * (helper_seal.c): the answer stream moves to a close-on-exec
 * descriptor, so nothing the script starts can write to it, and stdio
 * becomes /dev/null.  Everything the script logs (slurm.log_*, print)
 * goes back as 'L' frames for the plugin to put in the daemon's log.
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
#include "helper.h"
#include "wire.h"

#if LUA_VERSION_NUM < 502
#define lua_rawlen lua_objlen
#endif


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
		swl_sayf(SWL_LOG_ERROR, "%s", lua_tostring(L, -1));
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
			swl_sayf(SWL_LOG_ERROR, "%s", "step_init: an environment name "
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
			swl_sayf(SWL_LOG_ERROR, "step_init: %s has a value that is "
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
			if (swl_push_wire(L, &v) < 0) {
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
				why = swl_put_lua(L, base + 2, &ji, 0);
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
			swl_sayf(SWL_LOG_ERROR, "%s", "step_init: its environment is not a "
			    "table: none set");
		}
	}
	a->status = "ok";
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
	if (!swl_seal(&req, &req_len))
		return 2;
	if (!req || !swl_valid(req, req_len) ||
	    !swl_get(req, req + req_len, &top) || top.tag != '{') {
		swl_sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: bad request");
		return 2;
	}
	hook = field_str(&top, "hook");
	script = field_str(&top, "script");
	cluster = field_str(&top, "cluster");
	if (!hook || !script) {
		swl_sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: request without hook or "
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
		swl_sayf(SWL_LOG_ERROR, "%s", "switch-lua-run: out of memory");
		return 2;
	}
	luaL_openlibs(L);
	swl_absolute_paths(L);
	swl_slurm_table(L, cluster);
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
	swl_answer(a.out.data, a.out.len);
	/* the answer is out: nothing after it may lose it (a script's __gc
	 * finalizers that hang or fail run in lua_close, so it is not run;
	 * the process's memory goes with it) */
	_exit(0);
}

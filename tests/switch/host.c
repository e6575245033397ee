/* host.c - see host.h */
#include "host.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define EAGAIN_RC 11

static host_t *current;

static void hlog(const char *fmt, ...)
{
	size_t n = strlen(current->log);
	va_list ap;

	if (n + 2 >= sizeof(current->log))
		return;
	va_start(ap, fmt);
	vsnprintf(current->log + n, sizeof(current->log) - n, fmt, ap);
	va_end(ap);
	n = strlen(current->log);
	if (n + 1 < sizeof(current->log)) {
		current->log[n] = '\n';
		current->log[n + 1] = '\0';
	}
}

static int l_log(lua_State *L)
{
	hlog("%s", luaL_optstring(L, -1, ""));
	return 0;
}

/* ---- pack / unpack: strings, numbers, booleans, nested tables ---------- */
typedef struct {
	char *p;
	size_t len, cap;
	int bad;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		o->bad = 1;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void pack_value(lua_State *L, int idx, out_t *o, int depth)
{
	char tmp[64];
	size_t n;
	const char *s;

	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &n);
		snprintf(tmp, sizeof(tmp), "S%zu:", n);
		put(o, tmp, strlen(tmp));
		put(o, s, n);
		break;
	case LUA_TNUMBER:
		snprintf(tmp, sizeof(tmp), "N%.17g;", (double)lua_tonumber(L, idx));
		put(o, tmp, strlen(tmp));
		break;
	case LUA_TBOOLEAN:
		put(o, lua_toboolean(L, idx) ? "B1" : "B0", 2);
		break;
	case LUA_TTABLE:
		if (depth > 8) {
			o->bad = 1;
			return;
		}
		idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
		put(o, "T", 1);
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			pack_value(L, -2, o, depth + 1);
			pack_value(L, -1, o, depth + 1);
			lua_pop(L, 1);
		}
		put(o, "E", 1);
		break;
	default:
		o->bad = 1; /* functions, userdata: cannot be stored */
	}
}

static const char *unpack_value(lua_State *L, const char *p, const char *end)
{
	char *e;
	size_t n;

	if (p >= end)
		return NULL;
	switch (*p) {
	case 'S':
		n = strtoul(p + 1, &e, 10);
		if (*e != ':' || (size_t)(end - e - 1) < n)
			return NULL;
		lua_pushlstring(L, e + 1, n);
		return e + 1 + n;
	case 'N':
		lua_pushnumber(L, strtod(p + 1, &e));
		return *e == ';' ? e + 1 : NULL;
	case 'B':
		lua_pushboolean(L, p[1] == '1');
		return p + 2;
	case 'T':
		lua_newtable(L);
		p++;
		while (p < end && *p != 'E') {
			p = unpack_value(L, p, end);
			if (!p)
				return NULL;
			p = unpack_value(L, p, end);
			if (!p)
				return NULL;
			lua_settable(L, -3);
		}
		return p < end ? p + 1 : NULL;
	}
	return NULL;
}

/* ---- a fresh state per call -------------------------------------------- */
static lua_State *fresh(host_t *h)
{
	lua_State *L = luaL_newstate();

	current = h;
	luaL_openlibs(L);
	lua_getglobal(L, "package");
	lua_pushstring(L, h->cpath);
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
	/* the contract's slurm table: log_info/log_error (format style),
	 * to_json, SUCCESS, ERROR, EAGAIN, and nothing else */
	lua_newtable(L);
	luaL_loadstring(L,
		"local sink = ... return "
		"function(...) sink(string.format(...)) end, "
		"function(...) sink('error: ' .. string.format(...)) end");
	lua_pushcfunction(L, l_log);
	lua_call(L, 1, 2);
	lua_setfield(L, -3, "log_error");
	lua_setfield(L, -2, "log_info");
	luaL_loadstring(L,
		"local function enc(v) local t = type(v) "
		"if t == 'table' then local o = {} "
		"for k, x in pairs(v) do o[#o + 1] = string.format('%q:', tostring(k)) .. enc(x) end "
		"table.sort(o) return '{' .. table.concat(o, ',') .. '}' "
		"elseif t == 'string' then return string.format('%q', v) "
		"else return tostring(v) end end return enc");
	lua_call(L, 0, 1);
	lua_setfield(L, -2, "to_json");
	lua_pushinteger(L, 0);
	lua_setfield(L, -2, "SUCCESS");
	lua_pushinteger(L, -1);
	lua_setfield(L, -2, "ERROR");
	lua_pushinteger(L, EAGAIN_RC);
	lua_setfield(L, -2, "EAGAIN");
	lua_pushstring(L, h->cluster ? h->cluster : "emulated");
	lua_setfield(L, -2, "CLUSTER_NAME");
	lua_setglobal(L, "slurm");
	if (luaL_loadfile(L, h->script) || lua_pcall(L, 0, 1, 0)) {
		hlog("load failed: %s", lua_tostring(L, -1));
		lua_close(L);
		return NULL;
	}
	/* the chunk may return nothing or SUCCESS */
	if (!lua_isnil(L, -1) && !(lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) == 0)) {
		hlog("load refused: the script returned a failure");
		lua_close(L);
		return NULL;
	}
	lua_pop(L, 1);
	return L;
}

static void push_job(lua_State *L, const host_job_t *j)
{
	lua_newtable(L);
	lua_pushinteger(L, j->job_id);
	lua_setfield(L, -2, "job_id");
	if (j->user_id >= 0) {
		lua_pushinteger(L, j->user_id);
		lua_setfield(L, -2, "user_id");
	}
	lua_pushstring(L, j->user_name);
	lua_setfield(L, -2, "user_name");
	lua_pushstring(L, j->nodes);
	lua_setfield(L, -2, "nodes");
	lua_pushinteger(L, j->num_nodes);
	lua_setfield(L, -2, "num_nodes");
	lua_pushstring(L, j->partition);
	lua_setfield(L, -2, "partition");
	if (j->network) {
		lua_pushstring(L, j->network);
		lua_setfield(L, -2, "network");
	}
}

static void push_jobinfo(lua_State *L, const host_job_t *j)
{
	if (!j->packed_len || !unpack_value(L, j->packed, j->packed + j->packed_len)) {
		lua_settop(L, lua_gettop(L));
		lua_pushnil(L);
	}
}

int host_load(host_t *h)
{
	lua_State *L = fresh(h);

	if (!L)
		return -1;
	lua_getglobal(L, "slurm_switch_block_job_complete");
	h->block_job_complete = lua_pcall(L, 0, 1, 0) == 0 && lua_toboolean(L, -1);
	lua_settop(L, 0);
	lua_getglobal(L, "slurm_switch_setup_special_steps");
	h->special_steps = lua_pcall(L, 0, 1, 0) == 0 && lua_toboolean(L, -1);
	lua_close(L);
	return 0;
}

/*
 * Run a slurmctld hook as slurmscriptd does: a child process with its own
 * state, killed at switch_timeout.  The child writes "rc\n<packed>".
 * Returns 0 when it answered, -1 on timeout or death, -2 on a failure
 * (Lua error, non-number rc).
 */
static int ctld_call(host_t *h, host_job_t *j, bool start, int *rc,
		     char *packed, size_t *plen)
{
	int fds[2], status;
	char buf[9000];
	size_t got = 0;
	pid_t pid;
	struct timespec t0, t;

	if (pipe(fds) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		lua_State *L;
		out_t o = { buf, 0, sizeof(buf) - 32, 0 };
		char head[32];
		int n;

		close(fds[0]);
		setpgid(0, 0);
		L = fresh(h);
		if (!L)
			_exit(3);
		lua_getglobal(L, start ? "slurm_switch_job_start" :
					 "slurm_switch_job_complete");
		push_job(L, j);
		if (!start)
			push_jobinfo(L, j);
		if (lua_pcall(L, start ? 1 : 2, 2, 0) != 0 ||
		    lua_type(L, 1) != LUA_TNUMBER) {
			hlog("%s failed: %s", start ? "job_start" : "job_complete",
			     lua_tostring(L, -1));
			n = snprintf(head, sizeof(head), "E\n");
		} else {
			if (start && lua_istable(L, 2))
				pack_value(L, 2, &o, 0);
			n = snprintf(head, sizeof(head), "%d\n", (int)lua_tointeger(L, 1));
			if (o.bad) /* the jobinfo could not be saved */
				o.len = 0;
		}
		/* the child's log goes back too, after a NUL */
		if (write(fds[1], head, (size_t)n) < 0 ||
		    write(fds[1], o.p, o.len) < 0 || write(fds[1], "", 1) < 0 ||
		    write(fds[1], h->log, strlen(h->log)) < 0)
			_exit(4);
		lua_close(L);
		_exit(0);
	}
	close(fds[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		long left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = (long)h->timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 +
					       (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			kill(-pid, SIGKILL); /* the whole process group */
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(fds[0]);
			return -1;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		r = read(fds[0], buf + got, sizeof(buf) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	buf[got] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got == 0)
		return -1; /* exited without returning */
	{
		char *nl = strchr(buf, '\n'), *nul;

		if (!nl)
			return -1;
		nul = memchr(nl + 1, '\0', got - (size_t)(nl + 1 - buf));
		if (nul) {
			size_t n = strlen(h->log);

			snprintf(h->log + n, sizeof(h->log) - n, "%s", nul + 1);
		}
		if (buf[0] == 'E')
			return -2;
		*rc = atoi(buf);
		*plen = nul ? (size_t)(nul - nl - 1) : 0;
		memcpy(packed, nl + 1, *plen);
	}
	return 0;
}

start_result_t host_job_start(host_t *h, host_job_t *j)
{
	int rc = 0, r;

	if (!j->network || !j->network[0])
		return START_DECLINED; /* not called without --network */
	r = ctld_call(h, j, true, &rc, j->packed, &j->packed_len);
	if (r == -1) {
		/* timed out: the controller calls job_complete with nil */
		j->packed_len = 0;
		host_job_complete(h, j);
		return START_TIMEOUT;
	}
	if (r == -2 || rc != 0) {
		j->packed_len = 0;
		return START_FAILED; /* requeued or cancelled; no job_complete */
	}
	return j->packed_len ? START_ACCEPTED : START_DECLINED;
}

complete_result_t host_job_complete(host_t *h, host_job_t *j)
{
	unsigned tries;
	char scratch[8192];
	size_t slen;

	for (tries = 0;; tries++) {
		int rc = 0, r;

		j->complete_calls++;
		r = ctld_call(h, j, false, &rc, scratch, &slen);
		if (r != 0 || rc < 0)
			return COMPLETE_DRAINED;
		if (rc == EAGAIN_RC) {
			if (!h->block_job_complete || tries >= h->retries)
				return COMPLETE_DRAINED;
			continue; /* the next periodic check */
		}
		if (rc > 0)
			hlog("job_complete returned %d (logged only)", rc);
		return COMPLETE_RELEASED;
	}
}

/* Call a step hook in a fresh state: fail-open on Lua errors. */
static int step_call(host_t *h, host_job_t *j, long step_job, const char *hook,
		     char *env)
{
	lua_State *L = fresh(h);
	int rc;

	if (!L)
		return 0;
	lua_getglobal(L, hook);
	lua_newtable(L);
	lua_pushinteger(L, step_job);
	lua_setfield(L, -2, "job_id");
	lua_pushstring(L, "sluid-1");
	lua_setfield(L, -2, "sluid");
	lua_pushstring(L, j->partition);
	lua_setfield(L, -2, "partition");
	push_jobinfo(L, j);
	if (lua_pcall(L, 2, 2, 0) != 0) {
		hlog("%s: Lua error (step proceeds): %s", hook, lua_tostring(L, -1));
		lua_close(L);
		return 0;
	}
	rc = lua_type(L, 1) == LUA_TNUMBER ? (int)lua_tointeger(L, 1) : 0;
	if (rc > 0)
		hlog("%s returned %d (logged only)", hook, rc);
	if (env && lua_istable(L, 2)) {
		/* apply the env table: strings set, numbers stringified,
		 * true -> "1", false unsets; SLURM_* is Slurm's (overwritten) */
		lua_pushnil(L);
		while (lua_next(L, 2)) {
			char line[1024], value[512];
			const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
			char *pos;

			if (!k || !strncmp(k, "SLURM_", 6)) {
				lua_pop(L, 1);
				continue;
			}
			value[0] = '\0';
			if (lua_type(L, -1) == LUA_TBOOLEAN)
				snprintf(value, sizeof(value), "%s", lua_toboolean(L, -1) ? "1" : "");
			else
				snprintf(value, sizeof(value), "%s", lua_tostring(L, -1));
			/* remove an existing NAME= line */
			snprintf(line, sizeof(line), "%s=", k);
			for (pos = strstr(env, line); pos; pos = strstr(pos + 1, line))
				if (pos == env || pos[-1] == '\n') {
					char *eol = strchr(pos, '\n');

					memmove(pos, eol ? eol + 1 : pos + strlen(pos),
						strlen(eol ? eol + 1 : "") + 1);
					break;
				}
			if (!(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
				snprintf(line, sizeof(line), "%s=%s\n", k, value);
				strncat(env, line, 4095 - strlen(env));
			}
			lua_pop(L, 1);
		}
	}
	lua_close(L);
	return rc;
}

void host_step_of(host_t *h, host_job_t *j, long step_job, const char *env,
		  step_result_t *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->env, sizeof(r->env), "%s", env ? env : "");
	if (!j->packed_len)
		return; /* step hooks run only for accepted jobs */
	if (step_call(h, j, step_job, "slurm_switch_step_preinit", NULL) < 0) {
		r->failed = true;
		return;
	}
	if (step_call(h, j, step_job, "slurm_switch_step_init", r->env) < 0) {
		r->failed = true;
	}
	/* postfini runs after the tasks, whatever happened to them */
	if (step_call(h, j, step_job, "slurm_switch_step_postfini", NULL) < 0)
		r->drain = true;
}

void host_step(host_t *h, host_job_t *j, const char *env, step_result_t *r)
{
	host_step_of(h, j, j->job_id, env, r);
}

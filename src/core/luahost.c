/* luahost.c - see luahost.h */
#include "luahost.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

#define CALL_MT "conduit_bb.call"
/* Slurm's own cap on batch scripts is 4 MiB by default (max_script_size). */
#define CBB_SCRIPT_MAX ((size_t)64 << 20)

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
	cbb_grpc_close(&c->grpc);
	cbb_transfers_free(&c->transfers);
	cbb_buf_free(&c->out);
	cbb_buf_free(&c->logs);
	free(c->cluster);
	free(c->bb_state);
	c->cluster = c->bb_state = NULL;
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

static uint64_t field_whole(lua_State *L, int idx, const char *key,
			    double max, uint64_t dflt)
{
	uint64_t r = dflt;

	lua_getfield(L, idx, key);
	if (!cbb_lua_whole(L, -1, max, &r))
		r = dflt;
	lua_pop(L, 1);
	return r;
}

static uint32_t field_u32(lua_State *L, int idx, const char *key,
			  uint32_t dflt)
{
	return (uint32_t)field_whole(L, idx, key, 4294967295.0, dflt);
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
	c->restart = field_u32(L, idx, "restart_cnt", 0);
	c->job_state = field_u32(L, idx, "job_state", 0);
	/* seconds since 1970, up to the year 9999 */
	c->submit_time = (int64_t)field_whole(L, idx, "submit_time",
					      253402300799.0, 0);
	if (field_string(L, idx, "burst_buffer_state", &c->bb_state) < 0 ||
	    field_string(L, idx, "user_name", &c->user_name) < 0 ||
	    field_string(L, idx, "work_dir", &c->work_dir) < 0 ||
	    field_string(L, idx, "name", &c->name) < 0)
		return -1;
	j->user_name = c->user_name;
	j->work_dir = c->work_dir;
	j->name = c->name;
	return 0;
}

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
	} else if (level == -2) {
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
		if (!call_logger(L, "error", -1, msg))
			call_logger(L, "log_error", -2, msg);
	} else if (!call_logger(L, "log", level, msg) &&
		   !call_logger(L, by_level[level < 0 || level > 2 ? 0 : level],
				-2, msg)) {
		call_logger(L, "log_info", -2, msg);
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
	    field_string(L, idx, "cluster", &c->cluster) < 0)
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

bool cbb_slurm_state_of(const char *path, uint32_t job_id, const char *leaf,
			char *state, size_t size)
{
	char tail[96];
	size_t pl = strlen(path), tl;

	tl = (size_t)snprintf(tail, sizeof(tail), "/hash.%u/job.%u/%s",
			      job_id % 10, job_id, leaf);
	if (tl >= sizeof(tail) || pl <= tl || pl - tl >= size ||
	    strcmp(path + pl - tl, tail) || path[0] != '/')
		return false;
	memcpy(state, path, pl - tl);
	state[pl - tl] = '\0';
	return true;
}

int cbb_read_job_script(const cbb_job_t *job, const char *path, char **text,
			size_t *len, cbb_err_t *err)
{
	uint32_t a = job->array_job_id;
	char state[4096], alt[4200];
	bool missing;

	if (!path)
		return cbb_err(err, "conduit_bb: no job script path given");
	if (cbb_read_file(path, CBB_SCRIPT_MAX, text, len, &missing, err) < 0)
		return -1;
	if (!missing)
		return 0;
	if (a && a != job->job_id &&
	    cbb_slurm_state_of(path, job->job_id, "script", state,
			       sizeof(state))) {
		snprintf(alt, sizeof(alt), "%s/hash.%u/job.%u/script", state,
			 a % 10, a);
		if (cbb_read_file(alt, CBB_SCRIPT_MAX, text, len, &missing,
				  err) < 0)
			return -1;
		if (!missing)
			return 0;
	}
	return cbb_err(err, "cannot open %s: %s", path, strerror(ENOENT));
}

int cbb_call_read_script(cbb_call_t *c, const char *path, cbb_err_t *err)
{
	return cbb_read_job_script(&c->job, path, &c->script, &c->script_len,
				   err);
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

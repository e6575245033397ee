/*
 * submit.c - burst-buffer hooks.
 *
 * job_process and pools run inside slurmctld, in its threads, under its
 * locks, and cannot be killed: they do a bounded amount of local work,
 * never wait, never print and never exit.  job_process writes nothing,
 * not even an AuditLog hook record (an AuditLog on a slow filesystem
 * would stall the scheduler).
 */
#include "hooks.h"

#include <string.h>

#include "call.h"
#include "stage.h"
#include "statefile.h"

/*
 * SubmitValidation=remote: Conduit validates every stage-in directive,
 * all at once, within SubmitTimeout.  This runs in a slurmctld thread:
 * the deadline is hard, and running out of it accepts the job.
 */
static int validate_remotely(cbb_bbcall_t *c, cbb_err_t *err)
{
	cbb_job_ctx_t j;
	cbb_err_t e;

	cbb_err_clear(&e);
	/* one budget for connect, TLS, every call and every retry */
	if (cbb_grpc_open(&c->grpc, &c->base.cfg, c->base.cfg.submit_timeout_ms, &e) < 0) {
		cbb_call_queue_log(c, CBB_LOG_INFO, e.msg);
		return 0;
	}
	/* inside slurmctld StateDir is never written: no TLS session saved */
	c->grpc.resume.read_only = true;
	cbb_bbcall_job_ctx(c, &j, &c->grpc, c->job.job_id, c->job.user_id);
	j.sd = NULL; /* inside slurmctld: StateDir is never touched */
	return cbb_stage_validate(&j, &c->plan, err);
}

/*
 * slurm_bb_job_process(job_script, uid, gid, job_info)
 * Parse and validate every directive at submission.
 * Returns SUCCESS, <script text> or ERROR, <one-line message>.
 */
static int l_job_process(lua_State *L)
{
	const char *path = lua_type(L, 1) == LUA_TSTRING ?
				   lua_tostring(L, 1) : NULL;
	long uid = cbb_arg_id(L, 2);
	cbb_parse_opts_t opts = { 0 };
	cbb_bbcall_t *c;
	cbb_err_t err;
	int n;

	cbb_err_clear(&err);
	/* no hook record: job_process runs inside slurmctld, under its
	 * locks, where nothing is written (an AuditLog on a slow filesystem
	 * would stall the scheduler) */
	c = cbb_bbcall_timed(L, NULL, NULL);
	if (!path || uid < 0) {
		cbb_err(&err, "conduit_bb: job_process needs the job script "
			"path and the job's uid");
		goto fail;
	}
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0) {
		cbb_log(L, CBB_LOG_ERROR, "%s", err.msg);
		goto fail;
	}
	if (cbb_bbcall_job(L, c, 4, (unsigned long)uid) < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		goto fail;
	}
	if (cbb_bbcall_cluster(L, c, 4, &err) < 0 ||
	    cbb_bbcall_read_script(c, path, &err) < 0) {
		cbb_log(L, CBB_LOG_ERROR, "%s", err.msg);
		goto fail;
	}
	opts.cfg = &c->base.cfg;
	opts.job = &c->job;
	opts.expand = true;
	if (cbb_parse_script(c->script, c->script_len, &opts, &c->plan,
			     &err) < 0) {
		cbb_log(L, CBB_LOG_VERBOSE, "job %u rejected: %s",
			c->job.job_id, err.msg);
		goto fail;
	}
	if (c->base.cfg.submit_validation == CBB_VALIDATE_REMOTE &&
	    cbb_plan_count(&c->plan, CBB_STAGE_IN, true) &&
	    validate_remotely(c, &err) < 0) {
		cbb_call_flush_logs(L, &c->base);
		cbb_log(L, CBB_LOG_VERBOSE, "job %u rejected: %s",
			c->job.job_id, err.msg);
		goto fail;
	}
	cbb_bbcall_record(c, 0, NULL);
	cbb_call_flush_logs(L, &c->base);
	cbb_log(L, CBB_LOG_VERBOSE, "job %u: %zu stage-in and %zu stage-out "
		"directives accepted", c->job.job_id,
		cbb_plan_count(&c->plan, CBB_STAGE_IN, true),
		cbb_plan_count(&c->plan, CBB_STAGE_OUT, true));
	n = cbb_push_result(L, 0, c->script, c->script_len);
	cbb_call_done(&c->base);
	return n;
fail:
	cbb_bbcall_record(c, -1, NULL);
	cbb_call_flush_logs(L, &c->base);
	cbb_call_done(&c->base);
	return cbb_push_result(L, -1, err.msg, strlen(err.msg));
}

/*
 * slurm_bb_pools()
 * conduit_bb manages no space, so it reports no pools.  It runs at
 * slurmctld start and every 30 s: a good moment to tell the admin about
 * a broken conduit_bb.conf, without failing (a failing pools call marks
 * the whole plugin down, and then Slurm skips job_process).
 */
static int l_pools(lua_State *L)
{
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_err_t err;

	cbb_err_clear(&err);
	/* inside slurmctld: StateDir is looked at, never made (the first
	 * stage hook makes it) */
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0 ||
	    cbb_sd_usable(&c->base.cfg, &err) < 0)
		cbb_log(L, CBB_LOG_ERROR, "%s", err.msg);
	cbb_call_done(&c->base);
	return cbb_push_result(L, 0, NULL, 0);
}

static void push_directive(lua_State *L, const cbb_directive_t *d)
{
	size_t i;

	lua_createtable(L, 0, 8);
	lua_pushstring(L, cbb_stage_name(d->stage));
	lua_setfield(L, -2, "type");
	lua_pushstring(L, cbb_action_name(d->action));
	lua_setfield(L, -2, "action");
	lua_pushboolean(L, d->recursive);
	lua_setfield(L, -2, "recursive");
	lua_pushboolean(L, d->every_attempt);
	lua_setfield(L, -2, "every_attempt");
	lua_createtable(L, (int)d->nsources, 0);
	for (i = 0; i < d->nsources; i++) {
		lua_pushstring(L, d->sources[i]);
		lua_rawseti(L, -2, (int)i + 1);
	}
	lua_setfield(L, -2, "sources");
	lua_pushstring(L, d->destination);
	lua_setfield(L, -2, "destination");
	lua_pushinteger(L, (lua_Integer)d->line);
	lua_setfield(L, -2, "line");
	lua_pushinteger(L, (lua_Integer)d->index);
	lua_setfield(L, -2, "index");
}

/*
 * conduit_bb.parse(text, job[, opts]) -> directives | nil, message
 * job: {job_id=, user_id=, user_name=, work_dir=, name=, array_job_id=,
 *       array_task_id=}; opts: {expand=true}.
 * Misuse (text not a string) raises; a bad script returns nil, message.
 */
int cbb_l_parse(lua_State *L)
{
	size_t len;
	const char *text = luaL_checklstring(L, 1, &len);
	cbb_parse_opts_t opts = { 0 };
	cbb_bbcall_t *c;
	cbb_err_t err;
	unsigned long uid = 0;
	size_t i;

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	if (!lua_isnoneornil(L, 3))
		luaL_checktype(L, 3, LUA_TTABLE);
	opts.expand = true;
	if (lua_istable(L, 3)) {
		lua_getfield(L, 3, "expand");
		if (!lua_isnil(L, -1))
			opts.expand = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	if (lua_istable(L, 2)) {
		lua_getfield(L, 2, "user_id");
		if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) >= 0)
			uid = (unsigned long)lua_tonumber(L, -1);
		lua_pop(L, 1);
	}

	cbb_err_clear(&err);
	c = cbb_bbcall_new(L);
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0 ||
	    cbb_bbcall_job(L, c, 2, uid) < 0) {
		cbb_err(&err, "out of memory");
		goto fail;
	}
	opts.cfg = &c->base.cfg;
	opts.job = &c->job;
	if (cbb_parse_script(text, len, &opts, &c->plan, &err) < 0)
		goto fail;
	lua_createtable(L, (int)c->plan.n, 0);
	for (i = 0; i < c->plan.n; i++) {
		push_directive(L, &c->plan.v[i]);
		lua_rawseti(L, -2, (int)i + 1);
	}
	cbb_call_done(&c->base);
	return 1;
fail:
	cbb_call_done(&c->base);
	lua_pushnil(L);
	lua_pushstring(L, err.msg);
	return 2;
}

void cbb_register_bb_hooks(lua_State *L)
{
	lua_pushcfunction(L, l_job_process);
	lua_setglobal(L, "slurm_bb_job_process");
	lua_pushcfunction(L, l_pools);
	lua_setglobal(L, "slurm_bb_pools");
}

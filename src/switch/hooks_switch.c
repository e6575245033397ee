/*
 * hooks_switch.c - the controller-side slurm_switch_* hooks of the
 * switch/lua host (docs/switch.md): block_job_complete,
 * setup_special_steps, job_start and job_complete.  They run for
 * slurmctld (in a slurmscriptd child per call on the 26.05 host); the
 * step hooks are in hooks_step.c.  Each call has a fresh Lua state: what
 * must survive lives in the jobinfo, which job_start signs so steps
 * refuse an altered one.  job_start reserves a session from the site's
 * controller (SwitchController=http) or hands out static fabric facts
 * (none); with nothing free it asks Slurm to requeue the job.
 * job_complete releases the session, by job id, so that the session of
 * a setup abandoned at its timeout is found and released too: a
 * session's whole life, from reserve to release, is in this file.
 */
#include "hooks_switch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pwd.h>

#include "cluster.h"
#include "config.h"
#include "controller.h"
#include "jobinfo.h"
#include "jobinfo_lua.h"
#include "luahost.h"
#include "netreq.h"

#define CBB_EAGAIN_DEFAULT 11 /* Slurm's EAGAIN when slurm.EAGAIN is absent */

/* Config and the job's request; directives only where the site allows. */
static int request_of(lua_State *L, cbb_call_t *c, int job_idx,
		      cbb_netreq_t *req, cbb_err_t *err)
{
	char network[1024];

	if (cbb_config_load(&c->cfg, NULL, err) < 0)
		return -1;
	cbb_lua_field_text(L, job_idx, "network", network,
			   sizeof(network));
	if (cbb_netreq_parse(network, c->cfg.switch_prefix, req, err) < 0)
		return -1;
	if (!c->cfg.allow_test_directives)
		req->directives = 0;
	return 0;
}

static int push_bool(lua_State *L, bool which)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_err_t err;
	bool v = false;

	cbb_err_clear(&err);
	if (cbb_config_load(&c->cfg, NULL, &err) < 0)
		cbb_log(L, CBB_LOG_ERROR, "%s", err.msg);
	else
		v = which ? c->cfg.block_job_complete : c->cfg.special_steps;
	cbb_call_done(c);
	lua_pushboolean(L, v);
	return 1;
}

/* slurm_switch_block_job_complete() */
static int l_block_job_complete(lua_State *L)
{
	return push_bool(L, true);
}

/* slurm_switch_setup_special_steps() */
static int l_setup_special_steps(lua_State *L)
{
	return push_bool(L, false);
}

/*
 * The job's user, from Slurm: job.user_id, else job.user_name resolved
 * on this host.  Fails (the setup fails) rather than guess, and never
 * gives uid 0 to a user who is not root.
 */
static int job_user(lua_State *L, cbb_jobinfo_t *ji, cbb_err_t *err)
{
	struct passwd pw, *res = NULL;
	char name[64], pwbuf[2048];
	uint64_t uid = 0;
	bool have;

	cbb_lua_field_text(L, 1, "user_name", name, sizeof(name));
	lua_getfield(L, 1, "user_id");
	/* 4294967294 is Slurm's NO_VAL: not a uid */
	have = cbb_lua_whole(L, -1, 4294967293.0, &uid);
	lua_pop(L, 1);
	if (!have && name[0] &&
	    getpwnam_r(name, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res) {
		uid = res->pw_uid;
		have = true;
	}
	if (!have)
		return cbb_err(err, "the job's uid is unknown: Slurm gave no "
			       "user_id and user '%s' does not resolve on this "
			       "host", name[0] ? name : "(none)");
	if (!name[0] &&
	    getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(name, sizeof(name), "%s", res->pw_name);
	if (uid == 0 && name[0] && strcmp(name, "root"))
		return cbb_err(err, "refusing uid 0 for user '%s'", name);
	ji->uid = (uint32_t)uid;
	snprintf(ji->user, sizeof(ji->user), "%s", name);
	return 0;
}

/*
 * SwitchController=http: reserve (an idempotent PUT: a repeated job_start
 * gets the same session) and fill the jobinfo.  A failure after the
 * reservation releases it again: a failed setup is never torn down.
 */
static int reserve(lua_State *L, cbb_call_t *c, const cbb_netreq_t *req,
		   cbb_jobinfo_t *ji, cbb_err_t *err)
{
	char nodes[1024], part[128];
	cbb_session_t s;
	cbb_ctl_job_t cj;
	cbb_ctl_rc_t r;
	uint64_t nn = 0;
	int rc = 0;

	cj.cluster = ji->cluster;
	cj.job_id = ji->job_id;
	cj.user = ji->user;
	cj.uid = ji->uid;
	cj.nodes = cbb_lua_field_text(L, 1, "nodes", nodes,
				      sizeof(nodes));
	lua_getfield(L, 1, "num_nodes");
	if (!cbb_lua_whole(L, -1, 4294967295.0, &nn))
		nn = 0;
	lua_pop(L, 1);
	cj.num_nodes = (uint32_t)nn;
	cj.partition = cbb_lua_field_text(L, 1, "partition", part,
					  sizeof(part));
	cj.req = req;
	r = cbb_ctl_reserve(&c->cfg, &cj, &s, err);
	if (r == CBB_CTL_NO_CAPACITY) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n,
			 "; Slurm requeues the job");
	}
	if (r != CBB_CTL_OK) {
		cbb_session_wipe(&s);
		return -1;
	}
	snprintf(ji->session, sizeof(ji->session), "%s", s.session_id);
	snprintf(ji->pool, sizeof(ji->pool), "%s", s.pool[0] ? s.pool : req->pool);
	ji->gpus = s.gpus ? s.gpus : req->gpus;
	ji->vram_mib = s.vram_mib ? s.vram_mib : req->vram_mib;
	memcpy(ji->endpoint, s.endpoint, sizeof(ji->endpoint));
	memcpy(ji->vlans, s.vlans, sizeof(ji->vlans));
	ji->n_vlans = s.n_vlans;
	memcpy(ji->env, s.env, sizeof(ji->env));
	if (s.token[0] &&
	    cbb_seal(c->cfg.session_key_file, ji->job_id, ji->cluster,
		     ji->session, s.token, ji->token, sizeof(ji->token),
		     err) < 0) {
		cbb_err_t e2;

		cbb_err_clear(&e2);
		(void)cbb_ctl_release(&c->cfg, ji->cluster, ji->job_id, &e2);
		rc = -1;
	}
	/* the plaintext token: a memset here is a dead store -O2 removes */
	cbb_session_wipe(&s);
	return rc;
}

/*
 * slurm_switch_job_start(job) -> rc, jobinfo
 * SUCCESS + table: accepted; SUCCESS + nil: not ours (no conduit segment
 * in --network); ERROR: the setup failed (Slurm requeues the job).
 */
static int l_job_start(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L); /* index 2 */
	cbb_netreq_t req;
	cbb_jobinfo_t ji;
	uint8_t key[CBB_MAC_KEY_LEN];
	cbb_err_t err;
	long job_id;

	cbb_err_clear(&err);
	lua_getfield(L, 1, "job_id");
	job_id = cbb_arg_id(L, -1);
	lua_pop(L, 1);
	if (job_id < 0 || request_of(L, c, 1, &req, &err) < 0) {
		if (!err.set)
			cbb_err(&err, "job has no job_id");
		goto fail;
	}
	if (!req.present || (req.directives & CBB_TD_SKIP)) {
		cbb_log(L, CBB_LOG_VERBOSE, "switch: job %ld: no '%s:' request "
			"in --network: not managed", job_id,
			c->cfg.switch_prefix);
		cbb_call_done(c);
		lua_pushinteger(L, 0);
		lua_pushnil(L);
		return 2;
	}
	if (req.directives & CBB_TD_START_CRASH) {
		cbb_call_done(c);
		return luaL_error(L, "conduit_bb: start_crash test directive");
	}
	if ((req.directives & CBB_TD_DEFER) ||
	    cbb_mac_key_load(c->cfg.session_key_file, key, &err) < 0) {
		if (!err.set)
			cbb_err(&err, "defer test directive");
		goto fail;
	}
	memset(&ji, 0, sizeof(ji));
	ji.v = CBB_JOBINFO_VERSION;
	ji.job_id = (uint32_t)job_id;
	if (cbb_call_cluster(L, c, 1, &err) < 0 || job_user(L, &ji, &err) < 0)
		goto fail;
	cbb_cluster_safe(ji.cluster, c->cluster);
	cbb_netreq_directives(req.directives, ji.directives,
			      sizeof(ji.directives));
	if (c->cfg.switch_http) {
		if (reserve(L, c, &req, &ji, &err) < 0)
			goto fail;
	} else {
		snprintf(ji.session, sizeof(ji.session), "static-%s-%ld",
			 ji.cluster, job_id);
		memcpy(ji.pool, req.pool, sizeof(ji.pool));
		ji.gpus = req.gpus;
		ji.vram_mib = req.vram_mib;
		if (c->cfg.switch_endpoint)
			snprintf(ji.endpoint, sizeof(ji.endpoint), "%s",
				 c->cfg.switch_endpoint);
		ji.n_vlans = c->cfg.n_switch_vlans;
		memcpy(ji.vlans, c->cfg.switch_vlans, sizeof(ji.vlans));
	}
	cbb_jobinfo_sign(&ji, key);
	cbb_key_wipe(key);
	cbb_log(L, CBB_LOG_VERBOSE, "switch: job %ld: session %s (pool %s, "
		"%u GPUs)", job_id, ji.session, ji.pool[0] ? ji.pool : "-",
		ji.gpus);
	cbb_call_done(c);
	lua_pushinteger(L, 0);
	cbb_jobinfo_push(L, &ji);
	return 2;
fail:
	/* the one end of a failed setup (Slurm requeues the job) */
	cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: setup failed: %s", job_id,
		err.msg);
	cbb_key_wipe(key);
	cbb_call_done(c);
	lua_pushinteger(L, -1);
	return 1;
}

/* slurm_switch_job_complete(job, jobinfo) -> rc */
static int l_job_complete(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_netreq_t req;
	cbb_err_t err;
	int eagain = CBB_EAGAIN_DEFAULT;

	cbb_err_clear(&err);
	if (request_of(L, c, 1, &req, &err) < 0)
		req.directives = 0;
	if (c->cfg.switch_http && !(req.directives & (CBB_TD_COMPLETE_CRASH |
						      CBB_TD_COMPLETE_AGAIN))) {
		/* release by job id: also finds an abandoned setup's session */
		long job_id;
		cbb_ctl_rc_t r;

		lua_getfield(L, 1, "job_id");
		job_id = cbb_arg_id(L, -1);
		lua_pop(L, 1);
		r = job_id < 0 || cbb_call_cluster(L, c, 1, &err) < 0 ?
			    CBB_CTL_TRANSIENT :
			    cbb_ctl_release(&c->cfg, c->cluster, (uint32_t)job_id,
					    &err);
		if (r == CBB_CTL_OK || r == CBB_CTL_GONE) {
			cbb_log(L, CBB_LOG_VERBOSE, "switch: job %ld: session %s",
				job_id, r == CBB_CTL_OK ? "released" :
				"already released");
			cbb_call_done(c);
			lua_pushinteger(L, 0);
			return 1;
		}
		if (!err.set)
			cbb_err(&err, "job has no job_id");
		cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: release failed: %s%s",
			job_id, err.msg, c->cfg.block_job_complete ?
			" (will be retried)" : "");
		if (c->cfg.block_job_complete)
			req.directives |= CBB_TD_COMPLETE_AGAIN;
		else {
			cbb_call_done(c);
			lua_pushinteger(L, -1);
			return 1;
		}
	}
	cbb_call_done(c);
	if (req.directives & CBB_TD_COMPLETE_CRASH)
		return luaL_error(L, "conduit_bb: complete_crash test directive");
	if (req.directives & CBB_TD_COMPLETE_AGAIN) {
		lua_getglobal(L, "slurm");
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "EAGAIN");
			if (lua_type(L, -1) == LUA_TNUMBER)
				eagain = (int)lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		lua_pushinteger(L, eagain);
		return 1;
	}
	/* With static facts there is nothing outside Slurm to release. */
	lua_pushinteger(L, 0);
	return 1;
}

void cbb_register_switch_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_switch_block_job_complete", l_block_job_complete },
		{ "slurm_switch_setup_special_steps", l_setup_special_steps },
		{ "slurm_switch_job_start", l_job_start },
		{ "slurm_switch_job_complete", l_job_complete },
		{ NULL, NULL },
	};

	cbb_register_globals(L, hooks);
}

/*
 * hooks_switch.c - the slurm_switch_* hooks of the switch/lua host
 * (docs/switch.md).  The controller-side hooks (job_start, job_complete)
 * run in a slurmscriptd child per call; the step hooks run as root in
 * slurmstepd.  Each call has a fresh Lua state: what must survive lives
 * in the jobinfo, which is signed so steps refuse an altered one.
 *
 * This version gives steps the site's static fabric facts
 * (SwitchController=none); reserving from a controller comes next.
 */
#include "hooks_switch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pwd.h>

#include "config.h"
#include "controller.h"
#include "jobinfo.h"
#include "key.h"
#include "luahost.h"
#include "netreq.h"
#include "sessionfile.h"

#define CBB_EAGAIN_DEFAULT 11 /* Slurm's EAGAIN when slurm.EAGAIN is absent */

/* Fields of the jobinfo table: the only keys it may carry. */
enum { F_STR, F_NUM, F_VLANS };
static const struct {
	const char *name;
	int type;
	size_t off, size;
} fields[] = {
#define S(f) F_STR, offsetof(cbb_jobinfo_t, f), sizeof(((cbb_jobinfo_t *)0)->f)
#define N(f) F_NUM, offsetof(cbb_jobinfo_t, f), sizeof(((cbb_jobinfo_t *)0)->f)
	{ "v", N(v) },
	{ "job_id", N(job_id) },
	{ "cluster", S(cluster) },
	{ "user", S(user) },
	{ "uid", N(uid) },
	{ "session", S(session) },
	{ "pool", S(pool) },
	{ "gpus", N(gpus) },
	{ "vram_mib", N(vram_mib) },
	{ "endpoint", S(endpoint) },
	{ "vlans", F_VLANS, 0, 0 },
	{ "directives", S(directives) },
	{ "token", S(token) },
	{ "env", S(env) },
	{ "mac", S(mac) },
#undef S
#undef N
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void push_jobinfo(lua_State *L, const cbb_jobinfo_t *ji)
{
	size_t i, k;

	lua_createtable(L, 0, (int)NFIELDS);
	for (i = 0; i < NFIELDS; i++) {
		const char *p = (const char *)ji + fields[i].off;

		if (fields[i].type == F_STR) {
			lua_pushstring(L, p);
		} else if (fields[i].type == F_NUM) {
			if (fields[i].size == sizeof(uint64_t))
				lua_pushinteger(L, (lua_Integer)*(const uint64_t *)p);
			else
				lua_pushinteger(L, (lua_Integer)*(const uint32_t *)p);
		} else {
			lua_createtable(L, (int)ji->n_vlans, 0);
			for (k = 0; k < ji->n_vlans; k++) {
				lua_pushinteger(L, (lua_Integer)ji->vlans[k]);
				lua_rawseti(L, -2, (int)k + 1);
			}
		}
		lua_setfield(L, -2, fields[i].name);
	}
}

static int whole(lua_State *L, int idx, double max, uint64_t *out)
{
	return cbb_lua_whole(L, idx, max, out) ? 0 : -1;
}

/*
 * Read a jobinfo table back, strictly: every field typed as written,
 * no other key.  Never raises for bad content (only on memory errors).
 */
static int read_jobinfo(lua_State *L, int idx, cbb_jobinfo_t *ji,
			cbb_err_t *err)
{
	size_t i, seen = 0;

	memset(ji, 0, sizeof(*ji));
	if (!lua_istable(L, idx))
		return cbb_err(err, "jobinfo is not a table");
	idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ?
					lua_tostring(L, -2) : NULL;
		uint64_t v;

		for (i = 0; k && i < NFIELDS; i++)
			if (!strcmp(k, fields[i].name))
				break;
		if (!k || i == NFIELDS) {
			lua_pop(L, 2);
			return cbb_err(err, "jobinfo has an unexpected field");
		}
		seen++;
		if (fields[i].type == F_STR) {
			size_t n;
			const char *s = lua_type(L, -1) == LUA_TSTRING ?
						lua_tolstring(L, -1, &n) : NULL;

			if (!s || n >= fields[i].size || memchr(s, '\0', n)) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field %s is not a "
					       "valid string", fields[i].name);
			}
			memcpy((char *)ji + fields[i].off, s, n + 1);
		} else if (fields[i].type == F_NUM) {
			double max = fields[i].size == 8 ? 9007199254740991.0 :
							   4294967295.0;

			if (whole(L, -1, max, &v) < 0) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field %s is not a "
					       "whole number", fields[i].name);
			}
			if (fields[i].size == 8)
				*(uint64_t *)((char *)ji + fields[i].off) = v;
			else
				*(uint32_t *)((char *)ji + fields[i].off) =
					(uint32_t)v;
		} else {
			size_t n = lua_istable(L, -1) ? cbb_rawlen(L, -1) : 99, k2;

			if (n > 16) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field vlans is not "
					       "a list of VLAN ids");
			}
			for (k2 = 0; k2 < n; k2++) {
				lua_rawgeti(L, -1, (int)k2 + 1);
				if (whole(L, -1, 4094, &v) < 0) {
					lua_pop(L, 3);
					return cbb_err(err, "jobinfo field vlans "
						       "is not a list of VLAN "
						       "ids");
				}
				ji->vlans[k2] = (unsigned)v;
				lua_pop(L, 1);
			}
			ji->n_vlans = n;
		}
		lua_pop(L, 1);
	}
	if (ji->v != CBB_JOBINFO_VERSION)
		return cbb_err(err, "jobinfo version %u is not %d (made by "
			       "another conduit-bb release: requeue the job "
			       "to set its session up again)", ji->v,
			       CBB_JOBINFO_VERSION);
	if (seen != NFIELDS)
		return cbb_err(err, "jobinfo lacks fields");
	return 0;
}

static const char *tfield(lua_State *L, int idx, const char *name,
			  char *buf, size_t size)
{
	buf[0] = '\0';
	if (!lua_istable(L, idx) && !lua_isuserdata(L, idx))
		return buf;
	lua_getfield(L, idx, name);
	if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
		snprintf(buf, size, "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
	return buf;
}

/* Config and the job's request; directives only where the site allows. */
static int request_of(lua_State *L, cbb_call_t *c, int job_idx,
		      cbb_netreq_t *req, cbb_err_t *err)
{
	char network[1024];

	if (cbb_config_load(&c->cfg, NULL, err) < 0)
		return -1;
	tfield(L, job_idx, "network", network, sizeof(network));
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

	tfield(L, 1, "user_name", name, sizeof(name));
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
	cj.nodes = tfield(L, 1, "nodes", nodes, sizeof(nodes));
	lua_getfield(L, 1, "num_nodes");
	if (!cbb_lua_whole(L, -1, 4294967295.0, &nn))
		nn = 0;
	lua_pop(L, 1);
	cj.num_nodes = (uint32_t)nn;
	cj.partition = tfield(L, 1, "partition", part, sizeof(part));
	cj.req = req;
	r = cbb_ctl_reserve(&c->cfg, &cj, &s, err);
	if (r == CBB_CTL_NO_CAPACITY) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n,
			 "; Slurm requeues the job");
	}
	if (r != CBB_CTL_OK)
		return -1;
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
	memset(s.token, 0, sizeof(s.token));
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
		cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: setup failed: %s",
			job_id, err.msg);
		cbb_call_done(c);
		lua_pushinteger(L, -1);
		return 1;
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
		cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: setup failed: %s",
			job_id, err.msg);
		cbb_call_done(c);
		lua_pushinteger(L, -1);
		return 1;
	}
	memset(&ji, 0, sizeof(ji));
	ji.v = CBB_JOBINFO_VERSION;
	ji.job_id = (uint32_t)job_id;
	if (cbb_call_cluster(L, c, 1, &err) < 0 || job_user(L, &ji, &err) < 0) {
		cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: setup failed: %s",
			job_id, err.msg);
		cbb_key_wipe(key);
		cbb_call_done(c);
		lua_pushinteger(L, -1);
		return 1;
	}
	cbb_key_cluster(ji.cluster, c->cluster);
	cbb_netreq_directives(req.directives, ji.directives,
			      sizeof(ji.directives));
	if (c->cfg.switch_http) {
		if (reserve(L, c, &req, &ji, &err) < 0) {
			cbb_log(L, CBB_LOG_ERROR, "switch: job %ld: setup "
				"failed: %s", job_id, err.msg);
			cbb_key_wipe(key);
			cbb_call_done(c);
			lua_pushinteger(L, -1);
			return 1;
		}
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
	push_jobinfo(L, &ji);
	return 2;
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

/*
 * A stepinfo belongs to the step's own job: the same job id and, when
 * this host knows the cluster's name, the same cluster.  1, or -1.
 */
static int step_is_job(lua_State *L, cbb_call_t *c, const cbb_jobinfo_t *ji,
		       cbb_err_t *err)
{
	char cluster[CBB_CLUSTER_MAX];
	cbb_err_t unknown;
	long step_job;

	lua_getfield(L, 1, "job_id");
	step_job = cbb_arg_id(L, -1);
	lua_pop(L, 1);
	if (step_job < 0 || (uint32_t)step_job != ji->job_id)
		return cbb_err(err, "it was made for job %u, not this step's "
			       "job %ld", ji->job_id, step_job);
	cbb_err_clear(&unknown);
	if (cbb_call_cluster(L, c, 0, &unknown) == 0) {
		cbb_key_cluster(cluster, c->cluster);
		if (strcmp(cluster, ji->cluster))
			return cbb_err(err, "it was made on cluster %s, not "
				       "%s", ji->cluster, cluster);
	}
	return 1;
}

/*
 * Verify the stepinfo of a step hook.  Returns 1 when it is ours and
 * sound, 0 when there is none, -1 (logged) when it must be refused.
 */
static int step_info(lua_State *L, cbb_call_t *c, cbb_jobinfo_t *ji,
		     const char *hook)
{
	uint8_t key[CBB_MAC_KEY_LEN];
	cbb_err_t err;
	int rc;

	cbb_err_clear(&err);
	if (lua_isnoneornil(L, 2))
		return 0;
	if (cbb_config_load(&c->cfg, NULL, &err) < 0 ||
	    read_jobinfo(L, 2, ji, &err) < 0 ||
	    cbb_mac_key_load(c->cfg.session_key_file, key, &err) < 0) {
		rc = -1;
	} else if (!cbb_jobinfo_verify(ji, key)) {
		cbb_err(&err, "its signature does not match (altered, or made "
			"with another SessionKeyFile)");
		rc = -1;
	} else {
		rc = step_is_job(L, c, ji, &err);
	}
	cbb_key_wipe(key);
	if (rc < 0)
		cbb_log(L, CBB_LOG_ERROR, "switch: %s: refusing the stepinfo "
			"of job %u: %s", hook, ji->job_id, err.msg);
	return rc;
}

static bool has(const cbb_jobinfo_t *ji, const char *word)
{
	size_t n = strlen(word);
	const char *p = ji->directives;

	while ((p = strstr(p, word))) {
		if ((p == ji->directives || p[-1] == '+') &&
		    (p[n] == '\0' || p[n] == '+'))
			return true;
		p += n;
	}
	return false;
}

/* Test directives for a step hook: crash raises, fail -1, warn 1. */
static int step_directives(lua_State *L, const cbb_jobinfo_t *ji,
			   const char *stem, int drain)
{
	char word[32];

	snprintf(word, sizeof(word), "%s_crash", stem);
	if (has(ji, word))
		return luaL_error(L, "conduit_bb: %s test directive", word);
	snprintf(word, sizeof(word), "%s_%s", stem, drain ? "drain" : "fail");
	if (has(ji, word))
		return -1;
	snprintf(word, sizeof(word), "%s_warn", stem);
	if (has(ji, word))
		return 1;
	return 0;
}

/* slurm_switch_step_preinit(step, stepinfo) -> rc */
static int l_step_preinit(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_jobinfo_t ji;
	int rc = step_info(L, c, &ji, "step_preinit");

	cbb_call_done(c);
	if (rc <= 0) {
		lua_pushinteger(L, rc);
		return 1;
	}
	lua_pushinteger(L, step_directives(L, &ji, "preinit", 0));
	return 1;
}

/* slurm_switch_step_init(step, stepinfo) -> rc, env */
static int l_step_init(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_jobinfo_t ji;
	char vlans[128];
	size_t i, o = 0;
	int rc = step_info(L, c, &ji, "step_init"), d;

	cbb_call_done(c);
	if (rc <= 0) {
		lua_pushinteger(L, rc);
		return 1;
	}
	d = step_directives(L, &ji, "init", 0);
	if (d < 0 || has(&ji, "noenv")) {
		lua_pushinteger(L, d);
		return 1;
	}
	vlans[0] = '\0';
	for (i = 0; i < ji.n_vlans && o + 8 < sizeof(vlans); i++)
		o += (size_t)snprintf(vlans + o, sizeof(vlans) - o, "%s%u",
				      i ? "," : "", ji.vlans[i]);
	lua_pushinteger(L, d);
	lua_createtable(L, 0, 8);
	lua_pushstring(L, ji.session);
	lua_setfield(L, -2, "CONDUIT_SESSION_ID");
	if (ji.pool[0]) {
		lua_pushstring(L, ji.pool);
		lua_setfield(L, -2, "CONDUIT_SESSION_POOL");
		lua_pushinteger(L, (lua_Integer)ji.gpus);
		lua_setfield(L, -2, "CONDUIT_SESSION_GPUS");
	}
	if (ji.vram_mib) {
		lua_pushinteger(L, (lua_Integer)ji.vram_mib);
		lua_setfield(L, -2, "CONDUIT_SESSION_VRAM_MIB");
	}
	if (ji.endpoint[0]) {
		lua_pushstring(L, ji.endpoint);
		lua_setfield(L, -2, "CONDUIT_SESSION_ENDPOINT");
	}
	if (vlans[0]) {
		lua_pushstring(L, vlans);
		lua_setfield(L, -2, "CONDUIT_SESSION_VLANS");
	}
	/* the controller's variables (names checked when they arrived) */
	{
		char *line = ji.env, *nl, *eq;

		while (*line && (nl = strchr(line, '\n'))) {
			*nl = '\0';
			eq = strchr(line, '=');
			if (eq) {
				*eq = '\0';
				lua_pushstring(L, eq + 1);
				lua_setfield(L, -2, line);
			}
			line = nl + 1;
		}
	}
	if (ji.token[0]) {
		char token[1100];
		cbb_config_t cfg;
		cbb_err_t err;

		cbb_err_clear(&err);
		if (cbb_config_load(&cfg, NULL, &err) < 0 ||
		    cbb_unseal(cfg.session_key_file, ji.job_id, ji.cluster,
			       ji.session, ji.token, token, sizeof(token),
			       &err) < 0) {
			cbb_config_free(&cfg);
			cbb_log(L, CBB_LOG_ERROR, "switch: step_init: job %u: %s",
				ji.job_id, err.msg);
			lua_pop(L, 2);
			lua_pushinteger(L, -1);
			return 1;
		}
		if (cfg.session_file) {
			/* the token goes to a 0600 file of the job's user */
			char path[4200];

			rc = cbb_session_file_write(
				cfg.session_dir ? cfg.session_dir : CBB_SESSION_DIR,
				ji.cluster, ji.job_id, ji.uid, token, path,
				sizeof(path), &err);
			memset(token, 0, sizeof(token));
			cbb_config_free(&cfg);
			if (rc < 0) {
				cbb_log(L, CBB_LOG_ERROR, "switch: step_init: "
					"job %u: %s", ji.job_id, err.msg);
				lua_pop(L, 2);
				lua_pushinteger(L, -1);
				return 1;
			}
			lua_pushstring(L, path);
			lua_setfield(L, -2, "CONDUIT_SESSION_TOKEN_FILE");
			lua_pushboolean(L, 0);
		} else {
			cbb_config_free(&cfg);
			lua_pushstring(L, token);
			memset(token, 0, sizeof(token));
		}
	} else {
		/* never let a token from the submitting shell leak in */
		lua_pushboolean(L, 0);
	}
	lua_setfield(L, -2, "CONDUIT_SESSION_TOKEN");
	return 2;
}

/* slurm_switch_step_postfini(step, stepinfo) -> rc */
static int l_step_postfini(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_jobinfo_t ji;
	int rc = step_info(L, c, &ji, "step_postfini");

	cbb_call_done(c);
	/* an unverifiable stepinfo has nothing to release: log, no drain */
	if (rc <= 0) {
		lua_pushinteger(L, rc < 0 ? 1 : 0);
		return 1;
	}
	lua_pushinteger(L, step_directives(L, &ji, "postfini", 1));
	return 1;
}

void cbb_register_switch_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_switch_block_job_complete", l_block_job_complete },
		{ "slurm_switch_setup_special_steps", l_setup_special_steps },
		{ "slurm_switch_job_start", l_job_start },
		{ "slurm_switch_job_complete", l_job_complete },
		{ "slurm_switch_step_preinit", l_step_preinit },
		{ "slurm_switch_step_init", l_step_init },
		{ "slurm_switch_step_postfini", l_step_postfini },
		{ NULL, NULL },
	};
	const luaL_Reg *h;

	for (h = hooks; h->name; h++) {
		lua_pushcfunction(L, h->func);
		lua_setglobal(L, h->name);
	}
}

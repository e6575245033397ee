/*
 * hooks_step.c - the switch/lua step hooks (step_preinit, step_init,
 * step_postfini).  They run as root inside slurmstepd on each node, with
 * the stepinfo that job_start packed (jobinfo_lua.h).  A stepinfo is
 * used only when its MAC verifies and it names this step's job and
 * cluster; step_init then exports the session and the site's
 * allow-listed names into the step's environment (docs/switch.md).
 */
#include "hooks_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "config.h"
#include "jobinfo_lua.h"
#include "luahost.h"
#include "sessionfile.h"

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
		cbb_cluster_safe(cluster, c->cluster);
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
	    cbb_jobinfo_read(L, 2, ji, &err) < 0 ||
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

/*
 * slurm_switch_step_init(step, stepinfo) -> rc, env.  The configuration
 * is the one step_info loaded into the call context, freed once, on the
 * way out (a Lua error on the way is the context's __gc's to clean up).
 */
static int l_step_init(lua_State *L)
{
	cbb_call_t *c = cbb_call_new(L);
	cbb_jobinfo_t ji;
	cbb_err_t err;
	char vlans[128], token[1100];
	size_t i, o = 0;
	int rc = step_info(L, c, &ji, "step_init"), d, nret = 1;

	if (rc <= 0) {
		lua_pushinteger(L, rc);
		goto out;
	}
	d = step_directives(L, &ji, "init", 0);
	if (d < 0 || has(&ji, "noenv")) {
		lua_pushinteger(L, d);
		goto out;
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
		cbb_err_clear(&err);
		if (cbb_unseal(c->cfg.session_key_file, ji.job_id, ji.cluster,
			       ji.session, ji.token, token, sizeof(token),
			       &err) < 0)
			goto refuse;
		if (c->cfg.session_file) {
			/* the token goes to a 0600 file of the job's user */
			char path[4200];

			rc = cbb_session_file_write(
				c->cfg.session_dir ? c->cfg.session_dir :
						     CBB_SESSION_DIR,
				ji.cluster, ji.job_id, ji.uid, token, path,
				sizeof(path), &err);
			cbb_wipe(token, sizeof(token));
			if (rc < 0)
				goto refuse;
			lua_pushstring(L, path);
			lua_setfield(L, -2, "CONDUIT_SESSION_TOKEN_FILE");
			lua_pushboolean(L, 0);
		} else {
			lua_pushstring(L, token);
			cbb_wipe(token, sizeof(token));
		}
	} else {
		/* never let a token from the submitting shell leak in */
		lua_pushboolean(L, 0);
	}
	lua_setfield(L, -2, "CONDUIT_SESSION_TOKEN");
	nret = 2;
	goto out;
refuse:
	cbb_wipe(token, sizeof(token));
	cbb_log(L, CBB_LOG_ERROR, "switch: step_init: job %u: %s", ji.job_id,
		err.msg);
	lua_pop(L, 2);
	lua_pushinteger(L, -1);
out:
	cbb_call_done(c);
	return nret;
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

void cbb_register_step_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_switch_step_preinit", l_step_preinit },
		{ "slurm_switch_step_init", l_step_init },
		{ "slurm_switch_step_postfini", l_step_postfini },
		{ NULL, NULL },
	};

	cbb_register_globals(L, hooks);
}

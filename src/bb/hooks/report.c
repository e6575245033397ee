/*
 * report.c - the bb hooks that report rather than stage:
 * slurm_bb_get_status (`scontrol show bbstat conduit JOBID [json]`, one
 * short budget: slurmctld holds its burst-buffer lock meanwhile) and
 * slurm_bb_paths (inside slurmctld: local work only, the NAME=value
 * lines Slurm adds to the job's environment; docs/user.md lists them).
 */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "directive_json.h"
#include "key.h"
#include "statefile.h"
#include "bbstat.h"
#include "share.h"

#define CBB_STATUS_TIMEOUT_MS 5000   /* get_status blocks slurmctld */

static const char status_usage[] =
	"usage: scontrol show bbstat conduit JOBID [json]\n"
	"Shows the Conduit transfers of a job's staging directives; users "
	"see their own jobs, root sees every job.\n";

/* Keep the skipped rows of the caller's own jobs (ids end ":<uid>"). */
static void own_skips(cbb_recs_t *skips, const char *uid)
{
	size_t i, n = 0;

	for (i = 0; i < skips->n; i++) {
		const char *u = strrchr(skips->v[i].id, ':');

		if (u && !strcmp(u + 1, uid))
			skips->v[n++] = skips->v[i];
	}
	skips->n = n;
}

/*
 * slurm_bb_get_status(uid, gid, "conduit", JOBID [, "json"])
 * (scontrol takes --json as its own option, so users write "json";
 * "--json" is accepted too, for callers that reach the hook directly.)
 */
static int l_get_status(lua_State *L)
{
	int top = lua_gettop(L), i;
	long caller = cbb_arg_id(L, 1), job_id = -1;
	bool json = false, bad = false;
	const char *what = cbb_lua_str(L, 3);
	cbb_bbcall_t *c;
	cbb_err_t err;
	cbb_recs_t skips;
	char rx[2 * CBB_KEY_MAX + 128], user[24];
	cbb_array_ident_t who;
	uint32_t array;
	bool quiet = false;
	int rc;

	for (i = 4; i <= top; i++) {
		const char *a = cbb_lua_str(L, i);

		if (a && (!strcmp(a, "json") || !strcmp(a, "--json")))
			json = true;
		else if (a && job_id < 0 && (job_id = cbb_arg_id(L, i)) >= 0)
			continue;
		else
			bad = true;
	}
	if (caller < 0 || !what || strcmp(what, "conduit") || job_id < 0 || bad)
		return cbb_push_result(L, 0, status_usage, strlen(status_usage));

	c = cbb_bbcall_new(L);
	cbb_err_clear(&err);
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0 ||
	    cbb_bbcall_cluster(L, c, 0, &err) < 0)
		goto fail;
	/* StateDir is only read here (never created, rewritten or waited
	 * on): slurmctld holds its burst-buffer lock meanwhile */
	array = cbb_joined_array_peek(&c->sd, (uint32_t)job_id, &who);
	/* the caller's own transfers; root sees the job's user's, as
	 * StateDir names them (Conduit is never asked for every user's) */
	if (caller == 0) {
		uint32_t owner = cbb_job_uid_peek(&c->sd, (uint32_t)job_id);

		if (owner == CBB_UID_UNKNOWN || owner == 0) {
			cbb_err(&err, "conduit_bb: job %ld has no staging "
				"record naming its user here; run this as the "
				"job's user", job_id);
			goto fail;
		}
		snprintf(user, sizeof(user), "%lu", (unsigned long)owner);
	} else {
		snprintf(user, sizeof(user), "%ld", caller);
	}
	if (array)
		cbb_key_array_regex(rx, sizeof(rx), c->base.cluster,
				    (uint32_t)job_id, array);
	else
		cbb_key_job_regex(rx, sizeof(rx), c->base.cluster,
				  (uint32_t)job_id, -1);
	/* a poll's reply of a moment ago answers as well as the server
	 * (not for an array task: its Query is its own, share.c) */
	if (!array && cbb_share_status(&c->sd, &c->base.cfg, c->base.cluster,
				       (uint32_t)strtoul(user, NULL, 10), user,
				       (uint32_t)job_id, &c->transfers))
		goto render;
	/* bbstat holds slurmctld's burst-buffer lock: one short budget */
	rc = cbb_grpc_open(&c->grpc, &c->base.cfg,
			   c->base.cfg.request_timeout_ms < CBB_STATUS_TIMEOUT_MS ?
				   c->base.cfg.request_timeout_ms :
				   CBB_STATUS_TIMEOUT_MS, &err);
	/* nothing is written in StateDir here: no TLS session saved */
	c->grpc.resume.read_only = true;
	if (rc < 0 ||
	    cbb_conduit_query(&c->grpc, user, rx, &c->transfers, &err) !=
		    CBB_ANSWER_OK)
		goto fail;
render:
	/* a StateDir problem only costs the skipped rows */
	if (cbb_skips_peek(&c->sd, (uint32_t)job_id, &skips, &err) < 0) {
		skips.v = NULL;
		skips.n = 0;
		cbb_err_clear(&err);
	}
	if (caller != 0)
		own_skips(&skips, user);
	rc = cbb_status_render(&c->transfers, &skips,
			       /* tasks of the array the job joined only */
			       cbb_shared_tasks_peek(&c->sd, array,
						     array ? &who : NULL),
			       (uint32_t)job_id, json, &c->base.out);
	cbb_recs_free(&skips);
	if (rc < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		quiet = true;
		goto fail;
	}
	cbb_call_flush_logs(L, &c->base);
	lua_pushinteger(L, 0);
	lua_pushlstring(L, c->base.out.data ? c->base.out.data : "", c->base.out.len);
	cbb_call_done(&c->base);
	return 2;
fail:
	if (!quiet)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return cbb_bbcall_finish(L, c, -1, err.msg);
}

/* The directives of one stage as compact JSON for the job's environment. */
static char *stage_json(const cbb_plan_t *p, cbb_stage_t st, size_t *count)
{
	json_t *arr = json_array();
	size_t i;
	char *s;

	*count = 0;
	if (!arr)
		return NULL;
	for (i = 0; i < p->n; i++) {
		const cbb_directive_t *d = &p->v[i];

		if (d->stage != st)
			continue;
		json_array_append_new(arr, cbb_directive_json(d, 0));
		(*count)++;
	}
	s = json_dumps(arr, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(arr);
	return s;
}

/*
 * Open the path file for writing.  Slurm creates it empty before calling
 * paths, except for a task split off an array, whose job directory it
 * never made: then make it as Slurm makes job directories (mode 0700),
 * but only where Slurm's own layout says it belongs.
 */
static int open_path_file(const char *path_file, uint32_t job_id)
{
	char state[4096], dir[4200];
	int fd;

	fd = open(path_file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 || errno != ENOENT ||
	    !cbb_slurm_state_of(path_file, job_id, "path", state, sizeof(state)))
		return fd;
	snprintf(dir, sizeof(dir), "%s/hash.%u", state, job_id % 10);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	snprintf(dir, sizeof(dir), "%s/hash.%u/job.%u", state, job_id % 10,
		 job_id);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(path_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				       O_NOFOLLOW, 0600);
}

/*
 * slurm_bb_paths(job_id, job_script, path_file, uid, gid, job_info)
 * Runs inside slurmctld: local work only.  Writes NAME=value lines that
 * Slurm adds to the job's environment (docs/user.md lists them).  The
 * environment is a convenience: when the path file cannot be written the
 * job still starts (logged), never held for it.
 */
static int l_paths(lua_State *L)
{
	long job_id = cbb_arg_id(L, 1), uid = cbb_arg_id(L, 4);
	const char *path_file = cbb_lua_str(L, 3);
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_parse_opts_t o = { 0 };
	cbb_err_t err;
	char key[CBB_KEY_MAX], *in = NULL, *out = NULL;
	size_t nin, nout;
	bool quiet = false;
	int fd, rc = -1;

	cbb_err_clear(&err);
	if (job_id < 0 || uid < 0 || !path_file) {
		/* Slurm's own mistake: answered, not logged */
		cbb_err(&err, "conduit_bb: paths needs job id, path file and uid");
		quiet = true;
		goto out;
	}
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0)
		goto out;
	if (cbb_bbcall_job(L, c, 6, (unsigned long)uid) < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		goto out;
	}
	c->job.job_id = (uint32_t)job_id;
	if (cbb_bbcall_cluster(L, c, 6, &err) < 0 ||
	    cbb_bbcall_read_script(c, cbb_lua_str(L, 2), &err) < 0)
		goto out;
	o.cfg = &c->base.cfg;
	o.job = &c->job;
	o.expand = true; /* paths gets the plain script */
	if (cbb_parse_script(c->script, c->script_len, &o, &c->plan, &err) < 0)
		goto out;
	in = stage_json(&c->plan, CBB_STAGE_IN, &nin);
	out = stage_json(&c->plan, CBB_STAGE_OUT, &nout);
	/* the attempt about to run: Slurm's restart count */
	cbb_key_prefix(key, sizeof(key), c->base.cluster, (uint32_t)job_id,
		       c->restart);
	if (!in || !out ||
	    cbb_buf_printf(&c->base.out, "CONDUIT_BB_KEY=%s\n"
			   "CONDUIT_BB_STAGE_IN_COUNT=%zu\n"
			   "CONDUIT_BB_STAGE_OUT_COUNT=%zu\n"
			   "CONDUIT_BB_STAGE_IN=%s\n"
			   "CONDUIT_BB_STAGE_OUT=%s\n", key, nin, nout, in,
			   out) < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		goto out;
	}
	rc = 0;
	fd = open_path_file(path_file, (uint32_t)job_id);
	if (fd < 0 || write(fd, c->base.out.data, c->base.out.len) != (ssize_t)c->base.out.len) {
		char msg[4400];

		snprintf(msg, sizeof(msg), "job %ld: cannot write %s (%s): the "
			 "job starts without the CONDUIT_BB_* variables",
			 job_id, path_file, strerror(errno));
		cbb_call_queue_log(c, CBB_LOG_INFO, msg);
	}
	if (fd >= 0)
		close(fd);
out:
	free(in);
	free(out);
	if (rc < 0 && !quiet)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return cbb_bbcall_finish(L, c, rc, rc < 0 ? err.msg : NULL);
}

void cbb_register_report_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_bb_paths", l_paths },
		{ "slurm_bb_get_status", l_get_status },
		{ NULL, NULL },
	};

	cbb_register_globals(L, hooks);
}

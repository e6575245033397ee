/* call.c - see call.h */
#include "call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "readfile.h"
#include "stage.h"

/* Slurm's own cap on batch scripts is 4 MiB by default (max_script_size). */
#define CBB_SCRIPT_MAX ((size_t)64 << 20)

static void bbcall_done(cbb_call_t *base)
{
	cbb_bbcall_t *c = (cbb_bbcall_t *)base;

	cbb_grpc_close(&c->grpc);
	cbb_statedir_close(&c->sd);
	cbb_transfers_free(&c->transfers);
	free(c->bb_state);
	free(c->admin_comment);
	c->admin_comment = NULL;
	cbb_plan_free(&c->plan);
	free(c->script);
	free(c->user_name);
	free(c->work_dir);
	free(c->name);
	c->script = c->user_name = c->work_dir = c->name = c->bb_state = NULL;
	c->script_len = 0;
}

cbb_bbcall_t *cbb_bbcall_new(lua_State *L)
{
	return (cbb_bbcall_t *)cbb_call_new_as(L, sizeof(cbb_bbcall_t),
					       bbcall_done);
}

cbb_bbcall_t *cbb_bbcall_timed(lua_State *L, const char *hook,
			       const char *stage)
{
	cbb_bbcall_t *c = cbb_bbcall_new(L);

	c->hook = hook;
	c->stage = stage;
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	return c;
}

void cbb_bbcall_record(cbb_bbcall_t *c, int rc, const char *msg)
{
	cbb_hook_record_t r;
	struct timespec t1;
	char why[4400], line[4600];
	int64_t us;

	if (!c->hook)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (int64_t)(t1.tv_sec - c->t0.tv_sec) * 1000000 +
	     (t1.tv_nsec - c->t0.tv_nsec) / 1000;
	memset(&r, 0, sizeof(r));
	r.hook = c->hook;
	r.job_id = c->job.job_id;
	r.cluster = c->base.cluster;
	r.stage = c->stage;
	r.result = rc < 0 ? "error" : msg && !strcmp(msg, "BUSY") ? "busy" : "ok";
	r.duration_us = us > 0 ? (uint64_t)us : 0;
	if (c->stage) {
		r.counted = true;
		r.started = c->counts ? c->counts->started : 0;
		r.retried = c->counts ? c->counts->retried : 0;
		r.failed = c->counts ? c->counts->failed : 0;
	}
	c->hook = NULL; /* once */
	if (!c->base.cfg.audit_log)
		return;
	/* said at debug level: a stage's end says so loudly (account.c),
	 * and this would repeat it at every call */
	if (cbb_audit_hook(c->base.cfg.audit_log, &r, why, sizeof(why)) < 0) {
		snprintf(line, sizeof(line), "%s: no hook record written to "
			 "AuditLog %s: %s", r.hook, c->base.cfg.audit_log, why);
		cbb_call_queue_log(c, CBB_LOG_DEBUG, line);
	}
}

int cbb_bbcall_cluster(lua_State *L, cbb_bbcall_t *c, int job_info_idx,
		       cbb_err_t *err)
{
	if (cbb_call_cluster(L, &c->base, job_info_idx, err) < 0)
		return -1;
	cbb_statedir_close(&c->sd);
	cbb_statedir_init(&c->sd, &c->base.cfg, c->base.cluster);
	return 0;
}

void cbb_bbcall_job_ctx(cbb_bbcall_t *c, cbb_job_ctx_t *j, cbb_grpc_t *g,
			uint32_t job_id, uint32_t uid)
{
	cbb_job_ctx_init(j, &c->base.cfg, g, c->base.cluster, job_id, uid);
	j->sd = &c->sd;
	j->log = cbb_call_queue_log;
	j->log_ud = c;
}

int cbb_bbcall_finish(lua_State *L, cbb_bbcall_t *c, int rc, const char *msg)
{
	char copy[CBB_ERR_MAX];

	/* msg may live in the context being freed */
	snprintf(copy, sizeof(copy), "%s", msg ? msg : "");
	/* after the hook's own work, within what is left of its budget; its
	 * time is the hook's, as Slurm waits for it */
	if (c->sweep) {
		cbb_job_ctx_t self;

		cbb_bbcall_job_ctx(c, &self, &c->grpc, c->job.job_id, 0);
		cbb_stage_sweep(&self);
	}
	cbb_bbcall_record(c, rc, msg);
	cbb_call_flush_logs(L, &c->base);
	cbb_call_done(&c->base);
	return cbb_push_result(L, rc, msg ? copy : NULL, strlen(copy));
}

static uint32_t field_u32(lua_State *L, int idx, const char *key,
			  uint32_t dflt)
{
	return (uint32_t)cbb_lua_field_whole(L, idx, key, 4294967295.0, dflt);
}

int cbb_bbcall_job(lua_State *L, cbb_bbcall_t *c, int idx, unsigned long uid)
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
	c->have_state = cbb_lua_field_whole(L, idx, "job_state", 4294967295.0,
					    UINT64_MAX) != UINT64_MAX;
	c->exit_code = field_u32(L, idx, "exit_code", 0);
	c->have_exit = cbb_lua_field_whole(L, idx, "exit_code", 4294967295.0,
					   UINT64_MAX) != UINT64_MAX;
	/* seconds since 1970, up to the year 9999 */
	c->submit_time = (int64_t)cbb_lua_field_whole(L, idx, "submit_time",
					      253402300799.0, 0);
	if (cbb_lua_field_string(L, idx, "burst_buffer_state", &c->bb_state) < 0 ||
	    cbb_lua_field_string(L, idx, "admin_comment", &c->admin_comment) < 0 ||
	    cbb_lua_field_string(L, idx, "user_name", &c->user_name) < 0 ||
	    cbb_lua_field_string(L, idx, "work_dir", &c->work_dir) < 0 ||
	    cbb_lua_field_string(L, idx, "name", &c->name) < 0)
		return -1;
	j->user_name = c->user_name;
	j->work_dir = c->work_dir;
	j->name = c->name;
	return 0;
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

int cbb_bbcall_read_script(cbb_bbcall_t *c, const char *path, cbb_err_t *err)
{
	return cbb_read_job_script(&c->job, path, &c->script, &c->script_len,
				   err);
}


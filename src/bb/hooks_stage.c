/*
 * hooks_stage.c - the burst-buffer hooks Slurm runs in a separate,
 * short-lived process (setup ... get_status), and `paths`, which runs
 * inside slurmctld and so does no network I/O.
 *
 * The stage hooks read a script whose % symbols Slurm has already
 * replaced, so they parse without expanding; job_process and paths see
 * the user's own script and expand.
 */
#include "hooks_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bbcall.h"
#include "jobstate.h"
#include "key.h"
#include "outcome.h"
#include "script.h"
#include "stage.h"
#include "statefile.h"
#include "status.h"

#define CBB_STATUS_TIMEOUT_MS 5000   /* get_status blocks slurmctld */
#define CBB_SQUEUE_TIMEOUT_MS 5000

static const char *arg_str(lua_State *L, int i)
{
	return lua_type(L, i) == LUA_TSTRING ? lua_tostring(L, i) : NULL;
}

/* Finish a hook: flush queued logs, free C state, push the result. */
static int done(lua_State *L, cbb_bbcall_t *c, int rc, const char *msg)
{
	char copy[CBB_ERR_MAX];

	snprintf(copy, sizeof(copy), "%s", msg ? msg : "");
	cbb_call_flush_logs(L, &c->base);
	cbb_call_done(&c->base);
	return cbb_push_result(L, rc, msg ? copy : NULL, strlen(copy));
}

/*
 * When directives use % symbols, Slurm gives the stage hooks a rewritten
 * script (a memfd: only the directive lines, symbols replaced) whose line
 * numbers mean nothing to the user.  Take them from the job's own script,
 * which Slurm keeps in StateSaveLocation until the job is purged.  When
 * that cannot be read the rewritten script's numbers stay.
 */
#define CBB_DEFAULT_STATE_SAVE "/var/spool"

/* A directive line with a symbol that differs between an array's tasks. */
static bool per_task(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (text[i] == '%' && (text[i + 1] == 'a' ||
				       text[i + 1] == 'j' || text[i + 1] == 'b'))
			return true;
	return false;
}

/*
 * ... and mark the stage-in directives an array's tasks can share: those
 * whose own line has no %a, %j or %b (docs/directives.md, "Job arrays").
 * When the job's own script cannot be read none is shared.
 */
static void user_lines(cbb_bbcall_t *c, const char *path)
{
	char conf[4096], ssl[4096], orig[4200], *text = NULL;
	cbb_script_t sc;
	cbb_err_t err;
	size_t len, i;

	if (strncmp(path, "/proc/", 6)) {
		/* the job's own script: its lines are right, no symbols */
		for (i = 0; i < c->plan.n; i++)
			c->plan.v[i].shared = c->plan.v[i].stage == CBB_STAGE_IN;
		return;
	}
	if (cbb_slurm_conf_get("StateSaveLocation", conf, sizeof(conf), ssl,
			       sizeof(ssl)) < 0)
		snprintf(ssl, sizeof(ssl), "%s", CBB_DEFAULT_STATE_SAVE);
	snprintf(orig, sizeof(orig), "%s/hash.%u/job.%u/script", ssl,
		 c->job.job_id % 10, c->job.job_id);
	cbb_err_clear(&err);
	if (cbb_read_job_script(&c->job, orig, &text, &len, &err) < 0)
		return;
	if (cbb_script_scan(text, len, c->base.cfg.directive, c->base.cfg.max_directives,
			    &sc, &err) == 0 && sc.count == c->plan.n)
		for (i = 0; i < sc.count; i++) {
			c->plan.v[i].line = sc.lines[i].lineno;
			c->plan.v[i].shared =
				c->plan.v[i].stage == CBB_STAGE_IN &&
				!per_task(sc.lines[i].text, sc.lines[i].len);
		}
	cbb_script_free(&sc);
	free(text);
}

/* Job facts that only job_info gives (after cbb_bbcall_job). */
static void job_facts(const cbb_bbcall_t *c, cbb_job_ctx_t *j)
{
	j->restart = c->restart;
	j->submit = c->submit_time;
	/* base state PENDING (0) with a restart count: requeued */
	j->requeued = (c->job_state & 0xff) == 0 && c->restart > 0;
	if (c->job.array_task_id != CBB_NO_VAL && c->job.array_job_id)
		j->array_job_id = c->job.array_job_id;
	j->array_task_id = c->job.array_task_id;
	j->admin_comment = c->admin_comment;
	j->account = true; /* when a poll finds the staging over */
}

/*
 * Whether another task of the array still waits on its shared
 * stage-ins: a task that joined them and is not over.  When squeue
 * cannot say, it is taken to wait (a shared transfer is never aborted
 * under a task that may need it).  With none left, the array's shared
 * records go too.
 */
static bool others_wait(cbb_bbcall_t *c, uint32_t array_job_id,
			uint32_t self)
{
	cbb_recs_t joined;
	cbb_err_t err;
	char sq[4200];
	uint32_t *ids;
	size_t i, n = 0;
	int alive;

	cbb_err_clear(&err);
	if (cbb_shared_load(&c->base.cfg, c->base.cluster, array_job_id,
			    &joined, &err) < 0)
		return true;
	ids = calloc(joined.n + 1, sizeof(*ids));
	if (!ids) {
		cbb_recs_free(&joined);
		return true;
	}
	for (i = 0; i < joined.n; i++) {
		long id = strtol(joined.v[i].id, NULL, 10);

		if (joined.v[i].kind == CBB_REC_JOINED && id > 0 &&
		    id <= (long)UINT32_MAX && (uint32_t)id != self)
			ids[n++] = (uint32_t)id;
	}
	cbb_recs_free(&joined);
	/* one squeue for the whole array, however many tasks joined */
	alive = cbb_any_alive(cbb_conf_squeue(&c->base.cfg, sq, sizeof(sq)),
			      array_job_id, ids, n, CBB_SQUEUE_TIMEOUT_MS);
	free(ids);
	if (alive == 0)
		cbb_shared_forget(&c->base.cfg, c->base.cluster, array_job_id);
	return alive != 0;
}

/*
 * A teardown has no job_info: the task's own records say whether it
 * joined its array's shared stage-ins, and of which array.
 */
static uint32_t array_of(cbb_bbcall_t *c, uint32_t job_id)
{
	cbb_recs_t own;
	cbb_err_t err;
	size_t i;
	long a = 0;

	cbb_err_clear(&err);
	if (cbb_recs_load(&c->base.cfg, c->base.cluster, job_id, UINT32_MAX,
			  0, &own, &err) < 0)
		return 0;
	for (i = 0; i < own.n; i++)
		if (own.v[i].kind == CBB_REC_JOINED)
			a = strtol(own.v[i].id, NULL, 10);
	cbb_recs_free(&own);
	return a > 0 && a <= (long)UINT32_MAX ? (uint32_t)a : 0;
}

static void teardown_array(cbb_bbcall_t *c, cbb_job_ctx_t *j)
{
	j->array_job_id = array_of(c, j->job_id);
	if (j->array_job_id)
		j->abort_shared = !others_wait(c, j->array_job_id, j->job_id);
}

/* How many tasks joined an array's shared stage-ins. */
static unsigned joined_tasks(cbb_bbcall_t *c, uint32_t array_job_id)
{
	cbb_recs_t r;
	cbb_err_t err;
	size_t i, k;
	unsigned n = 0;

	cbb_err_clear(&err);
	if (!array_job_id || cbb_shared_load(&c->base.cfg, c->base.cluster,
					     array_job_id, &r, &err) < 0)
		return 0;
	for (i = 0; i < r.n; i++) {
		if (r.v[i].kind != CBB_REC_JOINED)
			continue;
		for (k = 0; k < i; k++)
			if (r.v[k].kind == CBB_REC_JOINED &&
			    !strcmp(r.v[k].id, r.v[i].id))
				break;
		n += k == i;
	}
	cbb_recs_free(&r);
	return n;
}

/*
 * Common start of data_in/test_data_in/data_out/test_data_out:
 * (job_id, job_script, uid, gid, job_info).  Leaves a parsed plan, an
 * open connection and a job context.
 */
static int stage_prepare(lua_State *L, cbb_bbcall_t *c, cbb_job_ctx_t *j,
			 cbb_err_t *err)
{
	long job_id = cbb_arg_id(L, 1), uid = cbb_arg_id(L, 3);
	cbb_parse_opts_t o = { 0 };

	if (job_id < 0 || uid < 0)
		return cbb_err(err, "conduit_bb: bad job id or uid argument");
	if (cbb_config_load(&c->base.cfg, NULL, err) < 0)
		return -1;
	if (cbb_bbcall_job(L, c, 5, (unsigned long)uid) < 0)
		return cbb_err(err, "conduit_bb: out of memory");
	c->job.job_id = (uint32_t)job_id;
	if (cbb_call_cluster(L, &c->base, 5, err) < 0 ||
	    cbb_bbcall_read_script(c, arg_str(L, 2), err) < 0)
		return -1;
	o.cfg = &c->base.cfg;
	o.job = &c->job;
	o.expand = false; /* Slurm already replaced the % symbols */
	if (cbb_parse_script(c->script, c->script_len, &o, &c->plan, err) < 0)
		return -1;
	user_lines(c, arg_str(L, 2));
	if (cbb_grpc_open(&c->grpc, &c->base.cfg, 0, err) < 0)
		return -1;
	cbb_job_ctx_init(j, &c->base.cfg, &c->grpc, c->base.cluster, c->job.job_id,
			 (uint32_t)uid);
	job_facts(c, j);
	j->log = cbb_call_queue_log;
	j->log_ud = c;
	return 0;
}

/*
 * #CONDUIT_POST --when=: mark the directives this job's outcome skips
 * (stage.c leaves them alone) and record each once per attempt for
 * bbstat, logging it the first time.  Stage-out only; a record that
 * cannot be written only costs the bbstat row.
 */
static void apply_when(cbb_bbcall_t *c, const cbb_job_ctx_t *j)
{
	cbb_outcome_t o;
	cbb_recs_t had;
	cbb_err_t err;
	uint32_t a = cbb_attempt(j, CBB_STAGE_OUT);
	size_t i, k;

	cbb_outcome(c->have_state, c->job_state, c->have_exit, c->exit_code,
		    &o);
	for (i = 0; i < c->plan.n; i++) {
		cbb_directive_t *d = &c->plan.v[i];

		d->skip = d->stage == CBB_STAGE_OUT && !cbb_when_runs(d->when, &o);
	}
	cbb_err_clear(&err);
	if (cbb_skips_load(&c->base.cfg, c->base.cluster, j->job_id,
			   j->restart, j->submit, &had, &err) < 0)
		return;
	for (i = 0; i < c->plan.n; i++) {
		const cbb_directive_t *d = &c->plan.v[i];
		cbb_rec_t r;
		char text[48], msg[160];

		if (!d->skip)
			continue;
		for (k = 0; k < had.n; k++)
			if (had.v[k].attempt == a && had.v[k].index == d->index)
				break;
		if (k < had.n)
			continue;
		memset(&r, 0, sizeof(r));
		r.restart = j->restart;
		r.submit = j->submit;
		r.type = CBB_KEY_POST;
		r.attempt = a;
		r.index = d->index;
		r.made = (int64_t)time(NULL);
		r.kind = CBB_REC_SKIPPED;
		snprintf(r.id, sizeof(r.id), "%s:%s:%u:%s",
			 cbb_when_name(d->when), o.why, d->line, j->user);
		if (cbb_skips_add(&c->base.cfg, c->base.cluster, j->job_id, &r,
				  &err) < 0)
			break;
		cbb_outcome_text(o.why, text, sizeof(text));
		snprintf(msg, sizeof(msg), "job %u: line %u: stage-out skipped "
			 "(when=%s, %s)", j->job_id, d->line,
			 cbb_when_name(d->when), text);
		cbb_call_queue_log(c, CBB_LOG_INFO, msg);
	}
	cbb_recs_free(&had);
}

static int data_hook(lua_State *L, cbb_stage_t stage)
{
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_job_ctx_t j;
	cbb_err_t err;
	int rc;

	cbb_err_clear(&err);
	rc = stage_prepare(L, c, &j, &err);
	if (rc == 0 && stage == CBB_STAGE_OUT)
		apply_when(c, &j);
	if (rc == 0)
		rc = cbb_stage_start(&j, &c->plan, stage, &err);
	if (rc < 0)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return done(L, c, rc, rc < 0 ? err.msg : NULL);
}

/*
 * A job cancelled while its transfers run does not always get a
 * teardown: when the cancel and the teardown reach slurmscriptd in the
 * wrong order, the kill meant for the stage-in scripts kills the
 * teardown, and Slurm keeps polling test_data_in.  So a poll asks Slurm
 * (squeue) whether the job is over when its buffer has been torn down,
 * and otherwise at most every CBB_ASK_EVERY_S seconds while transfers
 * still run; if the job is over it aborts them.  Returns 1 (err set)
 * when the job is over, else 0.  Stage-in only: stage-out always runs
 * after the job is over.
 */
#define CBB_ASK_EVERY_S 10

static int job_ended(cbb_bbcall_t *c, cbb_job_ctx_t *j, bool now,
		     cbb_err_t *err)
{
	cbb_job_facts_t f;
	cbb_err_t abort_err;
	char sq[4200];

	if (!now && !cbb_ask_due(&c->base.cfg, c->base.cluster, j->job_id,
				 CBB_ASK_EVERY_S))
		return 0;
	cbb_job_state(cbb_conf_squeue(&c->base.cfg, sq, sizeof(sq)), j->job_id,
		      CBB_SQUEUE_TIMEOUT_MS, &f);
	if (f.cls != CBB_JOB_OVER && f.cls != CBB_JOB_GONE)
		return 0;
	cbb_err_clear(&abort_err);
	if (j->array_job_id)
		j->abort_shared = !others_wait(c, j->array_job_id, j->job_id);
	if (cbb_stage_teardown(j, true, &abort_err) < 0)
		cbb_call_queue_log(c, CBB_LOG_ERROR, abort_err.msg);
	/* the teardown that would have forgotten the job may never come */
	cbb_state_forget(&c->base.cfg, c->base.cluster, j->job_id);
	cbb_err(err, "job %u is %s: stage-in stopped, its transfers aborted",
		j->job_id, f.state[0] ? f.state : "gone");
	return 1;
}

/* Slurm has torn the job's buffer down (burst_buffer_state). */
static bool torn_down(const cbb_bbcall_t *c)
{
	return c->bb_state && (!strcmp(c->bb_state, "teardown") ||
			       !strcmp(c->bb_state, "teardown-fail") ||
			       !strcmp(c->bb_state, "complete"));
}

static int test_hook(lua_State *L, cbb_stage_t stage)
{
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_job_ctx_t j;
	cbb_err_t err;
	int rc;

	cbb_err_clear(&err);
	if (stage_prepare(L, c, &j, &err) < 0) {
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	if (stage == CBB_STAGE_OUT)
		apply_when(c, &j);
	if (torn_down(c)) {
		/*
		 * Slurm keeps polling after a teardown (scancel, or
		 * scancel --hurry during stage-out); there is nothing left
		 * to wait for.  A stage-out ends quietly: --hurry asked to
		 * skip it.
		 */
		if (stage == CBB_STAGE_OUT) {
			cbb_call_queue_log(c, CBB_LOG_VERBOSE, "stage-out "
					   "abandoned: the buffer was torn "
					   "down (scancel --hurry)");
			return done(L, c, 0, NULL);
		}
		if (job_ended(c, &j, true, &err)) {
			cbb_call_queue_log(c, CBB_LOG_INFO, err.msg);
			return done(L, c, -1, err.msg);
		}
		return done(L, c, 0, "BUSY");
	}
	rc = cbb_stage_poll(&j, &c->plan, stage, &err);
	if (rc == CBB_POLL_BUSY &&
	    (stage != CBB_STAGE_IN || !job_ended(c, &j, false, &err)))
		return done(L, c, 0, "BUSY"); /* slurm.SLURM_BB_BUSY */
	if (rc == CBB_POLL_BUSY) {
		cbb_call_queue_log(c, CBB_LOG_INFO, err.msg);
		return done(L, c, -1, err.msg);
	}
	if (rc == CBB_POLL_FAILED) {
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	return done(L, c, 0, NULL);
}

/* slurm_bb_data_in(job_id, job_script, uid, gid, job_info) */
static int l_data_in(lua_State *L)
{
	return data_hook(L, CBB_STAGE_IN);
}

static int l_data_out(lua_State *L)
{
	return data_hook(L, CBB_STAGE_OUT);
}

static int l_test_data_in(lua_State *L)
{
	return test_hook(L, CBB_STAGE_IN);
}

static int l_test_data_out(lua_State *L)
{
	return test_hook(L, CBB_STAGE_OUT);
}

/*
 * setup, real_size, pre_run and post_run: conduit_bb reserves no space
 * and has nothing to do between the stages, so they succeed at once.
 */
static int l_nothing_to_do(lua_State *L)
{
	return cbb_push_result(L, 0, NULL, 0);
}

/*
 * slurm_bb_job_teardown(job_id, job_script, hurry, uid, gid)
 *
 * Without hurry Slurm tears down a buffer it is done with (after
 * stage-out, after a failed stage, for a job that is gone): nothing is
 * aborted, nothing waited for, nothing asked; the job's StateDir files
 * go.  Slurm passes hurry=true for a cancelled job and for scancel
 * --hurry during stage-out, but also after a slurmctld restart or
 * reconfigure during stage-in, when it then runs stage-in again:
 * aborting then would transfer everything twice (and break a half-done
 * mv).  So with hurry the job's state is asked from Slurm, and transfers
 * are aborted only when the job is over (its compute done: cancelled,
 * completed, in stage-out) or gone.  When Slurm cannot say, nothing is
 * aborted and the teardown fails, so that Slurm tries again.  The job's
 * StateDir files go once it is over, whether or not the Conduit server
 * answers.
 */
static int l_job_teardown(lua_State *L)
{
	long job_id = cbb_arg_id(L, 1), uid = cbb_arg_id(L, 4);
	const char *hurry = arg_str(L, 3);
	bool hurried = hurry && !strcmp(hurry, "true");
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_job_facts_t f;
	cbb_job_ctx_t j;
	cbb_err_t err;
	char msg[256], sq[4200];
	int rc = 0;

	cbb_err_clear(&err);
	if (job_id < 0 || uid < 0) {
		cbb_err(&err, "conduit_bb: bad job id or uid argument");
		return done(L, c, -1, err.msg);
	}
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0 ||
	    cbb_call_cluster(L, &c->base, 0, &err) < 0) {
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	if (!hurried) {
		snprintf(msg, sizeof(msg), "job %ld: teardown: leaving transfers "
			 "alone", job_id);
		cbb_call_queue_log(c, CBB_LOG_VERBOSE, msg);
		/* the last task of an array to go takes its shared records */
		cbb_job_ctx_init(&j, &c->base.cfg, NULL, c->base.cluster,
				 (uint32_t)job_id, (uint32_t)uid);
		teardown_array(c, &j);
		cbb_state_forget(&c->base.cfg, c->base.cluster, (uint32_t)job_id);
		return done(L, c, 0, NULL);
	}
	cbb_job_state(cbb_conf_squeue(&c->base.cfg, sq, sizeof(sq)),
		      (uint32_t)job_id, CBB_SQUEUE_TIMEOUT_MS, &f);
	if (f.cls == CBB_JOB_UNKNOWN) {
		cbb_err(&err, "job %ld: teardown: cannot learn the job's state "
			"from squeue; nothing aborted (Slurm retries)", job_id);
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	snprintf(msg, sizeof(msg), "job %ld: teardown (hurry, job state %s): %s",
		 job_id, f.state[0] ? f.state : "gone", f.cls == CBB_JOB_ALIVE ?
		 "leaving transfers alone" : "aborting active transfers");
	cbb_call_queue_log(c, CBB_LOG_VERBOSE, msg);
	if (f.cls == CBB_JOB_ALIVE)
		return done(L, c, 0, NULL);
	if (cbb_grpc_open(&c->grpc, &c->base.cfg, 0, &err) == 0) {
		cbb_job_ctx_init(&j, &c->base.cfg, &c->grpc, c->base.cluster,
				 (uint32_t)job_id, (uint32_t)uid);
		j.log = cbb_call_queue_log;
		j.log_ud = c;
		teardown_array(c, &j);
		rc = cbb_stage_teardown(&j, true, &err);
	} else {
		rc = -1;
	}
	cbb_state_forget(&c->base.cfg, c->base.cluster, (uint32_t)job_id);
	if (rc < 0)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return done(L, c, rc, rc < 0 ? err.msg : NULL);
}

static const char status_usage[] =
	"usage: scontrol show bbstat conduit JOBID [json]\n"
	"Shows the Conduit transfers of a job's staging directives; users "
	"see their own jobs, root sees every job.\n";

/*
 * slurm_bb_get_status(uid, gid, "conduit", JOBID [, "json"])
 * (scontrol takes --json as its own option, so users write "json";
 * "--json" is accepted too, for callers that reach the hook directly.)
 */
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

static int l_get_status(lua_State *L)
{
	int top = lua_gettop(L), i;
	long caller = cbb_arg_id(L, 1), job_id = -1;
	bool json = false, bad = false;
	const char *what = arg_str(L, 3);
	cbb_bbcall_t *c;
	cbb_err_t err;
	cbb_recs_t skips;
	bool transport;
	char rx[2 * CBB_KEY_MAX + 128], user[24];
	uint32_t array;
	int rc;

	for (i = 4; i <= top; i++) {
		const char *a = arg_str(L, i);

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
	    cbb_call_cluster(L, &c->base, 0, &err) < 0) {
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	/* the caller's own transfers; root sees everyone's */
	snprintf(user, sizeof(user), "%ld", caller);
	array = array_of(c, (uint32_t)job_id);
	if (array)
		cbb_key_array_regex(rx, sizeof(rx), c->base.cluster,
				    (uint32_t)job_id, array);
	else
		cbb_key_job_regex(rx, sizeof(rx), c->base.cluster,
				  (uint32_t)job_id, -1);
	/* bbstat holds slurmctld's burst-buffer lock: one short budget */
	if (cbb_grpc_open(&c->grpc, &c->base.cfg,
			  c->base.cfg.request_timeout_ms < CBB_STATUS_TIMEOUT_MS ?
				  c->base.cfg.request_timeout_ms :
				  CBB_STATUS_TIMEOUT_MS, &err) < 0 ||
	    cbb_conduit_query(&c->grpc, caller == 0 ? "" : user, rx,
			      &c->transfers, &transport, &err) < 0) {
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
		return done(L, c, -1, err.msg);
	}
	/* a StateDir problem only costs the skipped rows */
	if (cbb_skips_load(&c->base.cfg, c->base.cluster, (uint32_t)job_id,
			   UINT32_MAX, 0, &skips, &err) < 0) {
		skips.v = NULL;
		skips.n = 0;
		cbb_err_clear(&err);
	}
	if (caller != 0)
		own_skips(&skips, user);
	rc = cbb_status_render(&c->transfers, &skips,
			       joined_tasks(c, array ? array : (uint32_t)job_id),
			       (uint32_t)job_id, json, &c->base.out);
	cbb_recs_free(&skips);
	if (rc < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		return done(L, c, -1, err.msg);
	}
	cbb_call_flush_logs(L, &c->base);
	lua_pushinteger(L, 0);
	lua_pushlstring(L, c->base.out.data ? c->base.out.data : "", c->base.out.len);
	cbb_call_done(&c->base);
	return 2;
}

/* The directives of one stage as compact JSON for the job's environment. */
static char *stage_json(const cbb_plan_t *p, cbb_stage_t st, size_t *count)
{
	json_t *arr = json_array();
	size_t i, k;
	char *s;

	*count = 0;
	if (!arr)
		return NULL;
	for (i = 0; i < p->n; i++) {
		const cbb_directive_t *d = &p->v[i];
		json_t *o, *src;

		if (d->stage != st)
			continue;
		o = json_object();
		src = json_array();
		for (k = 0; k < d->nsources; k++)
			json_array_append_new(src, json_string(d->sources[k]));
		json_object_set_new(o, "line", json_integer(d->line));
		json_object_set_new(o, "action", json_string(cbb_action_name(d->action)));
		json_object_set_new(o, "recursive", json_boolean(d->recursive));
		json_object_set_new(o, "sources", src);
		json_object_set_new(o, "destination", json_string(d->destination));
		json_array_append_new(arr, o);
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
	const char *path_file = arg_str(L, 3);
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_parse_opts_t o = { 0 };
	cbb_err_t err;
	char key[CBB_KEY_MAX], safe[CBB_CLUSTER_MAX], *in = NULL, *out = NULL;
	size_t nin, nout;
	int fd, rc = -1;

	cbb_err_clear(&err);
	if (job_id < 0 || uid < 0 || !path_file) {
		cbb_err(&err, "conduit_bb: paths needs job id, path file and uid");
		return done(L, c, -1, err.msg);
	}
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0)
		goto out;
	if (cbb_bbcall_job(L, c, 6, (unsigned long)uid) < 0) {
		cbb_err(&err, "conduit_bb: out of memory");
		goto out;
	}
	c->job.job_id = (uint32_t)job_id;
	if (cbb_call_cluster(L, &c->base, 6, &err) < 0 ||
	    cbb_bbcall_read_script(c, arg_str(L, 2), &err) < 0)
		goto out;
	o.cfg = &c->base.cfg;
	o.job = &c->job;
	o.expand = true; /* paths gets the plain script */
	if (cbb_parse_script(c->script, c->script_len, &o, &c->plan, &err) < 0)
		goto out;
	in = stage_json(&c->plan, CBB_STAGE_IN, &nin);
	out = stage_json(&c->plan, CBB_STAGE_OUT, &nout);
	cbb_cluster_safe(safe, c->base.cluster);
	snprintf(key, sizeof(key), "SLURMJOB:%ld,CLUSTER:%s,RESTART:%u,",
		 job_id, safe, c->restart);
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
	if (rc < 0)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return done(L, c, rc, rc < 0 ? err.msg : NULL);
}

void cbb_register_stage_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_bb_setup", l_nothing_to_do },
		{ "slurm_bb_data_in", l_data_in },
		{ "slurm_bb_test_data_in", l_test_data_in },
		{ "slurm_bb_real_size", l_nothing_to_do },
		{ "slurm_bb_paths", l_paths },
		{ "slurm_bb_pre_run", l_nothing_to_do },
		{ "slurm_bb_post_run", l_nothing_to_do },
		{ "slurm_bb_data_out", l_data_out },
		{ "slurm_bb_test_data_out", l_test_data_out },
		{ "slurm_bb_job_teardown", l_job_teardown },
		{ "slurm_bb_get_status", l_get_status },
		{ NULL, NULL },
	};

	cbb_register_globals(L, hooks);
}

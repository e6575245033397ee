/*
 * staging.c - the burst-buffer hooks that stage, each run by Slurm
 * in a short-lived slurmscriptd child: setup, data_in, test_data_in,
 * real_size, pre_run, post_run, data_out, test_data_out, job_teardown.
 * They marshal Slurm's arguments into a job context and the stage code's
 * answer back (stage.h); the decisions are the stage code's.
 * get_status and paths are in report.c, job_process and pools in
 * submit.c.
 *
 * The stage hooks read a script whose % symbols Slurm has already
 * replaced, so they parse without expanding; job_process and paths see
 * the user's own script and expand.
 */
#include "hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"
#include "key.h"
#include "lost.h"
#include "outcome.h"
#include "stage.h"
#include "statefile.h"

/*
 * When directives use % symbols, Slurm gives the stage hooks a rewritten
 * script (a memfd: only the directive lines, symbols replaced) whose line
 * numbers mean nothing to the user.  Take them from the job's own script,
 * which Slurm keeps in StateSaveLocation until the job is purged.  When
 * that cannot be read the rewritten script's numbers stay.
 */
#define CBB_DEFAULT_STATE_SAVE "/var/spool"

/*
 * ... and mark the stage-in directives an array's tasks can share, by
 * the symbols the job's own lines use (cbb_directive_shared, the rule
 * `conduit-bb check` shows; docs/directives.md, "Job arrays").  When the
 * job's own script cannot be read none is shared.
 */
static void user_lines(cbb_bbcall_t *c, const char *path,
		       const cbb_parse_opts_t *o)
{
	char conf[4096], ssl[4096], orig[4200], *text = NULL;
	cbb_err_t err;
	size_t len, i;

	if (strncmp(path, "/proc/", 6)) {
		/* the job's own script: its lines are right, no symbols */
		for (i = 0; i < c->plan.n; i++)
			c->plan.v[i].shared = cbb_directive_shared(&c->plan.v[i]);
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
	(void)cbb_plan_own_script(&c->plan, text, len, o);
	free(text);
}

/* What only job_info tells the job context (after cbb_bbcall_job). */
static void job_ctx_from_info(const cbb_bbcall_t *c, cbb_job_ctx_t *j)
{
	j->restart = c->restart;
	j->submit = c->submit_time;
	j->have_state = c->have_state;
	j->job_state = c->job_state;
	j->have_exit = c->have_exit;
	j->exit_code = c->exit_code;
	/* base state PENDING (0) with a restart count: requeued */
	j->requeued = (c->job_state & 0xff) == 0 && c->restart > 0;
	if (c->job.array_task_id != CBB_NO_VAL && c->job.array_job_id)
		j->array_job_id = c->job.array_job_id;
	j->array_task_id = c->job.array_task_id;
	j->admin_comment = c->admin_comment;
	j->account = true; /* when a poll finds the staging over */
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
	if (cbb_bbcall_cluster(L, c, 5, err) < 0 ||
	    cbb_bbcall_read_script(c, cbb_lua_str(L, 2), err) < 0)
		return -1;
	o.cfg = &c->base.cfg;
	o.job = &c->job;
	o.expand = false; /* Slurm already replaced the % symbols */
	if (cbb_parse_script(c->script, c->script_len, &o, &c->plan, err) < 0)
		return -1;
	user_lines(c, cbb_lua_str(L, 2), &o);
	/* (libcurl and the connection come with the first RPC: a poll
	 * decided from the shared reply needs neither) */
	if (cbb_grpc_open_lazy(&c->grpc, &c->base.cfg, 0, err) < 0)
		return -1;
	cbb_bbcall_job_ctx(c, j, &c->grpc, c->job.job_id, (uint32_t)uid);
	job_ctx_from_info(c, j);
	c->counts = j; /* lives until the hook's cbb_bbcall_finish */
	return 0;
}

static int data_hook(lua_State *L, cbb_stage_t stage)
{
	cbb_bbcall_t *c = stage == CBB_STAGE_IN ?
		cbb_bbcall_timed(L, "slurm_bb_data_in", "in") :
		cbb_bbcall_timed(L, "slurm_bb_data_out", "out");
	cbb_job_ctx_t j;
	cbb_err_t err;
	int rc;

	cbb_err_clear(&err);
	rc = stage_prepare(L, c, &j, &err);
	/*
	 * Other jobs' orphaned stage-ins (cbb_stage_sweep): swept by the
	 * starts and the teardowns, never by a poll, which asks Slurm
	 * nothing (job_info says the job's state).
	 */
	c->sweep = rc == 0;
	if (rc == 0 && stage == CBB_STAGE_OUT) {
		cbb_stage_apply_when(&j, &c->plan);
		/* before anything starts: were Slurm to kill this hook and
		 * never run it again, a sweep finishes it (lost.c) */
		cbb_lost_save(&j, &c->plan);
	}
	if (rc == 0)
		rc = cbb_stage_start(&j, &c->plan, stage, &err);
	if (rc < 0)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return cbb_bbcall_finish(L, c, rc, rc < 0 ? err.msg : NULL);
}

/* Slurm has torn the job's buffer down (burst_buffer_state). */
static bool torn_down(const cbb_bbcall_t *c)
{
	return c->bb_state && (!strcmp(c->bb_state, "teardown") ||
			       !strcmp(c->bb_state, "teardown-fail") ||
			       !strcmp(c->bb_state, "complete"));
}

/*
 * test_data_in / test_data_out: SUCCESS when the stage is done, SUCCESS
 * and "BUSY" (slurm.SLURM_BB_BUSY) while it runs, ERROR and why.  A job
 * found over fails its stage-in at info level (it is no fault).
 */
static int test_hook(lua_State *L, cbb_stage_t stage)
{
	cbb_bbcall_t *c = stage == CBB_STAGE_IN ?
		cbb_bbcall_timed(L, "slurm_bb_test_data_in", "in") :
		cbb_bbcall_timed(L, "slurm_bb_test_data_out", "out");
	const char *busy = NULL;
	cbb_job_ctx_t j;
	cbb_err_t err;
	int rc, level = CBB_LOG_ERROR;

	cbb_err_clear(&err);
	rc = stage_prepare(L, c, &j, &err);
	if (rc < 0)
		goto out;
	if (stage == CBB_STAGE_OUT) {
		cbb_stage_apply_when(&j, &c->plan);
		cbb_lost_polled(&j, &c->plan);
	}
	if (torn_down(c)) {
		/*
		 * Slurm keeps polling after a teardown (scancel, or
		 * scancel --hurry during stage-out); there is nothing left
		 * to wait for.  A stage-out ends quietly: --hurry asked to
		 * skip it.
		 */
		if (stage == CBB_STAGE_OUT)
			cbb_call_queue_log(c, CBB_LOG_VERBOSE, "stage-out "
					   "abandoned: the buffer was torn "
					   "down (scancel --hurry)");
		else if (cbb_stage_job_ended(&j, true, &err))
			rc = -1;
		else
			busy = "BUSY";
		level = CBB_LOG_INFO;
		goto out;
	}
	switch (cbb_stage_poll(&j, &c->plan, stage, &err)) {
	case CBB_POLL_BUSY:
		if (stage == CBB_STAGE_IN && cbb_stage_job_ended(&j, false, &err))
			rc = -1;
		else
			busy = "BUSY";
		level = CBB_LOG_INFO;
		break;
	case CBB_POLL_FAILED:
		rc = -1;
		break;
	default:
		break;
	}
out:
	if (rc < 0)
		cbb_call_queue_log(c, level, err.msg);
	return cbb_bbcall_finish(L, c, rc, rc < 0 ? err.msg : busy);
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
 * slurm_bb_post_run(job_id, job_script, uid, gid, job_info): the job's
 * compute is over and its stage-out comes next.  The stage-out plan is
 * saved here already, as data_out saves it first (cbb_lost_save): were
 * slurmctld to stop and kill data_out before data_out got that far (as
 * a 26.05 wave saw), the plan is there for the teardown, the sweeps and
 * `conduit-bb recover` to finish the stage-out from.  Never fails the
 * hook: what cannot be read here, data_out says.
 */
static int l_post_run(lua_State *L)
{
	cbb_bbcall_t *c = cbb_bbcall_new(L);
	cbb_job_ctx_t j;
	cbb_err_t err;

	cbb_err_clear(&err);
	if (stage_prepare(L, c, &j, &err) == 0) {
		cbb_stage_apply_when(&j, &c->plan);
		cbb_lost_save(&j, &c->plan);
	}
	return cbb_bbcall_finish(L, c, 0, NULL);
}

/*
 * slurm_bb_job_teardown(job_id, job_script, hurry, uid, gid)
 *
 * Without hurry Slurm tears down a buffer it is done with (after
 * stage-out, after a failed stage, for a job that is gone): nothing is
 * waited for, and nothing aborted but the stage-ins of a job that is over
 * (cbb_stage_teardown_done); the job's StateDir files go.  Slurm passes hurry=true for a cancelled job and for scancel
 * --hurry during stage-out, but also after a slurmctld restart or
 * reconfigure during stage-in, when it then runs stage-in again:
 * aborting then would transfer everything twice (and break a half-done
 * mv).  So with hurry the job's state is asked from Slurm, and transfers
 * are aborted only when the job is over (its compute done: cancelled,
 * completed, in stage-out) or gone.  When Slurm cannot say, nothing is
 * aborted and the teardown fails, so that Slurm tries again.  The job's
 * StateDir files go once it is over, whether or not the Conduit server
 * answers, except those of a stage-in never seen to end that could not be
 * aborted (a sweep, cbb_stage_sweep, stops it once the server answers),
 * and a mark stays that stops a stage hook Slurm still runs for the job
 * after this teardown (statefile.h, cbb_over_mark).  Every teardown then
 * sweeps for other jobs (bbcall's finish).
 */
static int l_job_teardown(lua_State *L)
{
	long job_id = cbb_arg_id(L, 1), uid = cbb_arg_id(L, 4);
	const char *hurry = cbb_lua_str(L, 3);
	bool hurried = hurry && !strcmp(hurry, "true");
	cbb_bbcall_t *c = cbb_bbcall_timed(L, "slurm_bb_job_teardown", NULL);
	cbb_job_ctx_t j;
	cbb_err_t err;
	bool quiet = false;
	int rc = 0;

	cbb_err_clear(&err);
	if (job_id < 0 || uid < 0) {
		/* Slurm's own mistake: answered, not logged */
		rc = cbb_err(&err, "conduit_bb: bad job id or uid argument");
		quiet = true;
		goto out;
	}
	c->job.job_id = (uint32_t)job_id; /* for its hook record */
	if (cbb_config_load(&c->base.cfg, NULL, &err) < 0 ||
	    cbb_bbcall_cluster(L, c, 0, &err) < 0) {
		rc = -1;
		goto out;
	}
	c->sweep = true; /* every teardown also sweeps (cbb_stage_sweep) */
	cbb_bbcall_job_ctx(c, &j, &c->grpc, (uint32_t)job_id, (uint32_t)uid);
	if (hurried)
		rc = cbb_stage_teardown_hurried(&j, &err);
	else
		cbb_stage_teardown_done(&j);
out:
	if (rc < 0 && !quiet)
		cbb_call_queue_log(c, CBB_LOG_ERROR, err.msg);
	return cbb_bbcall_finish(L, c, rc, rc < 0 ? err.msg : NULL);
}

void cbb_register_stage_hooks(lua_State *L)
{
	static const luaL_Reg hooks[] = {
		{ "slurm_bb_setup", l_nothing_to_do },
		{ "slurm_bb_data_in", l_data_in },
		{ "slurm_bb_test_data_in", l_test_data_in },
		{ "slurm_bb_real_size", l_nothing_to_do },
		{ "slurm_bb_pre_run", l_nothing_to_do },
		{ "slurm_bb_post_run", l_post_run },
		{ "slurm_bb_data_out", l_data_out },
		{ "slurm_bb_test_data_out", l_test_data_out },
		{ "slurm_bb_job_teardown", l_job_teardown },
		{ NULL, NULL },
	};

	cbb_register_globals(L, hooks);
}

/*
 * lost.c - a stage-out Slurm dropped, found and finished (stage.h,
 * cbb_lost_*).  Slurm kills the burst-buffer scripts still running when
 * slurmctld stops and may never run the job's stage-out again: a data_out
 * killed before it started every directive leaves outputs never copied,
 * a stage-out poll killed leaves transfers nobody follows to their end.
 * data_out saves what the stage-out is to do (the directives, --when=
 * already applied, and the facts that name its attempt) in StateDir's
 * .outplan; the sweep (sweep.c) finds a job whose stage-out was never
 * seen to end while Slurm says the job is over, and does what the job's
 * own test_data_out would have done: one poll, which starts what is
 * missing with the same keys and records (never twice) and follows
 * what runs, each sweep, until the stage ends; then the job's records
 * go, as its teardown would have taken them.
 *
 * The plan is JSON: {"v":1, the job's facts, "directives":[...]} with
 * each directive as cbb_directive_json writes it (place and options)
 * plus "skip".  A plan of another version, or one that does not read,
 * is declined (logged), never guessed at.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lost.h"

#include "directive_json.h"
#include "stage.h"

#define LOST_PLAN_VERSION 1

/* the plan as cbb_lost_save saves it; `rebuilt`: built by
 * cbb_lost_rebuild, no hook having run (its finishing leaves a mark) */
static void save(cbb_job_ctx_t *j, const cbb_plan_t *plan, bool rebuilt)
{
	json_t *o, *dirs;
	cbb_err_t err;
	size_t i, n = 0;
	char *text;

	if (!j->sd || cbb_plan_count(plan, CBB_STAGE_OUT, false) == 0)
		return; /* nothing that could be lost */
	o = json_object();
	dirs = json_array();
	if (!o || !dirs)
		goto oom;
	(void)json_object_set_new(o, "v", json_integer(LOST_PLAN_VERSION));
	(void)json_object_set_new(o, "job", json_integer(j->job_id));
	(void)json_object_set_new(o, "uid", json_integer(j->uid));
	(void)json_object_set_new(o, "restart", json_integer(j->restart));
	(void)json_object_set_new(o, "submit", json_integer(j->submit));
	(void)json_object_set_new(o, "requeued", json_boolean(j->requeued));
	(void)json_object_set_new(o, "array_job_id",
				  json_integer(j->array_job_id));
	(void)json_object_set_new(o, "array_task_id",
				  json_integer(j->array_task_id));
	(void)json_object_set_new(o, "saved", json_integer(time(NULL)));
	if (rebuilt) /* (a key earlier releases do not read) */
		(void)json_object_set_new(o, "rebuilt", json_true());
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		json_t *x;

		if (d->stage != CBB_STAGE_OUT)
			continue;
		x = cbb_directive_json(d, CBB_DJSON_PLACE | CBB_DJSON_OPTIONS);
		if (!x || json_array_size(json_object_get(x, "sources")) !=
			      d->nsources ||
		    !json_is_string(json_object_get(x, "destination"))) {
			json_decref(x);
			goto oom; /* a path JSON cannot hold: not saved */
		}
		(void)json_object_set_new(x, "skip", json_boolean(d->skip));
		if (json_array_append_new(dirs, x) < 0)
			goto oom;
		n++;
	}
	(void)json_object_set_new(o, "directives", dirs);
	dirs = NULL;
	text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	o = NULL;
	cbb_err_clear(&err);
	if (!text || cbb_outplan_write(j->sd, j->job_id, text, strlen(text),
				       &err) < 0)
		cbb_job_log(j, CBB_LOG_ERROR, "stage-out plan not saved (%s): "
			    "were Slurm to drop this stage-out, it could not "
			    "be finished", text ? err.msg : "out of memory");
	free(text);
	return;
oom:
	json_decref(o);
	json_decref(dirs);
	cbb_job_log(j, CBB_LOG_ERROR, "stage-out plan of %zu directive(s) not "
		    "saved (a path JSON cannot hold, or no memory): were "
		    "Slurm to drop this stage-out, it could not be finished", n);
}

void cbb_lost_save(cbb_job_ctx_t *j, const cbb_plan_t *plan)
{
	save(j, plan, false);
}

int cbb_lost_rebuild(cbb_job_ctx_t *j, const char *script, size_t len,
		     const cbb_job_t *job, cbb_err_t *err)
{
	cbb_parse_opts_t o = { 0 };
	cbb_plan_t plan;
	int rc;

	memset(&plan, 0, sizeof(plan));
	o.cfg = j->cfg;
	o.job = job;
	o.expand = true; /* Slurm's plain copy: its symbols are ours to expand */
	if (cbb_parse_script(script, len, &o, &plan, err) < 0) {
		cbb_plan_free(&plan);
		return -1;
	}
	cbb_stage_apply_when(j, &plan);
	if (cbb_plan_count(&plan, CBB_STAGE_OUT, false) == 0) {
		cbb_plan_free(&plan);
		return 1;
	}
	save(j, &plan, true);
	cbb_plan_free(&plan);
	rc = cbb_outplan_exists(j->sd, j->job_id) ? 0 : -1;
	if (rc < 0)
		cbb_err(err, "its stage-out plan could not be saved in StateDir "
			"(logged above)");
	return rc;
}

void cbb_lost_polled(cbb_job_ctx_t *j, const cbb_plan_t *plan)
{
	if (!j->sd)
		return;
	/* (a poll after a data_out of an earlier release, which saved none) */
	if (!cbb_outplan_exists(j->sd, j->job_id))
		cbb_lost_save(j, plan);
	else
		cbb_outplan_touch(j->sd, j->job_id);
}

static bool get_u32(const json_t *o, const char *k, uint32_t *v)
{
	const json_t *x = json_object_get(o, k);

	if (!json_is_integer(x) || json_integer_value(x) < 0 ||
	    json_integer_value(x) > (json_int_t)UINT32_MAX)
		return false;
	*v = (uint32_t)json_integer_value(x);
	return true;
}

static char *dup_str(cbb_arena_t *a, const json_t *x)
{
	if (!json_is_string(x))
		return NULL;
	return cbb_arena_strndup(a, json_string_value(x),
				 json_string_length(x));
}

/* One directive of the plan, into d (its strings in the plan's arena). */
static bool read_directive(cbb_plan_t *p, const json_t *x, cbb_directive_t *d)
{
	const json_t *src = json_object_get(x, "sources");
	const char *act = json_string_value(json_object_get(x, "action"));
	const char *when = json_string_value(json_object_get(x, "when"));
	const char *type = json_string_value(json_object_get(x, "type"));
	uint32_t line, index;
	size_t k;

	if (!json_is_array(src) || !act || !when || !type ||
	    strcmp(type, "POST") || !get_u32(x, "line", &line) ||
	    !get_u32(x, "index", &index) || index == 0 ||
	    !json_is_boolean(json_object_get(x, "recursive")) ||
	    !json_is_boolean(json_object_get(x, "skip")))
		return false;
	memset(d, 0, sizeof(*d));
	d->stage = CBB_STAGE_OUT;
	if (!strcmp(act, "cp"))
		d->action = CBB_CP;
	else if (!strcmp(act, "mv"))
		d->action = CBB_MV;
	else
		return false;
	if (!strcmp(when, "always"))
		d->when = CBB_WHEN_ALWAYS;
	else if (!strcmp(when, "success"))
		d->when = CBB_WHEN_SUCCESS;
	else if (!strcmp(when, "failure"))
		d->when = CBB_WHEN_FAILURE;
	else
		return false;
	d->recursive = json_is_true(json_object_get(x, "recursive"));
	d->every_attempt = json_is_true(json_object_get(x, "every_attempt"));
	d->skip = json_is_true(json_object_get(x, "skip"));
	d->line = line;
	d->index = index;
	d->nsources = json_array_size(src);
	if (d->nsources == 0)
		return false;
	d->sources = cbb_arena_alloc(&p->arena,
				     d->nsources * sizeof(*d->sources));
	if (!d->sources)
		return false;
	for (k = 0; k < d->nsources; k++)
		if (!(d->sources[k] = dup_str(&p->arena,
					      json_array_get(src, k))))
			return false;
	d->destination = dup_str(&p->arena, json_object_get(x, "destination"));
	return d->destination != NULL;
}

int cbb_lost_load(cbb_statedir_t *sd, uint32_t job_id, cbb_lost_t *out,
		  cbb_err_t *err)
{
	json_t *o, *dirs;
	json_error_t jerr;
	char *text;
	size_t len, i;
	uint32_t v, job;

	memset(out, 0, sizeof(*out));
	cbb_arena_init(&out->plan.arena);
	text = cbb_outplan_read(sd, job_id, &len);
	if (!text)
		return cbb_err(err, "no stage-out plan of this job that can be "
			       "trusted in StateDir");
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!o)
		return cbb_err(err, "its stage-out plan does not read (line "
			       "%d: %.200s): declined", jerr.line, jerr.text);
	dirs = json_object_get(o, "directives");
	if (!get_u32(o, "v", &v) || v != LOST_PLAN_VERSION) {
		json_decref(o);
		return cbb_err(err, "its stage-out plan is of another version "
			       "(a release that wrote format %u): declined", v);
	}
	if (!get_u32(o, "job", &job) || job != job_id ||
	    !get_u32(o, "uid", &out->uid) ||
	    !get_u32(o, "restart", &out->restart) ||
	    !get_u32(o, "array_job_id", &out->array_job_id) ||
	    !get_u32(o, "array_task_id", &out->array_task_id) ||
	    !json_is_integer(json_object_get(o, "submit")) ||
	    !json_is_integer(json_object_get(o, "saved")) ||
	    !json_is_boolean(json_object_get(o, "requeued")) ||
	    !json_is_array(dirs) || json_array_size(dirs) == 0 ||
	    json_array_size(dirs) > 4096)
		goto bad;
	out->submit = json_integer_value(json_object_get(o, "submit"));
	out->saved = json_integer_value(json_object_get(o, "saved"));
	out->requeued = json_is_true(json_object_get(o, "requeued"));
	out->rebuilt = json_is_true(json_object_get(o, "rebuilt"));
	out->plan.v = cbb_arena_alloc(&out->plan.arena, json_array_size(dirs) *
				      sizeof(*out->plan.v));
	if (!out->plan.v)
		goto bad;
	for (i = 0; i < json_array_size(dirs); i++) {
		if (!read_directive(&out->plan, json_array_get(dirs, i),
				    &out->plan.v[i]))
			goto bad;
		out->plan.n++;
	}
	json_decref(o);
	return 0;
bad:
	json_decref(o);
	cbb_plan_free(&out->plan);
	return cbb_err(err, "its stage-out plan does not hold what it must: "
		       "declined");
}

void cbb_lost_free(cbb_lost_t *l)
{
	cbb_plan_free(&l->plan);
}

uint32_t cbb_lost_attempt(const cbb_lost_t *l)
{
	return l->requeued && l->restart > 0 ? l->restart - 1 : l->restart;
}

bool cbb_lost_open(const cbb_lost_t *l, const cbb_recs_t *recs)
{
	uint32_t attempt = cbb_lost_attempt(l);
	size_t i;

	if (cbb_plan_count(&l->plan, CBB_STAGE_OUT, false) == 0)
		return false;
	for (i = 0; i < recs->n; i++)
		if (recs->v[i].kind == CBB_REC_ACCOUNTED &&
		    recs->v[i].type == CBB_KEY_POST &&
		    recs->v[i].attempt == attempt)
			return false; /* seen to end (done, or all skipped) */
	return true;
}

int cbb_lost_is_open(cbb_statedir_t *sd, uint32_t job_id)
{
	cbb_recs_t r;
	cbb_lost_t l;
	cbb_err_t err;
	int open = -1;

	if (!sd || !cbb_outplan_exists(sd, job_id))
		return 0;
	cbb_err_clear(&err);
	if (cbb_lost_load(sd, job_id, &l, &err) < 0)
		return -1;
	if (cbb_recs_load(sd, job_id, UINT32_MAX, 0, &r, &err) == 0) {
		open = cbb_lost_open(&l, &r);
		cbb_recs_free(&r);
	}
	cbb_lost_free(&l);
	return open;
}

int cbb_lost_finish(cbb_job_ctx_t *self, uint32_t id,
		    const cbb_job_facts_t *f, const char *who)
{
	cbb_job_ctx_t j;
	cbb_lost_t l;
	cbb_err_t err;
	const char *state = f->state[0] ? f->state : "gone";
	char by[64];
	int rc;

	/* the log's name for who does it: a sweep names the hook's job */
	if (!strcmp(who, "sweep"))
		snprintf(by, sizeof(by), "sweep (from job %u)", self->job_id);
	else
		snprintf(by, sizeof(by), "%s", who);
	cbb_err_clear(&err);
	if (cbb_lost_load(self->sd, id, &l, &err) < 0) {
		cbb_job_log(self, CBB_LOG_ERROR, "%s: job %u: %s", by, id,
			    err.msg);
		return -1;
	}
	cbb_job_ctx_init(&j, self->cfg, self->g, self->cluster, id, l.uid);
	j.sd = self->sd;
	j.log = self->log;
	j.log_ud = self->log_ud;
	j.restart = l.restart;
	j.submit = l.submit;
	j.requeued = l.requeued;
	j.array_job_id = l.array_task_id != CBB_NO_VAL ? l.array_job_id : 0;
	j.array_task_id = l.array_task_id;
	j.account = true;
	j.finished_by = who;
	if (cbb_over_for(j.sd, id, l.submit)) {
		/* scancel --hurry took it: not to be finished */
		cbb_job_log(&j, CBB_LOG_VERBOSE, "%s: its stage-out was dropped "
			    "by scancel --hurry; not finished", by);
		cbb_lost_free(&l);
		cbb_sd_forget(j.sd, id);
		return 0;
	}
	rc = cbb_stage_poll(&j, &l.plan, CBB_STAGE_OUT, &err);
	if (j.started)
		cbb_job_log(&j, CBB_LOG_INFO, "%s: the job is %s and Slurm runs "
			    "no stage-out hook for it any more (%s): started %u "
			    "of its stage-out transfer(s), as its data_out would "
			    "have", by, state, l.rebuilt ? "it could not run "
			    "them: slurmscriptd gone" : "a slurmctld restart "
			    "killed them", j.started);
	switch (rc) {
	case CBB_POLL_DONE:
		cbb_job_log(&j, CBB_LOG_INFO, "%s: stage-out of attempt %u "
			    "completed after Slurm dropped it (the job is %s)",
			    by, cbb_lost_attempt(&l), state);
		break;
	case CBB_POLL_FAILED:
		cbb_job_log(&j, CBB_LOG_ERROR, "%s: stage-out of attempt %u, "
			    "which Slurm dropped, failed: %s", by,
			    cbb_lost_attempt(&l), err.msg);
		break;
	default:
		cbb_job_log(&j, CBB_LOG_VERBOSE, "%s: stage-out that Slurm "
			    "dropped still runs (the job is %s); the next sweep "
			    "follows it", by, state);
		cbb_lost_free(&l);
		return 1;
	}
	/* ended, done or failed: what its teardown would take goes; a job
	 * Slurm keeps in STAGE_OUT, or one whose plan recover built (Slurm
	 * lists it a while yet), keeps a mark that it is done */
	cbb_sd_forget(j.sd, id);
	if (l.rebuilt || !strcmp(f->state, "STAGE_OUT"))
		cbb_outdone_mark(j.sd, id, l.submit);
	cbb_lost_free(&l);
	return 0;
}

bool cbb_lost_teardown(cbb_job_ctx_t *j)
{
	cbb_job_facts_t f;
	cbb_err_t err;
	char sq[4200];

	if (cbb_lost_is_open(j->sd, j->job_id) != 1)
		return false; /* the usual case: seen to end */
	/* Slurm's word: a job requeued is not one whose stage-out was
	 * dropped.  One in STAGE_OUT is: Slurm tears a buffer down without
	 * hurry only once it is done with its stage-out, and this one was
	 * never seen to end (its data_out or poll failed: killed as
	 * slurmctld stopped, 26.05's wave job 29, whose data_out Slurm
	 * killed before it started anything) */
	cbb_job_state(cbb_conf_squeue(j->cfg, sq, sizeof(sq)), j->job_id,
		      CBB_SQUEUE_TIMEOUT_MS, &f);
	/* no answer (a slurmctld stopping, 25.05's wave job 74): nothing
	 * final on it; the plan stays for the sweeps, which ask again */
	if (f.cls == CBB_JOB_UNKNOWN) {
		cbb_job_log(j, CBB_LOG_INFO, "teardown: its stage-out was never "
			    "seen to end and squeue gave no answer; its records "
			    "stay for the next sweep");
		return true;
	}
	if (!cbb_outplan_dropped(j->sd, j->job_id, cbb_job_ended_for_good(&f) ||
				 !strcmp(f.state, "STAGE_OUT"), f.state))
		return false;
	cbb_err_clear(&err);
	if (!j->g->multi && cbb_grpc_open(j->g, j->cfg, 0, &err) < 0) {
		cbb_job_log(j, CBB_LOG_ERROR, "teardown: its stage-out was never "
			    "seen to end, and %s; the next sweep follows it",
			    err.msg);
		return true;
	}
	return cbb_lost_finish(j, j->job_id, &f, "teardown") != 0;
}

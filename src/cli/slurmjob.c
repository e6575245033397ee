/* slurmjob.c - see slurmjob.h */
#include "slurmjob.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outcome.h"
#include "slurmlost.h"
#include "symbols.h"

#define JOB_JSON_MAX ((size_t)1 << 20)
#define SCRIPT_MAX ((size_t)64 << 20) /* as the hooks read it */
#define ASK_MS 10000

/*
 * A number of Slurm's JSON: a plain integer (older data parsers) or
 * {"set": true, "infinite": false, "number": N}.  0 with *set, -1 when
 * it is neither.
 */
static int number(const json_t *x, bool *set, json_int_t *v)
{
	const json_t *n;

	if (json_is_integer(x)) {
		*set = true;
		*v = json_integer_value(x);
		return 0;
	}
	n = json_object_get(x, "number");
	if (!json_is_object(x) || !json_is_boolean(json_object_get(x, "set")) ||
	    !json_is_integer(n) || json_is_true(json_object_get(x, "infinite")))
		return -1;
	*set = json_is_true(json_object_get(x, "set"));
	*v = json_integer_value(n);
	return 0;
}

static int u32(const json_t *o, const char *k, uint32_t *out)
{
	json_int_t v;
	bool set;

	if (number(json_object_get(o, k), &set, &v) < 0 || !set || v < 0 ||
	    v > (json_int_t)UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int text(const json_t *o, const char *k, char *buf, size_t size)
{
	const json_t *x = json_object_get(o, k);

	if (!json_is_string(x) || json_string_length(x) >= size ||
	    strlen(json_string_value(x)) != json_string_length(x))
		return -1;
	memcpy(buf, json_string_value(x), json_string_length(x) + 1);
	return 0;
}

/* The state words: ["COMPLETED", "STAGE_OUT"] (or one word). */
static int states(const json_t *x, cbb_slurm_job_t *out)
{
	size_t i, n = json_is_array(x) ? json_array_size(x) : 1;
	int base;

	if (!json_is_array(x) && !json_is_string(x))
		return -1;
	for (i = 0; i < n; i++) {
		const json_t *w = json_is_array(x) ? json_array_get(x, i) : x;
		const char *s = json_string_value(w);

		if (!s)
			return -1;
		if (!strcmp(s, "STAGE_OUT"))
			out->stage_out = true;
		if ((base = cbb_job_state_base(s)) < 0)
			continue;
		if (out->have_state)
			return -1; /* two base states */
		out->have_state = true;
		out->job_state = (uint32_t)base;
	}
	return 0;
}

/* {"return_code": N, "signal": {"id": N}}: the wait status, if known */
static void exit_code(const json_t *x, cbb_slurm_job_t *out)
{
	const json_t *sig = json_object_get(json_object_get(x, "signal"), "id");
	json_int_t rc, id;
	bool set;

	if (sig && number(sig, &set, &id) == 0 && set && id > 0 && id < 128) {
		out->have_exit = true;
		out->exit_code = (uint32_t)id;
		return;
	}
	if (number(json_object_get(x, "return_code"), &set, &rc) == 0 && set &&
	    rc >= 0 && rc < 256) {
		out->have_exit = true;
		out->exit_code = (uint32_t)rc << 8;
	}
}

int cbb_slurm_job_json(const char *txt, size_t len, uint32_t id,
		       cbb_slurm_job_t *out, cbb_err_t *err)
{
	json_error_t jerr;
	json_t *root, *jobs, *j;
	json_int_t v;
	size_t i;
	bool set;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	root = json_loadb(txt, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return cbb_err(err, "scontrol's record of job %u does not read "
			       "as JSON (line %d: %.100s)", id, jerr.line,
			       jerr.text);
	/* the record of job `id` itself: an array's own id lists every task
	 * (the one whose job id it is among them) */
	jobs = json_object_get(root, "jobs");
	j = NULL;
	for (i = 0; i < json_array_size(jobs); i++) {
		json_t *x = json_array_get(jobs, i);
		uint32_t k;

		if (json_is_object(x) && u32(x, "job_id", &k) == 0 && k == id) {
			if (j) {
				j = NULL; /* two records of one id */
				break;
			}
			j = x;
		}
	}
	if (!j) {
		cbb_err(err, "scontrol's answer holds no one record of job %u", id);
		goto done;
	}
	out->job_id = id;
	if (u32(j, "user_id", &out->user_id) < 0 ||
	    u32(j, "restart_cnt", &out->restart) < 0 ||
	    text(j, "user_name", out->user_name, sizeof(out->user_name)) < 0 ||
	    text(j, "name", out->name, sizeof(out->name)) < 0 ||
	    text(j, "current_working_directory", out->work_dir,
		 sizeof(out->work_dir)) < 0 ||
	    number(json_object_get(j, "submit_time"), &set, &v) < 0 ||
	    !set || v < 0 || states(json_object_get(j, "job_state"), out) < 0) {
		cbb_err(err, "scontrol's record of job %u lacks a field it "
			"must have (user, name, directory, restart count, "
			"submit time or state)", id);
		goto done;
	}
	out->submit = (int64_t)v;
	if (text(j, "cluster", out->cluster, sizeof(out->cluster)) < 0)
		out->cluster[0] = '\0';
	if (number(json_object_get(j, "end_time"), &set, &v) == 0 && set &&
	    v > 0)
		out->end = (int64_t)v;
	/* as job_info has them: an array task's array and index; any other
	 * job's array id 0 and no task id (Slurm's NO_VAL) */
	out->array_task_id = CBB_NO_VAL;
	if (number(json_object_get(j, "array_job_id"), &set, &v) == 0 && set &&
	    v > 0 && v <= (json_int_t)UINT32_MAX)
		out->array_job_id = (uint32_t)v;
	if (number(json_object_get(j, "array_task_id"), &set, &v) == 0 && set) {
		if (v < 0 || v >= (json_int_t)CBB_NO_VAL ||
		    out->array_job_id == 0) {
			cbb_err(err, "scontrol's record of array task %u does "
				"not name its array", id);
			goto done;
		}
		out->array_task_id = (uint32_t)v;
	}
	exit_code(json_object_get(j, "exit_code"), out);
	rc = 0;
done:
	json_decref(root);
	return rc;
}

/* scontrol ARGS...: its stdout, or -1 with err */
static int scontrol(const cbb_config_t *cfg, char *const args[], size_t max,
		    char **out, size_t *len, cbb_err_t *err)
{
	char prog[4200], *argv[8], *e;
	size_t i;
	int rc;

	snprintf(prog, sizeof(prog), "%s", cbb_conf_scontrol(cfg));
	argv[0] = prog;
	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	rc = cbb_sl_run(argv, ASK_MS, max, out, &e);
	if (rc != 0) {
		if (e)
			e[strcspn(e, "\n")] = '\0';
		if (rc < 0)
			cbb_err(err, "scontrol %s %s could not be run, timed out or "
				"said too much", args[0], args[1]);
		else
			cbb_err(err, "scontrol %s %s failed: %.200s", args[0],
				args[1], e);
		free(*out);
		free(e);
		*out = NULL;
		return -1;
	}
	free(e);
	*len = strlen(*out);
	return 0;
}

int cbb_slurm_job_ask(const cbb_config_t *cfg, uint32_t id,
		      cbb_slurm_job_t *out, cbb_err_t *err)
{
	char idtxt[16], a_show[] = "show", a_job[] = "job", a_json[] = "--json";
	char *show[] = { a_show, a_job, idtxt, a_json, NULL };
	char *rec = NULL;
	size_t n;
	int rc;

	snprintf(idtxt, sizeof(idtxt), "%u", id);
	if (scontrol(cfg, show, JOB_JSON_MAX, &rec, &n, err) < 0)
		return -1;
	rc = cbb_slurm_job_json(rec, n, id, out, err);
	free(rec);
	return rc;
}

int cbb_slurm_job_script(const cbb_config_t *cfg, uint32_t id,
			 char **script, size_t *len, cbb_err_t *err)
{
	char idtxt[16], a_write[] = "write", a_bs[] = "batch_script",
	     a_out[] = "-";
	char *write[] = { a_write, a_bs, idtxt, a_out, NULL };

	*script = NULL;
	snprintf(idtxt, sizeof(idtxt), "%u", id);
	if (scontrol(cfg, write, SCRIPT_MAX, script, len, err) < 0)
		return -1;
	if (!*len) {
		free(*script);
		*script = NULL;
		return cbb_err(err, "Slurm keeps no batch script of job %u", id);
	}
	return 0;
}

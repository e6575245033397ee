/*
 * test_cases.c - table-driven parser tests: one directory per case under
 * tests/data/parse/<case>/ holding
 *   script    the job script
 *   expected  "error: <message>", or one line per directive:
 *             "PRE cp -r line=N <src>... -> <dst>"
 *   job       optional key=value job facts (defaults below)
 *   conf      optional conduit_bb.conf text
 *   mode      optional "noexpand" (a stage hook: Slurm already expanded)
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "buf.h"
#include "directive.h"
#include "readfile.h"

static const char *data_dir = "tests/data/parse";

static char *slurp(const char *dir, const char *name, bool need)
{
	char path[1024], *text;
	size_t len;
	bool missing;
	cbb_err_t err;

	cbb_err_clear(&err);
	snprintf(path, sizeof(path), "%s/%s/%s", data_dir, dir, name);
	if (cbb_read_file(path, 1 << 20, &text, &len, &missing, &err) < 0)
		fail_msg("%s", err.msg);
	if (missing && need)
		fail_msg("%s is missing", path);
	return text;
}

static void load_job(const char *text, cbb_job_t *job, char *store,
		     size_t size)
{
	const char *p = text;

	job->job_id = 1;
	job->user_id = 1000;
	job->user_name = "user";
	job->work_dir = "/w";
	job->name = "job";
	job->array_job_id = 0;
	job->array_task_id = CBB_NO_VAL;
	if (!text)
		return;
	/* copy so values can point into it */
	snprintf(store, size, "%s", text);
	p = store;
	while (*p) {
		char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
		char *val;

		if (nl)
			*nl = '\0';
		assert_non_null(eq);
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(p, "job_id"))
			job->job_id = (uint32_t)strtoul(val, NULL, 10);
		else if (!strcmp(p, "user_id"))
			job->user_id = (uint32_t)strtoul(val, NULL, 10);
		else if (!strcmp(p, "array_job_id"))
			job->array_job_id = (uint32_t)strtoul(val, NULL, 10);
		else if (!strcmp(p, "array_task_id"))
			job->array_task_id = (uint32_t)strtoul(val, NULL, 10);
		else if (!strcmp(p, "user_name"))
			job->user_name = *val ? val : NULL;
		else if (!strcmp(p, "work_dir"))
			job->work_dir = *val ? val : NULL;
		else if (!strcmp(p, "name"))
			job->name = val;
		else
			fail_msg("unknown job key %s", p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void render(const cbb_plan_t *plan, cbb_buf_t *out)
{
	size_t i, k;

	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];

		cbb_buf_printf(out, "%s %s%s%s%s line=%u",
			       cbb_stage_name(d->stage),
			       cbb_action_name(d->action),
			       d->recursive ? " -r" : "",
			       d->when ? " when=" : "",
			       d->when ? cbb_when_name(d->when) : "", d->line);
		for (k = 0; k < d->nsources; k++)
			cbb_buf_printf(out, " <%s>", d->sources[k]);
		cbb_buf_printf(out, " -> <%s>\n", d->destination);
	}
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static void run_case(void **state)
{
	const char *name = *state;
	char *script, *expected, *jobtext, *conf, *mode, store[4096];
	cbb_config_t cfg;
	cbb_parse_opts_t opts = { 0 };
	cbb_plan_t plan;
	cbb_job_t job;
	cbb_err_t err;
	cbb_buf_t got;
	size_t slen;

	script = slurp(name, "script", true);
	expected = slurp(name, "expected", true);
	jobtext = slurp(name, "job", false);
	conf = slurp(name, "conf", false);
	mode = slurp(name, "mode", false);
	slen = strlen(script);

	cbb_err_clear(&err);
	cbb_config_defaults(&cfg);
	if (conf && cbb_config_parse(&cfg, conf, strlen(conf), "conf", &err) < 0)
		fail_msg("%s: conf: %s", name, err.msg);
	load_job(jobtext, &job, store, sizeof(store));
	opts.cfg = &cfg;
	opts.job = &job;
	opts.expand = !(mode && !strncmp(mode, "noexpand", 8));

	cbb_buf_init(&got, 0);
	if (cbb_parse_script(script, slen, &opts, &plan, &err) < 0)
		cbb_buf_printf(&got, "error: %s", err.msg);
	else
		render(&plan, &got);
	cbb_buf_adds(&got, "");
	trim(got.data);
	trim(expected);
	if (strcmp(got.data, expected) != 0)
		fail_msg("case %s\n--- expected\n%s\n--- got\n%s", name,
			 expected, got.data);

	cbb_buf_free(&got);
	cbb_plan_free(&plan);
	cbb_config_free(&cfg);
	free(script);
	free(expected);
	free(jobtext);
	free(conf);
	free(mode);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	struct CMUnitTest *tests;
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;
	int rc;

	if (argc > 1)
		data_dir = argv[1];
	d = opendir(data_dir);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", data_dir);
		return 1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "no cases in %s\n", data_dir);
		return 1;
	}
	qsort(names, n, sizeof(*names), by_name);
	tests = calloc(n, sizeof(*tests));
	for (i = 0; i < n; i++) {
		tests[i].name = names[i];
		tests[i].test_func = run_case;
		tests[i].initial_state = names[i];
	}
	rc = _cmocka_run_group_tests("parse cases", tests, n, NULL, NULL);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}

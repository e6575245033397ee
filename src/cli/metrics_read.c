/*
 * metrics_read.c - what `conduit-bb metrics` counts (metrics_int.h):
 * the AuditLog's directive lines and hook records, and the staging jobs,
 * start records and outages StateDir holds now.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics_int.h"
#include "slurmlost.h"
#include "statedir.h"
#include "statefile.h"

#define AUDIT_LINE_MAX ((size_t)1 << 20)

const double cbb_metrics_buckets[NBUCKETS] = { 1, 10, 30, 60, 300, 900, 3600,
					      14400, 86400 };
const char *const cbb_metrics_hooks[NHOOKS] = {
	"slurm_bb_job_process", "slurm_bb_data_in", "slurm_bb_test_data_in",
	"slurm_bb_data_out", "slurm_bb_test_data_out", "slurm_bb_job_teardown",
};
const double cbb_metrics_hook_buckets[NHBUCKETS] = {
	0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
};
const char *const cbb_metrics_results[NRESULTS] = { "ok", "busy", "error" };
const char *const cbb_metrics_outcomes[NOUTCOMES] = { "finished", "skipped",
						     "kept", "failed" };
const char *const cbb_metrics_stages[2] = { "in", "out" };

static int index_of(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

/* A hook record ("record":"hook"); false when it is not a good one. */
static bool hook_record(json_t *o, metrics_t *m)
{
	int h = index_of(cbb_metrics_hooks, NHOOKS,
			 json_string_value(json_object_get(o, "hook")));
	int r = index_of(cbb_metrics_results, NRESULTS,
			 json_string_value(json_object_get(o, "result")));
	json_t *v = json_object_get(o, "duration_us");
	double secs;
	size_t b;
	int st;

	if (h < 0 || r < 0 || !json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	secs = (double)json_integer_value(v) / 1e6;
	/* a stage hook's starts (records of older versions have none) */
	st = index_of(cbb_metrics_stages, 2,
		      json_string_value(json_object_get(o, "stage")));
	if (st >= 0) {
		json_t *n = json_object_get(o, "started");

		if (json_is_integer(n) && json_integer_value(n) > 0)
			m->started[st] += (unsigned long long)json_integer_value(n);
		n = json_object_get(o, "retried");
		if (json_is_integer(n) && json_integer_value(n) > 0)
			m->retried[st] += (unsigned long long)json_integer_value(n);
		n = json_object_get(o, "failed");
		if (json_is_integer(n) && json_integer_value(n) > 0)
			m->failed[st] += (unsigned long long)json_integer_value(n);
	}
	m->hook_calls[h][r]++;
	for (b = 0; b < NHBUCKETS; b++)
		m->hook_hist[h][b] += secs <= cbb_metrics_hook_buckets[b];
	m->hook_count[h]++;
	m->hook_sum[h] += secs;
	return true;
}

void cbb_metrics_read_audit(const char *path, metrics_t *m)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	m->audit_set = true;
	f = fopen(path, "r");
	if (!f) {
		m->audit_ok = errno == ENOENT; /* nothing ended yet */
		return;
	}
	m->audit_ok = true;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *o, *v;
		const char *dir, *state, *error;
		int s, out;

		if ((size_t)n > AUDIT_LINE_MAX ||
		    !(o = json_loadb(line, (size_t)n, 0, NULL))) {
			m->bad_lines++;
			continue;
		}
		/* a directive line has no "record" (as older versions wrote) */
		if ((v = json_object_get(o, "record"))) {
			const char *rec = json_string_value(v);

			if (!rec || strcmp(rec, "hook") || !hook_record(o, m))
				m->bad_lines++;
			json_decref(o);
			continue;
		}
		dir = json_string_value(json_object_get(o, "direction"));
		state = json_string_value(json_object_get(o, "state"));
		error = json_string_value(json_object_get(o, "error"));
		if (!dir || !state || (strcmp(dir, "in") && strcmp(dir, "out"))) {
			m->bad_lines++;
			json_decref(o);
			continue;
		}
		s = !strcmp(dir, "out");
		if (!strcmp(state, "SKIPPED"))
			out = OUT_SKIPPED;
		else if (!strcmp(state, "KEPT"))
			out = OUT_KEPT;
		else if (!strcmp(state, "TRANSFER_FINALIZED") &&
			 (!error || !strcmp(error, "ERROR_NONE")))
			out = OUT_FINISHED;
		else
			out = OUT_FAILED;
		m->directives[s][out]++;
		v = json_object_get(o, "finished_by");
		m->dropped_out += s && json_is_string(v);
		if (out == OUT_FINISHED) {
			double secs;
			size_t b;

			if (json_is_integer(v = json_object_get(o, "bytes")) &&
			    json_integer_value(v) > 0)
				m->bytes[s] += (unsigned long long)json_integer_value(v);
			if (json_is_integer(v = json_object_get(o, "files")) &&
			    json_integer_value(v) > 0)
				m->files[s] += (unsigned long long)json_integer_value(v);
			v = json_object_get(o, "seconds");
			secs = json_is_number(v) ? json_number_value(v) : 0;
			if (secs < 0)
				secs = 0;
			for (b = 0; b < NBUCKETS; b++)
				m->hist[s][b] += secs <= cbb_metrics_buckets[b];
			m->hist_count[s]++;
			m->hist_sum[s] += secs;
		}
		json_decref(o);
	}
	if (ferror(f))
		m->audit_ok = false;
	free(line);
	fclose(f);
}

void cbb_metrics_read_state(const cbb_config_t *cfg, metrics_t *m)
{
	int64_t now = (int64_t)time(NULL);
	cbb_sd_list_t sd;
	cbb_err_t err;
	size_t i;

	cbb_err_clear(&err);
	if (cbb_sd_list(cfg, &sd, &err) < 0)
		return;
	m->state_ok = true;
	for (i = 0; i < sd.n; i++) {
		const cbb_sd_job_t *j = &sd.v[i];
		cbb_statedir_t dir;
		cbb_sd_stage_t st;
		cbb_recs_t recs;
		int rc;

		if (j->down_since) {
			m->outage_jobs++;
			if (now - j->down_since > m->outage_s)
				m->outage_s = now - j->down_since;
		}
		if (!(j->files & CBB_SD_STARTED))
			continue;
		cbb_err_clear(&err);
		cbb_statedir_init(&dir, cfg, j->cluster);
		rc = cbb_recs_load(&dir, j->job_id, UINT32_MAX, 0, &recs, &err);
		cbb_statedir_close(&dir);
		if (rc < 0) {
			m->state_ok = false;
			break;
		}
		cbb_sd_stage_of(&recs, &st);
		cbb_recs_free(&recs);
		if (!st.any || st.accounted)
			continue;
		m->jobs[st.out]++;
		m->recs[st.out][0] += st.started;
		m->recs[st.out][1] += st.unsure;
		m->recs[st.out][2] += st.refused;
		m->recs[st.out][3] += st.lost;
	}
	cbb_sd_free(&sd);
}

void cbb_metrics_read_slurm(const cbb_config_t *cfg, metrics_t *m)
{
	static cbb_sl_list_t lost;
	size_t i;

	cbb_slurm_lost(cfg, -1, NULL, 0, &lost);
	m->slurm_ok = lost.answered;
	for (i = 0; i < lost.n; i++)
		m->lost[lost.v[i].kind - 1]++;
}

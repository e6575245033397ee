/*
 * metrics.c - `conduit-bb metrics [--output FILE] [--config FILE]`:
 * Prometheus text exposition (format 0.0.4) for node_exporter's textfile
 * collector.  No network: it reads what the hooks leave behind.
 *
 *   from the AuditLog (one JSON line per directive when its stage ends;
 *   counters, reset when logrotate starts a new file, which Prometheus's
 *   rate() takes as a counter reset):
 *     conduit_bb_directives_total{stage,outcome}   finished, skipped, kept
 *     conduit_bb_transferred_bytes_total{stage}
 *     conduit_bb_transferred_files_total{stage}
 *     conduit_bb_transfer_duration_seconds{stage}  histogram
 *   and from its hook records (one per call of the staging hooks):
 *     conduit_bb_transfers_started_total{stage}
 *     conduit_bb_transfers_retried_total{stage}
 *     conduit_bb_transfers_failed_total{stage}
 *     conduit_bb_hook_duration_seconds{hook}       histogram
 *     conduit_bb_hook_calls_total{hook,result}     ok, busy, error
 *   from StateDir (gauges: what is staging now):
 *     conduit_bb_staging_jobs{stage}
 *     conduit_bb_stage_directives{stage,kind}      by their newest start
 *                                                  record: started,
 *                                                  unconfirmed, refused
 *                                                  (to retry), lost
 *                                                  (started again)
 *     conduit_bb_outage_jobs, conduit_bb_outage_seconds
 *
 * --output writes FILE.tmp and renames it over FILE, so the collector
 * never reads half a file.  Run as root, it becomes StateDir's owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "apart.h"
#include "buf.h"
#include "config.h"
#include "key.h"
#include "statedir.h"
#include "statefile.h"

#define AUDIT_LINE_MAX ((size_t)1 << 20)

static const double buckets[] = { 1, 10, 30, 60, 300, 900, 3600, 14400, 86400 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

/* the hooks that write hook records (audit.h), and their latency buckets;
 * job_process wrote them before it ran without (older AuditLogs) */
static const char *const hook_names[] = {
	"slurm_bb_job_process", "slurm_bb_data_in", "slurm_bb_test_data_in",
	"slurm_bb_data_out", "slurm_bb_test_data_out", "slurm_bb_job_teardown",
};
#define NHOOKS (sizeof(hook_names) / sizeof(hook_names[0]))
static const double hook_buckets[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
				       0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
#define NHBUCKETS (sizeof(hook_buckets) / sizeof(hook_buckets[0]))
enum { RES_OK, RES_BUSY, RES_ERROR, NRESULTS };
static const char *const result_names[] = { "ok", "busy", "error" };

enum { OUT_FINISHED, OUT_SKIPPED, OUT_KEPT, OUT_FAILED, NOUTCOMES };
static const char *const outcome_names[] = { "finished", "skipped", "kept",
					     "failed" };
static const char *const stage_names[] = { "in", "out" };

typedef struct {
	/* AuditLog */
	bool audit_set, audit_ok;
	unsigned long long directives[2][NOUTCOMES];
	unsigned long long bytes[2], files[2];
	unsigned long long hist[2][NBUCKETS], hist_count[2];
	double hist_sum[2];
	unsigned long long hook_hist[NHOOKS][NHBUCKETS], hook_count[NHOOKS];
	unsigned long long hook_calls[NHOOKS][NRESULTS];
	unsigned long long started[2], retried[2], failed[2];
	double hook_sum[NHOOKS];
	unsigned long long bad_lines;
	/* StateDir */
	bool state_ok;
	unsigned long long jobs[2];
	unsigned long long recs[2][4]; /* started, unconfirmed, refused, lost */
	unsigned long long outage_jobs;
	long long outage_s;
} metrics_t;

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
	int h = index_of(hook_names, NHOOKS,
			 json_string_value(json_object_get(o, "hook")));
	int r = index_of(result_names, NRESULTS,
			 json_string_value(json_object_get(o, "result")));
	json_t *v = json_object_get(o, "duration_us");
	double secs;
	size_t b;
	int st;

	if (h < 0 || r < 0 || !json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	secs = (double)json_integer_value(v) / 1e6;
	/* a stage hook's starts (records of older versions have none) */
	st = index_of(stage_names, 2, json_string_value(json_object_get(o, "stage")));
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
		m->hook_hist[h][b] += secs <= hook_buckets[b];
	m->hook_count[h]++;
	m->hook_sum[h] += secs;
	return true;
}

static void read_audit(const char *path, metrics_t *m)
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
				m->hist[s][b] += secs <= buckets[b];
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

static void read_state(const cbb_config_t *cfg, metrics_t *m)
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

static void family(cbb_buf_t *b, const char *name, const char *type,
		   const char *help)
{
	(void)cbb_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help,
			     name, type);
}

/* A family with one value per stage: {stage="in"} and {stage="out"}. */
static void per_stage(cbb_buf_t *b, const char *name, const char *type,
		      const char *help, const unsigned long long v[2])
{
	int s;

	family(b, name, type, help);
	for (s = 0; s < 2; s++)
		(void)cbb_buf_printf(b, "%s{stage=\"%s\"} %llu\n", name,
				     stage_names[s], v[s]);
}

static void render(const metrics_t *m, cbb_buf_t *b)
{
	static const char *const kinds[] = { "started", "unconfirmed",
					     "refused", "lost" };
	size_t s, k;

	if (m->audit_set && m->audit_ok) {
		family(b, "conduit_bb_directives_total", "counter",
		       "Directives whose stage ended, from the AuditLog, by stage "
		       "and outcome (finished; skipped by --when=; kept from an "
		       "earlier attempt).");
		for (s = 0; s < 2; s++)
			for (k = 0; k < NOUTCOMES; k++)
				(void)cbb_buf_printf(b, "conduit_bb_directives_total"
						     "{stage=\"%s\",outcome=\"%s\"} "
						     "%llu\n", stage_names[s],
						     outcome_names[k],
						     m->directives[s][k]);
		per_stage(b, "conduit_bb_transferred_bytes_total", "counter",
			  "Bytes moved by the finished transfers in the AuditLog.",
			  m->bytes);
		per_stage(b, "conduit_bb_transferred_files_total", "counter",
			  "Files moved by the finished transfers in the AuditLog.",
			  m->files);
		family(b, "conduit_bb_transfer_duration_seconds", "histogram",
		       "Time from a finished transfer's creation to its end, from "
		       "the AuditLog.");
		for (s = 0; s < 2; s++) {
			for (k = 0; k < NBUCKETS; k++)
				(void)cbb_buf_printf(b,
					"conduit_bb_transfer_duration_seconds_bucket"
					"{stage=\"%s\",le=\"%g\"} %llu\n",
					stage_names[s], buckets[k], m->hist[s][k]);
			(void)cbb_buf_printf(b,
				"conduit_bb_transfer_duration_seconds_bucket"
				"{stage=\"%s\",le=\"+Inf\"} %llu\n"
				"conduit_bb_transfer_duration_seconds_sum"
				"{stage=\"%s\"} %.17g\n"
				"conduit_bb_transfer_duration_seconds_count"
				"{stage=\"%s\"} %llu\n", stage_names[s],
				m->hist_count[s], stage_names[s], m->hist_sum[s],
				stage_names[s], m->hist_count[s]);
		}
		per_stage(b, "conduit_bb_transfers_started_total", "counter",
			  "Transfers the staging hooks started (or whose start was "
			  "not confirmed), from the AuditLog's hook records, by stage.",
			  m->started);
		per_stage(b, "conduit_bb_transfers_retried_total", "counter",
			  "Of those, transfers of a directive that had one before (the "
			  "server lost it, or it failed and was started again).",
			  m->retried);
		per_stage(b, "conduit_bb_transfers_failed_total", "counter",
			  "Failed transfers, counted by the poll that failed their "
			  "stage, from the AuditLog's hook records, by stage.",
			  m->failed);
		family(b, "conduit_bb_hook_duration_seconds", "histogram",
		       "How long each call of a staging hook took, from its call "
		       "to its answer, from the AuditLog's hook records.");
		for (s = 0; s < NHOOKS; s++) {
			for (k = 0; k < NHBUCKETS; k++)
				(void)cbb_buf_printf(b,
					"conduit_bb_hook_duration_seconds_bucket"
					"{hook=\"%s\",le=\"%g\"} %llu\n",
					hook_names[s], hook_buckets[k],
					m->hook_hist[s][k]);
			(void)cbb_buf_printf(b,
				"conduit_bb_hook_duration_seconds_bucket"
				"{hook=\"%s\",le=\"+Inf\"} %llu\n"
				"conduit_bb_hook_duration_seconds_sum"
				"{hook=\"%s\"} %.6f\n"
				"conduit_bb_hook_duration_seconds_count"
				"{hook=\"%s\"} %llu\n", hook_names[s],
				m->hook_count[s], hook_names[s], m->hook_sum[s],
				hook_names[s], m->hook_count[s]);
		}
		family(b, "conduit_bb_hook_calls_total", "counter",
		       "Calls of the staging hooks in the AuditLog's hook records, "
		       "by result (ok; busy: a poll that goes on; error).");
		for (s = 0; s < NHOOKS; s++)
			for (k = 0; k < NRESULTS; k++)
				(void)cbb_buf_printf(b, "conduit_bb_hook_calls_total"
						     "{hook=\"%s\",result=\"%s\"} "
						     "%llu\n", hook_names[s],
						     result_names[k],
						     m->hook_calls[s][k]);
		family(b, "conduit_bb_audit_log_bad_lines", "gauge",
		       "AuditLog lines that are not conduit_bb's JSON.");
		(void)cbb_buf_printf(b, "conduit_bb_audit_log_bad_lines %llu\n",
				     m->bad_lines);
	}
	family(b, "conduit_bb_audit_log_readable", "gauge",
	       "1 when AuditLog is set and could be read (a missing file is "
	       "read as empty), else 0.");
	(void)cbb_buf_printf(b, "conduit_bb_audit_log_readable %d\n",
			     m->audit_set && m->audit_ok);
	family(b, "conduit_bb_statedir_readable", "gauge",
	       "1 when StateDir could be read, else 0.");
	(void)cbb_buf_printf(b, "conduit_bb_statedir_readable %d\n", m->state_ok);
	if (!m->state_ok)
		return;
	per_stage(b, "conduit_bb_staging_jobs", "gauge",
		  "Jobs whose stage is under way in StateDir now (started, its "
		  "summary not yet written), by stage.",
		  m->jobs);
	family(b, "conduit_bb_stage_directives", "gauge",
	       "Directives of the stages under way, by stage and their newest "
	       "start record (started; unconfirmed: its answer was lost; "
	       "refused: to be retried; lost: the server forgot it, to be "
	       "started again).");
	for (s = 0; s < 2; s++)
		for (k = 0; k < 4; k++)
			(void)cbb_buf_printf(b, "conduit_bb_stage_directives"
					     "{stage=\"%s\",kind=\"%s\"} %llu\n",
					     stage_names[s], kinds[k],
					     m->recs[s][k]);
	family(b, "conduit_bb_outage_jobs", "gauge",
	       "Jobs whose hooks found the Conduit server unreachable and have "
	       "not seen it back yet.");
	(void)cbb_buf_printf(b, "conduit_bb_outage_jobs %llu\n", m->outage_jobs);
	family(b, "conduit_bb_outage_seconds", "gauge",
	       "How long the longest such outage has lasted so far, seconds.");
	(void)cbb_buf_printf(b, "conduit_bb_outage_seconds %lld\n", m->outage_s);
}

static int write_atomic(const char *path, const cbb_buf_t *b)
{
	char tmp[PATH_MAX];
	ssize_t w;
	int fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -1;
	w = write(fd, b->data, b->len);
	if (w != (ssize_t)b->len || fsync(fd) < 0) {
		close(fd);
		unlink(tmp);
		if (w >= 0)
			errno = EIO;
		return -1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Read and render, as StateDir's owner when we are root. */
static void collect(const cbb_config_t *cfg, cbb_buf_t *b)
{
	metrics_t m;
	cbb_err_t err;

	memset(&m, 0, sizeof(m));
	cbb_err_clear(&err);
	if (cbb_sd_become_owner(cfg, &err) == 0) {
		if (cfg->audit_log)
			read_audit(cfg->audit_log, &m);
		read_state(cfg, &m);
	} else {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
	}
	render(&m, b);
}

static int collect_fn(const void *arg, cbb_buf_t *out)
{
	collect(arg, out);
	return 0;
}

/*
 * Root writes the output file (node_exporter's directory is not
 * SlurmUser's), so the reading, as StateDir's owner, happens in a child
 * that hands the text back (collect becomes the owner itself).
 */
static int collect_apart(const cbb_config_t *cfg, cbb_buf_t *b)
{
	if (geteuid() != 0) {
		collect(cfg, b);
		return 0;
	}
	return cbb_apart(NULL, NULL, collect_fn, cfg, b) == 0 ? 0 : -1;
}

int cbb_cmd_metrics(int argc, char **argv)
{
	const char *config = NULL, *output = NULL;
	cbb_config_t cfg;
	cbb_err_t err;
	cbb_buf_t b;
	int i, rc = 0;

	for (i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--config") && v) {
			config = v;
			i++;
		} else if (!strcmp(argv[i], "--output") && v) {
			output = v;
			i++;
		} else {
			fprintf(stderr, "usage: conduit-bb metrics [--output FILE] "
				"[--config FILE]\n");
			return 2;
		}
	}
	cbb_err_clear(&err);
	if (cbb_config_load(&cfg, config, &err) < 0) {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
		cbb_config_free(&cfg);
		return 2;
	}
	cbb_buf_init(&b, (size_t)4 << 20);
	if (collect_apart(&cfg, &b) < 0) {
		fprintf(stderr, "conduit-bb: cannot read StateDir and AuditLog\n");
		rc = 1;
	} else if (output) {
		if (write_atomic(output, &b) < 0) {
			fprintf(stderr, "conduit-bb: cannot write %s: %s\n", output,
				strerror(errno));
			rc = 1;
		}
	} else if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len) {
		rc = 1;
	}
	cbb_buf_free(&b);
	cbb_config_free(&cfg);
	return rc;
}

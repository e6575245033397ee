/*
 * metrics_int.h - what `conduit-bb metrics` (metrics.c), its reading of
 * the AuditLog and StateDir (metrics_read.c) and its Prometheus text
 * (metrics_render.c) share: the counts, and the names and buckets both
 * the reading and the text use (defined in metrics_read.c).
 */
#ifndef CBB_CLI_METRICS_INT_H
#define CBB_CLI_METRICS_INT_H

#include <stdbool.h>

#include "buf.h"
#include "config.h"
#include "slurmlost.h"

/* a finished transfer's duration, seconds */
#define NBUCKETS 9
extern const double cbb_metrics_buckets[NBUCKETS];

/* the hooks that write hook records (audit.h), and their latency buckets;
 * job_process wrote them before it ran without (older AuditLogs) */
#define NHOOKS 6
extern const char *const cbb_metrics_hooks[NHOOKS];
#define NHBUCKETS 14
extern const double cbb_metrics_hook_buckets[NHBUCKETS];
enum { RES_OK, RES_BUSY, RES_ERROR, NRESULTS };
extern const char *const cbb_metrics_results[NRESULTS];

enum { OUT_FINISHED, OUT_SKIPPED, OUT_KEPT, OUT_FAILED, NOUTCOMES };
extern const char *const cbb_metrics_outcomes[NOUTCOMES];
extern const char *const cbb_metrics_stages[2]; /* "in", "out" */

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
	unsigned long long dropped_out; /* stage-out directives a sweep or
					   teardown finished after Slurm
					   dropped the stage (lost.c) */
	/* StateDir */
	bool state_ok;
	unsigned long long jobs[2];
	unsigned long long recs[2][4]; /* started, unconfirmed, refused, lost */
	unsigned long long outage_jobs;
	long long outage_s;
	/* squeue and scontrol: the jobs a restart left where Slurm will not
	 * move them (slurmlost.h), by kind (index CBB_SL_* - 1) */
	bool slurm_ok;
	unsigned long long lost[CBB_SL_KINDS];
} metrics_t;

/* Count what the AuditLog at path says (m->audit_set, audit_ok: whether
 * it could be read; a missing file is read as empty). */
void cbb_metrics_read_audit(const char *path, metrics_t *m);

/* Count what StateDir holds now (m->state_ok: whether it could be read). */
void cbb_metrics_read_state(const cbb_config_t *cfg, metrics_t *m);

/* Count the jobs Slurm lost in a restart (m->slurm_ok: it answered). */
void cbb_metrics_read_slurm(const cbb_config_t *cfg, metrics_t *m);

/* The Prometheus text (format 0.0.4) of m, appended to b. */
void cbb_metrics_render(const metrics_t *m, cbb_buf_t *b);

#endif

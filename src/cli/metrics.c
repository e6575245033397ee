/*
 * metrics.c - `conduit-bb metrics [--output FILE] [--config FILE]`:
 * Prometheus text exposition (format 0.0.4) for node_exporter's textfile
 * collector.  No Conduit server: it reads what the hooks leave behind,
 * and asks Slurm (four short calls) what a restart left lost.
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
 *   from squeue and scontrol (slurmlost.h; left out when they do not
 *   answer):
 *     conduit_bb_jobs_lost_by_slurm{kind}          held, launch, stage-in,
 *                                                  stage-out
 *
 * --output writes a new file of an unpredictable name beside FILE and
 * renames it over FILE, so the collector never reads half a file, and
 * nothing anyone placed in that directory is ever opened, followed or
 * waited on (atomic_file.c).  Run as root, it becomes StateDir's owner.
 * What is counted: metrics_read.c; the text: metrics_render.c.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "apart.h"
#include "atomic_file.h"
#include "buf.h"
#include "config.h"
#include "metrics_int.h"
#include "statedir.h"

/* Read and render, as StateDir's owner when we are root. */
static void collect(const cbb_config_t *cfg, cbb_buf_t *b)
{
	metrics_t m;
	cbb_err_t err;

	memset(&m, 0, sizeof(m));
	cbb_err_clear(&err);
	if (cbb_sd_become_owner(cfg, &err) == 0) {
		if (cfg->audit_log)
			cbb_metrics_read_audit(cfg->audit_log, &m);
		cbb_metrics_read_state(cfg, &m);
		cbb_metrics_read_slurm(cfg, &m);
	} else {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
	}
	cbb_metrics_render(&m, b);
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
	if (cbb_admin_config(config, &cfg))
		return 2;
	cbb_err_clear(&err);
	cbb_buf_init(&b, (size_t)4 << 20);
	if (collect_apart(&cfg, &b) < 0) {
		fprintf(stderr, "conduit-bb: cannot read StateDir and AuditLog\n");
		rc = 1;
	} else if (output) {
		if (cbb_atomic_write(output, b.data, b.len, &err) < 0) {
			fprintf(stderr, "conduit-bb: %s\n", err.msg);
			rc = 1;
		}
	} else if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len) {
		rc = 1;
	}
	cbb_buf_free(&b);
	cbb_config_free(&cfg);
	return rc;
}

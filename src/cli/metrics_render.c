/*
 * metrics_render.c - the Prometheus text (format 0.0.4) of what
 * `conduit-bb metrics` counted (metrics_int.h): each family's HELP and
 * TYPE, the counters and histograms from the AuditLog, the gauges from
 * StateDir.
 */
#include <stdbool.h>
#include <stddef.h>

#include "metrics_int.h"
#include "slurmlost.h"

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
				     cbb_metrics_stages[s], v[s]);
}

/*
 * A counter over two labels: {l1="a",l2="b"} for every a of n1 names and
 * b of n2, from v (n1 rows of n2 values).
 */
static void grid(cbb_buf_t *b, const char *name, const char *l1,
		 const char *const *a, size_t n1, const char *l2,
		 const char *const *c, size_t n2, const unsigned long long *v)
{
	size_t i, k;

	for (i = 0; i < n1; i++)
		for (k = 0; k < n2; k++)
			(void)cbb_buf_printf(b, "%s{%s=\"%s\",%s=\"%s\"} %llu\n",
					     name, l1, a[i], l2, c[k],
					     v[i * n2 + k]);
}

/*
 * One series of a histogram labelled label="value": its cumulative
 * buckets, +Inf, sum (to the microsecond when micro, else exactly) and
 * count.
 */
static void series(cbb_buf_t *b, const char *name, const char *label,
		   const char *value, const double *le,
		   const unsigned long long *counts, size_t n,
		   unsigned long long count, double sum, bool micro)
{
	size_t k;

	for (k = 0; k < n; k++)
		(void)cbb_buf_printf(b, "%s_bucket{%s=\"%s\",le=\"%g\"} %llu\n",
				     name, label, value, le[k], counts[k]);
	(void)cbb_buf_printf(b, "%s_bucket{%s=\"%s\",le=\"+Inf\"} %llu\n",
			     name, label, value, count);
	if (micro)
		(void)cbb_buf_printf(b, "%s_sum{%s=\"%s\"} %.6f\n", name,
				     label, value, sum);
	else
		(void)cbb_buf_printf(b, "%s_sum{%s=\"%s\"} %.17g\n", name,
				     label, value, sum);
	(void)cbb_buf_printf(b, "%s_count{%s=\"%s\"} %llu\n", name, label,
			     value, count);
}

/* What Slurm lost in a restart: left out when it gave no answer */
static void lost_by_slurm(const metrics_t *m, cbb_buf_t *b)
{
	size_t k;

	if (!m->slurm_ok)
		return;
	family(b, "conduit_bb_jobs_lost_by_slurm", "gauge",
	       "Jobs a slurmctld restart left where Slurm will not move them "
	       "(conduit-bb status lists them; conduit-bb recover acts).");
	for (k = 0; k < CBB_SL_KINDS; k++)
		(void)cbb_buf_printf(b, "conduit_bb_jobs_lost_by_slurm{kind=\"%s\"} "
				     "%llu\n", cbb_sl_kind_name((cbb_sl_kind_t)(k + 1)),
				     m->lost[k]);
}

void cbb_metrics_render(const metrics_t *m, cbb_buf_t *b)
{
	static const char *const kinds[] = { "started", "unconfirmed",
					     "refused", "lost" };
	size_t s, k;

	if (m->audit_set && m->audit_ok) {
		family(b, "conduit_bb_directives_total", "counter",
		       "Directives whose stage ended, from the AuditLog, by stage "
		       "and outcome (finished; skipped by --when=; kept from an "
		       "earlier attempt).");
		grid(b, "conduit_bb_directives_total", "stage",
		     cbb_metrics_stages, 2, "outcome", cbb_metrics_outcomes,
		     NOUTCOMES, &m->directives[0][0]);
		per_stage(b, "conduit_bb_transferred_bytes_total", "counter",
			  "Bytes moved by the finished transfers in the AuditLog.",
			  m->bytes);
		per_stage(b, "conduit_bb_transferred_files_total", "counter",
			  "Files moved by the finished transfers in the AuditLog.",
			  m->files);
		family(b, "conduit_bb_transfer_duration_seconds", "histogram",
		       "Time from a finished transfer's creation to its end, from "
		       "the AuditLog.");
		for (s = 0; s < 2; s++)
			series(b, "conduit_bb_transfer_duration_seconds", "stage",
			       cbb_metrics_stages[s], cbb_metrics_buckets,
			       m->hist[s], NBUCKETS, m->hist_count[s],
			       m->hist_sum[s], false);
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
		for (s = 0; s < NHOOKS; s++)
			series(b, "conduit_bb_hook_duration_seconds", "hook",
			       cbb_metrics_hooks[s], cbb_metrics_hook_buckets,
			       m->hook_hist[s], NHBUCKETS, m->hook_count[s],
			       m->hook_sum[s], true);
		family(b, "conduit_bb_hook_calls_total", "counter",
		       "Calls of the staging hooks in the AuditLog's hook records, "
		       "by result (ok; busy: a poll that goes on; error).");
		grid(b, "conduit_bb_hook_calls_total", "hook", cbb_metrics_hooks,
		     NHOOKS, "result", cbb_metrics_results, NRESULTS,
		     &m->hook_calls[0][0]);
		family(b, "conduit_bb_stage_out_directives_finished_after_drop_total",
		       "counter", "Stage-out directives whose stage Slurm "
		       "dropped (a slurmctld restart killed its hooks) and "
		       "conduit_bb finished, from the AuditLog.");
		(void)cbb_buf_printf(b, "conduit_bb_stage_out_directives_"
				     "finished_after_drop_total %llu\n",
				     m->dropped_out);
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
	lost_by_slurm(m, b);
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
					     cbb_metrics_stages[s], kinds[k],
					     m->recs[s][k]);
	family(b, "conduit_bb_outage_jobs", "gauge",
	       "Jobs whose hooks found the Conduit server unreachable and have "
	       "not seen it back yet.");
	(void)cbb_buf_printf(b, "conduit_bb_outage_jobs %llu\n", m->outage_jobs);
	family(b, "conduit_bb_outage_seconds", "gauge",
	       "How long the longest such outage has lasted so far, seconds.");
	(void)cbb_buf_printf(b, "conduit_bb_outage_seconds %lld\n", m->outage_s);
}

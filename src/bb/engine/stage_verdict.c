/*
 * stage_verdict.c - what each directive of a stage needs now, from one
 * Query's transfers and StateDir's records: start it, wait for it to show
 * up, it runs, it is done (now or in an earlier attempt), it failed, it
 * is a mv that failed after moving data, or it waits while an earlier
 * attempt's output goes aside (stage_aside.c); and the errors a failed
 * one is reported with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"
#include "stage_array.h"
#include "stage_find.h"

/*
 * A directive about to start in a later attempt: what an earlier attempt
 * left where it writes goes aside first (stage_aside.c).
 */
static verdict_t start_or_aside(cbb_job_ctx_t *j, cbb_stage_t stage,
				const cbb_transfers_t *have, dview_t *v)
{
	int g;

	if (v->shared)
		return V_START;
	cbb_err_clear(&v->why);
	g = cbb_aside_gate(j, v->d, stage, cbb_attempt(j, stage), have, &v->why);
	return g == CBB_ASIDE_GO ? V_START :
	       g == CBB_ASIDE_WAIT ? V_ASIDE : V_ASIDE_FAILED;
}

/* Decide what each directive of `stage` needs (views has plan->n room). */
size_t cbb_stage_view(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		      cbb_stage_t stage, const cbb_transfers_t *have,
		      const cbb_recs_t *recs, const cbb_recs_t *shared,
		      dview_t *out)
{
	cbb_key_type_t type = cbb_stage_key(stage);
	uint32_t a = cbb_attempt(j, stage);
	int64_t now = (int64_t)time(NULL);
	size_t i, n = 0;

	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		dview_t *v = &out[n];
		const cbb_rec_t *r;
		const cbb_transfer_t *x;
		long kept;

		if (d->stage != stage || d->skip)
			continue;
		n++;
		memset(v, 0, sizeof(*v));
		v->d = d;
		v->shared = cbb_is_shared(j, d, stage);
		if (v->shared) {
			x = cbb_pick_shared(have, d);
			r = cbb_open_record(shared, CBB_KEY_SHARED, 0, d->index,
					&v->lost);
		} else {
			x = cbb_pick(have, type, d->index, (long)a, NULL);
			r = cbb_open_record(recs, (int)type, a, d->index, &v->lost);
		}
		v->x = x;
		if (x && !cbb_transfer_failed(x)) {
			v->v = cbb_transfer_succeeded(x) ? V_DONE : V_RUNNING;
			continue;
		}
		if (r && !cbb_rec_visible(r, have, v->shared ? CBB_KEY_SHARED : type,
				      v->shared ? 0 : a, d->index)) {
			if (now - r->made < (int64_t)j->cfg->start_visible_grace_s) {
				v->v = V_PENDING; /* newer than any failure */
				continue;
			}
			cbb_job_log(j, CBB_LOG_ERROR, "line %u: %s transfer %s started %lld "
			      "s ago never showed up on the Conduit server "
			      "(StartVisibleGrace=%u s): it is lost; starting "
			      "the directive again", d->line,
			      cbb_stage_word(stage), r->kind == CBB_REC_STARTED ?
			      r->id : "(unconfirmed)", (long long)(now - r->made),
			      j->cfg->start_visible_grace_s);
			if (v->shared)
				cbb_stage_record(j, CBB_KEY_SHARED, 0, d->index,
					   CBB_REC_LOST, r->id);
			else
				cbb_stage_record(j, type, a, d->index, CBB_REC_LOST,
					   r->id);
			v->lost = true;
			v->v = start_or_aside(j, stage, have, v);
			continue;
		}
		if (x && v->shared && !r && cbb_transfer_failed(x) &&
		    !(d->action == CBB_MV && x->started) &&
		    !cbb_task_joined(recs)) {
			/* the tasks that waited on it are gone, and the last
			 * one's teardown aborted it and forgot its records:
			 * it failed before this task came; start it again */
			v->v = V_START;
			continue;
		}
		if (x) {
			/* a move that failed after moving data is not redone */
			v->v = d->action == CBB_MV && x->started ? V_BROKEN :
								    V_FAILED;
			continue;
		}
		kept = stage == CBB_STAGE_IN && !d->every_attempt && a > 0 ?
			       cbb_kept_from(have, d, a) : -1;
		if (kept >= 0) {
			v->v = V_KEPT;
			v->kept_from = (uint32_t)kept;
			continue;
		}
		v->v = start_or_aside(j, stage, have, v);
	}
	return n;
}

/* The line a transfer was started for (its key), else the directive's. */
static unsigned line_of(const dview_t *v)
{
	const cbb_key_t *k;
	cbb_key_t tmp;

	if (v->x && (k = cbb_transfer_key(v->x, &tmp)) && k->line)
		return k->line;
	return v->d->line;
}

void cbb_verdict_broken_mv(cbb_err_t *err, const dview_t *v)
{
	char msg[CBB_ERR_MAX / 2];

	snprintf(msg, sizeof(msg), "%s", v->x->error_message);
	cbb_one_line(msg);
	cbb_err(err, "line %u: mv failed after it began moving data (transfer "
		"%s: %s: %s); it is not restarted: check the source and "
		"destination, then requeue", line_of(v), v->x->id,
		cbb_error_name(v->x->error), msg);
}

void cbb_verdict_failed(cbb_err_t *err, cbb_stage_t stage, const dview_t *v)
{
	char msg[CBB_ERR_MAX - 200];
	const char *why = "";

	snprintf(msg, sizeof(msg), "%s", v->x->error_message[0] ?
		 v->x->error_message : "(no message)");
	cbb_one_line(msg);
	if (v->lost && v->d->action == CBB_MV)
		why = " (an earlier transfer of this mv was lost by the "
		      "Conduit server after it started: its source may "
		      "already have been moved)";
	cbb_err(err, "line %u: %s %s failed: %s: %s%s", line_of(v),
		cbb_stage_word(stage), v->d->action == CBB_MV ? "mv" : "cp",
		cbb_error_name(v->x->error), msg, why);
}

/*
 * The stage-out of an attempt that a requeue interrupted is best effort:
 * the attempt may have been stopped before it wrote its outputs, and
 * failing the stage would hold the job instead of running it again.
 */
bool cbb_stage_best_effort(const cbb_job_ctx_t *j, cbb_stage_t stage)
{
	return stage == CBB_STAGE_OUT && j->requeued;
}

bool cbb_views_shared(const dview_t *views, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (views[i].shared)
			return true;
	return false;
}

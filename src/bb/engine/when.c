/*
 * when.c - #CONDUIT_POST --when=success|failure|always: which stage-out
 * directives this job's outcome skips (outcome.h says the outcome), and
 * the record bbstat shows for each, once per attempt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "outcome.h"
#include "stage.h"

/*
 * #CONDUIT_POST --when=: mark the directives this job's outcome skips
 * (the stage code leaves them alone) and record each once per attempt for
 * bbstat, logging it the first time.  Stage-out only; a record that
 * cannot be written only costs the bbstat row.
 */
void cbb_stage_apply_when(const cbb_job_ctx_t *j, cbb_plan_t *plan)
{
	cbb_outcome_t o;
	cbb_recs_t had;
	cbb_err_t err;
	uint32_t a = cbb_attempt(j, CBB_STAGE_OUT);
	bool unlaunched;
	size_t i, k;

	cbb_outcome(j->have_state, j->job_state, j->have_exit, j->exit_code,
		    &o);
	/* an attempt whose batch script never ran (its launch lost in a
	 * restart; `conduit-bb recover` marked it): nothing to copy */
	unlaunched = j->sd && cbb_unlaunched_for(j->sd, j->job_id, a);
	if (unlaunched)
		snprintf(o.why, sizeof(o.why), "unlaunched");
	for (i = 0; i < plan->n; i++) {
		cbb_directive_t *d = &plan->v[i];

		d->skip = d->stage == CBB_STAGE_OUT &&
			  (unlaunched || !cbb_when_runs(d->when, &o));
	}
	cbb_err_clear(&err);
	if (cbb_skips_load(j->sd, j->job_id, j->restart, j->submit, &had,
			   &err) < 0)
		return;
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		cbb_rec_t r;
		char id[sizeof(r.id)], text[48];

		if (!d->skip)
			continue;
		for (k = 0; k < had.n; k++)
			if (had.v[k].kind == CBB_REC_SKIPPED &&
			    had.v[k].attempt == a && had.v[k].index == d->index)
				break;
		if (k < had.n)
			continue;
		snprintf(id, sizeof(id), "%s:%s:%u:%s", cbb_when_name(d->when),
			 o.why, d->line, j->user);
		cbb_job_rec(j, &r, CBB_KEY_POST, a, d->index, CBB_REC_SKIPPED,
			    id);
		if (cbb_skips_add(j->sd, j->job_id, &r, &err) < 0)
			break;
		cbb_outcome_text(o.why, text, sizeof(text));
		cbb_job_log(j, CBB_LOG_INFO, "line %u: stage-out skipped "
			    "(when=%s, %s)", d->line, cbb_when_name(d->when),
			    text);
	}
	cbb_recs_free(&had);
}

/*
 * validate.c - submit-time validation (job_process with
 * SubmitValidation=remote, inside slurmctld under its job write lock):
 * every stage-in directive is sent to Conduit as a validation-only
 * transfer, all at once, and job_process returns as soon as Conduit has
 * taken them.  It never waits for Conduit to validate (the real server
 * takes seconds, and slurmctld's locks are held meanwhile).  Each is a
 * probe of the directive as written (key CONDUIT_PROBE, PART 0, attempt
 * 0): the stage-in reads its answer before it starts anything, and a
 * directive Conduit rejected fails the stage-in with Conduit's words
 * before any data moves (facts.h, decide.c).  Nothing is written to
 * StateDir here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "pick.h"
#include "stage.h"

int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_err_t *err)
{
	size_t want = cbb_plan_count(plan, CBB_STAGE_IN, false);
	char (*comment)[CBB_KEY_MAX];
	unsigned *line;
	size_t i, n = 0, sent = 0;
	cbb_start_t *req;
	int rc = 0;

	req = calloc(want ? want : 1, sizeof(*req));
	comment = calloc(want ? want : 1, sizeof(*comment));
	line = calloc(want ? want : 1, sizeof(*line));
	if (!req || !comment || !line) {
		free(req);
		free(comment);
		free(line);
		cbb_job_log(j, CBB_LOG_ERROR, "remote validation skipped: out "
			    "of memory");
		return 0;
	}
	for (i = 0; i < plan->n && n < want; i++) {
		const cbb_directive_t *d = &plan->v[i];
		cbb_key_t k;

		if (d->stage != CBB_STAGE_IN)
			continue;
		memset(&k, 0, sizeof(k));
		k.job_id = j->job_id;
		memcpy(k.cluster, j->cluster, sizeof(k.cluster));
		k.index = d->index;
		k.type = CBB_KEY_PROBE;
		k.line = d->line;
		k.part = CBB_PROBE_REQ;
		cbb_key_format(comment[n], sizeof(comment[n]), &k);
		req[n].user = j->user;
		req[n].action = cbb_action_of(d);
		req[n].sources = (const char *const *)d->sources;
		req[n].nsources = d->nsources;
		req[n].destination = d->destination;
		req[n].comment = comment[n];
		line[n] = d->line;
		n++;
	}
	if (n)
		cbb_conduit_start(j->g, req, n, true);
	for (i = 0; i < n && rc == 0; i++) {
		if (req[i].ok) {
			sent++;
		} else if (req[i].answer == CBB_ANSWER_REFUSED) {
			rc = cbb_err(err, "line %u: #%s_PRE: Conduit refused it: "
				     "%s", line[i], j->cfg->directive,
				     req[i].message);
		}
	}
	if (rc == 0 && sent < n)
		cbb_job_log(j, CBB_LOG_INFO, "remote validation: %zu of %zu "
			    "directive(s) sent (%s); the stage-in validates "
			    "the rest", sent, n, req[n - 1].message);
	free(req);
	free(comment);
	free(line);
	return rc;
}

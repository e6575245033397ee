/*
 * stage_validate.c - submit-time validation (job_process with
 * SubmitValidation=remote, inside slurmctld): every stage-in directive
 * validated by Conduit at once, then polled until each is decided, all
 * within SubmitTimeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan, cbb_err_t *err)
{
	size_t want = cbb_plan_count(plan, CBB_STAGE_IN, false);
	size_t i, n = 0, decided = 0;
	cbb_start_t *req;
	dview_t *views;
	int rc = 0;

	req = calloc(want ? want : 1, sizeof(*req));
	views = calloc(want ? want : 1, sizeof(*views));
	if (!req || !views) {
		free(req);
		free(views);
		cbb_job_log(j, CBB_LOG_ERROR, "remote validation skipped: out of memory");
		return 0;
	}
	for (i = 0; i < plan->n; i++)
		if (plan->v[i].stage == CBB_STAGE_IN) {
			views[n].d = &plan->v[i];
			cbb_stage_fill_start(j, &views[n], CBB_KEY_VALIDATE, 0, &req[n]);
			n++;
		}
	if (n)
		cbb_conduit_start(j->g, req, n, true);
	for (i = 0; i < n && rc == 0; i++)
		if (req[i].answer == CBB_ANSWER_REFUSED) {
			rc = cbb_err(err, "line %u: #%s_PRE: Conduit refused it: "
				     "%s", views[i].d->line, j->cfg->directive,
				     req[i].message);
		} else if (!req[i].ok) {
			cbb_job_log(j, CBB_LOG_INFO, "line %u: remote validation not "
			      "possible (%s); accepted",
			      views[i].d->line, req[i].message);
			req[i].id[0] = '\0';
			decided++;
		}
	while (decided < n && rc == 0) {
		cbb_transfers_t t;
		cbb_err_t e;
		bool tr;
		char rx[CBB_KEY_MAX];

		if (cbb_grpc_left_ms(j->g) < 20) {
			cbb_job_log(j, CBB_LOG_INFO, "remote validation still running "
			      "after %u ms (SubmitTimeout); accepted",
			      cbb_grpc_spent_ms(j->g));
			break;
		}
		cbb_err_clear(&e);
		cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, 0);
		if (cbb_conduit_query(j->g, j->user, rx, &t, &tr, &e) < 0) {
			cbb_job_log(j, CBB_LOG_INFO, "remote validation: %s; accepted", e.msg);
			break;
		}
		decided = 0;
		for (i = 0; i < n; i++) {
			size_t k;
			const cbb_transfer_t *x = NULL;

			if (!req[i].id[0]) {
				decided++;
				continue;
			}
			for (k = 0; k < t.n && !x; k++)
				if (!strcmp(t.v[k].id, req[i].id))
					x = &t.v[k];
			if (!x)
				continue;
			if (cbb_transfer_failed(x)) {
				char msg[CBB_ERR_MAX / 2];

				snprintf(msg, sizeof(msg), "%s", x->error_message);
				cbb_one_line(msg);
				rc = cbb_err(err, "line %u: #%s_PRE: Conduit "
					     "rejected it: %s", views[i].d->line,
					     j->cfg->directive, msg);
				break;
			}
			if (x->state == CBB_TS_VALIDATION_COMPLETE && !x->active)
				decided++;
		}
		cbb_transfers_free(&t);
		if (decided < n && rc == 0) {
			unsigned left = cbb_grpc_left_ms(j->g);
			struct timespec ts = { 0, (long)(left < 50 ? left : 50) *
						   1000000L };

			nanosleep(&ts, NULL);
		}
	}
	free(req);
	free(views);
	return rc;
}

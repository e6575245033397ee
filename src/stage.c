/* stage.c - see stage.h */
#include "stage.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "statefile.h"

static void logf_(cbb_job_ctx_t *j, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(cbb_job_ctx_t *j, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!j->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	j->log(j->log_ud, level, msg);
}

void cbb_job_ctx_init(cbb_job_ctx_t *j, const cbb_config_t *cfg,
		      cbb_grpc_t *g, const char *cluster, uint32_t job_id,
		      uint32_t restart, uint32_t uid)
{
	memset(j, 0, sizeof(*j));
	j->cfg = cfg;
	j->g = g;
	cbb_key_cluster(j->cluster, cluster);
	j->job_id = job_id;
	j->restart = restart;
	snprintf(j->user, sizeof(j->user), "%u", uid);
}

static cbb_key_type_t key_type(cbb_stage_t s)
{
	return s == CBB_STAGE_IN ? CBB_KEY_PRE : CBB_KEY_POST;
}

static const char *stage_word(cbb_stage_t s)
{
	return s == CBB_STAGE_IN ? "stage-in" : "stage-out";
}

/* Rank: running beats finished beats failed; newer beats older. */
static int rank(const cbb_transfer_t *t)
{
	if (cbb_transfer_failed(t))
		return 0;
	return cbb_transfer_succeeded(t) ? 1 : 2;
}

static bool newer(const cbb_transfer_t *a, const cbb_transfer_t *b)
{
	return a->created > b->created ||
	       (a->created == b->created && a->created_ns > b->created_ns);
}

const cbb_transfer_t *cbb_pick(const cbb_transfers_t *t, cbb_key_type_t type,
			       uint32_t index, long restart, unsigned *attempts)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	if (attempts)
		*attempts = 0;
	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		cbb_key_t k;

		if (x->validation_only || !cbb_key_parse(x->comment, &k) ||
		    k.type != type || k.index != index ||
		    (restart >= 0 && k.restart != (uint32_t)restart))
			continue;
		if (attempts)
			(*attempts)++;
		if (!best || rank(x) > rank(best) ||
		    (rank(x) == rank(best) && newer(x, best)))
			best = x;
	}
	return best;
}

static int query_job(cbb_job_ctx_t *j, long restart, cbb_transfers_t *out,
		     bool *transport, cbb_err_t *err)
{
	char rx[CBB_KEY_MAX];

	cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, restart);
	return cbb_conduit_query(j->g, j->user, rx, out, transport, err);
}

static cbb_conduit_action_t action_of(const cbb_directive_t *d)
{
	if (d->action == CBB_MV)
		return d->recursive ? CBB_RMOVE : CBB_MOVE;
	return d->recursive ? CBB_RCOPY : CBB_COPY;
}


/* Fill a start request for directive d (comment stored in `comment`). */
static void fill_start(cbb_job_ctx_t *j, const cbb_directive_t *d,
		       cbb_key_type_t type, char *comment, cbb_start_t *s)
{
	cbb_key_t k;

	memset(&k, 0, sizeof(k));
	k.job_id = j->job_id;
	memcpy(k.cluster, j->cluster, sizeof(k.cluster));
	k.restart = type == CBB_KEY_VALIDATE ? 0 : j->restart;
	k.index = d->index;
	k.type = type;
	k.line = d->line;
	cbb_key_format(comment, CBB_KEY_MAX, &k);
	memset(s, 0, sizeof(*s));
	s->user = j->user;
	s->action = action_of(d);
	s->sources = (const char *const *)d->sources;
	s->nsources = d->nsources;
	s->destination = d->destination;
	s->comment = comment;
}

/*
 * After a StartTransfer whose outcome is unknown (the connection broke),
 * look for it before starting it again: Conduit's Query may lag a new
 * transfer briefly, so look a few times.
 */
static bool found_after_all(cbb_job_ctx_t *j, const cbb_directive_t *d,
			    cbb_stage_t stage)
{
	int attempt;

	for (attempt = 0; attempt < 4; attempt++) {
		cbb_transfers_t t;
		cbb_err_t e;
		bool tr;
		const cbb_transfer_t *x;

		cbb_err_clear(&e);
		if (attempt) {
			struct timespec ts = { 0, 250 * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (query_job(j, (long)j->restart, &t, &tr, &e) < 0)
			continue;
		x = cbb_pick(&t, key_type(stage), d->index, (long)j->restart,
			     NULL);
		if (x && !cbb_transfer_failed(x)) {
			cbb_transfers_free(&t);
			return true;
		}
		cbb_transfers_free(&t);
	}
	return false;
}

int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage, cbb_err_t *err)
{
	cbb_key_type_t type = key_type(stage);
	cbb_transfers_t have;
	cbb_start_t *req = NULL;
	char (*comments)[CBB_KEY_MAX] = NULL;
	const cbb_directive_t **which = NULL;
	size_t i, n = 0, want = 0, skipped = 0;
	bool transport;
	char seen[64];
	int rc = 0;

	for (i = 0; i < plan->n; i++)
		want += plan->v[i].stage == stage;
	if (want == 0)
		return 0;
	if (query_job(j, (long)j->restart, &have, &transport, err) < 0)
		return -1;
	req = calloc(want, sizeof(*req));
	comments = calloc(want, sizeof(*comments));
	which = calloc(want, sizeof(*which));
	if (!req || !comments || !which) {
		rc = cbb_err(err, "conduit: out of memory");
		goto out;
	}
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		const cbb_transfer_t *x;

		if (d->stage != stage)
			continue;
		x = cbb_pick(&have, type, d->index, (long)j->restart, NULL);
		if (x && !cbb_transfer_failed(x)) {
			skipped++; /* running or done: never start it again */
			continue;
		}
		if (!x && cbb_started_lookup(j->cfg, j->cluster, j->job_id,
					     j->restart, (int)type, d->index,
					     seen, sizeof(seen))) {
			/* started earlier; Query does not show it yet */
			logf_(j, 1, "job %u: line %u: transfer %s started "
			      "earlier is not visible yet; not starting it "
			      "again", j->job_id, d->line, seen);
			skipped++;
			continue;
		}
		if (x && d->action == CBB_MV && x->started) {
			/* a move that failed after moving data is not redone */
			char msg[CBB_ERR_MAX / 2];

			snprintf(msg, sizeof(msg), "%s", x->error_message);
			cbb_one_line(msg);
			rc = cbb_err(err, "line %u: mv failed after it began "
				     "moving data (transfer %s: %s: %s); it is "
				     "not restarted: check the source and "
				     "destination, then requeue", d->line,
				     x->id, cbb_error_name(x->error), msg);
			goto out;
		}
		fill_start(j, d, type, comments[n], &req[n]);
		which[n++] = d;
	}
	if (n && cbb_conduit_start(j->g, req, n, false)) {
		for (i = 0; i < n; i++) {
			if (req[i].ok)
				continue;
			if (req[i].transport && found_after_all(j, which[i], stage))
				continue; /* it was created after all */
			if (req[i].transport) { /* proven absent: once more */
				cbb_conduit_start(j->g, &req[i], 1, false);
				if (req[i].ok)
					continue;
			}
			rc = cbb_err(err, "line %u: %s", which[i]->line,
				     req[i].message);
		}
	}
	for (i = 0; i < n; i++)
		if (req[i].ok)
			cbb_started_record(j->cfg, j->cluster, j->job_id,
					   j->restart, (int)type,
					   which[i]->index, req[i].id);
	logf_(j, 1, "job %u: %s: started %zu transfer(s), %zu already "
	      "there", j->job_id, stage_word(stage), n, skipped);
out:
	free(req);
	free(comments);
	free(which);
	cbb_transfers_free(&have);
	return rc;
}

int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, cbb_err_t *err)
{
	cbb_key_type_t type = key_type(stage);
	cbb_transfers_t have;
	size_t i, busy = 0, done = 0, missing = 0;
	bool transport;

	if (query_job(j, (long)j->restart, &have, &transport, err) < 0) {
		time_t since, now = time(NULL);

		if (!transport)
			return CBB_POLL_FAILED;
		since = cbb_down_since(j->cfg, j->cluster, j->job_id);
		if (now - since < (time_t)j->cfg->down_grace_s) {
			logf_(j, 0, "job %u: %s: %s (server down for %lld s; "
			      "waiting up to ServerDownGrace=%u s)", j->job_id,
			      stage_word(stage), err->msg,
			      (long long)(now - since), j->cfg->down_grace_s);
			return CBB_POLL_BUSY;
		}
		{
			char last[CBB_ERR_MAX];

			memcpy(last, err->msg, sizeof(last));
			cbb_err_clear(err);
			cbb_err(err, "conduit: server unreachable for %lld s "
				"(ServerDownGrace=%u s): %.900s",
				(long long)(now - since), j->cfg->down_grace_s,
				last);
		}
		return CBB_POLL_FAILED;
	}
	cbb_down_clear(j->cfg, j->cluster, j->job_id);
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		const cbb_transfer_t *x;

		if (d->stage != stage)
			continue;
		x = cbb_pick(&have, type, d->index, (long)j->restart, NULL);
		if (!x) {
			missing++; /* not visible yet: Query may lag a start */
		} else if (cbb_transfer_failed(x)) {
			char msg[CBB_ERR_MAX - 96];

			snprintf(msg, sizeof(msg), "%s", x->error_message[0] ?
				 x->error_message : "(no message)");
			cbb_one_line(msg);
			cbb_err(err, "line %u: %s %s failed: %s: %s", d->line,
				stage_word(stage), d->action == CBB_MV ? "mv" : "cp",
				cbb_error_name(x->error), msg);
			cbb_transfers_free(&have);
			return CBB_POLL_FAILED;
		} else if (cbb_transfer_succeeded(x)) {
			done++;
		} else {
			busy++;
		}
	}
	cbb_transfers_free(&have);
	if (busy || missing) {
		logf_(j, 2, "job %u: %s: %zu done, %zu running, %zu not "
		      "visible yet", j->job_id, stage_word(stage), done, busy,
		      missing);
		return CBB_POLL_BUSY;
	}
	return CBB_POLL_DONE;
}

int cbb_stage_teardown(cbb_job_ctx_t *j, bool abort_active, cbb_err_t *err)
{
	cbb_transfers_t have;
	cbb_stop_t *req;
	size_t i, n = 0, failed;
	bool transport;

	if (query_job(j, -1, &have, &transport, err) < 0)
		return -1;
	req = calloc(have.n ? have.n : 1, sizeof(*req));
	if (!req) {
		cbb_transfers_free(&have);
		return cbb_err(err, "conduit: out of memory");
	}
	for (i = 0; i < have.n; i++) {
		const cbb_transfer_t *x = &have.v[i];

		if (x->validation_only || cbb_transfer_failed(x) ||
		    cbb_transfer_succeeded(x))
			continue;
		req[n].id = x->id;
		req[n].user = j->user;
		n++;
	}
	if (!abort_active || n == 0) {
		if (n)
			logf_(j, 0, "job %u: teardown leaves %zu active "
			      "transfer(s) running", j->job_id, n);
		free(req);
		cbb_transfers_free(&have);
		return 0;
	}
	failed = cbb_conduit_stop(j->g, req, n);
	for (i = 0; i < n && failed; i++)
		if (!req[i].ok)
			cbb_err(err, "conduit: could not abort transfer %s: %s",
				req[i].id, req[i].message);
	logf_(j, 1, "job %u: teardown aborted %zu of %zu active transfer(s)",
	      j->job_id, n - failed, n);
	free(req);
	cbb_transfers_free(&have);
	return failed ? -1 : 0;
}

static long left_ms(const struct timespec *t0, unsigned deadline_ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)deadline_ms - ((t.tv_sec - t0->tv_sec) * 1000 +
				    (t.tv_nsec - t0->tv_nsec) / 1000000);
}

int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		       unsigned deadline_ms, cbb_err_t *err)
{
	const cbb_config_t *saved = j->g->cfg;
	cbb_config_t bounded;
	cbb_start_t *req;
	char (*comments)[CBB_KEY_MAX];
	const cbb_directive_t **which;
	struct timespec t0;
	size_t i, n = 0, decided = 0;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	req = calloc(plan->n ? plan->n : 1, sizeof(*req));
	comments = calloc(plan->n ? plan->n : 1, sizeof(*comments));
	which = calloc(plan->n ? plan->n : 1, sizeof(*which));
	if (!req || !comments || !which) {
		free(req);
		free(comments);
		free(which);
		logf_(j, -1, "job %u: remote validation skipped: out of memory",
		      j->job_id);
		return 0;
	}
	for (i = 0; i < plan->n; i++)
		if (plan->v[i].stage == CBB_STAGE_IN) {
			fill_start(j, &plan->v[i], CBB_KEY_VALIDATE, comments[n],
				   &req[n]);
			which[n++] = &plan->v[i];
		}
	/* every RPC here is bounded by what is left of the deadline */
	bounded = *saved;
	j->g->cfg = &bounded;
	bounded.request_timeout_ms = deadline_ms;
	if (n)
		cbb_conduit_start(j->g, req, n, true);
	for (i = 0; i < n; i++)
		if (!req[i].ok) {
			logf_(j, 0, "job %u: line %u: remote validation not "
			      "possible (%s); accepted", j->job_id,
			      which[i]->line, req[i].message);
			req[i].id[0] = '\0';
			decided++;
		}
	while (decided < n && rc == 0) {
		long left = left_ms(&t0, deadline_ms);
		cbb_transfers_t t;
		cbb_err_t e;
		bool tr;
		char rx[CBB_KEY_MAX];

		if (left < 20) {
			logf_(j, 0, "job %u: remote validation still running "
			      "at SubmitTimeout=%u ms; accepted", j->job_id,
			      deadline_ms);
			break;
		}
		bounded.request_timeout_ms = (unsigned)left;
		cbb_err_clear(&e);
		cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, 0);
		if (cbb_conduit_query(j->g, j->user, rx, &t, &tr, &e) < 0) {
			logf_(j, 0, "job %u: remote validation: %s; accepted",
			      j->job_id, e.msg);
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
					     "rejected it: %s", which[i]->line,
					     j->cfg->directive, msg);
				break;
			}
			if (x->state == CBB_TS_VALIDATION_COMPLETE && !x->active)
				decided++;
		}
		cbb_transfers_free(&t);
		if (decided < n && rc == 0) {
			struct timespec ts = { 0, 50 * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	j->g->cfg = saved;
	free(req);
	free(comments);
	free(which);
	return rc;
}

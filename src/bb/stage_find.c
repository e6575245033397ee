/* stage_find.c - see stage_find.h */
#include "stage_find.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A transfer of the current attempt created this long before the
 * attempt was submitted belongs to an earlier job with the same id. */
#define CBB_CLOCK_SLACK_S 60

void cbb_stage_log(cbb_job_ctx_t *j, int level, const char *fmt, ...)
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
			       uint32_t index, long attempt, unsigned *attempts)
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
		    (attempt >= 0 && k.restart != (uint32_t)attempt))
			continue;
		if (attempts)
			(*attempts)++;
		if (!best || rank(x) > rank(best) ||
		    (rank(x) == rank(best) && newer(x, best)))
			best = x;
	}
	return best;
}

cbb_conduit_action_t cbb_action_of(const cbb_directive_t *d)
{
	if (d->action == CBB_MV)
		return d->recursive ? CBB_RMOVE : CBB_MOVE;
	return d->recursive ? CBB_RCOPY : CBB_COPY;
}

/* The same expanded sources and destination as the directive. */
bool cbb_same_transfer(const cbb_transfer_t *x, const cbb_directive_t *d)
{
	size_t i;

	if (x->nsources != d->nsources || strcmp(x->destination, d->destination))
		return false;
	for (i = 0; i < d->nsources; i++)
		if (strcmp(x->sources[i], d->sources[i]))
			return false;
	return (int)cbb_action_of(d) == x->action ||
	       /* Conduit may turn a move into a copy during the data stage */
	       (d->action == CBB_MV && x->action == (d->recursive ? CBB_RCOPY :
								     CBB_COPY));
}

/*
 * One Query: every transfer of this job, of every attempt, and for an
 * array task its array's shared stage-ins (not the array's own task's
 * transfers, which share the array's id).
 */
int cbb_find_query(cbb_job_ctx_t *j, cbb_transfers_t *out, bool *transport,
		   cbb_err_t *err)
{
	char rx[2 * CBB_KEY_MAX + 128];
	size_t i, o = 0;

	if (!j->array_job_id) {
		cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, -1);
		return cbb_conduit_query(j->g, j->user, rx, out, transport,
					 err);
	}
	cbb_key_array_regex(rx, sizeof(rx), j->cluster, j->job_id,
			    j->array_job_id);
	if (cbb_conduit_query(j->g, j->user, rx, out, transport, err) < 0)
		return -1;
	for (i = 0; i < out->n; i++) {
		cbb_key_t k;

		if (cbb_key_parse(out->v[i].comment, &k) &&
		    (k.type == CBB_KEY_SHARED ? k.job_id == j->array_job_id :
						k.job_id == j->job_id)) {
			out->v[o++] = out->v[i];
			continue;
		}
		cbb_transfer_clear(&out->v[i]);
	}
	out->n = o;
	return 0;
}

/*
 * Drop transfers of the current attempt that were created well before
 * the attempt was submitted: they belong to an earlier job that had the
 * same id (Slurm hands ids out again after its state is wiped or its
 * counter wraps).  Not for a requeued job's stage-out, whose attempt
 * was submitted before the submit time Slurm shows now.
 */
void cbb_find_drop_foreign(cbb_job_ctx_t *j, cbb_stage_t stage,
			   cbb_transfers_t *t)
{
	uint32_t a = cbb_attempt(j, stage);
	size_t i, o = 0;

	if (!j->submit || a != j->restart || j->requeued)
		return;
	for (i = 0; i < t->n; i++) {
		cbb_key_t k;
		cbb_transfer_t *x = &t->v[i];

		if (x->created && x->created < j->submit - CBB_CLOCK_SLACK_S &&
		    cbb_key_parse(x->comment, &k) && k.restart == a) {
			cbb_stage_log(j, CBB_LOG_DEBUG, "job %u: ignoring transfer %s: created "
			      "before this job was submitted (an earlier job "
			      "with the same id)", j->job_id, x->id);
			cbb_transfer_clear(x);
			continue;
		}
		t->v[o++] = *x;
	}
	t->n = o;
}

/* A stage-in directive an earlier attempt finished: the attempt, or -1. */
long cbb_kept_from(const cbb_transfers_t *t, const cbb_directive_t *d,
		   uint32_t attempt)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		cbb_key_t k;

		/* the array's shared stage-in counts for its tasks */
		if (!x->validation_only && cbb_transfer_succeeded(x) &&
		    cbb_key_parse(x->comment, &k) &&
		    (k.type == CBB_KEY_PRE || k.type == CBB_KEY_SHARED) &&
		    k.restart < attempt && cbb_same_transfer(x, d))
			return (long)k.restart;
	}
	return -1;
}

/* Whether a record's transfer is among the visible ones. */
bool cbb_rec_visible(const cbb_rec_t *r, const cbb_transfers_t *t,
		     cbb_key_type_t type, uint32_t attempt, uint32_t index)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		cbb_key_t k;

		if (r->kind == CBB_REC_STARTED) {
			if (!strcmp(x->id, r->id))
				return true;
			continue;
		}
		/* an unsure start: did a transfer appear after it? */
		if (!x->validation_only && cbb_key_parse(x->comment, &k) &&
		    k.type == type && k.restart == attempt &&
		    k.index == index && x->created >= r->made - 2)
			return true;
	}
	return false;
}

/*
 * The newest start record of a directive, unless a "lost" record has
 * closed it, and whether any transfer of it was lost before.  Records
 * are in the order they were written (appended under a lock).
 */
const cbb_rec_t *cbb_open_record(const cbb_recs_t *recs, int type,
				 uint32_t attempt, uint32_t index,
				 bool *lost)
{
	const cbb_rec_t *r = NULL;
	size_t i;

	*lost = false;
	for (i = 0; i < recs->n; i++) {
		const cbb_rec_t *x = &recs->v[i];

		if (x->type != type || x->attempt != attempt || x->index != index)
			continue;
		if (x->kind == CBB_REC_REFUSED) {
			r = NULL; /* the start it closes never happened */
			continue;
		}
		if (x->kind == CBB_REC_STARTED || x->kind == CBB_REC_UNSURE) {
			r = x;
			continue;
		}
		if (x->kind != CBB_REC_LOST)
			continue; /* notes, not starts */
		*lost = true;
		if (r && !strcmp(r->kind == CBB_REC_STARTED ? r->id : "-", x->id))
			r = NULL;
	}
	return r;
}

/* The array's shared transfer of a directive: same index and content. */
const cbb_transfer_t *cbb_pick_shared(const cbb_transfers_t *t,
				      const cbb_directive_t *d)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		cbb_key_t k;

		if (x->validation_only || !cbb_key_parse(x->comment, &k) ||
		    k.type != CBB_KEY_SHARED || k.index != d->index ||
		    !cbb_same_transfer(x, d))
			continue;
		if (!best || rank(x) > rank(best) ||
		    (rank(x) == rank(best) && newer(x, best)))
			best = x;
	}
	return best;
}

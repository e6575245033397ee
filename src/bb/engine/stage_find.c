/* stage_find.c - see stage_find.h */
#include "stage_find.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A transfer of the current attempt created this long before the
 * attempt was submitted belongs to an earlier job with the same id. */
#define CBB_CLOCK_SLACK_S 60

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
		const cbb_key_t *k;
		cbb_key_t tmp;

		if ((k = cbb_transfer_key(&out->v[i], &tmp)) &&
		    (k->type == CBB_KEY_SHARED ? k->job_id == j->array_job_id :
						 k->job_id == j->job_id)) {
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
		const cbb_key_t *k;
		cbb_key_t tmp;
		cbb_transfer_t *x = &t->v[i];

		if (x->created && x->created < j->submit - CBB_CLOCK_SLACK_S &&
		    (k = cbb_transfer_key(x, &tmp)) && k->attempt == a) {
			cbb_job_log(j, CBB_LOG_DEBUG, "ignoring transfer %s: created "
			      "before this job was submitted (an earlier job "
			      "with the same id)", x->id);
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
		const cbb_key_t *k;
		cbb_key_t tmp;

		/* the array's shared stage-in counts for its tasks */
		if (!x->validation_only && cbb_transfer_succeeded(x) &&
		    (k = cbb_transfer_key(x, &tmp)) &&
		    (k->type == CBB_KEY_PRE || k->type == CBB_KEY_SHARED) &&
		    k->attempt < attempt && cbb_same_transfer(x, d))
			return (long)k->attempt;
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
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (r->kind == CBB_REC_STARTED) {
			if (!strcmp(x->id, r->id))
				return true;
			continue;
		}
		/* an unsure start: did a transfer appear after it? */
		if (!x->validation_only && (k = cbb_transfer_key(x, &tmp)) &&
		    k->type == type && k->attempt == attempt &&
		    k->index == index && x->created >= r->made - 2)
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


bool cbb_recs_stage_in_open(const cbb_recs_t *r, uint32_t *uid)
{
	bool any = false, ended = false;
	uint32_t last = 0;
	size_t i;

	*uid = CBB_UID_UNKNOWN;
	for (i = 0; i < r->n; i++) {
		const cbb_rec_t *x = &r->v[i];

		if (x->has_uid && x->kind != CBB_REC_JOINED)
			*uid = x->uid;
		if ((x->type == CBB_KEY_PRE && (x->kind == CBB_REC_STARTED ||
						x->kind == CBB_REC_UNSURE)) ||
		    x->kind == CBB_REC_JOINED) {
			any = true;
			if (x->restart > last)
				last = x->restart;
		}
	}
	for (i = 0; i < r->n && any; i++)
		ended = ended || (r->v[i].kind == CBB_REC_ACCOUNTED &&
				  r->v[i].type == CBB_KEY_PRE &&
				  r->v[i].restart >= last);
	return any && !ended;
}

/* pick.c - see pick.h */
#include "pick.h"

#include <string.h>

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
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (x->validation_only || !(k = cbb_transfer_key(x, &tmp)) ||
		    k->type != type || k->index != index ||
		    (attempt >= 0 && k->attempt != (uint32_t)attempt))
			continue;
		if (attempts)
			(*attempts)++;
		if (!best || rank(x) > rank(best) ||
		    (rank(x) == rank(best) && newer(x, best)))
			best = x;
	}
	return best;
}

/* The array's shared transfer of a directive: same index and content. */
const cbb_transfer_t *cbb_pick_shared(const cbb_transfers_t *t,
				      const cbb_directive_t *d)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (x->validation_only || !(k = cbb_transfer_key(x, &tmp)) ||
		    k->type != CBB_KEY_SHARED || k->index != d->index ||
		    !cbb_same_transfer(x, d))
			continue;
		if (!best || rank(x) > rank(best) ||
		    (rank(x) == rank(best) && newer(x, best)))
			best = x;
	}
	return best;
}

const cbb_transfer_t *cbb_stage_pick(const cbb_job_ctx_t *j,
				     const cbb_transfers_t *have,
				     const cbb_directive_t *d, cbb_stage_t stage)
{
	if (cbb_is_shared(j, d, stage))
		return cbb_pick_shared(have, d);
	return cbb_pick(have, cbb_stage_key(stage), d->index,
			(long)cbb_attempt(j, stage), NULL);
}

bool cbb_is_shared(const cbb_job_ctx_t *j, const cbb_directive_t *d,
		   cbb_stage_t stage)
{
	/* d->shared: cbb_directive_shared(), set by the stage hooks */
	return stage == CBB_STAGE_IN && d->shared && j->array_job_id &&
	       cbb_attempt(j, stage) == 0;
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

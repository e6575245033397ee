/*
 * decision.c - the decision value (facts.h) and what deciding reads of
 * the facts, shared by decide.c and requeue.c: a directive's open
 * records, whether the server shows them, its probes, and the requests,
 * notes and log lines a decision collects.  Pure, as deciding is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

void cbb_decision_log(cbb_decision_t *d, int level, const char *fmt, ...)
{
	va_list ap;

	if (d->nlog >= CBB_DECISION_LOGS)
		return;
	va_start(ap, fmt);
	vsnprintf(d->log[d->nlog].msg, sizeof(d->log[0].msg), fmt, ap);
	va_end(ap);
	d->log[d->nlog++].level = level;
}

/* The part a probe or move-aside record names ("<part>:<id>"), or -1. */
static long rec_part(const cbb_rec_t *r)
{
	char *end;
	unsigned long p;

	if (r->type != CBB_KEY_PROBE && r->type != CBB_KEY_ASIDE)
		return -1;
	p = strtoul(r->id, &end, 10);
	return end != r->id && *end == ':' ? (long)p : -1;
}

/* The transfer id a record holds ("-" when none), past any "<part>:". */
static const char *rec_tid(const cbb_rec_t *r)
{
	const char *c = rec_part(r) >= 0 ? strchr(r->id, ':') : NULL;

	return c ? c + 1 : r->id;
}

/*
 * The newest start record of a directive (of one part, part >= 0),
 * unless a "lost" record has closed it, and whether any transfer of it
 * was lost before.  Records are in the order they were written.
 */
const cbb_rec_t *cbb_open_record(const cbb_recs_t *recs, int type,
				 uint32_t attempt, uint32_t index, long part,
				 bool *lost)
{
	const cbb_rec_t *r = NULL;
	size_t i;

	*lost = false;
	for (i = 0; i < recs->n; i++) {
		const cbb_rec_t *x = &recs->v[i];

		if (x->type != type || x->attempt != attempt ||
		    x->index != index || (part >= 0 && rec_part(x) != part))
			continue;
		if (x->kind == CBB_REC_REFUSED) {
			r = NULL; /* the start it closes never happened */
		} else if (x->kind == CBB_REC_STARTED ||
			   x->kind == CBB_REC_UNSURE) {
			r = x;
		} else if (x->kind == CBB_REC_LOST) {
			*lost = true;
			if (r && !strcmp(r->kind == CBB_REC_STARTED ?
					 rec_tid(r) : "-", rec_tid(x)))
				r = NULL;
		}
	}
	return r;
}

/* Whether a start record's transfer is among the visible ones. */
bool cbb_rec_visible(const cbb_rec_t *r, const cbb_transfers_t *t, int type,
		     uint32_t attempt, uint32_t index, long part)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_transfer_t *x = &t->v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (r->kind == CBB_REC_STARTED) {
			if (!strcmp(x->id, rec_tid(r)))
				return true;
			continue;
		}
		/* an unsure start: did a transfer appear after it? */
		if ((k = cbb_transfer_key(x, &tmp)) && (int)k->type == type &&
		    k->attempt == attempt && k->index == index &&
		    (part < 0 || k->part == (uint32_t)part) &&
		    x->created >= r->made - 2)
			return true;
	}
	return false;
}

void cbb_view_key(const cbb_facts_t *f, const cbb_view_t *v,
		  cbb_key_type_t type, uint32_t part, cbb_key_t *k)
{
	memset(k, 0, sizeof(*k));
	k->job_id = v->shared ? f->array_job_id : f->job_id;
	memcpy(k->cluster, f->cluster, sizeof(k->cluster));
	k->attempt = v->shared ? 0 : f->attempt;
	k->index = v->d->index;
	k->type = v->shared && type != CBB_KEY_PROBE ? CBB_KEY_SHARED : type;
	k->line = v->d->line;
	k->part = part;
}

int cbb_decision_send(cbb_decision_t *d, size_t view, const cbb_key_t *key,
		      bool validate, cbb_conduit_action_t action,
		      const char *const *sources, size_t nsources,
		      const char *dest, bool array_file)
{
	cbb_send_t *s;

	if (!d->send || d->nsend % 64 == 0) {
		cbb_send_t *v = realloc(d->send, (d->nsend + 64) * sizeof(*v));

		if (!v)
			return -1;
		d->send = v;
	}
	s = &d->send[d->nsend++];
	memset(s, 0, sizeof(*s));
	s->view = view;
	s->key = *key;
	s->validate = validate;
	s->action = action;
	s->sources = sources;
	s->nsources = nsources;
	s->dest = dest;
	s->array_file = array_file;
	return 0;
}

int cbb_decision_note(cbb_decision_t *d, cbb_key_type_t type,
		      uint32_t attempt, uint32_t index, char kind,
		      const char *id, bool array_file)
{
	cbb_note_t *n;

	if (!d->notes || d->nnotes % 16 == 0) {
		n = realloc(d->notes, (d->nnotes + 16) * sizeof(*n));
		if (!n)
			return -1;
		d->notes = n;
	}
	n = &d->notes[d->nnotes++];
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->attempt = attempt;
	n->index = index;
	n->kind = kind;
	snprintf(n->id, sizeof(n->id), "%s", id && id[0] ? id : "-");
	n->array_file = array_file;
	return 0;
}

bool cbb_probe_decided(const cbb_transfer_t *x)
{
	return cbb_transfer_failed(x) ||
	       (x->state == CBB_TS_VALIDATION_COMPLETE && !x->active);
}

static bool newer(const cbb_transfer_t *a, const cbb_transfer_t *b)
{
	return a->created > b->created ||
	       (a->created == b->created && a->created_ns > b->created_ns);
}

const cbb_transfer_t *cbb_probe_of(const cbb_facts_t *f, uint32_t job,
				   uint32_t attempt, uint32_t index,
				   uint32_t part, const char *dest)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < f->have.n; i++) {
		const cbb_transfer_t *x = &f->have.v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (!x->validation_only || !(k = cbb_transfer_key(x, &tmp)) ||
		    k->type != CBB_KEY_PROBE || k->job_id != job ||
		    k->attempt != attempt || k->index != index ||
		    k->part != part || (dest && strcmp(x->destination, dest)))
			continue;
		if (!best || newer(x, best))
			best = x;
	}
	return best;
}

int cbb_probe_state(const cbb_facts_t *f, const cbb_recs_t *recs,
		    uint32_t job, uint32_t attempt, uint32_t index,
		    uint32_t part, const char *dest,
		    const cbb_transfer_t **x)
{
	const cbb_rec_t *r;
	bool lost;

	*x = cbb_probe_of(f, job, attempt, index, part, dest);
	if (*x)
		return cbb_probe_decided(*x) ? PROBE_ANSWERED : PROBE_WAIT;
	r = cbb_open_record(recs, CBB_KEY_PROBE, attempt, index, (long)part,
			    &lost);
	/* sent and not visible yet: waited for as a start is, then lost */
	if (r && !cbb_rec_visible(r, &f->have, CBB_KEY_PROBE, attempt, index,
				  (long)part) &&
	    f->now - r->made < (int64_t)f->visible_grace_s)
		return PROBE_WAIT;
	return PROBE_NONE;
}

void cbb_decision_free(cbb_decision_t *d)
{
	free(d->v);
	free(d->send);
	free(d->notes);
	cbb_arena_free(&d->arena);
	memset(d, 0, sizeof(*d));
}


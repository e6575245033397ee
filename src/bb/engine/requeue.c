/*
 * requeue.c - the requeue rules, all of them, pure (facts.h).
 *
 * Slurm runs a requeued job again; what runs again of its directives:
 * every #CONDUIT_POST, and #CONDUIT_PRE --every-attempt (cbb_runs_again);
 * another stage-in an earlier attempt finished is kept (cbb_kept_from).
 *
 * A directive that runs again must leave what one run leaves: not the
 * earlier attempt's tree with the new one nested in it, nor the two
 * mixed.  Nothing is deleted to get there: what the earlier attempt
 * wrote is moved aside first (cbb_requeue_gate), and only that:
 *
 *  - the earlier transfer must be this job's (a StateDir record of its
 *    own start) and this directive's (the same sources, destination and
 *    action), never one of an older job that had the same id;
 *  - each place it wrote must be one it created: a destination Conduit
 *    said did not exist (destInfo DEST_NOT_EXIST), or DEST/basename of a
 *    source when a probe before that attempt wrote said it did not exist
 *    yet.  A place that held a directory before the job came (another
 *    user's, say) is never moved: the stage fails, naming it, and
 *    nothing moves; a file the job overwrote is overwritten again, as
 *    one run would;
 *  - the aside name is fresh and unpredictable,
 *    <place>.conduit-attempt-<k>-<8 random hex digits>, recorded before
 *    anything is sent, checked free on the server (a probe: Conduit says
 *    it does not exist) before the move, and a name taken is replaced,
 *    three times at most;
 *  - a move-aside is started only under the job's lock, decided again
 *    from the records as they are then (stage.c), so a repeated or raced
 *    hook never moves aside twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "pick.h"
#include "stage.h"

/* Conduit's error for a validation that failed (a missing source). */
#define ERROR_VALIDATION 22
/* The suffix of what an earlier attempt left, moved aside. */
#define ASIDE_SUFFIX ".conduit-attempt-"

bool cbb_runs_again(const cbb_directive_t *d, cbb_stage_t stage)
{
	return stage == CBB_STAGE_OUT || d->every_attempt;
}

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

static bool still_runs(const cbb_transfer_t *x)
{
	return !cbb_transfer_failed(x) && !cbb_transfer_succeeded(x);
}

/* Whether the job's own records show it started x. */
static bool started_by_us(const cbb_facts_t *f, const cbb_transfer_t *x,
			  const cbb_key_t *k)
{
	size_t i;

	for (i = 0; i < f->recs.n; i++) {
		const cbb_rec_t *r = &f->recs.v[i];

		if ((int)k->type != r->type || r->attempt != k->attempt ||
		    r->index != k->index)
			continue;
		if ((r->kind == CBB_REC_STARTED && !strcmp(r->id, x->id)) ||
		    (r->kind == CBB_REC_UNSURE && x->created >= r->made - 2))
			return true;
	}
	return false;
}

/* x went to d's destination, as written or placed into its parent. */
static bool placed(const cbb_transfer_t *x, const cbb_directive_t *d)
{
	size_t n = strlen(x->destination);

	return n > 1 && x->destination[n - 1] == '/' &&
	       !strncmp(d->destination, x->destination, n) &&
	       d->destination[n] && !strchr(d->destination + n, '/');
}

/*
 * The newest transfer of d of an attempt before this one that this job
 * started and that got as far as writing (setup began) or still runs,
 * or NULL; *from gets its attempt.  Running beats finished in one
 * attempt.
 */
static const cbb_transfer_t *earlier_writer(const cbb_facts_t *f,
					    const cbb_directive_t *d,
					    uint32_t *from)
{
	const cbb_transfer_t *best = NULL;
	uint32_t best_a = 0;
	size_t i;

	for (i = 0; i < f->have.n; i++) {
		const cbb_transfer_t *x = &f->have.v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (x->validation_only || !(x->started || still_runs(x)) ||
		    !(k = cbb_transfer_key(x, &tmp)) || k->type != f->type ||
		    k->job_id != f->job_id || k->index != d->index ||
		    k->attempt >= f->attempt ||
		    !(cbb_same_transfer(x, d) || placed(x, d)) ||
		    !started_by_us(f, x, k))
			continue;
		if (!best || k->attempt > best_a ||
		    (k->attempt == best_a && still_runs(x) && !still_runs(best))) {
			best = x;
			best_a = k->attempt;
		}
	}
	*from = best_a;
	return best;
}

/* A move-aside (or its probe) that found nothing to move. */
static bool found_nothing(const cbb_transfer_t *x)
{
	return !x->started && x->error == ERROR_VALIDATION &&
	       strstr(x->error_message, "no such file or directory");
}

/* The path length without trailing slashes ("/" stays). */
static size_t trimmed(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return n;
}

typedef struct {
	const char *path;   /* a place the earlier transfer wrote */
	uint32_t part;      /* its number: the source's index */
	bool owned;         /* created by this job: moved aside */
} place_t;

/*
 * Where W wrote (see the top of the file), each place with whether the
 * job created it; n places, 0 when W's destInfo is not known, -1 when a
 * place is not the job's to move (why set).
 */
static long places(const cbb_facts_t *f, cbb_decision_t *d,
		   const cbb_view_t *v, const cbb_transfer_t *w,
		   uint32_t from, place_t *out, cbb_err_t *why)
{
	size_t i, k, dn = trimmed(w->destination), n = 0;
	bool root = dn == 1 && w->destination[0] == '/';

	if (w->dest_info == CBB_DEST_NOT_EXIST ||
	    w->dest_info == CBB_DEST_NOT_DIR) {
		out[0].path = cbb_arena_strndup(&d->arena, w->destination, dn);
		out[0].part = 0;
		/* a file the job overwrote is overwritten again */
		out[0].owned = w->dest_info == CBB_DEST_NOT_EXIST;
		return out[0].path ? 1 : -1;
	}
	if (w->dest_info != CBB_DEST_IS_DIR)
		return 0;
	for (i = 0; i < w->nsources; i++) {
		const char *s = w->sources[i], *base;
		size_t sn = trimmed(s), bn;
		const cbb_transfer_t *p;
		char *path;

		for (base = s + sn; base > s && base[-1] != '/'; base--)
			;
		bn = (size_t)(s + sn - base);
		path = cbb_arena_alloc(&d->arena, dn + bn + 2);
		if (!path || bn == 0)
			return cbb_err(why, "line %u: cannot move aside what "
				       "attempt %u left: a source has no name",
				       v->d->line, from);
		snprintf(path, dn + bn + 2, "%.*s/%.*s", root ? 0 : (int)dn,
			 w->destination, (int)bn, base);
		for (k = 0; k < n && strcmp(out[k].path, path); k++)
			;
		if (k < n)
			continue; /* two sources of one name: one place */
		out[n].path = path;
		out[n].part = (uint32_t)i;
		/* a tree placed into the destination's parent went where
		 * nothing was (its probe said so); otherwise the probe
		 * before that attempt wrote says what was there */
		if (placed(w, v->d)) {
			out[n].owned = true;
		} else {
			p = cbb_probe_of(f, f->job_id, from, v->d->index,
					 CBB_PROBE_TARGET + (uint32_t)i, path);
			if (!p || !cbb_probe_decided(p) ||
			    p->dest_info == CBB_DEST_IS_DIR ||
			    p->dest_info == CBB_DEST_NONE)
				return cbb_err(why, "line %u: %s %s: attempt %u "
					       "wrote into %s, which %s before "
					       "the job wrote there: conduit-bb "
					       "moves aside only what the job "
					       "created, so attempt %u is not "
					       "staged over it (nothing was "
					       "moved); move it away, then "
					       "requeue", v->d->line,
					       cbb_stage_word(f->stage),
					       v->d->action == CBB_MV ? "mv" : "cp",
					       from, path, p && cbb_probe_decided(p) &&
					       p->dest_info == CBB_DEST_IS_DIR ?
					       "existed" : "may have existed",
					       f->attempt);
			out[n].owned = p->dest_info == CBB_DEST_NOT_EXIST;
		}
		n++;
	}
	return (long)n;
}

/* An aside transfer of (index, part) for attempts in (from, to]: a
 * succeeded one when `done`, else the newest of attempt `to`. */
static const cbb_transfer_t *aside_of(const cbb_facts_t *f, uint32_t index,
				      uint32_t part, uint32_t from, uint32_t to,
				      bool done)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < f->have.n; i++) {
		const cbb_transfer_t *x = &f->have.v[i];
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (x->validation_only || !(k = cbb_transfer_key(x, &tmp)) ||
		    k->type != CBB_KEY_ASIDE || k->job_id != f->job_id ||
		    k->index != index || k->part != part ||
		    k->attempt <= from || k->attempt > to)
			continue;
		if (done ? cbb_transfer_succeeded(x) :
			   k->attempt == to && (!best || x->created > best->created))
			best = x;
		if (done && best)
			return best;
	}
	return best;
}

/* The newest aside name of a place, and how many were chosen. */
static const char *aside_token(const cbb_facts_t *f, uint32_t index,
			       uint32_t part, unsigned *count)
{
	const char *tok = NULL;
	char want[16];
	size_t i, n;

	*count = 0;
	n = (size_t)snprintf(want, sizeof(want), "%u:", part);
	for (i = 0; i < f->recs.n; i++) {
		const cbb_rec_t *r = &f->recs.v[i];

		if (r->kind == CBB_REC_ASIDE_NAME && r->type == CBB_KEY_ASIDE &&
		    r->attempt == f->attempt && r->index == index &&
		    !strncmp(r->id, want, n) && r->id[n]) {
			tok = r->id + n;
			(*count)++;
		}
	}
	return tok;
}

/* A fresh name for the place: recorded, then probed (under the lock). */
static int new_name(const cbb_facts_t *f, cbb_decision_t *d, size_t view,
		    const place_t *pl, unsigned count, uint32_t from,
		    cbb_err_t *why)
{
	const cbb_view_t *v = &d->v[view];
	char id[64];

	if (count >= CBB_ASIDE_NAMES || count >= CBB_TOKENS)
		return cbb_err(why, "line %u: no free name to move aside what "
			       "attempt %u left at %s (%u tried): nothing was "
			       "moved", v->d->line, from, pl->path, count);
	snprintf(id, sizeof(id), "%u:%s", pl->part, f->tokens[count]);
	d->need_lock = true;
	return cbb_decision_note(d, CBB_KEY_ASIDE, f->attempt, v->d->index,
				 CBB_REC_ASIDE_NAME, id, false);
}

enum { A_DONE, A_WAIT, A_BLOCKED };

/* One owned place through its move-aside: name, probe, move. */
static int aside_place(const cbb_facts_t *f, cbb_decision_t *d, size_t view,
		       const place_t *pl, uint32_t from, cbb_err_t *why)
{
	const cbb_view_t *v = &d->v[view];
	uint32_t index = v->d->index, part = pl->part;
	const cbb_transfer_t *a, *p;
	const char **src;
	const cbb_rec_t *r;
	const char *tok;
	unsigned count;
	char msg[CBB_ERR_MAX / 2], *name;
	cbb_key_t key;
	size_t len;
	bool lost;
	int st;

	if (aside_of(f, index, part, from, f->attempt, true))
		return A_DONE; /* moved aside since */
	a = aside_of(f, index, part, from, f->attempt, false);
	if (a && still_runs(a))
		return A_WAIT;
	if (a && found_nothing(a))
		return A_DONE;
	if (a) {
		snprintf(msg, sizeof(msg), "%s", a->error_message[0] ?
			 a->error_message : "(no message)");
		cbb_one_line(msg);
		cbb_err(why, "line %u: moving aside what attempt %u left at %s "
			"failed: %s: %s", v->d->line, from, pl->path,
			cbb_error_name(a->error), msg);
		return A_BLOCKED;
	}
	r = cbb_open_record(&f->recs, CBB_KEY_ASIDE, f->attempt, index,
			    (long)part, &lost);
	if (r && f->now - r->made < (int64_t)f->visible_grace_s &&
	    !cbb_rec_visible(r, &f->have, CBB_KEY_ASIDE, f->attempt, index,
			     (long)part))
		return A_WAIT; /* sent, not visible yet */
	tok = aside_token(f, index, part, &count);
	if (!tok)
		return new_name(f, d, view, pl, count, from, why) < 0 ?
			       A_BLOCKED : A_WAIT;
	len = strlen(pl->path) + sizeof(ASIDE_SUFFIX) + 12 + strlen(tok) + 2;
	name = cbb_arena_alloc(&d->arena, len);
	src = cbb_arena_alloc(&d->arena, sizeof(*src));
	if (!name || !src)
		return cbb_err(why, "conduit_bb: out of memory"), A_BLOCKED;
	snprintf(name, len, "%s%s%u-%s", pl->path, ASIDE_SUFFIX, from, tok);
	*src = pl->path;
	st = cbb_probe_state(f, &f->recs, f->job_id, f->attempt, index,
			     CBB_PROBE_ASIDE + part, name, &p);
	if (st == PROBE_WAIT)
		return A_WAIT;
	if (st == PROBE_NONE || (p && !found_nothing(p) &&
				 p->dest_info != CBB_DEST_NOT_EXIST &&
				 p->dest_info != CBB_DEST_NONE)) {
		/* a name another made first is never used: a new one */
		if (st == PROBE_ANSWERED)
			return new_name(f, d, view, pl, count, from, why) < 0 ?
				       A_BLOCKED : A_WAIT;
		cbb_view_key(f, v, CBB_KEY_PROBE, CBB_PROBE_ASIDE + part, &key);
		d->need_lock = true;
		return cbb_decision_send(d, view, &key, true, CBB_RMOVE, src, 1,
					 name, false) < 0 ? A_BLOCKED : A_WAIT;
	}
	if (found_nothing(p))
		return A_DONE; /* what was there is gone */
	if (cbb_transfer_failed(p)) {
		snprintf(msg, sizeof(msg), "%s", p->error_message[0] ?
			 p->error_message : "(no message)");
		cbb_one_line(msg);
		cbb_err(why, "line %u: cannot move aside what attempt %u left "
			"at %s: %s (nothing was moved)", v->d->line, from,
			pl->path, msg);
		return A_BLOCKED;
	}
	cbb_view_key(f, v, CBB_KEY_ASIDE, part, &key);
	d->need_lock = true;
	cbb_decision_log(d, CBB_LOG_INFO, "line %u: moving aside what attempt "
			 "%u left at %s, to %s, before attempt %u stages it "
			 "again", v->d->line, from, pl->path, name, f->attempt);
	return cbb_decision_send(d, view, &key, false, CBB_RMOVE, src, 1, name,
				 false) < 0 ? A_BLOCKED : A_WAIT;
}

cbb_need_t cbb_requeue_gate(const cbb_facts_t *f, cbb_decision_t *d,
			    size_t view)
{
	cbb_view_t *v = &d->v[view];
	const cbb_transfer_t *w;
	place_t *pl;
	uint32_t from;
	size_t i;
	long n;
	bool wait = false;

	w = earlier_writer(f, v->d, &from);
	if (!w)
		return N_START; /* nothing of this job's written there */
	if (still_runs(w)) {
		cbb_decision_log(d, CBB_LOG_VERBOSE, "line %u: attempt %u's "
				 "transfer %s still runs; attempt %u waits for "
				 "it", v->d->line, from, w->id, f->attempt);
		return N_ASIDE;
	}
	pl = cbb_arena_alloc(&d->arena, (w->nsources + 1) * sizeof(*pl));
	if (!pl)
		return N_BLOCKED;
	cbb_err_clear(&v->why);
	n = places(f, d, v, w, from, pl, &v->why);
	if (n < 0) {
		v->why_kind = CBB_FAIL_ASIDE;
		return N_BLOCKED;
	}
	if (n == 0)
		cbb_decision_log(d, CBB_LOG_INFO, "line %u: the Conduit server "
				 "did not say where attempt %u's transfer %s "
				 "wrote (no destInfo); nothing moved aside",
				 v->d->line, from, w->id);
	for (i = 0; i < (size_t)n; i++) {
		int st;

		if (!pl[i].owned)
			continue;
		st = aside_place(f, d, view, &pl[i], from, &v->why);
		if (st == A_BLOCKED) {
			v->why_kind = CBB_FAIL_ASIDE;
			return N_BLOCKED;
		}
		wait = wait || st == A_WAIT;
	}
	return wait ? N_ASIDE : N_START;
}

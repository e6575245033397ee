/*
 * stage_aside.c - a directive that runs again in a later attempt of a
 * requeued job (every #CONDUIT_POST, and #CONDUIT_PRE --every-attempt)
 * must leave what a job that ran once leaves: not the earlier attempt's
 * tree with the new one nested in it, nor the two mixed.  Nothing is
 * deleted to get there: before the directive starts again, what its
 * earlier attempt k wrote is moved aside by a Conduit transfer to
 * `<target>.conduit-attempt-<k>`, and waited for (docs/directives.md,
 * "Requeued jobs").  The target is where Conduit said that transfer
 * wrote (its destInfo): the destination itself (DEST_NOT_EXIST,
 * DEST_NOT_DIR), or destination/basename(source) for each source
 * (DEST_IS_DIR).
 *
 * Restart-safe and idempotent: the move-aside is recorded in StateDir
 * before it is sent (key.h's CONDUIT_ASIDE, one PART per target; the
 * record's id is "<part>:<transfer id>"), found again on the server by
 * its comment, and decided under the job's lock (cbb_job_lock), so a
 * repeated or raced hook never moves aside twice, and never once the
 * directive's own transfer of this attempt exists (which would move the
 * final attempt's output away).
 *
 * In the stage engine, below the verdicts (stage_verdict.c asks it for
 * each directive about to start); it calls only the layers below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

#include "stage_find.h"

/* How long a hook waits for another hook of the job deciding the same. */
#define ASIDE_LOCK_MS 200
/* Paths longer than this are refused (Conduit's and Linux's PATH_MAX). */
#define ASIDE_PATH_MAX 4096
/* Conduit's error for a validation that failed (a missing source). */
#define ERROR_VALIDATION 22
/* The suffix of what an earlier attempt left, moved aside. */
#define ASIDE_SUFFIX ".conduit-attempt-"

/* One place a transfer wrote, and where it goes aside. */
typedef struct {
	char from[ASIDE_PATH_MAX];
	char to[ASIDE_PATH_MAX];
} place_t;

/* Runs again in every attempt: every stage-out, --every-attempt stage-ins. */
static bool repeats(const cbb_directive_t *d, cbb_stage_t stage)
{
	return stage == CBB_STAGE_OUT || d->every_attempt;
}

static bool still_runs(const cbb_transfer_t *x)
{
	return !cbb_transfer_failed(x) && !cbb_transfer_succeeded(x);
}

/*
 * The newest transfer of directive d of an attempt before `attempt` that
 * got as far as writing (its setup began: startTime set) or still runs
 * (it may write yet: it is waited for), or NULL; *from gets its attempt.
 * A running one beats a finished one of the same attempt.
 */
static const cbb_transfer_t *earlier_writer(const cbb_transfers_t *have,
					    const cbb_directive_t *d,
					    cbb_key_type_t type,
					    uint32_t attempt, uint32_t *from)
{
	const cbb_transfer_t *best = NULL;
	uint32_t best_a = 0;
	size_t i;

	for (i = 0; i < have->n; i++) {
		const cbb_transfer_t *x = &have->v[i];
		cbb_key_t k;

		if (x->validation_only || !(x->started || still_runs(x)) ||
		    !cbb_key_parse(x->comment, &k) || k.type != type ||
		    k.index != d->index || k.attempt >= attempt)
			continue;
		if (!best || k.attempt > best_a ||
		    (k.attempt == best_a && still_runs(x) && !still_runs(best))) {
			best = x;
			best_a = k.attempt;
		}
	}
	*from = best_a;
	return best;
}

/* Whether a move-aside for d keyed to an attempt in (after, before)
 * exists: what `after` wrote was moved aside since. */
static bool moved_since(const cbb_transfers_t *have, const cbb_directive_t *d,
			uint32_t after, uint32_t before)
{
	size_t i;

	for (i = 0; i < have->n; i++) {
		cbb_key_t k;

		if (!have->v[i].validation_only &&
		    cbb_key_parse(have->v[i].comment, &k) &&
		    k.type == CBB_KEY_ASIDE && k.index == d->index &&
		    k.attempt > after && k.attempt < before)
			return true;
	}
	return false;
}

/* The length of a path without its trailing slashes ("/" stays). */
static size_t trimmed(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return n;
}

/*
 * Where transfer x wrote (see the top of this file), and where each
 * place goes aside.  Returns how many places (0 when x's destInfo is not
 * known), -1 when a name would be too long or a source has no name.
 */
static long places_of(const cbb_transfer_t *x, uint32_t from, place_t *out,
		      size_t max)
{
	size_t i, dn = trimmed(x->destination), n = 0;
	bool root = dn == 1 && x->destination[0] == '/';
	int w;

	if (x->dest_info == CBB_DEST_NOT_EXIST ||
	    x->dest_info == CBB_DEST_NOT_DIR) {
		if (max < 1)
			return -1;
		w = snprintf(out[0].from, sizeof(out[0].from), "%.*s",
			     (int)dn, x->destination);
		if (w < 0 || (size_t)w >= sizeof(out[0].from))
			return -1;
		n = 1;
	} else if (x->dest_info == CBB_DEST_IS_DIR) {
		for (i = 0; i < x->nsources; i++) {
			const char *s = x->sources[i], *base;
			size_t sn = trimmed(s), bn;

			for (base = s + sn; base > s && base[-1] != '/'; base--)
				;
			bn = (size_t)(s + sn - base);
			if (bn == 0 || n >= max)
				return -1;
			w = snprintf(out[n].from, sizeof(out[n].from), "%.*s/%.*s",
				     root ? 0 : (int)dn, x->destination,
				     (int)bn, base);
			if (w < 0 || (size_t)w >= sizeof(out[n].from))
				return -1;
			n++;
		}
	} else {
		return 0;
	}
	for (i = 0; i < n; i++) {
		w = snprintf(out[i].to, sizeof(out[i].to), "%s%s%u", out[i].from,
			     ASIDE_SUFFIX, from);
		if (w < 0 || (size_t)w >= sizeof(out[i].to))
			return -1;
	}
	return (long)n;
}

/* The move-aside transfer of one place on the server: running beats
 * finished beats failed. */
static const cbb_transfer_t *aside_of(const cbb_transfers_t *have,
				      const cbb_directive_t *d,
				      uint32_t attempt, uint32_t part)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < have->n; i++) {
		const cbb_transfer_t *x = &have->v[i];
		cbb_key_t k;

		if (x->validation_only || !cbb_key_parse(x->comment, &k) ||
		    k.type != CBB_KEY_ASIDE || k.index != d->index ||
		    k.attempt != attempt || k.part != part)
			continue;
		if (!best || (still_runs(x) && !still_runs(best)) ||
		    (cbb_transfer_succeeded(x) && cbb_transfer_failed(best)))
			best = x;
	}
	return best;
}

/*
 * The last record of a place's move-aside ("<part>:<id>" in the id), or
 * NULL: what this job's hooks did about it that Conduit may not show.
 */
static const cbb_rec_t *aside_record(const cbb_recs_t *recs,
				     const cbb_directive_t *d,
				     uint32_t attempt, uint32_t part)
{
	const cbb_rec_t *r = NULL;
	char want[16];
	size_t i, n;

	n = (size_t)snprintf(want, sizeof(want), "%u:", part);
	for (i = 0; i < recs->n; i++) {
		const cbb_rec_t *x = &recs->v[i];

		if (x->type == CBB_KEY_ASIDE && x->attempt == attempt &&
		    x->index == d->index && !strncmp(x->id, want, n))
			r = x;
	}
	return r;
}

/* A move-aside record: the job's record, its id "<part>:<id>". */
static void aside_rec(const cbb_job_ctx_t *j, cbb_rec_t *r, uint32_t attempt,
		      const cbb_directive_t *d, char kind, uint32_t part,
		      const char *id)
{
	char pid[sizeof(r->id)];

	snprintf(pid, sizeof(pid), "%u:%s", part, id && id[0] ? id : "-");
	cbb_job_rec(j, r, CBB_KEY_ASIDE, attempt, d->index, kind, pid);
}

/* A move-aside that found nothing to move: what was there is gone. */
static bool found_nothing(const cbb_transfer_t *x)
{
	return !x->started && x->error == ERROR_VALIDATION &&
	       strstr(x->error_message, "no such file or directory");
}

/*
 * Start the move-aside of the places in `todo` (n of them), recorded
 * before they are sent.  Returns 0, or -1 (err set) when the records
 * cannot be written (nothing is sent then) or Conduit refused one.
 */
static int start_asides(cbb_job_ctx_t *j, const cbb_directive_t *d,
			uint32_t attempt, uint32_t from, const place_t *pl,
			const uint32_t *todo, size_t n, cbb_err_t *err)
{
	cbb_start_t *req = calloc(n, sizeof(*req));
	cbb_rec_t *recs = calloc(n, sizeof(*recs));
	char (*comment)[CBB_KEY_MAX] = calloc(n, sizeof(*comment));
	const char **src = calloc(n, sizeof(*src));
	cbb_err_t e;
	size_t i;
	int rc = 0;

	if (!req || !recs || !comment || !src) {
		rc = cbb_err(err, "line %u: out of memory", d->line);
		goto out;
	}
	for (i = 0; i < n; i++) {
		cbb_key_t k;

		memset(&k, 0, sizeof(k));
		k.job_id = j->job_id;
		memcpy(k.cluster, j->cluster, sizeof(k.cluster));
		k.attempt = attempt;
		k.index = d->index;
		k.type = CBB_KEY_ASIDE;
		k.line = d->line;
		k.part = todo[i];
		cbb_key_format(comment[i], sizeof(comment[i]), &k);
		src[i] = pl[todo[i]].from;
		req[i].user = j->user;
		req[i].action = CBB_RMOVE;
		req[i].sources = &src[i];
		req[i].nsources = 1;
		req[i].destination = pl[todo[i]].to;
		req[i].comment = comment[i];
		aside_rec(j, &recs[i], attempt, d, CBB_REC_UNSURE, todo[i], NULL);
	}
	/* before anything is sent: a hook killed while it waits for the
	 * answer leaves a record the next one waits on, never a second move */
	cbb_err_clear(&e);
	if (cbb_recs_add(j->sd, j->job_id, recs, n, &e) < 0) {
		rc = cbb_err(err, "line %u: %s", d->line, e.msg);
		goto out;
	}
	for (i = 0; i < n; i++)
		cbb_job_log(j, CBB_LOG_INFO, "line %u: moving aside what attempt "
			    "%u left at %s, to %s, before attempt %u stages it "
			    "again", d->line, from, pl[todo[i]].from,
			    pl[todo[i]].to, attempt);
	cbb_conduit_start(j->g, req, n, false);
	for (i = 0; i < n; i++) {
		if (req[i].ok) {
			aside_rec(j, &recs[i], attempt, d, CBB_REC_STARTED,
				  todo[i], req[i].id);
		} else if (req[i].answer == CBB_ANSWER_MAYBE) {
			/* it may exist: the polls wait for it to show up */
			aside_rec(j, &recs[i], attempt, d, CBB_REC_UNSURE,
				  todo[i], NULL);
		} else {
			aside_rec(j, &recs[i], attempt, d, CBB_REC_REFUSED,
				  todo[i], NULL);
			if (req[i].answer == CBB_ANSWER_REFUSED && rc == 0)
				rc = cbb_err(err, "line %u: moving aside what "
					     "attempt %u left at %s: Conduit "
					     "refused it: %s", d->line, from,
					     pl[todo[i]].from, req[i].message);
		}
	}
	cbb_err_clear(&e);
	if (cbb_recs_add(j->sd, j->job_id, recs, n, &e) < 0)
		cbb_job_log(j, CBB_LOG_ERROR, "%s", e.msg);
out:
	free(req);
	free(recs);
	free(comment);
	free(src);
	return rc;
}

/*
 * Under the job's lock: what each place's move-aside needs, and start
 * the ones due.  CBB_ASIDE_* as for cbb_aside_gate.
 */
static int decide(cbb_job_ctx_t *j, const cbb_directive_t *d,
		  cbb_key_type_t type, uint32_t attempt, uint32_t from,
		  const place_t *pl, size_t n, const cbb_transfers_t *have,
		  const cbb_recs_t *recs, cbb_err_t *err)
{
	int64_t now = (int64_t)time(NULL);
	uint32_t *todo;
	size_t i, k = 0, waiting = 0;
	bool lost;
	int rc = CBB_ASIDE_GO;

	/* a hook of this job started the directive meanwhile: never move
	 * aside what it writes */
	if (cbb_open_record(recs, (int)type, attempt, d->index, &lost))
		return CBB_ASIDE_WAIT;
	todo = calloc(n ? n : 1, sizeof(*todo));
	if (!todo)
		return cbb_err(err, "line %u: out of memory", d->line);
	for (i = 0; i < n; i++) {
		const cbb_transfer_t *x = aside_of(have, d, attempt, (uint32_t)i);
		const cbb_rec_t *r;
		char msg[CBB_ERR_MAX / 2];

		if (x && still_runs(x)) {
			waiting++;
			continue;
		}
		if (x && (cbb_transfer_succeeded(x) || found_nothing(x)))
			continue;
		if (x) {
			snprintf(msg, sizeof(msg), "%s", x->error_message[0] ?
				 x->error_message : "(no message)");
			cbb_one_line(msg);
			rc = cbb_err(err, "line %u: moving aside what attempt %u "
				     "left at %s failed: %s: %s", d->line, from,
				     pl[i].from, cbb_error_name(x->error), msg);
			break;
		}
		r = aside_record(recs, d, attempt, (uint32_t)i);
		if (r && r->kind != CBB_REC_REFUSED &&
		    now - r->made < (int64_t)j->cfg->start_visible_grace_s) {
			waiting++; /* sent, not visible yet */
			continue;
		}
		if (r && r->kind != CBB_REC_REFUSED)
			cbb_job_log(j, CBB_LOG_ERROR, "line %u: the move-aside of "
				    "%s never showed up on the Conduit server "
				    "(StartVisibleGrace=%u s): it is lost; "
				    "starting it again", d->line, pl[i].from,
				    j->cfg->start_visible_grace_s);
		todo[k++] = (uint32_t)i;
	}
	if (rc != CBB_ASIDE_FAILED && k &&
	    start_asides(j, d, attempt, from, pl, todo, k, err) < 0)
		rc = CBB_ASIDE_FAILED;
	else if (rc != CBB_ASIDE_FAILED && (k || waiting))
		rc = CBB_ASIDE_WAIT;
	free(todo);
	return rc;
}

int cbb_aside_gate(cbb_job_ctx_t *j, const cbb_directive_t *d,
		   cbb_stage_t stage, uint32_t attempt,
		   const cbb_transfers_t *have, cbb_err_t *err)
{
	cbb_key_type_t type = cbb_stage_key(stage);
	const cbb_transfer_t *w;
	uint32_t from;
	size_t room;
	place_t *pl;
	cbb_recs_t recs;
	cbb_err_t e;
	long n;
	int rc, lock;

	if (attempt == 0 || !repeats(d, stage))
		return CBB_ASIDE_GO;
	w = earlier_writer(have, d, type, attempt, &from);
	if (!w || moved_since(have, d, from, attempt))
		return CBB_ASIDE_GO; /* nothing written, or moved aside since */
	if (still_runs(w)) {
		cbb_job_log(j, CBB_LOG_VERBOSE, "line %u: attempt %u's transfer "
			    "%s still runs; attempt %u waits for it", d->line,
			    from, w->id, attempt);
		return CBB_ASIDE_WAIT;
	}
	room = w->nsources ? w->nsources : 1;
	pl = calloc(room, sizeof(*pl));
	if (!pl)
		return cbb_err(err, "line %u: out of memory", d->line);
	n = places_of(w, from, pl, room);
	if (n <= 0) {
		free(pl);
		if (n < 0)
			return cbb_err(err, "line %u: cannot move aside what "
				       "attempt %u left: its name would be too "
				       "long, or a source has no name", d->line,
				       from);
		cbb_job_log(j, CBB_LOG_INFO, "line %u: the Conduit server did not "
			    "say where attempt %u's transfer %s wrote (no "
			    "destInfo); nothing moved aside", d->line, from,
			    w->id);
		return CBB_ASIDE_GO;
	}
	lock = cbb_job_lock(j->sd, j->job_id, ASIDE_LOCK_MS);
	if (lock < 0) {
		free(pl);
		return CBB_ASIDE_WAIT; /* another hook of the job decides */
	}
	/* the records as they are now, under the lock */
	cbb_err_clear(&e);
	if (cbb_recs_load(j->sd, j->job_id, j->restart, j->submit, &recs,
			  &e) < 0) {
		cbb_shared_unlock(lock);
		free(pl);
		return cbb_err(err, "line %u: %s", d->line, e.msg);
	}
	rc = decide(j, d, type, attempt, from, pl, (size_t)n, have, &recs, err);
	cbb_recs_free(&recs);
	cbb_shared_unlock(lock);
	free(pl);
	return rc;
}

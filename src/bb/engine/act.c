/*
 * act.c - a decision carried out once (facts.h): its notes recorded, then
 * every request it holds recorded as unsure *before* any leaves (a hook
 * killed while it waits for the answer leaves a record the next one
 * waits on, never a start nothing remembers and the next one repeats: a
 * second mv), the requests sent together on the hook's one connection,
 * what came back recorded, and a hurried teardown that came meanwhile
 * honoured.  The answers are conduit.h's: a start Conduit may have
 * taken (MAYBE) is never sent again here; one it said to try again
 * (RETRY) is left to the next poll, within the outage grace; one it
 * refused fails the stage with its words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "stage.h"

/*
 * A StateDir record of this job, stamped with its restart count, submit
 * time, uid and now; id NULL or "" is written "-".  The one place a
 * record is made.
 */
void cbb_job_rec(const cbb_job_ctx_t *j, cbb_rec_t *r, cbb_key_type_t type,
		 uint32_t attempt, uint32_t index, char kind, const char *id)
{
	memset(r, 0, sizeof(*r));
	r->restart = j->restart;
	r->submit = j->submit;
	r->type = (int)type;
	r->attempt = attempt;
	r->index = index;
	r->made = (int64_t)time(NULL);
	r->kind = kind;
	snprintf(r->id, sizeof(r->id), "%s", id && id[0] ? id : "-");
	/* whose transfers these are: a sweep by another job's hook asks
	 * Conduit as that user (sweep.c) */
	r->has_uid = true;
	r->uid = j->uid;
}

/* Records of a batch, each file written once. */
typedef struct {
	cbb_rec_t *own, *array;
	size_t n_own, n_array;
} batch_t;

static void batch_add(const cbb_job_ctx_t *j, batch_t *b, bool array,
		      cbb_key_type_t type, uint32_t attempt, uint32_t index,
		      char kind, const char *id)
{
	if (array)
		cbb_job_rec(j, &b->array[b->n_array++], type, attempt, index,
			    kind, id);
	else
		cbb_job_rec(j, &b->own[b->n_own++], type, attempt, index, kind,
			    id);
}

/*
 * Write the batch, one append per file, and empty it; true when a
 * hurried teardown's mark now covers the attempt (it came meanwhile).
 */
static bool batch_write(cbb_job_ctx_t *j, batch_t *b)
{
	bool over = false;
	cbb_err_t e;

	cbb_err_clear(&e);
	if (cbb_sd_job_append(j->sd, j->job_id, b->own, b->n_own,
			      j->array_job_id, b->array, b->n_array, j->submit,
			      &over, &e) < 0)
		cbb_job_log(j, CBB_LOG_ERROR, "%s", e.msg);
	b->n_own = b->n_array = 0;
	return over;
}

/* A probe's or move-aside's record id names its part: "<part>:<id>". */
static void rec_id(const cbb_send_t *s, const char *tid, char *out,
		   size_t size)
{
	if (s->key.type == CBB_KEY_PROBE || s->key.type == CBB_KEY_ASIDE)
		snprintf(out, size, "%u:%s", s->key.part,
			 tid && tid[0] ? tid : "-");
	else
		snprintf(out, size, "%s", tid && tid[0] ? tid : "-");
}

/*
 * The teardown came while the requests were on their way: stop what
 * this call started for the job alone, by id (Query may not show it
 * yet), and forget the job's records.  An array's shared stage-in
 * serves the other tasks: one started stays; one not sent is marked
 * refused, so that they start it at once.
 */
static void undo(cbb_job_ctx_t *j, const cbb_decision_t *d,
		 const cbb_start_t *req, bool sent, batch_t *b)
{
	cbb_stop_t *stop = calloc(d->nsend ? d->nsend : 1, sizeof(*stop));
	size_t i, n = 0;

	for (i = 0; i < d->nsend; i++) {
		const cbb_send_t *s = &d->send[i];

		if (s->validate)
			continue; /* a probe moves nothing */
		if (s->array_file) {
			if (!sent)
				batch_add(j, b, true, s->key.type, 0,
					  s->key.index, CBB_REC_REFUSED, NULL);
		} else if (sent && req[i].ok && stop) {
			stop[n].id = req[i].id;
			stop[n].user = j->user;
			n++;
		}
	}
	(void)batch_write(j, b);
	if (n)
		(void)cbb_conduit_stop(j->g, stop, n);
	free(stop);
	cbb_sd_forget(j->sd, j->job_id);
	cbb_job_log(j, CBB_LOG_VERBOSE, "the job is over and its buffer was "
		    "torn down meanwhile: %zu transfer(s) stopped, none left "
		    "running", n);
}

/* Send the requests of one kind (starts, or probes) together. */
static void send_kind(cbb_job_ctx_t *j, const cbb_decision_t *d,
		      cbb_start_t *req, bool validate)
{
	cbb_start_t *batch = calloc(d->nsend ? d->nsend : 1, sizeof(*batch));
	size_t *which = calloc(d->nsend ? d->nsend : 1, sizeof(*which));
	size_t i, n = 0;

	if (!batch || !which) {
		for (i = 0; i < d->nsend; i++)
			if (d->send[i].validate == validate) {
				req[i].answer = CBB_ANSWER_RETRY;
				snprintf(req[i].message, sizeof(req[i].message),
					 "conduit_bb: out of memory");
			}
		free(batch);
		free(which);
		return;
	}
	for (i = 0; i < d->nsend; i++)
		if (d->send[i].validate == validate) {
			batch[n] = req[i];
			which[n++] = i;
		}
	if (n)
		cbb_conduit_start(j->g, batch, n, validate);
	for (i = 0; i < n; i++)
		req[which[i]] = batch[i];
	free(batch);
	free(which);
}

/*
 * A task that uses its array's shared stage-ins says so once, in the
 * array's file (its id) and its own (the array's id), with its uid.
 */
static void join(cbb_job_ctx_t *j, const cbb_facts_t *f, batch_t *b)
{
	char id[16];
	size_t i;
	bool in_array = false, in_own = false;

	snprintf(id, sizeof(id), "%u", j->job_id);
	for (i = 0; i < f->shared_recs.n; i++)
		in_array = in_array ||
			   (f->shared_recs.v[i].kind == CBB_REC_JOINED &&
			    !strcmp(f->shared_recs.v[i].id, id));
	for (i = 0; i < f->recs.n; i++)
		in_own = in_own || f->recs.v[i].kind == CBB_REC_JOINED;
	if (!in_array)
		batch_add(j, b, true, CBB_KEY_SHARED, 0, 0, CBB_REC_JOINED, id);
	if (!in_own) {
		snprintf(id, sizeof(id), "%u", j->array_job_id);
		batch_add(j, b, false, CBB_KEY_SHARED, 0, 0, CBB_REC_JOINED, id);
	}
}

/* The outage mark: set when the server would not take a start (the
 * grace runs from the first time), gone once a poll could start all. */
static void outage_mark(cbb_job_ctx_t *j, const cbb_facts_t *f,
			cbb_act_t *out)
{
	out->down_since = f->down_since;
	if (out->deferred && !f->down_since)
		out->down_since = (int64_t)cbb_down_since(j->sd, j->job_id);
	else if (!out->deferred && f->down_since && !f->starting)
		cbb_down_clear(j->sd, j->job_id);
}

void cbb_act(cbb_job_ctx_t *j, const cbb_facts_t *f, cbb_decision_t *d,
	     cbb_act_t *out)
{
	size_t i, room = d->nsend + d->nnotes + 1;
	char (*comment)[CBB_KEY_MAX] = NULL;
	cbb_start_t *req = NULL;
	batch_t b = { NULL, NULL, 0, 0 };
	char id[64];

	memset(out, 0, sizeof(*out));
	cbb_err_clear(&out->later);
	cbb_err_clear(&out->refused);
	for (i = 0; i < d->nlog; i++)
		cbb_job_log(j, d->log[i].level, "%s", d->log[i].msg);
	room += 2; /* and the joins */
	b.own = calloc(2 * room, sizeof(*b.own));
	req = calloc(room, sizeof(*req));
	comment = calloc(room, sizeof(*comment));
	if (!b.own || !req || !comment) {
		cbb_err(&out->refused, "conduit_bb: out of memory");
		out->oom = true;
		goto done;
	}
	b.array = b.own + room;
	for (i = 0; i < d->nnotes; i++)
		batch_add(j, &b, d->notes[i].array_file, d->notes[i].type,
			  d->notes[i].attempt, d->notes[i].index,
			  d->notes[i].kind, d->notes[i].id);
	for (i = 0; i < d->nsend; i++) {
		const cbb_send_t *s = &d->send[i];

		cbb_key_format(comment[i], sizeof(comment[i]), &s->key);
		req[i].user = j->user;
		req[i].action = s->action;
		req[i].sources = s->sources;
		req[i].nsources = s->nsources;
		req[i].destination = s->dest;
		req[i].comment = comment[i];
		rec_id(s, NULL, id, sizeof(id));
		batch_add(j, &b, s->array_file, s->key.type, s->key.attempt,
			  s->key.index, CBB_REC_UNSURE, id);
	}
	if (batch_write(j, &b) && d->nsend) {
		undo(j, d, req, false, &b);
		out->undone = true;
		goto done;
	}
	send_kind(j, d, req, false);
	send_kind(j, d, req, true);
	for (i = 0; i < d->nsend; i++) {
		const cbb_send_t *s = &d->send[i];
		const cbb_view_t *v = &d->v[s->view];

		if (req[i].ok) {
			rec_id(s, req[i].id, id, sizeof(id));
			batch_add(j, &b, s->array_file, s->key.type,
				  s->key.attempt, s->key.index, CBB_REC_STARTED,
				  id);
			if (!s->validate) {
				out->started++;
				out->retried += v->again;
			}
		} else if (req[i].answer == CBB_ANSWER_MAYBE) {
			/* it may exist: never sent twice (recorded above) */
			cbb_job_log(j, CBB_LOG_INFO, "line %u: %s not confirmed "
				    "(%s); waiting for it to show up", v->d->line,
				    s->validate ? "probe" : "start",
				    req[i].message);
			if (!s->validate) {
				out->started++;
				out->retried += v->again;
			}
		} else {
			/* nothing was started: a refusal, or try again */
			rec_id(s, NULL, id, sizeof(id));
			batch_add(j, &b, s->array_file, s->key.type,
				  s->key.attempt, s->key.index, CBB_REC_REFUSED,
				  id);
			if (req[i].answer == CBB_ANSWER_RETRY) {
				cbb_job_log(j, CBB_LOG_INFO, "line %u: %s not "
					    "started yet (%s); the next poll "
					    "starts it", v->d->line,
					    cbb_stage_word(f->stage),
					    req[i].message);
				if (out->deferred++ == 0)
					cbb_err(&out->later, "line %u: %s",
						v->d->line, req[i].message);
			} else if (!out->refused.msg[0]) {
				cbb_err(&out->refused, "line %u: %s", v->d->line,
					req[i].message);
			}
		}
	}
	if (d->join)
		join(j, f, &b);
	if (batch_write(j, &b) && out->started) {
		undo(j, d, req, true, &b);
		out->started = out->retried = 0;
		out->undone = true;
	}
	outage_mark(j, f, out);
done:
	/* for the hook's AuditLog record */
	j->started += (unsigned)out->started;
	j->retried += (unsigned)out->retried;
	free(b.own);
	free(req);
	free(comment);
}

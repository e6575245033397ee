/*
 * facts.c - gather: what decides a stage, read once (facts.h).  The
 * job's records and marks from StateDir, its array's shared records
 * when its stage-in shares them, and one Query for every transfer of the
 * job, of every attempt (an array task's with its array's shared
 * stage-ins), with those of an older job that had the same id dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "facts.h"
#include "pick.h"
#include "share.h"
#include "stage.h"

/* A transfer of the current attempt created this long before the
 * attempt was submitted belongs to an earlier job with the same id. */
#define CBB_CLOCK_SLACK_S 60

/*
 * One Query: every transfer of this job, of every attempt, and for an
 * array task its array's shared stage-ins and their probes (not the
 * array's own task's transfers, which share the array's id).
 */
static void query(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	char rx[2 * CBB_KEY_MAX + 128];
	size_t i, o = 0;

	cbb_err_clear(&f->query_err);
	if (cbb_share_query(j, f))
		return;
	if (!j->array_job_id) {
		cbb_key_job_regex(rx, sizeof(rx), j->cluster, j->job_id, -1);
		f->answer = cbb_conduit_query(j->g, j->user, rx, &f->have,
					      &f->query_err);
		return;
	}
	cbb_key_array_regex(rx, sizeof(rx), j->cluster, j->job_id,
			    j->array_job_id);
	f->answer = cbb_conduit_query(j->g, j->user, rx, &f->have,
				      &f->query_err);
	for (i = 0; i < f->have.n; i++) {
		const cbb_key_t *k;
		cbb_key_t tmp;
		bool mine;

		k = cbb_transfer_key(&f->have.v[i], &tmp);
		mine = k && (k->type == CBB_KEY_SHARED ?
			     k->job_id == j->array_job_id :
			     k->type == CBB_KEY_PROBE ?
			     k->job_id == j->job_id ||
			     (k->job_id == j->array_job_id && k->attempt == 0) :
			     k->job_id == j->job_id);
		if (mine)
			f->have.v[o++] = f->have.v[i];
		else
			cbb_transfer_clear(&f->have.v[i]);
	}
	f->have.n = o;
}

/*
 * Drop transfers of the current attempt that were created well before
 * the attempt was submitted: they belong to an earlier job that had the
 * same id (Slurm hands ids out again after its state is wiped or its
 * counter wraps).  Not for a requeued job's stage-out, whose attempt
 * was submitted before the submit time Slurm shows now.
 */
static void drop_foreign(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	size_t i, o = 0;

	if (!j->submit || f->attempt != j->restart || j->requeued)
		return;
	for (i = 0; i < f->have.n; i++) {
		const cbb_key_t *k;
		cbb_key_t tmp;
		cbb_transfer_t *x = &f->have.v[i];

		if (x->created && x->created < j->submit - CBB_CLOCK_SLACK_S &&
		    (k = cbb_transfer_key(x, &tmp)) && k->attempt == f->attempt &&
		    k->job_id == j->job_id) {
			cbb_job_log(j, CBB_LOG_DEBUG, "ignoring transfer %s: "
				    "created before this job was submitted (an "
				    "earlier job with the same id)", x->id);
			cbb_transfer_clear(x);
			continue;
		}
		f->have.v[o++] = *x;
	}
	f->have.n = o;
}

/* How long a hook waits for the array's lock. */
#define CBB_SHARED_WAIT_MS 2000

/*
 * The array's lock, when any directive is the array's shared stage-in;
 * the array's records are this array's from here on (its identity as a
 * task sees it: its first attempt's submit time, its uid).
 */
static void array_lock(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	cbb_array_ident_t a;
	size_t i;

	f->array_lock = -1;
	for (i = 0; i < f->plan->n && !f->shared[i]; i++)
		;
	if (i == f->plan->n)
		return;
	a.submit = j->restart ? 0 : j->submit;
	a.uid = j->uid; /* CBB_UID_UNKNOWN is UINT32_MAX, never a job's */
	f->array_lock = cbb_shared_lock(j->sd, j->array_job_id, &a,
					CBB_SHARED_WAIT_MS);
	f->busy = f->array_lock < 0;
}

/* Fresh names for move-asides: 8 hex digits each, unpredictable. */
static void tokens(cbb_facts_t *f)
{
	unsigned char raw[CBB_TOKENS * 4];
	size_t i, got = 0;
	ssize_t n;

	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, GRND_NONBLOCK);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(raw)) {
		/* no entropy yet: no name is chosen (a later hook does) */
		memset(f->tokens, 0, sizeof(f->tokens));
		return;
	}
	for (i = 0; i < CBB_TOKENS; i++)
		snprintf(f->tokens[i], sizeof(f->tokens[i]), "%02x%02x%02x%02x",
			 raw[4 * i], raw[4 * i + 1], raw[4 * i + 2],
			 raw[4 * i + 3]);
}

int cbb_facts_reload(cbb_job_ctx_t *j, cbb_facts_t *f, cbb_err_t *err)
{
	cbb_sd_pass_t st;

	cbb_recs_free(&f->recs);
	cbb_recs_free(&f->shared_recs);
	if (cbb_sd_job_read(j->sd, j->job_id, j->restart, j->submit,
			    f->stage == CBB_STAGE_IN ? j->array_job_id : 0, &st,
			    err) < 0)
		return -1;
	f->recs = st.recs;
	f->shared_recs = st.shared;
	f->down_since = st.down_since;
	f->over = st.over;
	f->now = (int64_t)time(NULL);
	return 0;
}

void cbb_facts_requery(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	cbb_transfers_free(&f->have);
	query(j, f);
	if (f->answer == CBB_ANSWER_OK)
		drop_foreign(j, f);
	f->now = (int64_t)time(NULL);
}

int cbb_facts_gather(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		     cbb_stage_t stage, bool starting, bool ask,
		     cbb_facts_t *f, cbb_err_t *err)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	f->plan = plan;
	f->stage = stage;
	f->type = cbb_stage_key(stage);
	f->attempt = cbb_attempt(j, stage);
	f->starting = f->resend = starting;
	f->best_effort = cbb_stage_best_effort(j, stage);
	f->job_id = j->job_id;
	f->array_job_id = j->array_job_id;
	f->uid = j->uid;
	f->restart = j->restart;
	f->submit = j->submit;
	memcpy(f->cluster, j->cluster, sizeof(f->cluster));
	f->visible_grace_s = j->cfg->start_visible_grace_s;
	f->down_grace_s = stage == CBB_STAGE_IN ? j->cfg->down_grace_s :
						  j->cfg->out_down_grace_s;
	f->grace_knob = stage == CBB_STAGE_IN ? "ServerDownGrace" :
						"StageOutDownGrace";
	f->keeps_names = j->cfg->mover == CBB_MOVER_RSYNC;
	f->account = j->account;
	f->answer = CBB_ANSWER_RETRY;
	f->shared = calloc(plan->n ? plan->n : 1, sizeof(*f->shared));
	if (!f->shared)
		return cbb_err(err, "conduit_bb: out of memory");
	for (i = 0; i < plan->n; i++)
		f->shared[i] = cbb_is_shared(j, &plan->v[i], stage);
	array_lock(j, f);
	if (f->busy)
		return 0;
	tokens(f);
	if (cbb_facts_reload(j, f, err) < 0) {
		cbb_facts_free(f);
		return -1;
	}
	if (ask)
		cbb_facts_requery(j, f);
	return 0;
}

void cbb_facts_free(cbb_facts_t *f)
{
	if (f->shared)
		cbb_lock_release(f->array_lock);
	free(f->shared);
	cbb_recs_free(&f->recs);
	cbb_recs_free(&f->shared_recs);
	cbb_transfers_free(&f->have);
	memset(f, 0, sizeof(*f));
}

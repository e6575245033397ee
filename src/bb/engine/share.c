/*
 * share.c - polls at the floor (facts.h, cbb_share_query): one Query per
 * user per moment answers every poll of that user's staging jobs.
 *
 * Slurm polls each staging job every PollInterval, each in a process of
 * its own, and a poll that talks to Conduit pays for TLS in a new
 * process (docs/performance.md).  So the poll that must ask asks once
 * for every job being polled now (each poll marks its job: .polled;
 * those marked within SHARE_POLLED_S), scoped to those jobs' keys (the
 * server is asked as the job's user: only that user's transfers come
 * back), and keeps the reply in StateDir (<cluster>.u<uid>.poll,
 * state/poll.c).  A poll of any of those jobs within PollShare seconds
 * decides from it and never loads libcurl or OpenSSL, unless the saved
 * reply cannot stand for what this job needs now:
 *   - it is missing, damaged, someone else's, too old (past PollShare)
 *     or from the future (a clock that went back);
 *   - it is another server's or another user's;
 *   - it does not cover this job, or was asked no later than the job's
 *     own latest start (a transfer it began is not in it yet), or by
 *     this very job's poll (a job polled again within the window: Slurm
 *     polls one job every PollInterval, so sharing is between jobs);
 *   - a transfer this job started is missing from it.
 * Then the poll asks the server itself, as it would without sharing,
 * and saves the new reply for the others.  Only polls share: data_in and
 * data_out (which start transfers) and teardown (which stops them) ask
 * the server as it is; array tasks do not share (their Query also covers
 * the array's shared stage-ins); PollShare=0 turns sharing off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "facts.h"
#include "share.h"

/* Jobs one shared Query covers at most (the rest ask alone). */
#define SHARE_JOBS_MAX 512
/* A job polled within this long is staging: the shared Query covers it
 * (Slurm polls each staging job every PollInterval, 15 s by default; a
 * longer PollInterval only makes its jobs ask alone). */
#define SHARE_POLLED_S 120

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void server_of(const cbb_config_t *cfg, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%u", cfg->server_host ? cfg->server_host : "",
		 cfg->server_port);
}

/* The saved reply is this server's and this user's, covers the job, and
 * was asked within the window (not in the future: a clock gone back). */
static bool fits(const cbb_share_t *s, const cbb_config_t *cfg,
		 const char *user, int64_t now)
{
	char server[sizeof(s->server)];

	server_of(cfg, server, sizeof(server));
	return !strcmp(s->server, server) && !strcmp(s->user, user) &&
	       s->covered && s->sent_ms <= now + 1000 &&
	       now - s->sent_ms <= (int64_t)cfg->poll_share_s * 1000;
}

/* The newest start among the job's records (0: none). */
static int64_t latest_start(const cbb_facts_t *f)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < f->recs.n; i++) {
		const cbb_rec_t *r = &f->recs.v[i];

		if ((r->kind == CBB_REC_STARTED || r->kind == CBB_REC_UNSURE) &&
		    r->made > t)
			t = r->made;
	}
	return t;
}

/* Keep of `all` the transfers of job j (every attempt: the comment
 * starts "SLURMJOB:<job>,CLUSTER:<cluster>,", as the job's own Query's
 * regex asks), freeing the rest. */
static void only_job(const char *cluster, uint32_t job_id,
		     cbb_transfers_t *all)
{
	char head[CBB_KEY_MAX], safe[CBB_CLUSTER_MAX];
	size_t i, o = 0, n;

	cbb_cluster_safe(safe, cluster);
	snprintf(head, sizeof(head), "SLURMJOB:%u,CLUSTER:%s,", job_id, safe);
	n = strlen(head);
	for (i = 0; i < all->n; i++) {
		cbb_transfer_t *x = &all->v[i];

		if (x->comment && !strncmp(x->comment, head, n))
			all->v[o++] = *x;
		else
			cbb_transfer_clear(x);
	}
	all->n = o;
}

/* Every transfer the job's records say it started is in `have`. */
static bool has_all(const cbb_facts_t *f, const cbb_transfers_t *have)
{
	size_t i, k;

	for (i = 0; i < f->recs.n; i++) {
		const cbb_rec_t *r = &f->recs.v[i];

		if (r->kind != CBB_REC_STARTED || !strcmp(r->id, "-"))
			continue;
		for (k = 0; k < have->n; k++)
			if (have->v[k].id && !strcmp(have->v[k].id, r->id))
				break;
		if (k == have->n)
			return false;
	}
	return true;
}

/* The saved reply, when it can stand for this job's Query now. */
static bool from_saved(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	int64_t now = now_ms();
	cbb_transfers_t have;
	cbb_share_t s;
	cbb_err_t err;
	bool ok;

	if (cbb_share_read(j->sd, j->uid, j->job_id, &s) < 0)
		return false;
	ok = fits(&s, j->cfg, j->user, now) && s.asker != j->job_id &&
	     s.sent_ms / 1000 > latest_start(f);
	cbb_err_clear(&err);
	if (ok && cbb_conduit_decode_query(s.reply, s.reply_len, &have,
					   &err) == 0) {
		only_job(j->cluster, j->job_id, &have);
		if (has_all(f, &have)) {
			f->have = have;
			f->answer = CBB_ANSWER_OK;
			cbb_share_free(&s);
			cbb_job_log(j, CBB_LOG_DEBUG, "poll: decided from the "
				    "shared reply of %lld ms ago",
				    (long long)(now - s.sent_ms));
			return true;
		}
		cbb_transfers_free(&have);
	}
	cbb_share_free(&s);
	return false;
}

/* The reply cut per job and saved for the other polls. */
static void save(cbb_job_ctx_t *j, cbb_share_t *s, const uint8_t *raw,
		 size_t raw_len)
{
	char safe[CBB_CLUSTER_MAX], **heads;
	cbb_err_t err;
	size_t k;

	s->parts = calloc(s->njobs, sizeof(*s->parts));
	s->part_len = calloc(s->njobs, sizeof(*s->part_len));
	heads = calloc(s->njobs, sizeof(*heads));
	cbb_err_clear(&err);
	cbb_cluster_safe(safe, j->cluster);
	for (k = 0; heads && k < s->njobs; k++) {
		heads[k] = malloc(CBB_KEY_MAX);
		if (!heads[k])
			break;
		snprintf(heads[k], CBB_KEY_MAX, "SLURMJOB:%u,CLUSTER:%s,",
			 s->jobs[k], safe);
	}
	if (!s->parts || !s->part_len || !heads || k < s->njobs ||
	    cbb_conduit_split_query(raw, raw_len, (const char *const *)heads,
				    s->njobs, s->parts, s->part_len, &err) < 0 ||
	    cbb_share_write(j->sd, j->uid, s) < 0)
		cbb_job_log(j, CBB_LOG_DEBUG, "poll: the shared reply was not "
			    "saved%s%s", err.msg[0] ? ": " : "", err.msg);
	for (k = 0; heads && k < s->njobs; k++)
		free(heads[k]);
	for (k = 0; s->parts && k < s->njobs; k++)
		free(s->parts[k]);
	free(heads);
	free(s->parts);
	free(s->part_len);
}

/* One Query for the jobs being polled (ids, n: the asker among them),
 * saved for the others. */
static void ask_for_all(cbb_job_ctx_t *j, cbb_facts_t *f, uint32_t *ids,
			size_t n)
{
	cbb_share_t s;
	uint8_t *raw = NULL;
	size_t len, raw_len = 0;
	char *rx;

	memset(&s, 0, sizeof(s));
	len = cbb_key_jobs_regex(NULL, 0, j->cluster, ids, n) + 1;
	rx = len ? malloc(len) : NULL;
	if (!rx) {
		f->answer = CBB_ANSWER_RETRY;
		cbb_err(&f->query_err, "conduit_bb: out of memory");
		return;
	}
	cbb_key_jobs_regex(rx, len, j->cluster, ids, n);
	s.sent_ms = now_ms();
	f->answer = cbb_conduit_query_raw(j->g, j->user, rx, &f->have, &raw,
					  &raw_len, &f->query_err);
	free(rx);
	if (f->answer == CBB_ANSWER_OK) {
		server_of(j->cfg, s.server, sizeof(s.server));
		snprintf(s.user, sizeof(s.user), "%s", j->user);
		s.jobs = ids;
		s.njobs = n;
		s.asker = j->job_id;
		save(j, &s, raw, raw_len);
		only_job(j->cluster, j->job_id, &f->have);
	}
	free(raw);
}

bool cbb_share_query(cbb_job_ctx_t *j, cbb_facts_t *f)
{
	uint32_t *ids;
	size_t n, i;
	bool shared;

	/* (a plan without directives: the teardown's look at what still
	 * runs, which must see the server as it is now) */
	if (!j->cfg->poll_share_s || j->array_job_id || !j->sd || !f->plan ||
	    !f->plan->n)
		return false;
	/* staging now (data_in and data_out too, so that the first polls
	 * of a stage are covered): the next asking poll covers this job
	 * (not after its teardown: a hurried one does not stop the stage
	 * hook Slurm already runs) */
	cbb_share_polled(j->sd, j->job_id, f->starting, j->submit);
	if (f->starting || !j->user[0])
		return false;
	cbb_err_clear(&f->query_err);
	if (from_saved(j, f))
		return true;
	ids = malloc(SHARE_JOBS_MAX * sizeof(*ids));
	if (!ids)
		return false;
	n = cbb_share_pollers(j->sd, ids, SHARE_JOBS_MAX - 1, SHARE_POLLED_S);
	for (i = 0; i < n && ids[i] != j->job_id; i++)
		;
	if (i == n)
		ids[n++] = j->job_id;
	/* the only job being polled: nobody to share with (its own next
	 * poll asks anew), so it asks alone, as without sharing */
	shared = n > 1;
	if (shared)
		ask_for_all(j, f, ids, n);
	free(ids);
	return shared;
}

bool cbb_share_status(cbb_statedir_t *sd, const cbb_config_t *cfg,
		      const char *cluster, uint32_t uid, const char *user,
		      uint32_t job_id, cbb_transfers_t *out)
{
	int64_t now = now_ms();
	int64_t changed = cbb_share_started_ms(sd, job_id);
	cbb_share_t s;
	cbb_err_t err;
	bool ok;

	out->v = NULL;
	out->n = 0;

	/* (a job without records, or whose records changed since, is
	 * asked about: an abort or a start the reply cannot show) */
	if (!cfg->poll_share_s || !changed ||
	    cbb_share_read(sd, uid, job_id, &s) < 0)
		return false;
	cbb_err_clear(&err);
	ok = fits(&s, cfg, user, now) && s.sent_ms > changed &&
	     cbb_conduit_decode_query(s.reply, s.reply_len, out, &err) == 0;
	cbb_share_free(&s);
	if (ok)
		only_job(cluster, job_id, out);
	return ok;
}

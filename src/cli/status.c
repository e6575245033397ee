/*
 * status.c - `conduit-bb status [--json] [--all] [--stuck DURATION]`:
 * every job StateDir knows whose stage is in progress or failed, with
 * its user, stage, attempt, directives done / total, bytes, rate and age,
 * and the jobs that are stuck (a transfer older than --stuck with nothing
 * moving) or waiting on an outage (a .down record) -- from one Query per
 * user, however many jobs each has: the comment regex of every job of
 * that user (cbb_key_jobs_regex), asked as the user the records name
 * (never with an empty user: Conduit would answer for every user, on a
 * path of its server that is unsafe under load).
 *
 * The records are read with the module's own statefile.c.  Run as root,
 * it becomes StateDir's owner first (SlurmUser), as the hooks run.
 * Then the jobs a slurmctld restart left where Slurm will not move them
 * (slurmlost.h), each with what `conduit-bb recover` does for it.
 * Exit status: 0, 1 when the Query failed (the rows then show StateDir's
 * side only), 2 on a usage or StateDir problem.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "buf.h"
#include "bytes.h"
#include "conduit.h"
#include "config.h"
#include "grpc.h"
#include "key.h"
#include "statedir.h"
#include "statefile.h"
#include "status_int.h"

static int parse_duration(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (v > 30UL * 86400)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The newest transfer the server has for a directive of one attempt. */
static const cbb_transfer_t *transfer_of(const cbb_transfers_t *t,
					 uint32_t job, int type,
					 uint32_t attempt, uint32_t index,
					 uint32_t *line)
{
	const cbb_transfer_t *best = NULL;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const cbb_key_t *k;
		cbb_key_t tmp;

		if (!(k = cbb_transfer_key(&t->v[i], &tmp)) || k->job_id != job ||
		    (int)k->type != type || k->attempt != attempt ||
		    k->index != index)
			continue;
		if (!best || t->v[i].created > best->created ||
		    (t->v[i].created == best->created &&
		     t->v[i].created_ns > best->created_ns)) {
			best = &t->v[i];
			*line = k->line;
		}
	}
	return best;
}

static const cbb_transfer_t *transfer_by_id(const cbb_transfers_t *t,
					    const char *id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].id, id))
			return &t->v[i];
	return NULL;
}

/* Add (or update) a directive from a start record. */
static int add_dir(job_t *j, const cbb_rec_t *r, int type)
{
	size_t i;
	dir_t *v;

	for (i = 0; i < j->nd; i++)
		if (j->d[i].index == r->index && j->d[i].type == type) {
			if (r->made >= j->d[i].made) {
				j->d[i].made = r->made;
				j->d[i].record = r->kind;
			}
			return 0;
		}
	v = realloc(j->d, (j->nd + 1) * sizeof(*v));
	if (!v)
		return -1;
	j->d = v;
	memset(&v[j->nd], 0, sizeof(*v));
	v[j->nd].index = r->index;
	v[j->nd].type = type;
	v[j->nd].made = r->made;
	v[j->nd].record = r->kind;
	j->nd++;
	return 0;
}

/* The array whose shared stage-ins a task joined (a J record), or 0. */
static uint32_t array_of(const cbb_recs_t *recs)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		if (recs->v[i].kind == CBB_REC_JOINED &&
		    recs->v[i].type == CBB_KEY_SHARED)
			return (uint32_t)strtoul(recs->v[i].id, NULL, 10);
	return 0;
}

/*
 * Which stage and attempt the job is in, from its records: its stage-out
 * once it has one (the newest attempt), else its stage-in.
 */
static int plan_job(job_t *j)
{
	cbb_sd_stage_t st;
	size_t i;

	cbb_sd_stage_of(&j->recs, &st);
	j->out = st.out;
	j->attempt = st.attempt;
	j->accounted = st.accounted;
	for (i = 0; i < j->recs.n; i++) {
		const cbb_rec_t *r = &j->recs.v[i];
		int type = j->out ? CBB_KEY_POST : CBB_KEY_PRE;

		if (!cbb_sd_is_start(r->kind) || r->type != type ||
		    r->attempt != j->attempt)
			continue;
		if (!j->since || r->made < j->since)
			j->since = r->made;
		if (add_dir(j, r, type) < 0)
			return -1;
	}
	/* a task's share of its array's stage-ins */
	for (i = 0; !j->out && i < j->shared.n; i++) {
		const cbb_rec_t *r = &j->shared.v[i];

		if (!cbb_sd_is_start(r->kind) || r->type != CBB_KEY_SHARED)
			continue;
		if (!j->since || r->made < j->since)
			j->since = r->made;
		if (add_dir(j, r, CBB_KEY_SHARED) < 0)
			return -1;
	}
	return 0;
}

/* The newest record of a directive, matched with the server's answer. */
static void judge(job_t *j, const cbb_transfers_t *t, bool have_t,
		  const opts_t *o, int64_t now)
{
	size_t i, k;

	for (i = 0; i < j->nd; i++) {
		dir_t *d = &j->d[i];
		uint32_t job = d->type == CBB_KEY_SHARED ? j->array_id :
			       j->sd->job_id;
		uint32_t attempt = d->type == CBB_KEY_SHARED ? 0 : j->attempt;
		const cbb_rec_t *newest = NULL;
		const cbb_recs_t *rs = d->type == CBB_KEY_SHARED ? &j->shared :
				       &j->recs;

		for (k = 0; k < rs->n; k++)
			if (cbb_sd_is_start(rs->v[k].kind) && rs->v[k].type == d->type &&
			    rs->v[k].index == d->index &&
			    (d->type == CBB_KEY_SHARED ||
			     rs->v[k].attempt == attempt) &&
			    (!newest || rs->v[k].made >= newest->made))
				newest = &rs->v[k];
		d->x = transfer_of(t, job, d->type, attempt, d->index, &d->line);
		if (newest && newest->kind == CBB_REC_STARTED) {
			const cbb_transfer_t *byid = transfer_by_id(t, newest->id);

			if (byid)
				d->x = byid;
		}
		if (!have_t)
			d->state = D_WAITING;
		else if (d->x && cbb_transfer_succeeded(d->x))
			d->state = D_DONE;
		else if (d->x && cbb_transfer_failed(d->x))
			d->state = D_FAILED;
		else if (d->x)
			d->state = D_RUNNING;
		else if (d->record == CBB_REC_REFUSED)
			d->state = D_REFUSED;
		else if (d->record == CBB_REC_LOST)
			d->state = D_LOST;
		else
			d->state = D_WAITING; /* started, not shown yet */
		if (d->x) {
			if (!j->user)
				j->user = d->x->user;
			j->bytes += d->x->bytes;
			if (d->state == D_RUNNING)
				j->rate += d->x->rate;
		}
		if (d->state == D_FAILED)
			j->failed = true;
		if (d->state == D_RUNNING && d->x->rate == 0) {
			int64_t from = d->x->started ? d->x->started :
				       d->x->created;
			if (from && now - from >= (int64_t)o->stuck_s) {
				j->stuck = true;
				if (now - from > j->stuck_for)
					j->stuck_for = now - from;
			}
		}
		if (d->state == D_WAITING && have_t &&
		    now - d->made >= (int64_t)o->stuck_s) {
			j->stuck = true;
			if (now - d->made > j->stuck_for)
				j->stuck_for = now - d->made;
		}
	}
}

/* The job's user as its records name it, or CBB_UID_UNKNOWN. */
static uint32_t uid_of(const job_t *j)
{
	uint32_t uid = CBB_UID_UNKNOWN;
	size_t i;

	for (i = 0; i < j->recs.n; i++)
		if (j->recs.v[i].has_uid)
			uid = j->recs.v[i].uid;
	return uid;
}

/*
 * One Query per user: the regex of every job of that user, per cluster,
 * joined by '|', asked as that user, on one connection.  Never a Query
 * without a user (conduit.h).  A job whose records name no user (lines
 * an old release wrote) is not asked about.  Appends to `out`.
 */
static int query_user(cbb_grpc_t *g, uint32_t uid, job_t *jobs, size_t n,
		      cbb_transfers_t *out, cbb_err_t *err)
{
	cbb_transfers_t got = { NULL, 0 };
	cbb_transfer_t *v;
	cbb_buf_t rx;
	uint32_t *ids;
	size_t i, k, m;
	char user[16];
	cbb_answer_t answer;

	ids = calloc(2 * n + 1, sizeof(*ids));
	if (!ids)
		return cbb_err(err, "out of memory");
	cbb_buf_init(&rx, (size_t)64 << 20);
	for (i = 0; i < n; i = k) {
		size_t need;
		char *p;

		for (k = i, m = 0; k < n && !strcmp(jobs[k].sd->cluster,
						   jobs[i].sd->cluster); k++) {
			if (uid_of(&jobs[k]) != uid)
				continue;
			ids[m++] = jobs[k].sd->job_id;
			if (jobs[k].array_id && jobs[k].array_id != jobs[k].sd->job_id)
				ids[m++] = jobs[k].array_id;
		}
		if (!m)
			continue;
		need = cbb_key_jobs_regex(NULL, 0, jobs[i].sd->cluster, ids, m);
		if ((rx.len && cbb_buf_addc(&rx, '|') < 0) ||
		    cbb_buf_reserve(&rx, need + 1) < 0) {
			free(ids);
			cbb_buf_free(&rx);
			return cbb_err(err, "out of memory");
		}
		p = rx.data + rx.len;
		cbb_key_jobs_regex(p, need + 1, jobs[i].sd->cluster, ids, m);
		rx.len += need;
	}
	free(ids);
	snprintf(user, sizeof(user), "%lu", (unsigned long)uid);
	answer = cbb_conduit_query(g, user, rx.data, &got, err);
	cbb_buf_free(&rx);
	if (answer != CBB_ANSWER_OK)
		return -1;
	v = realloc(out->v, (out->n + got.n + 1) * sizeof(*v));
	if (!v) {
		cbb_transfers_free(&got);
		return cbb_err(err, "out of memory");
	}
	out->v = v;
	memcpy(out->v + out->n, got.v, got.n * sizeof(*v));
	out->n += got.n;
	free(got.v);
	return 0;
}

/*
 * The jobs whose stage-out plan was never seen to end, asked about with
 * one squeue (cbb_sd_plans): those Slurm dropped (ended for good, or in
 * STAGE_OUT with no stage-out hook for ten minutes) are shown so; the
 * module's sweeps finish them (src/bb/engine/lost.c).
 */
#define DROPPED_ASK 256
static void find_dropped(const cbb_config_t *cfg, cbb_sd_list_t *sd,
			 const cbb_sl_list_t *lost, job_t *jobs)
{
	cbb_sd_plan_t p[DROPPED_ASK];
	size_t k, i;
	bool answered;

	k = cbb_sd_plans(cfg, sd, NULL, 0, false, lost, p, DROPPED_ASK,
			 &answered);
	for (i = 0; answered && i < k; i++) {
		job_t *j = &jobs[p[i].job - sd->v];

		j->dropped = p[i].dropped;
		snprintf(j->slurm_state, sizeof(j->slurm_state), "%s",
			 p[i].f.state);
	}
}

/* Every user's Query, one connection for all. */
static int query_all(const cbb_config_t *cfg, job_t *jobs, size_t n,
		     cbb_transfers_t *out, cbb_err_t *err)
{
	uint32_t *uids;
	size_t i, k, nu = 0;
	cbb_grpc_t g;
	int rc = 0;

	uids = calloc(n + 1, sizeof(*uids));
	if (!uids)
		return cbb_err(err, "out of memory");
	for (i = 0; i < n; i++) {
		uint32_t u = uid_of(&jobs[i]);

		for (k = 0; k < nu && uids[k] != u; k++)
			;
		if (k == nu && u != CBB_UID_UNKNOWN && u != 0)
			uids[nu++] = u;
	}
	cbb_err_clear(err);
	if (nu && cbb_grpc_open(&g, cfg, 0, err) < 0) {
		cbb_grpc_close(&g);
		free(uids);
		return -1;
	}
	for (i = 0; i < nu && rc == 0; i++)
		rc = query_user(&g, uids[i], jobs, n, out, err);
	if (nu)
		cbb_grpc_close(&g);
	free(uids);
	return rc;
}

static void status_usage(FILE *f)
{
	fprintf(f, "usage: conduit-bb status [--json] [--all] [--stuck DURATION] "
		"[--config FILE]\n");
}

int cbb_cmd_status(int argc, char **argv)
{
	opts_t o = { false, false, DEFAULT_STUCK_S, NULL };
	static cbb_sl_list_t lost;
	cbb_transfers_t t = { NULL, 0 };
	cbb_sd_list_t sd;
	cbb_config_t cfg;
	cbb_err_t err, qerr;
	job_t *jobs;
	int64_t now;
	size_t i;
	bool have_t = true;
	int rc = 0;

	for (i = 2; i < (size_t)argc; i++) {
		const char *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (!strcmp(argv[i], "--all")) {
			o.all = true;
		} else if (!strcmp(argv[i], "--stuck") && v &&
			   parse_duration(v, &o.stuck_s) == 0) {
			i++;
		} else if (!strcmp(argv[i], "--config") && v) {
			o.config = v;
			i++;
		} else {
			status_usage(stderr);
			return 2;
		}
	}
	if (cbb_admin_statedir(o.config, &cfg, &sd))
		return 2;
	jobs = calloc(sd.n + 1, sizeof(*jobs));
	if (!jobs) {
		fprintf(stderr, "conduit-bb: out of memory\n");
		cbb_sd_free(&sd);
		cbb_config_free(&cfg);
		return 2;
	}
	for (i = 0; i < sd.n; i++) {
		cbb_statedir_t dir;

		jobs[i].sd = &sd.v[i];
		cbb_err_clear(&err);
		cbb_statedir_init(&dir, &cfg, sd.v[i].cluster);
		/* every record, whatever restart and submit time it has */
		if ((sd.v[i].files & CBB_SD_STARTED) &&
		    cbb_recs_load(&dir, sd.v[i].job_id, UINT32_MAX, 0,
				  &jobs[i].recs, &err) < 0) {
			fprintf(stderr, "conduit-bb: %s\n", err.msg);
			cbb_statedir_close(&dir);
			rc = 2;
			break;
		}
		jobs[i].array_id = array_of(&jobs[i].recs);
		if (jobs[i].array_id)
			(void)cbb_shared_load(&dir, jobs[i].array_id,
					      &jobs[i].shared, &err);
		cbb_statedir_close(&dir);
		if (plan_job(&jobs[i]) < 0) {
			fprintf(stderr, "conduit-bb: out of memory\n");
			rc = 2;
			break;
		}
	}
	if (rc == 0) {
		cbb_slurm_lost(&cfg, -1, NULL, 0, &lost);
		cbb_sd_mark_done(&sd, &lost);
		find_dropped(&cfg, &sd, &lost, jobs);
	}
	cbb_err_clear(&qerr);
	if (rc == 0 && sd.n &&
	    query_all(&cfg, jobs, sd.n, &t, &qerr) < 0) {
		have_t = false;
		rc = 1;
		if (!o.json)
			fprintf(stderr, "conduit-bb: a Query for %zu job%s failed: "
				"%s (StateDir's side only below)\n", sd.n,
				sd.n == 1 ? "" : "s", qerr.msg);
	}
	now = (int64_t)time(NULL);
	for (i = 0; rc != 2 && i < sd.n; i++)
		judge(&jobs[i], &t, have_t, &o, now);
	if (rc != 2) {
		if (o.json)
			cbb_status_print_json(jobs, sd.n, &o, have_t, t.n,
				   have_t ? NULL : qerr.msg, &lost, now);
		else
			cbb_status_print_text(jobs, sd.n, &o, have_t, sd.n > 0,
					      &lost, now);
	}
	for (i = 0; i < sd.n; i++) {
		cbb_recs_free(&jobs[i].recs);
		cbb_recs_free(&jobs[i].shared);
		free(jobs[i].d);
	}
	free(jobs);
	cbb_transfers_free(&t);
	cbb_sd_free(&sd);
	cbb_config_free(&cfg);
	return rc;
}

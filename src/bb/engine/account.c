/* account.c - see account.h */
#include "account.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "bytes.h"
#include "directive_json.h"
#include "key.h"
#include "run.h"

#define CBB_SCONTROL_TIMEOUT_MS 5000
/* Slurm keeps comments up to 1024 bytes in a job's AdminComment line */
#define CBB_ADMIN_COMMENT_MAX 1024

/* What accounting has to say, said at its end (log lines, never stdout). */
typedef struct {
	struct {
		int level;
		bool whole;      /* a line as it is (no "job N: ") */
		char msg[4700];
	} v[3];
	size_t n;
} said_t;

static void say_later(said_t *s, int level, bool whole, const char *msg)
{
	if (s->n < sizeof(s->v) / sizeof(s->v[0])) {
		s->v[s->n].level = level;
		s->v[s->n].whole = whole;
		snprintf(s->v[s->n].msg, sizeof(s->v[0].msg), "%s", msg);
		s->n++;
	}
}

typedef struct {
	unsigned n, failed, skipped, kept;
	uint64_t bytes;
	int64_t first, last; /* created of the first, end of the last */
} tally_t;

static void tally(tally_t *t, const cbb_directive_t *d,
		  const cbb_transfer_t *x)
{
	if (d->skip) {
		t->skipped++;
		return;
	}
	if (!x) {
		t->kept++; /* staged in an earlier attempt */
		return;
	}
	t->n++;
	t->bytes += x->bytes;
	t->failed += cbb_transfer_failed(x);
	if (x->created && (!t->first || x->created < t->first))
		t->first = x->created;
	if (x->ended > t->last)
		t->last = x->ended;
}

static void say(char *buf, size_t size, const char *dir, const tally_t *t)
{
	char bytes[32];
	size_t l = strlen(buf);

	cbb_human_bytes(bytes, sizeof(bytes), t->bytes, "");
	snprintf(buf + l, size - l, "%s%s %u transfer%s %s %lld s", l ? "; " : "",
		 dir, t->n, t->n == 1 ? "" : "s", bytes,
		 (long long)(t->last > t->first && t->first ? t->last - t->first : 0));
	l = strlen(buf);
	if (t->kept)
		snprintf(buf + l, size - l, " (%u kept)", t->kept);
	l = strlen(buf);
	if (t->skipped)
		snprintf(buf + l, size - l, " (%u skipped)", t->skipped);
}

/* The transfer the decision found standing for directive d (NULL: kept
 * from an earlier attempt, or skipped). */
static const cbb_transfer_t *x_of(const cbb_decision_t *dec,
				  const cbb_directive_t *d)
{
	size_t i;

	for (i = 0; i < dec->n; i++)
		if (dec->v[i].d == d)
			return dec->v[i].need == N_KEPT ? NULL : dec->v[i].x;
	return NULL;
}

void cbb_account_summary(const cbb_facts_t *f, const cbb_decision_t *dec,
			 char *buf, size_t size)
{
	const cbb_plan_t *plan = f->plan;
	char body[512] = "";
	tally_t t;
	size_t i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];

		if (d->stage == f->stage)
			tally(&t, d, d->skip ? NULL : x_of(dec, d));
	}
	say(body, sizeof(body), f->stage == CBB_STAGE_IN ? "in" : "out", &t);
	snprintf(buf, size, "conduit attempt %u: %s; %u failed", f->attempt,
		 body, t.failed);
}

/*
 * The job's AdminComment as Slurm holds it now, from `scontrol show job
 * ID`: the line "   AdminComment=<text>" (Slurm prints it after WorkDir=,
 * and only when the job has one).  1 with *comment set (NULL: none; free
 * it), 0 when scontrol gave no job record (then the caller keeps the one
 * of job_info).
 */
static int comment_now(cbb_job_ctx_t *j, const char *id, char **comment)
{
	char *argv[5], prog[512], show[] = "show", job[] = "job", idv[32];
	static const char key[] = "\n   AdminComment=";
	cbb_buf_t out, err;
	const char *p, *e, *nn;
	int status = -1, rc = 0;

	*comment = NULL;
	snprintf(prog, sizeof(prog), "%s", cbb_conf_scontrol(j->cfg));
	snprintf(idv, sizeof(idv), "%s", id);
	argv[0] = prog;
	argv[1] = show;
	argv[2] = job;
	argv[3] = idv;
	argv[4] = NULL;
	cbb_buf_init(&out, 64 * 1024);
	cbb_buf_init(&err, 4096);
	if (cbb_run(argv, CBB_SCONTROL_TIMEOUT_MS, &out, &err, &status) == 0 &&
	    status == 0 && out.data && !strncmp(out.data, "JobId=", 6)) {
		rc = 1;
		p = strstr(out.data, key);
		if (p) {
			p += sizeof(key) - 1;
			/* to the next field's line ("\n   ") or the record's end */
			e = strstr(p, "\n   ");
			nn = strstr(p, "\n\n");
			if (!e || (nn && nn < e))
				e = nn;
			if (!e)
				e = p + strlen(p);
			while (e > p && e[-1] == '\n')
				e--;
			*comment = strndup(p, (size_t)(e - p));
			if (!*comment)
				rc = 0;
		}
	}
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	return rc;
}

/*
 * Append the summary to AdminComment, unless it is there already.  The
 * comment is read again from Slurm just before the update: job_info's
 * is as old as the hook call, and an operator's edit since must not be
 * lost.  (What is edited between that read and the update, a moment
 * later, still is: Slurm has no append; docs/admin.md says so.)
 */
static void admin_comment(cbb_job_ctx_t *j, const char *summary,
			  said_t *said)
{
	char id[32], jobid[48], *argv[5], prog[512], upd[] = "update",
		msg[512], *now;
	const char *old = j->admin_comment ? j->admin_comment : "";
	cbb_buf_t arg, out, err;
	int status = -1;

	/* an array's own id names every task: name the task */
	if (j->array_job_id && j->array_task_id != CBB_NO_VAL)
		snprintf(id, sizeof(id), "%u_%u", j->array_job_id,
			 j->array_task_id);
	else
		snprintf(id, sizeof(id), "%u", j->job_id);
	if (comment_now(j, id, &now))
		old = now ? now : "";
	if (strstr(old, summary))
		goto out;
	if (strlen(old) + strlen(summary) + 2 > CBB_ADMIN_COMMENT_MAX) {
		say_later(said, CBB_LOG_INFO, false, "AdminComment is full; "
			  "staging summary not added");
		goto out;
	}
	cbb_buf_init(&arg, 0);
	if (cbb_buf_printf(&arg, "AdminComment=%s%s%s", old,
			   old[0] ? "; " : "", summary) < 0) {
		cbb_buf_free(&arg);
		goto out;
	}
	snprintf(prog, sizeof(prog), "%s", cbb_conf_scontrol(j->cfg));
	snprintf(jobid, sizeof(jobid), "JobId=%s", id);
	argv[0] = prog;
	argv[1] = upd;
	argv[2] = jobid;
	argv[3] = arg.data;
	argv[4] = NULL;
	cbb_buf_init(&out, 4096);
	cbb_buf_init(&err, 4096);
	if (cbb_run(argv, CBB_SCONTROL_TIMEOUT_MS, &out, &err, &status) < 0 ||
	    status != 0) {
		snprintf(msg, sizeof(msg), "could not add the staging summary "
			 "to AdminComment (scontrol: %.200s)",
			 err.data && err.len ? err.data : "no answer");
		cbb_one_line(msg);
		say_later(said, CBB_LOG_INFO, false, msg);
	}
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	cbb_buf_free(&arg);
out:
	free(now);
}

/* One audit record: what was asked and what became of it. */
static json_t *audit_line(const cbb_job_ctx_t *j, const cbb_directive_t *d,
			  const cbb_transfer_t *x, uint32_t attempt, int64_t now)
{
	json_t *o = json_object();
	const cbb_key_t *k;
	cbb_key_t key;

	if (!o)
		return NULL;
	json_object_set_new(o, "time", json_integer(now));
	json_object_set_new(o, "job", json_integer(j->job_id));
	if (j->array_job_id) {
		json_object_set_new(o, "array_job", json_integer(j->array_job_id));
		json_object_set_new(o, "array_task",
				    json_integer(j->array_task_id));
	}
	json_object_set_new(o, "user", json_string(j->user));
	json_object_set_new(o, "cluster", json_string(j->cluster));
	json_object_set_new(o, "attempt", json_integer(attempt));
	json_object_set_new(o, "direction", json_string(
		d->stage == CBB_STAGE_IN ? "in" : "out"));
	if (j->finished_by) /* finished after Slurm dropped it (lost.c) */
		json_object_set_new(o, "finished_by",
				    json_string(j->finished_by));
	if (cbb_directive_json_into(o, d, 0) < 0) {
		json_decref(o);
		return NULL;
	}
	if (d->skip) {
		json_object_set_new(o, "state", json_string("SKIPPED"));
		json_object_set_new(o, "when", json_string(cbb_when_name(d->when)));
		return o;
	}
	if (!x) {
		json_object_set_new(o, "state", json_string("KEPT"));
		return o;
	}
	json_object_set_new(o, "transfer_id", json_string(x->id));
	json_object_set_new(o, "shared", json_boolean(
		(k = cbb_transfer_key(x, &key)) && k->type == CBB_KEY_SHARED));
	json_object_set_new(o, "bytes", json_integer((json_int_t)x->bytes));
	json_object_set_new(o, "files", json_integer(x->files));
	json_object_set_new(o, "seconds", json_integer(
		x->ended > x->created && x->created ? x->ended - x->created : 0));
	json_object_set_new(o, "state", json_string(cbb_state_name(x->state)));
	json_object_set_new(o, "error", json_string(cbb_error_name(x->error)));
	json_object_set_new(o, "error_message",
			    json_string(x->error_message ? x->error_message : ""));
	return o;
}

static void audit(cbb_job_ctx_t *j, const cbb_facts_t *f,
		  const cbb_decision_t *dec, said_t *said)
{
	const cbb_plan_t *plan = f->plan;
	int64_t now = (int64_t)time(NULL);
	cbb_buf_t lines;
	char msg[4600], why[4400];
	size_t i;
	int fd;

	/* once per stage end; an unsafe file is said once, and skipped */
	fd = cbb_audit_open(j->cfg->audit_log, why, sizeof(why));
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "job %u: cannot write AuditLog %s: "
			 "%s; no audit line written", j->job_id,
			 j->cfg->audit_log, why);
		say_later(said, CBB_LOG_ERROR, true, msg);
		return;
	}
	cbb_buf_init(&lines, (size_t)4 << 20);
	for (i = 0; i < plan->n; i++) {
		const cbb_directive_t *d = &plan->v[i];
		json_t *o;
		char *s;

		if (d->stage != f->stage)
			continue;
		o = audit_line(j, d, d->skip ? NULL : x_of(dec, d), f->attempt,
			       now);
		s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		json_decref(o);
		if (s) {
			(void)cbb_buf_adds(&lines, s);
			(void)cbb_buf_addc(&lines, '\n');
		}
		free(s);
	}
	if (lines.len && write(fd, lines.data, lines.len) != (ssize_t)lines.len) {
		snprintf(msg, sizeof(msg), "job %u: cannot write AuditLog %s: %s",
			 j->job_id, j->cfg->audit_log, strerror(errno));
		say_later(said, CBB_LOG_ERROR, true, msg);
	}
	close(fd);
	cbb_buf_free(&lines);
}

void cbb_account(cbb_job_ctx_t *j, const cbb_facts_t *f,
		 const cbb_decision_t *dec)
{
	char summary[600];
	said_t said;
	size_t i;

	said.n = 0;
	cbb_account_summary(f, dec, summary, sizeof(summary));
	/* Slurm refuses to update a job that has finished: only a stage-in
	 * summary can go on the job record */
	if (f->stage == CBB_STAGE_IN && j->cfg->admin_comment)
		admin_comment(j, summary, &said);
	if (j->cfg->audit_log)
		audit(j, f, dec, &said);
	for (i = 0; i < said.n; i++)
		if (said.v[i].whole)
			cbb_job_note(j, said.v[i].level, said.v[i].msg);
		else
			cbb_job_log(j, said.v[i].level, "%s", said.v[i].msg);
	cbb_job_log(j, CBB_LOG_INFO, "%s", summary);
}

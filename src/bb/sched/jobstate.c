/* jobstate.c - see jobstate.h */
#include "jobstate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "run.h"

/* squeue's output for a 10,000-task array is ~400 KiB */
#define OUT_MAX ((size_t)8 << 20)
#define ERR_MAX ((size_t)4096)

cbb_jobstate_t cbb_job_state_classify(const char *w)
{
	static const char *const alive[] = {
		"PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED",
		"REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "RESV_DEL_HOLD",
		"SIGNALING", "SPECIAL_EXIT", "STOPPED", NULL,
	};
	static const char *const over[] = {
		"CANCELLED", "COMPLETED", "COMPLETING", "FAILED", "TIMEOUT",
		"NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
		"OUT_OF_MEMORY", "REVOKED", "STAGE_OUT", NULL,
	};
	int i;

	for (i = 0; alive[i]; i++)
		if (!strcmp(w, alive[i]))
			return CBB_JOB_ALIVE;
	for (i = 0; over[i]; i++)
		if (!strcmp(w, over[i]))
			return CBB_JOB_OVER;
	return CBB_JOB_UNKNOWN;
}

bool cbb_job_state_final(const char *state)
{
	static const char *const ended[] = {
		"CANCELLED", "COMPLETED", "FAILED", "TIMEOUT", "NODE_FAIL",
		"PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", NULL,
	};
	int i;

	for (i = 0; ended[i]; i++)
		if (!strcmp(state, ended[i]))
			return true;
	return false;
}

bool cbb_job_ended_for_good(const cbb_job_facts_t *f)
{
	return f->cls == CBB_JOB_GONE || cbb_job_state_final(f->state);
}

/* One "A F K T" row of squeue's answer. */
typedef struct {
	uint32_t job_id;       /* %A */
	uint32_t array_job_id; /* %F */
	bool task;             /* %K is a task number */
	char state[32];        /* %T */
} sq_row_t;

/* Read one row; false when the line is not one. */
static bool row(const char *line, size_t len, sq_row_t *r)
{
	char buf[160], k[32], t[40];
	unsigned long ua, uf;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%lu %lu %31s %39s", &ua, &uf, k, t) != 4 ||
	    ua > 0xffffffffUL || uf > 0xffffffffUL ||
	    strlen(t) >= sizeof(r->state))
		return false;
	r->job_id = (uint32_t)ua;
	r->array_job_id = (uint32_t)uf;
	r->task = k[0] >= '0' && k[0] <= '9';
	strcpy(r->state, t);
	return true;
}

typedef void (*sq_visit_fn)(void *ud, const sq_row_t *r);

/*
 * The one reader of squeue's answer (stdout, exit status, stderr): hands
 * every row to `visit`, then says what the answer as a whole is: 1
 * squeue answered (exit 0), 0 Slurm has forgotten the job (a failure
 * whose stderr, never the output, says "Invalid job id", with no row),
 * -1 no answer.
 */
static int sq_read(const char *out, int status, const char *errtext,
		   sq_visit_fn visit, void *ud)
{
	const char *p = out, *nl;
	bool any = false;

	for (; *p; p = nl ? nl + 1 : p + strlen(p)) {
		sq_row_t r;

		nl = strchr(p, '\n');
		if (!row(p, nl ? (size_t)(nl - p) : strlen(p), &r))
			continue;
		any = true;
		visit(ud, &r);
	}
	if (status == 0)
		return 1;
	return !any && strstr(errtext, "Invalid job id") ? 0 : -1;
}

/*
 * Run squeue for `id` and read its answer with sq_read; -1 when it could
 * not be run, timed out, died or said too much (there is no exit status
 * then to read).
 */
static int sq_ask_list(const char *squeue, const char *ids, unsigned timeout_ms,
		       sq_visit_fn visit, void *ud);

static int sq_ask(const char *squeue, uint32_t id, unsigned timeout_ms,
		  sq_visit_fn visit, void *ud)
{
	char ids[16];

	snprintf(ids, sizeof(ids), "%u", id);
	return sq_ask_list(squeue, ids, timeout_ms, visit, ud);
}

/* The same for "ID" or "ID,ID,...". */
static int sq_ask_list(const char *squeue, const char *ids, unsigned timeout_ms,
		       sq_visit_fn visit, void *ud)
{
	char prog[512], fmt[] = "%A %F %K %T", *list;
	char a0[] = "-h", a1[] = "-t", a2[] = "all", a3[] = "-j", a5[] = "-o";
	char *argv[] = { prog, a0, a1, a2, a3, NULL, a5, fmt, NULL };
	cbb_buf_t out, err;
	int status, rc = -1;

	list = strdup(ids);
	if (!list)
		return -1;
	argv[5] = list;
	snprintf(prog, sizeof(prog), "%s", squeue);
	cbb_buf_init(&out, OUT_MAX);
	cbb_buf_init(&err, ERR_MAX);
	if (cbb_run(argv, timeout_ms, &out, &err, &status) == 0)
		rc = sq_read(out.data ? out.data : "", status,
			     err.data ? err.data : "", visit, ud);
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	free(list);
	return rc;
}

/* cbb_job_state: the job's own row, picked by its id */
typedef struct {
	uint32_t job_id;
	cbb_job_facts_t f;
} one_job_t;

static void visit_one(void *ud, const sq_row_t *r)
{
	one_job_t *o = ud;

	if (r->job_id != o->job_id)
		return;
	o->f.cls = cbb_job_state_classify(r->state);
	snprintf(o->f.state, sizeof(o->f.state), "%s", r->state);
	o->f.array_job_id = r->array_job_id;
	o->f.array_task = r->task;
}

static void one_init(one_job_t *o, uint32_t job_id)
{
	memset(o, 0, sizeof(*o));
	o->job_id = job_id;
	o->f.cls = CBB_JOB_UNKNOWN;
}

static cbb_jobstate_t one_done(one_job_t *o, int answer,
			       cbb_job_facts_t *facts)
{
	if (answer == 0)
		o->f.cls = CBB_JOB_GONE;
	else if (answer < 0)
		o->f.cls = CBB_JOB_UNKNOWN;
	if (facts)
		*facts = o->f;
	return o->f.cls;
}

cbb_jobstate_t cbb_job_state_parse(const char *out, int status,
				   const char *errtext, uint32_t job_id,
				   cbb_job_facts_t *facts)
{
	one_job_t o;

	one_init(&o, job_id);
	return one_done(&o, sq_read(out, status, errtext, visit_one, &o),
			facts);
}

cbb_jobstate_t cbb_job_state(const char *squeue, uint32_t job_id,
			     unsigned timeout_ms, cbb_job_facts_t *facts)
{
	one_job_t o;

	one_init(&o, job_id);
	return one_done(&o, sq_ask(squeue, job_id, timeout_ms, visit_one, &o),
			facts);
}

/* cbb_any_alive: is one of the tasks asked about not over? */
typedef struct {
	const uint32_t *ids;
	size_t n;
	bool alive;
} some_tasks_t;

static void visit_some(void *ud, const sq_row_t *r)
{
	some_tasks_t *s = ud;
	size_t k;

	for (k = 0; k < s->n && !s->alive; k++)
		if (s->ids[k] == r->job_id &&
		    cbb_job_state_classify(r->state) != CBB_JOB_OVER)
			s->alive = true; /* alive, or a state not known */
}

int cbb_any_alive(const char *squeue, uint32_t array_job_id,
		  const uint32_t *ids, size_t n, unsigned timeout_ms)
{
	some_tasks_t s = { ids, n, false };
	int answer;

	if (n == 0)
		return 0;
	answer = sq_ask(squeue, array_job_id, timeout_ms, visit_some, &s);
	if (answer < 0)
		return -1;
	/* a task squeue does not list, or Slurm forgot the whole array */
	return answer > 0 && s.alive;
}

/* cbb_jobs_state: each job's own row */
typedef struct {
	const uint32_t *ids;
	size_t n;
	cbb_job_facts_t *out;
} many_jobs_t;

static void visit_many(void *ud, const sq_row_t *r)
{
	many_jobs_t *m = ud;
	size_t k;

	for (k = 0; k < m->n; k++)
		if (m->ids[k] == r->job_id) {
			m->out[k].cls = cbb_job_state_classify(r->state);
			snprintf(m->out[k].state, sizeof(m->out[k].state), "%s",
				 r->state);
			m->out[k].array_job_id = r->array_job_id;
			m->out[k].array_task = r->task;
		}
}

int cbb_jobs_state(const char *squeue, const uint32_t *ids, size_t n,
		   unsigned timeout_ms, cbb_job_facts_t *out)
{
	many_jobs_t m = { ids, n, out };
	char *list;
	size_t k, len = 0;
	int answer;

	for (k = 0; k < n; k++) {
		memset(&out[k], 0, sizeof(out[k]));
		out[k].cls = CBB_JOB_UNKNOWN;
	}
	if (n == 0)
		return 0;
	if (n == 1) {
		(void)cbb_job_state(squeue, ids[0], timeout_ms, &out[0]);
		return out[0].cls == CBB_JOB_UNKNOWN ? -1 : 0;
	}
	list = malloc(n * 11 + 1);
	if (!list)
		return -1;
	for (k = 0; k < n; k++)
		len += (size_t)snprintf(list + len, n * 11 + 1 - len, "%s%u",
					k ? "," : "", ids[k]);
	answer = sq_ask_list(squeue, list, timeout_ms, visit_many, &m);
	free(list);
	/* rows it printed count even if it also complained about an id */
	for (k = 0; k < n && answer < 0; k++)
		if (out[k].cls != CBB_JOB_UNKNOWN || out[k].state[0])
			answer = 0;
	return answer < 0 ? -1 : 0;
}

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

/* One "A F K T" row; false when it is not one. */
static bool row(const char *line, size_t len, uint32_t *a, uint32_t *f,
		bool *task, char *state, size_t ssize)
{
	char buf[160], k[32], t[40];
	unsigned long ua, uf;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%lu %lu %31s %39s", &ua, &uf, k, t) != 4 ||
	    ua > 0xffffffffUL || uf > 0xffffffffUL || strlen(t) >= ssize)
		return false;
	*a = (uint32_t)ua;
	*f = (uint32_t)uf;
	*task = k[0] >= '0' && k[0] <= '9';
	strcpy(state, t);
	return true;
}

cbb_jobstate_t cbb_job_state_parse(const char *out, int status,
				   const char *errtext, uint32_t job_id,
				   cbb_job_facts_t *facts)
{
	cbb_job_facts_t f;
	const char *p = out, *nl;
	bool any = false;

	memset(&f, 0, sizeof(f));
	f.cls = CBB_JOB_UNKNOWN;
	for (; *p; p = nl ? nl + 1 : p + strlen(p)) {
		uint32_t a, fa;
		bool task;
		char st[32];
		cbb_jobstate_t c;

		nl = strchr(p, '\n');
		if (!row(p, nl ? (size_t)(nl - p) : strlen(p), &a, &fa, &task,
			 st, sizeof(st)))
			continue;
		any = true;
		c = cbb_job_state_classify(st);
		if (a == job_id) {
			f.cls = c;
			snprintf(f.state, sizeof(f.state), "%s", st);
			f.array_job_id = fa;
			f.array_task = task;
		}
	}
	if (!any && status != 0 && strstr(errtext, "Invalid job id")) {
		/* stderr, not the output: a job name never gets there */
		f.cls = CBB_JOB_GONE;
	} else if (!any || status != 0) {
		f.cls = CBB_JOB_UNKNOWN;
	}
	if (facts)
		*facts = f;
	return f.cls;
}

cbb_jobstate_t cbb_job_state(const char *squeue, uint32_t job_id,
			     unsigned timeout_ms, cbb_job_facts_t *facts)
{
	char id[16], prog[512], fmt[] = "%A %F %K %T";
	char a0[] = "-h", a1[] = "-t", a2[] = "all", a3[] = "-j", a5[] = "-o";
	char *argv[] = { prog, a0, a1, a2, a3, id, a5, fmt, NULL };
	cbb_buf_t out, err;
	cbb_jobstate_t cls = CBB_JOB_UNKNOWN;
	int status;

	if (facts) {
		memset(facts, 0, sizeof(*facts));
		facts->cls = CBB_JOB_UNKNOWN;
	}
	snprintf(id, sizeof(id), "%u", job_id);
	snprintf(prog, sizeof(prog), "%s", squeue);
	cbb_buf_init(&out, OUT_MAX);
	cbb_buf_init(&err, ERR_MAX);
	if (cbb_run(argv, timeout_ms, &out, &err, &status) == 0)
		cls = cbb_job_state_parse(out.data ? out.data : "", status,
					  err.data ? err.data : "", job_id,
					  facts);
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	return cls;
}

int cbb_any_alive(const char *squeue, uint32_t array_job_id,
		  const uint32_t *ids, size_t n, unsigned timeout_ms)
{
	char id[16], prog[512], fmt[] = "%A %F %K %T";
	char a0[] = "-h", a1[] = "-t", a2[] = "all", a3[] = "-j", a5[] = "-o";
	char *argv[] = { prog, a0, a1, a2, a3, id, a5, fmt, NULL };
	cbb_buf_t out, err;
	const char *p, *nl;
	int status, rc = -1;
	size_t k;

	if (n == 0)
		return 0;
	snprintf(id, sizeof(id), "%u", array_job_id);
	snprintf(prog, sizeof(prog), "%s", squeue);
	cbb_buf_init(&out, OUT_MAX);
	cbb_buf_init(&err, ERR_MAX);
	if (cbb_run(argv, timeout_ms, &out, &err, &status) == 0 &&
	    status == 0) {
		rc = 0;
		for (p = out.data ? out.data : ""; *p && rc == 0;
		     p = nl ? nl + 1 : p + strlen(p)) {
			uint32_t a, fa;
			bool task;
			char st[32];

			nl = strchr(p, '\n');
			if (!row(p, nl ? (size_t)(nl - p) : strlen(p), &a, &fa,
				 &task, st, sizeof(st)))
				continue;
			for (k = 0; k < n; k++)
				if (ids[k] == a && cbb_job_state_classify(st) !=
							   CBB_JOB_OVER)
					rc = 1; /* alive, or a state not known */
		}
	} else if (status != 0 && err.data && strstr(err.data, "Invalid job id")) {
		rc = 0; /* Slurm has forgotten the whole array */
	}
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	return rc;
}

/* jobstate.c - see jobstate.h */
#include "jobstate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"

extern char **environ;

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

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Read stdout and stderr of the child until both end or time runs out. */
static bool collect(int fo, int fe, unsigned timeout_ms, cbb_buf_t *out,
		    cbb_buf_t *err, bool *cut)
{
	struct pollfd pfd[2] = { { fo, POLLIN, 0 }, { fe, POLLIN, 0 } };
	struct timespec t0;
	int open_fds = 2;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open_fds) {
		long left = (long)timeout_ms - elapsed_ms(&t0);
		int i;

		if (left <= 0)
			return false;
		if (poll(pfd, 2, (int)left) < 0 && errno != EINTR)
			return false;
		for (i = 0; i < 2; i++) {
			char chunk[4096];
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			/* over the cap: keep reading, stop keeping */
			if (cbb_buf_add(i ? err : out, chunk, (size_t)n) < 0 &&
			    !i)
				*cut = true;
		}
	}
	return true;
}

cbb_jobstate_t cbb_job_state(const char *squeue, uint32_t job_id,
			     unsigned timeout_ms, cbb_job_facts_t *facts)
{
	posix_spawn_file_actions_t fa;
	char id[16], prog[512], fmt[] = "%A %F %K %T";
	char a0[] = "-h", a1[] = "-t", a2[] = "all", a3[] = "-j", a5[] = "-o";
	char *argv[] = { prog, a0, a1, a2, a3, id, a5, fmt, NULL };
	cbb_buf_t out, err;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = -1, rc;
	bool finished, cut = false;
	pid_t pid;
	cbb_jobstate_t cls;

	if (facts) {
		memset(facts, 0, sizeof(*facts));
		facts->cls = CBB_JOB_UNKNOWN;
	}
	snprintf(id, sizeof(id), "%u", job_id);
	snprintf(prog, sizeof(prog), "%s", squeue);
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return CBB_JOB_UNKNOWN;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	rc = strchr(squeue, '/') ?
		     posix_spawn(&pid, squeue, &fa, NULL, argv, environ) :
		     posix_spawnp(&pid, squeue, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		return CBB_JOB_UNKNOWN;
	}
	cbb_buf_init(&out, OUT_MAX);
	cbb_buf_init(&err, ERR_MAX);
	finished = collect(po[0], pe[0], timeout_ms, &out, &err, &cut);
	if (!finished)
		kill(pid, SIGKILL);
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!finished || cut || !WIFEXITED(status)) {
		cls = CBB_JOB_UNKNOWN;
	} else {
		cls = cbb_job_state_parse(out.data ? out.data : "",
					  WEXITSTATUS(status),
					  err.data ? err.data : "", job_id,
					  facts);
	}
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	return cls;
}

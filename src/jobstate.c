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

extern char **environ;

cbb_jobstate_t cbb_job_state_classify(const char *w)
{
	static const char *const alive[] = {
		"PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED",
		"REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "RESV_DEL_HOLD",
		"SIGNALING", "STAGE_OUT", "SPECIAL_EXIT", "STOPPED", NULL,
	};
	static const char *const over[] = {
		"CANCELLED", "COMPLETED", "COMPLETING", "FAILED", "TIMEOUT",
		"NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
		"OUT_OF_MEMORY", "REVOKED", NULL,
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

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

cbb_jobstate_t cbb_job_state(const char *scontrol, uint32_t job_id,
			     unsigned timeout_ms, char *state, size_t size)
{
	posix_spawn_file_actions_t fa;
	char id[16], out[8192], *p;
	char prog[512], show[] = "show", job[] = "job", one[] = "-o";
	char *argv[6];
	struct timespec t0;
	size_t got = 0;
	int fds[2], status = 0;
	pid_t pid;
	int done = 0;

	state[0] = '\0';
	snprintf(id, sizeof(id), "%u", job_id);
	snprintf(prog, sizeof(prog), "%s", scontrol);
	argv[0] = prog;
	argv[1] = show;
	argv[2] = job;
	argv[3] = one;
	argv[4] = id;
	argv[5] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return CBB_JOB_UNKNOWN;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	if ((strchr(scontrol, '/') ?
		     posix_spawn(&pid, scontrol, &fa, NULL, argv, environ) :
		     posix_spawnp(&pid, scontrol, &fa, NULL, argv, environ)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(fds[0]);
		close(fds[1]);
		return CBB_JOB_UNKNOWN;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!done) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		long left = (long)timeout_ms - elapsed_ms(&t0);
		ssize_t n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fds[0], out + got, sizeof(out) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			done = 1;
		else
			got += (size_t)n;
		if (got == sizeof(out) - 1)
			done = 1;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[got] = '\0';
	if (!done)
		return CBB_JOB_UNKNOWN;
	if (strstr(out, "Invalid job id"))
		return CBB_JOB_GONE;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return CBB_JOB_UNKNOWN;
	p = strstr(out, "JobState=");
	if (!p)
		return CBB_JOB_UNKNOWN;
	p += 9;
	snprintf(state, size, "%.*s", (int)strcspn(p, " \n"), p);
	return cbb_job_state_classify(state);
}

/* run.c - see run.h */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

int cbb_run(char *const argv[], unsigned timeout_ms, cbb_buf_t *out,
	    cbb_buf_t *err, int *status)
{
	posix_spawn_file_actions_t fa;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st = -1, rc;
	bool finished, cut = false;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		if (po[0] >= 0) {
			close(po[0]);
			close(po[1]);
		}
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	rc = strchr(argv[0], '/') ?
		     posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) :
		     posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	finished = collect(po[0], pe[0], timeout_ms, out, err, &cut);
	if (!finished)
		kill(pid, SIGKILL);
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!finished || cut || !WIFEXITED(st))
		return -1;
	*status = WEXITSTATUS(st);
	return 0;
}

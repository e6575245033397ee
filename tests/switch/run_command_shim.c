/*
 * run_command_shim.c - test_runner's stand-in for Slurm's run_command()
 * (shim/src/common/run_command.h says what it keeps of Slurm's).  The
 * real one is exercised by the 26.05.3 e2e (tests/e2e/switch*.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/run_command.h"
#include "src/common/xmalloc.h"

extern char **environ;

void *shim_xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		abort();
	return p;
}

void shim_xrealloc(void **p, size_t n)
{
	void *q = realloc(*p, n ? n : 1);

	if (!q)
		abort();
	*p = q;
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void kill_pg(pid_t pid)
{
	killpg(pid, SIGTERM);
	usleep(10000);
	killpg(pid, SIGKILL);
}

char *run_command(run_command_args_t *a)
{
	int out[2], in[2] = { -1, -1 };
	size_t cap = 1024, len = 0;
	char *resp = shim_xmalloc(cap);
	long start = now_ms();
	bool killed = false;
	pid_t pid;

	if (access(a->script_path, R_OK | X_OK) < 0) {
		*a->status = 127 << 8;
		free(resp);
		return strdup("Run command failed - configuration error");
	}
	if (pipe2(out, O_CLOEXEC) || (a->write_to_child && pipe2(in, O_CLOEXEC)))
		abort();
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(in[0] >= 0 ? in[0] : nul, 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		close_range(3, ~0U, 0);
		setpgid(0, 0);
		execve(a->script_path, a->script_argv, a->env ? a->env : environ);
		_exit(127);
	}
	close(out[1]);
	if (in[0] >= 0)
		close(in[0]);
	if (a->cb)
		a->cb(in[1], a->cb_arg);
	if (in[1] >= 0)
		close(in[1]);
	for (;;) {
		struct pollfd p = { out[0], POLLIN, 0 };
		long left = a->max_wait - (now_ms() - start);
		ssize_t n;

		if (left <= 0) {
			if (a->timed_out)
				*a->timed_out = true;
			kill_pg(pid);
			killed = true;
			break;
		}
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		if (len + 1024 >= cap)
			shim_xrealloc((void **)&resp, cap *= 2);
		n = read(out[0], resp + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(out[0]);
	resp[len] = '\0';
	while (!killed && waitpid(pid, a->status, WNOHANG) == 0) {
		if (now_ms() - start >= a->max_wait) {
			if (a->timed_out)
				*a->timed_out = true;
			kill_pg(pid);
			killed = true;
			break;
		}
		usleep(10000);
	}
	if (killed)
		waitpid(pid, a->status, 0);
	else
		kill_pg(pid); /* kill children too */
	return resp;
}

/* spawn.c - see spawn.h */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "wire.h"

extern char **environ;

/* The helpers running now, so that a shutdown can kill them. */
#define MAX_RUNNING 256
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t running[MAX_RUNNING];
static bool stopping;

static bool track(pid_t pid)
{
	bool ok = false;
	int i;

	pthread_mutex_lock(&running_lock);
	for (i = 0; !stopping && i < MAX_RUNNING; i++)
		if (!running[i]) {
			running[i] = pid;
			ok = true;
			break;
		}
	pthread_mutex_unlock(&running_lock);
	return ok;
}

static void untrack(pid_t pid)
{
	int i;

	pthread_mutex_lock(&running_lock);
	for (i = 0; i < MAX_RUNNING; i++)
		if (running[i] == pid)
			running[i] = 0;
	pthread_mutex_unlock(&running_lock);
}

void swl_run_stop_all(void)
{
	int i;

	pthread_mutex_lock(&running_lock);
	stopping = true;
	for (i = 0; i < MAX_RUNNING; i++)
		if (running[i])
			kill(-running[i], SIGKILL);
	pthread_mutex_unlock(&running_lock);
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A descriptor above the helper's 0-4, close-on-exec. */
static int high_fd(int fd)
{
	int h;

	if (fd > SWL_FD_ANSWER)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, SWL_FD_ANSWER + 1);
	close(fd);
	return h;
}

/* The answer stream: frames parsed as they come. */
typedef struct {
	unsigned char *buf;
	size_t len, cap;
	bool broken;
} stream_t;

static void feed(stream_t *s, const unsigned char *p, size_t n, swl_log_fn log,
		 const void *ctx, swl_run_t *r)
{
	size_t off = 0;

	if (s->broken)
		return;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		unsigned char *b;

		while (cap < s->len + n)
			cap *= 2;
		if (cap > SWL_WIRE_MAX + 64 * 1024 || !(b = realloc(s->buf, cap))) {
			s->broken = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	while (s->len - off >= SWL_FRAME_HEAD) {
		const unsigned char *f = s->buf + off;
		size_t flen = (size_t)f[1] | (size_t)f[2] << 8 |
			      (size_t)f[3] << 16 | (size_t)f[4] << 24;

		if (flen > SWL_WIRE_MAX) {
			s->broken = true;
			return;
		}
		if (s->len - off - SWL_FRAME_HEAD < flen)
			break;
		if (f[0] == 'L' && flen >= 1 && log) {
			log(ctx, (char)f[SWL_FRAME_HEAD],
			    (const char *)f + SWL_FRAME_HEAD + 1, flen - 1);
		} else if (f[0] == 'R' && !r->answer) {
			r->answer = malloc(flen ? flen : 1);
			if (r->answer) {
				memcpy(r->answer, f + SWL_FRAME_HEAD, flen);
				r->answer_len = flen;
			}
		}
		off += SWL_FRAME_HEAD + flen;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
}

static pid_t start(const char *helper, int req_r, int ans_w, swl_run_t *r)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	static char name[] = "switch-lua-run";
	char *argv[] = { name, NULL };
	pid_t pid = -1;
	int e;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, req_r, SWL_FD_REQUEST);
	posix_spawn_file_actions_adddup2(&fa, ans_w, SWL_FD_ANSWER);
	/* a group of its own (killed whole), default signals, none blocked */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, helper, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e) {
		snprintf(r->why, sizeof(r->why), "cannot run %s: %s", helper,
			 strerror(e));
		return -1;
	}
	return pid;
}

void swl_run(const char *helper, const unsigned char *req, size_t req_len,
	     unsigned timeout_ms, swl_log_fn log, const void *ctx, swl_run_t *r)
{
	int reqp[2] = { -1, -1 }, ansp[2] = { -1, -1 };
	long deadline = now_ms() + (long)timeout_ms;
	size_t sent = 0;
	stream_t s = { NULL, 0, 0, false };
	sigset_t pipe_set, old;
	siginfo_t info;
	pid_t pid;
	bool timed_out = false;

	memset(r, 0, sizeof(*r));
	r->status = SWL_RUN_NOSTART;
	if (pipe2(reqp, O_CLOEXEC) < 0 || pipe2(ansp, O_CLOEXEC) < 0 ||
	    (reqp[0] = high_fd(reqp[0])) < 0 || (reqp[1] = high_fd(reqp[1])) < 0 ||
	    (ansp[0] = high_fd(ansp[0])) < 0 || (ansp[1] = high_fd(ansp[1])) < 0) {
		snprintf(r->why, sizeof(r->why), "pipe: %s", strerror(errno));
		goto out;
	}
	pid = start(helper, reqp[0], ansp[1], r);
	close(reqp[0]);
	close(ansp[1]);
	reqp[0] = ansp[1] = -1;
	if (pid < 0)
		goto out;
	if (!track(pid)) {
		/* shutting down (or too many at once): nothing new runs */
		kill(-pid, SIGKILL);
		waitpid(pid, &r->wstatus, 0);
		snprintf(r->why, sizeof(r->why), "not started: the daemon is "
			 "stopping or runs %d helpers", MAX_RUNNING);
		goto out;
	}
	fcntl(reqp[1], F_SETFL, O_NONBLOCK);
	/* a helper that died early must not kill us with SIGPIPE */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);

	while (ansp[0] >= 0) {
		struct pollfd p[2];
		int np = 0, i;
		long left = deadline - now_ms();

		if (left <= 0) {
			timed_out = true;
			break;
		}
		p[np].fd = ansp[0];
		p[np++].events = POLLIN;
		if (reqp[1] >= 0) {
			p[np].fd = reqp[1];
			p[np++].events = POLLOUT;
		}
		if (poll(p, (nfds_t)np, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			timed_out = true;
			break;
		}
		for (i = 0; i < np; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == reqp[1]) {
				ssize_t w = write(reqp[1], req + sent, req_len - sent);

				if (w > 0)
					sent += (size_t)w;
				if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
				    sent == req_len) {
					close(reqp[1]);
					reqp[1] = -1;
				}
			} else {
				unsigned char chunk[8192];
				ssize_t n = read(ansp[0], chunk, sizeof(chunk));

				if (n < 0 && (errno == EINTR || errno == EAGAIN))
					continue;
				if (n <= 0) {
					close(ansp[0]);
					ansp[0] = -1;
					break;
				}
				feed(&s, chunk, (size_t)n, log, ctx, r);
			}
		}
	}
	if (!timed_out) {
		/* the stream ended: the helper is exiting; wait for it, still
		 * within the deadline */
		for (;;) {
			int w;

			memset(&info, 0, sizeof(info));
			w = waitid(P_PID, (id_t)pid, &info,
				   WEXITED | WNOHANG | WNOWAIT);
			if ((w == 0 && info.si_pid) || (w < 0 && errno == ECHILD))
				break; /* exited (or reaped by someone else) */
			if (now_ms() >= deadline) {
				timed_out = true;
				break;
			}
			usleep(2000);
		}
	}
	/* kill the group while the helper, dead or a zombie, still holds
	 * its id: whatever the script started goes with it */
	kill(-pid, SIGKILL);
	for (;;) {
		if (waitpid(pid, &r->wstatus, 0) >= 0)
			break;
		if (errno != EINTR) {
			/* reaped elsewhere: judge by the answer alone */
			r->wstatus = 0;
			break;
		}
	}
	untrack(pid);
	{
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	if (timed_out)
		r->status = SWL_RUN_TIMEOUT;
	else if (WIFSIGNALED(r->wstatus))
		r->status = SWL_RUN_SIGNALED;
	else if (r->answer && WIFEXITED(r->wstatus) && !WEXITSTATUS(r->wstatus))
		r->status = SWL_RUN_ANSWERED;
	else
		r->status = SWL_RUN_EXITED;
	if (r->status != SWL_RUN_ANSWERED) {
		free(r->answer);
		r->answer = NULL;
		r->answer_len = 0;
	}
out:
	if (reqp[0] >= 0)
		close(reqp[0]);
	if (reqp[1] >= 0)
		close(reqp[1]);
	if (ansp[0] >= 0)
		close(ansp[0]);
	if (ansp[1] >= 0)
		close(ansp[1]);
	free(s.buf);
}

void swl_run_free(swl_run_t *r)
{
	free(r->answer);
	r->answer = NULL;
	r->answer_len = 0;
}

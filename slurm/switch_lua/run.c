/* run.c - see run.h */
#include "src/common/slurm_xlator.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_command.h"
#include "src/common/xmalloc.h"

#include "frame.h"
#include "run.h"
#include "wire.h"

/* The request, written by run_command's callback as the helper starts. */
typedef struct {
	const unsigned char *req;
	size_t len;
	bool written;
} request_t;

/*
 * Write the whole request without ever blocking: the pipe is first made
 * large enough to hold it (a helper that never reads cannot stall the
 * daemon's thread: run_command() only starts its deadline after this
 * callback returns).  A request that does not fit reaches the helper cut
 * short, and it answers "bad request".
 */
static void write_request(int fd, void *arg)
{
	request_t *q = arg;
	sigset_t pipe_set, old;
	size_t sent = 0;

	if (fd < 0)
		return;
	if (q->len > 65536)
		(void)fcntl(fd, F_SETPIPE_SZ, (int)q->len);
	(void)fcntl(fd, F_SETFL, O_NONBLOCK);
	/* a helper that died early must not kill the daemon with SIGPIPE */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (sent < q->len) {
		ssize_t w = write(fd, q->req + sent, q->len - sent);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	{
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	q->written = sent == q->len;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Read the frames of out (frame.h): log lines to log, the first result
 * into r.  Returns the number of frames read; it stops at the first
 * line that is not a frame (what a helper that could not start printed).
 */
static int frames(const char *out, swl_log_fn log, const void *ctx,
		  swl_run_t *r)
{
	size_t room = 4096;
	unsigned char *b = xmalloc(room);
	int n = 0;

	while (*out) {
		const char *nl = strchr(out, '\n'), *p;
		size_t len = 0, want;
		char type = *out;

		if (!nl || (type != 'L' && type != 'R') || (nl - out - 1) % 2)
			break;
		want = (size_t)(nl - out - 1) / 2;
		if (want > SWL_WIRE_MAX)
			break;
		if (want > room) {
			room = want;
			xrealloc(b, room);
		}
		for (p = out + 1; p < nl; p += 2) {
			int hi = hex(p[0]), lo = hex(p[1]);

			if (hi < 0 || lo < 0)
				break;
			b[len++] = (unsigned char)(hi << 4 | lo);
		}
		if (len != want)
			break;
		if (type == 'L' && len >= 1 && log) {
			log(ctx, (char)b[0], (const char *)b + 1, len - 1);
		} else if (type == 'R' && !r->answer) {
			r->answer = xmalloc(len ? len : 1);
			memcpy(r->answer, b, len);
			r->answer_len = len;
		}
		n++;
		out = nl + 1;
	}
	xfree(b);
	return n;
}

#define NEVER_SET 0x7f7f7f7f   /* a wait status run_command left alone */

void swl_run(const char *helper, const char *what, const unsigned char *req,
	     size_t req_len, unsigned timeout_ms, swl_log_fn log,
	     const void *ctx, swl_run_t *r)
{
	static char name[] = "switch-lua-run";
	char *argv[] = { name, NULL };
	request_t q = { req, req_len, false };
	run_command_args_t args;
	bool timed_out = false;
	char *out;
	int status = NEVER_SET, n;

	memset(r, 0, sizeof(*r));
	memset(&args, 0, sizeof(args));
	args.cb = write_request;
	args.cb_arg = &q;
	args.direct_exec = true;      /* no launcher: the helper seals itself */
	args.max_wait = (int)timeout_ms;
	args.script_argv = argv;
	args.script_path = helper;
	args.script_type = what;
	args.status = &status;
	args.timed_out = &timed_out;
	args.write_to_child = true;
	out = run_command(&args);
	r->wstatus = status;
	n = frames(out ? out : "", log, ctx, r);

	if (status == NEVER_SET || (!n && WIFEXITED(status) &&
				    WEXITSTATUS(status) == 127)) {
		r->status = SWL_RUN_NOSTART;
		snprintf(r->why, sizeof(r->why), "cannot run %s%s%.160s", helper,
			 out && *out ? ": " : "", out ? out : "");
		if (status == NEVER_SET)
			snprintf(r->why, sizeof(r->why), "cannot run %s: fork "
				 "failed", helper);
	} else if (timed_out) {
		r->status = SWL_RUN_TIMEOUT;
	} else if (WIFSIGNALED(status)) {
		r->status = SWL_RUN_SIGNALED;
	} else if (r->answer && q.written && WIFEXITED(status) &&
		   !WEXITSTATUS(status)) {
		r->status = SWL_RUN_ANSWERED;
	} else {
		r->status = SWL_RUN_EXITED;
	}
	if (r->status != SWL_RUN_ANSWERED)
		swl_run_free(r);
	log_flag(SWITCH, "%s: %s: %zu request bytes, %zu answer bytes, "
		 "status %d", __func__, what, req_len, r->answer_len, status);
	xfree(out);
}

void swl_run_free(swl_run_t *r)
{
	xfree(r->answer);
	r->answer_len = 0;
}

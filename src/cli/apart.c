/* apart.c - see apart.h */
#include "apart.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define CBB_APART_OUT_MAX ((size_t)4 << 20)
#define CBB_APART_CANNOT 255 /* the child's exit when it cannot become who */

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void child(int fd, cbb_apart_become_t become, const void *who,
		  cbb_apart_fn_t fn, const void *arg)
{
	cbb_buf_t mine;
	int rc;

	if (become && become(who) < 0)
		_exit(CBB_APART_CANNOT);
	cbb_buf_init(&mine, CBB_APART_OUT_MAX);
	rc = fn(arg, &mine);
	if (write_all(fd, mine.data ? mine.data : "", mine.len) < 0)
		_exit(CBB_APART_CANNOT);
	_exit(rc < 0 || rc >= CBB_APART_CANNOT ? CBB_APART_CANNOT - 1 : rc);
}

int cbb_apart(cbb_apart_become_t become, const void *who, cbb_apart_fn_t fn,
	      const void *arg, cbb_buf_t *out)
{
	char chunk[8192];
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	/* close-on-exec: a program fn (or anyone here) runs must not hold
	 * the write end, or the read below waits for that program to exit */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], become, who, fn, arg);
	}
	close(fds[1]);
	/* read to the end even past out's limit: the child never blocks */
	while ((n = read(fds[0], chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		(void)cbb_buf_add(out, chunk, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == CBB_APART_CANNOT)
		return -1;
	return WEXITSTATUS(st);
}

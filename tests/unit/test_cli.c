/*
 * test_cli.c - the CLI's own helpers that no admin test reaches with
 * certainty: cbb_apart's pipe never held by a program its child runs
 * (close-on-exec).  src/cli/ is no library, so the files
 * under test are compiled in here (tests.mk rebuilds this test when
 * they change).
 */
#include "cmocka_all.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/cli/apart.c"

/* ---- a program that lists what it inherited --------------------------- */

/* `unit_cli --list-fds`: "FD TARGET" for each open descriptor. */
static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return 2;
	while ((e = readdir(d))) {
		char path[64], target[PATH_MAX];
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		printf("%d %s\n", fd, target);
	}
	closedir(d);
	return fflush(stdout) == 0 ? 0 : 2;
}

/* ---- cbb_apart: close-on-exec ------------------------------------------ */

typedef struct {
	int fd[256];
	size_t n;
} fds_t;

/* The descriptors this process has open now (the listing's own aside). */
static void open_fds(fds_t *f)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	f->n = 0;
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) &&
		    f->n < sizeof(f->fd) / sizeof(f->fd[0]))
			f->fd[f->n++] = atoi(e->d_name);
	closedir(d);
}

static bool has_fd(const fds_t *f, int fd)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->fd[i] == fd)
			return true;
	return false;
}

/*
 * In cbb_apart's child: the descriptors the parent did not have before
 * the call are cbb_apart's own (the pipe's write end).  Each must be
 * close-on-exec, and a program run from here (this test, --list-fds)
 * must not hold it.  Says what it saw in `out`; 0 when all is well.
 */
static int exec_fn(const void *arg, cbb_buf_t *out)
{
	const fds_t *before = arg;
	char line[PATH_MAX + 64], got[16384], names[8][PATH_MAX];
	size_t nnames = 0, len = 0, i;
	int p[2], st, rc = 0;
	fds_t now;
	ssize_t r;
	pid_t pid;

	open_fds(&now);
	for (i = 0; i < now.n; i++) {
		char path[64];
		int fd = now.fd[i], fl = fcntl(fd, F_GETFD);
		ssize_t n;

		if (has_fd(before, fd) || nnames == 8)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, names[nnames], sizeof(names[0]) - 1);
		if (n < 0)
			return 3;
		names[nnames][n] = '\0';
		snprintf(line, sizeof(line), "apart's fd %d %s%s\n", fd,
			 names[nnames], fl & FD_CLOEXEC ? " close-on-exec" : "");
		(void)cbb_buf_adds(out, line);
		if (!(fl & FD_CLOEXEC))
			rc = 1;
		nnames++;
	}
	/* the program's output comes back on a pipe of our own */
	if (pipe2(p, O_CLOEXEC) < 0)
		return 3;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		if (dup2(p[1], 1) < 0)
			_exit(127);
		execl("/proc/self/exe", "unit_cli", "--list-fds", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((r = read(p[0], got + len, sizeof(got) - 1 - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (len += (size_t)r) == sizeof(got) - 1)
			break;
	}
	got[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 3;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 3;
	(void)cbb_buf_adds(out, "the program run from the child holds:\n");
	(void)cbb_buf_adds(out, got);
	for (i = 0; i < nnames; i++) {
		char *at = got;

		/* "FD TARGET\n": the target at a line's second field */
		while ((at = strstr(at, names[i]))) {
			if (at > got && at[-1] == ' ' &&
			    (at[strlen(names[i])] == '\n')) {
				snprintf(line, sizeof(line), "LEAKED %s\n", names[i]);
				(void)cbb_buf_adds(out, line);
				rc = 1;
			}
			at += strlen(names[i]);
		}
	}
	return nnames == 1 ? rc : 4;
}

static void test_apart_pipe_close_on_exec(void **state)
{
	fds_t before;
	cbb_buf_t out;
	int rc;

	(void)state;
	open_fds(&before);
	cbb_buf_init(&out, 1 << 20);
	rc = cbb_apart(NULL, NULL, exec_fn, &before, &out);
	(void)cbb_buf_add(&out, "", 1);
	if (rc != 0)
		fprintf(stderr, "cbb_apart gave %d:\n%s", rc, out.data);
	/* one descriptor of cbb_apart's, a pipe, close-on-exec */
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out.data, " pipe:["));
	assert_non_null(strstr(out.data, " close-on-exec\n"));
	/* and the program really ran and listed its stdout */
	assert_non_null(strstr(out.data, "\n1 pipe:["));
	cbb_buf_free(&out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apart_pipe_close_on_exec),
	};

	if (argc > 1 && !strcmp(argv[1], "--list-fds"))
		return list_fds();
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}

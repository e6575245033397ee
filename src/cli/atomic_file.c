/* atomic_file.c - see atomic_file.h */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The last part of path, and the directory before it ("." for none). */
static int split_path(const char *path, char *dir, size_t size,
		      const char **base, cbb_err_t *err)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return cbb_err(err, "%s names no file", path);
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else if ((size_t)(slash - path) >= size)
		return cbb_err(err, "%s: %s", path, strerror(ENAMETOOLONG));
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
	return 0;
}

/* ".<base>.<16 hex digits>.tmp": nobody can name it beforehand (and
 * node_exporter's textfile collector reads only *.prom).  Without the
 * kernel's randomness the name is only unlikely, which O_EXCL and the
 * retries make do with. */
static void tmp_name(char *name, size_t size, const char *base)
{
	static unsigned long long seq;
	unsigned long long r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = ((unsigned long long)time(NULL) << 32) ^
		    ((unsigned long long)getpid() << 16) ^
		    (unsigned long long)clock() ^ ++seq;
	snprintf(name, size, ".%s.%016llx.tmp", base, r);
}

/* Name the open, unnamed file fd in dfd under a fresh temporary name. */
static int link_tmpfile(int fd, int dfd, const char *base, char *name,
			size_t size)
{
	char proc[64];
	int i;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (i = 0; i < 100; i++) {
		tmp_name(name, size, base);
		/* AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH; /proc does not */
		if (linkat(fd, "", dfd, name, AT_EMPTY_PATH) == 0 ||
		    (errno != EEXIST &&
		     linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) == 0))
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

static int write_whole(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int cbb_atomic_write(const char *path, const char *data, size_t len,
		     cbb_err_t *err)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	const char *base;
	struct stat st;
	int dfd, fd = -1, i, rc = -1;
	bool named = false;

	if (split_path(path, dir, sizeof(dir), &base, err) < 0)
		return -1;
	if (strlen(base) > NAME_MAX - 24)
		return cbb_err(err, "%s: %s", path, strerror(ENAMETOOLONG));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return cbb_err(err, "%s: %s", dir, strerror(errno));
	if (fstat(dfd, &st) < 0) {
		cbb_err(err, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		cbb_err(err, "%s may be written by anyone and has no sticky bit: "
			"anyone could replace %s (chmod o-w or +t)", dir, base);
		goto out;
	}
	fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	for (i = 0; fd < 0 && i < 100; i++) {
		/* no O_TMPFILE here (an older kernel, some filesystems) */
		tmp_name(name, sizeof(name), base);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, 0644);
		named = fd >= 0;
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		cbb_err(err, "cannot create a file in %s: %s", dir, strerror(errno));
		goto out;
	}
	if (write_whole(fd, data ? data : "", len) < 0 || fsync(fd) < 0) {
		cbb_err(err, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	if (!named) {
		if (link_tmpfile(fd, dfd, base, name, sizeof(name)) < 0) {
			cbb_err(err, "cannot write %s: %s", path, strerror(errno));
			goto out;
		}
		named = true;
	}
	if (renameat(dfd, name, dfd, base) < 0) {
		cbb_err(err, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	named = false; /* it is FILE now */
	(void)fsync(dfd); /* the rename itself, on disk */
	rc = 0;
out:
	if (named)
		(void)unlinkat(dfd, name, 0);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

/* readfile.c - see readfile.h */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cbb_read_file(const char *path, size_t max, char **data, size_t *len,
		  bool *missing, cbb_err_t *err)
{
	struct stat st;
	size_t have = 0;
	char *buf;
	int fd;

	*data = NULL;
	*len = 0;
	if (missing)
		*missing = false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT && missing) {
			*missing = true;
			return 0;
		}
		return cbb_err(err, "cannot open %s: %s", path,
			       strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cbb_err(err, "%s is not a regular file", path);
	}
	if ((unsigned long long)st.st_size > max) {
		close(fd);
		return cbb_err(err, "%s is larger than %zu bytes", path, max);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return cbb_err(err, "out of memory");
	}
	while (have < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + have, (size_t)st.st_size - have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			close(fd);
			free(buf);
			return cbb_err(err, "cannot read %s: %s", path,
				       strerror(e));
		}
		if (got == 0)
			break; /* the file shrank */
		have += (size_t)got;
	}
	close(fd);
	buf[have] = '\0';
	*data = buf;
	*len = have;
	return 0;
}

int cbb_open_private_dir(const char *dir, struct stat *st)
{
	struct stat mine;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int why = 0;

	if (!st)
		st = &mine;
	if (fd < 0)
		return CBB_DIR_UNOPENED;
	if (fstat(fd, st) < 0)
		why = CBB_DIR_UNOPENED;
	else if (st->st_uid != 0 && st->st_uid != geteuid())
		why = CBB_DIR_NOT_OURS;
	else if (st->st_mode & 022)
		why = CBB_DIR_SHARED;
	if (why) {
		int e = errno;

		close(fd);
		errno = e;
		return why;
	}
	return fd;
}

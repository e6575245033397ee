/* sessionfile.c - see sessionfile.h */
#include "sessionfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"

/* The directory must not let anyone but its owner (root, or whoever
 * runs the hook) plant or swap files in it. */
static int check_dir(const char *dir, cbb_err_t *err)
{
	struct stat st;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return cbb_err(err, "SessionDir %s: %s", dir, strerror(errno));
	if (lstat(dir, &st) < 0)
		return cbb_err(err, "SessionDir %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cbb_err(err, "SessionDir %s is not a directory", dir);
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return cbb_err(err, "SessionDir %s must be owned by root and "
			       "writable by nobody else", dir);
	return 0;
}

int cbb_session_file_write(const char *dir, const char *cluster,
			   uint32_t job_id, uint32_t uid, const char *token,
			   char *path, size_t size, cbb_err_t *err)
{
	char safe[CBB_CLUSTER_MAX], tmp[4200];
	size_t len = strlen(token);
	int fd, n;

	if (check_dir(dir, err) < 0)
		return -1;
	cbb_cluster_safe(safe, cluster);
	n = snprintf(path, size, "%s/%s.%u.token", dir, safe, job_id);
	if (n < 0 || (size_t)n >= size ||
	    snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid()) >=
		    (int)sizeof(tmp))
		return cbb_err(err, "session file: SessionDir path too long");
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return cbb_err(err, "session file %s: %s", tmp, strerror(errno));
	if (write(fd, token, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    fchown(fd, (uid_t)uid, (gid_t)-1) < 0 || fchmod(fd, 0600) < 0) {
		int e = errno;

		close(fd);
		(void)unlink(tmp);
		return cbb_err(err, "session file %s: %s", tmp, strerror(e));
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		int e = errno;

		(void)unlink(tmp);
		return cbb_err(err, "session file %s: %s", path, strerror(e));
	}
	return 0;
}

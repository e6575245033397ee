/* audit.c - see audit.h */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cbb_audit_open(const char *path, char *msg, size_t size)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	char dir[4096];
	struct stat st;
	int dfd, fd, e;

	if (!slash || !slash[1] || (size_t)(slash - path) >= sizeof(dir)) {
		snprintf(msg, size, "it is not a file path");
		return -1;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(msg, size, "%s", strerror(errno));
		return -1;
	}
	/* its owner may be SlurmUser's (Debian's /var/log/slurm) while the
	 * hooks run as root: the file itself must be ours (below) */
	if (fstat(dfd, &st) < 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(msg, size, "its directory %s has mode %04o: it must "
			 "not be writable by group or others", dir[0] ? dir : "/",
			 (unsigned)(st.st_mode & 07777));
		close(dfd);
		return -1;
	}
	fd = openat(dfd, slash + 1, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0640);
	e = errno;
	close(dfd);
	if (fd < 0) {
		snprintf(msg, size, "%s", e == ENXIO ? "it is not a regular "
			 "file (a FIFO)" : e == ELOOP ? "it is a symbolic link" :
			 strerror(e));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, size, "it is not a regular file");
	} else if (st.st_uid != geteuid()) {
		snprintf(msg, size, "it belongs to uid %u, not uid %u (who "
			 "runs the hooks)", (unsigned)st.st_uid, (unsigned)geteuid());
	} else if (st.st_nlink != 1) {
		snprintf(msg, size, "it has %lu names (hard links)",
			 (unsigned long)st.st_nlink);
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

int cbb_audit_hook(const char *path, const cbb_hook_record_t *r, char *msg,
		   size_t size)
{
	json_t *o = json_object();
	char *s = NULL;
	size_t len;
	ssize_t w;
	int fd, rc = -1;

	if (!o) {
		snprintf(msg, size, "out of memory");
		return -1;
	}
	/* "record" second: a reader tells the two kinds apart at a glance */
	json_object_set_new(o, "time", json_integer((json_int_t)time(NULL)));
	json_object_set_new(o, "record", json_string("hook"));
	json_object_set_new(o, "hook", json_string(r->hook));
	if (r->job_id)
		json_object_set_new(o, "job", json_integer(r->job_id));
	if (r->cluster)
		json_object_set_new(o, "cluster", json_string(r->cluster));
	if (r->stage)
		json_object_set_new(o, "stage", json_string(r->stage));
	json_object_set_new(o, "result", json_string(r->result));
	if (r->counted) {
		json_object_set_new(o, "started", json_integer(r->started));
		json_object_set_new(o, "retried", json_integer(r->retried));
		json_object_set_new(o, "failed", json_integer(r->failed));
	}
	json_object_set_new(o, "duration_us",
			    json_integer((json_int_t)r->duration_us));
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!s) {
		snprintf(msg, size, "out of memory");
		return -1;
	}
	fd = cbb_audit_open(path, msg, size);
	if (fd >= 0) {
		len = strlen(s);
		s[len++] = '\n'; /* over the NUL: one write of the whole line */
		w = write(fd, s, len);
		if (w == (ssize_t)len)
			rc = 0;
		else
			snprintf(msg, size, "%s", w < 0 ? strerror(errno) :
				 "a short write");
		close(fd);
	}
	free(s);
	return rc;
}

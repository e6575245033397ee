/*
 * dir.c - StateDir itself: checked before it is used (a real
 * directory, owned by root or SlurmUser, writable by nobody else), and
 * a job's state files opened, read and removed relative to it, never
 * through a symbolic link.  statefile.h has the contract.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "readfile.h"
#include "state_int.h"

/* Open StateDir as a directory fd after checking it is safe. */
int cbb_sf_dir_open(const cbb_config_t *cfg, bool create, cbb_err_t *err)
{
	const char *dir = cbb_conf_state_dir(cfg);
	struct stat st;
	int fd;

	fd = cbb_open_private_dir(dir, &st);
	if (fd == CBB_DIR_UNOPENED && errno == ENOENT && create) {
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return cbb_err(err, "conduit_bb: cannot create StateDir "
				       "%s: %s", dir, strerror(errno));
		fd = cbb_open_private_dir(dir, &st);
	}
	if (fd == CBB_DIR_UNOPENED)
		return cbb_err(err, "conduit_bb: cannot open StateDir %s: %s%s",
			       dir, strerror(errno), errno == ENOTDIR ||
			       errno == ELOOP ? " (it must be a directory, not "
			       "a symbolic link)" : "");
	if (fd == CBB_DIR_NOT_OURS)
		return cbb_err(err, "conduit_bb: StateDir %s belongs to uid %u, "
			       "not root or the SlurmUser (uid %u)", dir,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	if (fd == CBB_DIR_SHARED)
		return cbb_err(err, "conduit_bb: StateDir %s is writable by "
			       "group or others (chmod 0700 %s)", dir, dir);
	return fd;
}

void cbb_statedir_init(cbb_statedir_t *sd, const cbb_config_t *cfg,
		       const char *cluster)
{
	sd->cfg = cfg;
	cbb_cluster_safe(sd->cluster, cluster);
	sd->open = false;
	sd->dfd = -1;
}

void cbb_statedir_close(cbb_statedir_t *sd)
{
	if (sd->open)
		close(sd->dfd);
	sd->open = false;
	sd->dfd = -1;
}

int cbb_sf_dir(cbb_statedir_t *sd, bool create, cbb_err_t *err)
{
	if (!sd->open) {
		sd->dfd = cbb_sf_dir_open(sd->cfg, create, err);
		sd->open = sd->dfd >= 0;
	}
	return sd->dfd;
}

int cbb_sd_check(const cbb_config_t *cfg, bool create, cbb_err_t *err)
{
	int fd = cbb_sf_dir_open(cfg, create, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int cbb_sd_usable(const cbb_config_t *cfg, cbb_err_t *err)
{
	struct stat st;

	if (lstat(cbb_conf_state_dir(cfg), &st) < 0 && errno == ENOENT)
		return 0; /* the first stage hook makes it */
	return cbb_sd_check(cfg, false, err);
}

void cbb_sf_name(char *buf, size_t size, const char *cluster, uint32_t job_id,
		 const char *what)
{
	char safe[CBB_CLUSTER_MAX];

	cbb_cluster_safe(safe, cluster);
	snprintf(buf, size, "%s.%u.%s", safe, job_id, what);
}

int cbb_sf_at(cbb_statedir_t *sd, bool create, uint32_t job_id,
	      const char *what, char *name, size_t size, cbb_err_t *err)
{
	cbb_err_t ignored;
	int dfd;

	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, create, err ? err : &ignored);
	if (dfd >= 0)
		cbb_sf_name(name, size, sd->cluster, job_id, what);
	return dfd;
}

/*
 * Open a state file of a job relative to StateDir, never through a
 * symbolic link.  `flags` as for open(2); O_CREAT files get mode 0600.
 */
int cbb_sf_open(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		int flags, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = cbb_sf_at(sd, (flags & O_CREAT) != 0, job_id, what, name,
			    sizeof(name), err), fd;

	if (dfd < 0)
		return -1;
	fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && err && errno != ENOENT)
		cbb_err(err, "conduit_bb: cannot open %s/%s: %s",
			cbb_conf_state_dir(sd->cfg), name, strerror(errno));
	return fd;
}

void cbb_sf_unlink(cbb_statedir_t *sd, uint32_t job_id, const char *what)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = cbb_sf_at(sd, false, job_id, what, name, sizeof(name), NULL);

	if (dfd >= 0)
		(void)unlinkat(dfd, name, 0);
}

/* After a failed write: leave the file empty rather than half-written (a
 * reader takes an empty file as no record; if even this fails, the reader's
 * line checks drop the torn tail). */
void cbb_sf_empty(int fd)
{
	if (ftruncate(fd, 0) != 0)
		return;
}

/* Read a small state file whole (NUL-terminated); NULL on failure. */
char *cbb_sf_read_all(int fd, size_t max, size_t *len)
{
	cbb_buf_t b;
	char chunk[4096];
	ssize_t n;

	cbb_buf_init(&b, max);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || cbb_buf_add(&b, chunk, (size_t)n) < 0) {
			cbb_buf_free(&b);
			return NULL;
		}
	}
	if (cbb_buf_addc(&b, '\0') < 0) {
		cbb_buf_free(&b);
		return NULL;
	}
	*len = b.len - 1;
	return cbb_buf_steal(&b);
}

/* ---- locks on files of StateDir --------------------------------- */

/*
 * The lock file is unlinked (cbb_shared_forget, the sweep) only by the
 * holder of its lock.  A process that opened it before the unlink and
 * waited gets the lock of a file that is no longer at the path, while a
 * newcomer creates and locks another: both would be inside.  So the
 * lock counts only when the locked file is still the one at the path;
 * otherwise it is dropped and the path opened again.
 */
static bool still_at_path(int dfd, const char *name, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 &&
	       fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

const cbb_sd_kind_info_t cbb_sd_kinds[CBB_SDK_N] = {
	[CBB_SDK_STARTED] = { "started", 0, false },
	[CBB_SDK_DOWN] = { "down", 0, false },
	[CBB_SDK_ASKED] = { "asked", 0, false },
	[CBB_SDK_LOCK] = { "lock", 0, false },
	[CBB_SDK_SKIPPED] = { "skipped", CBB_SKIPPED_KEEP_S, false },
	[CBB_SDK_OVER] = { "over", CBB_OVER_KEEP_S, false },
	[CBB_SDK_SHARED] = { "shared", CBB_SKIPPED_KEEP_S, true },
	[CBB_SDK_SHARED_LOCK] = { "shared-lock", CBB_SKIPPED_KEEP_S, true },
	[CBB_SDK_POLL] = { "poll", 3600, false },
	[CBB_SDK_POLLED] = { "polled", 0, false },
	[CBB_SDK_OUTPLAN] = { "outplan", 0, false },
	[CBB_SDK_UNLAUNCHED] = { "unlaunched", 0, false },
	[CBB_SDK_OUTDONE] = { "outdone", CBB_OUTDONE_KEEP_S, false },
};

cbb_sd_kind_t cbb_sd_kind_of(const char *name, size_t *base_len)
{
	const char *dot = strrchr(name, '.');
	int k;

	if (!dot || dot == name)
		return CBB_SDK_N;
	for (k = 0; k < CBB_SDK_N; k++)
		if (!strcmp(dot + 1, cbb_sd_kinds[k].suffix)) {
			if (base_len)
				*base_len = (size_t)(dot - name);
			return (cbb_sd_kind_t)k;
		}
	return CBB_SDK_N;
}

long long cbb_sd_time_at(int dfd, const char *name)
{
	char buf[32], *end;
	long long t;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	t = strtoll(buf, &end, 10);
	return end != buf && (*end == '\n' || *end == '\0') && t > 0 ? t : 0;
}

long long cbb_sf_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int cbb_sf_lock_at(int dfd, const char *name, unsigned wait_ms)
{
	/* the budget is the clock's, not a count of naps: on a loaded
	 * host each 20 ms nap may take longer */
	long long end = cbb_sf_mono_ms() + wait_ms;
	unsigned reopened = 0;
	int fd;

	for (;;) {
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0)
			return -1;
		while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK || cbb_sf_mono_ms() >= end) {
				close(fd);
				return -1;
			}
			usleep(20000);
		}
		if (still_at_path(dfd, name, fd))
			return fd;
		close(fd); /* unlinked meanwhile: not the lock any more */
		if (++reopened > 100)
			return -1;
	}
}

void cbb_lock_release(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the lock */
}


/* ---- files replaced whole, and read only when private --------------- */

int cbb_sf_replace(int dfd, const char *name, const char *suffix,
		   const cbb_sf_part_t *part, size_t n)
{
	char tmp[CBB_CLUSTER_MAX + 96];
	size_t base = strlen(name), sl = strlen(suffix), i;
	unsigned char rnd[6];
	int fd, e;
	bool ok;

	if (base > sl + 1 && name[base - sl - 1] == '.' &&
	    !strcmp(name + base - sl, suffix))
		base -= sl + 1;
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		return -1;
	/* (named .<name's base>.<random>.<suffix>: one a crash left behind
	 * is no job's file and is never read) */
	if ((size_t)snprintf(tmp, sizeof(tmp),
			     ".%.*s.%02x%02x%02x%02x%02x%02x.%s", (int)base,
			     name, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
			     rnd[5], suffix) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ok = true;
	for (i = 0; ok && i < n; i++)
		ok = !part[i].n || write(fd, part[i].p, part[i].n) ==
					   (ssize_t)part[i].n;
	e = ok ? 0 : errno;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		e = e ? e : errno;
		(void)unlinkat(dfd, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int cbb_sf_open_private(int dfd, const char *name, size_t max,
			struct stat *st)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
			O_NONBLOCK);

	if (fd < 0)
		return -1;
	/* only what this user wrote, and nobody else could have */
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    st->st_uid != geteuid() || (st->st_mode & 077) ||
	    st->st_size > (off_t)max) {
		close(fd);
		return -1;
	}
	return fd;
}

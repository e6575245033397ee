/* statefile.c - see statefile.h */
#include "statefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "key.h"

#define RECS_MAX_BYTES ((size_t)1 << 20)

/* Open StateDir as a directory fd after checking it is safe. */
static int dir_open(const cbb_config_t *cfg, bool create, cbb_err_t *err)
{
	const char *dir = cbb_conf_state_dir(cfg);
	struct stat st;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return cbb_err(err, "conduit_bb: cannot create StateDir "
				       "%s: %s", dir, strerror(errno));
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return cbb_err(err, "conduit_bb: cannot open StateDir %s: %s%s",
			       dir, strerror(errno), errno == ENOTDIR ||
			       errno == ELOOP ? " (it must be a directory, not "
			       "a symbolic link)" : "");
	if (fstat(fd, &st) < 0) {
		close(fd);
		return cbb_err(err, "conduit_bb: cannot stat StateDir %s", dir);
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		return cbb_err(err, "conduit_bb: StateDir %s belongs to uid %u, "
			       "not root or the SlurmUser (uid %u)", dir,
			       (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if (st.st_mode & 022) {
		close(fd);
		return cbb_err(err, "conduit_bb: StateDir %s is writable by "
			       "group or others (chmod 0700 %s)", dir, dir);
	}
	return fd;
}

int cbb_state_dir_check(const cbb_config_t *cfg, bool create, cbb_err_t *err)
{
	int fd = dir_open(cfg, create, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void name_of(char *buf, size_t size, const char *cluster,
		    uint32_t job_id, const char *what)
{
	char safe[CBB_CLUSTER_MAX];

	cbb_cluster_safe(safe, cluster);
	snprintf(buf, size, "%s.%u.%s", safe, job_id, what);
}

/*
 * Open a state file of a job relative to StateDir, never through a
 * symbolic link.  `flags` as for open(2); O_CREAT files get mode 0600.
 */
static int state_open(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id, const char *what, int flags,
		      cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48];
	cbb_err_t ignored;
	int dfd, fd;

	cbb_err_clear(&ignored);
	dfd = dir_open(cfg, (flags & O_CREAT) != 0, err ? err : &ignored);
	if (dfd < 0)
		return -1;
	name_of(name, sizeof(name), cluster, job_id, what);
	fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && err && errno != ENOENT)
		cbb_err(err, "conduit_bb: cannot open %s/%s: %s",
			cbb_conf_state_dir(cfg), name, strerror(errno));
	close(dfd);
	return fd;
}

static void state_unlink(const cbb_config_t *cfg, const char *cluster,
			 uint32_t job_id, const char *what)
{
	char name[CBB_CLUSTER_MAX + 48];
	cbb_err_t ignored;
	int dfd;

	cbb_err_clear(&ignored);
	dfd = dir_open(cfg, false, &ignored);
	if (dfd < 0)
		return;
	name_of(name, sizeof(name), cluster, job_id, what);
	(void)unlinkat(dfd, name, 0);
	close(dfd);
}

/* Read a small state file whole (NUL-terminated); NULL when missing. */
static char *read_all(int fd, size_t max, size_t *len)
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

/* The time a state file holds ("%lld\n"); false when it holds none. */
static bool read_time(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id, const char *what, long long *t)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	fd = state_open(cfg, cluster, job_id, what, O_RDONLY, NULL);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	*t = strtoll(buf, &end, 10);
	return end != buf && (*end == '\n' || *end == '\0');
}

time_t cbb_down_since(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id)
{
	char buf[32];
	time_t now = time(NULL);
	long long t;
	ssize_t n;
	int fd;

	/* O_EXCL: the first process to see the outage writes the time */
	fd = state_open(cfg, cluster, job_id, "down",
			O_WRONLY | O_CREAT | O_EXCL, NULL);
	if (fd >= 0) {
		n = snprintf(buf, sizeof(buf), "%lld\n", (long long)now);
		if (write(fd, buf, (size_t)n) != n)
			state_unlink(cfg, cluster, job_id, "down");
		close(fd);
		return now;
	}
	if (errno != EEXIST)
		return now;
	return read_time(cfg, cluster, job_id, "down", &t) && t > 0 &&
	       t <= now ? (time_t)t : now;
}

void cbb_down_clear(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id)
{
	state_unlink(cfg, cluster, job_id, "down");
}

/* "v1 restart submit type attempt index made kind id" */
static bool rec_parse(const char *line, size_t len, cbb_rec_t *r)
{
	char buf[256], kind[4];
	unsigned long rs, ty, at, ix;
	long long sub, made;
	int used = 0;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	memset(r, 0, sizeof(*r));
	if (sscanf(buf, "v1 %lu %lld %lu %lu %lu %lld %3s %63s%n", &rs, &sub,
		   &ty, &at, &ix, &made, kind, r->id, &used) != 8 ||
	    (size_t)used != len || rs > 0xffffffffUL || ty > 3 ||
	    at > 0xffffffffUL || ix > 0xffffffffUL || kind[1] ||
	    (kind[0] != CBB_REC_STARTED && kind[0] != CBB_REC_UNSURE &&
	     kind[0] != CBB_REC_LOST && kind[0] != CBB_REC_SKIPPED &&
	     kind[0] != CBB_REC_JOINED && kind[0] != CBB_REC_ACCOUNTED &&
	     kind[0] != CBB_REC_REFUSED))
		return false;
	r->restart = (uint32_t)rs;
	r->submit = sub;
	r->type = (int)ty;
	r->attempt = (uint32_t)at;
	r->index = (uint32_t)ix;
	r->made = made;
	r->kind = kind[0];
	return true;
}

static int rec_format(char *buf, size_t size, const cbb_rec_t *r)
{
	return snprintf(buf, size, "v1 %u %lld %d %u %u %lld %c %s\n",
			r->restart, (long long)r->submit, r->type, r->attempt,
			r->index, (long long)r->made, r->kind,
			r->id[0] ? r->id : "-");
}

/*
 * A record of this job, not of an earlier job that had the same id.
 * Slurm gives every run attempt a new submit time, so within one restart
 * count the submit time must match, with one exception: the stage-out of
 * a requeued attempt (written as attempt restart-1) starts under the old
 * submit time, and Slurm changes it while that stage-out still runs.
 */
static bool rec_ours(const cbb_rec_t *r, uint32_t restart, int64_t submit)
{
	if (r->restart > restart)
		return false;
	if (r->restart < restart || !submit || !r->submit ||
	    r->submit == submit)
		return true;
	return r->type == CBB_KEY_POST && r->attempt + 1 == r->restart;
}

/*
 * The records of `text` that belong to this job (rec_ours) into out;
 * with `keep`, their lines too (for a rewrite).  The number of lines
 * dropped: damaged, or another job's.
 */
static size_t parse_recs(const char *text, size_t len, uint32_t restart,
			 int64_t submit, cbb_recs_t *out, cbb_buf_t *keep)
{
	const char *p, *nl;
	size_t dropped = 0;

	out->v = calloc(len / 16 + 1, sizeof(*out->v));
	out->n = 0;
	for (p = text; out->v && *p; p = nl + 1) {
		cbb_rec_t r;

		nl = strchr(p, '\n');
		if (!nl)
			break; /* a torn last line is not a record */
		if (!rec_parse(p, (size_t)(nl - p), &r) ||
		    !rec_ours(&r, restart, submit)) {
			dropped++;
			continue;
		}
		out->v[out->n++] = r;
		if (keep)
			(void)cbb_buf_add(keep, p, (size_t)(nl - p) + 1);
	}
	return dropped;
}

static int recs_load(const cbb_config_t *cfg, const char *cluster,
		     uint32_t job_id, const char *what, uint32_t restart,
		     int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	cbb_buf_t keep;
	char *text;
	size_t len, dropped;
	int fd;

	out->v = NULL;
	out->n = 0;
	if (cbb_state_dir_check(cfg, true, err) < 0)
		return -1;
	fd = state_open(cfg, cluster, job_id, what, O_RDWR, NULL);
	if (fd < 0)
		return 0;
	(void)flock(fd, LOCK_EX);
	text = read_all(fd, RECS_MAX_BYTES, &len);
	if (!text) {
		close(fd);
		return 0;
	}
	cbb_buf_init(&keep, RECS_MAX_BYTES);
	dropped = parse_recs(text, len, restart, submit, out, &keep);
	if (dropped && out->v) {
		/* rewrite in place, still under the lock */
		if (ftruncate(fd, 0) == 0 && keep.len &&
		    pwrite(fd, keep.data, keep.len, 0) != (ssize_t)keep.len)
			(void)ftruncate(fd, 0);
	}
	cbb_buf_free(&keep);
	free(text);
	close(fd);
	return 0;
}

int cbb_state_dir_usable(const cbb_config_t *cfg, cbb_err_t *err)
{
	struct stat st;

	if (lstat(cbb_conf_state_dir(cfg), &st) < 0 && errno == ENOENT)
		return 0; /* the first stage hook makes it */
	return cbb_state_dir_check(cfg, false, err);
}

/*
 * Records for a caller inside slurmctld (get_status): read only.  No
 * StateDir is created, no file is written or rewritten, and a writer's
 * lock is waited for at most CBB_PEEK_LOCK_MS, then the file is read as
 * it is (appends are one write(2) each and a torn last line is no
 * record: at worst a row is missing from one answer).  0, or -1 (err
 * set) when StateDir is unsafe; missing means no records.
 */
#define CBB_PEEK_LOCK_MS 100

static int recs_peek(const cbb_config_t *cfg, const char *cluster,
		     uint32_t job_id, const char *what, uint32_t restart,
		     int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48], *text;
	struct stat st;
	unsigned waited;
	size_t len;
	int dfd, fd;

	out->v = NULL;
	out->n = 0;
	if (lstat(cbb_conf_state_dir(cfg), &st) < 0 && errno == ENOENT)
		return 0;
	dfd = dir_open(cfg, false, err);
	if (dfd < 0)
		return -1;
	name_of(name, sizeof(name), cluster, job_id, what);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	close(dfd);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	for (waited = 0; flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	     errno == EWOULDBLOCK && waited < CBB_PEEK_LOCK_MS; waited += 10)
		usleep(10000);
	text = read_all(fd, RECS_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return 0;
	(void)parse_recs(text, len, restart, submit, out, NULL);
	free(text);
	return 0;
}

int cbb_skips_peek(const cbb_config_t *cfg, const char *cluster,
		   uint32_t job_id, cbb_recs_t *out, cbb_err_t *err)
{
	return recs_peek(cfg, cluster, job_id, "skipped", UINT32_MAX, 0, out,
			 err);
}

uint32_t cbb_joined_array_peek(const cbb_config_t *cfg, const char *cluster,
			       uint32_t job_id)
{
	cbb_recs_t own;
	cbb_err_t err;
	size_t i;
	long a = 0;

	cbb_err_clear(&err);
	if (recs_peek(cfg, cluster, job_id, "started", UINT32_MAX, 0, &own,
		      &err) < 0)
		return 0;
	for (i = 0; i < own.n; i++)
		if (own.v[i].kind == CBB_REC_JOINED)
			a = strtol(own.v[i].id, NULL, 10);
	cbb_recs_free(&own);
	return a > 0 && a <= (long)UINT32_MAX ? (uint32_t)a : 0;
}

unsigned cbb_shared_tasks_peek(const cbb_config_t *cfg, const char *cluster,
			       uint32_t array_job_id)
{
	cbb_recs_t r;
	cbb_err_t err;
	size_t i, k;
	unsigned n = 0;

	cbb_err_clear(&err);
	if (!array_job_id || recs_peek(cfg, cluster, array_job_id, "shared",
				       UINT32_MAX, 0, &r, &err) < 0)
		return 0;
	for (i = 0; i < r.n; i++) {
		if (r.v[i].kind != CBB_REC_JOINED)
			continue;
		for (k = 0; k < i; k++)
			if (r.v[k].kind == CBB_REC_JOINED &&
			    !strcmp(r.v[k].id, r.v[i].id))
				break;
		n += k == i;
	}
	cbb_recs_free(&r);
	return n;
}

void cbb_over_mark(const cbb_config_t *cfg, const char *cluster,
		   uint32_t job_id, time_t asked_at)
{
	char buf[32];
	int fd, n;

	fd = state_open(cfg, cluster, job_id, "over",
			O_WRONLY | O_CREAT | O_TRUNC, NULL);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)asked_at);
	if (write(fd, buf, (size_t)n) != n)
		(void)ftruncate(fd, 0); /* an empty mark covers nothing */
	close(fd);
}

bool cbb_over_for(const cbb_config_t *cfg, const char *cluster,
		  uint32_t job_id, int64_t submit)
{
	long long t;

	return submit > 0 && read_time(cfg, cluster, job_id, "over", &t) &&
	       submit < t;
}

int cbb_recs_load(const cbb_config_t *cfg, const char *cluster,
		  uint32_t job_id, uint32_t restart, int64_t submit,
		  cbb_recs_t *out, cbb_err_t *err)
{
	return recs_load(cfg, cluster, job_id, "started", restart, submit,
			 out, err);
}

int cbb_skips_load(const cbb_config_t *cfg, const char *cluster,
		   uint32_t job_id, uint32_t restart, int64_t submit,
		   cbb_recs_t *out, cbb_err_t *err)
{
	return recs_load(cfg, cluster, job_id, "skipped", restart, submit,
			 out, err);
}

/* Append n records with one write(2) under the file's lock. */
static int recs_add(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id, const char *what, const cbb_rec_t *r,
		    size_t n, cbb_err_t *err)
{
	char one[256], *lines = one;
	size_t i, len = 0;
	ssize_t w;
	int fd, k;

	if (n == 0)
		return 0;
	if (n > 1 && !(lines = malloc(n * sizeof(one))))
		return cbb_err(err, "conduit_bb: out of memory");
	for (i = 0; i < n; i++) {
		k = rec_format(lines + len, sizeof(one), &r[i]);
		if (k <= 0 || (size_t)k >= sizeof(one)) {
			if (lines != one)
				free(lines);
			return cbb_err(err, "conduit_bb: cannot record transfer "
				       "%s", r[i].id);
		}
		len += (size_t)k;
	}
	fd = state_open(cfg, cluster, job_id, what,
			O_WRONLY | O_CREAT | O_APPEND, err);
	if (fd >= 0) {
		(void)flock(fd, LOCK_EX);
		w = write(fd, lines, len);
		close(fd);
	}
	if (lines != one)
		free(lines);
	if (fd < 0)
		return -1;
	if (w != (ssize_t)len)
		return cbb_err(err, "conduit_bb: cannot record %zu transfer(s) "
			       "in StateDir %s", n, cbb_conf_state_dir(cfg));
	return 0;
}

void cbb_recs_free(cbb_recs_t *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

bool cbb_ask_due(const cbb_config_t *cfg, const char *cluster,
		 uint32_t job_id, unsigned every_s)
{
	struct stat st;
	time_t now = time(NULL);
	int fd;

	fd = state_open(cfg, cluster, job_id, "asked", O_RDONLY, NULL);
	if (fd >= 0) {
		bool recent = fstat(fd, &st) == 0 && st.st_mtime <= now &&
			      now - st.st_mtime < (time_t)every_s;

		close(fd);
		if (recent)
			return false;
	}
	fd = state_open(cfg, cluster, job_id, "asked",
			O_WRONLY | O_CREAT | O_TRUNC, NULL);
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* mtime = now */
		close(fd);
	}
	return true;
}

int cbb_recs_add(const cbb_config_t *cfg, const char *cluster,
		 uint32_t job_id, const cbb_rec_t *r, size_t n, cbb_err_t *err)
{
	return recs_add(cfg, cluster, job_id, "started", r, n, err);
}

int cbb_skips_add(const cbb_config_t *cfg, const char *cluster,
		  uint32_t job_id, const cbb_rec_t *r, cbb_err_t *err)
{
	return recs_add(cfg, cluster, job_id, "skipped", r, 1, err);
}

int cbb_shared_load(const cbb_config_t *cfg, const char *cluster,
		    uint32_t array_job_id, cbb_recs_t *out, cbb_err_t *err)
{
	return recs_load(cfg, cluster, array_job_id, "shared", UINT32_MAX, 0,
			 out, err);
}

int cbb_shared_add(const cbb_config_t *cfg, const char *cluster,
		   uint32_t array_job_id, const cbb_rec_t *r, size_t n,
		   cbb_err_t *err)
{
	return recs_add(cfg, cluster, array_job_id, "shared", r, n, err);
}

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

static int lock_at(int dfd, const char *name, unsigned wait_ms)
{
	unsigned waited = 0, reopened = 0;
	int fd;

	for (;;) {
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0)
			return -1;
		while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK || waited >= wait_ms) {
				close(fd);
				return -1;
			}
			usleep(20000);
			waited += 20;
		}
		if (still_at_path(dfd, name, fd))
			return fd;
		close(fd); /* unlinked meanwhile: not the lock any more */
		if (++reopened > 100)
			return -1;
	}
}

int cbb_shared_lock(const cbb_config_t *cfg, const char *cluster,
		    uint32_t array_job_id, unsigned wait_ms)
{
	char name[CBB_CLUSTER_MAX + 48];
	cbb_err_t ignored;
	int dfd, fd;

	cbb_err_clear(&ignored);
	dfd = dir_open(cfg, true, &ignored);
	if (dfd < 0)
		return -1;
	name_of(name, sizeof(name), cluster, array_job_id, "shared-lock");
	fd = lock_at(dfd, name, wait_ms);
	if (fd >= 0)
		(void)futimens(fd, NULL); /* last used: what the sweep goes by */
	close(dfd);
	return fd;
}

void cbb_shared_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the lock */
}

void cbb_shared_forget(const cbb_config_t *cfg, const char *cluster,
		       uint32_t array_job_id)
{
	/* the caller holds the lock: nobody else is inside, and whoever
	 * waits on this file finds it gone and opens the path again */
	state_unlink(cfg, cluster, array_job_id, "shared");
	state_unlink(cfg, cluster, array_job_id, "shared-lock");
}

static bool has_suffix(const char *name, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(name + n - k, suffix, k);
}

/*
 * Remove *.skipped and *.shared files older than CBB_SKIPPED_KEEP_S, and
 * *.over marks older than CBB_OVER_KEEP_S.
 * They outlive a job's teardown on purpose (bbstat shows skipped
 * stage-outs after the job ends; an array's shared stage-ins serve tasks
 * that are still to come), so each teardown sweeps the old ones: one readdir of a
 * directory that holds only a few small files per recent job.
 */
static void sweep_old(const cbb_config_t *cfg)
{
	cbb_err_t ignored;
	struct dirent *e;
	struct stat st;
	time_t now = time(NULL);
	int dfd, fd;
	DIR *d;

	cbb_err_clear(&ignored);
	dfd = dir_open(cfg, false, &ignored);
	if (dfd < 0)
		return;
	fd = dup(dfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		time_t keep;

		if (has_suffix(e->d_name, n, ".skipped") ||
		    has_suffix(e->d_name, n, ".shared"))
			keep = CBB_SKIPPED_KEEP_S;
		else if (has_suffix(e->d_name, n, ".over"))
			keep = CBB_OVER_KEEP_S;
		else
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_mtime + keep < now)
			(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
	close(dfd);
}

void cbb_state_forget(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id)
{
	state_unlink(cfg, cluster, job_id, "down");
	state_unlink(cfg, cluster, job_id, "started");
	state_unlink(cfg, cluster, job_id, "asked");
	sweep_old(cfg);
}

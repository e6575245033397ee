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
/* After a failed write: leave the file empty rather than half-written (a
 * reader takes an empty file as no record; if even this fails, the reader's
 * line checks drop the torn tail). */
static void empty_file(int fd)
{
	if (ftruncate(fd, 0) != 0)
		return;
}

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

/*
 * "v1 restart submit type attempt index made kind id", or with the uid
 * of the task that wrote it (a JOINED record): "v2 ... kind id uid".
 */
static bool rec_parse(const char *line, size_t len, cbb_rec_t *r)
{
	char buf[256], kind[4];
	unsigned long rs, ty, at, ix, uid = 0;
	long long sub, made;
	int used = 0, v2;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	memset(r, 0, sizeof(*r));
	v2 = !strncmp(buf, "v2 ", 3);
	if ((v2 ? sscanf(buf, "v2 %lu %lld %lu %lu %lu %lld %3s %63s %lu%n",
			 &rs, &sub, &ty, &at, &ix, &made, kind, r->id, &uid,
			 &used) != 9 :
		  sscanf(buf, "v1 %lu %lld %lu %lu %lu %lld %3s %63s%n", &rs,
			 &sub, &ty, &at, &ix, &made, kind, r->id, &used) != 8) ||
	    (size_t)used != len || rs > 0xffffffffUL || ty > 3 ||
	    at > 0xffffffffUL || ix > 0xffffffffUL || uid > 0xffffffffUL ||
	    kind[1] ||
	    (kind[0] != CBB_REC_STARTED && kind[0] != CBB_REC_UNSURE &&
	     kind[0] != CBB_REC_LOST && kind[0] != CBB_REC_SKIPPED &&
	     kind[0] != CBB_REC_JOINED && kind[0] != CBB_REC_ACCOUNTED &&
	     kind[0] != CBB_REC_REFUSED && kind[0] != CBB_REC_NOTED))
		return false;
	r->restart = (uint32_t)rs;
	r->submit = sub;
	r->type = (int)ty;
	r->attempt = (uint32_t)at;
	r->index = (uint32_t)ix;
	r->made = made;
	r->kind = kind[0];
	r->has_uid = v2 != 0;
	r->uid = (uint32_t)uid;
	return true;
}

static int rec_format(char *buf, size_t size, const cbb_rec_t *r)
{
	if (r->has_uid)
		return snprintf(buf, size, "v2 %u %lld %d %u %u %lld %c %s %u\n",
				r->restart, (long long)r->submit, r->type,
				r->attempt, r->index, (long long)r->made,
				r->kind, r->id[0] ? r->id : "-", r->uid);
	return snprintf(buf, size, "v1 %u %lld %d %u %u %lld %c %s\n",
			r->restart, (long long)r->submit, r->type, r->attempt,
			r->index, (long long)r->made, r->kind,
			r->id[0] ? r->id : "-");
}

/*
 * An array's .shared file starts with the array it belongs to:
 * "a1 <submit> <uid>" (the tasks' first-attempt submit time, which
 * Slurm copies to every task it splits off, and the user).
 */
static bool header_parse(const char *line, size_t len, cbb_array_ident_t *a)
{
	char buf[64];
	long long sub;
	unsigned long uid;
	int used = 0;

	if (len >= sizeof(buf) || len < 3 || memcmp(line, "a1 ", 3))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "a1 %lld %lu%n", &sub, &uid, &used) != 2 ||
	    (size_t)used != len || sub < 0 || uid > 0xffffffffUL)
		return false;
	a->submit = sub;
	a->uid = (uint32_t)uid;
	return true;
}

/* Two identities that may be one array: unknown parts match anything. */
static bool ident_match(const cbb_array_ident_t *a, const cbb_array_ident_t *b)
{
	return (a->uid == b->uid || a->uid == CBB_UID_UNKNOWN ||
		b->uid == CBB_UID_UNKNOWN) &&
	       (a->submit == b->submit || !a->submit || !b->submit);
}

/* A record an array with identity `a` wrote (its submit time and uid). */
static bool rec_of_array(const cbb_rec_t *r, const cbb_array_ident_t *a)
{
	cbb_array_ident_t w;

	w.submit = r->submit;
	w.uid = r->has_uid ? r->uid : CBB_UID_UNKNOWN;
	return ident_match(&w, a);
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
		if (p == text && !strncmp(p, "a1 ", 3)) {
			if (keep) /* an array's identity (.shared) */
				(void)cbb_buf_add(keep, p, (size_t)(nl - p) + 1);
			continue;
		}
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
			empty_file(fd);
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

/* The identity at the head of a .shared file's text, if any. */
static bool text_header(const char *text, cbb_array_ident_t *a)
{
	const char *nl = strchr(text, '\n');

	return nl && header_parse(text, (size_t)(nl - text), a);
}

static int recs_peek(const cbb_config_t *cfg, const char *cluster,
		     uint32_t job_id, const char *what, uint32_t restart,
		     int64_t submit, cbb_recs_t *out, cbb_array_ident_t *hdr,
		     bool *has_hdr, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48], *text;
	struct stat st;
	unsigned waited;
	size_t len;
	int dfd, fd;

	out->v = NULL;
	out->n = 0;
	if (has_hdr)
		*has_hdr = false;
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
	if (has_hdr)
		*has_hdr = text_header(text, hdr);
	(void)parse_recs(text, len, restart, submit, out, NULL);
	free(text);
	return 0;
}

int cbb_skips_peek(const cbb_config_t *cfg, const char *cluster,
		   uint32_t job_id, cbb_recs_t *out, cbb_err_t *err)
{
	return recs_peek(cfg, cluster, job_id, "skipped", UINT32_MAX, 0, out,
			 NULL, NULL, err);
}

/*
 * The array a task's own records say it joined, and the identity of
 * that array (the join's submit time and uid): the last JOINED record
 * whose uid is `uid` (CBB_UID_UNKNOWN: any), 0 when none.
 */
static uint32_t joined_in(const cbb_recs_t *own, uint32_t uid,
			  cbb_array_ident_t *who)
{
	size_t i;
	long a = 0;

	for (i = 0; i < own->n; i++) {
		const cbb_rec_t *r = &own->v[i];
		long v;

		if (r->kind != CBB_REC_JOINED ||
		    (r->has_uid && uid != CBB_UID_UNKNOWN && r->uid != uid))
			continue;
		v = strtol(r->id, NULL, 10);
		if (v <= 0 || v > (long)UINT32_MAX)
			continue;
		a = v;
		if (who) {
			who->submit = r->submit;
			who->uid = r->has_uid ? r->uid : uid;
		}
	}
	return (uint32_t)a;
}

uint32_t cbb_joined_array_peek(const cbb_config_t *cfg, const char *cluster,
			       uint32_t job_id, cbb_array_ident_t *who)
{
	cbb_recs_t own;
	cbb_err_t err;
	uint32_t a;

	cbb_err_clear(&err);
	if (recs_peek(cfg, cluster, job_id, "started", UINT32_MAX, 0, &own,
		      NULL, NULL, &err) < 0)
		return 0;
	a = joined_in(&own, CBB_UID_UNKNOWN, who);
	cbb_recs_free(&own);
	return a;
}

uint32_t cbb_joined_of(const cbb_config_t *cfg, const char *cluster,
		       uint32_t job_id, uint32_t uid, cbb_array_ident_t *who)
{
	cbb_recs_t own;
	cbb_err_t err;
	uint32_t a;

	cbb_err_clear(&err);
	if (cbb_recs_load(cfg, cluster, job_id, UINT32_MAX, 0, &own, &err) < 0)
		return 0;
	a = joined_in(&own, uid, who);
	cbb_recs_free(&own);
	return a;
}

/* Distinct tasks that joined, of the array `who` only. */
static unsigned count_joined(const cbb_recs_t *r, const cbb_array_ident_t *who)
{
	size_t i, k;
	unsigned n = 0;

	for (i = 0; i < r->n; i++) {
		if (r->v[i].kind != CBB_REC_JOINED || !rec_of_array(&r->v[i], who))
			continue;
		for (k = 0; k < i; k++)
			if (r->v[k].kind == CBB_REC_JOINED &&
			    rec_of_array(&r->v[k], who) &&
			    !strcmp(r->v[k].id, r->v[i].id))
				break;
		n += k == i;
	}
	return n;
}

unsigned cbb_shared_tasks_peek(const cbb_config_t *cfg, const char *cluster,
			       uint32_t array_job_id,
			       const cbb_array_ident_t *who)
{
	cbb_array_ident_t hdr;
	cbb_recs_t r;
	cbb_err_t err;
	bool has_hdr;
	unsigned n;

	cbb_err_clear(&err);
	if (!array_job_id || !who ||
	    recs_peek(cfg, cluster, array_job_id, "shared", UINT32_MAX, 0, &r,
		      &hdr, &has_hdr, &err) < 0)
		return 0;
	n = has_hdr && !ident_match(&hdr, who) ? 0 : count_joined(&r, who);
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
		empty_file(fd); /* an empty mark covers nothing */
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

int cbb_shared_load_of(const cbb_config_t *cfg, const char *cluster,
		       uint32_t array_job_id, const cbb_array_ident_t *who,
		       cbb_recs_t *out, bool *foreign, cbb_err_t *err)
{
	cbb_array_ident_t hdr;
	bool has_hdr;
	cbb_recs_t peek;
	size_t i, n = 0;

	*foreign = false;
	if (recs_load(cfg, cluster, array_job_id, "shared", UINT32_MAX, 0, out,
		      err) < 0)
		return -1;
	/* (the caller holds the array's lock: nobody changes the file) */
	if (recs_peek(cfg, cluster, array_job_id, "shared", UINT32_MAX, 0,
		      &peek, &hdr, &has_hdr, err) == 0) {
		cbb_recs_free(&peek);
		if (has_hdr && !ident_match(&hdr, who))
			*foreign = true;
	}
	for (i = 0; i < out->n; i++)
		if (!*foreign && rec_of_array(&out->v[i], who))
			out->v[n++] = out->v[i];
	out->n = n;
	return 0;
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

/*
 * Under the array's lock: make the .shared file the array `who`'s.  The
 * file of another array that had this id (another user, or an earlier
 * submit time: Slurm hands ids out again) is emptied, and records
 * without an identity (older conduit_bb) are kept only when their submit
 * time is the array's; the file then starts with `who`.  A file of a
 * later array is left alone: the file only ever moves to a later array,
 * so two tasks can never take it from each other in turn.
 */
static void shared_claim(int dfd, const char *name, const cbb_array_ident_t *who)
{
	cbb_array_ident_t hdr;
	cbb_recs_t recs;
	cbb_buf_t out;
	char *text, line[256];
	size_t len, i;
	bool has;
	int fd;

	if (!who->submit && who->uid == CBB_UID_UNKNOWN)
		return; /* nothing to claim it for */
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	(void)flock(fd, LOCK_EX);
	text = read_all(fd, RECS_MAX_BYTES, &len);
	if (!text) {
		close(fd);
		return;
	}
	has = text_header(text, &hdr);
	if ((has && ident_match(&hdr, who)) ||
	    (has && hdr.uid == who->uid && who->submit &&
	     hdr.submit > who->submit)) {
		free(text);
		close(fd);
		return;
	}
	cbb_buf_init(&out, RECS_MAX_BYTES);
	(void)cbb_buf_printf(&out, "a1 %lld %u\n", (long long)who->submit,
			     who->uid);
	if (!has) {
		(void)parse_recs(text, len, UINT32_MAX, 0, &recs, NULL);
		for (i = 0; i < recs.n; i++)
			if (rec_of_array(&recs.v[i], who) &&
			    rec_format(line, sizeof(line), &recs.v[i]) > 0)
				(void)cbb_buf_adds(&out, line);
		cbb_recs_free(&recs);
	}
	if (ftruncate(fd, 0) == 0 &&
	    pwrite(fd, out.data, out.len, 0) != (ssize_t)out.len)
		empty_file(fd);
	cbb_buf_free(&out);
	free(text);
	close(fd);
}

int cbb_shared_lock(const cbb_config_t *cfg, const char *cluster,
		    uint32_t array_job_id, const cbb_array_ident_t *claim,
		    unsigned wait_ms)
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
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* last used: what the sweep goes by */
		if (claim) {
			name_of(name, sizeof(name), cluster, array_job_id,
				"shared");
			shared_claim(dfd, name, claim);
		}
	}
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

/* A file that is younger than `keep` seconds (or whose age is unknown). */
static bool young(int dfd, const char *name, time_t keep, time_t now,
		  bool *there)
{
	struct stat st;

	*there = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!*there)
		return errno != ENOENT;
	return !S_ISREG(st.st_mode) || st.st_mtime + keep >= now;
}

/*
 * An array's old .shared and .shared-lock (`base` is "<cluster>.<id>"):
 * removed together, only when both are older than CBB_SKIPPED_KEEP_S
 * (or missing) and under the array's lock (never from under a task
 * that holds it; a task that waited on it opens the path again).
 */
static void sweep_shared(int dfd, const char *base, time_t now)
{
	char lock[512], recs[512];
	bool lock_there, recs_there;
	struct stat st;
	int fd;

	if ((size_t)snprintf(lock, sizeof(lock), "%s.shared-lock", base) >=
		    sizeof(lock) ||
	    (size_t)snprintf(recs, sizeof(recs), "%s.shared", base) >=
		    sizeof(recs))
		return;
	if (young(dfd, lock, CBB_SKIPPED_KEEP_S, now, &lock_there) ||
	    young(dfd, recs, CBB_SKIPPED_KEEP_S, now, &recs_there) ||
	    (!lock_there && !recs_there))
		return;
	fd = lock_at(dfd, lock, 0);
	if (fd < 0)
		return; /* in use */
	/* used since we looked (a holder stamps the lock file)? */
	if ((lock_there && (fstat(fd, &st) < 0 ||
			    st.st_mtime + CBB_SKIPPED_KEEP_S >= now)) ||
	    young(dfd, recs, CBB_SKIPPED_KEEP_S, now, &recs_there)) {
		close(fd);
		return;
	}
	(void)unlinkat(dfd, recs, 0);
	(void)unlinkat(dfd, lock, 0);
	close(fd);
}

/*
 * Remove *.skipped files older than CBB_SKIPPED_KEEP_S, an array's
 * *.shared records and *.shared-lock file when both are that old (under
 * the array's lock), and *.over marks older than CBB_OVER_KEEP_S.
 * They outlive a job's teardown on purpose (bbstat shows skipped
 * stage-outs after the job ends; an array's shared stage-ins serve tasks
 * that are still to come), so each teardown sweeps the old ones: one
 * readdir of a directory that holds only a few small files per recent
 * job.
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
		char base[256];
		time_t keep;

		if (has_suffix(e->d_name, n, ".shared") ||
		    has_suffix(e->d_name, n, ".shared-lock")) {
			size_t k = n - (has_suffix(e->d_name, n, ".shared") ?
					strlen(".shared") :
					strlen(".shared-lock"));

			if (k < sizeof(base)) {
				memcpy(base, e->d_name, k);
				base[k] = '\0';
				sweep_shared(dfd, base, now);
			}
			continue;
		}
		if (has_suffix(e->d_name, n, ".skipped"))
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

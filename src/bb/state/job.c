/*
 * job.c - one job's files in StateDir (statefile.h): the record format,
 * one line per record, "v1 ..." or "v2 ... uid" (an array's .shared file
 * headed by "a1 <submit> <uid>"); which records are this job's; loading
 * them (dropping and rewriting away another job's), peeking at them
 * from inside slurmctld, and appending under the file's lock; the
 * one-value marks (.down, .asked, .over) and the job's own lock; and what
 * a stage hook's pass reads and writes at once (cbb_sd_job_read,
 * cbb_sd_job_append), each through one look-up of StateDir.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state_int.h"

/*
 * Records for a caller inside slurmctld (get_status): read only.  No
 * StateDir is created, no file is written or rewritten, and a writer's
 * lock is waited for at most CBB_PEEK_LOCK_MS, then the file is read as
 * it is (appends are one write(2) each and a torn last line is no
 * record: at worst a row is missing from one answer).  0, or -1 (err
 * set) when StateDir is unsafe; missing means no records.
 */
#define CBB_PEEK_LOCK_MS 100

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
	    (size_t)used != len || rs > 0xffffffffUL || ty >= CBB_KEY_NTYPES ||
	    at > 0xffffffffUL || ix > 0xffffffffUL || uid > 0xffffffffUL ||
	    kind[1] ||
	    (kind[0] != CBB_REC_STARTED && kind[0] != CBB_REC_UNSURE &&
	     kind[0] != CBB_REC_LOST && kind[0] != CBB_REC_SKIPPED &&
	     kind[0] != CBB_REC_JOINED && kind[0] != CBB_REC_ACCOUNTED &&
	     kind[0] != CBB_REC_REFUSED && kind[0] != CBB_REC_NOTED &&
	     kind[0] != CBB_REC_OWNER && kind[0] != CBB_REC_ASIDE_NAME))
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

int cbb_sf_rec_format(char *buf, size_t size, const cbb_rec_t *r)
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
bool cbb_sf_ident_match(const cbb_array_ident_t *a, const cbb_array_ident_t *b)
{
	return (a->uid == b->uid || a->uid == CBB_UID_UNKNOWN ||
		b->uid == CBB_UID_UNKNOWN) &&
	       (a->submit == b->submit || !a->submit || !b->submit);
}

/* A record an array with identity `a` wrote (its submit time and uid). */
bool cbb_sf_rec_of_array(const cbb_rec_t *r, const cbb_array_ident_t *a)
{
	cbb_array_ident_t w;

	w.submit = r->submit;
	w.uid = r->has_uid ? r->uid : CBB_UID_UNKNOWN;
	return cbb_sf_ident_match(&w, a);
}

/*
 * A record of this job, not of an earlier job that had the same id.
 * Slurm gives every run attempt a new submit time, so within one restart
 * count the submit time must match, with one exception: the stage-out of
 * a requeued attempt (written as attempt restart-1) starts under the old
 * submit time, and Slurm changes it while that stage-out still runs (the
 * same holds for a move-aside that stage-out's directive waits on).
 */
static bool rec_ours(const cbb_rec_t *r, uint32_t restart, int64_t submit)
{
	if (r->restart > restart)
		return false;
	if (r->restart < restart || !submit || !r->submit ||
	    r->submit == submit)
		return true;
	/* (and the move-asides that stage-out waits on) */
	return (r->type == CBB_KEY_POST || r->type == CBB_KEY_ASIDE) &&
	       r->attempt + 1 == r->restart;
}

/*
 * The records of `text` that belong to this job (rec_ours) into out;
 * with `keep`, their lines too (for a rewrite).  The number of lines
 * dropped: damaged, or another job's.
 */
size_t cbb_sf_parse_recs(const char *text, size_t len, uint32_t restart,
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

/* ---- one file of a job, at StateDir's fd -------------------------- */

/*
 * <cluster>.<job>.<what> in buf (the handle's cluster is as in file
 * names already).
 */
static void name_of(char *buf, size_t size, const cbb_statedir_t *sd,
		    uint32_t job_id, const char *what)
{
	snprintf(buf, size, "%s.%u.%s", sd->cluster, job_id, what);
}

/* StateDir's fd (made when `create`) and the name of a file of the job
 * in it; -1 when StateDir is missing or unusable. */
static int job_at(cbb_statedir_t *sd, bool create, uint32_t job_id,
		  const char *what, char *name, size_t size)
{
	cbb_err_t ignored;
	int dfd;

	/* named first: the look-up of StateDir is the last step */
	name_of(name, size, sd, job_id, what);
	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, create, &ignored);
	return dfd;
}

/* The records of one file, under its lock, another job's rewritten away. */
static void load_at(int dfd, const char *name, uint32_t restart,
		    int64_t submit, cbb_recs_t *out)
{
	cbb_buf_t keep;
	char *text;
	size_t len, dropped;
	int fd;

	out->v = NULL;
	out->n = 0;
	fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)flock(fd, LOCK_EX);
	text = cbb_sf_read_all(fd, RECS_MAX_BYTES, &len);
	if (text) {
		cbb_buf_init(&keep, RECS_MAX_BYTES);
		dropped = cbb_sf_parse_recs(text, len, restart, submit, out,
					    &keep);
		/* rewrite in place, still under the lock */
		if (dropped && out->v && ftruncate(fd, 0) == 0 && keep.len &&
		    pwrite(fd, keep.data, keep.len, 0) != (ssize_t)keep.len)
			cbb_sf_empty(fd);
		cbb_buf_free(&keep);
		free(text);
	}
	close(fd);
}

/* Append formatted lines to one file, under its lock. */
static int append_at(int dfd, const char *name, const cbb_rec_t *r, size_t n,
		     cbb_err_t *err)
{
	char one[256], *lines = one;
	size_t i, len = 0;
	ssize_t w = -1;
	int fd, k;

	if (n == 0)
		return 0;
	if (n > 1 && !(lines = malloc(n * sizeof(one))))
		return cbb_err(err, "conduit_bb: out of memory");
	for (i = 0; i < n; i++) {
		k = cbb_sf_rec_format(lines + len, sizeof(one), &r[i]);
		if (k <= 0 || (size_t)k >= sizeof(one)) {
			if (lines != one)
				free(lines);
			return cbb_err(err, "conduit_bb: cannot record transfer "
				       "%s", r[i].id);
		}
		len += (size_t)k;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)flock(fd, LOCK_EX);
		w = write(fd, lines, len);
		close(fd);
	}
	if (lines != one)
		free(lines);
	if (w != (ssize_t)len)
		return cbb_err(err, "conduit_bb: cannot record %zu transfer(s) "
			       "in StateDir (%s): %s", n, name,
			       fd < 0 ? strerror(errno) : "short write");
	return 0;
}

int cbb_sf_recs_load(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		     uint32_t restart, int64_t submit, cbb_recs_t *out,
		     cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd;

	out->v = NULL;
	out->n = 0;
	if (cbb_sf_dir(sd, true, err) < 0)
		return -1;
	dfd = job_at(sd, true, job_id, what, name, sizeof(name));
	if (dfd >= 0)
		load_at(dfd, name, restart, submit, out);
	return 0;
}

/* The identity at the head of a .shared file's text, if any. */
bool cbb_sf_text_header(const char *text, cbb_array_ident_t *a)
{
	const char *nl = strchr(text, '\n');

	return nl && header_parse(text, (size_t)(nl - text), a);
}

int cbb_sf_recs_peek(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		     uint32_t restart, int64_t submit, cbb_recs_t *out,
		     cbb_array_ident_t *hdr, bool *has_hdr, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48], *text;
	struct stat st;
	long long end;
	size_t len;
	int dfd, fd;

	out->v = NULL;
	out->n = 0;
	if (has_hdr)
		*has_hdr = false;
	if (!sd->open && lstat(cbb_conf_state_dir(sd->cfg), &st) < 0 &&
	    errno == ENOENT)
		return 0;
	dfd = cbb_sf_at(sd, false, job_id, what, name, sizeof(name), err);
	if (dfd < 0)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	/* a writer holds it only for one append: wait that long, by the
	 * clock (naps on a loaded host take longer than asked) */
	end = cbb_sf_mono_ms() + CBB_PEEK_LOCK_MS;
	while (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK &&
	       cbb_sf_mono_ms() < end)
		usleep(10000);
	text = cbb_sf_read_all(fd, RECS_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return 0;
	if (has_hdr)
		*has_hdr = cbb_sf_text_header(text, hdr);
	(void)cbb_sf_parse_recs(text, len, restart, submit, out, NULL);
	free(text);
	return 0;
}

int cbb_recs_try_load(cbb_statedir_t *sd, uint32_t job_id, cbb_recs_t *out,
		      cbb_err_t *err)
{
	char *text;
	size_t len;
	int fd;

	out->v = NULL;
	out->n = 0;
	fd = cbb_sf_open(sd, job_id, CBB_SF(STARTED), O_RDONLY | O_NONBLOCK, err);
	if (fd < 0)
		return err && err->msg[0] ? -1 : 0;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		close(fd); /* its own hooks are at it: not ours to wait on */
		return 0;
	}
	text = cbb_sf_read_all(fd, RECS_MAX_BYTES, &len);
	close(fd);
	if (!text)
		return 0;
	(void)cbb_sf_parse_recs(text, len, UINT32_MAX, 0, out, NULL);
	free(text);
	return out->v ? 1 : 0;
}

int cbb_skips_peek(cbb_statedir_t *sd, uint32_t job_id, cbb_recs_t *out,
		   cbb_err_t *err)
{
	return cbb_sf_recs_peek(sd, job_id, CBB_SF(SKIPPED), UINT32_MAX, 0, out,
			 NULL, NULL, err);
}

uint32_t cbb_sf_uid_peek(cbb_statedir_t *sd, uint32_t job_id, const char *what)
{
	uint32_t uid = CBB_UID_UNKNOWN;
	cbb_recs_t r;
	cbb_err_t err;
	size_t i;

	cbb_err_clear(&err);
	if (cbb_sf_recs_peek(sd, job_id, what, UINT32_MAX, 0, &r, NULL, NULL,
			     &err) < 0)
		return CBB_UID_UNKNOWN;
	for (i = 0; i < r.n; i++)
		if (r.v[i].has_uid && r.v[i].kind != CBB_REC_JOINED)
			uid = r.v[i].uid;
	cbb_recs_free(&r);
	return uid;
}

uint32_t cbb_job_uid_peek(cbb_statedir_t *sd, uint32_t job_id)
{
	uint32_t uid = cbb_sf_uid_peek(sd, job_id, CBB_SF(STARTED));

	return uid != CBB_UID_UNKNOWN ? uid :
	       cbb_sf_uid_peek(sd, job_id, CBB_SF(SKIPPED));
}

int cbb_recs_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		  int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	return cbb_sf_recs_load(sd, job_id, CBB_SF(STARTED), restart, submit,
			 out, err);
}

int cbb_skips_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		   int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	return cbb_sf_recs_load(sd, job_id, CBB_SF(SKIPPED), restart, submit,
			 out, err);
}

/* Append n records with one write(2) under the file's lock. */
int cbb_sf_recs_add(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		    const cbb_rec_t *r, size_t n, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd;

	if (n == 0)
		return 0;
	if (cbb_sf_dir(sd, true, err) < 0)
		return -1;
	dfd = job_at(sd, true, job_id, what, name, sizeof(name));
	return dfd < 0 ? cbb_err(err, "conduit_bb: StateDir is unusable") :
			 append_at(dfd, name, r, n, err);
}

void cbb_recs_free(cbb_recs_t *r)
{
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

int cbb_recs_add(cbb_statedir_t *sd, uint32_t job_id, const cbb_rec_t *r,
		 size_t n, cbb_err_t *err)
{
	return cbb_sf_recs_add(sd, job_id, CBB_SF(STARTED), r, n, err);
}

int cbb_skips_add(cbb_statedir_t *sd, uint32_t job_id, const cbb_rec_t *r,
		  cbb_err_t *err)
{
	return cbb_sf_recs_add(sd, job_id, CBB_SF(SKIPPED), r, 1, err);
}

/* ---- the marks and the job's lock (one value a file) ---------------- */

/* Write "<t>\n" to a mark (made 0600, never through a link). */
static int mark_at(int dfd, const char *name, int flags, long long t)
{
	char buf[32];
	int fd, n;

	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
		    flags, 0600);
	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%lld\n", t);
	if (write(fd, buf, (size_t)n) != n)
		cbb_sf_empty(fd); /* an empty mark covers nothing */
	close(fd);
	return 0;
}

time_t cbb_down_since(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	time_t now = time(NULL);
	long long t;
	int dfd = job_at(sd, true, job_id, CBB_SF(DOWN), name, sizeof(name));

	/* O_EXCL: the first process to see the outage writes the time */
	if (dfd < 0 || mark_at(dfd, name, O_EXCL, (long long)now) == 0)
		return now;
	if (errno != EEXIST)
		return now;
	t = cbb_sd_time_at(dfd, name);
	return t > 0 && t <= now ? (time_t)t : now;
}

time_t cbb_down_peek(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	time_t now = time(NULL);
	long long t;
	int dfd = job_at(sd, false, job_id, CBB_SF(DOWN), name, sizeof(name));

	t = dfd < 0 ? 0 : cbb_sd_time_at(dfd, name);
	return t > 0 ? (time_t)(t <= now ? t : now) : 0;
}

void cbb_down_clear(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, false, job_id, CBB_SF(DOWN), name, sizeof(name));

	if (dfd >= 0)
		(void)unlinkat(dfd, name, 0);
}

void cbb_over_mark(cbb_statedir_t *sd, uint32_t job_id, time_t asked_at)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, true, job_id, CBB_SF(OVER), name, sizeof(name));

	if (dfd >= 0)
		(void)mark_at(dfd, name, O_TRUNC, (long long)asked_at);
}

/* Whether an over mark of time t covers the attempt submitted at
 * `submit` (statefile.h: only one submitted before that second). */
static bool covers(long long t, int64_t submit)
{
	return submit > 0 && t > 0 && submit < t;
}

void cbb_unlaunched_mark(cbb_statedir_t *sd, uint32_t job_id, uint32_t attempt)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, true, job_id, CBB_SF(UNLAUNCHED), name,
			 sizeof(name));

	/* (attempt + 1: an empty or zero mark covers nothing) */
	if (dfd >= 0)
		(void)mark_at(dfd, name, O_TRUNC, (long long)attempt + 1);
}

bool cbb_unlaunched_for(cbb_statedir_t *sd, uint32_t job_id, uint32_t attempt)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, false, job_id, CBB_SF(UNLAUNCHED), name,
			 sizeof(name));

	return dfd >= 0 && cbb_sd_time_at(dfd, name) == (long long)attempt + 1;
}

void cbb_outdone_mark(cbb_statedir_t *sd, uint32_t job_id, int64_t submit)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, true, job_id, CBB_SF(OUTDONE), name, sizeof(name));

	if (dfd >= 0 && submit > 0)
		(void)mark_at(dfd, name, O_TRUNC, (long long)submit);
}

bool cbb_outdone_for(cbb_statedir_t *sd, uint32_t job_id, int64_t submit)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, false, job_id, CBB_SF(OUTDONE), name,
			 sizeof(name));

	return dfd >= 0 && submit > 0 && cbb_sd_time_at(dfd, name) == submit;
}

bool cbb_over_for(cbb_statedir_t *sd, uint32_t job_id, int64_t submit)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, false, job_id, CBB_SF(OVER), name, sizeof(name));

	return dfd >= 0 && covers(cbb_sd_time_at(dfd, name), submit);
}

bool cbb_ask_due(cbb_statedir_t *sd, uint32_t job_id, unsigned every_s)
{
	char name[CBB_CLUSTER_MAX + 48];
	struct stat st;
	time_t now = time(NULL);
	int dfd = job_at(sd, true, job_id, CBB_SF(ASKED), name, sizeof(name)), fd;

	if (dfd < 0)
		return true;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_mtime <= now &&
	    now - st.st_mtime < (time_t)every_s)
		return false;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* mtime = now */
		close(fd);
	}
	return true;
}

int cbb_job_lock(cbb_statedir_t *sd, uint32_t job_id, unsigned wait_ms)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = job_at(sd, true, job_id, CBB_SF(LOCK), name, sizeof(name));

	return dfd < 0 ? -1 : cbb_sf_lock_at(dfd, name, wait_ms);
}

/*
 * The records of a job's .started file, appended to its .skipped file
 * (both under their locks; nothing when the two would pass the records'
 * size cap, which a reader would refuse whole).  A job that Slurm
 * requeues after its teardown (scontrol requeue of a finished job) still
 * knows which earlier transfers were its own: a requeue moves aside only
 * those (requeue.c), and only the places they created.
 */
static void keep_started(int dfd, const char *started, const char *skipped)
{
	struct stat st;
	char *text;
	size_t len;
	int in, out;

	in = openat(dfd, started, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return;
	(void)flock(in, LOCK_SH);
	text = cbb_sf_read_all(in, RECS_MAX_BYTES, &len);
	close(in);
	if (!text)
		return;
	out = openat(dfd, skipped, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
		     O_CLOEXEC, 0600);
	if (out >= 0) {
		(void)flock(out, LOCK_EX);
		if (fstat(out, &st) == 0 && S_ISREG(st.st_mode) && len &&
		    (size_t)st.st_size + len < RECS_MAX_BYTES &&
		    write(out, text, len) != (ssize_t)len)
			cbb_sf_empty(out);
		close(out);
	}
	free(text);
}

/*
 * Forget the started/down/asked/lock files of a job that is over (its
 * .skipped file stays for bbstat, with the job's user: root's bbstat asks
 * Conduit as that user, and the records of what it started: a requeue
 * after the teardown reads them back, cbb_sd_job_read), and sweep old
 * .skipped files.
 */
void cbb_sd_forget(cbb_statedir_t *sd, uint32_t job_id)
{

	char name[CBB_CLUSTER_MAX + 48];
	uint32_t uid = cbb_sf_uid_peek(sd, job_id, CBB_SF(STARTED));
	cbb_err_t ignored;
	size_t i;
	int dfd;

	cbb_err_clear(&ignored);
	dfd = job_at(sd, false, job_id, CBB_SF(SKIPPED), name, sizeof(name));
	if (dfd < 0)
		return;
	if (uid != CBB_UID_UNKNOWN) {
		cbb_rec_t r;

		memset(&r, 0, sizeof(r));
		r.made = (int64_t)time(NULL);
		r.kind = CBB_REC_OWNER;
		snprintf(r.id, sizeof(r.id), "-");
		r.has_uid = true;
		r.uid = uid;
		(void)append_at(dfd, name, &r, 1, &ignored);
	}
	{
		char started[CBB_CLUSTER_MAX + 48];

		name_of(started, sizeof(started), sd, job_id, CBB_SF(STARTED));
		keep_started(dfd, started, name);
	}
	/* what the teardown removes: the job's kinds kept for no time */
	for (i = 0; i < CBB_SDK_N; i++) {
		if (cbb_sd_kinds[i].keep_s || cbb_sd_kinds[i].array)
			continue;
		name_of(name, sizeof(name), sd, job_id, cbb_sd_kinds[i].suffix);
		(void)unlinkat(dfd, name, 0);
	}
	cbb_sd_sweep_old(sd);
}

/* ---- what a stage hook's pass reads and writes, at once ------------- */

/*
 * What an earlier teardown kept of the job's records (keep_started), for
 * a job Slurm requeued after it: added to `recs` (the .skipped file's own
 * kinds, skipped stage-outs and the owner, are not started records).
 */
static void kept_at(cbb_statedir_t *sd, int dfd, uint32_t job_id,
		    uint32_t restart, int64_t submit, cbb_recs_t *recs)
{
	char name[CBB_CLUSTER_MAX + 48];
	cbb_recs_t kept;
	cbb_rec_t *v;
	size_t i, n = 0;

	name_of(name, sizeof(name), sd, job_id, CBB_SF(SKIPPED));
	load_at(dfd, name, restart, submit, &kept);
	for (i = 0; i < kept.n; i++)
		if (kept.v[i].kind != CBB_REC_SKIPPED &&
		    kept.v[i].kind != CBB_REC_OWNER)
			kept.v[n++] = kept.v[i];
	if (n && (v = realloc(recs->v, (recs->n + n) * sizeof(*v)))) {
		/* the earlier attempts' first, as they were written */
		memmove(v + n, v, recs->n * sizeof(*v));
		memcpy(v, kept.v, n * sizeof(*v));
		recs->v = v;
		recs->n += n;
	}
	cbb_recs_free(&kept);
}

int cbb_sd_job_read(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		    int64_t submit, uint32_t array_job_id, cbb_sd_pass_t *out,
		    cbb_err_t *err)
{
	char started[CBB_CLUSTER_MAX + 48], shared[CBB_CLUSTER_MAX + 48];
	char down[CBB_CLUSTER_MAX + 48], over[CBB_CLUSTER_MAX + 48];
	long long t, now = (long long)time(NULL);
	int dfd;

	memset(out, 0, sizeof(*out));
	name_of(started, sizeof(started), sd, job_id, CBB_SF(STARTED));
	name_of(shared, sizeof(shared), sd, array_job_id, CBB_SF(SHARED));
	name_of(down, sizeof(down), sd, job_id, CBB_SF(DOWN));
	name_of(over, sizeof(over), sd, job_id, CBB_SF(OVER));
	dfd = cbb_sf_dir(sd, true, err);
	if (dfd < 0)
		return -1;
	load_at(dfd, started, restart, submit, &out->recs);
	kept_at(sd, dfd, job_id, restart, submit, &out->recs);
	if (array_job_id)
		load_at(dfd, shared, UINT32_MAX, 0, &out->shared);
	t = cbb_sd_time_at(dfd, down);
	out->down_since = t > now ? now : t;
	out->over = covers(cbb_sd_time_at(dfd, over), submit);
	return 0;
}

int cbb_sd_job_append(cbb_statedir_t *sd, uint32_t job_id,
		      const cbb_rec_t *own, size_t n_own,
		      uint32_t array_job_id, const cbb_rec_t *arr,
		      size_t n_arr, int64_t submit, bool *over, cbb_err_t *err)
{
	char started[CBB_CLUSTER_MAX + 48], shared[CBB_CLUSTER_MAX + 48];
	char mark[CBB_CLUSTER_MAX + 48];
	int dfd, rc = 0;

	*over = false;
	name_of(started, sizeof(started), sd, job_id, CBB_SF(STARTED));
	name_of(shared, sizeof(shared), sd, array_job_id, CBB_SF(SHARED));
	name_of(mark, sizeof(mark), sd, job_id, CBB_SF(OVER));
	dfd = cbb_sf_dir(sd, true, err);
	if (dfd < 0)
		return -1;
	rc = append_at(dfd, started, own, n_own, err);
	if (n_arr && array_job_id)
		rc |= append_at(dfd, shared, arr, n_arr, err);
	/* a hurried teardown that came meanwhile (cbb_over_for) */
	*over = covers(cbb_sd_time_at(dfd, mark), submit);
	return rc < 0 ? -1 : 0;
}

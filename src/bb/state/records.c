/*
 * statefile.c - the on-disk record format of StateDir (statefile.h):
 * one line per record, "v1 ..." or "v2 ... uid", an array's .shared file
 * headed by "a1 <submit> <uid>"; which records are this job's; loading
 * them (dropping and rewriting away another job's), peeking at them
 * from inside slurmctld, and appending under the file's lock.
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

int cbb_sf_recs_load(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		     uint32_t restart, int64_t submit, cbb_recs_t *out,
		     cbb_err_t *err)
{
	cbb_buf_t keep;
	char *text;
	size_t len, dropped;
	int fd;

	out->v = NULL;
	out->n = 0;
	if (cbb_sf_dir(sd, true, err) < 0)
		return -1;
	fd = cbb_sf_open(sd, job_id, what, O_RDWR, NULL);
	if (fd < 0)
		return 0;
	(void)flock(fd, LOCK_EX);
	text = cbb_sf_read_all(fd, RECS_MAX_BYTES, &len);
	if (!text) {
		close(fd);
		return 0;
	}
	cbb_buf_init(&keep, RECS_MAX_BYTES);
	dropped = cbb_sf_parse_recs(text, len, restart, submit, out, &keep);
	if (dropped && out->v) {
		/* rewrite in place, still under the lock */
		if (ftruncate(fd, 0) == 0 && keep.len &&
		    pwrite(fd, keep.data, keep.len, 0) != (ssize_t)keep.len)
			cbb_sf_empty(fd);
	}
	cbb_buf_free(&keep);
	free(text);
	close(fd);
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
	unsigned waited;
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
	for (waited = 0; flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	     errno == EWOULDBLOCK && waited < CBB_PEEK_LOCK_MS; waited += 10)
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
	fd = cbb_sf_open(sd, job_id, "started", O_RDONLY | O_NONBLOCK, err);
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
	return cbb_sf_recs_peek(sd, job_id, "skipped", UINT32_MAX, 0, out,
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
	uint32_t uid = cbb_sf_uid_peek(sd, job_id, "started");

	return uid != CBB_UID_UNKNOWN ? uid :
	       cbb_sf_uid_peek(sd, job_id, "skipped");
}

int cbb_recs_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		  int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	return cbb_sf_recs_load(sd, job_id, "started", restart, submit,
			 out, err);
}

int cbb_skips_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		   int64_t submit, cbb_recs_t *out, cbb_err_t *err)
{
	return cbb_sf_recs_load(sd, job_id, "skipped", restart, submit,
			 out, err);
}

/* Append n records with one write(2) under the file's lock. */
int cbb_sf_recs_add(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		    const cbb_rec_t *r, size_t n, cbb_err_t *err)
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
		k = cbb_sf_rec_format(lines + len, sizeof(one), &r[i]);
		if (k <= 0 || (size_t)k >= sizeof(one)) {
			if (lines != one)
				free(lines);
			return cbb_err(err, "conduit_bb: cannot record transfer "
				       "%s", r[i].id);
		}
		len += (size_t)k;
	}
	fd = cbb_sf_open(sd, job_id, what,
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
			       "in StateDir %s", n, cbb_conf_state_dir(sd->cfg));
	return 0;
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
	return cbb_sf_recs_add(sd, job_id, "started", r, n, err);
}

int cbb_skips_add(cbb_statedir_t *sd, uint32_t job_id, const cbb_rec_t *r,
		  cbb_err_t *err)
{
	return cbb_sf_recs_add(sd, job_id, "skipped", r, 1, err);
}

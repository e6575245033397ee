/*
 * state_shared.c - an array's shared stage-ins in StateDir: the .shared
 * records (headed by the array's identity), the tasks that joined, and
 * the array's lock (.shared-lock) that every start decision is taken
 * under.  statefile.h has the contract; the line format is
 * statefile.c's.
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

uint32_t cbb_joined_array_peek(cbb_statedir_t *sd, uint32_t job_id,
			       cbb_array_ident_t *who)
{
	cbb_recs_t own;
	cbb_err_t err;
	uint32_t a;

	cbb_err_clear(&err);
	if (cbb_sf_recs_peek(sd, job_id, CBB_SF(STARTED), UINT32_MAX, 0, &own,
		      NULL, NULL, &err) < 0)
		return 0;
	a = joined_in(&own, CBB_UID_UNKNOWN, who);
	cbb_recs_free(&own);
	return a;
}

uint32_t cbb_joined_of(cbb_statedir_t *sd, uint32_t job_id, uint32_t uid,
		       cbb_array_ident_t *who)
{
	cbb_recs_t own;
	cbb_err_t err;
	uint32_t a;

	cbb_err_clear(&err);
	if (cbb_recs_load(sd, job_id, UINT32_MAX, 0, &own, &err) < 0)
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
		if (r->v[i].kind != CBB_REC_JOINED || !cbb_sf_rec_of_array(&r->v[i], who))
			continue;
		for (k = 0; k < i; k++)
			if (r->v[k].kind == CBB_REC_JOINED &&
			    cbb_sf_rec_of_array(&r->v[k], who) &&
			    !strcmp(r->v[k].id, r->v[i].id))
				break;
		n += k == i;
	}
	return n;
}

unsigned cbb_shared_tasks_peek(cbb_statedir_t *sd, uint32_t array_job_id,
			       const cbb_array_ident_t *who)
{
	cbb_array_ident_t hdr;
	cbb_recs_t r;
	cbb_err_t err;
	bool has_hdr;
	unsigned n;

	cbb_err_clear(&err);
	if (!array_job_id || !who ||
	    cbb_sf_recs_peek(sd, array_job_id, CBB_SF(SHARED), UINT32_MAX, 0, &r,
		      &hdr, &has_hdr, &err) < 0)
		return 0;
	n = has_hdr && !cbb_sf_ident_match(&hdr, who) ? 0 : count_joined(&r, who);
	cbb_recs_free(&r);
	return n;
}

int cbb_shared_load(cbb_statedir_t *sd, uint32_t array_job_id, cbb_recs_t *out,
		    cbb_err_t *err)
{
	return cbb_sf_recs_load(sd, array_job_id, CBB_SF(SHARED), UINT32_MAX, 0,
			 out, err);
}

int cbb_shared_load_of(cbb_statedir_t *sd, uint32_t array_job_id,
		       const cbb_array_ident_t *who, cbb_recs_t *out,
		       bool *foreign, cbb_err_t *err)
{
	cbb_array_ident_t hdr;
	bool has_hdr;
	cbb_recs_t peek;
	size_t i, n = 0;

	*foreign = false;
	if (cbb_sf_recs_load(sd, array_job_id, CBB_SF(SHARED), UINT32_MAX, 0, out,
		      err) < 0)
		return -1;
	/* (the caller holds the array's lock: nobody changes the file) */
	if (cbb_sf_recs_peek(sd, array_job_id, CBB_SF(SHARED), UINT32_MAX, 0,
		      &peek, &hdr, &has_hdr, err) == 0) {
		cbb_recs_free(&peek);
		if (has_hdr && !cbb_sf_ident_match(&hdr, who))
			*foreign = true;
	}
	for (i = 0; i < out->n; i++)
		if (!*foreign && cbb_sf_rec_of_array(&out->v[i], who))
			out->v[n++] = out->v[i];
	out->n = n;
	return 0;
}

int cbb_shared_add(cbb_statedir_t *sd, uint32_t array_job_id,
		   const cbb_rec_t *r, size_t n, cbb_err_t *err)
{
	return cbb_sf_recs_add(sd, array_job_id, CBB_SF(SHARED), r, n, err);
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
static void shared_claim(int dfd, const char *name,
			 const cbb_array_ident_t *who)
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
	text = cbb_sf_read_all(fd, RECS_MAX_BYTES, &len);
	if (!text) {
		close(fd);
		return;
	}
	has = cbb_sf_text_header(text, &hdr);
	if ((has && cbb_sf_ident_match(&hdr, who)) ||
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
		(void)cbb_sf_parse_recs(text, len, UINT32_MAX, 0, &recs, NULL);
		for (i = 0; i < recs.n; i++)
			if (cbb_sf_rec_of_array(&recs.v[i], who) &&
			    cbb_sf_rec_format(line, sizeof(line), &recs.v[i]) > 0)
				(void)cbb_buf_adds(&out, line);
		cbb_recs_free(&recs);
	}
	if (ftruncate(fd, 0) == 0 &&
	    pwrite(fd, out.data, out.len, 0) != (ssize_t)out.len)
		cbb_sf_empty(fd);
	cbb_buf_free(&out);
	free(text);
	close(fd);
}

int cbb_shared_lock(cbb_statedir_t *sd, uint32_t array_job_id,
		    const cbb_array_ident_t *claim, unsigned wait_ms)
{
	char lock[CBB_CLUSTER_MAX + 48], name[CBB_CLUSTER_MAX + 48];
	cbb_err_t ignored;
	int dfd, fd;

	/* (the handle's cluster is as in file names already) */
	snprintf(lock, sizeof(lock), "%s.%u.shared-lock", sd->cluster,
		 array_job_id);
	snprintf(name, sizeof(name), "%s.%u.shared", sd->cluster, array_job_id);
	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, true, &ignored);
	if (dfd < 0)
		return -1;
	fd = cbb_sf_lock_at(dfd, lock, wait_ms);
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* last used: what the sweep goes by */
		if (claim)
			shared_claim(dfd, name, claim);
	}
	return fd;
}

void cbb_shared_forget(cbb_statedir_t *sd, uint32_t array_job_id)
{
	/* the caller holds the lock: nobody else is inside, and whoever
	 * waits on this file finds it gone and opens the path again */
	cbb_sf_unlink(sd, array_job_id, CBB_SF(SHARED));
	cbb_sf_unlink(sd, array_job_id, CBB_SF(SHARED_LOCK));
}

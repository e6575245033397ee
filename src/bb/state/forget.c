/*
 * forget.c - forgetting a job's files at its teardown, and the
 * sweep of what outlives teardowns on purpose (.skipped, .over, an
 * array's .shared and its lock) once it is old; and what the sweep for
 * other jobs' orphaned stage-ins (engine/sweep.c) asks of StateDir: which
 * jobs have records, and whether a sweep is due (the `sweep` file).
 */
#include <dirent.h>
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

	if ((size_t)snprintf(lock, sizeof(lock), "%s.%s", base, CBB_SF(SHARED_LOCK)) >=
		    sizeof(lock) ||
	    (size_t)snprintf(recs, sizeof(recs), "%s.%s", base, CBB_SF(SHARED)) >=
		    sizeof(recs))
		return;
	if (young(dfd, lock, CBB_SKIPPED_KEEP_S, now, &lock_there) ||
	    young(dfd, recs, CBB_SKIPPED_KEEP_S, now, &recs_there) ||
	    (!lock_there && !recs_there))
		return;
	fd = cbb_sf_lock_at(dfd, lock, 0);
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
 * the array's lock), *.over marks older than CBB_OVER_KEEP_S, and
 * *.outdone marks older than CBB_OUTDONE_KEEP_S (the table's keep_s).
 * They outlive a job's teardown on purpose (bbstat shows skipped
 * stage-outs after the job ends; an array's shared stage-ins serve tasks
 * that are still to come), so each teardown sweeps the old ones: one
 * readdir of a directory that holds only a few small files per recent
 * job.
 */
void cbb_sd_sweep_old(cbb_statedir_t *sd)
{
	cbb_err_t ignored;
	struct dirent *e;
	struct stat st;
	time_t now = time(NULL);
	int dfd, fd;
	DIR *d;

	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, false, &ignored);
	if (dfd < 0)
		return;
	fd = dup(dfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* (the copy shares the handle's offset: an earlier read left it at
	 * the end) */
	rewinddir(d);
	while ((e = readdir(d))) {
		size_t b = 0;
		char base[256];
		time_t keep;
		cbb_sd_kind_t k = cbb_sd_kind_of(e->d_name, &b);

		if (k == CBB_SDK_N || !cbb_sd_kinds[k].keep_s)
			continue;
		if (cbb_sd_kinds[k].array) {
			/* (an array's records and lock go together) */
			if (b < sizeof(base)) {
				memcpy(base, e->d_name, b);
				base[b] = '\0';
				sweep_shared(dfd, base, now);
			}
			continue;
		}
		keep = cbb_sd_kinds[k].keep_s;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_mtime + keep < now)
			(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

size_t cbb_sd_jobs_with(cbb_statedir_t *sd, cbb_sd_kind_t kind, uint32_t *ids,
			size_t max, time_t since)
{
	size_t n = 0, k = strlen(sd->cluster);
	const char *suffix = cbb_sd_kinds[kind].suffix;
	cbb_err_t ignored;
	struct dirent *e;
	struct stat st;
	int dfd, fd;
	DIR *d;

	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, false, &ignored);
	if (dfd < 0)
		return 0;
	fd = dup(dfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d); /* as in sweep_old */
	/* "<cluster>.<job>.<suffix>" (the handle's cluster is as in names) */
	while (n < max && (e = readdir(d))) {
		const char *p = e->d_name;
		unsigned long id;
		char *end;

		if (strncmp(p, sd->cluster, k) || p[k] != '.' ||
		    p[k + 1] < '0' || p[k + 1] > '9')
			continue;
		id = strtoul(p + k + 1, &end, 10);
		if (id == 0 || id > 0xffffffffUL || *end != '.' ||
		    strcmp(end + 1, suffix))
			continue;
		if (since && (fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			      !S_ISREG(st.st_mode) || st.st_mtime < since))
			continue;
		ids[n++] = (uint32_t)id;
	}
	closedir(d);
	return n;
}

size_t cbb_sd_jobs(cbb_statedir_t *sd, uint32_t *ids, size_t max)
{
	return cbb_sd_jobs_with(sd, CBB_SDK_STARTED, ids, max, 0);
}

bool cbb_sweep_due(cbb_statedir_t *sd, unsigned every_s, int *held)
{
	struct timespec ts;
	struct stat st;
	cbb_err_t ignored;
	long long now_ms, then_ms;
	int dfd, fd;

	*held = -1;
	cbb_err_clear(&ignored);
	dfd = cbb_sf_dir(sd, false, &ignored);
	if (dfd < 0)
		return false;
	fd = openat(dfd, "sweep", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return false;
	/* one sweeper at a time, and nobody waits for it */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	/* the last sweep's time to the millisecond (a mark in the future is
	 * a clock that went back: due); an empty file never swept */
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	now_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	then_ms = (long long)st.st_mtim.tv_sec * 1000 +
		  st.st_mtim.tv_nsec / 1000000;
	if (st.st_size > 0 && then_ms <= now_ms &&
	    now_ms - then_ms < (long long)every_s * 1000) {
		close(fd);
		return false;
	}
	if (pwrite(fd, "1\n", 2, 0) != 2 || futimens(fd, NULL) < 0) {
		close(fd);
		return false;
	}
	*held = fd;
	return true;
}

bool cbb_recs_stage_in_open(const cbb_recs_t *r, uint32_t *uid)
{
	bool any = false, ended = false;
	uint32_t last = 0;
	size_t i;

	*uid = CBB_UID_UNKNOWN;
	for (i = 0; i < r->n; i++) {
		const cbb_rec_t *x = &r->v[i];

		if (x->has_uid && x->kind != CBB_REC_JOINED)
			*uid = x->uid;
		if ((x->type == CBB_KEY_PRE && (x->kind == CBB_REC_STARTED ||
						x->kind == CBB_REC_UNSURE)) ||
		    x->kind == CBB_REC_JOINED) {
			any = true;
			if (x->restart > last)
				last = x->restart;
		}
	}
	for (i = 0; i < r->n && any; i++)
		ended = ended || (r->v[i].kind == CBB_REC_ACCOUNTED &&
				  r->v[i].type == CBB_KEY_PRE &&
				  r->v[i].restart >= last);
	return any && !ended;
}

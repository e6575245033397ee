/*
 * state_sweep.c - forgetting a job's files at its teardown, and the
 * sweep of what outlives teardowns on purpose (.skipped, .over, an
 * array's .shared and its lock) once it is old.
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
 * the array's lock), and *.over marks older than CBB_OVER_KEEP_S.
 * They outlive a job's teardown on purpose (bbstat shows skipped
 * stage-outs after the job ends; an array's shared stage-ins serve tasks
 * that are still to come), so each teardown sweeps the old ones: one
 * readdir of a directory that holds only a few small files per recent
 * job.
 */
static void sweep_old(cbb_statedir_t *sd)
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
}

void cbb_state_forget(cbb_statedir_t *sd, uint32_t job_id)
{
	cbb_sf_unlink(sd, job_id, "down");
	cbb_sf_unlink(sd, job_id, "started");
	cbb_sf_unlink(sd, job_id, "asked");
	cbb_sf_unlink(sd, job_id, "lock");
	sweep_old(sd);
}

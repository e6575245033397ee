/*
 * outplan.c - a job's stage-out plan in StateDir (statefile.h,
 * cbb_outplan_*): <cluster>.<job>.outplan, the text data_out saved of
 * what its stage-out is to do, so that a stage-out Slurm drops (a
 * data_out killed by a slurmctld restart is never run again) can be
 * finished without the job's script.  Written whole under a fresh name,
 * then renamed over the old one; read only when it is a regular file of
 * this process's user, mode 0600, within CBB_OUTPLAN_MAX bytes.  What
 * the text says is the stage code's (engine/lost.c); here it is bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "statefile.h"
#include "state_int.h"

int cbb_outplan_write(cbb_statedir_t *sd, uint32_t job_id, const char *text,
		      size_t len, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48], tmp[CBB_CLUSTER_MAX + 80];
	unsigned char rnd[6];
	int dfd, fd;
	bool ok;

	if (len > CBB_OUTPLAN_MAX)
		return cbb_err(err, "stage-out plan of %zu bytes is over %zu",
			       len, CBB_OUTPLAN_MAX);
	if ((dfd = cbb_sf_at(sd, true, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), err)) < 0)
		return -1;
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		return cbb_err(err, "no random bytes for a file name");
	/* (named .<cluster>.<job>.<random>.outplan: one a crash left behind
	 * is not a job's file, and never read) */
	snprintf(tmp, sizeof(tmp), ".%s.%" PRIu32 ".%02x%02x%02x%02x%02x%02x.%s",
		 sd->cluster, job_id, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5], CBB_SF(OUTPLAN));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return cbb_err(err, "cannot write %s: %s", tmp, strerror(errno));
	ok = write(fd, text, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		int e = errno;

		(void)unlinkat(dfd, tmp, 0);
		return cbb_err(err, "cannot write %s: %s", name, strerror(e));
	}
	return 0;
}

char *cbb_outplan_read(cbb_statedir_t *sd, uint32_t job_id, size_t *len)
{
	char name[CBB_CLUSTER_MAX + 48], *text;
	struct stat st;
	int dfd, fd;

	if ((dfd = cbb_sf_at(sd, false, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), NULL)) < 0)
		return NULL;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	/* only what this user wrote, and nobody else could have */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size > (off_t)CBB_OUTPLAN_MAX) {
		close(fd);
		return NULL;
	}
	text = cbb_sf_read_all(fd, CBB_OUTPLAN_MAX + 1, len);
	close(fd);
	return text;
}

bool cbb_outplan_exists(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	struct stat st;
	int dfd;

	if ((dfd = cbb_sf_at(sd, false, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), NULL)) < 0)
		return false;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

void cbb_outplan_touch(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd;

	if ((dfd = cbb_sf_at(sd, false, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), NULL)) >= 0)
		(void)utimensat(dfd, name, NULL, AT_SYMLINK_NOFOLLOW);
}

bool cbb_outplan_dropped(cbb_statedir_t *sd, uint32_t job_id, bool ended,
			 const char *slurm_state)
{
	char name[CBB_CLUSTER_MAX + 48];
	struct stat st;
	int dfd;

	if (ended)
		return true;
	/* STAGE_OUT with no stage-out hook of its own for that long: Slurm
	 * has no stage-out thread for it (a buffer it lost in a restart) */
	if (!slurm_state || strcmp(slurm_state, "STAGE_OUT") ||
	    (dfd = cbb_sf_at(sd, false, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), NULL)) < 0 ||
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return false;
	return time(NULL) - st.st_mtime >= CBB_OUTPLAN_QUIET_S;
}

size_t cbb_outplan_jobs(cbb_statedir_t *sd, uint32_t *ids, size_t max)
{
	return cbb_sd_jobs_with(sd, CBB_SDK_OUTPLAN, ids, max, 0);
}

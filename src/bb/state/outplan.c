/*
 * outplan.c - a job's stage-out plan in StateDir (statefile.h,
 * cbb_outplan_*): <cluster>.<job>.outplan, the text data_out saved of
 * what its stage-out is to do, so that a stage-out Slurm drops (a
 * data_out killed by a slurmctld restart is never run again) can be
 * finished without the job's script.  Replaced whole (cbb_sf_replace);
 * read only when private to this process's user (cbb_sf_open_private),
 * within CBB_OUTPLAN_MAX bytes.  What
 * the text says is the stage code's (engine/lost.c); here it is bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "statefile.h"
#include "state_int.h"

int cbb_outplan_write(cbb_statedir_t *sd, uint32_t job_id, const char *text,
		      size_t len, cbb_err_t *err)
{
	char name[CBB_CLUSTER_MAX + 48];
	cbb_sf_part_t part = { text, len };
	int dfd;

	if (len > CBB_OUTPLAN_MAX)
		return cbb_err(err, "stage-out plan of %zu bytes is over %zu",
			       len, CBB_OUTPLAN_MAX);
	if ((dfd = cbb_sf_at(sd, true, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), err)) < 0)
		return -1;
	if (cbb_sf_replace(dfd, name, CBB_SF(OUTPLAN), &part, 1) < 0)
		return cbb_err(err, "cannot write %s: %s", name,
			       strerror(errno));
	return 0;
}

char *cbb_outplan_read(cbb_statedir_t *sd, uint32_t job_id, size_t *len)
{
	char name[CBB_CLUSTER_MAX + 48], *text;
	struct stat st;
	int dfd, fd;

	if ((dfd = cbb_sf_at(sd, false, job_id, CBB_SF(OUTPLAN), name,
			     sizeof(name), NULL)) < 0 ||
	    (fd = cbb_sf_open_private(dfd, name, CBB_OUTPLAN_MAX, &st)) < 0)
		return NULL;
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

/*
 * state_marks.c - the one-value files of a job in StateDir: when the
 * server was first seen down (.down), when Slurm was last asked about
 * the job (.asked), and that a hurried teardown found the job over
 * (.over); and the job's own lock (.lock), for what two hooks of one
 * job must not decide at once.  statefile.h has the contract.
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

/* The time a state file holds ("%lld\n"); false when it holds none. */
static bool read_time(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		      long long *t)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	fd = cbb_sf_open(sd, job_id, what, O_RDONLY, NULL);
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

time_t cbb_down_since(cbb_statedir_t *sd, uint32_t job_id)
{
	char buf[32];
	time_t now = time(NULL);
	long long t;
	ssize_t n;
	int fd;

	/* O_EXCL: the first process to see the outage writes the time */
	fd = cbb_sf_open(sd, job_id, "down",
			O_WRONLY | O_CREAT | O_EXCL, NULL);
	if (fd >= 0) {
		n = snprintf(buf, sizeof(buf), "%lld\n", (long long)now);
		if (write(fd, buf, (size_t)n) != n)
			cbb_sf_unlink(sd, job_id, "down");
		close(fd);
		return now;
	}
	if (errno != EEXIST)
		return now;
	return read_time(sd, job_id, "down", &t) && t > 0 &&
	       t <= now ? (time_t)t : now;
}

time_t cbb_down_peek(cbb_statedir_t *sd, uint32_t job_id)
{
	time_t now = time(NULL);
	long long t;

	return read_time(sd, job_id, "down", &t) && t > 0 ?
		       (time_t)(t <= now ? t : now) : 0;
}

void cbb_down_clear(cbb_statedir_t *sd, uint32_t job_id)
{
	cbb_sf_unlink(sd, job_id, "down");
}

void cbb_over_mark(cbb_statedir_t *sd, uint32_t job_id, time_t asked_at)
{
	char buf[32];
	int fd, n;

	fd = cbb_sf_open(sd, job_id, "over",
			O_WRONLY | O_CREAT | O_TRUNC, NULL);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)asked_at);
	if (write(fd, buf, (size_t)n) != n)
		cbb_sf_empty(fd); /* an empty mark covers nothing */
	close(fd);
}

bool cbb_over_for(cbb_statedir_t *sd, uint32_t job_id, int64_t submit)
{
	long long t;

	return submit > 0 && read_time(sd, job_id, "over", &t) &&
	       submit < t;
}

bool cbb_ask_due(cbb_statedir_t *sd, uint32_t job_id, unsigned every_s)
{
	struct stat st;
	time_t now = time(NULL);
	int fd;

	fd = cbb_sf_open(sd, job_id, "asked", O_RDONLY, NULL);
	if (fd >= 0) {
		bool recent = fstat(fd, &st) == 0 && st.st_mtime <= now &&
			      now - st.st_mtime < (time_t)every_s;

		close(fd);
		if (recent)
			return false;
	}
	fd = cbb_sf_open(sd, job_id, "asked",
			O_WRONLY | O_CREAT | O_TRUNC, NULL);
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* mtime = now */
		close(fd);
	}
	return true;
}

int cbb_job_lock(cbb_statedir_t *sd, uint32_t job_id, unsigned wait_ms)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd = cbb_sf_at(sd, true, job_id, "lock", name, sizeof(name), NULL);

	return dfd < 0 ? -1 : cbb_sf_lock_at(dfd, name, wait_ms);
}

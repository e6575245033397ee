/* statefile.c - see statefile.h */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key.h"

static void path_of(char *buf, size_t size, const cbb_config_t *cfg,
		    const char *cluster, uint32_t job_id, const char *what)
{
	char safe[CBB_CLUSTER_MAX];

	cbb_key_cluster(safe, cluster);
	snprintf(buf, size, "%s/%s.%u.%s", cbb_conf_state_dir(cfg), safe,
		 job_id, what);
}

/* Open a state file for writing (mode 0600), creating StateDir first if
 * it is missing; `flags` adds O_EXCL, O_TRUNC or O_APPEND. */
static int open_state(const cbb_config_t *cfg, const char *path, int flags)
{
	(void)mkdir(cbb_conf_state_dir(cfg), 0700);
	return open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
}

time_t cbb_down_since(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id)
{
	char path[4200], buf[32];
	time_t now = time(NULL);
	ssize_t n;
	int fd;

	path_of(path, sizeof(path), cfg, cluster, job_id, "down");
	/* O_EXCL: the first process to see the outage writes the time */
	fd = open_state(cfg, path, O_EXCL);
	if (fd >= 0) {
		n = snprintf(buf, sizeof(buf), "%lld\n", (long long)now);
		if (write(fd, buf, (size_t)n) != n)
			(void)unlink(path);
		close(fd);
		return now;
	}
	if (errno != EEXIST)
		return now;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return now;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return now;
	buf[n] = '\0';
	{
		long long t = strtoll(buf, NULL, 10);

		return (t > 0 && t <= now) ? (time_t)t : now;
	}
}

void cbb_down_clear(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id)
{
	char path[4200];

	path_of(path, sizeof(path), cfg, cluster, job_id, "down");
	(void)unlink(path);
}

void cbb_lines_save(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id, const cbb_plan_t *plan)
{
	char path[4200], tmp[4232], line[32];
	size_t i;
	int fd, ok = 1;

	path_of(path, sizeof(path), cfg, cluster, job_id, "lines");
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	fd = open_state(cfg, tmp, O_TRUNC);
	if (fd < 0)
		return;
	for (i = 0; i < plan->n && ok; i++) {
		int n = snprintf(line, sizeof(line), "%u\n", plan->v[i].line);

		ok = write(fd, line, (size_t)n) == n;
	}
	close(fd);
	if (!ok || rename(tmp, path) < 0)
		(void)unlink(tmp);
}

void cbb_lines_apply(const cbb_config_t *cfg, const char *cluster,
		     uint32_t job_id, cbb_plan_t *plan)
{
	char path[4200], buf[8192], *p, *end;
	unsigned lines[1000];
	size_t n = 0, i;
	ssize_t got;
	int fd;

	path_of(path, sizeof(path), cfg, cluster, job_id, "lines");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return;
	buf[got] = '\0';
	for (p = buf; *p && n < sizeof(lines) / sizeof(lines[0]); p = end) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || *end != '\n')
			return; /* not ours, or cut short: keep the plan's */
		lines[n++] = (unsigned)v;
		end++;
	}
	if (n != plan->n)
		return;
	for (i = 0; i < n; i++)
		plan->v[i].line = lines[i];
}

void cbb_state_forget(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id)
{
	char path[4200];

	path_of(path, sizeof(path), cfg, cluster, job_id, "lines");
	(void)unlink(path);
	path_of(path, sizeof(path), cfg, cluster, job_id, "down");
	(void)unlink(path);
	path_of(path, sizeof(path), cfg, cluster, job_id, "started");
	(void)unlink(path);
	path_of(path, sizeof(path), cfg, cluster, job_id, "asked");
	(void)unlink(path);
}

bool cbb_ask_due(const cbb_config_t *cfg, const char *cluster,
		 uint32_t job_id, unsigned every_s)
{
	char path[4200];
	struct stat st;
	time_t now = time(NULL);
	int fd;

	path_of(path, sizeof(path), cfg, cluster, job_id, "asked");
	if (stat(path, &st) == 0 && st.st_mtime <= now &&
	    now - st.st_mtime < (time_t)every_s)
		return false;
	fd = open_state(cfg, path, O_TRUNC);
	if (fd >= 0) {
		(void)futimens(fd, NULL); /* mtime = now */
		close(fd);
	}
	return true;
}

void cbb_started_record(const cbb_config_t *cfg, const char *cluster,
			uint32_t job_id, uint32_t restart, int type,
			uint32_t index, const char *id)
{
	char path[4200], line[160];
	int fd, n;

	path_of(path, sizeof(path), cfg, cluster, job_id, "started");
	fd = open_state(cfg, path, O_APPEND);
	if (fd < 0)
		return;
	/* one short write with O_APPEND: records never interleave */
	n = snprintf(line, sizeof(line), "%u %d %u %.64s\n", restart, type,
		     index, id);
	if (write(fd, line, (size_t)n) != n)
		(void)ftruncate(fd, 0); /* a torn record is worse than none */
	close(fd);
}

bool cbb_started_lookup(const cbb_config_t *cfg, const char *cluster,
			uint32_t job_id, uint32_t restart, int type,
			uint32_t index, char *id, size_t size)
{
	char path[4200], line[160];
	bool found = false;
	FILE *f;

	path_of(path, sizeof(path), cfg, cluster, job_id, "started");
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned r, i;
		int t;
		char got[65];

		if (sscanf(line, "%u %d %u %64s", &r, &t, &i, got) == 4 &&
		    r == restart && t == type && i == index) {
			snprintf(id, size, "%s", got);
			found = true; /* the last record wins */
		}
	}
	fclose(f);
	return found;
}

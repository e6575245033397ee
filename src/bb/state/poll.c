/*
 * poll.c - one user's shared poll reply in StateDir (statefile.h,
 * cbb_share_*): <cluster>.u<uid>.poll, a short text head naming the
 * server, the user, when the Query was sent and, for each job it covers,
 * the length of that job's part; then the parts, each the Query reply
 * for one job as protobuf bytes.  Written whole under a fresh name, then
 * renamed over the old one; read only when it is a regular file of this
 * process's user, mode 0600 (nobody else may have written it), within
 * CBB_SHARE_MAX bytes and with a head that parses.  A poll reads the
 * head and its own job's part only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "statefile.h"
#include "state_int.h"

#define SHARE_MAGIC "cbb-poll 2\n"
#define SHARE_HEAD_MAX ((size_t)64 << 10)

static void share_name(char *buf, size_t size, const cbb_statedir_t *sd,
		       uint32_t uid)
{
	snprintf(buf, size, "%s.u%" PRIu32 ".%s", sd->cluster, uid,
		 CBB_SF(POLL));
}

void cbb_share_free(cbb_share_t *s)
{
	free(s->reply);
	s->reply = NULL;
	s->reply_len = 0;
	s->covered = false;
}

/* "key value\n" at *p: the value (NUL-terminated in place); NULL if not */
static char *field(char **p, const char *key)
{
	size_t k = strlen(key);
	char *v, *nl;

	if (strncmp(*p, key, k) || (*p)[k] != ' ')
		return NULL;
	v = *p + k + 1;
	nl = strchr(v, '\n');
	if (!nl)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	return v;
}

/*
 * The head in text (NUL-terminated, the blank line that ends it
 * included): server, user, sent; and where job_id's part is, after the
 * head (*off, *len) when the head lists it.  -1 when it does not parse.
 */
static int parse_head(char *text, cbb_share_t *s, uint32_t job_id,
		      size_t *off, size_t *len)
{
	char *p = text, *v, *end;
	size_t at = 0;

	if (strncmp(p, SHARE_MAGIC, strlen(SHARE_MAGIC)))
		return -1;
	p += strlen(SHARE_MAGIC);
	if (!(v = field(&p, "server")) || strlen(v) >= sizeof(s->server))
		return -1;
	strcpy(s->server, v);
	if (!(v = field(&p, "user")) || strlen(v) >= sizeof(s->user))
		return -1;
	strcpy(s->user, v);
	if (!(v = field(&p, "sent")))
		return -1;
	errno = 0;
	s->sent_ms = strtoll(v, &end, 10);
	if (errno || *end || s->sent_ms <= 0)
		return -1;
	if (!(v = field(&p, "asker")))
		return -1;
	s->asker = strtoul(v, &end, 10);
	if (errno || *end || end == v)
		return -1;
	if (!(v = field(&p, "jobs")))
		return -1;
	/* "<job>:<bytes>" each, in the order of the parts */
	while (*v) {
		unsigned long id, n;

		errno = 0;
		id = strtoul(v, &end, 10);
		if (errno || end == v || *end != ':' || id == 0 || id > UINT32_MAX)
			return -1;
		v = end + 1;
		n = strtoul(v, &end, 10);
		if (errno || end == v || (*end && *end != ' ') ||
		    n > CBB_SHARE_MAX || at > CBB_SHARE_MAX)
			return -1;
		if (id == job_id && !s->covered) {
			s->covered = true;
			*off = at;
			*len = n;
		}
		at += n;
		v = *end ? end + 1 : end;
	}
	if (*p != '\n' || p[1])
		return -1;
	return 0;
}

int cbb_share_read(cbb_statedir_t *sd, uint32_t uid, uint32_t job_id,
		   cbb_share_t *out)
{
	char name[CBB_CLUSTER_MAX + 48], *head = NULL, *blank;
	size_t off = 0, len = 0, hl;
	struct stat st;
	ssize_t got;
	int dfd, fd;

	memset(out, 0, sizeof(*out));
	if ((dfd = cbb_sf_dir(sd, false, NULL)) < 0)
		return -1;
	share_name(name, sizeof(name), sd, uid);
	fd = cbb_sf_open_private(dfd, name, CBB_SHARE_MAX, &st);
	if (fd < 0)
		return -1;
	head = malloc(SHARE_HEAD_MAX + 1);
	if (!head)
		goto bad;
	got = pread(fd, head, SHARE_HEAD_MAX, 0);
	if (got <= 0)
		goto bad;
	head[got] = '\0';
	blank = strstr(head, "\n\n");
	if (!blank)
		goto bad;
	blank[2] = '\0';
	hl = (size_t)(blank + 2 - head);
	if (parse_head(head, out, job_id, &off, &len) < 0 ||
	    hl + off + len > (size_t)st.st_size)
		goto bad;
	if (out->covered) {
		out->reply = malloc(len ? len : 1);
		if (!out->reply ||
		    pread(fd, out->reply, len, (off_t)(hl + off)) != (ssize_t)len)
			goto bad;
		out->reply_len = len;
	}
	free(head);
	close(fd);
	return 0;
bad:
	free(head);
	close(fd);
	cbb_share_free(out);
	return -1;
}

int cbb_share_write(cbb_statedir_t *sd, uint32_t uid, const cbb_share_t *s)
{
	char name[CBB_CLUSTER_MAX + 48], *head;
	size_t cap = 128 + strlen(s->server) + s->njobs * 32, n, i, total = 0;
	cbb_sf_part_t *part;
	int dfd, rc;

	if ((dfd = cbb_sf_dir(sd, false, NULL)) < 0 || cap > SHARE_HEAD_MAX)
		return -1;
	for (i = 0; i < s->njobs; i++)
		total += s->part_len[i];
	if (total > CBB_SHARE_MAX - cap)
		return -1; /* (the polls then ask alone) */
	head = malloc(cap);
	part = calloc(s->njobs + 1, sizeof(*part));
	if (!head || !part) {
		free(head);
		free(part);
		return -1;
	}
	n = (size_t)snprintf(head, cap, SHARE_MAGIC "server %s\nuser %s\n"
			     "sent %lld\nasker %" PRIu32 "\njobs ", s->server,
			     s->user, (long long)s->sent_ms, s->asker);
	for (i = 0; i < s->njobs && n < cap; i++)
		n += (size_t)snprintf(head + n, cap - n, "%s%" PRIu32 ":%zu",
				      i ? " " : "", s->jobs[i], s->part_len[i]);
	rc = -1;
	if (n + 3 <= cap) {
		head[n++] = '\n';
		head[n++] = '\n';
		part[0].p = head;
		part[0].n = n;
		for (i = 0; i < s->njobs; i++) {
			part[i + 1].p = s->parts[i];
			part[i + 1].n = s->part_len[i];
		}
		share_name(name, sizeof(name), sd, uid);
		rc = cbb_sf_replace(dfd, name, CBB_SF(POLL), part, s->njobs + 1);
	}
	free(head);
	free(part);
	return rc;
}

int64_t cbb_share_started_ms(cbb_statedir_t *sd, uint32_t job_id)
{
	char name[CBB_CLUSTER_MAX + 48];
	struct stat st;
	int dfd;

	if ((dfd = cbb_sf_dir(sd, false, NULL)) < 0)
		return 0;
	cbb_sf_name(name, sizeof(name), sd->cluster, job_id, CBB_SF(STARTED));
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

void cbb_share_polled(cbb_statedir_t *sd, uint32_t job_id, bool starting,
		      int64_t submit)
{
	char name[CBB_CLUSTER_MAX + 48];
	int dfd, fd;

	if ((dfd = cbb_sf_dir(sd, false, NULL)) < 0)
		return;
	cbb_sf_name(name, sizeof(name), sd->cluster, job_id, CBB_SF(POLLED));
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
		    O_NONBLOCK, 0600);
	if (fd < 0)
		return;
	(void)futimens(fd, NULL);
	close(fd);
	/* made after the teardown took the records: the teardown will not
	 * come back for it (one still under way removes it after them) */
	if (starting ? cbb_over_for(sd, job_id, submit) :
		       !cbb_share_started_ms(sd, job_id))
		(void)unlinkat(dfd, name, 0);
}

size_t cbb_share_pollers(cbb_statedir_t *sd, uint32_t *ids, size_t max,
			 unsigned within_s)
{
	return cbb_sd_jobs_with(sd, CBB_SDK_POLLED, ids, max,
				time(NULL) - (time_t)within_s);
}

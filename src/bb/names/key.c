/* key.c - see key.h */
#include "key.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = {
	"CONDUIT_PRE", "CONDUIT_POST", "CONDUIT_VALIDATE", "CONDUIT_PRE_ARRAY",
	"CONDUIT_ASIDE", "CONDUIT_PROBE",
};
#define NTYPES (sizeof(type_names) / sizeof(type_names[0]))

void cbb_key_format(char *buf, size_t size, const cbb_key_t *k)
{
	int n = snprintf(buf, size,
			 "SLURMJOB:%u,CLUSTER:%s,RESTART:%u,SLURMINDEX:%u,"
			 "SLURMTYPE:%s,LINE:%u", k->job_id, k->cluster,
			 k->attempt, k->index, type_names[k->type], k->line);

	/* a move-aside names which of the directive's places it clears,
	 * a probe which question it asks */
	if ((k->type == CBB_KEY_ASIDE || k->type == CBB_KEY_PROBE) && n >= 0 &&
	    (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ",PART:%u", k->part);
}

/* Read "<name>:<digits>," at *p. */
static bool field_u32(const char **p, const char *name, uint32_t *out,
		      char end)
{
	size_t n = strlen(name);
	unsigned long v;
	char *e;

	if (strncmp(*p, name, n) || (*p)[n] != ':' ||
	    !isdigit((unsigned char)(*p)[n + 1]))
		return false;
	v = strtoul(*p + n + 1, &e, 10);
	if (*e != end || v > 0xffffffffUL)
		return false;
	*out = (uint32_t)v;
	*p = end ? e + 1 : e;
	return true;
}

/*
 * The last field, "<name>:<digits>", then the end (format 1) or
 * ",KEYV:<n>" of a format this release reads.
 */
static bool last_field(const char **p, const char *name, uint32_t *out)
{
	uint32_t v;

	if (field_u32(p, name, out, '\0'))
		return true;
	return field_u32(p, name, out, ',') &&
	       field_u32(p, "KEYV", &v, '\0') && v >= 1 &&
	       v <= CBB_KEY_FORMAT;
}

bool cbb_key_parse(const char *comment, cbb_key_t *k)
{
	const char *p = comment, *comma;
	size_t n;
	int t;

	memset(k, 0, sizeof(*k));
	if (!field_u32(&p, "SLURMJOB", &k->job_id, ','))
		return false;
	if (strncmp(p, "CLUSTER:", 8))
		return false;
	p += 8;
	comma = strchr(p, ',');
	if (!comma || (n = (size_t)(comma - p)) >= CBB_CLUSTER_MAX)
		return false;
	memcpy(k->cluster, p, n);
	k->cluster[n] = '\0';
	p = comma + 1;
	if (!field_u32(&p, "RESTART", &k->attempt, ',') ||
	    !field_u32(&p, "SLURMINDEX", &k->index, ','))
		return false;
	if (strncmp(p, "SLURMTYPE:", 10))
		return false;
	p += 10;
	for (t = 0; t < (int)NTYPES; t++) {
		n = strlen(type_names[t]);
		if (!strncmp(p, type_names[t], n) && p[n] == ',') {
			k->type = (cbb_key_type_t)t;
			p += n + 1;
			break;
		}
	}
	if (t == (int)NTYPES)
		return false;
	if (k->type == CBB_KEY_ASIDE || k->type == CBB_KEY_PROBE)
		return field_u32(&p, "LINE", &k->line, ',') &&
		       last_field(&p, "PART", &k->part) && *p == '\0';
	return last_field(&p, "LINE", &k->line) && *p == '\0';
}

/* The cluster name as a regex (it holds only [A-Za-z0-9_.-]). */
static void cluster_regex(char *esc, const char *cluster)
{
	char safe[CBB_CLUSTER_MAX];
	size_t i, o = 0;

	cbb_cluster_safe(safe, cluster);
	for (i = 0; safe[i]; i++) {
		if (safe[i] == '.' || safe[i] == '-')
			esc[o++] = '\\'; /* valid in RE2 and Python re */
		esc[o++] = safe[i];
	}
	esc[o] = '\0';
}

void cbb_key_array_regex(char *buf, size_t size, const char *cluster,
			 uint32_t job_id, uint32_t array_job_id)
{
	char esc[CBB_CLUSTER_MAX * 2];

	cluster_regex(esc, cluster);
	snprintf(buf, size, "^SLURMJOB:(%u,CLUSTER:%s,|%u,CLUSTER:%s,"
		 "RESTART:0,SLURMINDEX:[0-9]+,SLURMTYPE:CONDUIT_"
		 "(PRE_ARRAY|PROBE),)", job_id, esc, array_job_id, esc);
}

void cbb_key_job_regex(char *buf, size_t size, const char *cluster,
		       uint32_t job_id, long attempt)
{
	char esc[CBB_CLUSTER_MAX * 2];

	cluster_regex(esc, cluster);
	if (attempt < 0)
		snprintf(buf, size, "^SLURMJOB:%u,CLUSTER:%s,", job_id, esc);
	else
		snprintf(buf, size, "^SLURMJOB:%u,CLUSTER:%s,RESTART:%ld,",
			 job_id, esc, attempt);
}

void cbb_key_prefix(char *buf, size_t size, const char *cluster,
		    uint32_t job_id, uint32_t attempt)
{
	char safe[CBB_CLUSTER_MAX];

	cbb_cluster_safe(safe, cluster);
	snprintf(buf, size, "SLURMJOB:%u,CLUSTER:%s,RESTART:%u,", job_id, safe,
		 attempt);
}

size_t cbb_key_jobs_regex(char *buf, size_t size, const char *cluster,
			  const uint32_t *ids, size_t n)
{
	char esc[CBB_CLUSTER_MAX * 2], id[16];
	size_t i, len = 0;
	bool fits = true;
	int k;

	/* written piece by piece; once one does not fit, only counted */
#define PUT(s, l) do { \
		fits = fits && len + (l) < size; \
		if (fits) \
			memcpy(buf + len, (s), (l)); \
		len += (l); \
		if (fits) \
			buf[len] = '\0'; \
	} while (0)
	if (size)
		buf[0] = '\0';
	cluster_regex(esc, cluster);
	PUT("^SLURMJOB:(", 11);
	for (i = 0; i < n; i++) {
		k = snprintf(id, sizeof(id), "%s%u", i ? "|" : "", ids[i]);
		PUT(id, (size_t)k);
	}
	PUT("),CLUSTER:", 10);
	PUT(esc, strlen(esc));
	PUT(",", 1);
#undef PUT
	return len;
}

/* statedir.c - see statedir.h */
#include "statedir.h"

#include "jobstate.h"
#include "key.h"
#include "lost.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What status reads of StateDir's kinds of file (statefile.h's table) */
static unsigned bit_of(cbb_sd_kind_t k)
{
	switch (k) {
	case CBB_SDK_STARTED:
		return CBB_SD_STARTED;
	case CBB_SDK_DOWN:
		return CBB_SD_DOWN;
	case CBB_SDK_SHARED:
		return CBB_SD_SHARED;
	case CBB_SDK_SKIPPED:
		return CBB_SD_SKIPPED;
	case CBB_SDK_OVER:
		return CBB_SD_OVER;
	case CBB_SDK_OUTPLAN:
		return CBB_SD_OUTPLAN;
	case CBB_SDK_OUTDONE:
		return CBB_SD_OUTDONE;
	default:
		return 0; /* (asked, lock, shared-lock: nothing to show) */
	}
}

/* "<cluster>.<job>.<what>": the cluster may hold dots, the job never */
static bool parse_name(const char *name, char *cluster, uint32_t *job,
		       unsigned *bit)
{
	const char *last, *prev;
	unsigned long v;
	char *end;
	size_t n, base = 0;

	*bit = bit_of(cbb_sd_kind_of(name, &base));
	if (!*bit)
		return false;
	last = name + base;
	for (prev = last - 1; prev > name && *prev != '.'; prev--)
		;
	if (prev == name || prev + 1 == last)
		return false;
	errno = 0;
	v = strtoul(prev + 1, &end, 10);
	if (end != last || errno || v > 0xffffffffUL || prev[1] < '0' ||
	    prev[1] > '9')
		return false;
	n = (size_t)(prev - name);
	if (n >= CBB_CLUSTER_MAX)
		return false;
	memcpy(cluster, name, n);
	cluster[n] = '\0';
	*job = (uint32_t)v;
	return true;
}

static int by_job(const void *a, const void *b)
{
	const cbb_sd_job_t *x = a, *y = b;
	int c = strcmp(x->cluster, y->cluster);

	if (c)
		return c;
	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

int cbb_sd_list(const cbb_config_t *cfg, cbb_sd_list_t *out, cbb_err_t *err)
{
	const char *dir = cbb_conf_state_dir(cfg);
	size_t cap = 0, i, k;
	struct dirent *e;
	DIR *d;
	int dfd;

	memset(out, 0, sizeof(*out));
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT) {
			out->missing = true;
			return 0;
		}
		return cbb_err(err, "cannot read StateDir %s: %s", dir,
			       strerror(errno));
	}
	dfd = dirfd(d);
	/* one entry per file, then sorted and merged per job */
	while ((e = readdir(d))) {
		cbb_sd_job_t j;

		memset(&j, 0, sizeof(j));
		if (!parse_name(e->d_name, j.cluster, &j.job_id, &j.files))
			continue;
		if (j.files == CBB_SD_DOWN)
			j.down_since = (int64_t)cbb_sd_time_at(dfd, e->d_name);
		if (out->n == cap) {
			cbb_sd_job_t *v;

			cap = cap ? cap * 2 : 64;
			v = realloc(out->v, cap * sizeof(*v));
			if (!v) {
				closedir(d);
				cbb_sd_free(out);
				return cbb_err(err, "out of memory");
			}
			out->v = v;
		}
		out->v[out->n++] = j;
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_job);
	for (i = k = 0; i < out->n; i++) {
		if (k && !by_job(&out->v[k - 1], &out->v[i])) {
			out->v[k - 1].files |= out->v[i].files;
			if (out->v[i].down_since)
				out->v[k - 1].down_since = out->v[i].down_since;
		} else {
			out->v[k++] = out->v[i];
		}
	}
	out->n = k;
	return 0;
}

void cbb_sd_free(cbb_sd_list_t *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int cbb_sd_become_owner(const cbb_config_t *cfg, cbb_err_t *err)
{
	const char *dir = cbb_conf_state_dir(cfg);
	struct passwd *pw;
	struct stat st;

	if (geteuid() != 0 || lstat(dir, &st) < 0 || st.st_uid == 0)
		return 0;
	pw = getpwuid(st.st_uid);
	if ((pw ? initgroups(pw->pw_name, pw->pw_gid) : setgroups(0, NULL)) < 0 ||
	    setgid(pw ? pw->pw_gid : st.st_gid) < 0 || setuid(st.st_uid) < 0)
		return cbb_err(err, "cannot become uid %u, StateDir %s's owner: "
			       "%s", (unsigned)st.st_uid, dir, strerror(errno));
	return 0;
}

bool cbb_sd_is_start(char kind)
{
	return kind == CBB_REC_STARTED || kind == CBB_REC_UNSURE ||
	       kind == CBB_REC_REFUSED || kind == CBB_REC_LOST;
}

void cbb_sd_stage_of(const cbb_recs_t *recs, cbb_sd_stage_t *st)
{
	int want = CBB_KEY_POST;
	size_t i;
	int pass;

	memset(st, 0, sizeof(*st));
	/* a stage-out's records first; without any, the stage-in's */
	for (pass = 0; pass < 2 && !st->any; pass++, want = CBB_KEY_PRE)
		for (i = 0; i < recs->n; i++) {
			const cbb_rec_t *r = &recs->v[i];

			if (!cbb_sd_is_start(r->kind) || r->type != want)
				continue;
			if (!st->any || r->attempt > st->attempt)
				st->attempt = r->attempt;
			st->any = true;
			st->out = want == CBB_KEY_POST;
		}
	want = st->out ? CBB_KEY_POST : CBB_KEY_PRE;
	for (i = 0; i < recs->n; i++) {
		const cbb_rec_t *r = &recs->v[i];
		size_t k;

		if (r->type != want || r->attempt != st->attempt)
			continue;
		st->accounted |= r->kind == CBB_REC_ACCOUNTED;
		if (!cbb_sd_is_start(r->kind))
			continue;
		/* records are appended: a directive's last one is its newest */
		for (k = i + 1; k < recs->n; k++)
			if (cbb_sd_is_start(recs->v[k].kind) &&
			    recs->v[k].type == want &&
			    recs->v[k].attempt == st->attempt &&
			    recs->v[k].index == r->index)
				break;
		if (k < recs->n)
			continue;
		st->started += r->kind == CBB_REC_STARTED;
		st->unsure += r->kind == CBB_REC_UNSURE;
		st->refused += r->kind == CBB_REC_REFUSED;
		st->lost += r->kind == CBB_REC_LOST;
	}
}

size_t cbb_sd_plans(const cbb_config_t *cfg, cbb_sd_list_t *sd,
		    const uint32_t *only, size_t nonly, bool unreadable,
		    const cbb_sl_list_t *lost, cbb_sd_plan_t *out, size_t max,
		    bool *answered)
{
	const cbb_sl_job_t *sl;
	cbb_job_facts_t *f;
	uint32_t *ids;
	char sq[4200];
	size_t i, k = 0, o;

	*answered = true;
	for (i = 0; i < sd->n && k < max; i++) {
		cbb_statedir_t dir;
		int open;

		if (!(sd->v[i].files & CBB_SD_OUTPLAN))
			continue;
		for (o = 0; o < nonly && only[o] != sd->v[i].job_id; o++)
			;
		if (nonly && o == nonly)
			continue;
		cbb_statedir_init(&dir, cfg, sd->v[i].cluster);
		open = cbb_lost_is_open(&dir, sd->v[i].job_id);
		cbb_statedir_close(&dir);
		if (open == 1 || (open < 0 && unreadable)) {
			memset(&out[k], 0, sizeof(out[k]));
			out[k++].job = &sd->v[i];
		}
	}
	if (k == 0)
		return 0;
	f = calloc(k, sizeof(*f));
	ids = calloc(k, sizeof(*ids));
	for (i = 0; f && ids && i < k; i++)
		ids[i] = out[i].job->job_id;
	if (!f || !ids || cbb_jobs_state(cbb_conf_squeue(cfg, sq, sizeof(sq)),
					 ids, k, CBB_SQUEUE_TIMEOUT_MS, f) < 0) {
		*answered = false;
	} else {
		for (i = 0; i < k; i++) {
			cbb_statedir_t dir;

			out[i].f = f[i];
			/* (one the list leaves out is not known to be gone) */
			cbb_statedir_init(&dir, cfg, out[i].job->cluster);
			out[i].dropped = f[i].cls != CBB_JOB_UNKNOWN &&
					 cbb_outplan_dropped(&dir, ids[i],
						cbb_job_ended_for_good(&f[i]),
						f[i].state);
			/* in STAGE_OUT with no buffer: no hook will come */
			sl = lost ? cbb_sl_find(lost, ids[i]) : NULL;
			if (sl && sl->kind == CBB_SL_STAGE_OUT &&
			    !strcmp(f[i].state, "STAGE_OUT"))
				out[i].dropped = true;
			/* ended with no stage-out hook ever: none will come */
			if (sl && sl->kind == CBB_SL_UNSTAGED &&
			    cbb_job_ended_for_good(&f[i]))
				out[i].dropped = true;
			cbb_statedir_close(&dir);
		}
	}
	free(f);
	free(ids);
	return k;
}

void cbb_sd_mark_done(const cbb_sd_list_t *sd, cbb_sl_list_t *lost)
{
	size_t i, k;

	for (i = 0; i < lost->n; i++)
		for (k = 0; k < sd->n; k++)
			if ((lost->v[i].kind == CBB_SL_STAGE_OUT ||
			     lost->v[i].kind == CBB_SL_UNSTAGED) &&
			    sd->v[k].job_id == lost->v[i].job_id &&
			    (sd->v[k].files & CBB_SD_OUTDONE))
				lost->v[i].out_done = true;
}

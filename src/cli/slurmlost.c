/* slurmlost.c - see slurmlost.h */
#include "slurmlost.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "jobstate.h"
#include "run.h"

#define OUT_MAX ((size_t)16 << 20)
#define ERR_MAX ((size_t)4096)

/* ---- sets of job ids --------------------------------------------------- */

typedef struct {
	uint32_t *v;
	size_t n, cap;
} ids_t;

static void ids_add(ids_t *s, uint32_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint32_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return; /* (a buffer left out: its job looks lost once) */
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void ids_sort(ids_t *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_id);
}

static bool ids_has(const ids_t *s, uint32_t id)
{
	return s->n && bsearch(&id, s->v, s->n, sizeof(*s->v), cmp_id);
}

/* A job id: digits only, within 32 bits. */
static bool job_id(const char *s, size_t n, uint32_t *out)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The buffers `scontrol show burst` lists: "JobID=N" or "JobID=A_T(N)". */
static void burst_ids(const char *burst, ids_t *s)
{
	const char *p = burst;

	while ((p = strstr(p, "JobID="))) {
		const char *v = p + 6, *e = v, *open;
		uint32_t id;

		while (*e && !isspace((unsigned char)*e))
			e++;
		open = memchr(v, '(', (size_t)(e - v));
		if (open && e > open + 1 && e[-1] == ')') {
			if (job_id(open + 1, (size_t)(e - open - 2), &id))
				ids_add(s, id);
		} else if (job_id(v, (size_t)(e - v), &id)) {
			ids_add(s, id);
		}
		p = e;
	}
	ids_sort(s);
}

long cbb_sl_other_timeout(const char *burst)
{
	const char *p = strstr(burst, "OtherTimeout=");
	char *end;
	long v;

	if (!p)
		return -1;
	errno = 0;
	v = strtol(p + 13, &end, 10);
	return errno || end == p + 13 || v < 0 || v > 7 * 86400 ? -1 : v;
}

/* Slurm's local time "YYYY-MM-DDTHH:MM:SS", or -1 */
static time_t slurm_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

time_t cbb_sl_boot_time(const char *config)
{
	const char *p = strncmp(config, "BOOT_TIME", 9) ? strstr(config,
				"\nBOOT_TIME") : config;
	char v[32];
	size_t n;

	if (!p || !(p = strchr(p + 1, '=')))
		return -1;
	p += strspn(p + 1, " ") + 1;
	n = strcspn(p, " \n");
	if (n >= sizeof(v))
		return -1;
	memcpy(v, p, n);
	v[n] = '\0';
	return slurm_time(v);
}

/* squeue's elapsed time: [D-][HH:]MM:SS; -1 when not one */
static long elapsed(const char *s)
{
	long d = 0, part[3] = { 0, 0, 0 };
	int n = 0;
	const char *p = s, *dash = strchr(s, '-');

	if (dash) {
		char *end;

		d = strtol(s, &end, 10);
		if (end != dash || d < 0 || d > 100000)
			return -1;
		p = dash + 1;
	}
	for (;;) {
		long v = 0;
		int digits = 0;

		while (*p >= '0' && *p <= '9' && digits < 6) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if (!digits || n == 3)
			return -1;
		part[n++] = v;
		if (*p != ':')
			break;
		p++;
	}
	if (*p || n < 2)
		return -1;
	return d * 86400 + (n == 3 ? part[0] * 3600 + part[1] * 60 + part[2] :
				     part[0] * 60 + part[1]);
}

static bool is(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

/* squeue's priority column says 0 (held) */
static bool zero(const char *prio)
{
	return *prio && strtod(prio, NULL) == 0.0 &&
	       strspn(prio, "0.") == strlen(prio);
}

size_t cbb_sl_candidates(const char *rows, const char *burst, time_t boot,
			 long after_s, cbb_sl_job_t *out, size_t max)
{
	/* the states a job's own record can keep while Slurm has no buffer
	 * left (a teardown that failed as slurmctld stopped included):
	 * pending, Slurm then waits for a stage-in or teardown that never
	 * comes; in STAGE_OUT, for a stage-out or teardown */
	static const char *const in_words[] = { "staging-in", "teardown",
						"teardown-fail", NULL };
	static const char *const out_words[] = { "post-run", "staging-out",
						 "staged-out", "teardown",
						 "teardown-fail", NULL };
	/* an ended job whose buffer Slurm removed after its teardowns
	 * failed: held (priority 0) by that failure */
	static const char *const done_words[] = { "complete", "teardown",
						  "teardown-fail", NULL };
	ids_t bufs = { NULL, 0, 0 };
	const char *p = rows;
	long other = cbb_sl_other_timeout(burst);
	size_t k = 0;

	burst_ids(burst, &bufs);
	/* a launch lost in a restart: started before slurmctld did, at
	 * most pre_run's time limit (and a minute) before */
	if (other < 0)
		other = 300;
	while (*p && k < max) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[256], *f[9], *s, *end;
		cbb_sl_job_t j;
		time_t start;
		unsigned long r;
		int n = 0;

		if (len >= sizeof(line))
			goto next;
		memcpy(line, p, len);
		line[len] = '\0';
		for (s = line; n < 9; n++) {
			f[n] = s;
			if (!(s = strchr(s, '|')))
				break;
			*s++ = '\0';
		}
		/* eight columns, each closed by '|', and nothing after */
		if (n != 8 || *f[8])
			goto next;
		memset(&j, 0, sizeof(j));
		errno = 0;
		r = strtoul(f[7], &end, 10);
		if (!*f[7] || *end || errno || r > UINT32_MAX ||
		    f[7][0] < '0' || f[7][0] > '9')
			goto next;
		j.restart = (uint32_t)r;
		if (!job_id(f[0], strlen(f[0]), &j.job_id) ||
		    strlen(f[1]) >= sizeof(j.state) ||
		    strlen(f[2]) >= sizeof(j.bbstate))
			goto next;
		snprintf(j.state, sizeof(j.state), "%s", f[1]);
		snprintf(j.bbstate, sizeof(j.bbstate), "%s", f[2]);
		if (!*j.bbstate || !strcmp(j.bbstate, "(null)"))
			goto next; /* no burst buffer */
		if (!strcmp(j.state, "PENDING") && is(j.bbstate, in_words) &&
		    !ids_has(&bufs, j.job_id)) {
			j.kind = CBB_SL_STAGE_IN;
		} else if (!strcmp(j.state, "PENDING") && zero(f[4])) {
			j.kind = CBB_SL_HELD;
		} else if (!strcmp(j.state, "STAGE_OUT") &&
			   is(j.bbstate, out_words) && !ids_has(&bufs, j.job_id)) {
			j.kind = CBB_SL_STAGE_OUT;
		} else if (cbb_job_state_final(j.state) && is(j.bbstate, done_words) &&
			   zero(f[4]) && !ids_has(&bufs, j.job_id)) {
			j.kind = CBB_SL_UNSTAGED; /* (if SystemComment says so) */
		} else if (!strcmp(j.state, "RUNNING") && !strcmp(f[5], "1") &&
			   (j.used_s = elapsed(f[3])) > after_s && after_s >= 0 &&
			   boot > 0 && (start = slurm_time(f[6])) > 0 &&
			   start <= boot && start + other + 60 >= boot) {
			j.kind = CBB_SL_LAUNCH; /* (if nothing runs: sstat) */
		} else {
			goto next;
		}
		out[k++] = j;
next:
		p += len + (nl ? 1 : 0);
	}
	free(bufs.v);
	return k;
}

/*
 * The length of s[0..n) without a trailing " (null)": what Slurm writes
 * for a hook it never got an answer from (slurmscriptd gone as slurmctld
 * stops: 25.11 takes job ends for a minute after, each hook "failed,
 * status=-1, response=(null)").  conduit_bb's own failures say why.
 */
static size_t no_reply(const char *s, size_t n)
{
	if (n >= 8 && !memcmp(s + n - 8, ": (null)", 8))
		return n - 7;
	return n;
}

/* The length of a reason squeue printed, without its closing '|', the
 * newline and blanks after, and a trailing " (null)" (no_reply) */
static size_t reason_len(const char *reason)
{
	size_t n = strlen(reason);

	while (n && (reason[n - 1] == ' ' || reason[n - 1] == '|' ||
		     reason[n - 1] == '\n'))
		n--;
	return no_reply(reason, n);
}

/* Whether s[0..n) ends with tag */
static bool ends(const char *s, size_t n, const char *tag)
{
	size_t k = strlen(tag);

	return n >= k && !memcmp(s + n - k, tag, k);
}

bool cbb_sl_killed_hook(const char *reason, char *hook, size_t size)
{
	size_t n = reason_len(reason);
	const char *name, *end;

	if (!n || reason[n - 1] != ':')
		return false;
	end = reason + n - 1;
	if (end - reason >= 7 && !memcmp(end - 7, " failed", 7))
		end -= 7;
	for (name = end; name > reason && (islower((unsigned char)name[-1]) ||
					   name[-1] == '_');
	     name--)
		;
	if (end - name < 10 || strncmp(name, "slurm_bb_", 9) ||
	    (name > reason && name[-1] != ' '))
		return false;
	snprintf(hook, size, "%.*s", (int)(end - name), name);
	return true;
}

/* ---- asking Slurm ------------------------------------------------------ */

int cbb_sl_run(char *const argv[], unsigned timeout_ms, size_t out_max,
	       char **out, char **err)
{
	cbb_buf_t o, e;
	int status, rc = -1;

	*out = *err = NULL;
	cbb_buf_init(&o, out_max);
	cbb_buf_init(&e, ERR_MAX);
	if (cbb_run(argv, timeout_ms, &o, &e, &status) == 0) {
		*out = o.data ? o.data : strdup("");
		*err = e.data ? e.data : strdup("");
		o.data = e.data = NULL;
		rc = *out && *err ? status : -1;
	}
	cbb_buf_free(&o);
	cbb_buf_free(&e);
	if (rc < 0) {
		free(*out);
		free(*err);
		*out = *err = NULL;
	}
	return rc;
}

/* Run argv; its stdout in *out (caller frees), -1 when it failed. */
static int ask(char *const argv[], char **out)
{
	char *err;
	int rc = cbb_sl_run(argv, CBB_SQUEUE_TIMEOUT_MS, OUT_MAX, out, &err);

	free(err);
	if (rc == 0)
		return 0;
	free(*out);
	*out = NULL;
	return -1;
}

static const char ROWS[] =
	"JobId:|,State:|,BurstBufferState:|,TimeUsed:|,Priority:|,BatchFlag:|,"
	"StartTime:|,RestartCnt:|";

static int ask_rows(const char *squeue, const char *ids, char **out)
{
	/* (the states a lost job can be in: no completing or suspended
	 * ones) */
	char prog[512], a0[] = "-h", a1[] = "-t", a2[] = CBB_SL_STATES, a3[] = "-O",
	     a5[] = "-j", fmt[sizeof(ROWS)], *list = NULL;
	char *argv[] = { prog, a0, a1, a2, a3, fmt, ids ? a5 : NULL, NULL,
			 NULL };
	int rc;

	snprintf(prog, sizeof(prog), "%s", squeue);
	memcpy(fmt, ROWS, sizeof(ROWS));
	if (ids && !(list = strdup(ids)))
		return -1;
	argv[7] = list;
	rc = ask(argv, out);
	free(list);
	return rc;
}

const char *cbb_sl_beside(const cbb_config_t *cfg, const char *prog,
			  char *buf, size_t size)
{
	const char *sc = cbb_conf_scontrol(cfg), *slash = strrchr(sc, '/');
	const char *base = slash ? slash + 1 : sc, *word = strstr(base, "scontrol");

	if (!strcmp(prog, "scontrol"))
		return sc;
	/* "/usr/bin/scontrol" gives "/usr/bin/scancel" (a test's
	 * "fake-scontrol" its "fake-scancel") */
	if (word)
		snprintf(buf, size, "%.*s%s%s", (int)(word - sc), sc, prog,
			 word + 8);
	else if (slash)
		snprintf(buf, size, "%.*s/%s", (int)(slash - sc), sc, prog);
	else
		snprintf(buf, size, "%s", prog);
	return buf;
}

/*
 * Whether anything of the job runs on its nodes: `sstat -a -j ID` lists
 * its steps (the batch script's among them) from the nodes' slurmstepd.
 * Nothing listed, with no error, is nothing running; anything else
 * (an error, a node that does not answer) is taken as running.
 */
static bool launched(const char *sstat, uint32_t id)
{
	char prog[4200], idtxt[16], a_n[] = "--noheader", a_p[] = "--parsable2",
	     a_a[] = "-a", a_j[] = "-j", a_o[] = "-o", a_f[] = "JobID";
	char *argv[] = { prog, a_n, a_p, a_a, a_j, idtxt, a_o, a_f, NULL };
	char *out, *err;
	bool ran;

	snprintf(prog, sizeof(prog), "%s", sstat);
	snprintf(idtxt, sizeof(idtxt), "%u", id);
	ran = cbb_sl_run(argv, CBB_SQUEUE_TIMEOUT_MS, 65536, &out, &err) != 0 ||
	      *out || *err;
	free(out);
	free(err);
	return ran;
}

/* A SystemComment entry of a teardown Slurm could not run, or killed:
 * "<time> burst_buffer/lua: teardown: " with nothing after or "(null)" */
static bool unrun_teardown(const char *line, size_t n)
{
	n = no_reply(line, n);
	while (n && line[n - 1] == ' ')
		n--;
	return ends(line, n, "burst_buffer/lua: teardown:");
}

bool cbb_sl_comment_killed_hook(const char *job, char *hook, size_t size)
{
	const char *p = strstr(job, "\n   SystemComment="), *end, *last;
	char line[512];
	size_t n;

	if (!p)
		return false;
	p += 18;
	/* the value, up to scontrol's next "   Key=" line (an entry per
	 * line: the last is the newest) */
	for (end = p; (end = strchr(end, '\n')); end++) {
		const char *k = end + 1;

		if (!strncmp(k, "   ", 3) && isupper((unsigned char)k[3])) {
			for (k += 3; isalnum((unsigned char)*k); k++)
				;
			if (*k == '=')
				break;
		}
	}
	if (!end)
		end = p + strlen(p);
	/* the newest entry but the teardowns that failed after it as the
	 * hook did (Flags=TeardownFailure: Slurm tears down a failed stage,
	 * and with slurmscriptd gone that fails too) */
	for (;;) {
		while (end > p && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		for (last = end; last > p && last[-1] != '\n'; last--)
			;
		if (last == end || !unrun_teardown(last, (size_t)(end - last)))
			break;
		end = last;
	}
	n = no_reply(last, (size_t)(end - last));
	if (n >= sizeof(line))
		return false;
	memcpy(line, last, n);
	line[n] = '\0';
	/* "<time> burst_buffer/lua: slurm_bb_NAME: " and nothing after (or
	 * "(null)") */
	return n && line[n - 1] == ':' &&
	       strstr(line, "burst_buffer/lua: slurm_bb_") &&
	       cbb_sl_killed_hook(line, hook, size);
}

/* The reasons that send the question on to SystemComment: a plain
 * JobHeldAdmin (Slurm dropped the text: a restart, an update), or the
 * failure of a teardown that did not run, which Slurm writes over the
 * hook's own ("JobHeldAdmin: teardown failed: (null)"; 24.11:
 * "burst_buffer/lua: teardown: (null)") */
static bool reason_defers(const char *reason)
{
	size_t n = reason_len(reason);

	return (n == 12 && !memcmp(reason, "JobHeldAdmin", 12)) ||
	       ends(reason, n, "JobHeldAdmin: teardown failed:") ||
	       ends(reason, n, "burst_buffer/lua: teardown:");
}

/* `scontrol show job ID`'s answer, or NULL */
static char *show_job(const char *scontrol, uint32_t id)
{
	char sc[4200], idtxt[16], a_show[] = "show", a_job[] = "job",
	     *text = NULL;
	char *argv[] = { sc, a_show, a_job, idtxt, NULL };

	snprintf(sc, sizeof(sc), "%s", scontrol);
	snprintf(idtxt, sizeof(idtxt), "%u", id);
	if (ask(argv, &text) < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * A job held (priority 0) because Slurm killed its stage hook, or could
 * not run it: the hook's empty (or "(null)") failure is its reason, or,
 * under a reason that defers (reason_defers), the newest entry of its
 * SystemComment.  Each read alone, per job.
 */
static bool held_for_killed_hook(const char *squeue, const char *scontrol,
				 uint32_t id, char *hook, size_t size)
{
	char sq[4200], idtxt[16], a_h[] = "-h", a_O[] = "-O",
	     a_r[] = "Reason:|", a_j[] = "-j", *text = NULL;
	char *sq_argv[] = { sq, a_h, a_O, a_r, a_j, idtxt, NULL };
	bool yes, defers;

	snprintf(sq, sizeof(sq), "%s", squeue);
	snprintf(idtxt, sizeof(idtxt), "%u", id);
	if (ask(sq_argv, &text) < 0) {
		free(text);
		return false;
	}
	yes = cbb_sl_killed_hook(text, hook, size);
	defers = reason_defers(text);
	free(text);
	if (yes || !defers)
		return yes;
	if (!(text = show_job(scontrol, id)))
		return false;
	yes = cbb_sl_comment_killed_hook(text, hook, size);
	free(text);
	return yes;
}

/*
 * An ended job held with its buffer gone whose stage-out Slurm never ran:
 * the newest entry of its SystemComment (but the teardowns after it) is
 * its post_run or data_out failing with nothing said or "(null)".
 */
static bool unstaged(const char *scontrol, uint32_t id, char *hook,
		     size_t size)
{
	char *text = show_job(scontrol, id);
	bool yes = text && cbb_sl_comment_killed_hook(text, hook, size) &&
		   (!strcmp(hook, "slurm_bb_post_run") ||
		    !strcmp(hook, "slurm_bb_data_out"));

	free(text);
	return yes;
}

static bool wanted(uint32_t id, const uint32_t *only, size_t nonly)
{
	size_t i;

	for (i = 0; i < nonly; i++)
		if (only[i] == id)
			return true;
	return nonly == 0;
}

void cbb_slurm_lost(const cbb_config_t *cfg, long after_s,
		    const uint32_t *only, size_t nonly, cbb_sl_list_t *out)
{
	static cbb_sl_job_t first[CBB_SL_MAX], again[CBB_SL_MAX];
	char sq[4200], scb[4200], prog[4200], sst[4200], where[4200],
	     *rows = NULL, *burst = NULL, *config = NULL, *rows2 = NULL,
	     list[CBB_SL_MAX * 11 + 1];
	char a_show[] = "show", a_burst[] = "burst", a_config[] = "config";
	char *burst_argv[] = { prog, a_show, a_burst, NULL };
	char *config_argv[] = { prog, a_show, a_config, NULL };
	const char *squeue = cbb_conf_squeue(cfg, sq, sizeof(sq));
	size_t n1, n2, i, k, len = 0;
	time_t boot;
	long other;

	memset(out, 0, sizeof(*out));
	snprintf(prog, sizeof(prog), "%s", cbb_conf_scontrol(cfg));
	snprintf(scb, sizeof(scb), "%s", squeue);
	snprintf(sst, sizeof(sst), "%s", cbb_sl_beside(cfg, "sstat", where,
						       sizeof(where)));
	/* the jobs first, then the buffers: a job that went into stage-in
	 * after its row was read has a buffer by then */
	if (ask_rows(squeue, NULL, &rows) < 0 || ask(burst_argv, &burst) < 0 ||
	    ask(config_argv, &config) < 0)
		goto done;
	other = cbb_sl_other_timeout(burst);
	boot = cbb_sl_boot_time(config);
	out->after_s = after_s >= 0 ? after_s : (other >= 0 ? other : 300) + 60;
	n1 = cbb_sl_candidates(rows, burst, boot, out->after_s, first,
			       CBB_SL_MAX);
	for (i = k = 0; i < n1; i++)
		if (wanted(first[i].job_id, only, nonly))
			first[k++] = first[i];
	n1 = k;
	out->answered = true;
	if (!n1)
		goto done;
	for (i = 0; i < n1; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u",
					i ? "," : "", first[i].job_id);
	/* the second reading: the same class both times, or not lost */
	if (ask_rows(squeue, list, &rows2) < 0) {
		out->answered = false;
		goto done;
	}
	n2 = cbb_sl_candidates(rows2, burst, boot, out->after_s, again,
			       CBB_SL_MAX);
	for (i = 0; i < n1; i++) {
		cbb_sl_job_t *j = &first[i];

		for (k = 0; k < n2 && (again[k].job_id != j->job_id ||
				       again[k].kind != j->kind); k++)
			;
		if (k == n2)
			continue;
		if (j->kind == CBB_SL_HELD &&
		    !held_for_killed_hook(scb, prog, j->job_id, j->hook,
					  sizeof(j->hook)))
			continue;
		if (j->kind == CBB_SL_UNSTAGED &&
		    !unstaged(prog, j->job_id, j->hook, sizeof(j->hook)))
			continue;
		/* slurmctld keeps the batch step it launched before the
		 * restart: whether it runs, only the node can say */
		if (j->kind == CBB_SL_LAUNCH && launched(sst, j->job_id))
			continue;
		out->v[out->n++] = *j;
	}
done:
	free(rows);
	free(rows2);
	free(burst);
	free(config);
}

const cbb_sl_job_t *cbb_sl_find(const cbb_sl_list_t *l, uint32_t job_id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].job_id == job_id)
			return &l->v[i];
	return NULL;
}

/* Each kind's name and what `conduit-bb recover` does for it */
static const struct {
	const char *name, *remedy;
} kinds[] = {
	[CBB_SL_HELD] = { "held", "conduit-bb recover releases it" },
	[CBB_SL_LAUNCH] = { "launch", "conduit-bb recover requeues it" },
	[CBB_SL_STAGE_IN] = { "stage-in", "Slurm can neither start nor requeue "
			      "it: conduit-bb recover --cancel-stuck cancels it" },
	[CBB_SL_STAGE_OUT] = { "stage-out", "its stage-out is finished by "
			       "conduit_bb (conduit-bb recover at once); Slurm "
			       "keeps showing STAGE_OUT" },
	[CBB_SL_UNSTAGED] = { "unstaged", "conduit-bb recover builds its "
			      "stage-out from Slurm's record and script and "
			      "finishes it" },
};

const char *cbb_sl_kind_name(cbb_sl_kind_t k)
{
	return k >= CBB_SL_HELD && k <= CBB_SL_UNSTAGED ? kinds[k].name : "?";
}

const char *cbb_sl_remedy(cbb_sl_kind_t k)
{
	return k >= CBB_SL_HELD && k <= CBB_SL_UNSTAGED ? kinds[k].remedy : "";
}

const char *cbb_sl_remedy_of(const cbb_sl_job_t *j)
{
	if (j->kind == CBB_SL_STAGE_OUT && j->out_done)
		return "its stage-out was finished by conduit_bb; Slurm keeps "
		       "showing STAGE_OUT";
	if (j->kind == CBB_SL_UNSTAGED && j->out_done)
		return "its stage-out was finished by conduit_bb";
	return cbb_sl_remedy(j->kind);
}

void cbb_sl_what(const cbb_sl_job_t *j, char *buf, size_t size)
{
	switch (j->kind) {
	case CBB_SL_HELD:
		snprintf(buf, size, "held: Slurm killed its %s in a restart",
			 j->hook);
		break;
	case CBB_SL_LAUNCH:
		snprintf(buf, size, "RUNNING %ld s with nothing running on its "
			 "node: its launch was lost in a restart (burst buffer "
			 "%s)", j->used_s, j->bbstate);
		break;
	case CBB_SL_STAGE_IN:
		snprintf(buf, size, "pending in stage-in with no buffer left in "
			 "Slurm: no stage-in hook will run for it");
		break;
	case CBB_SL_STAGE_OUT:
		snprintf(buf, size, "in STAGE_OUT with no buffer left in Slurm: "
			 "no stage-out hook will run for it");
		break;
	case CBB_SL_UNSTAGED:
		snprintf(buf, size, "%s with no stage-out: Slurm could not run "
			 "its %s (slurmscriptd gone) and removed its buffer",
			 j->state, j->hook);
		break;
	}
}

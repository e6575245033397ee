/*
 * status_print.c - what `conduit-bb status` prints: a row per staging
 * job (and its directives with --all or when one is stuck or failed),
 * or the same as JSON.  status.c decides what each job's state is.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "buf.h"
#include "bytes.h"
#include "conduit.h"
#include "config.h"
#include "grpc.h"
#include "key.h"
#include "statedir.h"
#include "statefile.h"
#include "status_int.h"
#include "utf8.h"

static void human_age(char *buf, size_t size, int64_t s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", (long long)s / 60,
			 (long long)s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%lldh%02lldm", (long long)s / 3600,
			 (long long)s % 3600 / 60);
	else
		snprintf(buf, size, "%lldd%02lldh", (long long)s / 86400,
			 (long long)s % 86400 / 3600);
}

static size_t count_state(const job_t *j, dstate_t s)
{
	size_t i, n = 0;

	for (i = 0; i < j->nd; i++)
		n += j->d[i].state == s;
	return n;
}

/* In progress or failed: what status lists (--all: every job). */
static bool shown(const job_t *j, const opts_t *o)
{
	if (o->all)
		return true;
	if (j->sd->down_since || j->dropped)
		return true;
	if (!j->nd)
		return false;
	return !j->accounted || j->failed;
}

static const char *state_word(const job_t *j, bool have_t)
{
	if (j->dropped)
		return "dropped";
	if (j->failed)
		return "FAILED";
	if (j->sd->down_since)
		return "outage";
	if (!have_t)
		return "unknown";
	if (j->stuck)
		return "STUCK";
	if (j->nd && count_state(j, D_DONE) == j->nd)
		return j->accounted ? "done" : "finishing";
	return "running";
}

static const char *dstate_name(dstate_t s)
{
	static const char *const n[] = { "waiting", "running", "done",
					 "failed", "refused", "lost" };
	return n[s];
}

static void print_lost(const cbb_sl_list_t *lost)
{
	size_t i;

	if (!lost->answered) {
		printf("lost by Slurm: squeue or scontrol gave no answer\n");
		return;
	}
	for (i = 0; i < lost->n; i++) {
		char what[256];

		cbb_sl_what(&lost->v[i], what, sizeof(what));
		printf("lost by Slurm: job %u: %s: %s\n", lost->v[i].job_id,
		       what, cbb_sl_remedy_of(&lost->v[i]));
	}
}

void cbb_status_print_text(job_t *jobs, size_t n, const opts_t *o,
			   bool have_t, bool queried, const cbb_sl_list_t *lost,
			   int64_t now)
{
	size_t i, k, listed = 0, failed = 0, stuck = 0, outage = 0, dropped = 0;

	printf("%-10s %-12s %-5s %3s %5s %10s %12s %7s  %s\n", "JOB", "USER",
	       "STAGE", "ATT", "DONE", "BYTES", "RATE", "AGE", "STATE");
	for (i = 0; i < n; i++) {
		job_t *j = &jobs[i];
		char done[24], bytes[32], rate[32], age[32], id[32], user[64];

		if (!shown(j, o))
			continue;
		listed++;
		failed += j->failed;
		stuck += j->stuck && !j->failed;
		outage += j->sd->down_since != 0;
		dropped += j->dropped;
		snprintf(id, sizeof(id), "%u", j->sd->job_id);
		snprintf(done, sizeof(done), "%zu/%zu", count_state(j, D_DONE),
			 j->nd);
		cbb_human_bytes(bytes, sizeof(bytes), j->bytes, "");
		if (j->rate)
			cbb_human_bytes(rate, sizeof(rate), j->rate, "/s");
		else
			snprintf(rate, sizeof(rate), "-");
		human_age(age, sizeof(age), j->since ? now - j->since : 0);
		/* the server's words: no control byte reaches the terminal */
		if (j->user && j->user[0])
			cbb_show(user, sizeof(user), j->user, strlen(j->user));
		else
			snprintf(user, sizeof(user), "-");
		printf("%-10s %-12s %-5s %3u %5s %10s %12s %7s  %s", id, user,
		       j->nd ? (j->out ? "out" : "in") : "-", j->attempt, done,
		       bytes, rate, j->since ? age : "-", state_word(j, have_t));
		if (j->dropped) {
			printf(" (the job is %s and Slurm runs no stage-out hook "
			       "for it any more: the next start or teardown of "
			       "any job finishes its stage-out)",
			       j->slurm_state[0] ? j->slurm_state : "gone");
		} else if (j->sd->down_since) {
			human_age(age, sizeof(age), now - j->sd->down_since);
			printf(" (the hooks found the server unreachable %s ago)",
			       age);
		} else if (j->stuck && !j->failed) {
			human_age(age, sizeof(age), j->stuck_for);
			printf(" (nothing moved for %s)", age);
		}
		putchar('\n');
		for (k = 0; k < j->nd; k++) {
			const dir_t *d = &j->d[k];
			char msg[512];

			if (d->state != D_FAILED && d->state != D_LOST &&
			    d->state != D_REFUSED)
				continue;
			msg[0] = '\0';
			if (d->x)
				cbb_show(msg, sizeof(msg), d->x->error_message,
					 strlen(d->x->error_message));
			printf("    line %u: %s%s%s%s%s\n", d->line, dstate_name(d->state),
			       d->x ? ": " : "", d->x ? cbb_error_name(d->x->error)
						     : "", msg[0] ? ": " : "", msg);
		}
	}
	printf("status: %zu job%s staging", listed, listed == 1 ? "" : "s");
	if (listed)
		printf(" (%zu failed, %zu stuck, %zu waiting on an outage, "
		       "%zu stage-out%s dropped by Slurm)", failed, stuck,
		       outage, dropped, dropped == 1 ? "" : "s");
	printf("; %s", queried ? "1 Query" : "no Query");
	if (lost->n)
		printf("; %zu job%s lost by Slurm in a restart", lost->n,
		       lost->n == 1 ? "" : "s");
	putchar('\n');
	print_lost(lost);
}

/*
 * A JSON string of what the server or StateDir said (NULL: NULL, an
 * absent field).  JSON is UTF-8 and jansson refuses anything else, which
 * took the whole row with it; a byte that is not UTF-8 is written \xNN,
 * as the text output shows it.
 */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *safe;

	if (!s)
		return NULL;
	if (cbb_utf8_valid(s, strlen(s)))
		return json_string(s);
	safe = cbb_utf8_lossy(s, strlen(s));
	j = safe ? json_string(safe) : NULL;
	free(safe);
	return j;
}

void cbb_status_print_json(job_t *jobs, size_t n, const opts_t *o,
			   bool have_t, size_t ntransfers, const char *qerr,
			   const cbb_sl_list_t *lost, int64_t now)
{
	json_t *root = json_object(), *arr = json_array(), *gone = json_array();
	size_t i, k;

	for (i = 0; i < n; i++) {
		job_t *j = &jobs[i];
		json_t *row, *dirs = json_array();

		if (!shown(j, o))
			continue;
		for (k = 0; k < j->nd; k++) {
			const dir_t *d = &j->d[k];
			json_t *x = json_pack("{s:i, s:i, s:s, s:b}", "index",
					      (int)d->index, "line", (int)d->line,
					      "state", dstate_name(d->state),
					      "shared", d->type == CBB_KEY_SHARED);

			if (d->x) {
				json_object_set_new(x, "transfer_id",
						    jstr(d->x->id));
				json_object_set_new(x, "conduit_state",
						    json_string(cbb_state_name(d->x->state)));
				json_object_set_new(x, "error",
						    json_string(cbb_error_name(d->x->error)));
				json_object_set_new(x, "error_message",
						    jstr(d->x->error_message));
				json_object_set_new(x, "bytes",
						    json_integer((json_int_t)d->x->bytes));
			}
			json_array_append_new(dirs, x);
		}
		row = json_pack("{s:i, s:o, s:o?, s:s?, s:i, s:i, s:i, s:I, s:I, "
				"s:I, s:s, s:b, s:b, s:I, s:I, s:o}",
				"job", (int)j->sd->job_id, "cluster", jstr(j->sd->cluster),
				"user", jstr(j->user && j->user[0] ? j->user : NULL),
				"stage", j->nd ? (j->out ? "out" : "in") : NULL,
				"attempt", (int)j->attempt,
				"done", (int)count_state(j, D_DONE),
				"total", (int)j->nd,
				"bytes", (json_int_t)j->bytes,
				"rate", (json_int_t)j->rate,
				"age_s", (json_int_t)(j->since ? now - j->since : 0),
				"state", state_word(j, have_t),
				"stuck", j->stuck,
				"dropped_stage_out", j->dropped,
				"stuck_s", (json_int_t)j->stuck_for,
				"outage_s", (json_int_t)(j->sd->down_since ?
							 now - j->sd->down_since : 0),
				"directives", dirs);
		json_array_append_new(arr, row);
	}
	json_object_set_new(root, "jobs", arr);
	for (i = 0; i < lost->n; i++) {
		char what[256];

		cbb_sl_what(&lost->v[i], what, sizeof(what));
		json_array_append_new(gone, json_pack("{s:i, s:s, s:s, s:s, s:s}",
			"job", (int)lost->v[i].job_id,
			"kind", cbb_sl_kind_name(lost->v[i].kind),
			"slurm_state", lost->v[i].state,
			"what", what,
			"remedy", cbb_sl_remedy_of(&lost->v[i])));
	}
	json_object_set_new(root, "lost_by_slurm", lost->answered ? gone :
			    (json_decref(gone), json_null()));
	json_object_set_new(root, "query", json_pack("{s:i, s:b, s:i, s:o?}",
		"count", n ? 1 : 0, "ok", have_t, "transfers", (int)ntransfers,
		"error", jstr(qerr)));
	json_dumpf(root, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(root);
}

/* bbstat.c - see bbstat.h */
#include "bbstat.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "key.h"
#include "outcome.h"
#include "pick.h"

typedef struct {
	cbb_key_t key;
	const cbb_transfer_t *t; /* NULL for a skipped stage-out */
	unsigned attempts;
	char when[16];           /* skipped: the directive's --when= */
	char outcome[48];        /* skipped: "job exit 1", ... */
} row_t;

static int by_attempt_dir_index(const void *a, const void *b)
{
	const row_t *x = a, *y = b;

	if (x->key.attempt != y->key.attempt)
		return x->key.attempt < y->key.attempt ? -1 : 1;
	if (x->key.type != y->key.type)
		return (int)x->key.type - (int)y->key.type;
	return (x->key.index > y->key.index) - (x->key.index < y->key.index);
}

/* One row per (attempt, direction, index); *last: the newest attempt. */
static size_t collect(const cbb_transfers_t *t, row_t *rows, long *last)
{
	size_t i, k, n = 0;

	*last = -1;
	for (i = 0; i < t->n; i++) {
		const cbb_key_t *key, *picked;
		cbb_key_t tmp;

		if (t->v[i].validation_only ||
		    !(key = cbb_transfer_key(&t->v[i], &tmp)) ||
		    key->type == CBB_KEY_VALIDATE || key->type == CBB_KEY_ASIDE)
			continue; /* (a move-aside is not a directive's row) */
		for (k = 0; k < n; k++)
			if (rows[k].key.type == key->type &&
			    rows[k].key.index == key->index &&
			    rows[k].key.attempt == key->attempt)
				break;
		if (k < n)
			continue;
		rows[n].t = cbb_pick(t, key->type, key->index, (long)key->attempt,
				     &rows[n].attempts);
		if (!rows[n].t)
			continue;
		if ((long)key->attempt > *last)
			*last = (long)key->attempt;
		picked = cbb_transfer_key(rows[n].t, &rows[n].key);
		if (picked && picked != &rows[n].key)
			rows[n].key = *picked;
		n++;
	}
	return n;
}

/* Rows for stage-outs that --when= skipped ("when:outcome:line" ids). */
static size_t collect_skips(const cbb_recs_t *skips, row_t *rows, size_t n,
			    long *last)
{
	size_t i, k;

	for (i = 0; skips && i < skips->n; i++) {
		const cbb_rec_t *r = &skips->v[i];
		char when[16], why[32];
		unsigned line;
		row_t *w = &rows[n];

		if (r->kind != CBB_REC_SKIPPED ||
		    sscanf(r->id, "%15[a-z]:%31[^:]:%u", when, why, &line) != 3)
			continue;
		for (k = 0; k < n; k++)
			if (rows[k].key.type == CBB_KEY_POST &&
			    rows[k].key.index == r->index &&
			    rows[k].key.attempt == r->attempt)
				break;
		if (k < n)
			continue;
		memset(w, 0, sizeof(*w));
		w->key.type = CBB_KEY_POST;
		w->key.index = r->index;
		w->key.attempt = r->attempt;
		w->key.line = line;
		snprintf(w->when, sizeof(w->when), "%s", when);
		cbb_outcome_text(why, w->outcome, sizeof(w->outcome));
		if ((long)r->attempt > *last)
			*last = (long)r->attempt;
		n++;
	}
	return n;
}

/* Server text made safe to show: control bytes escaped, one line. */
static const char *safe(char *buf, size_t size, const char *s)
{
	return cbb_show(buf, size, s, strlen(s));
}

static int render_json(const row_t *rows, size_t n, uint32_t job_id,
		       long restart, unsigned shared_tasks, cbb_buf_t *out)
{
	json_t *root = json_object(), *arr = json_array();
	char *s;
	size_t i;
	int rc;

	if (!root || !arr) {
		json_decref(root);
		json_decref(arr);
		return -1;
	}
	json_object_set_new(root, "job_id", json_integer(job_id));
	json_object_set_new(root, "restart", json_integer(restart < 0 ? 0 : restart));
	for (i = 0; i < n; i++) {
		const cbb_transfer_t *t = rows[i].t;
		json_t *o = json_object();
		char id[160], msg[CBB_ERR_MAX];

		json_object_set_new(o, "direction", json_string(
			rows[i].key.type == CBB_KEY_POST ? "out" : "in"));
		json_object_set_new(o, "line", json_integer(rows[i].key.line));
		json_object_set_new(o, "index", json_integer(rows[i].key.index));
		json_object_set_new(o, "attempt", json_integer(rows[i].key.attempt));
		if (!t) {
			json_object_set_new(o, "state", json_string("SKIPPED"));
			json_object_set_new(o, "when", json_string(rows[i].when));
			json_object_set_new(o, "outcome",
					    json_string(rows[i].outcome));
			json_array_append_new(arr, o);
			continue;
		}
		json_object_set_new(o, "transfer_id",
				    json_string(safe(id, sizeof(id), t->id)));
		json_object_set_new(o, "state", json_string(cbb_state_name(t->state)));
		json_object_set_new(o, "error", json_string(cbb_error_name(t->error)));
		json_object_set_new(o, "error_message", json_string(
			safe(msg, sizeof(msg), t->error_message)));
		json_object_set_new(o, "active", json_boolean(t->active));
		json_object_set_new(o, "files", json_integer(t->files));
		json_object_set_new(o, "directories", json_integer(t->dirs));
		json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
		json_object_set_new(o, "bytes_per_second", json_integer((json_int_t)t->rate));
		json_object_set_new(o, "attempts", json_integer(rows[i].attempts));
		if (rows[i].key.type == CBB_KEY_SHARED)
			json_object_set_new(o, "shared_with_tasks",
					    json_integer(shared_tasks));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "transfers", arr);
	s = json_dumps(root, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!s)
		return -1;
	rc = cbb_buf_adds(out, s);
	rc |= cbb_buf_addc(out, '\n');
	free(s);
	return rc;
}

int cbb_status_render(const cbb_transfers_t *t, const cbb_recs_t *skips,
		      unsigned shared_tasks, uint32_t job_id, bool json,
		      cbb_buf_t *out)
{
	row_t *rows = calloc(t->n + (skips ? skips->n : 0) + 1, sizeof(*rows));
	long restart;
	size_t n, i;
	int rc = 0;

	if (!rows)
		return -1;
	n = collect(t, rows, &restart);
	n = collect_skips(skips, rows, n, &restart);
	qsort(rows, n, sizeof(*rows), by_attempt_dir_index);
	if (json) {
		rc = render_json(rows, n, job_id, restart, shared_tasks, out);
		free(rows);
		return rc;
	}
	if (n == 0) {
		rc = cbb_buf_printf(out, "No Conduit transfers found for Slurm "
				    "job %u\n", job_id);
		free(rows);
		return rc;
	}
	rc |= cbb_buf_printf(out, "%-4s %-5s %-3s %-27s %7s %11s %13s  %-36s  "
			     "%s\n", "DIR", "LINE", "ATT", "STATE", "FILES",
			     "BYTES", "RATE", "TRANSFER_ID", "ERROR");
	for (i = 0; i < n; i++) {
		const cbb_transfer_t *x = rows[i].t;
		char bytes[32], rate[40], id[160], msg[160], shared[48];

		if (shared_tasks)
			snprintf(shared, sizeof(shared), "%s(shared with %u "
				 "task%s)", x && x->error ? " " : "",
				 shared_tasks, shared_tasks == 1 ? "" : "s");
		else
			snprintf(shared, sizeof(shared), "%s(shared by the "
				 "array's tasks)", x && x->error ? " " : "");
		if (!x) {
			snprintf(msg, sizeof(msg), "SKIPPED (when=%s, %s)",
				 rows[i].when, rows[i].outcome);
			rc |= cbb_buf_printf(out, "%-4s %-5u %-3u %-27s %7s "
					     "%11s %13s  %-36s\n", "out",
					     rows[i].key.line,
					     rows[i].key.attempt, msg, "-",
					     "-", "-", "-");
			continue;
		}

		cbb_human_bytes(bytes, sizeof(bytes), x->bytes, "");
		cbb_human_bytes(rate, sizeof(rate), x->rate, "/s");
		rc |= cbb_buf_printf(out, "%-4s %-5u %-3u %-27s %7u %11s %13s  "
				     "%-36s  %s%s%s%s\n",
				     rows[i].key.type == CBB_KEY_POST ? "out" : "in",
				     rows[i].key.line, rows[i].key.attempt,
				     cbb_state_name(x->state), x->files, bytes,
				     rate, safe(id, sizeof(id), x->id),
				     x->error ? cbb_error_name(x->error) : "",
				     x->error ? ": " : "",
				     x->error ? safe(msg, sizeof(msg),
						     x->error_message) : "",
				     rows[i].key.type == CBB_KEY_SHARED ?
					     shared : "");
	}
	free(rows);
	return rc;
}

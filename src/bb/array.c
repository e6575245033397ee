/* array.c - see array.h */
#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "statefile.h"

/* A directive line with a symbol that differs between an array's tasks. */
bool cbb_array_per_task(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++)
		if (text[i] == '%' && (text[i + 1] == 'a' ||
				       text[i + 1] == 'j' || text[i + 1] == 'b'))
			return true;
	return false;
}

/*
 * Whether another task of the array still waits on its shared
 * stage-ins: a task that joined them and is not over.  When squeue
 * cannot say, it is taken to wait (a shared transfer is never aborted
 * under a task that may need it).  With none left, the array's shared
 * records go too.  All under the array's lock, as every start decision
 * is: a task that is starting or joining them right now (it holds the
 * lock) waits on them, and the records are never removed under it.
 */
#define CBB_TEARDOWN_LOCK_WAIT_MS 2000

bool cbb_array_others_wait(cbb_bbcall_t *c, uint32_t array_job_id,
			uint32_t self)
{
	cbb_recs_t joined;
	cbb_err_t err;
	char sq[4200];
	uint32_t *ids;
	size_t i, n = 0;
	int alive, lock;

	cbb_err_clear(&err);
	lock = cbb_shared_lock(&c->base.cfg, c->base.cluster, array_job_id,
			       CBB_TEARDOWN_LOCK_WAIT_MS);
	if (lock < 0)
		return true; /* busy: another task is inside, using them */
	if (cbb_shared_load(&c->base.cfg, c->base.cluster, array_job_id,
			    &joined, &err) < 0) {
		cbb_shared_unlock(lock);
		return true;
	}
	ids = calloc(joined.n + 1, sizeof(*ids));
	if (!ids) {
		cbb_recs_free(&joined);
		cbb_shared_unlock(lock);
		return true;
	}
	for (i = 0; i < joined.n; i++) {
		long id = strtol(joined.v[i].id, NULL, 10);

		if (joined.v[i].kind == CBB_REC_JOINED && id > 0 &&
		    id <= (long)UINT32_MAX && (uint32_t)id != self)
			ids[n++] = (uint32_t)id;
	}
	cbb_recs_free(&joined);
	/* one squeue for the whole array, however many tasks joined */
	alive = cbb_any_alive(cbb_conf_squeue(&c->base.cfg, sq, sizeof(sq)),
			      array_job_id, ids, n, CBB_SQUEUE_TIMEOUT_MS);
	free(ids);
	if (alive == 0)
		cbb_shared_forget(&c->base.cfg, c->base.cluster, array_job_id);
	cbb_shared_unlock(lock);
	return alive != 0;
}

/*
 * A teardown has no job_info: the task's own records say whether it
 * joined its array's shared stage-ins, and of which array.
 */
uint32_t cbb_array_of(cbb_bbcall_t *c, uint32_t job_id)
{
	cbb_recs_t own;
	cbb_err_t err;
	size_t i;
	long a = 0;

	cbb_err_clear(&err);
	if (cbb_recs_load(&c->base.cfg, c->base.cluster, job_id, UINT32_MAX,
			  0, &own, &err) < 0)
		return 0;
	for (i = 0; i < own.n; i++)
		if (own.v[i].kind == CBB_REC_JOINED)
			a = strtol(own.v[i].id, NULL, 10);
	cbb_recs_free(&own);
	return a > 0 && a <= (long)UINT32_MAX ? (uint32_t)a : 0;
}

void cbb_array_teardown(cbb_bbcall_t *c, cbb_job_ctx_t *j)
{
	j->array_job_id = cbb_array_of(c, j->job_id);
	if (j->array_job_id)
		j->abort_shared = !cbb_array_others_wait(c, j->array_job_id, j->job_id);
}

/* How many tasks joined an array's shared stage-ins. */
unsigned cbb_array_joined(cbb_bbcall_t *c, uint32_t array_job_id)
{
	cbb_recs_t r;
	cbb_err_t err;
	size_t i, k;
	unsigned n = 0;

	cbb_err_clear(&err);
	if (!array_job_id || cbb_shared_load(&c->base.cfg, c->base.cluster,
					     array_job_id, &r, &err) < 0)
		return 0;
	for (i = 0; i < r.n; i++) {
		if (r.v[i].kind != CBB_REC_JOINED)
			continue;
		for (k = 0; k < i; k++)
			if (r.v[k].kind == CBB_REC_JOINED &&
			    !strcmp(r.v[k].id, r.v[i].id))
				break;
		n += k == i;
	}
	cbb_recs_free(&r);
	return n;
}

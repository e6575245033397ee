/* array.c - see array.h */
#include "array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "statefile.h"

/*
 * Whether another task of the array still waits on its shared
 * stage-ins: a task that joined them and is not over.  When squeue
 * cannot say, it is taken to wait (a shared transfer is never aborted
 * under a task that may need it).  All under the array's lock, as every
 * start decision is: a task that is starting or joining them right now
 * (it holds the lock) waits on them.  With none left the lock is kept
 * through the abort and the forgetting (cbb_array_release): were it
 * let go first, a task starting now would find the transfers still
 * running, join them, and lose them to the abort.
 */
#define CBB_TEARDOWN_LOCK_WAIT_MS 2000

/*
 * Only the records of this task's array count (its identity as the
 * task's join recorded it, else its first attempt's submit time, and
 * its user): records of another array that had the id are not its.
 */
int cbb_array_decide(cbb_job_ctx_t *j)
{
	uint32_t array_job_id = j->array_job_id, self = j->job_id;
	cbb_array_ident_t who, joined_as;
	cbb_recs_t joined;
	cbb_err_t err;
	char sq[4200];
	uint32_t *ids;
	size_t i, n = 0;
	int alive, lock;
	bool foreign;

	j->abort_shared = false;
	if (!array_job_id)
		return -1;
	cbb_err_clear(&err);
	who.uid = j->uid;
	who.submit = j->restart ? 0 : j->submit;
	if (cbb_joined_of(j->sd, self, who.uid,
			  &joined_as) == array_job_id)
		who = joined_as;
	lock = cbb_shared_lock(j->sd, array_job_id,
			       NULL, CBB_TEARDOWN_LOCK_WAIT_MS);
	if (lock < 0)
		return -1; /* busy: another task is inside, using them */
	if (cbb_shared_load_of(j->sd, array_job_id,
			       &who, &joined, &foreign, &err) < 0 || foreign) {
		/* another array's: not this task's to decide or remove */
		cbb_recs_free(&joined);
		cbb_lock_release(lock);
		return -1;
	}
	ids = calloc(joined.n + 1, sizeof(*ids));
	if (!ids) {
		cbb_recs_free(&joined);
		cbb_lock_release(lock);
		return -1;
	}
	for (i = 0; i < joined.n; i++) {
		long id = strtol(joined.v[i].id, NULL, 10);

		if (joined.v[i].kind == CBB_REC_JOINED && id > 0 &&
		    id <= (long)UINT32_MAX && (uint32_t)id != self)
			ids[n++] = (uint32_t)id;
	}
	cbb_recs_free(&joined);
	/* one squeue for the whole array, however many tasks joined */
	alive = cbb_any_alive(cbb_conf_squeue(j->cfg, sq, sizeof(sq)),
			      array_job_id, ids, n, CBB_SQUEUE_TIMEOUT_MS);
	free(ids);
	if (alive != 0) {
		cbb_lock_release(lock);
		return -1;
	}
	j->abort_shared = true;
	return lock;
}

int cbb_array_teardown(cbb_job_ctx_t *j)
{
	/* a join recorded for another user is another job's */
	j->array_job_id = cbb_joined_of(j->sd, j->job_id, j->uid, NULL);
	return cbb_array_decide(j);
}

void cbb_array_release(cbb_job_ctx_t *j, int lock)
{
	if (lock < 0)
		return;
	/* the holder of the lock: nobody else is inside */
	cbb_shared_forget(j->sd, j->array_job_id);
	cbb_lock_release(lock);
}

/* stage_array.c - see stage_array.h */
#include "stage_array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "statefile.h"

#define CBB_SHARED_WAIT_MS 2000


bool cbb_any_shared(const cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (cbb_is_shared(j, &plan->v[i], stage))
			return true;
	return false;
}

/* The array's identity as a task sees it: its first attempt, its uid. */
static cbb_array_ident_t ident_of(const cbb_job_ctx_t *j)
{
	cbb_array_ident_t a;

	a.submit = j->restart ? 0 : j->submit;
	a.uid = j->uid; /* CBB_UID_UNKNOWN is UINT32_MAX, never a job's */
	return a;
}

int cbb_shared_lock_for(cbb_job_ctx_t *j, const cbb_plan_t *plan,
			cbb_stage_t stage, int *fd)
{
	cbb_array_ident_t a = ident_of(j);

	*fd = -1;
	if (!cbb_any_shared(j, plan, stage))
		return 1;
	/* the array's records are this array's from here on */
	*fd = cbb_shared_lock(j->sd, j->array_job_id, &a,
			      CBB_SHARED_WAIT_MS);
	return *fd >= 0;
}

bool cbb_task_joined(const cbb_recs_t *recs)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		if (recs->v[i].kind == CBB_REC_JOINED)
			return true;
	return false;
}

void cbb_join_shared(cbb_job_ctx_t *j, bool uses, const cbb_recs_t *recs,
		     const cbb_recs_t *shared)
{
	char id[16];
	size_t i;
	bool in_array = false;
	cbb_rec_t r;
	cbb_err_t e;

	if (!uses)
		return;
	snprintf(id, sizeof(id), "%u", j->job_id);
	for (i = 0; i < shared->n; i++)
		in_array = in_array || (shared->v[i].kind == CBB_REC_JOINED &&
					!strcmp(shared->v[i].id, id));
	cbb_job_rec(j, &r, CBB_KEY_SHARED, 0, 0, CBB_REC_JOINED, NULL);
	r.uid = ident_of(j).uid;
	r.has_uid = r.uid != CBB_UID_UNKNOWN;
	cbb_err_clear(&e);
	if (!in_array) {
		snprintf(r.id, sizeof(r.id), "%u", j->job_id);
		(void)cbb_shared_add(j->sd, j->array_job_id, &r, 1, &e);
	}
	if (!cbb_task_joined(recs)) {
		snprintf(r.id, sizeof(r.id), "%u", j->array_job_id);
		(void)cbb_recs_add(j->sd, j->job_id, &r, 1, &e);
	}
}

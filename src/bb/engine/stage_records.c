/*
 * stage_records.c - the start records the stage code writes to StateDir
 * (statefile.h): one at a time, or a batch of starts written with one
 * append per file (the job's own, the array's shared one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage_int.h"

/* an array's shared stage-ins are recorded for the whole array */
static bool for_array(cbb_key_type_t type, char kind)
{
	return type == CBB_KEY_SHARED && kind != CBB_REC_JOINED;
}

static void write_records(cbb_job_ctx_t *j, const cbb_rec_t *r, size_t n,
			  bool array)
{
	cbb_err_t e;
	int rc;

	if (n == 0)
		return;
	cbb_err_clear(&e);
	rc = array ? cbb_shared_add(j->sd, j->array_job_id, r, n, &e)
		   : cbb_recs_add(j->sd, j->job_id, r, n, &e);
	if (rc < 0)
		cbb_job_log(j, CBB_LOG_ERROR, "%s", e.msg);
}

void cbb_stage_record(cbb_job_ctx_t *j, cbb_key_type_t type, uint32_t attempt,
		      uint32_t index, char kind, const char *id)
{
	cbb_rec_t r;

	cbb_job_rec(j, &r, type, attempt, index, kind, id);
	write_records(j, &r, 1, for_array(type, kind));
}

void cbb_batch_add(const cbb_job_ctx_t *j, cbb_batch_t *b, cbb_key_type_t type,
		   uint32_t attempt, uint32_t index, char kind, const char *id)
{
	if (for_array(type, kind))
		cbb_job_rec(j, &b->array[b->n_array++], type, attempt, index,
			    kind, id);
	else
		cbb_job_rec(j, &b->own[b->n_own++], type, attempt, index,
			    kind, id);
}

void cbb_batch_write(cbb_job_ctx_t *j, cbb_batch_t *b)
{
	write_records(j, b->own, b->n_own, false);
	write_records(j, b->array, b->n_array, true);
	b->n_own = b->n_array = 0;
}

/*
 * act.h - a decision carried out (act.c): the records and requests of
 * facts.h's decide step, once, as a batch.
 */
#ifndef CBB_ACT_H
#define CBB_ACT_H

#include "facts.h"

typedef struct {
	size_t started;      /* starts sent (or perhaps taken: MAYBE) */
	size_t retried;      /* ... of a directive that had a transfer */
	size_t deferred;     /* starts the server said to try again */
	cbb_err_t later;     /* the first of those, for the outage rule */
	cbb_err_t refused;   /* the first request Conduit refused */
	bool undone;         /* a hurried teardown came meanwhile */
	int64_t down_since;  /* the outage mark's time, 0: none */
	bool oom;
} cbb_act_t;

/*
 * Carry out d, decided from f, for job j (on its connection j->g): its
 * notes, its requests with their records, the array join and the outage
 * mark.  What came back is in *out.
 */
void cbb_act(cbb_job_ctx_t *j, const cbb_facts_t *f, cbb_decision_t *d,
	     cbb_act_t *out);

/*
 * A StateDir record of this job, stamped with its restart count, submit
 * time, uid and now; id NULL or "" is written "-".  The one place a
 * record is made.
 */
void cbb_job_rec(const cbb_job_ctx_t *j, cbb_rec_t *r, cbb_key_type_t type,
		 uint32_t attempt, uint32_t index, char kind, const char *id);

#endif

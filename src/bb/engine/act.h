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
	bool oom;
} cbb_act_t;

/* Carry out d, decided from f, for job j (on its connection j->g). */
void cbb_act(cbb_job_ctx_t *j, const cbb_facts_t *f, cbb_decision_t *d,
	     cbb_act_t *out);

#endif

/* outcome.c - see outcome.h */
#include "outcome.h"

#include <stdio.h>
#include <string.h>

/* Slurm's enum job_states (slurm.h), stable since long before 23.02. */
static const char *const state_names[] = {
	"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
	"FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
	"DEADLINE", "OUT_OF_MEMORY",
};
#define ST_PENDING 0
#define ST_COMPLETE 3
#define ST_CANCELLED 4
#define ST_FAILED 5
#define ST_LAST 11

void cbb_outcome(bool have_state, uint32_t job_state, bool have_exit,
		 uint32_t exit_code, cbb_outcome_t *o)
{
	uint32_t base = job_state & 0xff;

	memset(o, 0, sizeof(*o));
	if (!have_state || base == 1 || base == 2 || base > ST_LAST) {
		snprintf(o->why, sizeof(o->why), "unknown");
		return;
	}
	o->known = true;
	if (base == ST_PENDING) {
		snprintf(o->why, sizeof(o->why), "requeued");
		return;
	}
	if (base == ST_COMPLETE || base == ST_FAILED) {
		if (!have_exit) {
			o->success = base == ST_COMPLETE;
			snprintf(o->why, sizeof(o->why), "%s",
				 state_names[base]);
		} else if (exit_code & 0x7f) { /* WIFSIGNALED */
			snprintf(o->why, sizeof(o->why), "signal=%u",
				 exit_code & 0x7f);
		} else {
			o->success = base == ST_COMPLETE && exit_code == 0;
			snprintf(o->why, sizeof(o->why), "exit=%u",
				 (exit_code >> 8) & 0xff);
		}
		return;
	}
	snprintf(o->why, sizeof(o->why), "%s", state_names[base]);
}

int cbb_job_state_over(uint32_t job_state, const char **word)
{
	uint32_t base = job_state & 0xff;

	*word = base <= ST_LAST ? state_names[base] : "";
	if (base > ST_LAST)
		return -1;
	return base >= ST_COMPLETE;
}

int cbb_job_state_base(const char *word)
{
	int k;

	for (k = 0; k <= ST_LAST; k++)
		if (!strcmp(word, state_names[k]))
			return k;
	return -1;
}

bool cbb_when_runs(cbb_when_t w, const cbb_outcome_t *o)
{
	if (w == CBB_WHEN_ALWAYS || !o->known)
		return true;
	return (w == CBB_WHEN_SUCCESS) == o->success;
}

void cbb_outcome_text(const char *why, char *buf, size_t size)
{
	unsigned v;

	if (sscanf(why, "exit=%u", &v) == 1)
		snprintf(buf, size, "job exit %u", v);
	else if (sscanf(why, "signal=%u", &v) == 1)
		snprintf(buf, size, "job killed by signal %u", v);
	else if (!strcmp(why, "unlaunched"))
		snprintf(buf, size, "its script never ran");
	else
		snprintf(buf, size, "job %s", why);
}

/*
 * outcome.h - whether a job succeeded, for #CONDUIT_POST --when=.
 *
 * Decided from what Slurm passes data_out and test_data_out in job_info:
 * job_state (base state and flags) and exit_code (the batch script's
 * wait status).  The rule (docs/directives.md):
 *
 *   success  base state COMPLETED and exit code 0 (the script exited 0;
 *            steps that failed inside a script that exited 0 do not
 *            count: derived_ec is not used)
 *   failure  FAILED (non-zero exit or a signal), CANCELLED, TIMEOUT,
 *            NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, OUT_OF_MEMORY,
 *            and a requeued attempt (base state PENDING again: the run
 *            it stages out did not finish)
 *   unknown  no job_info or any other state: every directive runs, since
 *            losing data is worse than copying it once too often
 */
#ifndef CBB_OUTCOME_H
#define CBB_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "directive.h"

typedef struct {
	bool known;
	bool success;
	char why[32]; /* "exit=1", "signal=9", "CANCELLED", "requeued", ... */
} cbb_outcome_t;

void cbb_outcome(bool have_state, uint32_t job_state, bool have_exit,
		 uint32_t exit_code, cbb_outcome_t *o);

/*
 * Whether a job's compute is over, from job_info.job_state (a snapshot
 * slurmctld takes under its job lock when it launches the hook): 1 over
 * (completed, cancelled, failed ...; *word names the state), 0 not
 * (pending, running, suspended), -1 a state not known here.
 */
int cbb_job_state_over(uint32_t job_state, const char **word);

/* The base state a word names ("COMPLETED": 3), as job_state holds it,
 * or -1 for any other word (a flag such as STAGE_OUT). */
int cbb_job_state_base(const char *word);

/* Whether a directive with this --when= runs for outcome o. */
bool cbb_when_runs(cbb_when_t w, const cbb_outcome_t *o);

/* "job exit 1", "job killed by signal 9", "job CANCELLED", ... */
void cbb_outcome_text(const char *why, char *buf, size_t size);

#endif

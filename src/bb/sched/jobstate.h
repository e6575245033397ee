/*
 * jobstate.h - ask Slurm what state a job is in, for hooks that have no
 * job_info (teardown, arrays' other tasks) or whose job_info carries no
 * state (a poll on a Slurm that does not pass one), by running
 *
 *   squeue -h -t all -j ID -o "%A %F %K %T"
 *
 * with a hard time limit.  Every column is a number or a state word that
 * Slurm writes, never user text, and the row is picked by its job id: a
 * job name such as "x JobState=COMPLETED" or "Invalid job id" cannot
 * change the answer.  `-j` of an array's id lists every task, so the
 * array's own row is the one whose %A is the id asked about.  Output
 * never reaches the hook's stdout (which is the hook's answer to Slurm).
 */
#ifndef CBB_JOBSTATE_H
#define CBB_JOBSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a hook lets squeue take before it counts as no answer. */
#define CBB_SQUEUE_TIMEOUT_MS 5000

typedef enum {
	CBB_JOB_UNKNOWN = -1, /* squeue failed, timed out or said nothing */
	CBB_JOB_GONE = 0,     /* Slurm no longer knows the job */
	CBB_JOB_ALIVE = 1,    /* pending, running, suspended, requeued ... */
	CBB_JOB_OVER = 2,     /* its compute is over: completed, cancelled,
				 failed, in stage-out ... */
} cbb_jobstate_t;

typedef struct {
	cbb_jobstate_t cls;
	char state[32];         /* squeue's state word; "" when unknown */
	uint32_t array_job_id;  /* the array's id, or the job's own */
	bool array_task;        /* the job is a task of an array */
} cbb_job_facts_t;

/* The state of one job (facts may be NULL). */
cbb_jobstate_t cbb_job_state(const char *squeue, uint32_t job_id,
			     unsigned timeout_ms, cbb_job_facts_t *facts);

/*
 * Read squeue's answer for job_id: its stdout, its exit status and its
 * stderr (exposed for tests).
 */
cbb_jobstate_t cbb_job_state_parse(const char *out, int status,
				   const char *errtext, uint32_t job_id,
				   cbb_job_facts_t *facts);

/*
 * Whether any of the tasks `ids` of an array is not over, with one
 * squeue for the whole array: 1 (alive, or in a state not known here),
 * 0 (all over or gone), -1 (squeue could not be run, failed, timed out
 * or was killed: do not assume either).  Read by the same reader as
 * cbb_job_state(), so "gone" means the same thing for both.
 */
int cbb_any_alive(const char *squeue, uint32_t array_job_id,
		  const uint32_t *ids, size_t n, unsigned timeout_ms);

/*
 * The states of n jobs with one squeue (`-j ID,ID,...`): out[i] for
 * ids[i].  A job the answer does not list stays CBB_JOB_UNKNOWN (with
 * several ids squeue does not say "Invalid job id" for one of them; ask
 * it alone).  Returns -1 when squeue gave no answer, else 0.
 */
int cbb_jobs_state(const char *squeue, const uint32_t *ids, size_t n,
		   unsigned timeout_ms, cbb_job_facts_t *out);

/*
 * Whether Slurm has ended the job for good, its stage hooks included:
 * it is gone, or in a final state (not STAGE_OUT, not COMPLETING, not
 * alive).  A stage-out it still had to finish then runs no more hook.
 */
bool cbb_job_ended_for_good(const cbb_job_facts_t *f);

/* Whether squeue's state word is a final one (COMPLETED, FAILED, ...). */
bool cbb_job_state_final(const char *state);

/* Classify a state word (exposed for tests). */
cbb_jobstate_t cbb_job_state_classify(const char *word);

#endif

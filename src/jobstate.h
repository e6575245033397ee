/*
 * jobstate.h - ask Slurm what state a job is in, from a hook that has no
 * job_info (teardown), by running `scontrol show job -o ID` with a hard
 * time limit.  Its output never reaches the hook's stdout (which is the
 * hook's answer to Slurm).
 */
#ifndef CBB_JOBSTATE_H
#define CBB_JOBSTATE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	CBB_JOB_UNKNOWN = -1, /* scontrol failed or timed out */
	CBB_JOB_GONE = 0,     /* Slurm no longer knows the job */
	CBB_JOB_ALIVE = 1,    /* pending, running, suspended, ... */
	CBB_JOB_OVER = 2,     /* cancelled, completed, failed, ... */
} cbb_jobstate_t;

/* `state` receives the JobState word (may be empty). */
cbb_jobstate_t cbb_job_state(const char *scontrol, uint32_t job_id,
			     unsigned timeout_ms, char *state, size_t size);

/* Classify a JobState word (exposed for tests). */
cbb_jobstate_t cbb_job_state_classify(const char *word);

#endif

/*
 * lost.h - a stage-out Slurm dropped (lost.c): data_out saves what it is
 * to do; a sweep that finds the job over with that stage-out never seen
 * to end finishes it as the job's own test_data_out would have.
 */
#ifndef CBB_LOST_H
#define CBB_LOST_H

#include <stdbool.h>
#include <stdint.h>

#include "directive.h"
#include "job.h"
#include "jobstate.h"
#include "statefile.h"

/* data_out: save the plan's stage-out (--when= applied) in StateDir's
 * .outplan; a failure is logged, never the hook's.  _polled, for each
 * stage-out poll: mark the plan (the time of the job's last stage-out
 * hook), saving it first when there is none (a data_out of an earlier
 * release). */
void cbb_lost_save(cbb_job_ctx_t *j, const cbb_plan_t *plan);
void cbb_lost_polled(cbb_job_ctx_t *j, const cbb_plan_t *plan);

/*
 * A stage-out Slurm dropped before any hook of it ran, so none saved its
 * plan: Slurm 25.11 keeps taking job ends for a minute after it stopped
 * slurmscriptd on its way down, and each hook then "failed, status=-1,
 * response=(null)" (post_run, then the teardowns, and the buffer is
 * removed).  Its plan is built here as data_out would build it: `script`
 * (Slurm's copy of the job's batch script) parsed as paths parses it,
 * its % symbols expanded from `job` (Slurm's record of the job, as
 * job_info has it), checked against the allow-lists for the job's uid,
 * --when= applied from j's job_state and exit_code; then saved as
 * cbb_lost_save saves it.  j: the job's context (cluster, StateDir, uid,
 * restart, submit, array ids, state and exit).  0 saved; 1 nothing to
 * stage out (no #CONDUIT_POST, or --when= skipped every one: the skips
 * recorded); -1 with err (a script that no longer parses, or StateDir
 * refused the plan).
 */
int cbb_lost_rebuild(cbb_job_ctx_t *j, const char *script, size_t len,
		     const cbb_job_t *job, cbb_err_t *err);

/* A saved stage-out plan, read back. */
typedef struct {
	uint32_t uid, restart, array_job_id, array_task_id;
	int64_t submit, saved;
	bool requeued;
	bool rebuilt;    /* built by cbb_lost_rebuild (no hook ran) */
	cbb_plan_t plan; /* its stage-out directives only */
} cbb_lost_t;

/* -1 (err says why: none, unreadable, another version: declined). */
int cbb_lost_load(cbb_statedir_t *sd, uint32_t job_id, cbb_lost_t *out,
		  cbb_err_t *err);
void cbb_lost_free(cbb_lost_t *l);
/* The run attempt the saved stage-out serves. */
uint32_t cbb_lost_attempt(const cbb_lost_t *l);
/* Whether the job's records never saw that stage-out end. */
bool cbb_lost_open(const cbb_lost_t *l, const cbb_recs_t *recs);
/* The same from StateDir: 1 the job's plan was never seen to end, 0 it
 * was (or there is none), -1 it or the records cannot be read. */
int cbb_lost_is_open(cbb_statedir_t *sd, uint32_t job_id);
/*
 * Finish job `id`'s dropped stage-out (self: the hook or command doing
 * it, `who` what it is: "sweep", "teardown" or "conduit-bb recover", as
 * its AuditLog lines and, a sweep with its job, its log lines say it):
 * one poll of it, as
 * its test_data_out would do (starting what is missing, never twice).
 * 0 when it ended, done or failed (the job's records are gone, as its
 * teardown would have taken them), or a hurried teardown's mark covers
 * it (scancel --hurry: not finished); 1 while it runs (the records stay
 * for the next sweep); -1 when its plan cannot be read (logged).
 */
int cbb_lost_finish(cbb_job_ctx_t *self, uint32_t id,
		    const cbb_job_facts_t *f, const char *who);
/*
 * The teardown without hurry, the last hook of the job: when its
 * stage-out was never seen to end and Slurm says the job has ended or
 * shows it in STAGE_OUT (a stage-out hook killed, then the teardown that
 * TeardownFailure queues: Slurm is done with that stage-out), finish it
 * as above; when squeue gives no answer, keep it for the sweeps.  true
 * when it still runs: the caller keeps the job's records for the sweeps.
 */
bool cbb_lost_teardown(cbb_job_ctx_t *j);

#endif

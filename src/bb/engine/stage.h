/*
 * stage.h - what the staging hooks do, in plain C over the Conduit client.
 *
 * Every function is safe to repeat and to race for the same job.  A
 * job's transfers are found on Conduit by their comment key (key.h),
 * and StateDir remembers what was started (statefile.h): a transfer that
 * Query does not show yet is waited for, for StartVisibleGrace, and one
 * that never shows up (a server that lost its database, a failover) is
 * declared lost and started again.  A directive is started only when
 * neither Conduit nor the record shows it running or done.
 *
 * The engine reads once, decides purely and acts once (facts.h):
 * facts.c (gather), decide.c (what each directive needs), requeue.c
 * (the requeue rules: what runs again, what goes aside), act.c (the
 * batch of records and requests), stage.c (the stage hooks' pass),
 * when.c (--when=), teardown.c (both teardowns, a job found over),
 * sweep.c (other jobs' orphaned stage-ins), validate.c (submit time).
 * Which attempt a stage serves is job.h's.
 */
#ifndef CBB_STAGE_H
#define CBB_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "conduit.h"
#include "directive.h"
#include "job.h"
#include "pick.h"

enum { CBB_POLL_DONE = 0, CBB_POLL_BUSY = 1, CBB_POLL_FAILED = -1 };

/*
 * data_in / data_out: one Query, then start every directive of `stage`
 * that is not running, done, or waiting to show up, all at once; never
 * waits for a transfer.  A server that cannot be reached is left to the
 * polls (they start what is missing once it answers).
 */
int cbb_stage_start(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		    cbb_stage_t stage, cbb_err_t *err);

/*
 * test_data_in / test_data_out: one Query.  DONE when every directive's
 * transfer is FINALIZED (or, for stage-in, was in an earlier attempt),
 * BUSY while any runs or has yet to show up, FAILED (err names the line
 * and Conduit's error) as soon as one fails.  What is missing (lost, or
 * never started) is started here.  An unreachable server is BUSY for
 * ServerDownGrace (stage-in) or StageOutDownGrace (stage-out), then
 * FAILED.
 */
int cbb_stage_poll(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		   cbb_stage_t stage, cbb_err_t *err);

/*
 * #CONDUIT_POST --when=: mark the stage-out directives this job's
 * outcome skips (d->skip: the stage code leaves them alone) and record
 * each once per attempt for bbstat, logging it the first time.  A record
 * that cannot be written only costs the bbstat row.
 */
void cbb_stage_apply_when(const cbb_job_ctx_t *j, cbb_plan_t *plan);

/*
 * A poll of a stage-in: whether the job is over (from its job_info
 * state, else squeue at most every few seconds, or at once with `now`),
 * and if it is, abort its transfers and forget its records (kept when
 * the abort failed: cbb_stage_sweep stops them later).  1 (err says so)
 * when it is over, else 0.
 */
int cbb_stage_job_ended(cbb_job_ctx_t *j, bool now, cbb_err_t *err);

/*
 * job_teardown: abort the job's active transfers (every attempt; only
 * its stage-ins with `in_only`) when `abort_active`; otherwise leave
 * them.  "Already over" counts as done.  An array task's shared
 * stage-ins are aborted only with abort_shared.
 */
int cbb_stage_teardown(cbb_job_ctx_t *j, bool abort_active, bool in_only,
		       cbb_err_t *err);

/*
 * The two teardowns Slurm asks for (hooks/staging.c's l_job_teardown says
 * when each comes).  j->g: a connection, opened here when needed.
 *
 * Without hurry nothing is aborted but the stage-ins of a job that is
 * over (its hurried teardown and polls may have been killed: this is the
 * last hook that hears of it), and the job's records go.
 *
 * With hurry the job's state is asked from Slurm: alive, its transfers
 * are left alone (0); over or gone, a mark stops any stage hook still to
 * come, its transfers are aborted and its records go (kept for the
 * sweep when its stage-in could not be stopped); Slurm cannot say,
 * nothing is aborted and -1 (err set) makes Slurm retry.  For an array
 * task, the array's shared stage-ins go with the last task that waited.
 */
void cbb_stage_teardown_done(cbb_job_ctx_t *j);
int cbb_stage_teardown_hurried(cbb_job_ctx_t *j, cbb_err_t *err);

/*
 * How many of the job's stage-in transfers still run (one Query), or -1
 * (err set).
 */
long cbb_stage_in_active(cbb_job_ctx_t *j, cbb_err_t *err);

/*
 * Whether StateDir remembers a stage-in start for the job (its own, or
 * joining its array's) in an attempt whose stage-in was not seen to end
 * (a poll that finds a stage over writes its ACCOUNTED record).  What a
 * teardown goes by before it spends a Query on a job that is gone, and
 * before it forgets a job whose stage-in it could not stop.
 */
bool cbb_stage_in_unfinished(cbb_job_ctx_t *j);

/*
 * The backstop for a job cancelled in stage-in whose every hook that
 * would have stopped its transfers was killed (its polls and its hurried
 * teardown, SIGKILLed by Slurm): once done with its own job, every start
 * (data_in, data_out) and every teardown sweeps StateDir for other jobs
 * (never a poll: a poll asks Slurm nothing) whose records
 * show a stage-in never seen to end, asks Slurm about a few of them, and
 * aborts the stage-in transfers of those that were cancelled (or that
 * Slurm no longer knows), as their hurried teardown would have: the mark
 * that stops a late stage hook first, their records gone after.
 *
 * Bounded (sweep.c): at most one sweep a second over all hooks
 * (StateDir's `sweep` file, under a lock never waited for), at most 32
 * record files read (a window that moves on, so none is starved; a file
 * whose job's hooks hold its lock is skipped, never waited on), at most
 * 8 jobs asked about with one squeue (one more for a job the list leaves
 * out), and a Query and a StopTransfer only for a job that is over,
 * within what is left of the hook's own time budget.
 *
 * `self` is the hook's own job (never swept), with the call's config,
 * StateDir handle and logger; self->g the call's connection, opened here
 * when a job needs it and not yet open (its owner closes it).  Logs;
 * never fails the hook.
 */
void cbb_stage_sweep(cbb_job_ctx_t *self);

/*
 * job_process with SubmitValidation=remote: every stage-in directive
 * sent to Conduit as a validation-only probe, at once, within the
 * connection's budget (SubmitTimeout), never waited for: the stage-in
 * reads the answers before it starts anything (validate.c).  Returns -1
 * (err set) only for a directive Conduit refused outright; an
 * unreachable or busy server accepts and logs.
 */
int cbb_stage_validate(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		       cbb_err_t *err);

/*
 * For a job just cancelled in stage-in by `conduit-bb recover
 * --cancel-stuck`: what its hurried teardown would have done (Slurm kills
 * the scripts of a pending job it cancels, that teardown among them):
 * its stage-in transfers aborted, the mark that stops a late stage hook,
 * its records gone.  0 done (or nothing to do: no open stage-in, or its
 * own teardown holds its records), -1 when the server did not answer
 * (logged; its records stay for the sweeps).
 */
int cbb_stage_stop_cancelled(cbb_job_ctx_t *self, uint32_t id);

#endif

/*
 * account.h - staging in accounting.  When a stage of a job attempt ends
 * (a poll finds every directive done):
 *
 *   - a one-line summary is logged through Slurm, e.g.
 *       job 42: conduit attempt 0: in 3 transfers 2.1 GiB 41 s; 0 failed
 *     and the stage-in's is appended to the job's AdminComment with
 *     `scontrol update` (admins see it in `scontrol show job`, and sacct
 *     once the job reaches slurmdbd).  Slurm refuses to update a job that
 *     has finished, so the stage-out's goes to the log and AuditLog only;
 *   - with AuditLog=, one JSON line per directive of the stage, all in
 *     one write(2) to a file opened with O_APPEND, so lines of hooks that
 *     run at once never interleave; the file is opened anew by every
 *     hook, so logrotate needs no signal (create or copytruncate).  The
 *     same file holds the hook records (audit.h, bbcall.h).
 *
 * Once per stage and attempt: a StateDir record marks it done (written
 * with the decision that found the stage over, facts.h), and a summary
 * AdminComment already holds is never appended again.  Failures
 * are logged, never a staging failure.
 */
#ifndef CBB_ACCOUNT_H
#define CBB_ACCOUNT_H

#include "conduit.h"
#include "directive.h"
#include "job.h"
#include "facts.h"

/*
 * A stage the decision found over for this attempt, and not summarised
 * yet (dec->account: its ACCOUNTED record goes with the decision's
 * batch, act.c): its summary, AdminComment and AuditLog lines.
 */
void cbb_account(cbb_job_ctx_t *j, const cbb_facts_t *f,
		 const cbb_decision_t *dec);

/* The summary line of a stage (exposed for tests). */
void cbb_account_summary(const cbb_facts_t *f, const cbb_decision_t *dec,
			 char *buf, size_t size);

#endif

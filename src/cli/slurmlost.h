/*
 * slurmlost.h - the jobs a slurmctld restart left where Slurm itself
 * will never move them (docs/admin.md, "What Slurm loses in a restart"),
 * for `conduit-bb status`, `metrics` and `recover`:
 *
 *   held       pending and held, its reason Slurm's own for a stage-in
 *              hook it killed ("slurm_bb_test_data_in failed:" with no
 *              message, or "(null)" for one it could not run at all:
 *              conduit_bb's own failures always say why), or,
 *              once Slurm has dropped that text, a plain JobHeldAdmin
 *              whose newest SystemComment entry is that empty failure;
 *              Slurm waits for an admin to release it
 *   launch     RUNNING (a batch job) for longer than pre_run may take
 *              (OtherTimeout, plus a minute), started in the minutes
 *              before slurmctld last started, with nothing running on
 *              its node (`sstat -a -j ID` lists no step; slurmctld keeps
 *              the batch step it launched, or meant to, before the
 *              restart): its launch was lost in the restart
 *   stage-in   pending, its buffer "staging-in" (or "teardown") by its
 *              own record, while Slurm has no buffer for it (`scontrol
 *              show burst`): no hook will ever be called for it
 *   stage-out  in STAGE_OUT the same way (its buffer "staging-out",
 *              "post-run", "staged-out" or "teardown": a teardown that
 *              failed as slurmctld stopped)
 *   unstaged   ended (completed, failed, cancelled ...), held, its buffer
 *              removed, the newest entry of its SystemComment (but the
 *              teardowns after it) its post_run or data_out failing with
 *              nothing said or "(null)": Slurm could not run its stage-out
 *              (slurmscriptd gone: 25.11 takes job ends for a minute after
 *              it stopped slurmscriptd on its way down) and ended the job
 *              once two teardowns failed the same way
 *
 * One `squeue` for every job pending, running, in stage-out or ended, one `scontrol show burst`, one `scontrol
 * show config` (slurmctld's boot time), then the jobs found asked about
 * again (one squeue): a job counts only when both readings agree, so one
 * caught between two states is not taken for lost; `sstat` for a
 * launch (its node's answer).  The columns read are numbers and state
 * words Slurm writes; a held job's reason (text a user's job can
 * influence) is read alone, per job, with `squeue -j ID`.
 */
#ifndef CBB_CLI_SLURMLOST_H
#define CBB_CLI_SLURMLOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"

typedef enum {
	CBB_SL_HELD = 1,
	CBB_SL_LAUNCH,
	CBB_SL_STAGE_IN,
	CBB_SL_STAGE_OUT,
	CBB_SL_UNSTAGED,
} cbb_sl_kind_t;

/* the kinds there are */
#define CBB_SL_KINDS 5

/* the states squeue is asked for (-t) */
#define CBB_SL_STATES "PD,R,SO,CD,F,CA,TO,NF,OOM,PR,DL,BF"

typedef struct {
	uint32_t job_id;
	cbb_sl_kind_t kind;
	char state[32];     /* squeue's state word */
	char bbstate[24];   /* the job's burst-buffer state */
	char hook[48];      /* held: the hook Slurm killed */
	long used_s;        /* launch: how long it has run */
	uint32_t restart;   /* Slurm's restart count: the attempt */
	bool out_done;      /* stage-out: finished by conduit_bb, StateDir
			       says (.outdone; cbb_sd_mark_done) */
} cbb_sl_job_t;

#define CBB_SL_MAX 256

typedef struct {
	cbb_sl_job_t v[CBB_SL_MAX];
	size_t n;
	long after_s;       /* the launch limit used */
	bool answered;      /* false: Slurm gave no answer, none is listed */
} cbb_sl_list_t;

/*
 * Find them (only the jobs of `only` when nonly > 0).  after_s < 0:
 * OtherTimeout (from `scontrol show burst`; 300 s when it does not say)
 * plus 60 s.
 */
void cbb_slurm_lost(const cbb_config_t *cfg, long after_s,
		    const uint32_t *only, size_t nonly, cbb_sl_list_t *out);

/* The job's entry in `l`, or NULL. */
const cbb_sl_job_t *cbb_sl_find(const cbb_sl_list_t *l, uint32_t job_id);

/* "held", "launch", "stage-in", "stage-out", "unstaged" */
const char *cbb_sl_kind_name(cbb_sl_kind_t k);

/* What `conduit-bb recover` does for a job of this kind; for this job
 * (one whose stage-out conduit_bb finished: that it did). */
const char *cbb_sl_remedy(cbb_sl_kind_t k);
const char *cbb_sl_remedy_of(const cbb_sl_job_t *j);

/*
 * Run a Slurm command (argv[0] a path) within timeout_ms: its exit
 * status, with its stdout (at most out_max bytes) and stderr in *out and
 * *err (the caller frees both); -1, and both NULL, when it could not be
 * run, was killed, timed out or said too much.
 */
int cbb_sl_run(char *const argv[], unsigned timeout_ms, size_t out_max,
	       char **out, char **err);

/* What was lost, in a few words ("Slurm killed its slurm_bb_... ") */
void cbb_sl_what(const cbb_sl_job_t *j, char *buf, size_t size);

/*
 * scontrol's path (Scontrol=), or that of `prog` ("scancel") beside it:
 * the same name with "scontrol" replaced (`/usr/bin/scancel`).
 */
const char *cbb_sl_beside(const cbb_config_t *cfg, const char *prog,
			  char *buf, size_t size);

/* ---- the readers, exposed for tests ---------------------------------- */

/*
 * From the rows of `squeue -h -t CBB_SL_STATES -O JobId:|,State:|,BurstBufferState:|,
 * TimeUsed:|,Priority:|,BatchFlag:|,StartTime:|,RestartCnt:|`, the
 * buffers (and
 * OtherTimeout) `scontrol show burst` lists and slurmctld's boot time:
 * the candidates, at most max.  A held job's hook is not known yet
 * (cbb_sl_killed_hook), nor whether a launch's job runs (sstat).
 */
size_t cbb_sl_candidates(const char *rows, const char *burst, time_t boot,
			 long after_s, cbb_sl_job_t *out, size_t max);

/* OtherTimeout= from `scontrol show burst`, or -1. */
long cbb_sl_other_timeout(const char *burst);

/* BOOT_TIME from `scontrol show config` (local time), or -1. */
time_t cbb_sl_boot_time(const char *config);

/*
 * Whether a held job's reason is Slurm's for a hook it killed: it ends
 * "slurm_bb_NAME failed:" (or "slurm_bb_NAME:") with nothing after but
 * blanks (and squeue's closing '|').  Names the hook.
 */
bool cbb_sl_killed_hook(const char *reason, char *hook, size_t size);

/*
 * The same for a job whose reason Slurm has dropped (plain JobHeldAdmin)
 * or written over ("teardown failed: (null)"): the newest entry of its
 * SystemComment in `scontrol show job ID`'s answer but the teardowns that
 * failed after it with nothing said or "(null)", "<time>
 * burst_buffer/lua: slurm_bb_NAME: " with nothing after (or "(null)").
 */
bool cbb_sl_comment_killed_hook(const char *job, char *hook, size_t size);

#endif

/*
 * statefile.h - the little state conduit_bb keeps between hook calls
 * (each call has a fresh Lua state and often a fresh process), one set of
 * small files per job in StateDir:
 *
 *   <cluster>.<job>.started  transfers the stage hooks started
 *   <cluster>.<job>.down     when the Conduit server was first unreachable
 *   <cluster>.<job>.asked    when Slurm was last asked about the job
 *   <cluster>.<job>.skipped  stage-outs that --when= skipped, and the
 *                            job's user, kept after teardown for
 *                            bbstat, swept after 7 days
 *   <cluster>.<array>.shared an array's shared stage-ins and the tasks
 *                            that joined them, headed by the array's
 *                            identity (and a .shared-lock file); both
 *                            swept, under the lock, after 7 days unused
 *   <cluster>.<job>.over     the job was over when a hurried teardown ran:
 *                            a stage hook that Slurm still starts after
 *                            it starts nothing; swept after a day
 *   <cluster>.<job>.lock     the job's own lock (moving an earlier
 *                            attempt's output aside), held a moment
 *   <cluster>.u<uid>.poll    one user's shared poll reply: the last
 *                            Query for all of that user's staging jobs
 *                            (engine/share.c); swept after an hour
 *   <cluster>.<job>.polled   empty: its mtime says when the job was last
 *                            polled (which jobs are staging now)
 *   <cluster>.<job>.outplan  what data_out was to stage out (its
 *                            directives and the job's facts; saved by
 *                            post_run and data_out), so a stage-out
 *                            Slurm drops can be finished (engine/lost.c)
 *   <cluster>.<job>.outdone  the submit time of a stage-out Slurm dropped
 *                            that a sweep or `conduit-bb recover` finished
 *                            while Slurm still shows the job in
 *                            STAGE_OUT: recover never builds its plan
 *                            again (lost.h); swept after 8 days
 *   <cluster>.<job>.unlaunched  the attempt (+ 1) whose launch Slurm
 *                            lost, marked by `conduit-bb recover` as it
 *                            requeues the job: its stage-out skips all
 *   sweep                    when the last sweep for other jobs'
 *                            orphaned stage-ins ran (its mtime), and
 *                            its lock (stage.h, cbb_stage_sweep)
 *
 * The code: dir.c (StateDir and the handle), job.c (the record lines,
 * one job's files and marks, and what a stage hook's pass reads and
 * writes at once), shared.c (an array's .shared and its lock), forget.c
 * (forgetting and sweeping, and what the sweep for other jobs' orphaned
 * stage-ins reads).
 *
 * StateDir must be a real directory (not a symlink) owned by root or by
 * the user the hooks run as (SlurmUser), writable by nobody else; every
 * file is opened relative to it with O_NOFOLLOW.  A file that is damaged
 * or belongs to another job is ignored, never trusted.
 */
#ifndef CBB_STATEFILE_H
#define CBB_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <time.h>

#include "cluster.h"
#include "config.h"
#include "err.h"

/*
 * A handle on StateDir for one hook call (or one command): opened and
 * checked once, at its first use, and passed down instead of the
 * config, cluster and job id triple.  Functions that may create
 * StateDir (the stage hooks' writers) create it on first use; the
 * *_peek readers never do.  Init a handle (nothing is opened; an
 * all-zero one is closed too), close it when the call ends (the bb
 * hooks' context does, in its __gc).
 */
typedef struct {
	const cbb_config_t *cfg;
	char cluster[CBB_CLUSTER_MAX]; /* as in file names: cbb_cluster_safe */
	bool open;                     /* dfd is StateDir, opened and checked */
	int dfd;
} cbb_statedir_t;

void cbb_statedir_init(cbb_statedir_t *sd, const cbb_config_t *cfg,
		       const char *cluster);
void cbb_statedir_close(cbb_statedir_t *sd);

/*
 * Check StateDir (creating it, mode 0700, when `create`); -1 with a
 * one-line message when it is missing or unsafe.
 */
int cbb_sd_check(const cbb_config_t *cfg, bool create, cbb_err_t *err);
/* The same without creating it: 0 when it is safe or still missing. */
int cbb_sd_usable(const cbb_config_t *cfg, cbb_err_t *err);

/* Record (if not yet recorded) that the server is down for this job and
 * return when that was first seen; now on any storage problem. */
time_t cbb_down_since(cbb_statedir_t *sd, uint32_t job_id);
/* When the outage was first seen, read only; 0 when no mark says so. */
time_t cbb_down_peek(cbb_statedir_t *sd, uint32_t job_id);
void cbb_down_clear(cbb_statedir_t *sd, uint32_t job_id);

/*
 * Transfers the stage hooks started.  Conduit's Query can miss a transfer
 * it has just created (lag) or has forgotten (a server that lost its
 * database): a record lets a hook wait out the lag instead of starting
 * the directive twice, and notice when a transfer never shows up.
 */
typedef enum {
	CBB_REC_STARTED = 'S', /* StartTransfer returned this id */
	CBB_REC_UNSURE = 'U',  /* StartTransfer sent (or about to be): its
				  outcome is unknown */
	CBB_REC_REFUSED = 'R', /* Conduit refused that start, or said to try
				  again: none runs */
	CBB_REC_LOST = 'L',    /* the id never showed up: given up */
	CBB_REC_SKIPPED = 'K', /* --when= skipped it: when:outcome:line:uid */
	CBB_REC_ACCOUNTED = 'C', /* the attempt's staging summary is written */
	CBB_REC_NOTED = 'N',   /* the failure of a stage-out that a requeue
				  interrupted was logged (once an attempt) */
	CBB_REC_JOINED = 'J',  /* a task uses its array's shared stage-ins;
				  id: the task's job id (in .shared) or the
				  array's id (in the task's .started); with
				  the task's uid (a "v2" line) */
	CBB_REC_ASIDE_NAME = 'A', /* the fresh name a move-aside of a place
				  goes to: id "<part>:<token>"; written
				  before the name is checked free */
	CBB_REC_OWNER = 'O',   /* in .skipped: the job's user, kept when its
				  .started goes, so root's bbstat can ask
				  Conduit as that user (never as everyone) */
} cbb_rec_kind_t;

#define CBB_SKIPPED_KEEP_S (7 * 86400)

typedef struct {
	uint32_t restart;  /* Slurm's restart count when written */
	int64_t submit;    /* the job's submit time when written */
	int type;          /* cbb_key_type_t */
	uint32_t attempt;  /* the run attempt the transfer belongs to */
	uint32_t index;    /* the directive */
	int64_t made;      /* when written (seconds since 1970) */
	char kind;         /* cbb_rec_kind_t */
	char id[64];       /* transfer id; "-" when unknown */
	bool has_uid;      /* the job's uid is known (a "v2" line): the
			      user whose transfers a start record's are, a
			      JOINED record's task */
	uint32_t uid;
} cbb_rec_t;

/*
 * Which array an array's shared records belong to: the submit time of
 * its tasks' first attempt (Slurm copies it to every task it splits off;
 * 0: unknown) and its user (CBB_UID_UNKNOWN: unknown).  A .shared file
 * starts with it ("a1 <submit> <uid>"), so a job id Slurm hands out
 * again never inherits another array's records.
 */
typedef struct {
	int64_t submit;
	uint32_t uid;
} cbb_array_ident_t;
#define CBB_UID_UNKNOWN UINT32_MAX

typedef struct {
	cbb_rec_t *v;
	size_t n;
} cbb_recs_t;

/*
 * Load a job's records.  A record written for another job that had the
 * same id (a higher restart count, or the same count with another submit
 * time) is dropped, and removed from the file.  Returns 0, or -1 (err
 * set) when StateDir is unsafe; a missing file is no records.
 */
int cbb_recs_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		  int64_t submit, cbb_recs_t *out, cbb_err_t *err);
/* Append n records (one write under a lock: records never interleave,
 * and a batch of starts costs one open, not one per directive). */
int cbb_recs_add(cbb_statedir_t *sd, uint32_t job_id, const cbb_rec_t *r,
		 size_t n, cbb_err_t *err);
void cbb_recs_free(cbb_recs_t *r);
/* The same for the stage-outs --when= skipped (the .skipped file). */
int cbb_skips_load(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		   int64_t submit, cbb_recs_t *out, cbb_err_t *err);
int cbb_skips_add(cbb_statedir_t *sd, uint32_t job_id, const cbb_rec_t *r,
		  cbb_err_t *err);

/*
 * For the hooks that run inside slurmctld or under its locks
 * (get_status): read only, never creating StateDir, never rewriting a
 * file, and waiting at most a moment for a writer's lock (then reading
 * the file as it is).  The .skipped records of a job; the array a task
 * joined (its own records), or 0; how many tasks joined an array's
 * shared stage-ins.
 */
int cbb_skips_peek(cbb_statedir_t *sd, uint32_t job_id, cbb_recs_t *out,
		   cbb_err_t *err);
uint32_t cbb_joined_array_peek(cbb_statedir_t *sd, uint32_t job_id,
			       cbb_array_ident_t *who);
/* The job's user as its records name it, or CBB_UID_UNKNOWN. */
uint32_t cbb_job_uid_peek(cbb_statedir_t *sd, uint32_t job_id);
/* (tasks of the array `who` only; none without `who`) */
unsigned cbb_shared_tasks_peek(cbb_statedir_t *sd, uint32_t array_job_id,
			       const cbb_array_ident_t *who);

/*
 * An array's shared stage-ins (docs/directives.md, "Job arrays"): start
 * records and the tasks that joined, in <cluster>.<array>.shared.  Every
 * start decision of a task is taken under cbb_shared_lock (waits at most
 * wait_ms; -1 when busy or StateDir is unusable), so two tasks never
 * start the same shared transfer.
 */
int cbb_shared_load(cbb_statedir_t *sd, uint32_t array_job_id, cbb_recs_t *out,
		    cbb_err_t *err);
int cbb_shared_add(cbb_statedir_t *sd, uint32_t array_job_id,
		   const cbb_rec_t *r, size_t n, cbb_err_t *err);
/*
 * The array a task joined, from its own records: its last JOINED record
 * whose uid is `uid` (CBB_UID_UNKNOWN: any), or 0; *who gets the
 * array's identity the join recorded.
 */
uint32_t cbb_joined_of(cbb_statedir_t *sd, uint32_t job_id, uint32_t uid,
		       cbb_array_ident_t *who);
/*
 * The shared records of the array `who` only (under the array's lock):
 * *foreign when the file belongs to another array that had this id
 * (then none).
 */
int cbb_shared_load_of(cbb_statedir_t *sd, uint32_t array_job_id,
		       const cbb_array_ident_t *who, cbb_recs_t *out,
		       bool *foreign, cbb_err_t *err);
/*
 * Take the array's lock; with `claim`, also make its .shared file that
 * array's (the records of an earlier array that had the id are dropped).
 */
int cbb_shared_lock(cbb_statedir_t *sd, uint32_t array_job_id,
		    const cbb_array_ident_t *claim, unsigned wait_ms);
void cbb_lock_release(int fd);
/*
 * Remove an array's shared records and its lock file.  Only while
 * holding cbb_shared_lock: the lock file is never unlinked from under a
 * holder, and a task that waited on the unlinked file takes the lock
 * of the new one instead (cbb_shared_lock checks that the file it
 * locked is still the one at the path).
 */
void cbb_shared_forget(cbb_statedir_t *sd, uint32_t array_job_id);

/*
 * What a stage hook's pass reads of a job, with one look-up of StateDir:
 * its records (another job's with the same id rewritten away, as
 * cbb_recs_load does), its array's shared records (array_job_id 0: none),
 * when an outage was first seen (0: none, as cbb_down_peek), and whether
 * a hurried teardown's mark covers the attempt submitted at `submit`
 * (cbb_over_for).  -1 (err set) when StateDir is unusable.  Free both
 * record sets.
 */
typedef struct {
	cbb_recs_t recs, shared;
	int64_t down_since;
	bool over;
} cbb_sd_pass_t;
int cbb_sd_job_read(cbb_statedir_t *sd, uint32_t job_id, uint32_t restart,
		    int64_t submit, uint32_t array_job_id, cbb_sd_pass_t *out,
		    cbb_err_t *err);
/*
 * ... and what it writes: records to the job's file and its array's, one
 * append each, then *over: whether a hurried teardown's mark now covers
 * the attempt (it came while the pass worked).
 */
int cbb_sd_job_append(cbb_statedir_t *sd, uint32_t job_id,
		      const cbb_rec_t *own, size_t n_own,
		      uint32_t array_job_id, const cbb_rec_t *arr,
		      size_t n_arr, int64_t submit, bool *over, cbb_err_t *err);

/*
 * Whether it is time to ask Slurm again about a job whose transfers are
 * still running (at most once every `every_s` seconds per job: Slurm
 * polls each staging job every PollInterval, and each question is an RPC
 * to slurmctld).  Records the asking time when it answers true.
 */
bool cbb_ask_due(cbb_statedir_t *sd, uint32_t job_id, unsigned every_s);

/*
 * A hurried teardown found the job over (cancelled, or scancel --hurry in
 * stage-out).  Slurm's stage thread does not look at the job between its
 * steps, so a data_in (or a data_out already running) can still come
 * after the teardown: it must start nothing and leave no record.
 * cbb_over_mark writes `asked_at` (taken before Slurm was asked, so it is
 * no later than the moment the job was seen over); cbb_over_for says
 * whether the mark covers the attempt submitted at `submit`: only an
 * attempt submitted before that second.  A requeued attempt (Slurm gives
 * it a new submit time) or a new job that reuses the id is never covered.
 */
void cbb_over_mark(cbb_statedir_t *sd, uint32_t job_id, time_t asked_at);
/*
 * `conduit-bb recover` requeues a job whose launch Slurm lost in a
 * restart (its batch script never ran) and marks that attempt first
 * (<cluster>.<job>.unlaunched): its stage-out, which Slurm still runs for
 * it, has nothing of the job's to copy, and skips every directive.  The
 * teardown removes the mark.
 */
void cbb_unlaunched_mark(cbb_statedir_t *sd, uint32_t job_id, uint32_t attempt);
bool cbb_unlaunched_for(cbb_statedir_t *sd, uint32_t job_id, uint32_t attempt);
bool cbb_over_for(cbb_statedir_t *sd, uint32_t job_id, int64_t submit);
#define CBB_OVER_KEEP_S 86400
/*
 * A stage-out Slurm dropped, finished while Slurm still shows the job in
 * STAGE_OUT (where it stays): marked with the attempt's submit time, so
 * that `conduit-bb recover` never builds and runs it again.  It builds
 * one only for a job that ended less than CBB_REBUILD_MAX_AGE_S ago, so
 * the mark outlives every such job.
 */
void cbb_outdone_mark(cbb_statedir_t *sd, uint32_t job_id, int64_t submit);
bool cbb_outdone_for(cbb_statedir_t *sd, uint32_t job_id, int64_t submit);
#define CBB_REBUILD_MAX_AGE_S (7 * 86400)
#define CBB_OUTDONE_KEEP_S (8 * 86400)

/*
 * The kinds of file above, in one table (dir.c) for the writers
 * (state/), the sweeps (forget.c) and `conduit-bb status`
 * (cli/statedir.c).  keep_s: 0, the job's teardown removes it
 * (cbb_sd_forget); else it outlives the teardown and a sweep removes it
 * once that old.  `array`: named by the array's id, not a task's.
 */
typedef enum {
	CBB_SDK_STARTED,
	CBB_SDK_DOWN,
	CBB_SDK_ASKED,
	CBB_SDK_LOCK,
	CBB_SDK_SKIPPED,
	CBB_SDK_OVER,
	CBB_SDK_SHARED,
	CBB_SDK_SHARED_LOCK,
	CBB_SDK_POLL,          /* named by a user (u<uid>), not a job */
	CBB_SDK_POLLED,
	CBB_SDK_OUTPLAN,
	CBB_SDK_UNLAUNCHED,
	CBB_SDK_OUTDONE,
	CBB_SDK_N
} cbb_sd_kind_t;

typedef struct {
	const char *suffix;   /* <cluster>.<job>.<suffix> */
	unsigned keep_s;
	bool array;
} cbb_sd_kind_info_t;

extern const cbb_sd_kind_info_t cbb_sd_kinds[CBB_SDK_N];
#define CBB_SF(k) (cbb_sd_kinds[CBB_SDK_##k].suffix)

/*
 * A job's stage-out plan (<cluster>.<job>.outplan, outplan.c): text
 * written whole and renamed into place (at most CBB_OUTPLAN_MAX bytes),
 * read back only when this process's user wrote it (mode 0600); NULL
 * when there is none that can be trusted.  The teardown removes it.
 */
#define CBB_OUTPLAN_MAX ((size_t)1 << 20)
int cbb_outplan_write(cbb_statedir_t *sd, uint32_t job_id, const char *text,
		      size_t len, cbb_err_t *err);
char *cbb_outplan_read(cbb_statedir_t *sd, uint32_t job_id, size_t *len);
bool cbb_outplan_exists(cbb_statedir_t *sd, uint32_t job_id);
/* The jobs that have one, up to max. */
size_t cbb_outplan_jobs(cbb_statedir_t *sd, uint32_t *ids, size_t max);
/* Every stage-out hook of the job marks it (its mtime: the last one). */
void cbb_outplan_touch(cbb_statedir_t *sd, uint32_t job_id);
/*
 * Whether Slurm has dropped the job's stage-out: it ended the job for
 * good (`ended`, from squeue), or shows it in STAGE_OUT while no
 * stage-out hook of the job has run for CBB_OUTPLAN_QUIET_S (Slurm polls
 * a stage-out every PollInterval; this long without one, no thread of
 * Slurm's is left to: a buffer it lost in a restart).
 */
#define CBB_OUTPLAN_QUIET_S 600
bool cbb_outplan_dropped(cbb_statedir_t *sd, uint32_t job_id, bool ended,
			 const char *slurm_state);

/*
 * One user's shared poll reply (<cluster>.u<uid>.poll, poll.c): the
 * Query that answered for every staging job of the user StateDir knew,
 * sent at sent_ms (wall clock), to `server` as `user`, cut into one part
 * per job (each a Query reply of its own).  Written whole, then renamed
 * (cbb_share_write: jobs, parts and part_len, njobs of each); read for
 * one job (cbb_share_read: `covered`, and that job's part in reply),
 * only when this process's user wrote it (mode 0600).  0, or -1 when
 * there is none that can be trusted (then *out is empty).
 */
#define CBB_SHARE_MAX ((size_t)16 << 20)
typedef struct {
	char server[300];     /* host:port */
	char user[16];
	int64_t sent_ms;
	uint32_t asker;       /* the job whose poll asked */
	/* writing */
	uint32_t *jobs;
	size_t njobs;
	unsigned char **parts;
	size_t *part_len;
	/* reading one job */
	bool covered;         /* the reply covers the job */
	unsigned char *reply; /* its part, as a Query reply of its own */
	size_t reply_len;
} cbb_share_t;
int cbb_share_read(cbb_statedir_t *sd, uint32_t uid, uint32_t job_id,
		   cbb_share_t *out);
int cbb_share_write(cbb_statedir_t *sd, uint32_t uid, const cbb_share_t *s);
/* Free what cbb_share_read filled in (not a writer's arrays). */
void cbb_share_free(cbb_share_t *s);
/* When the job's .started records last changed (ms), 0 when it has none. */
int64_t cbb_share_started_ms(cbb_statedir_t *sd, uint32_t job_id);
/*
 * The job is being polled now (its .polled mark's time).  A stage hook
 * that Slurm runs after the job's teardown removed its files (a hurried
 * teardown does not stop a hook already running) takes its mark back:
 * a poll when the job has no .started records (the teardown removes them
 * before the mark), a start (data_in, data_out: `starting`, of the
 * attempt submitted at `submit`) when a hurried teardown's .over mark
 * covers it (written before the files go).
 */
void cbb_share_polled(cbb_statedir_t *sd, uint32_t job_id, bool starting,
		      int64_t submit);
/* Up to max jobs polled within the last within_s seconds. */
size_t cbb_share_pollers(cbb_statedir_t *sd, uint32_t *ids, size_t max,
			 unsigned within_s);

/* The kind of a StateDir file name by its last suffix (*base_len: the
 * length of "<cluster>.<job>"), or CBB_SDK_N for none of them. */
cbb_sd_kind_t cbb_sd_kind_of(const char *name, size_t *base_len);

/* The time a mark file at dfd holds ("<seconds>\n"), or 0. */
long long cbb_sd_time_at(int dfd, const char *name);

/*
 * A job's own lock (<cluster>.<job>.lock) for the stage decisions two
 * hooks of one job must not take at once (moving an earlier attempt's
 * output aside, engine/stage.c): waits at most wait_ms; -1 when busy or
 * StateDir is unusable.  Released with cbb_lock_release, removed with
 * the job's other files (cbb_sd_forget).
 */
int cbb_job_lock(cbb_statedir_t *sd, uint32_t job_id, unsigned wait_ms);

/*
 * For the sweep that another job's hook runs (engine/sweep.c): the records
 * of job_id as they are, never waiting for its lock (a job whose hooks
 * hold it is busy, not abandoned) and never rewriting the file.  1
 * loaded, 0 busy or none, -1 (err set) when the file cannot be opened.
 */
int cbb_recs_try_load(cbb_statedir_t *sd, uint32_t job_id, cbb_recs_t *out,
		      cbb_err_t *err);
/*
 * Whether records show a stage-in (the job's own, or joining its
 * array's) in an attempt that was never seen to end: no ACCOUNTED record
 * of that attempt's stage-in (a poll that finds a stage over writes
 * one).  *uid gets the job's uid when a record names it (else
 * CBB_UID_UNKNOWN).
 */
bool cbb_recs_stage_in_open(const cbb_recs_t *r, uint32_t *uid);
/* The jobs of the handle's cluster with a .started file, at most max. */
size_t cbb_sd_jobs(cbb_statedir_t *sd, uint32_t *ids, size_t max);
/*
 * Whether a sweep is due: at most once every every_s seconds over all
 * hooks (StateDir's "sweep" file: its mtime, to the millisecond, is the
 * last sweep; one in the future is a clock that went back, and due),
 * and one sweeper at a time (its lock, never waited for).  When true,
 * *held is the lock, to release with cbb_lock_release after the sweep.
 * Never creates StateDir.
 */
bool cbb_sweep_due(cbb_statedir_t *sd, unsigned every_s, int *held);

/*
 * Forget the started/down/asked/lock files of a job that is over (its
 * .skipped file stays for bbstat), and sweep old .skipped files.
 */
void cbb_sd_forget(cbb_statedir_t *sd, uint32_t job_id);

#endif

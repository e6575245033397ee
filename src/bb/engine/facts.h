/*
 * facts.h - the stage engine in three steps, one pass per hook:
 *
 *   gather   read once what decides a stage: the job's StateDir records
 *            (its own, its array's shared ones), its marks (an outage
 *            seen, a hurried teardown), and the server's transfers from
 *            one Query (facts.c);
 *   decide   a pure function of those facts (no I/O, no locks, no clock:
 *            the time and fresh names are facts too) that says what each
 *            directive needs and which requests and records that takes
 *            (decide.c, with the requeue rules in requeue.c);
 *   act      carry the decision out once, as a batch: records written
 *            before a request leaves, the requests sent together, what
 *            came back recorded (act.c).
 *
 * stage.c drives them for each hook; a decision that starts a move-aside
 * is taken again under the job's lock (need_lock) before it is acted on.
 */
#ifndef CBB_FACTS_H
#define CBB_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "conduit.h"
#include "directive.h"
#include "job.h"
#include "key.h"
#include "statefile.h"

/* What a probe asks (its key's PART): validation only, nothing moves. */
#define CBB_PROBE_REQ 0           /* the directive as written: what its
				     destination is (destInfo), and every
				     check Conduit makes of it */
#define CBB_PROBE_TARGET 1        /* +i: whether DEST/basename(source i)
				     existed before this attempt wrote */
#define CBB_PROBE_SOURCE 100001   /* +i: whether source i is a directory */
#define CBB_PROBE_ASIDE 200001    /* +p: whether place p's aside name is
				     free (and the place still there) */

/* Fresh random names a decision may use for move-asides. */
#define CBB_TOKENS 4
#define CBB_TOKEN_LEN 9           /* 8 hex digits */
/* Names tried for one move-aside before it is given up. */
#define CBB_ASIDE_NAMES 3

/* Why a stage failed: the kind travels with the message. */
typedef enum {
	CBB_FAIL_NONE = 0,
	CBB_FAIL_REFUSED,   /* Conduit refused a request (its words) */
	CBB_FAIL_TRANSFER,  /* a directive's transfer (or probe) failed */
	CBB_FAIL_BROKEN_MV, /* a mv failed after it began moving data */
	CBB_FAIL_AS_WRITTEN,/* the directive cannot be done as written:
			       a directory without -r, a tree renamed */
	CBB_FAIL_ASIDE,     /* a requeued attempt has no safe move-aside */
	CBB_FAIL_OUTAGE,    /* the server out of reach past the grace */
	CBB_FAIL_STATEDIR,  /* StateDir unusable */
	CBB_FAIL_OVER,      /* the job is over: its stage-in stopped */
	CBB_FAIL_INTERNAL,  /* out of memory */
} cbb_fail_t;

/* A stage's answer: CBB_POLL_* (stage.h), and why it failed. */
typedef struct {
	int state;
	cbb_fail_t fail;
	cbb_err_t err;
} cbb_result_t;

/* Everything a stage is decided from, read once (facts.c). */
typedef struct {
	/* the stage asked about */
	const cbb_plan_t *plan;
	cbb_stage_t stage;
	cbb_key_type_t type;      /* PRE or POST */
	uint32_t attempt;         /* the run attempt it serves (job.h) */
	bool starting;            /* data_in/data_out, not a poll */
	bool resend;              /* and its first pass: what failed is sent
				     again (a stage-in Slurm runs again) */
	bool best_effort;         /* the stage-out of an attempt a requeue
				     interrupted (cbb_stage_best_effort) */
	/* the job */
	uint32_t job_id, array_job_id, uid, restart;
	int64_t submit;
	char cluster[CBB_CLUSTER_MAX];
	bool *shared;             /* per plan entry: the array's shared
				     stage-in stands for it */
	int array_lock;           /* the array's lock, held while any is
				     (-1: none needed); released by free */
	bool busy;                /* another task of the array holds it */
	/* the rules it is decided by */
	unsigned visible_grace_s; /* StartVisibleGrace */
	unsigned down_grace_s;    /* ServerDownGrace / StageOutDownGrace */
	const char *grace_knob;
	bool keeps_names;         /* DataMover=rsync: a tree keeps its name */
	bool account;             /* a stage found over is summarised */
	/* StateDir */
	cbb_recs_t recs;          /* the job's own */
	cbb_recs_t shared_recs;   /* its array's shared stage-ins */
	int64_t down_since;       /* when an outage was first seen; 0: none */
	bool over;                /* a hurried teardown covers this attempt */
	/* the server */
	cbb_answer_t answer;      /* OK, or how the Query failed */
	cbb_err_t query_err;
	cbb_transfers_t have;
	/* the clock and fresh names, so that deciding needs neither */
	int64_t now;
	char tokens[CBB_TOKENS][CBB_TOKEN_LEN];
} cbb_facts_t;

/* What one directive needs now. */
typedef enum {
	N_START,    /* start it now */
	N_PENDING,  /* started, not visible yet (within StartVisibleGrace) */
	N_RUNNING,
	N_DONE,
	N_KEPT,     /* a stage-in done in an earlier attempt: not repeated */
	N_FAILED,   /* its transfer (or its probe) failed */
	N_BROKEN,   /* a mv failed after moving data: never restarted */
	N_PROBE,    /* Conduit is asked about its paths first: waits */
	N_ASIDE,    /* an earlier attempt's output goes aside first: waits */
	N_BLOCKED,  /* cannot be done (as written, or safely): why */
} cbb_need_t;

typedef struct {
	const cbb_directive_t *d;
	cbb_need_t need;
	const cbb_transfer_t *x;  /* the transfer that stands for it */
	bool shared;              /* the array's shared stage-in stands for it */
	bool lost;                /* an earlier transfer of it was lost */
	bool again;               /* it had a transfer before (for AuditLog) */
	uint32_t kept_from;       /* N_KEPT: the attempt that staged it */
	const char *dest;         /* the destination it is started with */
	cbb_fail_t why_kind;      /* N_BLOCKED, N_FAILED: the kind */
	cbb_err_t why;            /* N_BLOCKED: the line and why */
} cbb_view_t;

/* One request to send, and where its records go. */
typedef struct {
	size_t view;              /* which view it serves */
	cbb_key_t key;            /* its comment */
	bool validate;            /* ValidateTransfer (a probe) */
	cbb_conduit_action_t action;
	const char *const *sources;
	size_t nsources;
	const char *dest;
	bool array_file;          /* recorded in the array's .shared file */
} cbb_send_t;

/* A record to write whatever is sent (a loss, a note, an aside name). */
typedef struct {
	cbb_key_type_t type;
	uint32_t attempt, index;
	char kind;
	char id[64];
	bool array_file;
} cbb_note_t;

#define CBB_DECISION_LOGS 16

typedef struct {
	cbb_view_t *v;
	size_t n;
	cbb_send_t *send;
	size_t nsend;
	cbb_note_t *notes;
	size_t nnotes;
	bool join;       /* the task joins its array's shared stage-in */
	bool account;    /* the stage is over for this attempt and not yet
			    summarised: summarise it (account.h); its
			    ACCOUNTED record is among the notes */
	bool need_lock;  /* a move-aside is due: decide again under the lock */
	size_t done, running, pending, kept, missing, waiting, failed;
	cbb_result_t res;
	struct {
		int level;
		char msg[CBB_ERR_MAX];
	} log[CBB_DECISION_LOGS];
	size_t nlog;
	cbb_arena_t arena;        /* placed destinations, aside names */
} cbb_decision_t;

/*
 * gather: the facts of `stage` for job j and its plan (facts.c), read
 * under the array's lock when the array's shared stage-ins are among
 * them (every start decision of a shared stage-in is taken under it, so
 * two tasks never start the same one); f->busy when another task holds
 * it (nothing read: come back at the next poll).  Query failures are
 * facts (f->answer); -1 (err set) only when StateDir is unusable or
 * memory is short.  `query`: ask the server (false: the records alone).
 * Free with cbb_facts_free (which lets the lock go).
 */
int cbb_facts_gather(cbb_job_ctx_t *j, const cbb_plan_t *plan,
		     cbb_stage_t stage, bool starting, bool query,
		     cbb_facts_t *f, cbb_err_t *err);
/* The records again, as they are now (under a lock just taken). */
int cbb_facts_reload(cbb_job_ctx_t *j, cbb_facts_t *f, cbb_err_t *err);
/* Ask the server again (the probes a start waits for). */
void cbb_facts_requery(cbb_job_ctx_t *j, cbb_facts_t *f);
void cbb_facts_free(cbb_facts_t *f);

/*
 * decide: what each directive of f's stage needs, and the requests and
 * records that takes (decide.c).  Pure: it reads only f.  -1 only when
 * memory is short (d->res says so).  Free with cbb_decision_free.
 */
int cbb_decide(const cbb_facts_t *f, cbb_decision_t *d);
void cbb_decision_free(cbb_decision_t *d);

/*
 * The outage rule: an answer that was not a refusal (the server out of
 * reach, or not taking transfers) is BUSY within the grace, counted
 * from the first time it was seen (down_since; 0: now), then FAILED.
 */
void cbb_outage(const cbb_facts_t *f, const char *what, const char *msg,
		cbb_result_t *r);

/* Decide's helpers the requeue rules share (decide.c). */
const cbb_rec_t *cbb_open_record(const cbb_recs_t *recs, int type,
				 uint32_t attempt, uint32_t index, long part,
				 bool *lost);
bool cbb_rec_visible(const cbb_rec_t *r, const cbb_transfers_t *t, int type,
		     uint32_t attempt, uint32_t index, long part);
void cbb_decision_log(cbb_decision_t *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The newest probe of (job, attempt, index, part) with destination
 * `dest` (NULL: any), or NULL.
 */
const cbb_transfer_t *cbb_probe_of(const cbb_facts_t *f, uint32_t job,
				   uint32_t attempt, uint32_t index,
				   uint32_t part, const char *dest);
/* Whether a probe has its answer (validated, or failed). */
bool cbb_probe_decided(const cbb_transfer_t *x);
/*
 * Where a probe stands: PROBE_ANSWERED (*x set), PROBE_WAIT (sent, not
 * answered or not visible yet), PROBE_NONE (never sent, or lost).
 */
enum { PROBE_NONE, PROBE_WAIT, PROBE_ANSWERED };
int cbb_probe_state(const cbb_facts_t *f, const cbb_recs_t *recs,
		    uint32_t job, uint32_t attempt, uint32_t index,
		    uint32_t part, const char *dest,
		    const cbb_transfer_t **x);
/* Queue a send: a probe (validate) or a start, keyed as given. */
int cbb_decision_send(cbb_decision_t *d, size_t view, const cbb_key_t *key,
		      bool validate, cbb_conduit_action_t action,
		      const char *const *sources, size_t nsources,
		      const char *dest, bool array_file);
/* Queue a note (a record written as is, to the job's own file). */
int cbb_decision_note(cbb_decision_t *d, cbb_key_type_t type,
		      uint32_t attempt, uint32_t index, char kind,
		      const char *id, bool array_file);
/* A key of this job (or its array, for a shared view). */
void cbb_view_key(const cbb_facts_t *f, const cbb_view_t *v,
		  cbb_key_type_t type, uint32_t part, cbb_key_t *k);

/*
 * The requeue rules (requeue.c), for a directive about to start in a
 * later attempt: whether it runs again at all, and whether an earlier
 * attempt's output is in its way and how it goes aside.
 */
bool cbb_runs_again(const cbb_directive_t *d, cbb_stage_t stage);
/* A stage-in directive an earlier attempt finished: that attempt, or -1. */
long cbb_kept_from(const cbb_transfers_t *t, const cbb_directive_t *d,
		   uint32_t attempt);
/* N_START when nothing is in the way, N_ASIDE while something goes
 * aside (requests queued in d), N_BLOCKED when it cannot safely. */
cbb_need_t cbb_requeue_gate(const cbb_facts_t *f, cbb_decision_t *d,
			    size_t view);

#endif

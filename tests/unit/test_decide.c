/*
 * test_decide.c - table-driven tests of the stage engine's pure decision
 * (engine/facts.h): cbb_decide (decide.c, with the requeue rules of
 * requeue.c) and the outage rule cbb_outage.  Each case builds the facts
 * by hand, as facts.c would have gathered them, and says what the
 * decision must be.  Nothing here does I/O: no StateDir, no server, no
 * clock (now and the fresh aside names are facts).
 *
 * A case:
 *   plan    the job's directives, one string each:
 *             "PRE|POST cp|mv [-r] [--every-attempt] [--shared] SRC... DST"
 *           directive k (from 1) has index k and starts on line 10 + k;
 *           --shared: the array's shared stage-in stands for it
 *           (f->shared[k-1], as cbb_is_shared says for an array task)
 *   have    the server's transfers (one Query), each a cbb_transfer_t
 *           with its key in its comment (K / KP below); sources,
 *           destination and action are the directive's (by the key's
 *           index) unless given; a PROBE or VALIDATE key is validation
 *           only
 *   recs    the job's StateDir records (shared: its array's), each made
 *           `ago` seconds before now
 *   hook    POLL (test_data_*), START (data_in/data_out, first pass),
 *           AGAIN (a later pass of a start)
 * and the expected decision:
 *   state   CBB_POLL_DONE / BUSY / FAILED, and fail (cbb_fail_t)
 *   err     a substring of the answer's message (NULL: an answer that
 *           did not fail says nothing)
 *   needs   what each directive of the stage needs, in plan order
 *   sends   the requests, in order: "start|probe TYPE/job/attempt/index
 *           [/part] [arr]" (arr: recorded in the array's file); act.c
 *           writes one UNSURE record from each send's key before any
 *           request leaves, so these are also the records a start makes
 *   paths   a substring of the sends' "SRC... -> DST" list (optional)
 *   notes   records written as they are: "KIND TYPE/attempt/index id"
 *   join, need_lock   as the decision says
 *   bug     a case that shows a product bug: written as it should be,
 *           and skipped until the product is fixed (CBB_DECIDE_BUGS=1
 *           in the environment runs them anyway)
 */
#include "cmocka_all.h"

#include "buf.h"
#include "facts.h"
#include "stage.h"

/* The job most cases are about, and the clock. */
#define JOB 5
#define NOW 100000
#define GRACE_VISIBLE 60

/* A transfer comment: our key (key.h), written out in full. */
#define K(job, att, idx, type, line)                                         \
	"SLURMJOB:" #job ",CLUSTER:c,RESTART:" #att ",SLURMINDEX:" #idx       \
	",SLURMTYPE:CONDUIT_" #type ",LINE:" #line
#define KP(job, att, idx, type, line, part) K(job, att, idx, type, line) ",PART:" #part

/* Transfer states (Conduit's TransferState) and errors. */
#define RUN 24   /* TRANSFER_DATA_TRANSFERRING */
#define FIN 100  /* TRANSFER_FINALIZED */
#define ERR 1    /* TRANSFER_ERROR */
#define VOK 15   /* TRANSFER_VALIDATION_COMPLETE (a probe answered) */
#define E_PFTOOL 4 /* ERROR_PFTOOL_FAILED */

enum { OP_DECIDE, OP_OUTAGE };
enum { POLL, START, AGAIN };

typedef struct {
	const char *id, *comment;
	int state, error, dest_info;
	bool started;      /* setup began (startTime set) */
	int64_t ago;       /* created this long before now */
	const char *src;   /* one source; NULL: the directive's */
	const char *dest;  /* NULL: the directive's */
	const char *msg;
	bool empty;        /* finished having moved nothing (else 1 file) */
} xs_t;

typedef struct {
	char kind;         /* cbb_rec_kind_t; 0 ends the list */
	cbb_key_type_t type;
	uint32_t attempt, index;
	const char *id;
	int64_t ago;
} rs_t;

typedef struct {
	const char *name;
	int op;
	/* the stage */
	cbb_stage_t stage;
	uint32_t attempt;
	int hook;
	bool best_effort, keeps_names;
	uint32_t job_id;          /* 0: JOB */
	uint32_t array_job_id;
	const char *plan[4];
	xs_t have[8];
	rs_t recs[8], shared_recs[4];
	int64_t down_ago;         /* an outage first seen this long ago; 0: none */
	unsigned down_grace;      /* 0: 600 (stage-in), 3600 (stage-out) */
	bool over;                /* a hurried teardown's mark covers it */
	const char *what, *msg;   /* OP_OUTAGE: what the server did, and why */
	/* expected */
	int state;
	cbb_fail_t fail;
	const char *err;
	const char *needs, *sends, *paths, *notes;
	bool join, need_lock;
	const char *bug;
} case_t;

#define PLACE "/out/res"
#define ASIDE_A PLACE ".conduit-attempt-0-aaaaaaaa"
#define ASIDE_C PLACE ".conduit-attempt-0-cccccccc"

static const case_t cases[] = {
	/* ---- a fresh stage-in ------------------------------------------ */
	{
		.name = "fresh stage-in: every directive started",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE cp /in/a /w/a", "PRE cp -r /in/d /w/d",
			  "POST cp /w/out /home/out" },
		.state = CBB_POLL_BUSY,
		.needs = "START START",
		.sends = "start PRE/5/0/1, start PRE/5/0/2",
		.paths = "/in/a -> /w/a, /in/d -> /w/d",
		.notes = "",
	},
	{
		.name = "fresh stage-in from a poll: what is missing is started",
		.stage = CBB_STAGE_IN, .hook = POLL,
		.plan = { "PRE cp /in/a /w/a" },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start PRE/5/0/1",
		.notes = "",
	},
	{
		/* a stage-out runs again in a later attempt: what its
		 * destination and targets are is asked before it writes,
		 * so that attempt knows what it may move aside */
		.name = "fresh stage-out: its directives only, asked about first",
		.stage = CBB_STAGE_OUT, .hook = START,
		.plan = { "PRE cp /in/a /w/a", "POST cp -r /w/res /home/res" },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/0/2/0, probe PROBE/5/0/2/1",
		.paths = "/w/res -> /home/res, /w/res -> /home/res/res",
		.notes = "",
	},
	{
		.name = "fresh stage-out, probes answered: started",
		.stage = CBB_STAGE_OUT, .hook = AGAIN,
		.plan = { "PRE cp /in/a /w/a", "POST cp -r /w/res /home/res" },
		.have = { { "q0", KP(5, 0, 2, PROBE, 12, 0), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = "/home/res" },
			  { "q1", KP(5, 0, 2, PROBE, 12, 1), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = "/home/res/res" } },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start POST/5/0/2",
		.notes = "",
	},
	{
		.name = "rsync mover: a tree's destination is asked about first",
		.stage = CBB_STAGE_IN, .hook = START, .keeps_names = true,
		.plan = { "PRE cp -r /in/tree /out/tree" },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/0/1/0",
		.paths = "/in/tree -> /out/tree",
		.notes = "",
	},
	{
		.name = "rsync mover: a new destination of the tree's name is "
			"placed into its parent",
		.stage = CBB_STAGE_IN, .hook = AGAIN, .keeps_names = true,
		.plan = { "PRE cp -r /in/tree /out/tree" },
		.have = { { "p0", KP(5, 0, 1, PROBE, 11, 0), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = "/out/tree" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PROBE, 0, 1, "0:p0", 5 } },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start PRE/5/0/1",
		.paths = "/in/tree -> /out/",
		.notes = "",
	},
	{
		.name = "rsync mover: a new destination of another name is "
			"refused before anything moves",
		.stage = CBB_STAGE_IN, .hook = AGAIN, .keeps_names = true,
		.plan = { "PRE cp -r /in/tree /out/other" },
		.have = { { "p0", KP(5, 0, 1, PROBE, 11, 0), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = "/out/other" } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_AS_WRITTEN,
		.err = "line 11: cp -r: /out/other does not exist and is not "
		       "named tree",
		.needs = "BLOCKED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "mv without -r: whether its source is a directory first",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE mv /in/a /w/a" },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/0/1/100001",
		.paths = "/in/a -> /in/a/",
		.notes = "",
	},
	{
		.name = "mv without -r of a directory is refused",
		.stage = CBB_STAGE_IN, .hook = AGAIN,
		.plan = { "PRE mv /in/a /w/a" },
		.have = { { "p0", KP(5, 0, 1, PROBE, 11, 100001), VOK,
			    .dest_info = CBB_DEST_IS_DIR, .dest = "/in/a/" } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_AS_WRITTEN,
		.err = "line 11: mv: /in/a is a directory",
		.needs = "BLOCKED",
		.sends = "",
		.notes = "",
	},

	/* ---- a repeated data_in, and polls ------------------------------- */
	{
		.name = "repeated data_in: a directive whose transfer exists is "
			"not started again",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE cp /in/a /w/a", "PRE cp /in/b /w/b" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), RUN } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t1", 30 } },
		.state = CBB_POLL_BUSY,
		.needs = "RUNNING START",
		.sends = "start PRE/5/0/2",
		.notes = "",
	},
	{
		.name = "repeated data_in: all there, nothing started",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE cp /in/a /w/a", "PRE cp /in/b /w/b" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), FIN },
			  { "t2", K(5, 0, 2, PRE, 12), RUN } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t1", 30 },
			  { CBB_REC_STARTED, CBB_KEY_PRE, 0, 2, "t2", 30 } },
		.state = CBB_POLL_BUSY,
		.needs = "DONE RUNNING",
		.sends = "",
		.notes = "",
	},
	{
		.name = "repeated data_in: a start not visible yet is waited for",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE cp /in/a /w/a" },
		.recs = { { CBB_REC_UNSURE, CBB_KEY_PRE, 0, 1, "-", 10 } },
		.state = CBB_POLL_BUSY,
		.needs = "PENDING",
		.sends = "",
		.notes = "",
	},
	{
		.name = "a start that never showed up is lost and started again",
		.stage = CBB_STAGE_IN, .hook = POLL,
		.plan = { "PRE cp /in/a /w/a" },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t1", 120 } },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start PRE/5/0/1",
		.notes = "L PRE/0/1 t1",
	},
	{
		.name = "poll: a cp without -r that copied nothing: was its "
			"source a directory?",
		.stage = CBB_STAGE_IN, .hook = POLL,
		.plan = { "PRE cp /in/a /w/a" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), FIN, .empty = true } },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/0/1/100001",
		.paths = "/in/a -> /in/a/",
		.notes = "",
	},
	{
		.name = "poll: every transfer finished",
		.stage = CBB_STAGE_IN, .hook = POLL,
		.plan = { "PRE cp /in/a /w/a", "PRE cp -r /in/d /w/d" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), FIN },
			  { "t2", K(5, 0, 2, PRE, 12), FIN } },
		.state = CBB_POLL_DONE,
		.needs = "DONE DONE",
		.sends = "",
		.notes = "",
	},

	/* ---- a failed transfer -------------------------------------------- */
	{
		.name = "poll: a failed transfer fails the stage, naming its line",
		.stage = CBB_STAGE_IN, .hook = POLL,
		.plan = { "PRE cp /in/a /w/a", "PRE cp /in/b /w/b" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), FIN },
			  { "t2", K(5, 0, 2, PRE, 12), ERR, E_PFTOOL,
			    .msg = "pftool exited 3\nat rank 0" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 2, "t2", 100 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_TRANSFER,
		.err = "line 12: stage-in cp failed: ERROR_PFTOOL_FAILED: "
		       "pftool exited 3 at rank 0",
		.needs = "DONE FAILED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "poll: a failed stage-out fails it, naming its line",
		.stage = CBB_STAGE_OUT, .hook = POLL,
		.plan = { "POST cp -r /w/res /home/res" },
		.have = { { "o1", K(5, 0, 1, POST, 11), ERR, E_PFTOOL,
			    .msg = "disk full" } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_TRANSFER,
		.err = "line 11: stage-out cp failed: ERROR_PFTOOL_FAILED: disk full",
		.needs = "FAILED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "data_in again after a failure: the stage-in is started again",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE cp /in/a /w/a" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), ERR, E_PFTOOL, .msg = "x" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t1", 100 } },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start PRE/5/0/1",
		.notes = "",
	},
	{
		.name = "data_out leaves a failed stage-out to the polls (never "
			"restarted)",
		.stage = CBB_STAGE_OUT, .hook = START,
		.plan = { "POST cp /w/a /home/a" },
		.have = { { "o1", K(5, 0, 1, POST, 11), ERR, E_PFTOOL, .msg = "x" } },
		.state = CBB_POLL_DONE,
		.needs = "FAILED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "a mv that failed after moving data is never restarted",
		.stage = CBB_STAGE_IN, .hook = START,
		.plan = { "PRE mv -r /in/big /w/big" },
		.have = { { "m1", K(5, 0, 1, PRE, 11), ERR, E_PFTOOL, .started = true,
			    .msg = "rank 2 died" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "m1", 100 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_BROKEN_MV,
		.err = "line 11: mv failed after it began moving data (transfer "
		       "m1: ERROR_PFTOOL_FAILED: rank 2 died); it is not restarted",
		.needs = "BROKEN",
		.sends = "",
		.notes = "",
	},
	{
		.name = "an interrupted attempt's failed stage-out is noted once, "
			"not failed",
		.stage = CBB_STAGE_OUT, .hook = POLL, .best_effort = true,
		.plan = { "POST cp /w/a /home/a" },
		.have = { { "o1", K(5, 0, 1, POST, 11), ERR, E_PFTOOL, .msg = "x" } },
		.state = CBB_POLL_DONE,
		.needs = "FAILED",
		.sends = "",
		.notes = "N POST/0/1 -",
	},

	/* ---- requeue ------------------------------------------------------ */
	{
		.name = "requeue: a stage-in an earlier attempt finished is kept",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp /in/a /w/a" },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_DONE,
		.needs = "KEPT",
		.sends = "",
		.notes = "",
	},
	{
		.name = "requeue: PRE kept, --every-attempt goes aside first "
			"(a fresh name recorded)",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp /in/a /w/a",
			  "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "u0", K(5, 0, 2, PRE, 12), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_STARTED, CBB_KEY_PRE, 0, 2, "u0", 900 } },
		.state = CBB_POLL_BUSY,
		.needs = "KEPT ASIDE",
		.sends = "",
		.notes = "A ASIDE/1/2 0:aaaaaaaa",
		.need_lock = true,
	},
	{
		.name = "requeue: the aside name is checked free first",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 5 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "probe PROBE/5/1/1/200001",
		.paths = PLACE " -> " ASIDE_A,
		.notes = "",
		.need_lock = true,
	},
	{
		.name = "requeue: the name is free: what attempt 0 made goes aside",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = AGAIN,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "pa", KP(5, 1, 1, PROBE, 11, 200001), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .src = PLACE,
			    .dest = ASIDE_A } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 5 },
			  { CBB_REC_STARTED, CBB_KEY_PROBE, 1, 1, "200001:pa", 4 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "start ASIDE/5/1/1/0",
		.paths = PLACE " -> " ASIDE_A,
		.notes = "",
		.need_lock = true,
	},
	{
		.name = "requeue: the move-aside runs: attempt 1 waits",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = POLL,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "ma", KP(5, 1, 1, ASIDE, 11, 0), RUN, .src = PLACE,
			    .dest = ASIDE_A } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 5 },
			  { CBB_REC_STARTED, CBB_KEY_ASIDE, 1, 1, "0:ma", 3 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "",
		.notes = "",
	},
	{
		.name = "requeue: moved aside: the directive's probes, then its start",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = POLL,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "ma", KP(5, 1, 1, ASIDE, 11, 0), FIN, .started = true,
			    .src = PLACE, .dest = ASIDE_A } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 50 },
			  { CBB_REC_STARTED, CBB_KEY_ASIDE, 1, 1, "0:ma", 40 } },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/1/1/0, probe PROBE/5/1/1/1",
		.paths = "/in/res -> " PLACE ", /in/res -> " PLACE "/res",
		.notes = "",
	},
	{
		.name = "requeue: moved aside and probed: attempt 1 starts",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = POLL,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "ma", KP(5, 1, 1, ASIDE, 11, 0), FIN, .started = true,
			    .src = PLACE, .dest = ASIDE_A },
			  { "p0", KP(5, 1, 1, PROBE, 11, 0), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = PLACE },
			  { "p1", KP(5, 1, 1, PROBE, 11, 1), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = PLACE "/res" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 50 },
			  { CBB_REC_STARTED, CBB_KEY_ASIDE, 1, 1, "0:ma", 40 } },
		.state = CBB_POLL_BUSY,
		.needs = "START",
		.sends = "start PRE/5/1/1",
		.paths = "/in/res -> " PLACE,
		.notes = "",
	},
	{
		.name = "requeue: #CONDUIT_POST runs again; what attempt 0 made "
			"goes aside",
		.stage = CBB_STAGE_OUT, .attempt = 1, .hook = START,
		.plan = { "PRE cp /in/a /w/a", "POST cp -r /w/res /home/res" },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN },
			  { "o0", K(5, 0, 2, POST, 12), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_STARTED, CBB_KEY_POST, 0, 2, "o0", 500 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "",
		.notes = "A ASIDE/1/2 0:aaaaaaaa",
		.need_lock = true,
	},
	{
		.name = "requeue: #CONDUIT_POST with nothing of its own before: "
			"probed, nothing moved aside",
		.stage = CBB_STAGE_OUT, .attempt = 1, .hook = START,
		.plan = { "POST cp -r /w/res /home/res" },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/1/1/0, probe PROBE/5/1/1/1",
		.notes = "",
	},
	{
		.name = "requeue: an earlier transfer with no record of ours "
			"(reused job id) is never moved aside",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "x0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/1/1/0, probe PROBE/5/1/1/1",
		.notes = "",
	},
	{
		.name = "requeue: a file the job overwrote is overwritten again, "
			"never moved aside",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp --every-attempt /in/f /w/f" },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_DIR } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_BUSY,
		.needs = "PROBE",
		.sends = "probe PROBE/5/1/1/0, probe PROBE/5/1/1/1",
		.notes = "",
	},
	{
		.name = "requeue: a directory that existed before the job fails "
			"the stage, naming it",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_IS_DIR },
			  { "q1", KP(5, 0, 1, PROBE, 11, 1), VOK,
			    .dest_info = CBB_DEST_IS_DIR, .dest = PLACE "/res" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_ASIDE,
		.err = "line 11: stage-in cp: attempt 0 wrote into " PLACE
		       "/res, which existed before the job wrote there",
		.needs = "BLOCKED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "requeue: a place nobody asked about may have existed: "
			"fails, naming it",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_IS_DIR } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_ASIDE,
		.err = "wrote into " PLACE "/res, which may have existed before",
		.needs = "BLOCKED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "requeue: inside an existing directory, only what the "
			"job created goes aside",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_IS_DIR },
			  { "q1", KP(5, 0, 1, PROBE, 11, 1), VOK,
			    .dest_info = CBB_DEST_NOT_EXIST, .dest = PLACE "/res" } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "",
		.notes = "A ASIDE/1/1 0:aaaaaaaa",
		.need_lock = true,
	},
	{
		.name = "requeue: an aside name reported taken gets the next token",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = AGAIN,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "pa", KP(5, 1, 1, PROBE, 11, 200001), VOK,
			    .dest_info = CBB_DEST_IS_DIR, .src = PLACE,
			    .dest = ASIDE_A } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 5 },
			  { CBB_REC_STARTED, CBB_KEY_PROBE, 1, 1, "200001:pa", 4 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "",
		.notes = "A ASIDE/1/1 0:bbbbbbbb",
		.need_lock = true,
	},
	{
		.name = "requeue: at most CBB_ASIDE_NAMES names are tried",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = POLL,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), FIN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST },
			  { "pc", KP(5, 1, 1, PROBE, 11, 200001), VOK,
			    .dest_info = CBB_DEST_NOT_DIR, .src = PLACE,
			    .dest = ASIDE_C } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:aaaaaaaa", 30 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:bbbbbbbb", 20 },
			  { CBB_REC_ASIDE_NAME, CBB_KEY_ASIDE, 1, 1, "0:cccccccc", 10 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_ASIDE,
		.err = "line 11: no free name to move aside what attempt 0 left "
		       "at " PLACE " (3 tried): nothing was moved",
		.needs = "BLOCKED",
		.sends = "",
		.notes = "",
	},
	{
		.name = "requeue: attempt 0's transfer still runs: attempt 1 waits",
		.stage = CBB_STAGE_IN, .attempt = 1, .hook = START,
		.plan = { "PRE cp -r --every-attempt /in/res " PLACE },
		.have = { { "t0", K(5, 0, 1, PRE, 11), RUN, .started = true,
			    .dest_info = CBB_DEST_NOT_EXIST } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t0", 900 } },
		.state = CBB_POLL_BUSY,
		.needs = "ASIDE",
		.sends = "",
		.notes = "",
	},

	/* ---- job arrays --------------------------------------------------- */
	{
		.name = "array: the first task starts the shared stage-in, in "
			"the array's file",
		.stage = CBB_STAGE_IN, .hook = START, .job_id = 6, .array_job_id = 5,
		.plan = { "PRE cp -r --shared /in/ref /scratch/ref",
			  "PRE cp /in/6.dat /scratch/6.dat" },
		.state = CBB_POLL_BUSY,
		.needs = "START START",
		.sends = "start SHARED/5/0/1 arr, start PRE/6/0/2",
		.notes = "",
		.join = true,
	},
	{
		.name = "array: a task joins the running shared stage-in, never "
			"a second start",
		.stage = CBB_STAGE_IN, .hook = START, .job_id = 7, .array_job_id = 5,
		.plan = { "PRE cp -r --shared /in/ref /scratch/ref",
			  "PRE cp /in/7.dat /scratch/7.dat" },
		.have = { { "s1", K(5, 0, 1, PRE_ARRAY, 11), RUN } },
		.shared_recs = { { CBB_REC_STARTED, CBB_KEY_SHARED, 0, 1, "s1", 30 },
				 { CBB_REC_JOINED, CBB_KEY_SHARED, 0, 0, "6", 30 } },
		.state = CBB_POLL_BUSY,
		.needs = "RUNNING START",
		.sends = "start PRE/7/0/2",
		.notes = "",
		.join = true,
	},
	{
		.name = "array: a shared start not visible yet is waited for, "
			"never started twice",
		.stage = CBB_STAGE_IN, .hook = START, .job_id = 7, .array_job_id = 5,
		.plan = { "PRE cp -r --shared /in/ref /scratch/ref" },
		.shared_recs = { { CBB_REC_UNSURE, CBB_KEY_SHARED, 0, 1, "-", 10 } },
		.state = CBB_POLL_BUSY,
		.needs = "PENDING",
		.sends = "",
		.notes = "",
		.join = true,
	},
	{
		.name = "array: the shared stage-in finished: the task is done",
		.stage = CBB_STAGE_IN, .hook = POLL, .job_id = 7, .array_job_id = 5,
		.plan = { "PRE cp -r --shared /in/ref /scratch/ref" },
		.have = { { "s1", K(5, 0, 1, PRE_ARRAY, 11), FIN } },
		.recs = { { CBB_REC_JOINED, CBB_KEY_SHARED, 0, 0, "5", 30 } },
		.shared_recs = { { CBB_REC_STARTED, CBB_KEY_SHARED, 0, 1, "s1", 30 } },
		.state = CBB_POLL_DONE,
		.needs = "DONE",
		.sends = "",
		.notes = "",
		.join = true,
	},

	/* ---- outages (cbb_outage) ------------------------------------------ */
	{
		.name = "outage: no answer within the grace: wait",
		.op = OP_OUTAGE, .stage = CBB_STAGE_IN, .down_ago = 100,
		.what = "unreachable", .msg = "connection refused",
		.state = CBB_POLL_BUSY, .fail = CBB_FAIL_NONE,
		.err = "stage-in: connection refused (server down for 100 s; "
		       "waiting up to ServerDownGrace=600 s)",
	},
	{
		.name = "outage: first seen now: wait",
		.op = OP_OUTAGE, .stage = CBB_STAGE_IN,
		.what = "unreachable", .msg = "connection refused",
		.state = CBB_POLL_BUSY, .fail = CBB_FAIL_NONE,
		.err = "server down for 0 s",
	},
	{
		.name = "outage: past the grace: fails, naming the knob",
		.op = OP_OUTAGE, .stage = CBB_STAGE_IN, .down_ago = 700,
		.what = "unreachable", .msg = "connection refused",
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_OUTAGE,
		.err = "conduit: server unreachable for 700 s "
		       "(ServerDownGrace=600 s): connection refused",
	},
	{
		.name = "outage: a stage-out's grace is StageOutDownGrace",
		.op = OP_OUTAGE, .stage = CBB_STAGE_OUT, .down_ago = 3601,
		.what = "not taking transfers", .msg = "line 11: draining",
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_OUTAGE,
		.err = "server not taking transfers for 3601 s "
		       "(StageOutDownGrace=3600 s)",
	},
	{
		.name = "outage: not taking transfers within the grace: wait",
		.op = OP_OUTAGE, .stage = CBB_STAGE_OUT, .down_ago = 30,
		.what = "not taking transfers", .msg = "line 11: draining",
		.state = CBB_POLL_BUSY, .fail = CBB_FAIL_NONE,
		.err = "(server not taking transfers for 30 s; waiting up to "
		       "StageOutDownGrace=3600 s)",
	},

	/* ---- a job that is over -------------------------------------------- */
	{
		.name = "over: a hurried teardown's mark stops the stage-in (poll)",
		.stage = CBB_STAGE_IN, .hook = POLL, .over = true,
		.plan = { "PRE cp /in/a /w/a" },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_OVER,
		.needs = NULL,
		.sends = "",
		.notes = "",
		.err = "stage-in stopped",
	},
	{
		.name = "over: a data_in after a hurried teardown starts nothing",
		.stage = CBB_STAGE_IN, .hook = START, .over = true,
		.plan = { "PRE cp /in/a /w/a", "PRE cp /in/b /w/b" },
		.have = { { "t1", K(5, 0, 1, PRE, 11), RUN } },
		.recs = { { CBB_REC_STARTED, CBB_KEY_PRE, 0, 1, "t1", 30 } },
		.state = CBB_POLL_FAILED, .fail = CBB_FAIL_OVER,
		.needs = NULL,
		.sends = "",
		.notes = "",
		.err = "stage-in stopped",
	},
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ---- building the facts -------------------------------------------------- */

typedef struct {
	cbb_plan_t plan;
	cbb_directive_t dirs[4];
	bool shared[4];
	cbb_transfer_t have[8];
	cbb_rec_t recs[8], shared_recs[4];
	cbb_facts_t f;
} world_t;

static void add_directive(cbb_directive_t *d, unsigned index, const char *spec,
			  bool *shared)
{
	char *copy = strdup(spec), *save = NULL, *w;
	char *paths[8];
	size_t n = 0, i;

	assert_non_null(copy);
	memset(d, 0, sizeof(*d));
	d->index = index;
	d->line = 10 + index;
	w = strtok_r(copy, " ", &save);
	assert_non_null(w);
	if (!strcmp(w, "PRE"))
		d->stage = CBB_STAGE_IN;
	else if (!strcmp(w, "POST"))
		d->stage = CBB_STAGE_OUT;
	else
		fail_msg("plan: bad stage in '%s'", spec);
	w = strtok_r(NULL, " ", &save);
	assert_non_null(w);
	d->action = !strcmp(w, "mv") ? CBB_MV : CBB_CP;
	while ((w = strtok_r(NULL, " ", &save))) {
		if (!strcmp(w, "-r"))
			d->recursive = true;
		else if (!strcmp(w, "--every-attempt"))
			d->every_attempt = true;
		else if (!strcmp(w, "--shared"))
			d->shared = *shared = true;
		else if (w[0] == '-')
			fail_msg("plan: bad flag %s", w);
		else if (n < 8)
			paths[n++] = strdup(w);
	}
	assert_true(n >= 2);
	d->nsources = n - 1;
	d->sources = calloc(n - 1, sizeof(*d->sources));
	assert_non_null(d->sources);
	for (i = 0; i + 1 < n; i++)
		d->sources[i] = paths[i];
	d->destination = paths[n - 1];
	free(copy);
}

static const cbb_directive_t *by_index(const world_t *w, uint32_t index)
{
	size_t i;

	for (i = 0; i < w->plan.n; i++)
		if (w->plan.v[i].index == index)
			return &w->plan.v[i];
	return NULL;
}

static void add_transfer(const world_t *w, cbb_transfer_t *t, const xs_t *x)
{
	const cbb_directive_t *d = NULL;
	cbb_key_t k;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!cbb_key_parse(x->comment, &k))
		fail_msg("have: %s: not a key", x->comment);
	if (k.type == CBB_KEY_PRE || k.type == CBB_KEY_POST ||
	    k.type == CBB_KEY_SHARED)
		d = by_index(w, k.index);
	t->id = strdup(x->id);
	t->comment = strdup(x->comment);
	t->user = strdup("user");
	t->error_message = strdup(x->msg ? x->msg : "");
	t->state = x->state;
	t->error = x->error;
	t->dest_info = x->dest_info;
	t->validation_only = k.type == CBB_KEY_PROBE || k.type == CBB_KEY_VALIDATE;
	t->active = !(x->state == FIN || x->state == ERR || x->state == 2 ||
		      x->state == 3 || (t->validation_only && x->state == VOK));
	t->created = NOW - x->ago;
	t->started = x->started ? t->created + 1 : 0;
	t->ended = t->active ? 0 : t->created + 2;
	if (!t->validation_only && cbb_transfer_succeeded(t) && !x->empty) {
		t->files = 1;
		t->bytes = 100;
	}
	if (x->src || !d) {
		t->nsources = 1;
		t->sources = calloc(1, sizeof(*t->sources));
		t->sources[0] = strdup(x->src ? x->src : "/src");
	} else {
		t->nsources = d->nsources;
		t->sources = calloc(d->nsources, sizeof(*t->sources));
		for (i = 0; i < d->nsources; i++)
			t->sources[i] = strdup(d->sources[i]);
	}
	t->destination = strdup(x->dest ? x->dest : d ? d->destination : "/dst");
	t->action = k.type == CBB_KEY_ASIDE ? CBB_RMOVE :
		    d ? (int)cbb_action_of(d) : CBB_COPY;
}

static size_t add_recs(cbb_rec_t *out, const rs_t *in, size_t max)
{
	size_t n;

	for (n = 0; n < max && in[n].kind; n++) {
		cbb_rec_t *r = &out[n];

		memset(r, 0, sizeof(*r));
		r->type = (int)in[n].type;
		r->attempt = in[n].attempt;
		r->index = in[n].index;
		r->kind = in[n].kind;
		r->made = NOW - in[n].ago;
		snprintf(r->id, sizeof(r->id), "%s", in[n].id ? in[n].id : "-");
		r->has_uid = true;
		r->uid = 1000;
	}
	return n;
}

static void build(world_t *w, const case_t *c)
{
	cbb_facts_t *f = &w->f;
	size_t i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < 4 && c->plan[i]; i++)
		add_directive(&w->dirs[i], (unsigned)i + 1, c->plan[i],
			      &w->shared[i]);
	w->plan.v = w->dirs;
	w->plan.n = i;
	for (i = 0; i < 8 && c->have[i].id; i++)
		add_transfer(w, &w->have[i], &c->have[i]);

	f->plan = &w->plan;
	f->stage = c->stage;
	f->type = c->stage == CBB_STAGE_IN ? CBB_KEY_PRE : CBB_KEY_POST;
	f->attempt = c->attempt;
	f->starting = c->hook != POLL;
	f->resend = c->hook == START;
	f->best_effort = c->best_effort;
	f->job_id = c->job_id ? c->job_id : JOB;
	f->array_job_id = c->array_job_id;
	f->uid = 1000;
	f->restart = c->attempt;
	f->submit = NOW - 1000;
	snprintf(f->cluster, sizeof(f->cluster), "c");
	f->shared = w->shared;
	f->array_lock = -1;
	f->visible_grace_s = GRACE_VISIBLE;
	f->down_grace_s = c->down_grace ? c->down_grace :
			  c->stage == CBB_STAGE_IN ? 600 : 3600;
	f->grace_knob = c->stage == CBB_STAGE_IN ? "ServerDownGrace" :
						   "StageOutDownGrace";
	f->keeps_names = c->keeps_names;
	f->recs.v = w->recs;
	f->recs.n = add_recs(w->recs, c->recs, 8);
	f->shared_recs.v = w->shared_recs;
	f->shared_recs.n = add_recs(w->shared_recs, c->shared_recs, 4);
	f->down_since = c->down_ago ? NOW - c->down_ago : 0;
	f->over = c->over;
	f->answer = CBB_ANSWER_OK;
	f->have.v = w->have;
	f->have.n = i;
	f->now = NOW;
	snprintf(f->tokens[0], CBB_TOKEN_LEN, "aaaaaaaa");
	snprintf(f->tokens[1], CBB_TOKEN_LEN, "bbbbbbbb");
	snprintf(f->tokens[2], CBB_TOKEN_LEN, "cccccccc");
	snprintf(f->tokens[3], CBB_TOKEN_LEN, "dddddddd");
}

static void unbuild(world_t *w)
{
	size_t i, k;

	for (i = 0; i < w->plan.n; i++) {
		for (k = 0; k < w->dirs[i].nsources; k++)
			free(w->dirs[i].sources[k]);
		free(w->dirs[i].sources);
		free(w->dirs[i].destination);
	}
	for (i = 0; i < w->f.have.n; i++)
		cbb_transfer_clear(&w->have[i]);
}

/* ---- the decision as text ------------------------------------------------ */

static const char *const type_name[CBB_KEY_NTYPES] = {
	"PRE", "POST", "VALIDATE", "SHARED", "ASIDE", "PROBE",
};

static const char *const need_name[] = {
	"START", "PENDING", "RUNNING", "DONE", "KEPT", "FAILED", "BROKEN",
	"PROBE", "ASIDE", "BLOCKED",
};

typedef struct {
	cbb_buf_t needs, sends, paths, notes;
} render_t;

static void sep(cbb_buf_t *b, const char *s)
{
	if (b->len)
		cbb_buf_adds(b, s);
}

static void render(const cbb_decision_t *d, render_t *r)
{
	size_t i, k;

	cbb_buf_init(&r->needs, 0);
	cbb_buf_init(&r->sends, 0);
	cbb_buf_init(&r->paths, 0);
	cbb_buf_init(&r->notes, 0);
	for (i = 0; i < d->n; i++) {
		sep(&r->needs, " ");
		cbb_buf_adds(&r->needs, need_name[d->v[i].need]);
	}
	for (i = 0; i < d->nsend; i++) {
		const cbb_send_t *s = &d->send[i];

		sep(&r->sends, ", ");
		cbb_buf_printf(&r->sends, "%s %s/%u/%u/%u", s->validate ?
			       "probe" : "start", type_name[s->key.type],
			       s->key.job_id, s->key.attempt, s->key.index);
		if (s->key.type == CBB_KEY_ASIDE || s->key.type == CBB_KEY_PROBE)
			cbb_buf_printf(&r->sends, "/%u", s->key.part);
		if (s->array_file)
			cbb_buf_adds(&r->sends, " arr");
		sep(&r->paths, ", ");
		for (k = 0; k < s->nsources; k++)
			cbb_buf_printf(&r->paths, "%s ", s->sources[k]);
		cbb_buf_printf(&r->paths, "-> %s", s->dest);
	}
	for (i = 0; i < d->nnotes; i++) {
		const cbb_note_t *n = &d->notes[i];

		sep(&r->notes, ", ");
		cbb_buf_printf(&r->notes, "%c %s/%u/%u %s%s", n->kind,
			       type_name[n->type], n->attempt, n->index, n->id,
			       n->array_file ? " arr" : "");
	}
	cbb_buf_adds(&r->needs, "");
	cbb_buf_adds(&r->sends, "");
	cbb_buf_adds(&r->paths, "");
	cbb_buf_adds(&r->notes, "");
}

static void render_free(render_t *r)
{
	cbb_buf_free(&r->needs);
	cbb_buf_free(&r->sends);
	cbb_buf_free(&r->paths);
	cbb_buf_free(&r->notes);
}

static const char *state_name(int s)
{
	return s == CBB_POLL_DONE ? "DONE" : s == CBB_POLL_BUSY ? "BUSY" :
	       s == CBB_POLL_FAILED ? "FAILED" : "?";
}

/* ---- one case ------------------------------------------------------------- */

static void check_result(const case_t *c, const cbb_result_t *r)
{
	if (r->state != c->state || r->fail != c->fail)
		fail_msg("%s: got %s (fail %d) \"%s\", want %s (fail %d)",
			 c->name, state_name(r->state), (int)r->fail, r->err.msg,
			 state_name(c->state), (int)c->fail);
	if (c->err && !strstr(r->err.msg, c->err))
		fail_msg("%s: message\n  \"%s\"\nlacks\n  \"%s\"", c->name,
			 r->err.msg, c->err);
	if (!c->err && r->state != CBB_POLL_FAILED && r->err.msg[0])
		fail_msg("%s: unexpected message \"%s\"", c->name, r->err.msg);
}

static void expect_text(const case_t *c, const char *what, const char *got,
			const char *want)
{
	if (want && strcmp(got, want))
		fail_msg("%s: %s\n  got  \"%s\"\n  want \"%s\"", c->name, what,
			 got, want);
}

static void run_case(void **state)
{
	const case_t *c = *state;
	world_t *w;

	/* CBB_DECIDE_BUGS=1 runs the cases of known bugs too */
	if (c->bug && !getenv("CBB_DECIDE_BUGS")) {
		fprintf(stderr, "             known bug: %s\n", c->bug);
		skip();
	}
	w = calloc(1, sizeof(*w));
	assert_non_null(w);
	build(w, c);
	if (c->op == OP_OUTAGE) {
		cbb_result_t r;

		memset(&r, 0, sizeof(r));
		cbb_outage(&w->f, c->what, c->msg, &r);
		check_result(c, &r);
	} else {
		cbb_decision_t d, again;
		render_t r, r2;

		assert_int_equal(cbb_decide(&w->f, &d), 0);
		render(&d, &r);
		check_result(c, &d.res);
		expect_text(c, "needs", r.needs.data, c->needs);
		expect_text(c, "sends", r.sends.data, c->sends);
		expect_text(c, "notes", r.notes.data, c->notes);
		if (c->paths && !strstr(r.paths.data, c->paths))
			fail_msg("%s: paths\n  got  \"%s\"\n  lack \"%s\"",
				 c->name, r.paths.data, c->paths);
		if (d.join != c->join || d.need_lock != c->need_lock)
			fail_msg("%s: join %d need_lock %d, want %d %d", c->name,
				 d.join, d.need_lock, c->join, c->need_lock);
		/* pure: the same facts give the same decision */
		assert_int_equal(cbb_decide(&w->f, &again), 0);
		render(&again, &r2);
		assert_string_equal(r.needs.data, r2.needs.data);
		assert_string_equal(r.sends.data, r2.sends.data);
		assert_string_equal(r.paths.data, r2.paths.data);
		assert_string_equal(r.notes.data, r2.notes.data);
		assert_int_equal(d.res.state, again.res.state);
		assert_string_equal(d.res.err.msg, again.res.err.msg);
		render_free(&r);
		render_free(&r2);
		cbb_decision_free(&d);
		cbb_decision_free(&again);
	}
	unbuild(w);
	free(w);
}

int main(void)
{
	struct CMUnitTest tests[NCASES];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < NCASES; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = run_case;
		tests[i].initial_state = (void *)(uintptr_t)&cases[i];
	}
	return _cmocka_run_group_tests("decide cases", tests, NCASES, NULL,
				       NULL);
}

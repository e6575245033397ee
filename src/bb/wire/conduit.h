/*
 * conduit.h - Conduit's API as conduit_bb uses it: StartTransfer,
 * ValidateTransfer, Query, StopTransfer and Version, over cbb_grpc_t.
 * Replies are decoded with protobuf-c under a memory budget and copied
 * into plain structs; no protobuf type leaks out of conduit.c.
 */
#ifndef CBB_CONDUIT_H
#define CBB_CONDUIT_H

#include <stdbool.h>
#include <stdint.h>

#include "grpc.h"
#include "key.h"

/* TransferState values that matter to the hooks. */
enum {
	CBB_TS_NONE = 0,
	CBB_TS_ERROR = 1,
	CBB_TS_ABORT = 2,
	CBB_TS_ABORTED = 3,
	CBB_TS_VALIDATION_COMPLETE = 15,
	CBB_TS_FINALIZED = 100,
};

/* DestInfo: what validation found at the destination. */
enum {
	CBB_DEST_NONE = 0,     /* not validated yet (or an older server) */
	CBB_DEST_NOT_EXIST = 1,
	CBB_DEST_NOT_DIR = 2,
	CBB_DEST_IS_DIR = 3,   /* written to destination/basename(source) */
};

typedef enum {
	CBB_COPY = 0,
	CBB_MOVE = 1,
	CBB_RCOPY = 2,
	CBB_RMOVE = 3,
} cbb_conduit_action_t;

typedef struct {
	char *id;
	char *comment;
	char *user;
	char *error_message;
	char **sources;      /* as stored by Conduit */
	size_t nsources;
	char *destination;
	int state;
	int error;
	int action;
	bool active;
	bool validation_only;
	int dest_info;       /* CBB_DEST_* */
	int64_t created;     /* seconds (0: unset) */
	int32_t created_ns;
	int64_t started;     /* startTime seconds, 0 when setup never began */
	int64_t ended;       /* endTime seconds, 0 while it runs */
	uint64_t bytes;      /* dataTransferred */
	uint64_t rate;       /* bandwidth, bytes/s */
	uint32_t files;
	uint32_t dirs;
	/* the comment as our key, parsed once when the reply is decoded:
	 * a poll looks each transfer up once per directive */
	bool keyed;          /* key_ok (and key) are set */
	bool key_ok;         /* the comment is one of our keys */
	cbb_key_t key;
} cbb_transfer_t;

typedef struct {
	cbb_transfer_t *v;
	size_t n;
} cbb_transfers_t;

void cbb_transfers_free(cbb_transfers_t *t);
/* Free what one transfer owns (the struct itself stays). */
void cbb_transfer_clear(cbb_transfer_t *t);

/* Names as Conduit prints them: "TRANSFER_FINALIZED", "ERROR_NONE". */
const char *cbb_state_name(int state);
const char *cbb_error_name(int error);

/* x's comment as our key (NULL: not one), parsed into tmp only when the
 * decoder did not already (a transfer a test made by hand, say). */
const cbb_key_t *cbb_transfer_key(const cbb_transfer_t *x, cbb_key_t *tmp);

/* Success: FINALIZED with no error. */
bool cbb_transfer_succeeded(const cbb_transfer_t *t);
/* Failure: ERROR/ABORT/ABORTED, or any error code (even before the
 * state catches up); never judged by `active` alone. */
bool cbb_transfer_failed(const cbb_transfer_t *t);

/*
 * What an answer to one RPC means for the hooks (docs/admin.md, "How
 * conduit_bb reads Conduit's answers", is the table in words):
 *
 *   REFUSED  nothing happened and asking again will not help: Conduit's
 *            own application errors (UNKNOWN with a message), and the
 *            statuses that name a bad request, identity or configuration.
 *            The stage fails with the server's message.
 *   RETRY    nothing happened, try again: the call never left, the server
 *            is shedding load (RESOURCE_EXHAUSTED, ABORTED) or shutting
 *            down before it began.  Retried within the hook's budget, then
 *            left to the next poll, bounded by ServerDownGrace (stage-in)
 *            or StageOutDownGrace (stage-out).
 *   MAYBE    it may have happened: no answer, a broken one, or a status a
 *            stopping or failing server gives to calls in flight
 *            (CANCELLED, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE,
 *            DATA_LOSS, UNKNOWN without a message).  For StartTransfer an
 *            unsure start, reconciled through Query (StartVisibleGrace),
 *            never sent twice; for the calls that are safe to repeat it
 *            is the same as RETRY.
 *
 * The table is cbb_conduit_answer(); no other code decides this.
 */
typedef enum {
	CBB_ANSWER_OK = 0,
	CBB_ANSWER_REFUSED,
	CBB_ANSWER_RETRY,
	CBB_ANSWER_MAYBE,
} cbb_answer_t;

/* The RPCs conduit_bb sends (it never uses WatchStatus). */
typedef enum {
	CBB_RPC_START = 0,   /* StartTransfer: creates a transfer */
	CBB_RPC_VALIDATE,    /* ValidateTransfer: a validation-only one */
	CBB_RPC_QUERY,
	CBB_RPC_STOP,        /* StopTransfer */
	CBB_RPC_VERSION,
	CBB_RPC_NKINDS,
} cbb_rpc_kind_t;

/* How a finished call of `kind` went (the table above). */
cbb_answer_t cbb_conduit_answer(cbb_rpc_kind_t kind, const cbb_rpc_t *c);
/* "refused", "retry", "maybe" (and "ok"), for logs and tests. */
const char *cbb_answer_name(cbb_answer_t a);
/* A call whose answer is RETRY (or MAYBE, for a call safe to repeat) is
 * sent at most this many times within the hook's budget. */
#define CBB_CONDUIT_TRIES 3

/*
 * One Query: transfers of `user` whose Comment matches `comment_regex`
 * (RE2, unanchored search; anchor it yourself).  `user` is never empty
 * (refused here: Conduit would answer with every user's transfers).
 * OK, or how it failed (err set): REFUSED, or RETRY (the server
 * unreachable, busy, restarting or answering badly: ask again later).
 */
cbb_answer_t cbb_conduit_query(cbb_grpc_t *g, const char *user,
			       const char *comment_regex,
			       cbb_transfers_t *out, cbb_err_t *err);
/*
 * The same, and (on OK) the reply's bytes as they came in *raw (free
 * them), so that another process can decode the same answer later
 * (cbb_conduit_decode_query: the shared poll reply, engine/share.c).
 */
cbb_answer_t cbb_conduit_query_raw(cbb_grpc_t *g, const char *user,
				   const char *comment_regex,
				   cbb_transfers_t *out, uint8_t **raw,
				   size_t *raw_len, cbb_err_t *err);
int cbb_conduit_decode_query(const uint8_t *reply, size_t len,
			     cbb_transfers_t *out, cbb_err_t *err);
/*
 * A Query reply cut into n replies of its own (packed again with
 * protobuf-c), the k-th holding the transfers whose comment starts with
 * heads[k]: each poll of a shared reply then decodes its own job's
 * transfers only.  Free each part.
 */
int cbb_conduit_split_query(const uint8_t *reply, size_t len,
			    const char *const *heads, size_t n,
			    uint8_t **parts, size_t *part_len, cbb_err_t *err);

/* A transfer to start (or validate). */
typedef struct {
	const char *user;
	cbb_conduit_action_t action;
	const char *const *sources;
	size_t nsources;
	const char *destination;
	const char *comment;
	/* out */
	char id[64];
	bool ok;
	cbb_answer_t answer;     /* OK, or why not (REFUSED/RETRY/MAYBE) */
	char message[CBB_ERR_MAX];
} cbb_start_t;

/*
 * Start (validate_only: ValidateTransfer) all at once on one connection.
 * Returns how many failed.  A StartTransfer is sent again only while its
 * answer says nothing happened (RETRY), never after one that may have
 * created the transfer (MAYBE).
 */
size_t cbb_conduit_start(cbb_grpc_t *g, cbb_start_t *req, size_t n,
			 bool validate_only);

typedef struct {
	const char *id;
	const char *user;
	bool ok;                 /* aborted, or already over */
	cbb_answer_t answer;
	char message[CBB_ERR_MAX];
} cbb_stop_t;

/* StopTransfer for each id, concurrently; "already completed" and "not
 * found" count as done; what is not refused is repeated within the
 * budget.  Returns how many failed. */
size_t cbb_conduit_stop(cbb_grpc_t *g, cbb_stop_t *req, size_t n);

int cbb_conduit_version(cbb_grpc_t *g, char *buf, size_t size,
			cbb_err_t *err);

#endif

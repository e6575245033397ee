/*
 * conduit.c - Conduit's RPCs as batches (conduit.h): Query, StartTransfer
 * and StopTransfer requests packed, sent over one connection's budget
 * (grpc.h), retried where a status says so, and what each answer means.
 * The replies are decoded in conduit_reply.c.
 */
#include "conduit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * protobuf-c's generated structs hold request strings as `char *` (it
 * never writes through them) and its initialisers cast away const: this
 * file and conduit_reply.c, the only ones that see protobuf types,
 * allow those casts.
 */
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "conduit.pb-c.h"
#include "conduit_int.h"

/*
 * The table: for each gRPC status the server gave, what it means for
 * each RPC.  R: refused, T: try again, M: may have happened.  A call that
 * is safe to repeat reads M as T (cbb_conduit_answer).
 */
static const char answer_table[CBB_GRPC_NCODES][CBB_RPC_NKINDS + 1] = {
	/*                         Start Validate Query Stop Version */
	[CBB_GRPC_OK]                  = "-----",
	[CBB_GRPC_CANCELLED]           = "MTTTT",
	[CBB_GRPC_UNKNOWN]             = "RRRRR", /* with a message; below */
	[CBB_GRPC_INVALID_ARGUMENT]    = "RRRRR",
	[CBB_GRPC_DEADLINE_EXCEEDED]   = "MTTTT",
	[CBB_GRPC_NOT_FOUND]           = "RRRRR", /* Stop: already gone */
	[CBB_GRPC_ALREADY_EXISTS]      = "RRRRR",
	[CBB_GRPC_PERMISSION_DENIED]   = "RRRRR",
	[CBB_GRPC_RESOURCE_EXHAUSTED]  = "TTTTT",
	[CBB_GRPC_FAILED_PRECONDITION] = "RRRRR",
	[CBB_GRPC_ABORTED]             = "TTTTT",
	[CBB_GRPC_OUT_OF_RANGE]        = "RRRRR",
	[CBB_GRPC_UNIMPLEMENTED]       = "RRRRR",
	[CBB_GRPC_INTERNAL]            = "MTTTT",
	[CBB_GRPC_UNAVAILABLE]         = "MTTTT",
	[CBB_GRPC_DATA_LOSS]           = "MTTTT",
	[CBB_GRPC_UNAUTHENTICATED]     = "RRRRR",
};

static bool repeatable(cbb_rpc_kind_t kind)
{
	return kind != CBB_RPC_START;
}

/* Conduit's handlers answer "server shutting down" before they begin. */
static bool shutting_down(const cbb_rpc_t *c)
{
	return strstr(c->message, "server shutting down") != NULL;
}

/*
 * An application error that is an outage behind the server, not a
 * verdict on the request: Conduit answers every Query from its archive
 * (rqlite) and its live store (etcd), looks users up in LDAP, and passes
 * their failures on as status UNKNOWN with Go's words, e.g. "failed to
 * get user transfers from rqlite: ... connect: connection refused".
 * Nothing was done; asking again once the store is back will work, so
 * it is RETRY, waited out within ServerDownGrace / StageOutDownGrace.
 */
static bool store_outage(const cbb_rpc_t *c)
{
	static const char *const words[] = {
		"rqlite", "etcd", "connection refused", "i/o timeout",
		"no route to host", "connection reset", "network is unreachable",
		"context deadline exceeded", "Network Error", "broken pipe",
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(c->message, words[i]))
			return true;
	return false;
}

/* grpcio's words for a handler that raised: a server fault, not a no. */
static bool handler_crashed(const cbb_rpc_t *c)
{
	return strstr(c->message, "Exception calling application") != NULL ||
	       strstr(c->message, "Exception iterating responses") != NULL;
}

cbb_answer_t cbb_conduit_answer(cbb_rpc_kind_t kind, const cbb_rpc_t *c)
{
	cbb_answer_t a;

	if (c->status == CBB_GRPC_OK && c->have_status)
		return CBB_ANSWER_OK;
	if (!c->sent)
		a = CBB_ANSWER_RETRY;          /* it never left */
	else if (!c->have_status)
		/* no answer or a broken one; a TLS or certificate problem
		 * of ours is a refusal (set below gRPC, not in transport) */
		a = !c->transport && c->status == CBB_GRPC_FAILED_PRECONDITION ?
			    CBB_ANSWER_REFUSED : CBB_ANSWER_MAYBE;
	else if (c->status == CBB_GRPC_UNKNOWN &&
		 (!c->have_message || handler_crashed(c)))
		a = CBB_ANSWER_MAYBE;          /* not one of Conduit's errors */
	else if (c->status == CBB_GRPC_UNKNOWN &&
		 (shutting_down(c) || store_outage(c)))
		a = CBB_ANSWER_RETRY;
	else if (c->status > 0 && c->status < CBB_GRPC_NCODES)
		a = answer_table[c->status][kind] == 'R' ? CBB_ANSWER_REFUSED :
		    answer_table[c->status][kind] == 'T' ? CBB_ANSWER_RETRY :
							   CBB_ANSWER_MAYBE;
	else
		a = CBB_ANSWER_MAYBE;
	if (a == CBB_ANSWER_MAYBE && repeatable(kind))
		a = CBB_ANSWER_RETRY;
	return a;
}

const char *cbb_answer_name(cbb_answer_t a)
{
	switch (a) {
	case CBB_ANSWER_OK:
		return "ok";
	case CBB_ANSWER_REFUSED:
		return "refused";
	case CBB_ANSWER_RETRY:
		return "retry";
	default:
		return "maybe";
	}
}

/* Several calls of one method, packed, run together, then freed. */
typedef struct {
	cbb_rpc_kind_t kind;
	cbb_rpc_t *calls;
	cbb_rpc_t **cp;
	uint8_t **bufs;
	cbb_answer_t *answer;
	size_t n;
} batch_t;

static const char *const method_of[CBB_RPC_NKINDS] = {
	"StartTransfer", "ValidateTransfer", "Query", "StopTransfer", "Version",
};

static void batch_free(batch_t *b)
{
	size_t i;

	for (i = 0; b->calls && i < b->n; i++) {
		cbb_rpc_reset(&b->calls[i]);
		free(b->bufs ? b->bufs[i] : NULL);
	}
	free(b->calls);
	free(b->cp);
	free(b->bufs);
	free(b->answer);
}

static int batch_new(batch_t *b, cbb_rpc_kind_t kind, size_t n)
{
	size_t i, m = n ? n : 1;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->n = n;
	b->calls = calloc(m, sizeof(*b->calls));
	b->cp = calloc(m, sizeof(*b->cp));
	b->bufs = calloc(m, sizeof(*b->bufs));
	b->answer = calloc(m, sizeof(*b->answer));
	if (!b->calls || !b->cp || !b->bufs || !b->answer) {
		batch_free(b);
		memset(b, 0, sizeof(*b));
		return -1;
	}
	for (i = 0; i < n; i++) {
		b->calls[i].method = method_of[kind];
		b->calls[i].idempotent = repeatable(kind);
	}
	return 0;
}

/* Give call i its packed request (NULL: packing ran out of memory). */
static void batch_set(batch_t *b, size_t i, uint8_t *buf, size_t len)
{
	b->bufs[i] = buf;
	b->calls[i].req = buf;
	b->calls[i].req_len = buf ? len : 0;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Run the batch, then send again what the server itself said to try
 * again, while the budget lasts: at most CBB_CONDUIT_TRIES sends a call,
 * 50 ms and then 150 ms apart.  (A call that got no answer at all had its
 * one retry on a fresh connection in cbb_grpc_run, when it is safe to
 * repeat; more would only wait on a server that is down.)  Each call
 * keeps its request id across its sends.  A call whose request could not
 * be packed is not sent (RETRY).
 */
static void batch_run(cbb_grpc_t *g, batch_t *b)
{
	static const unsigned backoff_ms[] = { 50, 150 };
	size_t i, k, pass;

	for (pass = 0; pass < CBB_CONDUIT_TRIES; pass++) {
		for (i = 0, k = 0; i < b->n; i++)
			if ((pass == 0 || (b->answer[i] == CBB_ANSWER_RETRY &&
					   b->calls[i].have_status)) &&
			    b->calls[i].req)
				b->cp[k++] = &b->calls[i];
		if (k == 0)
			break;
		if (pass > 0) {
			unsigned wait = backoff_ms[pass - 1];

			/* a resend needs time for a reply after the pause */
			if (cbb_grpc_left_ms(g) < wait + 100)
				break;
			sleep_ms(wait);
		}
		(void)cbb_grpc_run(g, b->cp, k);
		for (i = 0; i < k; i++) {
			size_t at = (size_t)(b->cp[i] - b->calls);

			b->answer[at] = cbb_conduit_answer(b->kind, b->cp[i]);
		}
	}
	for (i = 0; i < b->n; i++)
		if (!b->calls[i].req) {
			b->answer[i] = CBB_ANSWER_RETRY;
			snprintf(b->calls[i].message, sizeof(b->calls[i].message),
				 "conduit: out of memory");
		}
}

cbb_answer_t cbb_conduit_query(cbb_grpc_t *g, const char *user,
			       const char *comment_regex,
			       cbb_transfers_t *out, cbb_err_t *err)
{
	return cbb_conduit_query_raw(g, user, comment_regex, out, NULL, NULL,
				     err);
}

cbb_answer_t cbb_conduit_query_raw(cbb_grpc_t *g, const char *user,
				   const char *comment_regex,
				   cbb_transfers_t *out, uint8_t **raw,
				   size_t *raw_len, cbb_err_t *err)
{
	Conduitapi__QueryOptions q = CONDUITAPI__QUERY_OPTIONS__INIT;
	Conduitapi__QueryOptions__QueryMapEntry e =
		CONDUITAPI__QUERY_OPTIONS__QUERY_MAP_ENTRY__INIT;
	Conduitapi__QueryOptions__QueryMapEntry *ep = &e;
	cbb_answer_t a;
	batch_t b;
	uint8_t *buf;
	size_t len;

	out->v = NULL;
	out->n = 0;
	/* a privileged Query without a user is every user's, and the real
	 * server merges its archive into its live map for it without the
	 * lock it needs (conduit-api.md, 6.3): never sent */
	if (!user || !user[0]) {
		cbb_err(err, "conduit: a Query needs a user (an empty one asks "
			"for every user's transfers)");
		return CBB_ANSWER_REFUSED;
	}
	e.key = (char *)"Comment";
	e.value = (char *)comment_regex;
	q.n_querymap = 1;
	q.querymap = &ep;
	q.queryoperation = CONDUITAPI__QUERY_OPERATION__OR;
	q.user = (char *)user;
	if (batch_new(&b, CBB_RPC_QUERY, 1) < 0) {
		cbb_err(err, "conduit: out of memory");
		return CBB_ANSWER_RETRY;
	}
	len = conduitapi__query_options__get_packed_size(&q);
	buf = malloc(len ? len : 1);
	if (buf)
		conduitapi__query_options__pack(&q, buf);
	batch_set(&b, 0, buf, len);
	batch_run(g, &b);
	a = b.answer[0];
	if (a != CBB_ANSWER_OK)
		cbb_err(err, "%s", b.calls[0].message);
	else if (cbb_conduit_decode_multi(&b.calls[0], out, err) < 0)
		a = CBB_ANSWER_RETRY; /* a broken reply: ask again */
	else if (raw) {
		/* the reply as it came, for a later poll to decode again */
		*raw = b.calls[0].resp;
		*raw_len = b.calls[0].resp_len;
		b.calls[0].resp = NULL;
		b.calls[0].resp_len = 0;
	}
	batch_free(&b);
	return a;
}

int cbb_conduit_decode_query(const uint8_t *reply, size_t len,
			     cbb_transfers_t *out, cbb_err_t *err)
{
	cbb_rpc_t c;

	memset(&c, 0, sizeof(c));
	c.method = "Query";
	c.resp = (uint8_t *)reply;
	c.resp_len = len;
	out->v = NULL;
	out->n = 0;
	return cbb_conduit_decode_multi(&c, out, err);
}

static uint8_t *alloc_packed(size_t len)
{
	return malloc(len ? len : 1);
}

size_t cbb_conduit_start(cbb_grpc_t *g, cbb_start_t *req, size_t n,
			 bool validate_only)
{
	batch_t b;
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		req[i].ok = false;
		req[i].id[0] = '\0';
		req[i].answer = CBB_ANSWER_RETRY;
		snprintf(req[i].message, sizeof(req[i].message),
			 "conduit: out of memory");
	}
	if (batch_new(&b, validate_only ? CBB_RPC_VALIDATE : CBB_RPC_START,
		      n) < 0)
		return n;
	for (i = 0; i < n; i++) {
		Conduitapi__TransferRequest r = CONDUITAPI__TRANSFER_REQUEST__INIT;
		uint8_t *buf;
		size_t len;

		r.user = (char *)req[i].user;
		r.action = (Conduitapi__Action)req[i].action;
		r.n_source = req[i].nsources;
		r.source = (char **)req[i].sources;
		r.destination = (char *)req[i].destination;
		r.comment = (char *)req[i].comment;
		len = conduitapi__transfer_request__get_packed_size(&r);
		buf = alloc_packed(len);
		if (buf)
			conduitapi__transfer_request__pack(&r, buf);
		batch_set(&b, i, buf, len);
	}
	batch_run(g, &b);
	for (i = 0; i < n; i++) {
		cbb_start_t *s = &req[i];
		cbb_rpc_t *c = &b.calls[i];

		s->answer = b.answer[i];
		snprintf(s->message, sizeof(s->message), "%s", c->message);
		if (s->answer == CBB_ANSWER_OK) {
			s->ok = cbb_conduit_reply_id(c, s->id, sizeof(s->id));
			if (!s->ok) {
				/* the server said yes: it exists, unseen */
				s->answer = CBB_ANSWER_MAYBE;
				snprintf(s->message, sizeof(s->message),
					 "conduit: %s reply without a usable "
					 "transfer id", c->method);
			}
		}
		failed += !s->ok;
	}
	batch_free(&b);
	return failed;
}

/* What Conduit says when there is nothing left to abort. */
static bool already_over(const cbb_rpc_t *c)
{
	return c->have_status &&
	       (c->status == CBB_GRPC_NOT_FOUND ||
		strstr(c->message, "has it already completed") ||
		strstr(c->message, "not found"));
}

size_t cbb_conduit_stop(cbb_grpc_t *g, cbb_stop_t *req, size_t n)
{
	batch_t b;
	size_t i, failed = 0;

	for (i = 0; i < n; i++) {
		req[i].ok = false;
		req[i].answer = CBB_ANSWER_RETRY;
		snprintf(req[i].message, sizeof(req[i].message),
			 "conduit: out of memory");
	}
	if (batch_new(&b, CBB_RPC_STOP, n) < 0)
		return n;
	for (i = 0; i < n; i++) {
		Conduitapi__TransferIds r = CONDUITAPI__TRANSFER_IDS__INIT;
		char *one = (char *)req[i].id;
		uint8_t *buf;
		size_t len;

		r.n_value = 1;
		r.value = &one;
		r.user = (char *)(req[i].user ? req[i].user : "");
		len = conduitapi__transfer_ids__get_packed_size(&r);
		buf = alloc_packed(len);
		if (buf)
			conduitapi__transfer_ids__pack(&r, buf);
		batch_set(&b, i, buf, len);
	}
	batch_run(g, &b);
	for (i = 0; i < n; i++) {
		cbb_rpc_t *c = &b.calls[i];

		req[i].answer = b.answer[i];
		if (req[i].answer == CBB_ANSWER_REFUSED && already_over(c))
			req[i].answer = CBB_ANSWER_OK;
		req[i].ok = req[i].answer == CBB_ANSWER_OK;
		snprintf(req[i].message, sizeof(req[i].message), "%s",
			 c->message);
		failed += !req[i].ok;
	}
	batch_free(&b);
	return failed;
}

int cbb_conduit_version(cbb_grpc_t *g, char *buf, size_t size,
			cbb_err_t *err)
{
	Conduitapi__Empty e = CONDUITAPI__EMPTY__INIT;
	uint8_t req[8];
	cbb_rpc_t call, *cp = &call;
	size_t len = conduitapi__empty__pack(&e, req);
	int rc = 0;

	memset(&call, 0, sizeof(call));
	call.method = "Version";
	call.req = req;
	call.req_len = len;
	call.idempotent = true;
	if (cbb_grpc_run(g, &cp, 1)) {
		rc = cbb_err(err, "%s", call.message);
	} else {
		Conduitapi__VersionInfo *v = conduitapi__version_info__unpack(
			NULL, call.resp_len, call.resp);

		if (!v) {
			rc = cbb_err(err, "conduit: cannot decode the Version "
				     "reply");
		} else {
			snprintf(buf, size, "%s", v->version);
			conduitapi__version_info__free_unpacked(v, NULL);
		}
	}
	cbb_rpc_reset(&call);
	return rc;
}

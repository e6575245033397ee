/* conduit.c - see conduit.h */
#include "conduit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * protobuf-c's generated structs hold request strings as `char *` (it
 * never writes through them) and its initialisers cast away const: this
 * file, the only one that sees protobuf types, allows those casts.
 */
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "conduit.pb-c.h"

/*
 * protobuf-c turns small wire entries into large structs (an empty map
 * entry becomes ~80 bytes), so a reply within the wire cap could still
 * exhaust memory.  Decoding draws from a budget and fails cleanly.
 */
typedef struct {
	size_t used;
	size_t limit;
} budget_t;

static void *budget_alloc(void *ud, size_t size)
{
	budget_t *b = ud;
	size_t *p;

	if (size > b->limit - b->used)
		return NULL;
	p = malloc(size + sizeof(size_t) * 2);
	if (!p)
		return NULL;
	p[0] = size;
	b->used += size;
	return p + 2; /* keep 16-byte alignment */
}

static void budget_free(void *ud, void *ptr)
{
	budget_t *b = ud;
	size_t *p = ptr;

	if (!p)
		return;
	p -= 2;
	b->used -= p[0];
	free(p);
}

static size_t budget_for(size_t wire_len)
{
	size_t lim = wire_len * 16;

	if (lim < ((size_t)16 << 20))
		lim = (size_t)16 << 20;
	if (lim > ((size_t)512 << 20))
		lim = (size_t)512 << 20;
	return lim;
}

void cbb_transfer_clear(cbb_transfer_t *t)
{
	size_t k;

	free(t->id);
	free(t->comment);
	free(t->user);
	free(t->error_message);
	free(t->destination);
	for (k = 0; k < t->nsources; k++)
		free(t->sources[k]);
	free(t->sources);
	memset(t, 0, sizeof(*t));
}

void cbb_transfers_free(cbb_transfers_t *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		cbb_transfer_clear(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

const char *cbb_state_name(int state)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&conduitapi__transfer_state__descriptor, state);

	return v ? v->name : "TRANSFER_UNKNOWN";
}

const char *cbb_error_name(int error)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
		&conduitapi__error__descriptor, error);

	return v ? v->name : "ERROR_UNKNOWN";
}

bool cbb_transfer_succeeded(const cbb_transfer_t *t)
{
	return t->state == CBB_TS_FINALIZED && t->error == 0;
}

bool cbb_transfer_failed(const cbb_transfer_t *t)
{
	return t->error != 0 || t->state == CBB_TS_ERROR ||
	       t->state == CBB_TS_ABORT || t->state == CBB_TS_ABORTED;
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

/*
 * A transfer id as Conduit makes them (UUIDs), fit to be written into a
 * StateDir record line: [A-Za-z0-9._-], 1 to 63 bytes.
 */
static bool good_id(const char *id)
{
	size_t n;

	if (!id || !id[0])
		return false;
	for (n = 0; id[n]; n++)
		if (n >= 63 || !((id[n] >= 'a' && id[n] <= 'z') ||
				 (id[n] >= 'A' && id[n] <= 'Z') ||
				 (id[n] >= '0' && id[n] <= '9') ||
				 id[n] == '.' || id[n] == '_' || id[n] == '-'))
			return false;
	return true;
}

static int copy_details(const Conduitapi__TransferDetails *d,
			cbb_transfer_t *t)
{
	memset(t, 0, sizeof(*t));
	t->id = dup_str(d->transferid);
	t->comment = dup_str(d->comment);
	t->user = dup_str(d->user);
	t->error_message = dup_str(d->errormessage);
	t->destination = dup_str(d->destination);
	if (!t->id || !t->comment || !t->user || !t->error_message ||
	    !t->destination)
		return -1;
	if (d->n_source) {
		size_t k;

		t->sources = calloc(d->n_source, sizeof(*t->sources));
		if (!t->sources)
			return -1;
		for (k = 0; k < d->n_source; k++) {
			t->sources[k] = dup_str(d->source[k]);
			if (!t->sources[k])
				return -1;
			t->nsources++;
		}
	}
	t->state = (int)d->state;
	t->error = (int)d->error;
	t->action = (int)d->action;
	t->active = d->active;
	t->validation_only = d->validationonly;
	if (d->createdtime) {
		t->created = d->createdtime->seconds;
		t->created_ns = d->createdtime->nanos;
	}
	if (d->starttime)
		t->started = d->starttime->seconds;
	if (d->endtime)
		t->ended = d->endtime->seconds;
	t->bytes = d->datatransferred ? strtoull(d->datatransferred, NULL, 10) : 0;
	t->rate = d->bandwidth ? strtoull(d->bandwidth, NULL, 10) : 0;
	t->files = d->filestransferred;
	t->dirs = d->directoriestransferred;
	return 0;
}

/* Decode a MultiTransferDetails reply into `out`. */
static int decode_multi(const cbb_rpc_t *c, cbb_transfers_t *out,
			cbb_err_t *err)
{
	budget_t b = { 0, budget_for(c->resp_len) };
	ProtobufCAllocator a = { budget_alloc, budget_free, &b };
	Conduitapi__MultiTransferDetails *m;
	size_t i;

	m = conduitapi__multi_transfer_details__unpack(&a, c->resp_len,
						       c->resp);
	if (!m)
		return cbb_err(err, "conduit: cannot decode the %s reply (%s)",
			       c->method, b.used >= b.limit / 2 ?
			       "over the memory budget" : "malformed");
	out->v = calloc(m->n_details ? m->n_details : 1, sizeof(*out->v));
	if (!out->v) {
		conduitapi__multi_transfer_details__free_unpacked(m, &a);
		return cbb_err(err, "conduit: out of memory");
	}
	for (i = 0; i < m->n_details; i++) {
		const Conduitapi__TransferDetails *d = m->details[i]->value;

		if (!d) /* an entry without a value: nothing to report */
			continue;
		if (!good_id(d->transferid)) {
			conduitapi__multi_transfer_details__free_unpacked(m, &a);
			cbb_transfers_free(out);
			return cbb_err(err, "conduit: malformed %s reply (a "
				       "transfer id that is not [A-Za-z0-9._-])",
				       c->method);
		}
		if (copy_details(d, &out->v[out->n]) < 0) {
			out->n++;
			conduitapi__multi_transfer_details__free_unpacked(m, &a);
			cbb_transfers_free(out);
			return cbb_err(err, "conduit: out of memory");
		}
		out->n++;
	}
	conduitapi__multi_transfer_details__free_unpacked(m, &a);
	return 0;
}

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
	else if (c->status == CBB_GRPC_UNKNOWN && shutting_down(c))
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

int cbb_conduit_query(cbb_grpc_t *g, const char *user,
		      const char *comment_regex, cbb_transfers_t *out,
		      bool *again, cbb_err_t *err)
{
	Conduitapi__QueryOptions q = CONDUITAPI__QUERY_OPTIONS__INIT;
	Conduitapi__QueryOptions__QueryMapEntry e =
		CONDUITAPI__QUERY_OPTIONS__QUERY_MAP_ENTRY__INIT;
	Conduitapi__QueryOptions__QueryMapEntry *ep = &e;
	batch_t b;
	uint8_t *buf;
	size_t len;
	int rc;

	out->v = NULL;
	out->n = 0;
	*again = true;
	e.key = (char *)"Comment";
	e.value = (char *)comment_regex;
	q.n_querymap = 1;
	q.querymap = &ep;
	q.queryoperation = CONDUITAPI__QUERY_OPERATION__OR;
	q.user = (char *)(user ? user : "");
	if (batch_new(&b, CBB_RPC_QUERY, 1) < 0)
		return cbb_err(err, "conduit: out of memory");
	len = conduitapi__query_options__get_packed_size(&q);
	buf = malloc(len ? len : 1);
	if (buf)
		conduitapi__query_options__pack(&q, buf);
	batch_set(&b, 0, buf, len);
	batch_run(g, &b);
	if (b.answer[0] != CBB_ANSWER_OK) {
		*again = b.answer[0] != CBB_ANSWER_REFUSED;
		rc = cbb_err(err, "%s", b.calls[0].message);
	} else {
		rc = decode_multi(&b.calls[0], out, err);
	}
	batch_free(&b);
	return rc;
}

static uint8_t *alloc_packed(size_t len)
{
	return malloc(len ? len : 1);
}

/* The transfer id of an OK StartTransfer/ValidateTransfer reply. */
static bool reply_id(const cbb_rpc_t *c, char *id, size_t size)
{
	budget_t bu = { 0, budget_for(c->resp_len) };
	ProtobufCAllocator a = { budget_alloc, budget_free, &bu };
	Conduitapi__TransferDetails *d =
		conduitapi__transfer_details__unpack(&a, c->resp_len, c->resp);
	bool ok = d && good_id(d->transferid) && strlen(d->transferid) < size;

	if (ok)
		snprintf(id, size, "%s", d->transferid);
	if (d)
		conduitapi__transfer_details__free_unpacked(d, &a);
	return ok;
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
			s->ok = reply_id(c, s->id, sizeof(s->id));
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

/* conduit.c - see conduit.h */
#include "conduit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		if (copy_details(d, &out->v[out->n]) < 0) {
			out->n++;
			conduitapi__multi_transfer_details__free_unpacked(m, &a);
			return cbb_err(err, "conduit: out of memory");
		}
		out->n++;
	}
	conduitapi__multi_transfer_details__free_unpacked(m, &a);
	return 0;
}

int cbb_conduit_query(cbb_grpc_t *g, const char *user,
		      const char *comment_regex, cbb_transfers_t *out,
		      bool *transport, cbb_err_t *err)
{
	Conduitapi__QueryOptions q = CONDUITAPI__QUERY_OPTIONS__INIT;
	Conduitapi__QueryOptions__QueryMapEntry e =
		CONDUITAPI__QUERY_OPTIONS__QUERY_MAP_ENTRY__INIT;
	Conduitapi__QueryOptions__QueryMapEntry *ep = &e;
	cbb_rpc_t call, *cp = &call;
	uint8_t *buf;
	size_t len;
	int rc;

	out->v = NULL;
	out->n = 0;
	*transport = false;
	e.key = (char *)"Comment";
	e.value = (char *)comment_regex;
	q.n_querymap = 1;
	q.querymap = &ep;
	q.queryoperation = CONDUITAPI__QUERY_OPERATION__OR;
	q.user = (char *)(user ? user : "");
	len = conduitapi__query_options__get_packed_size(&q);
	buf = malloc(len ? len : 1);
	if (!buf)
		return cbb_err(err, "conduit: out of memory");
	conduitapi__query_options__pack(&q, buf);

	memset(&call, 0, sizeof(call));
	call.method = "Query";
	call.req = buf;
	call.req_len = len;
	call.idempotent = true;
	if (cbb_grpc_run(g, &cp, 1)) {
		*transport = call.transport || call.status == CBB_GRPC_UNAVAILABLE ||
			     call.status == CBB_GRPC_DEADLINE_EXCEEDED;
		cbb_err(err, "%s", call.message);
		rc = -1;
	} else {
		rc = decode_multi(&call, out, err);
	}
	cbb_rpc_reset(&call);
	free(buf);
	return rc;
}

/* Several calls of one method, packed, run together, then freed. */
typedef struct {
	cbb_rpc_t *calls;
	cbb_rpc_t **cp;
	uint8_t **bufs;
	size_t n;
} batch_t;

static int batch_new(batch_t *b, size_t n)
{
	size_t i;

	b->n = n;
	b->calls = calloc(n ? n : 1, sizeof(*b->calls));
	b->cp = calloc(n ? n : 1, sizeof(*b->cp));
	b->bufs = calloc(n ? n : 1, sizeof(*b->bufs));
	if (!b->calls || !b->cp || !b->bufs)
		return -1;
	for (i = 0; i < n; i++)
		b->cp[i] = &b->calls[i];
	return 0;
}

/* Give call i its packed request (NULL buf: packing ran out of memory). */
static void batch_set(batch_t *b, size_t i, const char *method, uint8_t *buf,
		      size_t len, bool idempotent)
{
	b->bufs[i] = buf;
	b->calls[i].method = method;
	b->calls[i].req = buf;
	b->calls[i].req_len = buf ? len : 0;
	b->calls[i].idempotent = idempotent;
}

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

	if (batch_new(&b, n) < 0) {
		for (i = 0; i < n; i++) {
			req[i].ok = false;
			snprintf(req[i].message, sizeof(req[i].message),
				 "conduit: out of memory");
		}
		batch_free(&b);
		return n;
	}
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
		/* a repeated StartTransfer could create a duplicate */
		batch_set(&b, i, validate_only ? "ValidateTransfer" :
			  "StartTransfer", buf, len, validate_only);
	}
	cbb_grpc_run(g, b.cp, n);
	for (i = 0; i < n; i++) {
		cbb_start_t *s = &req[i];
		cbb_rpc_t *c = &b.calls[i];

		s->ok = false;
		/* the server may have created it: no answer, or one saying
		 * the deadline passed or the service was unavailable */
		s->transport = c->transport ||
			       c->status == CBB_GRPC_DEADLINE_EXCEEDED ||
			       c->status == CBB_GRPC_UNAVAILABLE;
		s->id[0] = '\0';
		if (c->status == CBB_GRPC_OK) {
			budget_t bu = { 0, budget_for(c->resp_len) };
			ProtobufCAllocator a = { budget_alloc, budget_free, &bu };
			Conduitapi__TransferDetails *d =
				conduitapi__transfer_details__unpack(
					&a, c->resp_len, c->resp);

			if (d && d->transferid && d->transferid[0] &&
			    strlen(d->transferid) < sizeof(s->id)) {
				snprintf(s->id, sizeof(s->id), "%s",
					 d->transferid);
				s->ok = true;
				s->message[0] = '\0';
			} else {
				snprintf(s->message, sizeof(s->message),
					 "conduit: %s reply without a transfer "
					 "id", c->method);
			}
			if (d)
				conduitapi__transfer_details__free_unpacked(d, &a);
		} else {
			snprintf(s->message, sizeof(s->message), "%s",
				 c->message);
		}
		failed += !s->ok;
	}
	batch_free(&b);
	return failed;
}

/* What Conduit says when there is nothing left to abort. */
static bool already_over(const char *msg)
{
	return strstr(msg, "has it already completed") ||
	       strstr(msg, "not found");
}

size_t cbb_conduit_stop(cbb_grpc_t *g, cbb_stop_t *req, size_t n)
{
	batch_t b;
	size_t i, failed = 0;

	if (batch_new(&b, n) < 0) {
		for (i = 0; i < n; i++)
			snprintf(req[i].message, sizeof(req[i].message),
				 "conduit: out of memory");
		batch_free(&b);
		return n;
	}
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
		batch_set(&b, i, "StopTransfer", buf, len, true);
	}
	cbb_grpc_run(g, b.cp, n);
	for (i = 0; i < n; i++) {
		cbb_rpc_t *c = &b.calls[i];

		req[i].transport = c->transport;
		req[i].ok = c->status == CBB_GRPC_OK ||
			    (!c->transport && already_over(c->message));
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

/*
 * conduit_reply.c - Conduit's replies decoded into transfers
 * (conduit.h): every string copied, every transfer id checked before it
 * can reach a StateDir record, and protobuf-c's allocations drawn from a
 * budget so that a reply within the wire cap cannot exhaust memory.
 */
#include "conduit.h"
#include "bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * protobuf-c's generated structs hold request strings as `char *` (it
 * never writes through them) and its initialisers cast away const: this
 * file and conduit.c, the only ones that see protobuf types, allow
 * those casts.
 */
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "conduit.pb-c.h"
#include "conduit_int.h"

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

const cbb_key_t *cbb_transfer_key(const cbb_transfer_t *x, cbb_key_t *tmp)
{
	if (x->keyed)
		return x->key_ok ? &x->key : NULL;
	return cbb_key_parse(x->comment, tmp) ? tmp : NULL;
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
	t->key_ok = cbb_key_parse(t->comment, &t->key);
	t->keyed = true;
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
	t->dest_info = (int)d->destinfo;
	if (d->createdtime) {
		t->created = d->createdtime->seconds;
		t->created_ns = d->createdtime->nanos;
	}
	if (d->starttime)
		t->started = d->starttime->seconds;
	if (d->endtime)
		t->ended = d->endtime->seconds;
	/* strings with units (bytes.h); unreadable ones show no size */
	(void)cbb_parse_size(d->datatransferred, &t->bytes);
	(void)cbb_parse_size(d->bandwidth, &t->rate);
	t->files = d->filestransferred;
	t->dirs = d->directoriestransferred;
	return 0;
}

/* Decode a MultiTransferDetails reply into `out`. */
int cbb_conduit_decode_multi(const cbb_rpc_t *c, cbb_transfers_t *out,
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

/* The transfer id of an OK StartTransfer/ValidateTransfer reply. */
bool cbb_conduit_reply_id(const cbb_rpc_t *c, char *id, size_t size)
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

int cbb_conduit_split_query(const uint8_t *reply, size_t len,
			    const char *const *heads, size_t n,
			    uint8_t **parts, size_t *part_len, cbb_err_t *err)
{
	budget_t b = { 0, budget_for(len) };
	ProtobufCAllocator a = { budget_alloc, budget_free, &b };
	Conduitapi__MultiTransferDetails *m, sub =
		CONDUITAPI__MULTI_TRANSFER_DETAILS__INIT;
	Conduitapi__MultiTransferDetails__DetailsEntry **pick;
	size_t i, k, *hl;
	int rc = 0;

	for (k = 0; k < n; k++) {
		parts[k] = NULL;
		part_len[k] = 0;
	}
	m = conduitapi__multi_transfer_details__unpack(&a, len, reply);
	if (!m)
		return cbb_err(err, "conduit: cannot decode the Query reply");
	pick = calloc(m->n_details ? m->n_details : 1, sizeof(*pick));
	hl = calloc(n ? n : 1, sizeof(*hl));
	if (!pick || !hl) {
		rc = cbb_err(err, "conduit: out of memory");
		goto out;
	}
	for (k = 0; k < n; k++)
		hl[k] = strlen(heads[k]);
	/* each job's entries, packed again as a reply of their own */
	for (k = 0; k < n && rc == 0; k++) {
		sub.n_details = 0;
		sub.details = pick;
		for (i = 0; i < m->n_details; i++) {
			const Conduitapi__TransferDetails *d = m->details[i]->value;

			if (d && d->comment && !strncmp(d->comment, heads[k], hl[k]))
				pick[sub.n_details++] = m->details[i];
		}
		part_len[k] = conduitapi__multi_transfer_details__get_packed_size(&sub);
		parts[k] = malloc(part_len[k] ? part_len[k] : 1);
		if (!parts[k]) {
			rc = cbb_err(err, "conduit: out of memory");
			break;
		}
		conduitapi__multi_transfer_details__pack(&sub, parts[k]);
	}
out:
	if (rc < 0)
		for (k = 0; k < n; k++) {
			free(parts[k]);
			parts[k] = NULL;
		}
	free(pick);
	free(hl);
	conduitapi__multi_transfer_details__free_unpacked(m, &a);
	return rc;
}

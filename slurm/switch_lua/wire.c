/* wire.c - see wire.h */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

/*
 * In the plugin (SWL_IN_SLURM) a buffer is Slurm's (xmalloc.h: it
 * never comes back NULL); in the helper, which has no Slurm, plain
 * realloc and free.
 */
#ifdef SWL_IN_SLURM
#include "src/common/xmalloc.h"
static unsigned char *grow(unsigned char *p, size_t n)
{
	xrealloc(p, n);
	return p;
}
#define release(p) xfree(p)
#else
#define grow(p, n) realloc((p), (n))
#define release(p) free(p)
#endif

void swl_out_init(swl_out_t *o)
{
	memset(o, 0, sizeof(*o));
}

void swl_out_free(swl_out_t *o)
{
	release(o->data);
	memset(o, 0, sizeof(*o));
}

void swl_put_raw(swl_out_t *o, const void *p, size_t n)
{
	if (o->bad)
		return;
	if (n > SWL_WIRE_MAX - o->len) {
		o->bad = true;
		return;
	}
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		unsigned char *d;

		while (cap < o->len + n)
			cap *= 2;
		d = grow(o->data, cap);
		if (!d) {
			o->bad = true;
			return;
		}
		o->data = d;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

static void put_tag(swl_out_t *o, char tag)
{
	swl_put_raw(o, &tag, 1);
}

static void put_u64(swl_out_t *o, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	swl_put_raw(o, b, 8);
}

void swl_put_nil(swl_out_t *o)
{
	put_tag(o, 'n');
}

void swl_put_bool(swl_out_t *o, bool v)
{
	put_tag(o, v ? 't' : 'f');
}

void swl_put_int(swl_out_t *o, int64_t v)
{
	put_tag(o, 'i');
	put_u64(o, (uint64_t)v);
}

void swl_put_double(swl_out_t *o, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_tag(o, 'd');
	put_u64(o, bits);
}

void swl_put_str(swl_out_t *o, const char *s, size_t n)
{
	unsigned char b[4];
	int i;

	if (n > SWL_WIRE_MAX) {
		o->bad = true;
		return;
	}
	put_tag(o, 's');
	for (i = 0; i < 4; i++)
		b[i] = (unsigned char)(n >> (8 * i));
	swl_put_raw(o, b, 4);
	swl_put_raw(o, s, n);
}

void swl_put_cstr(swl_out_t *o, const char *s)
{
	if (s)
		swl_put_str(o, s, strlen(s));
	else
		swl_put_nil(o);
}

void swl_open(swl_out_t *o)
{
	put_tag(o, '{');
}

void swl_close(swl_out_t *o)
{
	put_tag(o, '}');
}

void swl_kv_str(swl_out_t *o, const char *k, const char *v)
{
	if (!v)
		return;
	swl_put_cstr(o, k);
	swl_put_cstr(o, v);
}

void swl_kv_int(swl_out_t *o, const char *k, int64_t v)
{
	swl_put_cstr(o, k);
	swl_put_int(o, v);
}

void swl_kv_bool(swl_out_t *o, const char *k, bool v)
{
	swl_put_cstr(o, k);
	swl_put_bool(o, v);
}

/* ---- reading ------------------------------------------------------------ */

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static const unsigned char *get_at(const unsigned char *p,
				   const unsigned char *end, swl_val_t *v,
				   int depth)
{
	uint64_t bits;
	size_t n;
	int i;

	if (p >= end)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->tag = (char)*p++;
	switch (v->tag) {
	case 'n':
	case 'f':
	case 't':
		return p;
	case 'i':
	case 'd':
		if (end - p < 8)
			return NULL;
		bits = get_u64(p);
		if (v->tag == 'i')
			v->i = (int64_t)bits;
		else
			memcpy(&v->d, &bits, sizeof(bits));
		return p + 8;
	case 's':
		if (end - p < 4)
			return NULL;
		for (n = 0, i = 3; i >= 0; i--)
			n = (n << 8) | p[i];
		p += 4;
		if ((size_t)(end - p) < n)
			return NULL;
		v->s = p;
		v->n = n;
		return p + n;
	case '{': {
		const unsigned char *start = p;

		if (depth >= SWL_WIRE_DEPTH)
			return NULL;
		while (p < end && *p != '}') {
			swl_val_t k, x;

			p = get_at(p, end, &k, depth + 1);
			if (!p || k.tag == 'n' || k.tag == '{')
				return NULL;
			p = get_at(p, end, &x, depth + 1);
			if (!p)
				return NULL;
		}
		if (p >= end)
			return NULL;
		v->s = start;
		v->n = (size_t)(p - start);
		return p + 1;
	}
	}
	return NULL;
}

const unsigned char *swl_get(const unsigned char *p, const unsigned char *end,
			     swl_val_t *v)
{
	return get_at(p, end, v, 0);
}

bool swl_valid(const unsigned char *p, size_t n)
{
	swl_val_t v;

	return n && get_at(p, p + n, &v, 0) == p + n;
}

bool swl_field(const swl_val_t *t, const char *k, swl_val_t *v)
{
	const unsigned char *p, *end;
	size_t kn = strlen(k);

	if (t->tag != '{')
		return false;
	p = t->s;
	end = t->s + t->n;
	while (p && p < end) {
		swl_val_t key, x;

		p = swl_get(p, end, &key);
		if (!p)
			return false;
		p = swl_get(p, end, &x);
		if (p && key.tag == 's' && key.n == kn && !memcmp(key.s, k, kn)) {
			*v = x;
			return true;
		}
	}
	return false; /* v untouched */
}

/* buf.c - see buf.h */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cbb_buf_init(cbb_buf_t *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->limit = limit ? limit : CBB_BUF_LIMIT;
	b->secret = false;
}

void cbb_buf_secret(cbb_buf_t *b)
{
	b->secret = true;
}

void cbb_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}

int cbb_buf_reserve(cbb_buf_t *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->limit || b->len > b->limit - extra)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
	if (b->secret) {
		/* realloc would leave the old copy behind, unwiped */
		p = malloc(cap);
		if (!p)
			return -1;
		if (b->data) {
			memcpy(p, b->data, b->len);
			p[b->len] = '\0';
			cbb_wipe(b->data, b->cap);
			free(b->data);
		}
	} else {
		p = realloc(b->data, cap);
		if (!p)
			return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int cbb_buf_add(cbb_buf_t *b, const char *s, size_t n)
{
	/* room already (the parsers reserve once per line): no call */
	if (!(n < b->cap - b->len && b->len + n <= b->limit) &&
	    cbb_buf_reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int cbb_buf_adds(cbb_buf_t *b, const char *s)
{
	return cbb_buf_add(b, s, strlen(s));
}

int cbb_buf_addc(cbb_buf_t *b, char c)
{
	/* the parsers add one byte at a time: no call when there is room */
	if (b->len < b->limit && b->len + 1 < b->cap) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return 0;
	}
	return cbb_buf_add(b, &c, 1);
}

/* "00" to "99": two digits per division (job ids have seven or more) */
static const char two_digits[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

int cbb_buf_addu(cbb_buf_t *b, unsigned long v)
{
	char d[24];
	size_t i = sizeof(d);

	while (v >= 100) {
		const char *t = two_digits + 2 * (v % 100);

		v /= 100;
		i -= 2;
		d[i] = t[0];
		d[i + 1] = t[1];
	}
	if (v >= 10) {
		i -= 2;
		d[i] = two_digits[2 * v];
		d[i + 1] = two_digits[2 * v + 1];
	} else {
		d[--i] = (char)('0' + v);
	}
	return cbb_buf_add(b, d + i, sizeof(d) - i);
}

int cbb_buf_printf(cbb_buf_t *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || cbb_buf_reserve(b, (size_t)n) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

char *cbb_buf_steal(cbb_buf_t *b)
{
	char *p = b->data;

	if (!p)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

void cbb_buf_reset(cbb_buf_t *b)
{
	if (b->secret)
		cbb_wipe(b->data, b->cap);
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void cbb_buf_free(cbb_buf_t *b)
{
	if (b->secret)
		cbb_wipe(b->data, b->cap);
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

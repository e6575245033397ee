/* utf8.c - see utf8.h */
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ONES ((uint64_t)0x0101010101010101ULL)
#define HIGH ((uint64_t)0x8080808080808080ULL)

/* Eight bytes at s, in whatever order: the tests below are per byte. */
static uint64_t load8(const char *s)
{
	uint64_t x;

	memcpy(&x, s, sizeof(x));
	return x;
}

size_t cbb_utf8_seq(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[0], cp;
	size_t need, k;

	if (len == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len <= need)
		return 0;
	for (k = 1; k <= need; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[k] & 0x3f);
	}
	if (need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0; /* overlong or a surrogate */
	if (need == 3 && (cp < 0x10000 || cp > 0x10ffff))
		return 0;
	return need + 1;
}

bool cbb_utf8_valid(const char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		/* most paths are ASCII: eight bytes at a time */
		if (len - i >= 8 && !(load8(s + i) & HIGH)) {
			i += 8;
			continue;
		}
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		n = cbb_utf8_seq(s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

char *cbb_utf8_lossy(const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, o = 0, n;
	char *d;

	if (len > (SIZE_MAX - 1) / 4)
		return NULL;
	d = malloc(4 * len + 1);
	if (!d)
		return NULL;
	while (i < len) {
		n = cbb_utf8_seq(s + i, len - i);
		if (n) {
			memcpy(d + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		d[o++] = '\\';
		d[o++] = 'x';
		d[o++] = hex[(unsigned char)s[i] >> 4];
		d[o++] = hex[(unsigned char)s[i] & 15];
		i++;
	}
	d[o] = '\0';
	return d;
}

bool cbb_ascii(const char *s, size_t n)
{
	uint64_t acc = 0;
	size_t i = 0;

	if (n < 8) {
		for (; i < n; i++)
			acc |= (unsigned char)s[i];
		return !(acc & 0x80);
	}
	for (; n - i > 32; i += 32)
		acc |= load8(s + i) | load8(s + i + 8) | load8(s + i + 16) |
		       load8(s + i + 24);
	for (; n - i > 8; i += 8)
		acc |= load8(s + i);
	return !((acc | load8(s + n - 8)) & HIGH); /* the last 8, overlapping */
}

/*
 * Whether any of n bytes is a control byte (below 0x20, or 0x7f).  Eight
 * at a time: (x - 0x20..) & ~x & 0x80.. marks bytes below 0x20 (bytes
 * from 0x80 up keep their top bit in x, so ~x drops them), and the same
 * test on x ^ 0x7f.. marks 0x7f bytes (they become zero).
 */
bool cbb_has_control(const char *s, size_t n)
{
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x = load8(s + i), y = x ^ (ONES * 0x7f);

		if (((x - ONES * 0x20) & ~x & HIGH) ||
		    ((y - ONES) & ~y & HIGH))
			return true;
	}
	for (; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

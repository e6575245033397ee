/* utf8.c - see utf8.h */
#include "utf8.h"

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
		n = cbb_utf8_seq(s + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* path.c - see path.h */
#include "path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define ONES ((uint64_t)0x0101010101010101ULL)
#define LOW7 ((uint64_t)0x7f7f7f7f7f7f7f7fULL)

/* The top bit of each byte of v that is zero, exactly (no borrows). */
static uint64_t zero_bytes(uint64_t v)
{
	return ~(((v & LOW7) + LOW7) | v | LOW7);
}

static uint64_t load8(const char *s)
{
	uint64_t x;

	memcpy(&x, s, sizeof(x));
	return x;
}

/*
 * Whether a joined absolute path is already clean (the common case): no
 * "//" and no "/." anywhere.  Eight pairs at a time: the bytes at i.. that
 * are '/' against the bytes at i+1.. that are '/' or '.'.
 */
static bool dirty8(const char *s)
{
	uint64_t x = load8(s), y = load8(s + 1);

	return (zero_bytes(x ^ (ONES * '/')) &
		(zero_bytes(y ^ (ONES * '/')) | zero_bytes(y ^ (ONES * '.')))) != 0;
}

static bool clean(const char *s, size_t n)
{
	size_t i = 0;

	if (n < 9) {
		for (; i + 1 < n; i++)
			if (s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '.'))
				return false;
		return true;
	}
	for (; i + 9 <= n; i += 8)
		if (dirty8(s + i))
			return false;
	/* the last pairs: one window ending at the end, overlapping */
	return i + 1 >= n || !dirty8(s + n - 9);
}

size_t cbb_path_resolve_to(const char *base, size_t base_len, const char *p,
			   size_t plen, bool keep_slash, char *out,
			   cbb_err_t *err)
{
	size_t blen = 0, o = 0, i = 0, n;
	bool slash = keep_slash && plen > 0 && p[plen - 1] == '/';
	char src[CBB_PATH_MAX * 2], dst[CBB_PATH_MAX * 2 + 1];

	if (plen == 0)
		return cbb_err(err, "empty path"), 0;
	if (p[0] != '/') {
		if (!base || base[0] != '/')
			return cbb_err(err, "relative path needs the job's "
				       "working directory, which is not "
				       "known"), 0;
		blen = base_len;
	}
	if (blen + plen + 2 > CBB_PATH_MAX * 2)
		return cbb_err(err, "path longer than %d bytes",
			       CBB_PATH_MAX - 1), 0;
	n = blen + plen + (blen ? 1 : 0);
	/* joined straight into out: most paths need no cleaning */
	if (n < CBB_PATH_MAX) {
		if (blen) {
			memcpy(out, base, blen);
			out[blen] = '/';
		}
		memcpy(out + (blen ? blen + 1 : 0), p, plen);
		if (clean(out, n)) {
			if (n > 1 && out[n - 1] == '/' && !slash)
				n--;
			out[n] = '\0';
			return n;
		}
	}
	if (blen) {
		memcpy(src, base, blen);
		src[blen] = '/';
		memcpy(src + blen + 1, p, plen);
		src[blen + 1 + plen] = '\0';
	} else {
		memcpy(src, p, plen);
		src[plen] = '\0';
	}

	/* src is absolute; copy component by component into dst ("a/.."
	 * may shorten what was longer than a path on the way) */
	dst[o++] = '/';
	while (src[i]) {
		size_t start, clen;

		while (src[i] == '/')
			i++;
		start = i;
		while (src[i] && src[i] != '/')
			i++;
		clen = i - start;
		if (clen == 0 || (clen == 1 && src[start] == '.'))
			continue;
		if (clen == 2 && src[start] == '.' && src[start + 1] == '.') {
			while (o > 1 && dst[o - 1] != '/')
				o--; /* drop the last component */
			if (o > 1)
				o--; /* and the '/' before it */
			continue;
		}
		if (o > 1)
			dst[o++] = '/';
		memcpy(dst + o, src + start, clen);
		o += clen;
	}
	if (slash && o > 1)
		dst[o++] = '/';
	if (o >= CBB_PATH_MAX)
		return cbb_err(err, "path longer than %d bytes",
			       CBB_PATH_MAX - 1), 0;
	memcpy(out, dst, o);
	out[o] = '\0';
	return o;
}

char *cbb_path_resolve(const char *base, const char *p, bool keep_slash,
		       cbb_err_t *err)
{
	char buf[CBB_PATH_MAX], *r;
	size_t n = cbb_path_resolve_to(base, base ? strlen(base) : 0, p,
				       strlen(p), keep_slash, buf, err);

	if (!n)
		return NULL;
	r = malloc(n + 1);
	if (!r)
		return cbb_err(err, "out of memory"), NULL;
	memcpy(r, buf, n + 1);
	return r;
}

/* Length without trailing '/' (but "/" stays "/"). */
static size_t trim(const char *s, size_t n)
{
	while (n > 1 && s[n - 1] == '/')
		n--;
	return n;
}

bool cbb_path_within_n(const char *path, size_t l, const char *prefix,
		       size_t pl)
{
	pl = trim(prefix, pl);
	l = trim(path, l);
	if (pl == 1 && prefix[0] == '/')
		return path[0] == '/';
	if (l < pl || memcmp(path, prefix, pl) != 0)
		return false;
	return l == pl || path[pl] == '/';
}

bool cbb_path_within(const char *path, const char *prefix)
{
	return cbb_path_within_n(path, strlen(path), prefix, strlen(prefix));
}

bool cbb_path_same_n(const char *a, size_t la, const char *b, size_t lb)
{
	la = trim(a, la);
	lb = trim(b, lb);
	return la == lb && memcmp(a, b, la) == 0;
}

bool cbb_path_same(const char *a, const char *b)
{
	return cbb_path_same_n(a, strlen(a), b, strlen(b));
}

/* path.c - see path.h */
#include "path.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

char *cbb_path_resolve(const char *base, const char *p, bool keep_slash,
		       cbb_err_t *err)
{
	size_t plen = strlen(p), blen = 0, o = 0, i = 0, n;
	bool slash = keep_slash && plen > 0 && p[plen - 1] == '/';
	char *src, *dst;

	if (plen == 0) {
		cbb_err(err, "empty path");
		return NULL;
	}
	if (p[0] != '/') {
		if (!base || base[0] != '/') {
			cbb_err(err, "relative path needs the job's working "
				"directory, which is not known");
			return NULL;
		}
		blen = strlen(base);
	}
	if (blen + plen + 2 > CBB_PATH_MAX * 2) {
		cbb_err(err, "path longer than %d bytes", CBB_PATH_MAX - 1);
		return NULL;
	}
	n = blen + plen + 2;
	src = malloc(n);
	dst = malloc(n + 1);
	if (!src || !dst) {
		free(src);
		free(dst);
		cbb_err(err, "out of memory");
		return NULL;
	}
	if (blen) {
		memcpy(src, base, blen);
		src[blen] = '/';
		memcpy(src + blen + 1, p, plen + 1);
	} else {
		memcpy(src, p, plen + 1);
	}

	/* src is absolute; copy component by component into dst. */
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
	dst[o] = '\0';
	free(src);
	if (o >= CBB_PATH_MAX) {
		free(dst);
		cbb_err(err, "path longer than %d bytes", CBB_PATH_MAX - 1);
		return NULL;
	}
	return dst;
}

static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		n--;
	return n;
}

bool cbb_path_within(const char *path, const char *prefix)
{
	size_t pl = trimmed_len(prefix), l = trimmed_len(path);

	if (pl == 1 && prefix[0] == '/')
		return path[0] == '/';
	if (l < pl || strncmp(path, prefix, pl) != 0)
		return false;
	return l == pl || path[pl] == '/';
}

bool cbb_path_same(const char *a, const char *b)
{
	size_t la = trimmed_len(a), lb = trimmed_len(b);

	return la == lb && strncmp(a, b, la) == 0;
}

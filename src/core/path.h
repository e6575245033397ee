/*
 * path.h - lexical path handling for directive paths (no file system
 * access: job_process runs inside slurmctld, as SlurmUser).
 */
#ifndef CBB_PATH_H
#define CBB_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define CBB_PATH_MAX 4096 /* bytes including the NUL, as PATH_MAX */

/*
 * Make `p` absolute (joined onto `base` when relative) and clean it:
 * "//" and "/./" collapse, ".." removes the previous component (never
 * above "/").  With keep_slash a trailing '/' on `p` is kept.  Returns a
 * malloc'd string, or NULL with `err` set.
 */
char *cbb_path_resolve(const char *base, const char *p, bool keep_slash,
		       cbb_err_t *err);
/*
 * The same with the lengths known (`p` needs no NUL), into `out`: the
 * result's length, or 0 with `err`.  The result is never longer than
 * base, '/' and p joined, nor than CBB_PATH_MAX - 1: `out` needs the
 * smaller of base_len + plen + 2 bytes (plen + 1 when p is absolute)
 * and CBB_PATH_MAX.
 */
size_t cbb_path_resolve_to(const char *base, size_t base_len, const char *p,
			   size_t plen, bool keep_slash, char *out,
			   cbb_err_t *err);

/* True when `path` is `prefix` or lies below it (component-wise). */
bool cbb_path_within(const char *path, const char *prefix);

/* Equal, ignoring one trailing '/' on either side. */
bool cbb_path_same(const char *a, const char *b);

/* The same two with the lengths known (no NUL needed). */
bool cbb_path_within_n(const char *path, size_t len, const char *prefix,
		       size_t prefix_len);
bool cbb_path_same_n(const char *a, size_t la, const char *b, size_t lb);

#endif

/* readfile.h - read a whole regular file with a size cap; open a private
 * directory. */
#ifndef CBB_READFILE_H
#define CBB_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "err.h"

/*
 * Read `path` into a malloc'd, NUL-terminated buffer.  A file larger than
 * `max` bytes is an error.  When `missing` is not NULL, a file that does
 * not exist is not an error: *missing is set and *data is NULL.
 */
int cbb_read_file(const char *path, size_t max, char **data, size_t *len,
		  bool *missing, cbb_err_t *err);

/* Why cbb_open_private_dir refused a directory. */
enum { CBB_DIR_UNOPENED = -1, CBB_DIR_NOT_OURS = -2, CBB_DIR_SHARED = -3 };

/*
 * `dir` as a directory fd (no symbolic link), when it is safe to keep our
 * state and secrets in: owned by root or by us, writable by no one else.
 * Otherwise a CBB_DIR_* code (errno set for CBB_DIR_UNOPENED); *st, when
 * not NULL, holds what fstat found, for the caller's message.
 */
int cbb_open_private_dir(const char *dir, struct stat *st);

#endif

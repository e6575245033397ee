/* readfile.h - read a whole regular file with a size cap. */
#ifndef CBB_READFILE_H
#define CBB_READFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/*
 * Read `path` into a malloc'd, NUL-terminated buffer.  A file larger than
 * `max` bytes is an error.  When `missing` is not NULL, a file that does
 * not exist is not an error: *missing is set and *data is NULL.
 */
int cbb_read_file(const char *path, size_t max, char **data, size_t *len,
		  bool *missing, cbb_err_t *err);

#endif

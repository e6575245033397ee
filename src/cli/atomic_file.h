/*
 * atomic_file.h - a file written whole into a directory that may be
 * another user's: `conduit-bb metrics --output FILE`, run as root, into
 * node_exporter's textfile directory.
 */
#ifndef CBB_CLI_ATOMIC_FILE_H
#define CBB_CLI_ATOMIC_FILE_H

#include <stddef.h>

#include "err.h"

/*
 * Replace the file at path with len bytes of data, all at once: a reader
 * sees the old file or the new one, never half of it.  The bytes go to a
 * file only this process has opened, either unnamed (O_TMPFILE) and
 * named when complete, or created under an unpredictable name
 * (".<FILE>.<16 hex digits>.tmp") with O_EXCL | O_NOFOLLOW, so a FIFO, a
 * symbolic link or a file someone placed in that directory, at any name,
 * is never opened, followed, waited on or written; it is synced and
 * renamed over path (which replaces a link there rather than following
 * it).  A directory anyone may write without the sticky bit is refused:
 * anyone could replace the file after.  0, or -1 with err set (and
 * nothing left behind).
 */
int cbb_atomic_write(const char *path, const char *data, size_t len,
		     cbb_err_t *err);

#endif

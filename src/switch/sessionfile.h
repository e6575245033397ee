/*
 * sessionfile.h - SessionDelivery=file: the session token written to a
 * file only the job's user can read, instead of into the step's
 * environment (where /proc/PID/environ, job scripts that dump `env` and
 * core files can expose it).
 */
#ifndef CBB_SESSIONFILE_H
#define CBB_SESSIONFILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/*
 * Write `token` to DIR/<cluster>.<job_id>.token, mode 0600, owned by
 * `uid` (the job's user, from the signed jobinfo), replacing any earlier copy atomically (every step of the job
 * writes the same file).  DIR is created 0755 if missing and must be a
 * root-owned directory that nobody else can write.  The file's path goes
 * to `path`.  Returns 0, or -1 with err set.
 */
int cbb_session_file_write(const char *dir, const char *cluster,
			   uint32_t job_id, uint32_t uid, const char *token,
			   char *path, size_t size, cbb_err_t *err);

#endif

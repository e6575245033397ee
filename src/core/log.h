/*
 * log.h - log levels and the job prefix, for C code that must not touch
 * Lua.
 *
 * Core and bb code log through a callback (cbb_log_fn) that the hook
 * layer supplies: the bb hooks queue the line (luahost.h,
 * cbb_call_queue_log) and send it through slurm.log once the C work is
 * done; tests pass their own.  A level is one of the names below, never
 * a bare number: Slurm's burst_buffer/lua maps them to error, info,
 * verbose and debug.
 */
#ifndef CBB_LOG_H
#define CBB_LOG_H

#include <stdint.h>

enum {
	CBB_LOG_ERROR = -1,
	CBB_LOG_INFO = 0,
	CBB_LOG_VERBOSE = 1,
	CBB_LOG_DEBUG = 2,
};

/* Where a finished, one-line message goes; ud is the callback's own. */
typedef void (*cbb_log_fn)(void *ud, int level, const char *msg);

/*
 * Format "job <job_id>: <fmt ...>" (cut at 1 KiB) and hand it to fn.
 * Nothing happens when fn is NULL.  Every line about a job starts with
 * that prefix: admins and the end-to-end suite grep for it.
 */
void cbb_log_job(cbb_log_fn fn, void *ud, int level, uint32_t job_id,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif

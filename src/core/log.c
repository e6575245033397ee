/* log.c - see log.h */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#define CBB_LOG_LINE_MAX 1024

void cbb_log_job(cbb_log_fn fn, void *ud, int level, uint32_t job_id,
		 const char *fmt, ...)
{
	char msg[CBB_LOG_LINE_MAX];
	int n;
	va_list ap;

	if (!fn)
		return;
	n = snprintf(msg, sizeof(msg), "job %u: ", job_id);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	fn(ud, level, msg);
}

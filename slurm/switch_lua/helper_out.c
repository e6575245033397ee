/*
 * helper_out.c - switch-lua-run's answer stream (frame.h, helper.h): log
 * lines, then one result, each a line of hexadecimal on SWL_FD_ANSWER.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "frame.h"
#include "helper.h"

static size_t logged; /* bytes of log lines so far */

static void write_all(const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(SWL_FD_ANSWER, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the plugin is gone: nobody to answer */
		c += w;
		n -= (size_t)w;
	}
}

/* One frame: its type, the bytes of a then b in hexadecimal, '\n'. */
static void frame(char type, const void *a, size_t na, const void *b,
		  size_t nb)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *parts[2] = { a, b };
	size_t lens[2] = { na, nb };
	char out[4096];
	size_t o = 0;
	int k;

	out[o++] = type;
	for (k = 0; k < 2; k++) {
		size_t i;

		for (i = 0; i < lens[k]; i++) {
			if (o + 2 > sizeof(out)) {
				write_all(out, o);
				o = 0;
			}
			out[o++] = digits[parts[k][i] >> 4];
			out[o++] = digits[parts[k][i] & 15];
		}
	}
	if (o + 1 > sizeof(out)) {
		write_all(out, o);
		o = 0;
	}
	out[o++] = '\n';
	write_all(out, o);
}

void swl_say(char level, const char *msg, size_t len)
{
	static const char cut[] = "switch-lua-run: more log lines than "
				  "the plugin keeps: the rest left out";

	if (logged >= SWL_LOG_MAX)
		return;
	if (len > SWL_LOG_LINE_MAX)
		len = SWL_LOG_LINE_MAX;
	logged += len + 1;
	if (logged >= SWL_LOG_MAX) {
		level = SWL_LOG_ERROR;
		msg = cut;
		len = sizeof(cut) - 1;
	}
	frame('L', &level, 1, msg, len);
}

void swl_sayf(char level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	swl_say(level, msg, n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n :
		sizeof(msg) - 1);
}

void swl_answer(const void *value, size_t len)
{
	frame('R', value, len, "", 0);
}

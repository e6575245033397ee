/* err.c - see err.h */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

void cbb_err_clear(cbb_err_t *err)
{
	err->set = false;
	err->msg[0] = '\0';
}

int cbb_err(cbb_err_t *err, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->set)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->set = true;
	return -1;
}

void cbb_err_prefix(cbb_err_t *err, const char *fmt, ...)
{
	char head[128];
	size_t hl, ml;
	va_list ap;
	int n;

	if (!err || !err->set)
		return;
	va_start(ap, fmt);
	n = vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	hl = strlen(head);
	ml = strlen(err->msg);
	/* Messages are capped: a long one loses its tail, never the head. */
	if (hl + 2 + ml >= sizeof(err->msg))
		ml = sizeof(err->msg) - hl - 3;
	memmove(err->msg + hl + 2, err->msg, ml);
	memcpy(err->msg, head, hl);
	err->msg[hl] = ':';
	err->msg[hl + 1] = ' ';
	err->msg[hl + 2 + ml] = '\0';
}

/* U+0080..U+009F (C1 controls, e.g. CSI) written as UTF-8. */
static bool c1_control(const char *s)
{
	return (unsigned char)s[0] == 0xc2 && (unsigned char)s[1] >= 0x80 &&
	       (unsigned char)s[1] <= 0x9f;
}

void cbb_one_line(char *s)
{
	for (; *s; s++) {
		if (c1_control(s)) {
			s[0] = s[1] = ' ';
			s++;
		} else if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			*s = ' ';
		}
	}
}

const char *cbb_show(char *dst, size_t size, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	if (size < 8) {
		if (size)
			dst[0] = '\0';
		return dst;
	}
	for (i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t seq = cbb_utf8_seq(s + i, len - i);
		/* control bytes (C0, DEL, C1) and broken UTF-8 are
		 * shown as \xNN */
		bool esc = c < 0x20 || c == 0x7f || seq == 0 ||
			   (seq == 2 && c1_control(s + i));
		size_t need = esc ? 4 : seq;

		if (o + need + 4 > size) { /* room for "..." and NUL */
			memcpy(dst + o, "...", 3);
			o += 3;
			break;
		}
		if (esc) {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
			i++;
		} else {
			memcpy(dst + o, s + i, seq);
			o += seq;
			i += seq;
		}
	}
	dst[o] = '\0';
	return dst;
}

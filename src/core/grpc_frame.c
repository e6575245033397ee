/* grpc_frame.c - see grpc_frame.h */
#include "grpc_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The reply buffer starts this small and doubles as bytes arrive. */
#define CBB_REPLY_FIRST ((size_t)16 << 10)

int cbb_grpc_frame(cbb_rpc_t *c)
{
	size_t i;

	c->framed = malloc(c->req_len + 5);
	if (!c->framed)
		return -1;
	c->framed[0] = 0; /* not compressed */
	for (i = 0; i < 4; i++)
		c->framed[1 + i] = (uint8_t)(c->req_len >> (24 - 8 * i));
	if (c->req_len)
		memcpy(c->framed + 5, c->req, c->req_len);
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void cbb_grpc_percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		int h, l;

		if (*s == '%' && (h = hexval(s[1])) >= 0 &&
		    (l = hexval(s[2])) >= 0) {
			*o++ = (char)(h * 16 + l);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}


size_t cbb_grpc_on_header(char *data, size_t size, size_t n, void *ud)
{
	cbb_rpc_t *c = ud;
	size_t len = size * n, vl;
	char line[CBB_ERR_MAX + 64], *v;

	if (len >= 5 && !strncmp(data, "HTTP/", 5)) {
		const char *sp = memchr(data, ' ', len);

		c->http_status = sp ? atoi(sp + 1) : 0;
		c->in_trailers = false;
		return len;
	}
	if (len <= 2 && (data[0] == '\r' || data[0] == '\n')) {
		c->in_trailers = true; /* end of the header block */
		return len;
	}
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, data, len);
	line[len] = '\0';
	v = strchr(line, ':');
	if (!v)
		return size * n;
	*v++ = '\0';
	while (*v == ' ' || *v == '\t')
		v++;
	vl = strcspn(v, "\r\n");
	v[vl] = '\0';
	if (!strcasecmp(line, "content-type"))
		c->grpc_ct = !strncmp(v, "application/grpc", 16);
	else if (!strcasecmp(line, "grpc-status")) {
		char *end;
		long st = strtol(v, &end, 10);

		c->have_status = true;
		c->status = (*v && !*end && st >= 0 && st <= 16) ?
				    (int)st : CBB_GRPC_UNKNOWN;
	} else if (!strcasecmp(line, "grpc-message")) {
		snprintf(c->message, sizeof(c->message), "%s", v);
		cbb_grpc_percent_decode(c->message);
		cbb_one_line(c->message);
	}
	return size * n;
}

/* Make room for `more` reply bytes: grow by doubling, never past expect. */
static int reply_room(cbb_rpc_t *c, size_t more)
{
	size_t need = c->resp_len + more, cap = c->resp_cap;
	uint8_t *p;

	if (need <= cap)
		return 0;
	if (cap < CBB_REPLY_FIRST)
		cap = CBB_REPLY_FIRST;
	while (cap < need)
		cap *= 2;
	if (cap > c->expect)
		cap = c->expect;
	p = realloc(c->resp, cap);
	if (!p)
		return -1;
	c->resp = p;
	c->resp_cap = cap;
	return 0;
}

size_t cbb_grpc_on_body(char *data, size_t size, size_t n, void *ud)
{
	cbb_rpc_t *c = ud;
	size_t len = size * n, i = 0;

	while (i < len) {
		if (c->got < 5) { /* the 5-byte frame prefix */
			c->prefix[c->got++] = (uint8_t)data[i++];
			if (c->got == 5) {
				c->expect = ((size_t)c->prefix[1] << 24) |
					    ((size_t)c->prefix[2] << 16) |
					    ((size_t)c->prefix[3] << 8) |
					    c->prefix[4];
				if (c->prefix[0] != 0) {
					c->bad_frame = true; /* compressed */
					return 0;
				}
				if (c->expect > c->max_reply) {
					c->too_big = true;
					return 0; /* refused before any allocation */
				}
			}
			continue;
		}
		if (c->resp_len >= c->expect) {
			c->bad_frame = true; /* a second message */
			return 0;
		}
		{
			size_t take = len - i, room = c->expect - c->resp_len;

			if (take > room)
				take = room;
			if (reply_room(c, take) < 0) {
				c->too_big = true;
				return 0;
			}
			memcpy(c->resp + c->resp_len, data + i, take);
			c->resp_len += take;
			c->got += take;
			i += take;
		}
	}
	return len;
}

/* "600m": the shortest grpc-timeout encoding with at most 8 digits. */
void cbb_grpc_timeout_header(char *buf, size_t size, unsigned ms)
{
	if (ms < 100000000U)
		snprintf(buf, size, "grpc-timeout: %um", ms);
	else
		snprintf(buf, size, "grpc-timeout: %uS", ms / 1000);
}

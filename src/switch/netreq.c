/* netreq.c - see netreq.h */
#include "netreq.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const directive_names[] = {
	"skip", "defer", "start_crash", "complete_again", "complete_crash",
	"preinit_warn", "preinit_fail", "preinit_crash", "init_warn",
	"init_fail", "init_crash", "noenv", "postfini_warn", "postfini_drain",
	"postfini_crash",
};
#define NDIRECTIVES (sizeof(directive_names) / sizeof(directive_names[0]))

/* A whole number, all digits, within [lo, hi]. */
static int number(const char *s, size_t n, uint64_t lo, uint64_t hi,
		  uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 12)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* "512M", "8G", "1T" -> MiB (a unit is required: no silent bytes/GiB mixup). */
static int vram(const char *s, size_t n, uint64_t *mib)
{
	uint64_t v, mult;

	if (n < 2)
		return -1;
	switch (toupper((unsigned char)s[n - 1])) {
	case 'M':
		mult = 1;
		break;
	case 'G':
		mult = 1024;
		break;
	case 'T':
		mult = 1024 * 1024;
		break;
	default:
		return -1;
	}
	if (number(s, n - 1, 1, 1024 * 1024, &v) < 0 || v * mult > 1024 * 1024)
		return -1;
	*mib = v * mult;
	return 0;
}

static int item(const char *s, size_t n, cbb_netreq_t *r, cbb_err_t *err)
{
	const char *eq = memchr(s, '=', n);
	char shown[80];
	uint64_t v;
	size_t i, kl;

	cbb_show(shown, sizeof(shown), s, n);
	if (!eq) {
		for (i = 0; i < NDIRECTIVES; i++)
			if (strlen(directive_names[i]) == n &&
			    !strncmp(s, directive_names[i], n)) {
				r->directives |= 1u << i;
				return 0;
			}
		return cbb_err(err, "unknown word '%s' (expected pool=, gpus= "
			       "or vram=)", shown);
	}
	kl = (size_t)(eq - s);
	eq++;
	n -= kl + 1;
	if (kl == 4 && !strncmp(s, "pool", 4)) {
		if (n == 0 || n > CBB_POOL_MAX)
			return cbb_err(err, "pool name must be 1 to %d "
				       "characters", CBB_POOL_MAX);
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)eq[i]) && !strchr("_.-", eq[i]))
				return cbb_err(err, "pool name '%s' may hold only "
					       "letters, digits, '_', '.' and "
					       "'-'", shown + 5);
		if (r->pool[0])
			return cbb_err(err, "pool given twice");
		memcpy(r->pool, eq, n);
		r->pool[n] = '\0';
		return 0;
	}
	if (kl == 4 && !strncmp(s, "gpus", 4)) {
		if (number(eq, n, 1, 64, &v) < 0)
			return cbb_err(err, "gpus must be a whole number from 1 "
				       "to 64, not '%s'", shown + 5);
		if (r->gpus)
			return cbb_err(err, "gpus given twice");
		r->gpus = (uint32_t)v;
		return 0;
	}
	if (kl == 4 && !strncmp(s, "vram", 4)) {
		if (vram(eq, n, &v) < 0)
			return cbb_err(err, "vram must be a size with a unit, "
				       "e.g. vram=8G or vram=512M (at most 1T), "
				       "not '%s'", shown + 5);
		if (r->vram_mib)
			return cbb_err(err, "vram given twice");
		r->vram_mib = v;
		return 0;
	}
	{
		char key[40];

		cbb_show(key, sizeof(key), s, kl);
		return cbb_err(err, "unknown key '%s' (expected pool=, gpus= "
			       "or vram=)", key);
	}
}

int cbb_netreq_parse(const char *network, const char *prefix,
		     cbb_netreq_t *req, cbb_err_t *err)
{
	size_t pl = strlen(prefix);
	const char *seg = network;

	memset(req, 0, sizeof(*req));
	while (seg && *seg) {
		const char *end = strchr(seg, ',');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		if (n == pl + 1 && !strncmp(seg, prefix, pl) && seg[pl] == ':')
			return cbb_err(err, "--network: nothing after '%s:'",
				       prefix);
		if (n > pl + 1 && !strncmp(seg, prefix, pl) && seg[pl] == ':') {
			const char *p = seg + pl + 1, *stop = seg + n;

			if (req->present)
				return cbb_err(err, "--network: '%s:' given "
					       "twice", prefix);
			req->present = true;
			while (p < stop) {
				const char *plus = memchr(p, '+', (size_t)(stop - p));
				size_t in = plus ? (size_t)(plus - p) :
						   (size_t)(stop - p);

				if (in == 0)
					return cbb_err(err, "--network: empty "
						       "item in '%s:'", prefix);
				if (item(p, in, req, err) < 0) {
					cbb_err_prefix(err, "--network %s",
						       prefix);
					return -1;
				}
				p += in + (plus ? 1 : 0);
				if (plus && p == stop)
					return cbb_err(err, "--network: '%s:' "
						       "ends with '+'", prefix);
			}
			if (req->vram_mib && !req->gpus)
				req->gpus = 1; /* a slice is of one GPU */
			if (req->gpus && !req->pool[0])
				return cbb_err(err, "--network %s: gpus= needs "
					       "pool=", prefix);
		}
		seg = end ? end + 1 : NULL;
	}
	return 0;
}

void cbb_netreq_directives(uint32_t bits, char *buf, size_t size)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < NDIRECTIVES && size; i++) {
		int w;

		if (!(bits & (1u << i)))
			continue;
		w = snprintf(buf + o, size - o, "%s%s", o ? "+" : "",
			     directive_names[i]);
		if (w < 0 || (size_t)w >= size - o)
			break;
		o += (size_t)w;
	}
}

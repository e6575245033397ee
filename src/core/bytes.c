/* bytes.c - see bytes.h */
#include "bytes.h"

#include <stdio.h>
#include <string.h>

void cbb_human_bytes(char *buf, size_t size, uint64_t v, const char *suffix)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu %s%s", (unsigned long long)v,
			 unit[0], suffix);
	else
		snprintf(buf, size, "%.1f %s%s", d, unit[u], suffix);
}

bool cbb_parse_size(const char *s, uint64_t *out)
{
	static const char prefixes[] = "kmgtpe";
	long double v = 0, scale = 1, mult = 1;
	bool digits = false, point = false;
	const char *p;

	*out = 0;
	if (!s)
		return false;
	while (*s == ' ' || *s == '\t')
		s++;
	for (; (*s >= '0' && *s <= '9') || *s == ',' || *s == '.'; s++) {
		if (*s == ',') {
			if (point || !digits)
				return false;
			continue;
		}
		if (*s == '.') {
			if (point)
				return false;
			point = true;
			continue;
		}
		digits = true;
		if (point) {
			scale /= 10;
			v += (long double)(*s - '0') * scale;
		} else {
			v = v * 10 + (long double)(*s - '0');
		}
	}
	if (!digits)
		return false;
	if (*s == ' ')
		s++;
	if (*s && (p = strchr(prefixes, *s | 0x20)) != NULL) {
		bool binary = s[1] == 'i' || s[1] == 'I';
		int k;

		for (k = 0; k <= p - prefixes; k++)
			mult *= binary ? 1024 : 1000;
		s += binary ? 2 : 1;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	if (s[0] == '/' && s[1] == 's')
		s += 2;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return false;
	v = v * mult + 0.5L; /* to the nearest byte */
	*out = v >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)v;
	return true;
}

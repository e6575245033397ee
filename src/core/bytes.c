/* bytes.c - see bytes.h */
#include "bytes.h"

#include <stdio.h>

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

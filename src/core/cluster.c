/* cluster.c - see cluster.h */
#include "cluster.h"

#include <ctype.h>
#include <stddef.h>

void cbb_cluster_safe(char *dst, const char *cluster)
{
	size_t i;

	if (!cluster || !cluster[0])
		cluster = "cluster";
	for (i = 0; cluster[i] && i < CBB_CLUSTER_MAX - 1; i++) {
		char c = cluster[i];

		dst[i] = (isalnum((unsigned char)c) || c == '_' || c == '.' ||
			  c == '-') ? c : '_';
	}
	dst[i] = '\0';
}

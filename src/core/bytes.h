/*
 * bytes.h - byte counts for people: "80.0 MiB", binary units, one
 * decimal (whole bytes below 1 KiB).  bbstat, the accounting summary
 * and `conduit-bb status` all show sizes this way.
 */
#ifndef CBB_BYTES_H
#define CBB_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* v as text into buf, with `suffix` after the unit (e.g. "/s"). */
void cbb_human_bytes(char *buf, size_t size, uint64_t v, const char *suffix);

#endif

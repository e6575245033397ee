/*
 * bytes.h - byte counts for people: "80.0 MiB", binary units, one
 * decimal (whole bytes below 1 KiB).  bbstat, the accounting summary
 * and `conduit-bb status` all show sizes this way.  And the other way:
 * sizes and rates as Conduit's server writes them.
 */
#ifndef CBB_BYTES_H
#define CBB_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* v as text into buf, with `suffix` after the unit (e.g. "/s"). */
void cbb_human_bytes(char *buf, size_t size, uint64_t v, const char *suffix);

/*
 * A size or rate as Conduit writes it (TransferDetails.dataTransferred
 * and .bandwidth are strings): "1073741824B" once a transfer is done,
 * "49953679.91B" for its final rate, "49.95MB/s" or "1,024.00kB/s"
 * while it runs, "" or "0" before.  A number (',' grouping and a
 * fraction allowed), an optional space, an optional prefix k M G T P E
 * (either case), an optional 'i', an optional 'B', an optional "/s".
 * The prefixes are powers of 1000 and "Ki".."Ei" powers of 1024, as
 * Conduit's own CLI reads them (go-units' FromHumanSize and RAMInBytes).
 * Rounded to whole bytes, saturating at UINT64_MAX.  0 and false for
 * anything else (*out 0), so a field Conduit fills differently one day
 * shows no size rather than a wrong one.
 */
bool cbb_parse_size(const char *s, uint64_t *out);

#endif

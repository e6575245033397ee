/* utf8.h - UTF-8 checks (Conduit's protobuf strings must be UTF-8). */
#ifndef CBB_UTF8_H
#define CBB_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
size_t cbb_utf8_seq(const char *s, size_t len);

bool cbb_utf8_valid(const char *s, size_t len);

/*
 * s[0..len) as a new NUL-terminated string (malloc; NULL when out of
 * memory) in which every byte that is not part of valid UTF-8 is written
 * as the four characters \xNN, as cbb_show shows it; valid UTF-8,
 * control characters included, is copied as it is.  For output that
 * must be UTF-8 (JSON) and must not lose the rest of the string.
 */
char *cbb_utf8_lossy(const char *s, size_t len);

/* Whether all n bytes at s are ASCII (below 0x80): then valid UTF-8. */
bool cbb_ascii(const char *s, size_t n);

/* Whether any of the n bytes at s is a control byte (< 0x20 or 0x7f). */
bool cbb_has_control(const char *s, size_t n);

#endif

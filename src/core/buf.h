/*
 * buf.h - a growable byte buffer with a hard size cap.
 *
 * Every append reports failure (out of memory or over the cap) instead of
 * aborting: this code runs inside slurmctld.  The data is always
 * NUL-terminated once anything has been added.
 */
#ifndef CBB_BUF_H
#define CBB_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	char *data;
	size_t len;
	size_t cap;
	size_t limit; /* 0 means the default cap (CBB_BUF_LIMIT) */
	bool secret;  /* wiped whenever memory is let go (cbb_buf_secret) */
} cbb_buf_t;

#define CBB_BUF_LIMIT ((size_t)64 << 20)

void cbb_buf_init(cbb_buf_t *b, size_t limit);
/*
 * Mark a buffer as holding a secret (a token, a key): every byte it lets
 * go is wiped first, when it grows (no realloc: the old copy is wiped and
 * freed), is reset, or is freed.  cbb_buf_steal hands the secret over.
 */
void cbb_buf_secret(cbb_buf_t *b);
/*
 * Wipe n bytes in a way the compiler may not remove (explicit_bzero: a
 * memset of memory that is not read again is a dead store, and -O2
 * removes it).  Every key, token and session secret is wiped with this
 * (or OPENSSL_cleanse); tests/wipe-check.sh checks the object code.
 */
void cbb_wipe(void *p, size_t n);
/* Room for `extra` more bytes (and the NUL) without another allocation. */
int cbb_buf_reserve(cbb_buf_t *b, size_t extra);
int cbb_buf_add(cbb_buf_t *b, const char *s, size_t n);
int cbb_buf_adds(cbb_buf_t *b, const char *s);
int cbb_buf_addc(cbb_buf_t *b, char c);
/* v in decimal (what printf's %lu gives, without printf's cost) */
int cbb_buf_addu(cbb_buf_t *b, unsigned long v);
int cbb_buf_printf(cbb_buf_t *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hand the (NUL-terminated) data to the caller; the buffer is reset. */
char *cbb_buf_steal(cbb_buf_t *b);
void cbb_buf_reset(cbb_buf_t *b);
void cbb_buf_free(cbb_buf_t *b);

#endif

/*
 * err.h - one-line error messages for the pure C core.
 *
 * Core code never touches a lua_State; it reports failure through a
 * cbb_err_t.  The first error set wins, so a caller deep in the parser
 * can report precisely and outer layers cannot overwrite it.
 */
#ifndef CBB_ERR_H
#define CBB_ERR_H

#include <stdbool.h>
#include <stddef.h>

#define CBB_ERR_MAX 1024

typedef struct {
	bool set;
	char msg[CBB_ERR_MAX];
} cbb_err_t;

void cbb_err_clear(cbb_err_t *err);

/* Set the message unless one is already set.  Always returns -1. */
int cbb_err(cbb_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Put "prefix: " in front of an existing message (e.g. "line 7"). */
void cbb_err_prefix(cbb_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Replace control bytes (newlines too) by spaces: messages are one line. */
void cbb_one_line(char *s);

/*
 * Render untrusted bytes for a message: at most `max` visible bytes,
 * control bytes and invalid UTF-8 shown as \xNN, "..." when cut.  Always NUL-terminates.
 */
const char *cbb_show(char *dst, size_t size, const char *s, size_t len);

#endif

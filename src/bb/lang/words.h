/*
 * words.h - split a directive body into words, POSIX-shell style but
 * without any expansion.
 *
 *   'single quotes'   everything literal up to the next '
 *   "double quotes"   literal except \" \\ \$ \` (escapes); an unescaped
 *                     $ or ` is rejected, as a shell would expand it
 *   \c                outside quotes: c literally
 *   # at word start   (unquoted) the rest of the line is a comment
 *
 * Unquoted $ ` * ? [ { and a leading ~ would be expanded by a shell and
 * are rejected ("quote it if it is literal"); unquoted | & ; < > ( ) are
 * shell operators and are rejected too.  Control bytes are rejected
 * everywhere.  Words are NUL-terminated; an embedded NUL cannot occur.
 */
#ifndef CBB_WORDS_H
#define CBB_WORDS_H

#include <stddef.h>

#include "err.h"

#define CBB_WORDS_MAX 1024

typedef struct {
	char **v;    /* n words; they, len and their text are one allocation */
	size_t *len; /* each word's length (strlen) */
	size_t n;
	size_t size; /* bytes allocated */
} cbb_words_t;

/* Split s into out; -1 with err set (and out freed) on a bad word. */
int cbb_words_split(const char *s, size_t len, cbb_words_t *out,
		    cbb_err_t *err);
/* The same, reusing out's allocation from an earlier split when it is
 * large enough (out zeroed, or from cbb_words_split/_resplit). */
int cbb_words_resplit(const char *s, size_t len, cbb_words_t *out,
		      cbb_err_t *err);
void cbb_words_free(cbb_words_t *w);

#endif

/* words.c - see words.h */
#include "words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"


/*
 * What each byte is outside quotes.  Runs of plain bytes are copied in
 * one go; everything else is looked at one byte at a time.
 */
enum { PLAIN, BLANK, CONTROL, SQUOTE, DQUOTE, BACKSLASH, SPECIAL };

#define CTRL4(b) [b] = CONTROL, [b + 1] = CONTROL, [b + 2] = CONTROL, \
		 [b + 3] = CONTROL
static const unsigned char cls[256] = {
	CTRL4(0), CTRL4(4), [8] = CONTROL, [10] = CONTROL, [11] = CONTROL,
	CTRL4(12),
	CTRL4(16), CTRL4(20), CTRL4(24), CTRL4(28),
	[0x7f] = CONTROL, ['\t'] = BLANK, [' '] = BLANK,
	['\''] = SQUOTE, ['"'] = DQUOTE, ['\\'] = BACKSLASH,
	['$'] = SPECIAL, ['`'] = SPECIAL, ['*'] = SPECIAL, ['?'] = SPECIAL,
	['['] = SPECIAL, ['{'] = SPECIAL, ['|'] = SPECIAL, ['&'] = SPECIAL,
	[';'] = SPECIAL, ['<'] = SPECIAL, ['>'] = SPECIAL, ['('] = SPECIAL,
	[')'] = SPECIAL,
};

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static int control(cbb_err_t *err, unsigned char c)
{
	return cbb_err(err, "control character 0x%02x is not allowed", c);
}

static int reject_unquoted(char c, cbb_err_t *err)
{
	switch (c) {
	case '$':
		return cbb_err(err, "unquoted '$' is not expanded (quote it "
			       "if it is literal)");
	case '`':
		return cbb_err(err, "unquoted '`' is not expanded (quote it "
			       "if it is literal)");
	case '*':
	case '?':
	case '[':
		return cbb_err(err, "unquoted '%c' is not expanded: wildcards "
			       "are not supported (quote it if it is literal)",
			       c);
	case '{':
		return cbb_err(err, "unquoted '{' is not expanded: braces are "
			       "not supported (quote it if it is literal)");
	case '|':
	case '&':
	case ';':
	case '<':
	case '>':
	case '(':
	case ')':
		return cbb_err(err, "unquoted '%c' is a shell operator and is "
			       "not allowed here (quote it if it is literal)",
			       c);
	default:
		return 0;
	}
}

/*
 * The words, their lengths and their text share one allocation: n
 * pointers, n lengths, then the bytes.  A word takes at least one byte
 * of input and words are separated by blanks, so len / 2 + 1 of each and
 * len + 1 bytes (the text never grows: quotes and escapes only drop
 * bytes) always suffice.
 */
int cbb_words_resplit(const char *s, size_t len, cbb_words_t *out,
		      cbb_err_t *err)
{
	size_t i = 0, o = 0, maxw = len / 2 + 1, need;
	bool in_word = false;
	unsigned char c = 0;
	char *text;

	if (maxw > CBB_WORDS_MAX + 1)
		maxw = CBB_WORDS_MAX + 1;
	need = maxw * (sizeof(char *) + sizeof(size_t)) + len + 1;
	out->n = 0;
	if (!out->v || out->size < need) {
		free(out->v);
		out->size = 0;
		out->v = malloc(need);
		if (!out->v)
			return cbb_err(err, "out of memory");
		out->size = need;
	}
	out->len = (size_t *)(out->v + maxw);
	text = (char *)(out->len + maxw);

	while (i < len) {
		int k = cls[c = (unsigned char)s[i]];

		if (k == CONTROL)
			goto bad_control;
		if (k == BLANK) {
			if (in_word) {
				if (out->n >= CBB_WORDS_MAX) {
					cbb_err(err, "more than %d words",
						CBB_WORDS_MAX);
					goto fail;
				}
				out->len[out->n] = (size_t)(text + o - out->v[out->n]);
				text[o++] = '\0';
				out->n++;
			}
			in_word = false;
			i++;
			continue;
		}
		if (!in_word) {
			if (c == '#')
				break; /* comment to the end of the line */
			if (c == '~') {
				cbb_err(err, "unquoted '~' is not expanded: "
					"write the full path");
				goto fail;
			}
			in_word = true;
			out->v[out->n] = text + o;
		}
		if (k == PLAIN) {
			size_t e = i + 1;

			/* PLAIN is 0: four bytes at a time while all are */
			while (e + 4 <= len &&
			       !(cls[(unsigned char)s[e]] |
				 cls[(unsigned char)s[e + 1]] |
				 cls[(unsigned char)s[e + 2]] |
				 cls[(unsigned char)s[e + 3]]))
				e += 4;
			while (e < len && cls[(unsigned char)s[e]] == PLAIN)
				e++;
			memcpy(text + o, s + i, e - i);
			o += e - i;
			i = e;
		} else if (k == SQUOTE) {
			const char *q = memchr(s + i + 1, '\'', len - i - 1);
			size_t e;

			if (!q) {
				cbb_err(err, "unterminated single quote");
				goto fail;
			}
			if (cbb_has_control(s + i + 1, (size_t)(q - s) - i - 1))
				for (e = i + 1; s + e < q; e++)
					if (is_control((unsigned char)s[e])) {
						c = (unsigned char)s[e];
						goto bad_control;
					}
			memcpy(text + o, s + i + 1, (size_t)(q - s) - i - 1);
			o += (size_t)(q - s) - i - 1;
			i = (size_t)(q - s) + 1;
		} else if (k == DQUOTE) {
			for (i++;; i++) {
				if (i >= len) {
					cbb_err(err, "unterminated double "
						"quote");
					goto fail;
				}
				c = (unsigned char)s[i];
				if (c == '"')
					break;
				if (is_control(c))
					goto bad_control;
				if (c == '$' || c == '`') {
					cbb_err(err, "'%c' inside double quotes "
						"is not expanded (use single "
						"quotes if it is literal)", c);
					goto fail;
				}
				/* s[i + 1] != 0: strchr() also finds the
				 * terminator; a NUL is a control byte, the
				 * next turn says so */
				if (c == '\\' && i + 1 < len && s[i + 1] &&
				    strchr("\"\\$`", s[i + 1]))
					c = (unsigned char)s[++i];
				text[o++] = (char)c;
			}
			i++;
		} else if (k == BACKSLASH) {
			if (i + 1 >= len) {
				cbb_err(err, "backslash at the end of the line "
					"(Slurm joins lines only when '\\' is "
					"the last byte of a line with LF "
					"endings)");
				goto fail;
			}
			c = (unsigned char)s[i + 1];
			if (is_control(c))
				goto bad_control;
			text[o++] = (char)c;
			i += 2;
		} else {
			reject_unquoted((char)c, err);
			goto fail;
		}
	}
	if (in_word) {
		if (out->n >= CBB_WORDS_MAX) {
			cbb_err(err, "more than %d words", CBB_WORDS_MAX);
			goto fail;
		}
		out->len[out->n] = (size_t)(text + o - out->v[out->n]);
		text[o] = '\0';
		out->n++;
	}
	return 0;
bad_control:
	control(err, c);
fail:
	cbb_words_free(out);
	return -1;
}

int cbb_words_split(const char *s, size_t len, cbb_words_t *out,
		    cbb_err_t *err)
{
	out->v = NULL;
	out->len = NULL;
	out->size = 0;
	return cbb_words_resplit(s, len, out, err);
}

void cbb_words_free(cbb_words_t *w)
{
	free(w->v); /* the lengths and words live in the same block */
	w->v = NULL;
	w->len = NULL;
	w->n = 0;
	w->size = 0;
}

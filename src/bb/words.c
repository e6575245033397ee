/* words.c - see words.h */
#include "words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static int push_word(cbb_words_t *w, cbb_buf_t *cur, cbb_err_t *err)
{
	char **v;

	if (w->n >= CBB_WORDS_MAX)
		return cbb_err(err, "more than %d words", CBB_WORDS_MAX);
	/* room for 8 words at a time: most directives need one allocation */
	if (w->n % 8 == 0) {
		v = realloc(w->v, (w->n + 8) * sizeof(*v));
		if (!v)
			return cbb_err(err, "out of memory");
		w->v = v;
	}
	v = w->v;
	v[w->n] = cbb_buf_steal(cur);
	if (!v[w->n])
		return cbb_err(err, "out of memory");
	w->n++;
	return 0;
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

int cbb_words_split(const char *s, size_t len, cbb_words_t *out,
		    cbb_err_t *err)
{
	cbb_buf_t cur;
	size_t i = 0;
	bool in_word = false;

	out->v = NULL;
	out->n = 0;
	cbb_buf_init(&cur, len + 1);

	while (i < len) {
		char c = s[i];

		if (is_control((unsigned char)c) && c != '\t') {
			cbb_err(err, "control character 0x%02x is not allowed",
				(unsigned char)c);
			goto fail;
		}
		if (is_blank(c)) {
			if (in_word && push_word(out, &cur, err) < 0)
				goto fail;
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
			if (cbb_buf_add(&cur, "", 0) < 0) {
				cbb_err(err, "out of memory");
				goto fail;
			}
		}
		if (c == '\'') {
			const char *q = memchr(s + i + 1, '\'', len - i - 1);
			size_t k;

			if (!q) {
				cbb_err(err, "unterminated single quote");
				goto fail;
			}
			for (k = i + 1; s + k < q; k++)
				if (is_control((unsigned char)s[k])) {
					cbb_err(err, "control character 0x%02x "
						"is not allowed",
						(unsigned char)s[k]);
					goto fail;
				}
			if (cbb_buf_add(&cur, s + i + 1,
					(size_t)(q - s) - i - 1) < 0)
				goto oom;
			i = (size_t)(q - s) + 1;
		} else if (c == '"') {
			i++;
			for (;;) {
				if (i >= len) {
					cbb_err(err, "unterminated double "
						"quote");
					goto fail;
				}
				c = s[i];
				if (c == '"')
					break;
				if (is_control((unsigned char)c)) {
					cbb_err(err, "control character 0x%02x "
						"is not allowed",
						(unsigned char)c);
					goto fail;
				}
				if (c == '$' || c == '`') {
					cbb_err(err, "'%c' inside double quotes "
						"is not expanded (use single "
						"quotes if it is literal)", c);
					goto fail;
				}
				if (c == '\\' && i + 1 < len &&
				    strchr("\"\\$`", s[i + 1])) {
					c = s[++i];
				}
				if (cbb_buf_addc(&cur, c) < 0)
					goto oom;
				i++;
			}
			i++;
		} else if (c == '\\') {
			if (i + 1 >= len) {
				cbb_err(err, "backslash at the end of the line "
					"(Slurm joins lines only when '\\' is "
					"the last byte of a line with LF "
					"endings)");
				goto fail;
			}
			if (is_control((unsigned char)s[i + 1])) {
				cbb_err(err, "control character 0x%02x is not "
					"allowed", (unsigned char)s[i + 1]);
				goto fail;
			}
			if (cbb_buf_addc(&cur, s[i + 1]) < 0)
				goto oom;
			i += 2;
		} else {
			if (reject_unquoted(c, err) < 0)
				goto fail;
			if (cbb_buf_addc(&cur, c) < 0)
				goto oom;
			i++;
		}
	}
	if (in_word && push_word(out, &cur, err) < 0)
		goto fail;
	cbb_buf_free(&cur);
	return 0;
oom:
	cbb_err(err, "out of memory");
fail:
	cbb_buf_free(&cur);
	cbb_words_free(out);
	return -1;
}

void cbb_words_free(cbb_words_t *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

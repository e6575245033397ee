/* script.c - see script.h */
#include "script.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int push_line(cbb_script_t *s, unsigned lineno, cbb_buf_t *cur,
		     cbb_err_t *err)
{
	cbb_dline_t *v;

	v = realloc(s->lines, (s->count + 1) * sizeof(*v));
	if (!v)
		return cbb_err(err, "out of memory");
	s->lines = v;
	v[s->count].lineno = lineno;
	v[s->count].len = cur->len;
	v[s->count].text = cbb_buf_steal(cur);
	if (!v[s->count].text)
		return cbb_err(err, "out of memory");
	s->count++;
	return 0;
}

/* A directive-looking line in the script body, for `conduit-bb check`. */
static void note_late(cbb_script_t *s, const char *p, size_t n,
		      const char *directive, size_t dlen, unsigned lineno)
{
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (n > dlen && p[0] == '#' && !strncmp(p + 1, directive, dlen) &&
	    s->nlate < CBB_LATE_MAX)
		s->late[s->nlate++] = lineno;
}

int cbb_script_scan(const char *text, size_t len, const char *directive,
		    size_t max_lines, cbb_script_t *out, cbb_err_t *err)
{
	size_t dlen = strlen(directive), pos = 0;
	const char *end;
	unsigned lineno = 0, start = 0;
	bool in_header = true, is_cont = false, has_space = false;
	cbb_buf_t cur;

	memset(out, 0, sizeof(*out));
	end = memchr(text, '\0', len);
	if (end)
		len = (size_t)(end - text);
	cbb_buf_init(&cur, CBB_LINE_MAX);

	while (pos < len) {
		const char *line = text + pos, *nl, *tok;
		size_t n, tlen;

		nl = memchr(line, '\n', len - pos);
		n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		lineno++;
		if (n == 0)
			continue; /* strtok_r never sees empty lines */

		if (!in_header) {
			note_late(out, line, n, directive, dlen, lineno);
			continue;
		}
		if (line[0] != '#') {
			in_header = false;
			out->first_command = lineno;
			continue;
		}
		if (n < dlen + 1 || strncmp(line + 1, directive, dlen) != 0) {
			is_cont = false;
			continue;
		}

		tok = line;
		if (is_cont) {
			tok += dlen + 1;
			while (has_space && tok < line + n && is_space(*tok))
				tok++;
		} else {
			if (cur.data &&
			    push_line(out, start, &cur, err) < 0)
				goto fail;
			if (out->count >= max_lines) {
				cbb_err(err, "line %u: more than %zu directives "
					"(MaxDirectives=%zu)", lineno,
					max_lines, max_lines);
				goto fail;
			}
			start = lineno;
		}
		tlen = (size_t)(line + n - tok);
		if (tlen > 0 && tok[tlen - 1] == '\\') {
			/*
			 * Slurm looks at the byte before the '\', which for
			 * a bare "#CONDUIT\" continuation is the end of the
			 * directive name; it is always inside this line.
			 */
			const char *bs = tok + tlen - 1;

			has_space = bs > line && is_space(bs[-1]);
			tlen--;
			is_cont = true;
		} else {
			is_cont = false;
		}
		if (cbb_buf_add(&cur, tok, tlen) < 0) {
			cbb_err(err, "line %u: directive longer than %d bytes",
				start, CBB_LINE_MAX);
			goto fail;
		}
	}
	if (cur.data && push_line(out, start, &cur, err) < 0)
		goto fail;
	cbb_buf_free(&cur);
	return 0;
fail:
	cbb_buf_free(&cur);
	return -1;
}

void cbb_script_free(cbb_script_t *s)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		free(s->lines[i].text);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

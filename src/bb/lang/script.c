/* script.c - see script.h */
#include "script.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

/*
 * Every logical line goes into one store (NUL after each) and the line
 * table grows geometrically: a script of N directives costs a handful of
 * allocations, not one per line.  Offsets are kept while the store may
 * still move and turned into pointers at the end.
 */
static int push_line(cbb_script_t *s, size_t *cap, unsigned lineno,
		     size_t off, cbb_buf_t *all, cbb_err_t *err)
{
	cbb_dline_t *v;

	if (cbb_buf_addc(all, '\0') < 0)
		return cbb_err(err, "out of memory");
	if (s->count == *cap) {
		size_t n = *cap ? *cap * 2 : 16;

		v = realloc(s->lines, n * sizeof(*v));
		if (!v)
			return cbb_err(err, "out of memory");
		s->lines = v;
		*cap = n;
	}
	v = &s->lines[s->count++];
	v->lineno = lineno;
	v->len = all->len - 1 - off;
	v->text = (char *)(uintptr_t)off; /* a pointer once the store is done */
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
	size_t dlen = strlen(directive), pos = 0, cap = 0, off = 0, i;
	const char *end;
	unsigned lineno = 0, start = 0;
	bool in_header = true, is_cont = false, has_space = false, open = false;
	cbb_buf_t all;

	memset(out, 0, sizeof(*out));
	end = memchr(text, '\0', len);
	if (end)
		len = (size_t)(end - text);
	cbb_buf_init(&all, 0);
	/* the lines never take more than the script (a NUL for each '\n'):
	 * one allocation, no copies as it grows (past the cap, it grows) */
	if (len)
		(void)cbb_buf_reserve(&all, len);

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
		if (n < dlen + 1 || memcmp(line + 1, directive, dlen) != 0) {
			is_cont = false;
			continue;
		}

		tok = line;
		if (is_cont) {
			tok += dlen + 1;
			while (has_space && tok < line + n && is_space(*tok))
				tok++;
		} else {
			if (open && push_line(out, &cap, start, off, &all,
					      err) < 0)
				goto fail;
			open = false;
			if (out->count >= max_lines) {
				cbb_err(err, "line %u: more than %zu directives "
					"(MaxDirectives=%zu)", lineno,
					max_lines, max_lines);
				goto fail;
			}
			start = lineno;
			off = all.len;
			open = true;
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
		if (all.len - off + tlen > CBB_LINE_MAX) {
			cbb_err(err, "line %u: directive longer than %d bytes",
				start, CBB_LINE_MAX);
			goto fail;
		}
		if (cbb_buf_add(&all, tok, tlen) < 0) {
			cbb_err(err, "out of memory");
			goto fail;
		}
	}
	if (open && push_line(out, &cap, start, off, &all, err) < 0)
		goto fail;
	out->store = all.data;
	for (i = 0; i < out->count; i++)
		out->lines[i].text = all.data + (uintptr_t)out->lines[i].text;
	return 0;
fail:
	cbb_buf_free(&all);
	out->count = 0; /* their texts are offsets into the freed store */
	return -1;
}

void cbb_script_free(cbb_script_t *s)
{
	free(s->lines);
	free(s->store);
	memset(s, 0, sizeof(*s));
}

/* directive.c - see directive.h */
#include "directive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "path.h"
#include "utf8.h"
#include "directive_int.h"
#include "words.h"

const char *cbb_stage_name(cbb_stage_t s)
{
	return s == CBB_STAGE_IN ? "PRE" : "POST";
}

const char *cbb_action_name(cbb_action_t a)
{
	return a == CBB_CP ? "cp" : "mv";
}

const char *cbb_when_name(cbb_when_t w)
{
	return w == CBB_WHEN_SUCCESS ? "success" :
	       w == CBB_WHEN_FAILURE ? "failure" : "always";
}

void cbb_plan_free(cbb_plan_t *plan)
{
	/* the directives, every path and source list */
	cbb_arena_free(&plan->arena);
	memset(plan, 0, sizeof(*plan));
}

size_t cbb_plan_count(const cbb_plan_t *plan, cbb_stage_t stage,
		      bool with_skipped)
{
	size_t i, n = 0;

	for (i = 0; i < plan->n; i++)
		n += plan->v[i].stage == stage &&
		     (with_skipped || !plan->v[i].skip);
	return n;
}

bool cbb_directive_shared(const cbb_directive_t *d)
{
	return d->stage == CBB_STAGE_IN && !d->every_attempt &&
	       !(d->symbols & CBB_SYM_PER_TASK);
}

/*
 * What one parse reuses from directive to directive: the plan's arena
 * for what the directives keep, and scratch for expansion and words.
 */
typedef struct {
	const cbb_parse_opts_t *o;
	cbb_arena_t *arena;
	cbb_buf_t exp;
	cbb_words_t words;
	const char *wd;  /* the job's working directory (NULL: unknown) */
	size_t wd_len;
	bool ascii;      /* the line being parsed is all ASCII */
} parse_ctx_t;

/*
 * Word w (wl bytes) as a clean absolute path, straight into the plan's
 * arena (cleaning never makes a path longer than it was joined).  A word
 * of an all-ASCII line is valid UTF-8 without looking (the splitter has
 * already refused control bytes).
 */
static char *resolve(parse_ctx_t *c, const char *w, size_t wl,
		     bool keep_slash, size_t *len, cbb_err_t *err)
{
	char shown[120], *p;
	size_t cap = w[0] == '/' ? wl + 1 : c->wd_len + wl + 2, n;

	if (!c->ascii && !cbb_utf8_valid(w, wl))
		return cbb_err(err, "path '%s' is not valid UTF-8",
			       cbb_show(shown, sizeof(shown), w, wl)),
		       NULL;
	p = cbb_arena_alloc(c->arena, cap < CBB_PATH_MAX ? cap : CBB_PATH_MAX);
	if (!p)
		return cbb_err(err, "out of memory"), NULL;
	n = cbb_path_resolve_to(c->wd, c->wd_len, w, wl, keep_slash, p, err);
	if (!n) {
		cbb_err_prefix(err, "'%s'", cbb_show(shown, sizeof(shown), w,
						     wl));
		return NULL;
	}
	*len = n;
	return p;
}

/* Turn the words after the directive name into `d`. */
static int parse_words(parse_ctx_t *c, const cbb_words_t *w,
		       cbb_directive_t *d, cbb_err_t *err)
{
	const cbb_config_t *cfg = c->o->cfg;
	char shown[120];
	size_t i = 0, cmd, first, k, total = 0, dlen = 0, slen = 0;
	bool end_of_options = false;

	/* --when= may also stand before the command, as users write it */
	for (; i < w->n && w->v[i][0] == '-' && !strncmp(w->v[i], "--when", 6) &&
	       (w->v[i][6] == '\0' || w->v[i][6] == '='); i++)
		if (cbb_directive_option(w->v[i], d, err) < 0)
			return -1;
	if (i == w->n)
		return cbb_err(err, "missing command: expected cp or mv");
	cmd = i++;
	if (!strcmp(w->v[cmd], "cp"))
		d->action = CBB_CP;
	else if (!strcmp(w->v[cmd], "mv"))
		d->action = CBB_MV;
	else
		return cbb_err(err, "unknown command '%s': expected cp or mv",
			       cbb_show(shown, sizeof(shown), w->v[cmd],
					strlen(w->v[cmd])));
	for (; i < w->n && w->v[i][0] == '-'; i++) {
		if (!strcmp(w->v[i], "--")) {
			end_of_options = true;
			i++;
			break;
		}
		if (cbb_directive_option(w->v[i], d, err) < 0)
			return -1;
	}
	first = i;
	for (k = first; k < w->n && !end_of_options; k++)
		if (w->v[k][0] == '-')
			return cbb_err(err, "option '%s' must come before the "
				       "paths (put -- before a path that "
				       "starts with '-')",
				       cbb_show(shown, sizeof(shown), w->v[k],
						strlen(w->v[k])));
	if (w->n - first < 2)
		return cbb_err(err, "%s needs at least one source and a "
			       "destination", w->v[cmd]);

	d->sources = cbb_arena_alloc(c->arena,
				     (w->n - first - 1) * sizeof(char *));
	if (!d->sources)
		return cbb_err(err, "out of memory");
	d->nsources = w->n - first - 1;
	memset(d->sources, 0, d->nsources * sizeof(char *));
	d->destination = resolve(c, w->v[w->n - 1], w->len[w->n - 1], true,
				 &dlen, err);
	if (!d->destination)
		return -1;
	for (k = 0; k < d->nsources; k++) {
		const char *s;

		d->sources[k] = resolve(c, w->v[first + k], w->len[first + k],
					false, &slen, err);
		if (!d->sources[k])
			return -1;
		s = d->sources[k];
		total += slen;
		if (cbb_path_same_n(s, slen, d->destination, dlen))
			return cbb_err(err, "source and destination are the "
				       "same path %s",
				       cbb_show(shown, sizeof(shown), s,
						strlen(s)));
		if (d->recursive &&
		    cbb_path_within_n(d->destination, dlen, s, slen))
			return cbb_err(err, "destination %s is inside the "
				       "source %s, which is copied "
				       "recursively", d->destination, s);
		if (cbb_directive_path_allowed(cfg, d->stage, 0, s, err) < 0)
			return -1;
	}
	if (total > cfg->max_source_bytes)
		return cbb_err(err, "the sources add up to %zu bytes; Conduit "
			       "accepts at most %u (MaxSourceBytes): copy "
			       "their directory with -r instead", total,
			       cfg->max_source_bytes);
	return cbb_directive_path_allowed(cfg, d->stage, 1, d->destination,
					  err);
}

/* "#CONDUIT_PRE rest" -> stage and the offset of the body. */
static int parse_name(const char *t, size_t len, const char *directive,
		      cbb_stage_t *stage, size_t *body, cbb_err_t *err)
{
	size_t dl = strlen(directive), nl;
	const char *suffix = t + 1 + dl;
	char shown[80];

	/* the scan matched "#<directive>": the name ends at a blank */
	if (len >= 1 + dl + 4 && !memcmp(suffix, "_PRE", 4) &&
	    (len == 1 + dl + 4 || suffix[4] == ' ' || suffix[4] == '\t')) {
		*stage = CBB_STAGE_IN;
		*body = 1 + dl + 4;
		return 0;
	}
	if (len >= 1 + dl + 5 && !memcmp(suffix, "_POST", 5) &&
	    (len == 1 + dl + 5 || suffix[5] == ' ' || suffix[5] == '\t')) {
		*stage = CBB_STAGE_OUT;
		*body = 1 + dl + 5;
		return 0;
	}
	nl = 0;
	while (nl < len && t[nl] != ' ' && t[nl] != '\t')
		nl++;
	return cbb_err(err, "unknown directive '%s' (expected #%s_PRE "
			       "or #%s_POST)", cbb_show(shown, sizeof(shown),
							t, nl),
			       directive, directive);
}

/* Everything after "#CONDUIT_PRE" (at offset `body`) of one line. */
static int parse_body(parse_ctx_t *c, const char *text, size_t len,
		      bool percent, bool *stopped, cbb_directive_t *d,
		      cbb_err_t *err)
{
	if (c->o->expand && !percent) {
		/* nothing to expand; only a "\\\\" matters to later lines */
		const char *b = *stopped ? NULL : memchr(text, '\\', len);

		while (b && b + 1 < text + len && b[1] != '\\')
			b = memchr(b + 1, '\\', (size_t)(text + len - b - 1));
		if (b && b + 1 < text + len)
			*stopped = true;
	} else if (c->o->expand) {
		cbb_buf_reset(&c->exp);
		(void)cbb_buf_reserve(&c->exp, len + 32);
		if (cbb_symbols_expand(text, len, c->o->job, stopped,
				       &d->symbols, &c->exp, err) < 0)
			return -1;
		text = c->exp.data ? c->exp.data : "";
		len = c->exp.len;
	}
	if (cbb_words_resplit(text, len, &c->words, err) < 0)
		return -1;
	c->ascii = cbb_ascii(text, len);
	return parse_words(c, &c->words, d, err);
}

static bool has_slurm_word(const char *t, size_t len)
{
	const char *e = t, *end = t + len;

	while ((e = memchr(e, '=', (size_t)(end - e))) != NULL) {
		if ((e - t >= 8 && !memcmp(e - 8, "capacity", 8)) ||
		    (e - t >= 4 && !memcmp(e - 4, "pool", 4)))
			return true;
		e++;
	}
	return false;
}

/* Keep the first error in err, hand every one to each_error. */
static void one_error(const cbb_parse_opts_t *opts, cbb_plan_t *plan,
		      const cbb_err_t *e, cbb_err_t *err)
{
	if (plan->n_errors++ == 0)
		*err = *e;
	if (opts->each_error)
		opts->each_error(opts->ud, e->msg);
}

/* Say how many more follow, cutting the first message if need be. */
static void more_errors(cbb_err_t *err, unsigned more)
{
	char tail[64];
	size_t tl = (size_t)snprintf(tail, sizeof(tail),
				     " (and %u more: run conduit-bb check)",
				     more);
	size_t ml = strlen(err->msg);

	if (ml + tl >= sizeof(err->msg))
		ml = sizeof(err->msg) - tl - 1;
	memcpy(err->msg + ml, tail, tl + 1);
}

int cbb_parse_script(const char *text, size_t len,
		     const cbb_parse_opts_t *opts, cbb_plan_t *plan,
		     cbb_err_t *err)
{
	cbb_script_t sc;
	cbb_err_t e;
	bool stopped = false;
	parse_ctx_t c;
	size_t i;

	memset(plan, 0, sizeof(*plan));
	c.o = opts;
	c.arena = &plan->arena;
	c.wd = opts->job ? opts->job->work_dir : NULL;
	c.wd_len = c.wd ? strlen(c.wd) : 0;
	cbb_buf_init(&c.exp, CBB_LINE_MAX);
	memset(&c.words, 0, sizeof(c.words));
	if (cbb_script_scan(text, len, opts->cfg->directive,
			    opts->cfg->max_directives, &sc, err) < 0) {
		cbb_script_free(&sc);
		return -1;
	}
	plan->first_command = sc.first_command;
	plan->nlate = sc.nlate;
	memcpy(plan->late, sc.late, sizeof(sc.late));
	if (sc.count) {
		plan->v = cbb_arena_alloc(&plan->arena,
					  sc.count * sizeof(*plan->v));
		if (plan->v)
			memset(plan->v, 0, sc.count * sizeof(*plan->v));
		if (!plan->v) {
			cbb_script_free(&sc);
			return cbb_err(err, "out of memory");
		}
	}
	for (i = 0; i < sc.count; i++) {
		cbb_directive_t *d = &plan->v[plan->n++];
		const cbb_dline_t *l = &sc.lines[i];
		size_t llen, body = 0;
		bool percent;

		d->line = l->lineno;
		d->index = (unsigned)i + 1;
		if (!plan->slurm_words_line && has_slurm_word(l->text, l->len))
			plan->slurm_words_line = l->lineno;
		percent = memchr(l->text, '%', l->len) != NULL;
		plan->has_percent |= percent;
		llen = l->len;
		if (llen && l->text[llen - 1] == '\r')
			llen--; /* CRLF scripts */
		cbb_err_clear(&e);
		if (parse_name(l->text, llen, opts->cfg->directive, &d->stage,
			       &body, &e) < 0) {
			cbb_err_prefix(&e, "line %u", l->lineno);
			one_error(opts, plan, &e, err);
			continue;
		}
		if (parse_body(&c, l->text + body, llen - body, percent,
			       &stopped, d, &e) < 0) {
			cbb_err_prefix(&e, "line %u: #%s_%s", l->lineno,
				       opts->cfg->directive,
				       cbb_stage_name(d->stage));
			one_error(opts, plan, &e, err);
		}
	}
	cbb_script_free(&sc);
	cbb_buf_free(&c.exp);
	cbb_words_free(&c.words);
	if (plan->n_errors > 1 && !opts->each_error)
		more_errors(err, plan->n_errors - 1);
	return plan->n_errors ? -1 : 0;
}

int cbb_plan_own_script(cbb_plan_t *plan, const char *text, size_t len,
			const cbb_parse_opts_t *opts)
{
	cbb_parse_opts_t o = *opts;
	cbb_plan_t own;
	cbb_err_t err;
	size_t i;
	int rc;

	o.expand = true;
	o.each_error = NULL;
	cbb_err_clear(&err);
	rc = cbb_parse_script(text, len, &o, &own, &err);
	/* a scan that failed leaves no directive: nothing matches */
	if (own.n != plan->n || own.n == 0) {
		cbb_plan_free(&own);
		return -1;
	}
	for (i = 0; i < plan->n; i++) {
		cbb_directive_t *d = &plan->v[i];

		d->line = own.v[i].line;
		if (rc == 0) {
			d->symbols = own.v[i].symbols;
			d->shared = cbb_directive_shared(d);
		}
	}
	cbb_plan_free(&own);
	return rc;
}

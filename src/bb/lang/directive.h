/*
 * directive.h - parse and validate #<Directive>_PRE / _POST lines.
 *
 *   #CONDUIT_PRE  cp|mv [-r|--recursive] [--every-attempt] [--] SRC... DST
 *   #CONDUIT_POST cp|mv [-r|--recursive] [--] SRC... DST
 *
 * Pure C: no Lua types.  The result is a plan, one entry per directive
 * in script order, with absolute cleaned paths ready for Conduit.
 */
#ifndef CBB_DIRECTIVE_H
#define CBB_DIRECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "config.h"
#include "err.h"
#include "script.h"
#include "symbols.h"

typedef enum {
	CBB_CP = 0,
	CBB_MV = 1,
} cbb_action_t;

/* #CONDUIT_POST --when=: which job outcomes stage this directive out. */
typedef enum {
	CBB_WHEN_ALWAYS = 0,
	CBB_WHEN_SUCCESS = 1,
	CBB_WHEN_FAILURE = 2,
} cbb_when_t;

typedef struct {
	cbb_stage_t stage;
	cbb_action_t action;
	bool recursive;
	bool every_attempt; /* --every-attempt: stage in again on requeue */
	cbb_when_t when;    /* stage-out only */
	bool skip;          /* set by the stage-out hooks: --when says no */
	bool shared;        /* set by the stage hooks from
			       cbb_directive_shared() once `symbols` is
			       known (cbb_plan_own_script) */
	unsigned line;     /* script line the directive starts on */
	unsigned index;    /* 1-based position among all directives */
	unsigned symbols;  /* CBB_SYM_* bits expanded on this line (a "%%"
			      is CBB_SYM_PERCENT, never the letter after it) */
	size_t nsources;
	char **sources;    /* absolute, cleaned */
	char *destination; /* absolute, cleaned, trailing '/' kept */
} cbb_directive_t;

typedef struct {
	cbb_directive_t *v;
	size_t n;
	unsigned first_command;       /* see cbb_script_t */
	unsigned late[CBB_LATE_MAX];  /* directive lines Slurm ignores */
	size_t nlate;
	unsigned slurm_words_line;    /* first line with capacity=/pool= */
	bool has_percent;             /* Slurm will rewrite the script */
	unsigned n_errors;            /* bad directives found */
	cbb_arena_t arena;            /* v, and the directives' paths and lists */
} cbb_plan_t;

typedef struct {
	const cbb_config_t *cfg;
	const cbb_job_t *job;
	/*
	 * true in job_process, which reads the raw script; false in the
	 * stage hooks, which get lines Slurm already expanded.
	 */
	bool expand;
	/*
	 * When set, called with every error in script order (the first
	 * too), as a compiler lists them; `err` then holds the first alone.
	 * When NULL, `err` holds the first and, if there were more,
	 * " (and N more: run conduit-bb check)".
	 */
	void (*each_error)(void *ud, const char *msg);
	void *ud;
} cbb_parse_opts_t;

/*
 * Parse a whole job script.  Every directive is checked, so all bad
 * ones are found in one pass.  On error returns -1 with a one-line
 * message "line N: #CONDUIT_PRE: <problem>" in `err` (see each_error);
 * plan->n_errors counts them.  The plan must be freed with
 * cbb_plan_free() in both cases.
 */
int cbb_parse_script(const char *text, size_t len,
		     const cbb_parse_opts_t *opts, cbb_plan_t *plan,
		     cbb_err_t *err);
void cbb_plan_free(cbb_plan_t *plan);

/*
 * How many directives of `stage` the plan has: every one with
 * `with_skipped`, else only those --when= did not skip (d->skip).
 */
size_t cbb_plan_count(const cbb_plan_t *plan, cbb_stage_t stage,
		      bool with_skipped);

/*
 * Whether a directive is staged once for a whole job array instead of
 * once per task (docs/directives.md, "Job arrays"): a stage-in, not
 * --every-attempt, that expanded none of the symbols that differ between
 * tasks (CBB_SYM_PER_TASK).  Decided on d->symbols, the symbols the
 * parser really expanded: "%%a" is a literal "%a", and nothing after a
 * "\\" is a symbol.  The one rule for `conduit-bb check` and the hooks.
 */
bool cbb_directive_shared(const cbb_directive_t *d);

/*
 * The stage hooks parse the lines Slurm rewrote (symbols replaced, only
 * the directive lines, so other line numbers).  Parse the job's own
 * script `text` as job_process did (opts, expanding) and give each
 * directive of `plan` its line number and, when that parse succeeded,
 * its symbols and `shared`.  When the two do not have the same
 * directives nothing changes (none shared).  Returns 0 when all was
 * taken, -1 when not.
 */
int cbb_plan_own_script(cbb_plan_t *plan, const char *text, size_t len,
			const cbb_parse_opts_t *opts);

const char *cbb_stage_name(cbb_stage_t s);   /* "PRE" / "POST" */
const char *cbb_action_name(cbb_action_t a); /* "cp" / "mv" */
const char *cbb_when_name(cbb_when_t w);     /* "always", ... */

#endif

/*
 * directive_check.c - what a directive may say: the options accepted
 * (and why the Conduit CLI's others are refused), and the site's
 * allow-lists for sources and destinations (StageInSources and the
 * like).  The parser (directive.c) asks both for every word and path.
 */
#include <stdio.h>
#include <string.h>

#include "directive_int.h"
#include "path.h"

/* Conduit CLI flags users copy from its docs, with why each is refused. */
static const struct {
	const char *flag;
	const char *why;
} refused[] = {
	{ "--user", "the job's user comes from Slurm" },
	{ "--cert-key-bundle", "credentials come from conduit_bb.conf" },
	{ "--cert", "credentials come from conduit_bb.conf" },
	{ "--key", "credentials come from conduit_bb.conf" },
	{ "--ca", "credentials come from conduit_bb.conf" },
	{ "-c", "credentials come from conduit_bb.conf" },
	{ "--config", "the server comes from conduit_bb.conf" },
	{ "-i", "the server comes from conduit_bb.conf" },
	{ "--ip", "the server comes from conduit_bb.conf" },
	{ "-p", "the server comes from conduit_bb.conf" },
	{ "--port", "the server comes from conduit_bb.conf" },
	{ "--comment", "conduit_bb sets the comment to track the job" },
	{ "--work-dir", "relative paths use the job's working directory" },
	{ "--validate-only", "validation is done at submission" },
	{ "-s", "transfers are always validated" },
	{ "--skip-validation", "transfers are always validated" },
	{ "-b", "transfers always run in the background" },
	{ "--background", "transfers always run in the background" },
};

int cbb_directive_option(const char *w, cbb_directive_t *d, cbb_err_t *err)
{
	char shown[80];
	size_t i, n;

	if (!strcmp(w, "-r") || !strcmp(w, "--recursive")) {
		d->recursive = true;
		return 0;
	}
	n = strcspn(w, "=");
	if (!strcmp(w, "--every-attempt")) {
		if (d->stage != CBB_STAGE_IN)
			return cbb_err(err, "option '--every-attempt' is for "
				       "stage-in only (stage-out runs after "
				       "every attempt already)");
		d->every_attempt = true;
		return 0;
	}
	if (n == 6 && !strncmp(w, "--when", 6)) {
		if (d->stage != CBB_STAGE_OUT)
			return cbb_err(err, "option '--when' is for stage-out "
				       "only (a stage-in runs before the job "
				       "has an outcome)");
		if (!strcmp(w, "--when=always"))
			d->when = CBB_WHEN_ALWAYS;
		else if (!strcmp(w, "--when=success"))
			d->when = CBB_WHEN_SUCCESS;
		else if (!strcmp(w, "--when=failure"))
			d->when = CBB_WHEN_FAILURE;
		else
			return cbb_err(err, "option '%s' needs a value: "
				       "--when=success, --when=failure or "
				       "--when=always",
				       cbb_show(shown, sizeof(shown), w,
						strlen(w)));
		return 0;
	}
	cbb_show(shown, sizeof(shown), w, strlen(w));
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strlen(refused[i].flag) == n &&
		    !strncmp(w, refused[i].flag, n))
			return cbb_err(err, "option '%s' is not allowed: %s",
				       shown, refused[i].why);
	if (w[0] == '-' && w[1] != '-' && strchr(w + 1, 'r') && w[2])
		return cbb_err(err, "option '%s' is not allowed: give -r on "
			       "its own (only -r/--recursive is accepted)",
			       shown);
	return cbb_err(err, "option '%s' is not allowed (only -r, "
		       "--recursive, --every-attempt and --when= are "
		       "accepted)", shown);
}

static bool allowed(const cbb_prefixes_t *p, const char *path)
{
	size_t i;

	if (p->n == 0)
		return true;
	for (i = 0; i < p->n; i++)
		if (cbb_path_within(path, p->v[i]))
			return true;
	return false;
}

static int not_allowed(const cbb_config_t *cfg, cbb_stage_t st, int dst,
		       const char *path, cbb_err_t *err)
{
	static const char *const key[2][2] = {
		{ "StageInSources", "StageInDestinations" },
		{ "StageOutSources", "StageOutDestinations" },
	};
	const cbb_prefixes_t *p = &cfg->allow[st][dst];
	char shown[120], list[200];
	size_t i, o = 0;

	list[0] = '\0';
	for (i = 0; i < p->n && o + 4 < sizeof(list); i++) {
		int w = snprintf(list + o, sizeof(list) - o, "%s%s",
				 i ? "," : "", p->v[i]);

		if (w < 0 || (size_t)w >= sizeof(list) - o)
			break;
		o += (size_t)w;
	}
	return cbb_err(err, "%s %s is outside the allowed directories "
		       "(%s=%s)", dst ? "destination" : "source",
		       cbb_show(shown, sizeof(shown), path, strlen(path)),
		       key[st][dst], list);
}

/* Whether path is in the site's allow-list for it (the common case,
 * without the error's formatting). */
int cbb_directive_path_allowed(const cbb_config_t *cfg, cbb_stage_t st, int dst,
			       const char *path, cbb_err_t *err)
{
	const cbb_prefixes_t *p = &cfg->allow[st][dst];

	if (p->n == 0 || allowed(p, path)) /* an empty list allows all */
		return 0;
	return not_allowed(cfg, st, dst, path, err);
}

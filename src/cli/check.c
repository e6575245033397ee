/*
 * check.c - `conduit-bb`, the command-line companion of conduit_bb.so.
 *
 *   conduit-bb check SCRIPT [--job-id N] [--array-task N] [--user NAME]
 *                    [--uid N] [--workdir DIR] [--name NAME]
 *                    [--config FILE] [--json]
 *
 * Runs the same parser as job_process and prints what the plugin would
 * do per directive, the warnings, or the exact error sbatch would show.
 * Exit status: 0 accepted, 1 rejected, 2 usage or I/O problem.
 */
#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "directive.h"
#include "directive_json.h"
#include "netreq.h"
#include "readfile.h"

#ifndef CBB_VERSION
#define CBB_VERSION "0.0.0"
#endif

#define SCRIPT_MAX ((size_t)64 << 20)

typedef struct {
	const char *script;
	const char *config;
	bool json;
	bool job_id_given;
	cbb_job_t job;
	char cwd[4096];
	char user[256];
} opts_t;

typedef struct {
	char **v;
	size_t n;
} list_t;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: conduit-bb check SCRIPT [--job-id N] [--array-task N]\n"
		"                        [--user NAME] [--uid N] [--workdir DIR]\n"
		"                        [--name NAME] [--config FILE] [--json]\n"
		"       conduit-bb network 'conduit:pool=NAME+gpus=N+vram=SIZE' [--prefix P]\n"
		"       conduit-bb version\n"
		"\n"
		"check parses the #CONDUIT directives of a batch script the way\n"
		"the Slurm plugin will at submission, and prints the transfers,\n"
		"warnings, or every error (sbatch names the first).\n"
		"network checks the session request in an --network value.\n");
}

static int list_add(list_t *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int list_add(list_t *l, const char *fmt, ...)
{
	char buf[1024], **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	l->v = v;
	v[l->n] = strdup(buf);
	if (!v[l->n])
		return -1;
	l->n++;
	return 0;
}

static void list_free(list_t *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v > 4294967294UL)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
	struct passwd *pw;
	const char *slash;
	int i;

	memset(o, 0, sizeof(*o));
	o->job.array_task_id = CBB_NO_VAL;
	o->job.user_id = (uint32_t)getuid();
	for (i = 2; i < argc; i++) {
		static const char *const with_value[] = {
			"--job-id", "--array-task", "--uid", "--user",
			"--workdir", "--name", "--config", NULL,
		};
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = false;
		int k;

		for (k = 0; with_value[k]; k++)
			takes |= !strcmp(a, with_value[k]);
		if (takes && !v) {
			fprintf(stderr, "conduit-bb: %s needs a value\n", a);
			return -1;
		}
		if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--job-id")) {
			if (parse_u32(v, &o->job.job_id) < 0)
				goto bad;
			o->job_id_given = true;
			i++;
		} else if (!strcmp(a, "--array-task")) {
			if (parse_u32(v, &o->job.array_task_id) < 0)
				goto bad;
			i++;
		} else if (!strcmp(a, "--uid")) {
			if (parse_u32(v, &o->job.user_id) < 0)
				goto bad;
			i++;
		} else if (!strcmp(a, "--user")) {
			o->job.user_name = v;
			i++;
		} else if (!strcmp(a, "--workdir")) {
			o->job.work_dir = v;
			i++;
		} else if (!strcmp(a, "--name")) {
			o->job.name = v;
			i++;
		} else if (!strcmp(a, "--config")) {
			o->config = v;
			i++;
		} else if (a[0] == '-') {
			fprintf(stderr, "conduit-bb: unknown option %s\n", a);
			return -1;
		} else if (!o->script) {
			o->script = a;
		} else {
			fprintf(stderr, "conduit-bb: only one SCRIPT may be "
				"given\n");
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "conduit-bb: %s: '%s' is not a valid number\n",
			a, v);
		return -1;
	}
	if (!o->script) {
		usage(stderr);
		return -1;
	}
	if (o->job.array_task_id != CBB_NO_VAL)
		o->job.array_job_id = o->job.job_id;
	if (!o->job.work_dir && getcwd(o->cwd, sizeof(o->cwd)))
		o->job.work_dir = o->cwd;
	if (!o->job.user_name && (pw = getpwuid(o->job.user_id))) {
		snprintf(o->user, sizeof(o->user), "%s", pw->pw_name);
		o->job.user_name = o->user;
	}
	if (!o->job.name) {
		slash = strrchr(o->script, '/');
		o->job.name = slash ? slash + 1 : o->script;
	}
	return 0;
}

static void collect_warnings(const opts_t *o, const cbb_config_t *cfg,
			     const cbb_plan_t *p, list_t *w)
{
	unsigned used = 0;
	size_t i;

	for (i = 0; i < p->nlate; i++)
		list_add(w, "line %u: a #%s directive after the first command "
			 "(line %u) is ignored by Slurm; move it above line %u",
			 p->late[i], cfg->directive, p->first_command,
			 p->first_command);
	if (p->slurm_words_line)
		list_add(w, "line %u: Slurm reads 'capacity=' and 'pool=' in "
			 "directive lines itself (capacity= without pool= "
			 "makes sbatch fail); avoid them in paths",
			 p->slurm_words_line);
	for (i = 0; i < p->n; i++)
		used |= p->v[i].symbols;
	if ((used & (CBB_SYM_A | CBB_SYM_a | CBB_SYM_b)) &&
	    o->job.array_task_id == CBB_NO_VAL)
		list_add(w, "%%A, %%a and %%b expand to %u, %u and %u for a "
			 "job that is not an array task (try --array-task N)",
			 o->job.array_job_id, o->job.array_task_id,
			 o->job.array_task_id % 10);
	if ((used & CBB_SYM_j) && !o->job_id_given)
		list_add(w, "%%j expanded with job id 0 (pass --job-id N to see "
			 "real paths)");
	if (used & CBB_SYM_d)
		list_add(w, "%%d expanded to %s", o->job.work_dir ?
			 o->job.work_dir : "");
	if (used & CBB_SYM_u)
		list_add(w, "%%u expanded to %s", o->job.user_name ?
			 o->job.user_name : "(uid lookup)");
	if (used & CBB_SYM_x)
		list_add(w, "%%x expanded to %s", o->job.name);
}

/* Paths print as the shell would need them typed. */
static void put_path(const char *p)
{
	const char *c;

	if (p[strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		     "0123456789_./+-,:@%=")] == '\0') {
		fputs(p, stdout);
		return;
	}
	putchar('\'');
	for (c = p; *c; c++) {
		if (*c == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*c);
	}
	putchar('\'');
}

/* What an array's tasks share: a stage-in without per-task symbols. */
static void print_text(const char *script, const cbb_plan_t *p,
		       const list_t *w, const list_t *errors, bool array)
{
	size_t i, k, in = 0;

	for (i = 0; i < w->n; i++)
		printf("warning: %s\n", w->v[i]);
	for (i = 0; i < errors->n; i++)
		printf("%s: error: %s\n", script, errors->v[i]);
	if (errors->n > 1)
		printf("%s: %zu errors\n", script, errors->n);
	if (errors->n)
		return;
	for (i = 0; i < p->n; i++)
		in += p->v[i].stage == CBB_STAGE_IN;
	if (p->n == 0) {
		printf("%s: no directives in the leading comment block: "
		       "nothing will be staged\n", script);
		return;
	}
	printf("%s: %zu directive%s: %zu stage-in, %zu stage-out\n", script,
	       p->n, p->n == 1 ? "" : "s", in, p->n - in);
	for (i = 0; i < p->n; i++) {
		const cbb_directive_t *d = &p->v[i];

		printf("line %u: %-9s %s%s%s%s%s ", d->line,
		       d->stage == CBB_STAGE_IN ? "stage-in" : "stage-out",
		       cbb_action_name(d->action), d->recursive ? " -r" : "",
		       d->every_attempt ? " --every-attempt" : "",
		       d->when ? " --when=" : "",
		       d->when ? cbb_when_name(d->when) : "");
		for (k = 0; k < d->nsources; k++) {
			put_path(d->sources[k]);
			putchar(' ');
		}
		fputs("-> ", stdout);
		put_path(d->destination);
		if (array && cbb_directive_shared(d))
			fputs("  (once for the whole array)", stdout);
		putchar('\n');
	}
}

static int print_json(const char *script, const cbb_plan_t *p,
		      const list_t *w, const list_t *errors, bool array)
{
	json_t *root = json_object(), *dirs = json_array(), *warns = json_array();
	json_t *errs = json_array();
	const char *error = errors->n ? errors->v[0] : NULL;
	size_t i;
	int rc;

	if (!root || !dirs || !warns || !errs)
		return -1;
	json_object_set_new(root, "script", json_string(script));
	json_object_set_new(root, "ok", json_boolean(!error));
	json_object_set_new(root, "error", error ? json_string(error) :
						   json_null());
	for (i = 0; i < errors->n; i++)
		json_array_append_new(errs, json_string(errors->v[i]));
	json_object_set_new(root, "errors", errs);
	for (i = 0; !error && i < p->n; i++) {
		json_array_append_new(dirs, cbb_directive_json(&p->v[i],
			CBB_DJSON_PLACE | CBB_DJSON_OPTIONS |
			(array ? CBB_DJSON_SHARED : 0)));
	}
	for (i = 0; i < w->n; i++)
		json_array_append_new(warns, json_string(w->v[i]));
	json_object_set_new(root, "directives", dirs);
	json_object_set_new(root, "warnings", warns);
	rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(root);
	return rc;
}

/* The parser's each_error: every bad directive, in script order. */
static void add_error(void *ud, const char *msg)
{
	list_add(ud, "%s", msg);
}

static int cmd_check(int argc, char **argv)
{
	cbb_config_t cfg;
	cbb_parse_opts_t po = { 0 };
	cbb_plan_t plan;
	cbb_err_t err;
	list_t warns = { NULL, 0 }, errors = { NULL, 0 };
	char *text = NULL;
	size_t len;
	opts_t o;
	int rc;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	cbb_err_clear(&err);
	if (cbb_config_load(&cfg, o.config, &err) < 0 ||
	    cbb_read_file(o.script, SCRIPT_MAX, &text, &len, NULL, &err) < 0) {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
		cbb_config_free(&cfg);
		return 2;
	}
	po.cfg = &cfg;
	po.job = &o.job;
	po.expand = true;
	po.each_error = add_error;
	po.ud = &errors;
	rc = cbb_parse_script(text, len, &po, &plan, &err);
	if (rc < 0 && errors.n == 0) /* a whole-script error, or memory */
		list_add(&errors, "%s", err.msg);
	collect_warnings(&o, &cfg, &plan, &warns);
	if (o.json)
		print_json(o.script, &plan, &warns, &errors,
			   o.job.array_task_id != CBB_NO_VAL);
	else
		print_text(o.script, &plan, &warns, &errors,
			   o.job.array_task_id != CBB_NO_VAL);
	list_free(&warns);
	list_free(&errors);
	cbb_plan_free(&plan);
	cbb_config_free(&cfg);
	free(text);
	return rc < 0 ? 1 : 0;
}

/* conduit-bb network VALUE [--prefix P]: check a --network request. */
static int cmd_network(int argc, char **argv)
{
	const char *value = NULL, *prefix = "conduit";
	cbb_netreq_t r;
	cbb_err_t err;
	char words[256];
	int i;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
			prefix = argv[++i];
		else if (!value && argv[i][0] != '-')
			value = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!value) {
		usage(stderr);
		return 2;
	}
	cbb_err_clear(&err);
	if (cbb_netreq_parse(value, prefix, &r, &err) < 0) {
		printf("error: %s\n", err.msg);
		return 1;
	}
	if (!r.present) {
		printf("no '%s:' segment: conduit_bb will not set up a session "
		       "for this job\n", prefix);
		return 0;
	}
	printf("%s: pool=%s gpus=%u", prefix, r.pool[0] ? r.pool : "(none)",
	       r.gpus);
	if (r.vram_mib)
		printf(" vram=%llu MiB per GPU", (unsigned long long)r.vram_mib);
	putchar('\n');
	if (r.directives) {
		cbb_netreq_directives(r.directives, words, sizeof(words));
		printf("test directives: %s (acted on only where "
		       "AllowTestDirectives=yes)\n", words);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		cbb_admin_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("conduit-bb %s\n", CBB_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc, argv);
	if (!strcmp(argv[1], "network"))
		return cmd_network(argc, argv);
	if (!strcmp(argv[1], "doctor"))
		return cbb_cmd_doctor(argc, argv);
	if (!strcmp(argv[1], "status"))
		return cbb_cmd_status(argc, argv);
	if (!strcmp(argv[1], "metrics"))
		return cbb_cmd_metrics(argc, argv);
	if (!strcmp(argv[1], "recover"))
		return cbb_cmd_recover(argc, argv);
	fprintf(stderr, "conduit-bb: unknown command '%s'\n", argv[1]);
	usage(stderr);
	cbb_admin_usage(stderr);
	return 2;
}

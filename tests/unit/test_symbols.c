/* test_symbols.c - Slurm's % symbol replacement. */
#include "cmocka_all.h"

#include <unistd.h>
#include <pwd.h>

#include "config.h"
#include "directive.h"
#include "symbols.h"

static const cbb_job_t job = {
	.job_id = 123, .array_job_id = 120, .array_task_id = 37,
	.user_id = 1000, .user_name = "alice", .work_dir = "/home/alice",
	.name = "sim",
};

static void expect(const char *in, const char *out, bool stop_in,
		   bool stop_out)
{
	cbb_buf_t b;
	cbb_err_t err;
	bool stopped = stop_in;
	unsigned used = 0;

	cbb_buf_init(&b, 0);
	cbb_err_clear(&err);
	if (cbb_symbols_expand(in, strlen(in), &job, &stopped, &used, &b,
			       &err) < 0)
		fail_msg("<%s>: %s", in, err.msg);
	cbb_buf_adds(&b, "");
	if (strcmp(b.data, out) || stopped != stop_out)
		fail_msg("<%s>: want <%s> stop=%d, got <%s> stop=%d", in, out,
			 stop_out, b.data, stopped);
	cbb_buf_free(&b);
}

static void expect_error(const char *in, const char *msg)
{
	cbb_buf_t b;
	cbb_err_t err;
	bool stopped = false;
	unsigned used = 0;

	cbb_buf_init(&b, 0);
	cbb_err_clear(&err);
	assert_int_equal(cbb_symbols_expand(in, strlen(in), &job, &stopped,
					    &used, &b, &err), -1);
	assert_string_equal(err.msg, msg);
	cbb_buf_free(&b);
}

static void test_each_symbol(void **state)
{
	(void)state;
	expect("%%", "%", false, false);
	expect("%A", "120", false, false);
	expect("%a", "37", false, false);
	expect("%b", "7", false, false);
	expect("%d", "/home/alice", false, false);
	expect("%j", "123", false, false);
	expect("%u", "alice", false, false);
	expect("%x", "sim", false, false);
	expect("/o/%u/%j-%a.out", "/o/alice/123-37.out", false, false);
	expect("no symbols", "no symbols", false, false);
	expect("%%j", "%j", false, false);
}

static void test_stop(void **state)
{
	(void)state;
	expect("%j\\\\%j", "123\\\\%j", false, true);
	expect("\\%j", "\\123", false, false); /* one backslash: no stop */
	expect("%j", "%j", true, true);        /* stopped by an earlier line */
	expect("a\\\\", "a\\\\", false, true);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("/a/%q", "unknown symbol '%q' (Slurm knows %% %A %a %b "
		     "%d %j %u %x; write %% for a literal %)");
	expect_error("/a/%", "'%' at the end of the line (write %% for a "
		     "literal %)");
	expect_error("/a/% b", "'%' not followed by a symbol (write %% for a "
		     "literal %)");
}

static void test_user_lookup(void **state)
{
	cbb_job_t j = job;
	struct passwd *pw = getpwuid(getuid());
	cbb_buf_t b;
	cbb_err_t err;
	bool stopped = false;
	unsigned used = 0;

	(void)state;
	assert_non_null(pw);
	j.user_name = NULL;
	j.user_id = (uint32_t)getuid();
	cbb_buf_init(&b, 0);
	cbb_err_clear(&err);
	assert_int_equal(cbb_symbols_expand("%u", 2, &j, &stopped, &used, &b,
					    &err), 0);
	assert_string_equal(b.data, pw->pw_name);
	assert_int_equal(used, CBB_SYM_u);
	cbb_buf_free(&b);

	j.user_id = 4000000000U; /* nobody has this uid */
	cbb_buf_init(&b, 0);
	assert_int_equal(cbb_symbols_expand("%u", 2, &j, &stopped, &used, &b,
					    &err), -1);
	assert_string_equal(err.msg, "cannot expand %u: no user name for "
			    "uid 4000000000");
	cbb_buf_free(&b);
}

/*
 * Which directives the tasks of an array share: `conduit-bb check` reads
 * the user's script expanding it; the stage hooks get Slurm's rewrite of
 * the directive lines and take the symbols from the user's script
 * (cbb_plan_own_script).  Both must say what docs/directives.md says.
 */
static void test_array_shared(void **state)
{
	static const struct {
		const char *line;
		bool shared;
	} lines[] = {
		{ "#CONDUIT_PRE cp /p/x%%a /s/x", true },   /* a literal "%a" */
		{ "#CONDUIT_PRE cp /p/in-%a /s/in-%a", false },
		{ "#CONDUIT_PRE cp /p/j%%j /s/j", true },
		{ "#CONDUIT_PRE cp /p/job-%j /s/job", false },
		{ "#CONDUIT_PRE cp /p/d-%b /s/d", false },
		{ "#CONDUIT_PRE cp /p/b%%b /s/b", true },
		{ "#CONDUIT_PRE cp /p/arr-%A /s/arr-%A", true },
		{ "#CONDUIT_PRE cp /p/u-%u/%%%a /s/u", false }, /* "%%" then %a */
		{ "#CONDUIT_PRE cp --every-attempt /p/e /s/e", false },
		{ "#CONDUIT_POST cp /s/o /p/o", false },
		{ "#CONDUIT_PRE cp \"/p/w\\\\x\" /s/w", true },
		{ "#CONDUIT_PRE cp /p/after-%a /s/after", true }, /* after "\\" */
	};
	const size_t n = sizeof(lines) / sizeof(lines[0]);
	cbb_buf_t own, rw;
	cbb_config_t cfg;
	cbb_parse_opts_t o = { 0 };
	cbb_plan_t checker, hooks;
	cbb_err_t err;
	bool stopped = false;
	unsigned used = 0;
	size_t i;

	(void)state;
	cbb_config_defaults(&cfg);
	cbb_buf_init(&own, 0);
	cbb_buf_init(&rw, 0);
	cbb_buf_adds(&own, "#!/bin/bash\n#SBATCH --array=0-99\n");
	cbb_buf_adds(&rw, "#!/bin/sh\n");
	for (i = 0; i < n; i++) {
		cbb_buf_printf(&own, "%s\n", lines[i].line);
		/* what bb_handle_job_script writes for task 37 */
		cbb_err_clear(&err);
		if (cbb_symbols_expand(lines[i].line, strlen(lines[i].line), &job,
				       &stopped, &used, &rw, &err) < 0)
			fail_msg("%s: %s", lines[i].line, err.msg);
		cbb_buf_adds(&rw, "\n");
	}
	cbb_buf_adds(&own, "./run\n");
	o.cfg = &cfg;
	o.job = &job;

	o.expand = true;
	cbb_err_clear(&err);
	if (cbb_parse_script(own.data, own.len, &o, &checker, &err) < 0)
		fail_msg("user's script: %s", err.msg);
	o.expand = false;
	if (cbb_parse_script(rw.data, rw.len, &o, &hooks, &err) < 0)
		fail_msg("rewritten: %s", err.msg);
	assert_int_equal(checker.n, n);
	assert_int_equal(hooks.n, n);
	assert_int_equal(cbb_plan_own_script(&hooks, own.data, own.len, &o), 0);
	for (i = 0; i < n; i++) {
		if (cbb_directive_shared(&checker.v[i]) != lines[i].shared)
			fail_msg("conduit-bb check: %s: shared=%d", lines[i].line,
				 !lines[i].shared);
		if (hooks.v[i].shared != lines[i].shared)
			fail_msg("stage hooks: %s: shared=%d", lines[i].line,
				 !lines[i].shared);
		assert_int_equal(hooks.v[i].line, checker.v[i].line);
		assert_int_equal(hooks.v[i].line, i + 3);
	}
	cbb_plan_free(&hooks);

	/* the user's script is another one: nothing is shared */
	assert_int_equal(cbb_parse_script(rw.data, rw.len, &o, &hooks, &err), 0);
	assert_int_equal(cbb_plan_own_script(&hooks, "#CONDUIT_PRE cp /a /b\n",
					     22, &o), -1);
	for (i = 0; i < n; i++)
		assert_false(hooks.v[i].shared);

	cbb_plan_free(&hooks);
	cbb_plan_free(&checker);
	cbb_buf_free(&own);
	cbb_buf_free(&rw);
	cbb_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_symbol),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_user_lookup),
		cmocka_unit_test(test_array_shared),
	};
	return cmocka_run_group_tests_name("symbols", tests, NULL, NULL);
}

/* test_symbols.c - Slurm's % symbol replacement. */
#include "cmocka_all.h"

#include <unistd.h>
#include <pwd.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_symbol),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_user_lookup),
	};
	return cmocka_run_group_tests_name("symbols", tests, NULL, NULL);
}

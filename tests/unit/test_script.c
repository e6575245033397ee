/* test_script.c - Slurm-exact scanning of the leading comment block. */
#include "cmocka_all.h"

#include "script.h"

static void scan(const char *text, cbb_script_t *s)
{
	cbb_err_t err;

	cbb_err_clear(&err);
	if (cbb_script_scan(text, strlen(text), "CONDUIT", 100, s, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_lines_and_numbers(void **state)
{
	cbb_script_t s;

	(void)state;
	scan("#!/bin/sh\n\n#SBATCH -N1\n#CONDUIT_PRE cp /a /b\n\n"
	     "#CONDUIT_POST cp /c /d\necho hi\n#CONDUIT_POST cp /e /f\n"
	     "   #CONDUIT_PRE x\n", &s);
	assert_int_equal(s.count, 2);
	assert_int_equal(s.lines[0].lineno, 4);
	assert_string_equal(s.lines[0].text, "#CONDUIT_PRE cp /a /b");
	assert_int_equal(s.lines[1].lineno, 6);
	assert_int_equal(s.first_command, 7);
	assert_int_equal(s.nlate, 2);
	assert_int_equal(s.late[0], 8);
	assert_int_equal(s.late[1], 9);
	cbb_script_free(&s);
}

static void test_continuation(void **state)
{
	cbb_script_t s;

	(void)state;
	/* '\' after a space: the next line's leading blanks are dropped */
	scan("#CONDUIT_PRE cp /a \\\n#CONDUIT    /b\n", &s);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.lines[0].text, "#CONDUIT_PRE cp /a /b");
	cbb_script_free(&s);
	/* '\' glued to a word: the next line is glued on as it is */
	scan("#CONDUIT_PRE cp /a\\\n#CONDUIT  /b\n", &s);
	assert_string_equal(s.lines[0].text, "#CONDUIT_PRE cp /a  /b");
	cbb_script_free(&s);
	/* a non-directive line ends the continuation */
	scan("#CONDUIT_PRE cp /a \\\n#SBATCH -N1\n#CONDUIT_PRE cp /c /d\n", &s);
	assert_int_equal(s.count, 2);
	assert_string_equal(s.lines[0].text, "#CONDUIT_PRE cp /a ");
	assert_int_equal(s.lines[1].lineno, 3);
	cbb_script_free(&s);
	/* empty lines do not (Slurm never sees them) */
	scan("#CONDUIT_PRE cp /a \\\n\n#CONDUIT /b\n", &s);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.lines[0].text, "#CONDUIT_PRE cp /a /b");
	cbb_script_free(&s);
}

static void test_stops(void **state)
{
	cbb_script_t s;

	(void)state;
	scan("#!/bin/sh\r\n\r\n#CONDUIT_PRE cp /a /b\r\n", &s);
	assert_int_equal(s.count, 0); /* "\r" is a command line for Slurm */
	assert_int_equal(s.first_command, 2);
	cbb_script_free(&s);
	scan("#CONDUIT_PRE cp /a /b\0#CONDUIT_PRE cp /c /d\n", &s);
	assert_int_equal(s.count, 1); /* a NUL ends the script, as in Slurm */
	cbb_script_free(&s);
	scan("", &s);
	assert_int_equal(s.count, 0);
	cbb_script_free(&s);
}

static void test_limits(void **state)
{
	cbb_script_t s;
	cbb_err_t err;
	const char *three = "#CONDUIT_PRE a\n#CONDUIT_PRE b\n#CONDUIT_PRE c\n";

	(void)state;
	cbb_err_clear(&err);
	assert_int_equal(cbb_script_scan(three, strlen(three), "CONDUIT", 2, &s,
					 &err), -1);
	assert_string_equal(err.msg, "line 3: more than 2 directives "
			    "(MaxDirectives=2)");
	cbb_script_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_numbers),
		cmocka_unit_test(test_continuation),
		cmocka_unit_test(test_stops),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests_name("script", tests, NULL, NULL);
}

/* test_buf_err.c - the byte buffer and error helpers. */
#include "cmocka_all.h"

#include "buf.h"
#include "err.h"

static void test_buf(void **state)
{
	cbb_buf_t b;
	char *s;
	int i;

	(void)state;
	cbb_buf_init(&b, 16);
	assert_int_equal(cbb_buf_adds(&b, "0123456789"), 0);
	assert_int_equal(cbb_buf_printf(&b, "%d", 12345), 0);
	assert_string_equal(b.data, "012345678912345");
	assert_int_equal(cbb_buf_addc(&b, 'x'), 0);      /* 16: at the cap */
	assert_int_equal(cbb_buf_addc(&b, 'y'), -1);     /* over it */
	assert_int_equal(cbb_buf_printf(&b, "%s", "z"), -1);
	assert_int_equal(b.len, 16);
	s = cbb_buf_steal(&b);
	assert_string_equal(s, "012345678912345x");
	assert_null(b.data);
	free(s);
	cbb_buf_init(&b, 0);
	for (i = 0; i < 10000; i++)
		assert_int_equal(cbb_buf_addc(&b, 'a'), 0);
	assert_int_equal(b.len, 10000);
	cbb_buf_reset(&b);
	assert_int_equal(cbb_buf_addu(&b, 0), 0);
	assert_int_equal(cbb_buf_addc(&b, ' '), 0);
	assert_int_equal(cbb_buf_addu(&b, 4294967295UL), 0);
	assert_string_equal(b.data, "0 4294967295");
	cbb_buf_reset(&b);
	for (i = 0; i < 6; i++) {
		static const unsigned long v[] = { 7, 10, 99, 100, 12345, 1000001 };

		assert_int_equal(cbb_buf_addu(&b, v[i]), 0);
		assert_int_equal(cbb_buf_addc(&b, ' '), 0);
	}
	assert_string_equal(b.data, "7 10 99 100 12345 1000001 ");
	cbb_buf_reset(&b);
	assert_string_equal(b.data, "");
	cbb_buf_free(&b);
	s = cbb_buf_steal(&b); /* empty buffers steal as "" */
	assert_string_equal(s, "");
	free(s);
}

static void test_err(void **state)
{
	cbb_err_t e;
	char big[CBB_ERR_MAX * 2];

	(void)state;
	cbb_err_clear(&e);
	assert_int_equal(cbb_err(&e, "first %d", 1), -1);
	cbb_err(&e, "second");
	assert_string_equal(e.msg, "first 1");
	cbb_err_prefix(&e, "line %u", 7u);
	assert_string_equal(e.msg, "line 7: first 1");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cbb_err_clear(&e);
	cbb_err(&e, "%s", big);
	cbb_err_prefix(&e, "line %u", 9u);
	assert_int_equal(strlen(e.msg), CBB_ERR_MAX - 1);
	assert_memory_equal(e.msg, "line 9: xxx", 11);
}

static void test_show(void **state)
{
	char out[16];

	(void)state;
	assert_string_equal(cbb_show(out, sizeof(out), "a\tb\x7f", 4),
			    "a\\x09b\\x7f");
	assert_string_equal(cbb_show(out, sizeof(out), "0123456789abcdefgh",
				     18), "0123456789ab...");
	assert_string_equal(cbb_show(out, sizeof(out), "\xc3\xa9\xff", 3),
			    "\xc3\xa9\\xff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_err),
		cmocka_unit_test(test_show),
	};
	return cmocka_run_group_tests_name("buf_err", tests, NULL, NULL);
}

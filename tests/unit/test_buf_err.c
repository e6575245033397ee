/* test_buf_err.c - the byte buffer, error helpers and byte counts. */
#include "cmocka_all.h"

#include "buf.h"
#include "bytes.h"
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

/*
 * A secret buffer wipes what it lets go.  free() is interposed (not
 * under ASan, whose own free must stay) to look at every block freed
 * while `watch` is set: none may still hold the secret.
 */
static const char secret_text[] = "tok-5f0c1a2b3c4d5e6f";
static int watch, freed_blocks, freed_with_secret;

#ifndef __SANITIZE_ADDRESS__
#include <malloc.h>
void __libc_free(void *p);
void free(void *p)
{
	if (watch && p) {
		size_t n = malloc_usable_size(p), k = strlen(secret_text);
		const char *c = p;

		freed_blocks++;
		for (; n >= k; c++, n--)
			if (!memcmp(c, secret_text, k)) {
				freed_with_secret++;
				break;
			}
	}
	__libc_free(p);
}
#define CAN_WATCH 1
#else
#define CAN_WATCH 0
#endif

static void test_secret_buf(void **state)
{
	cbb_buf_t b;
	size_t i;
	int grows = 0;

	(void)state;
	/* reset wipes everything, not just the first byte */
	cbb_buf_init(&b, 0);
	cbb_buf_secret(&b);
	assert_int_equal(cbb_buf_adds(&b, secret_text), 0);
	cbb_buf_reset(&b);
	for (i = 0; i < b.cap; i++)
		assert_int_equal(b.data[i], 0);
	/* growing and freeing leave no copy behind */
	watch = 1;
	freed_blocks = freed_with_secret = 0;
	for (i = 0; i < 200; i++) {
		size_t cap = b.cap;

		assert_int_equal(cbb_buf_adds(&b, secret_text), 0);
		grows += b.cap != cap;
	}
	assert_int_equal(b.len, 200 * strlen(secret_text));
	assert_memory_equal(b.data + 199 * strlen(secret_text), secret_text,
			    strlen(secret_text));
	cbb_buf_free(&b);
	watch = 0;
	assert_true(grows >= 5);
	if (CAN_WATCH) {
		/* every grow freed the old block, and the last free its own */
		assert_int_equal(freed_blocks, grows + 1);
		assert_int_equal(freed_with_secret, 0);
	}
	/* an ordinary buffer still grows in place with realloc */
	cbb_buf_init(&b, 0);
	assert_false(b.secret);
	cbb_buf_free(&b);
	/* cbb_wipe */
	{
		char k[32];

		memset(k, 'k', sizeof(k));
		cbb_wipe(k, sizeof(k));
		for (i = 0; i < sizeof(k); i++)
			assert_int_equal(k[i], 0);
		cbb_wipe(NULL, 0);
	}
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

/* Sizes and rates as the real Conduit server wrote them (rsync FTA):
 * bytes with a unit, rates with "/s", fractions, grouping. */
static void test_sizes(void **state)
{
	static const struct {
		const char *in;
		bool ok;
		uint64_t want;
	} cases[] = {
		{ "1073741824B", true, 1073741824ULL },
		{ "49953679.91B", true, 49953680ULL },
		{ "49.95MB/s", true, 49950000ULL },
		{ "1,024.00kB/s", true, 1024000ULL },
		{ "512.00B/s", true, 512ULL },
		{ "1.5 GB", true, 1500000000ULL },
		{ "2KiB", true, 2048ULL },
		{ "3 MiB", true, 3145728ULL },
		{ "1.07G", true, 1070000000ULL },
		{ "7", true, 7ULL },
		{ "  42B\n", true, 42ULL },
		{ "0", true, 0ULL },
		{ "1,073,741,824", true, 1073741824ULL },
		{ "20000000EB", true, UINT64_MAX },
		{ "", false, 0 },
		{ "B", false, 0 },
		{ "-5B", false, 0 },
		{ "1.2.3B", false, 0 },
		{ ",5", false, 0 },
		{ "12 apples", false, 0 },
		{ "5MB/min", false, 0 },
		{ "nan", false, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 99;
		bool ok = cbb_parse_size(cases[i].in, &v);

		if (ok != cases[i].ok || v != cases[i].want)
			fail_msg("\"%s\": want %d %llu, got %d %llu", cases[i].in,
				 cases[i].ok, (unsigned long long)cases[i].want,
				 ok, (unsigned long long)v);
	}
	{
		uint64_t v = 1;

		assert_false(cbb_parse_size(NULL, &v));
		assert_int_equal(v, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_secret_buf),
		cmocka_unit_test(test_err),
		cmocka_unit_test(test_show),
		cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests_name("buf_err", tests, NULL, NULL);
}

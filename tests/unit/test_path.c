/* test_path.c - lexical path resolution and comparisons. */
#include "cmocka_all.h"

#include "path.h"
#include "utf8.h"

static const struct {
	const char *base, *in;
	bool keep;
	const char *out; /* NULL: error */
} cases[] = {
	{ NULL, "/a/b", false, "/a/b" },
	{ NULL, "/a//b///c", false, "/a/b/c" },
	{ NULL, "/a/./b/.", false, "/a/b" },
	{ NULL, "/a/b/../c", false, "/a/c" },
	{ NULL, "/../../x", false, "/x" },
	{ NULL, "/", false, "/" },
	{ NULL, "/", true, "/" },
	{ NULL, "//", true, "/" },
	{ NULL, "/a/b/", false, "/a/b" },
	{ NULL, "/a/b/", true, "/a/b/" },
	{ NULL, "/a/b/..", true, "/a" },
	{ NULL, "/a/b/../", true, "/a/" },
	{ "/home/u", "d", false, "/home/u/d" },
	{ "/home/u/", "./d/", true, "/home/u/d/" },
	{ "/home/u", "../../../..", false, "/" },
	{ "/home/u", "..x/y", false, "/home/u/..x/y" },
	{ "/home/u", "...", false, "/home/u/..." },
	{ NULL, "rel", false, NULL },
	{ "relative/base", "rel", false, NULL },
	{ "/b", "", false, NULL },
};

static void test_resolve(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cbb_err_t err;
		char *got;

		cbb_err_clear(&err);
		got = cbb_path_resolve(cases[i].base, cases[i].in, cases[i].keep,
				       &err);
		if (!cases[i].out) {
			if (got)
				fail_msg("case %zu: want error, got %s", i, got);
			assert_true(err.set);
			continue;
		}
		if (!got)
			fail_msg("case %zu: %s", i, err.msg);
		if (strcmp(got, cases[i].out))
			fail_msg("case %zu (%s): want %s, got %s", i,
				 cases[i].in, cases[i].out, got);
		free(got);
	}
}

static void test_length_limit(void **state)
{
	char *p = malloc(CBB_PATH_MAX + 2), *got;
	cbb_err_t err;

	(void)state;
	memset(p, 'a', CBB_PATH_MAX + 1);
	p[0] = '/';
	p[CBB_PATH_MAX - 1] = '\0'; /* 4095 bytes: allowed */
	cbb_err_clear(&err);
	got = cbb_path_resolve(NULL, p, false, &err);
	assert_non_null(got);
	free(got);
	p[CBB_PATH_MAX - 1] = 'a';
	p[CBB_PATH_MAX] = '\0'; /* 4096 bytes: too long */
	got = cbb_path_resolve(NULL, p, false, &err);
	assert_null(got);
	assert_string_equal(err.msg, "path longer than 4095 bytes");
	/* a long path that cleans down to a short one is fine */
	memset(p, '/', CBB_PATH_MAX);
	p[CBB_PATH_MAX] = '\0';
	cbb_err_clear(&err);
	got = cbb_path_resolve(NULL, p, false, &err);
	assert_string_equal(got, "/");
	free(got);
	free(p);
}

static void test_within_same(void **state)
{
	(void)state;
	assert_true(cbb_path_within("/a/b", "/a"));
	assert_true(cbb_path_within("/a", "/a"));
	assert_true(cbb_path_within("/a/", "/a"));
	assert_true(cbb_path_within("/a/b", "/a/"));
	assert_true(cbb_path_within("/anything", "/"));
	assert_false(cbb_path_within("/ab", "/a"));
	assert_false(cbb_path_within("/a", "/a/b"));
	assert_true(cbb_path_same("/a/b", "/a/b/"));
	assert_true(cbb_path_same("/", "/"));
	assert_false(cbb_path_same("/a/b", "/a/bc"));
}

static void test_utf8(void **state)
{
	(void)state;
	assert_true(cbb_utf8_valid("plain", 5));
	assert_true(cbb_utf8_valid("caf\xc3\xa9", 5));
	assert_true(cbb_utf8_valid("\xe2\x82\xac", 3));
	assert_true(cbb_utf8_valid("\xf0\x9f\x98\x80", 4));
	assert_false(cbb_utf8_valid("\xff", 1));
	assert_false(cbb_utf8_valid("\xc3", 1));          /* truncated */
	assert_false(cbb_utf8_valid("\xc0\xaf", 2));      /* overlong */
	assert_false(cbb_utf8_valid("\xed\xa0\x80", 3));  /* surrogate */
	assert_false(cbb_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
}

/*
 * The fast paths look at eight bytes at a time: a "//", "/." or control
 * byte, or a non-ASCII byte must be seen at every offset, across word
 * boundaries, and a clean path must pass unchanged.
 */
static void test_every_offset(void **state)
{
	static const struct {
		const char *mid, *want;
	} k[] = {
		{ "//b", "/b" }, { "/./b", "/b" }, { "/../b", "" },
		{ "/.b", "/.b" }, { "/b.", "/b." }, { "/b", "/b" },
	};
	char in[64], want[64];
	size_t n, j;

	(void)state;
	for (n = 0; n < 24; n++) {
		for (j = 0; j < sizeof(k) / sizeof(k[0]); j++) {
			cbb_err_t err;
			char *got;

			snprintf(in, sizeof(in), "/x%.*s%s", (int)n,
				 "aaaaaaaaaaaaaaaaaaaaaaaa", k[j].mid);
			if (k[j].want[0])
				snprintf(want, sizeof(want), "/x%.*s%s", (int)n,
					 "aaaaaaaaaaaaaaaaaaaaaaaa", k[j].want);
			else
				snprintf(want, sizeof(want), "/b");
			cbb_err_clear(&err);
			got = cbb_path_resolve(NULL, in, false, &err);
			assert_non_null(got);
			if (strcmp(got, want))
				fail_msg("%s: want %s, got %s", in, want, got);
			free(got);
		}
		memset(in, 'a', sizeof(in));
		in[n] = '\xc3'; /* a lone lead byte at offset n */
		assert_false(cbb_utf8_valid(in, 30));
		in[n] = '\x1f';
		assert_true(cbb_has_control(in, 30));
		in[n] = '\x7f';
		assert_true(cbb_has_control(in, 30));
		in[n] = '~';
		assert_false(cbb_has_control(in, 30));
		assert_true(cbb_utf8_valid(in, 30));
	}
	in[0] = '\x80' + 0x20; /* high bytes are not control bytes */
	assert_false(cbb_has_control(in, 30));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_length_limit),
		cmocka_unit_test(test_within_same),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_every_offset),
	};
	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}

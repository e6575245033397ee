/* test_words.c - the directive tokenizer. */
#include "cmocka_all.h"

#include "words.h"

static const struct {
	const char *in;
	const char *out; /* words joined by '|', or "!error text" */
} cases[] = {
	{ "cp /a /b", "cp|/a|/b" },
	{ "  cp\t/a  /b  ", "cp|/a|/b" },
	{ "", "" },
	{ "# only a comment", "" },
	{ "cp /a # trailing comment", "cp|/a" },
	{ "cp /a#b", "cp|/a#b" },
	{ "cp 'a b' \"c d\"", "cp|a b|c d" },
	{ "cp 'it'\"'\"'s'", "cp|it's" },
	{ "cp \"a\\\"b\" \"c\\\\d\" \"e\\f\"", "cp|a\"b|c\\d|e\\f" },
	{ "cp \"\\$x\" \"\\`y\"", "cp|$x|`y" },
	{ "cp a\\ b \\'c", "cp|a b|'c" },
	{ "cp ''", "cp|" },
	{ "cp x'y'\"z\"", "cp|xyz" },
	{ "cp a~b", "cp|a~b" },
	{ "cp '~/x' '$HOME' '*' '[a]' '{b}' ';' '<'", "cp|~/x|$HOME|*|[a]|{b}|;|<" },
	{ "cp 'unterminated", "!unterminated single quote" },
	{ "cp \"unterminated", "!unterminated double quote" },
	{ "cp \"$HOME\"", "!'$' inside double quotes is not expanded (use single quotes if it is literal)" },
	{ "cp \"`id`\"", "!'`' inside double quotes is not expanded (use single quotes if it is literal)" },
	{ "cp $HOME", "!unquoted '$' is not expanded (quote it if it is literal)" },
	{ "cp a*", "!unquoted '*' is not expanded: wildcards are not supported (quote it if it is literal)" },
	{ "cp ~/x", "!unquoted '~' is not expanded: write the full path" },
	{ "cp a>b", "!unquoted '>' is a shell operator and is not allowed here (quote it if it is literal)" },
	{ "cp a\\", "!backslash at the end of the line (Slurm joins lines only when '\\' is the last byte of a line with LF endings)" },
	{ "cp a\x01", "!control character 0x01 is not allowed" },
	{ "cp 'a\x02'", "!control character 0x02 is not allowed" },
	{ "cp \"a\x7f\"", "!control character 0x7f is not allowed" },
	{ "cp a\\\x03", "!control character 0x03 is not allowed" },
	{ "cp a\rb", "!control character 0x0d is not allowed" },
};

static void test_table(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cbb_words_t w;
		cbb_err_t err;
		char joined[512] = "";
		int rc;

		cbb_err_clear(&err);
		rc = cbb_words_split(cases[i].in, strlen(cases[i].in), &w, &err);
		if (cases[i].out[0] == '!') {
			if (rc != -1 || strcmp(err.msg, cases[i].out + 1))
				fail_msg("case %zu <%s>: want error <%s>, got "
					 "rc=%d <%s>", i, cases[i].in,
					 cases[i].out + 1, rc, err.msg);
			assert_null(w.v);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu <%s>: %s", i, cases[i].in, err.msg);
		for (k = 0; k < w.n; k++) {
			if (k)
				strcat(joined, "|");
			strcat(joined, w.v[k]);
			if (w.len[k] != strlen(w.v[k]))
				fail_msg("case %zu <%s>: word %zu has length "
					 "%zu, recorded %zu", i, cases[i].in, k,
					 strlen(w.v[k]), w.len[k]);
		}
		if (strcmp(joined, cases[i].out))
			fail_msg("case %zu <%s>: want <%s>, got <%s>", i,
				 cases[i].in, cases[i].out, joined);
		cbb_words_free(&w);
	}
}

/*
 * A backslash and a NUL inside double quotes: the NUL is a control byte
 * (strchr() also finds the terminator, so it must not be asked about 0).
 */
static void test_dquote_backslash_nul(void **state)
{
	static const char in[] = { '"', '\\', '\0', '"' };
	cbb_words_t w;
	cbb_err_t err;

	(void)state;
	cbb_err_clear(&err);
	assert_int_equal(cbb_words_split(in, sizeof(in), &w, &err), -1);
	assert_string_equal(err.msg, "control character 0x00 is not allowed");
	assert_null(w.v);
}

static void test_word_limit(void **state)
{
	char *s = malloc(CBB_WORDS_MAX * 2 + 8);
	cbb_words_t w;
	cbb_err_t err;
	size_t i;

	(void)state;
	for (i = 0; i < CBB_WORDS_MAX + 1; i++) {
		s[2 * i] = 'a';
		s[2 * i + 1] = ' ';
	}
	cbb_err_clear(&err);
	assert_int_equal(cbb_words_split(s, 2 * (CBB_WORDS_MAX + 1), &w, &err),
			 -1);
	assert_string_equal(err.msg, "more than 1024 words");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_dquote_backslash_nul),
		cmocka_unit_test(test_word_limit),
	};
	return cmocka_run_group_tests_name("words", tests, NULL, NULL);
}

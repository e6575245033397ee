/* test_netreq.c - the --network session request. */
#include "cmocka_all.h"

#include "netreq.h"

static const struct {
	const char *in;
	const char *want; /* "pool gpus vram directives", or "!error" */
} cases[] = {
	{ "conduit:pool=a100+gpus=2+vram=8G", "a100 2 8192 -" },
	{ "other:x=1,conduit:pool=a100+gpus=1,more:y", "a100 1 0 -" },
	{ "conduit:pool=mi250.x-1", "mi250.x-1 0 0 -" },
	{ "conduit:pool=a+vram=512m", "a 1 512 -" },
	{ "conduit:skip+noenv", "- 0 0 skip+noenv" },
	{ "conduit:pool=p+gpus=64+postfini_drain", "p 64 0 postfini_drain" },
	{ "slingshot:depth=2", "absent" },
	{ "", "absent" },
	{ "conduitx:pool=a", "absent" },
	{ "conduit:pool=a,conduit:pool=b", "!--network: 'conduit:' given twice" },
	{ "conduit:", "!--network: nothing after 'conduit:'" },
	{ "conduit:pool=a+", "!--network: 'conduit:' ends with '+'" },
	{ "conduit:pool=a++gpus=1", "!--network: empty item in 'conduit:'" },
	{ "conduit:gpus=2", "!--network conduit: gpus= needs pool=" },
	{ "conduit:pool=a+gpus=0", "!--network conduit: gpus must be a whole number from 1 to 64, not '0'" },
	{ "conduit:pool=a+gpus=65", "!--network conduit: gpus must be a whole number from 1 to 64, not '65'" },
	{ "conduit:pool=a+gpus=2x", "!--network conduit: gpus must be a whole number from 1 to 64, not '2x'" },
	{ "conduit:pool=a+vram=8", "!--network conduit: vram must be a size with a unit, e.g. vram=8G or vram=512M (at most 1T), not '8'" },
	{ "conduit:pool=a+vram=2T", "!--network conduit: vram must be a size with a unit, e.g. vram=8G or vram=512M (at most 1T), not '2T'" },
	{ "conduit:pool=a/b", "!--network conduit: pool name 'a/b' may hold only letters, digits, '_', '.' and '-'" },
	{ "conduit:pool=a+pool=b", "!--network conduit: pool given twice" },
	{ "conduit:user=root", "!--network conduit: unknown key 'user' (expected pool=, gpus= or vram=)" },
	{ "conduit:sudo", "!--network conduit: unknown word 'sudo' (expected pool=, gpus= or vram=)" },
};

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cbb_netreq_t r;
		cbb_err_t err;
		char got[1100], words[128];
		int rc;

		cbb_err_clear(&err);
		rc = cbb_netreq_parse(cases[i].in, "conduit", &r, &err);
		if (rc < 0)
			snprintf(got, sizeof(got), "!%s", err.msg);
		else if (!r.present)
			snprintf(got, sizeof(got), "absent");
		else {
			cbb_netreq_directives(r.directives, words, sizeof(words));
			snprintf(got, sizeof(got), "%s %u %llu %s",
				 r.pool[0] ? r.pool : "-", r.gpus,
				 (unsigned long long)r.vram_mib,
				 words[0] ? words : "-");
		}
		if (strcmp(got, cases[i].want))
			fail_msg("<%s>: want <%s>, got <%s>", cases[i].in,
				 cases[i].want, got);
	}
}

static void test_null_and_prefix(void **state)
{
	cbb_netreq_t r;
	cbb_err_t err;

	(void)state;
	cbb_err_clear(&err);
	assert_int_equal(cbb_netreq_parse(NULL, "conduit", &r, &err), 0);
	assert_false(r.present);
	assert_int_equal(cbb_netreq_parse("gpu:pool=x", "gpu", &r, &err), 0);
	assert_true(r.present);
	assert_string_equal(r.pool, "x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_null_and_prefix),
	};
	return cmocka_run_group_tests_name("netreq", tests, NULL, NULL);
}

/*
 * test_switch.c - whole job lifecycles through the emulated switch/lua
 * host (host.c), with lua/switch.lua loading conduit_bb.so.
 *   test_switch MODULE_DIR
 */
#include "../unit/cmocka_all.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

static char dir[] = "/tmp/cbb-switch-XXXXXX";
static char conf[300], keyfile[300], otherkey[300], cpath[1024];
static const char *module_dir;

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void set_conf(const char *extra)
{
	char text[2048];

	snprintf(text, sizeof(text), "SessionKeyFile=%s\nSwitchEndpoint=fabric.example.org:8080\n"
		 "SwitchVlans=101,102\n%s", keyfile, extra);
	write_file(conf, text, 0644);
}

static void new_host(host_t *h)
{
	memset(h, 0, sizeof(*h));
	h->script = "lua/switch.lua";
	h->cpath = cpath;
	h->timeout_ms = 5000;
	h->retries = 2;
	assert_int_equal(host_load(h), 0);
}

static host_job_t job(long id, const char *network)
{
	host_job_t j;

	memset(&j, 0, sizeof(j));
	j.job_id = id;
	j.user_name = "alice";
	j.nodes = "node[1-2]";
	j.num_nodes = 2;
	j.partition = "gpu";
	j.network = network;
	return j;
}

static bool env_has(const step_result_t *r, const char *line)
{
	char want[512];
	const char *p;

	snprintf(want, sizeof(want), "%s\n", line);
	for (p = strstr(r->env, want); p; p = strstr(p + 1, want))
		if (p == r->env || p[-1] == '\n')
			return true;
	return false;
}

static void test_accept_and_release(void **state)
{
	host_t h;
	host_job_t j = job(101, "slingshot:depth=2,conduit:pool=a100+gpus=2+vram=8G");
	step_result_t r;

	(void)state;
	set_conf("");
	new_host(&h);
	assert_false(h.block_job_complete);
	assert_false(h.special_steps);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	host_step(&h, &j, "PATH=/bin\nCONDUIT_SESSION_TOKEN=leaked\n", &r);
	assert_false(r.failed);
	assert_false(r.drain);
	assert_true(env_has(&r, "CONDUIT_SESSION_ID=static-emulated-101"));
	assert_true(env_has(&r, "CONDUIT_SESSION_POOL=a100"));
	assert_true(env_has(&r, "CONDUIT_SESSION_GPUS=2"));
	assert_true(env_has(&r, "CONDUIT_SESSION_VRAM_MIB=8192"));
	assert_true(env_has(&r, "CONDUIT_SESSION_ENDPOINT=fabric.example.org:8080"));
	assert_true(env_has(&r, "CONDUIT_SESSION_VLANS=101,102"));
	assert_true(env_has(&r, "PATH=/bin"));
	assert_null(strstr(r.env, "CONDUIT_SESSION_TOKEN")); /* false unsets */
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
}

static void test_decline(void **state)
{
	host_t h;
	host_job_t j = job(102, "slingshot:depth=2");
	step_result_t r;

	(void)state;
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_DECLINED);
	host_step(&h, &j, "", &r);
	assert_string_equal(r.env, ""); /* no step hook ran */
	assert_non_null(strstr(h.log, "not managed"));
}

static void test_repeat_start_is_stable(void **state)
{
	host_t h;
	host_job_t a = job(103, "conduit:pool=t4"), b = job(103, "conduit:pool=t4");

	(void)state;
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &a), START_ACCEPTED);
	assert_int_equal(host_job_start(&h, &b), START_ACCEPTED); /* restart */
	assert_int_equal(a.packed_len, b.packed_len);
	assert_memory_equal(a.packed, b.packed, a.packed_len);
}

static void test_tampered_and_foreign(void **state)
{
	host_t h;
	host_job_t j = job(104, "conduit:pool=a100+gpus=1");
	step_result_t r;
	char *p;

	(void)state;
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	/* change the pool inside the stored jobinfo */
	p = memmem(j.packed, j.packed_len, "a100", 4);
	assert_non_null(p);
	memcpy(p, "h100", 4);
	host_step(&h, &j, "", &r);
	assert_true(r.failed);
	assert_non_null(strstr(h.log, "refusing the stepinfo of job 104: its signature does not match"));

	/* a jobinfo made under another site's key */
	j = job(105, "conduit:pool=a100");
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	set_conf("");
	{
		char text[600];

		snprintf(text, sizeof(text), "SessionKeyFile=%s\n", otherkey);
		write_file(conf, text, 0644);
	}
	host_step(&h, &j, "", &r);
	assert_true(r.failed);
	assert_false(r.drain); /* postfini logs, does not drain */
}

static void test_key_file_rules(void **state)
{
	host_t h;
	host_job_t j = job(106, "conduit:pool=a");
	char text[600];

	(void)state;
	write_file(conf, "SwitchVlans=5\n", 0644); /* no SessionKeyFile */
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "SessionKeyFile is not set"));
	chmod(keyfile, 0644);
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "must not be readable by group or others"));
	chmod(keyfile, 0600);
	snprintf(text, sizeof(text), "%s", "");
	(void)text;
}

static void test_bad_request_fails_setup(void **state)
{
	host_t h;
	host_job_t j = job(107, "conduit:pool=a100+gpus=500");

	(void)state;
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "gpus must be a whole number from 1 to 64"));
	assert_int_equal(j.complete_calls, 0); /* failed setups are not torn down */
}

static void test_directives_off_by_default(void **state)
{
	host_t h;
	host_job_t j = job(108, "conduit:pool=a+defer+preinit_fail+postfini_drain");
	step_result_t r;

	(void)state;
	set_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	host_step(&h, &j, "", &r);
	assert_false(r.failed);
	assert_false(r.drain);
}

static void test_ctld_directives(void **state)
{
	host_t h;
	host_job_t j;

	(void)state;
	set_conf("AllowTestDirectives=yes\n");
	new_host(&h);
	j = job(110, "conduit:skip");
	assert_int_equal(host_job_start(&h, &j), START_DECLINED);
	j = job(111, "conduit:pool=a+defer");
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	j = job(112, "conduit:pool=a+start_crash");
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "start_crash test directive"));
	j = job(113, "conduit:pool=a+complete_crash");
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_DRAINED);
	/* EAGAIN without block_job_complete is a failure at once */
	j = job(114, "conduit:pool=a+complete_again");
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_DRAINED);
	assert_int_equal(j.complete_calls, 1);
	/* with it, retried switch_retries times, then drained */
	set_conf("AllowTestDirectives=yes\nSwitchBlockJobComplete=yes\n");
	new_host(&h);
	assert_true(h.block_job_complete);
	j = job(115, "conduit:pool=a+complete_again");
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_DRAINED);
	assert_int_equal(j.complete_calls, 3);
}

static void test_step_directives(void **state)
{
	static const struct {
		const char *net;
		bool failed, drain;
		const char *log;
	} cases[] = {
		{ "conduit:pool=a+preinit_warn", false, false, "slurm_switch_step_preinit returned 1" },
		{ "conduit:pool=a+preinit_fail", true, false, NULL },
		{ "conduit:pool=a+preinit_crash", false, false, "Lua error (step proceeds)" },
		{ "conduit:pool=a+init_warn", false, false, "slurm_switch_step_init returned 1" },
		{ "conduit:pool=a+init_fail", true, false, NULL },
		{ "conduit:pool=a+init_crash", false, false, "init_crash test directive" },
		{ "conduit:pool=a+postfini_warn", false, false, "slurm_switch_step_postfini returned 1" },
		{ "conduit:pool=a+postfini_drain", false, true, NULL },
		{ "conduit:pool=a+postfini_crash", false, false, "postfini_crash test directive" },
	};
	size_t i;

	(void)state;
	set_conf("AllowTestDirectives=yes\n");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		host_t h;
		host_job_t j = job(120 + (long)i, cases[i].net);
		step_result_t r;

		new_host(&h);
		assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
		host_step(&h, &j, "", &r);
		if (r.failed != cases[i].failed || r.drain != cases[i].drain ||
		    (cases[i].log && !strstr(h.log, cases[i].log)))
			fail_msg("%s: failed=%d drain=%d log:\n%s", cases[i].net,
				 r.failed, r.drain, h.log);
	}
	{
		host_t h;
		host_job_t j = job(140, "conduit:pool=a+noenv");
		step_result_t r;

		new_host(&h);
		assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
		host_step(&h, &j, "X=1\n", &r);
		assert_string_equal(r.env, "X=1\n");
	}
}

static void test_abandoned_setup(void **state)
{
	host_t h;
	host_job_t j = job(150, "conduit:pool=a");

	(void)state;
	set_conf("");
	new_host(&h);
	/* job_complete with a nil jobinfo, as after a timed-out setup */
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
}

static void test_host_kills_slow_setup(void **state)
{
	host_t h;
	host_job_t j = job(160, "conduit:pool=a");

	(void)state;
	memset(&h, 0, sizeof(h));
	h.script = "tests/switch/slow_switch.lua";
	h.cpath = cpath;
	h.timeout_ms = 300;
	assert_int_equal(host_load(&h), 0);
	assert_int_equal(host_job_start(&h, &j), START_TIMEOUT);
	assert_int_equal(j.complete_calls, 1); /* torn down with nil jobinfo */
}

static void test_only_defined_globals(void **state)
{
	host_t h;

	(void)state;
	set_conf("");
	new_host(&h); /* loads; the script returns nothing, which is SUCCESS */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_defined_globals),
		cmocka_unit_test(test_accept_and_release),
		cmocka_unit_test(test_decline),
		cmocka_unit_test(test_repeat_start_is_stable),
		cmocka_unit_test(test_tampered_and_foreign),
		cmocka_unit_test(test_key_file_rules),
		cmocka_unit_test(test_bad_request_fails_setup),
		cmocka_unit_test(test_directives_off_by_default),
		cmocka_unit_test(test_ctld_directives),
		cmocka_unit_test(test_step_directives),
		cmocka_unit_test(test_abandoned_setup),
		cmocka_unit_test(test_host_kills_slow_setup),
	};
	int fd, rc;

	module_dir = argc > 1 ? argv[1] : "build/lua5.4";
	snprintf(cpath, sizeof(cpath), "%s/?.so", module_dir);
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/conduit_bb.conf", dir);
	snprintf(keyfile, sizeof(keyfile), "%s/site.key", dir);
	snprintf(otherkey, sizeof(otherkey), "%s/other.key", dir);
	write_file(keyfile, "0123456789abcdef0123456789abcdef-site-one-key-material\n", 0600);
	write_file(otherkey, "fedcba9876543210fedcba9876543210-site-two-key-material\n", 0600);
	setenv("CONDUIT_BB_CONF", conf, 1);
	fd = open("/dev/null", O_RDONLY);
	close(fd);
	rc = cmocka_run_group_tests_name("switch host", tests, NULL, NULL);
	unlink(conf);
	unlink(keyfile);
	unlink(otherkey);
	rmdir(dir);
	return rc;
}

/*
 * test_runner.c - the switch/lua plugin's helper (switch-lua-run,
 * slurm/switch_lua/helper.c) driven through the plugin's own runner
 * (run.c, over a stand-in for Slurm's run_command: run_command_shim.c)
 * and wire format (wire.c), without Slurm: a fresh Lua state
 * per call, the contract's return conventions, stdin/stdout/stderr on
 * /dev/null, the timeout killing the whole process group, the group
 * killed again after a normal exit, and conduit_bb.so loaded through
 * the one-line switch.lua.
 *   test_runner HELPER MODULE_DIR
 */
#include "../unit/cmocka_all.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../slurm/switch_lua/frame.h"
#include "../../slurm/switch_lua/run.h"
#include "../../slurm/switch_lua/wire.h"

static const char *helper, *module_dir;
static char logs[16384];
static char last_log[512];   /* the last log line, whatever logs kept */
static size_t log_bytes;     /* of every log line since the call began */

static void log_fn(const void *ctx __attribute__((unused)), char level, const char *msg, size_t len)
{
	size_t n = strlen(logs);

	snprintf(last_log, sizeof(last_log), "%c:%.*s", level, (int)len, msg);
	log_bytes += len;

	snprintf(logs + n, sizeof(logs) - n, "%c:%.*s\n", level, (int)len, msg);
}

typedef struct {
	swl_run_t run;
	swl_val_t top, value;
	char status[16];
	char msg[256];
	long rc;
	long ms;
} result_t;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* hook of SCRIPT with a job { job_id, user_name, network = mode, pidfile } */
static void call(const char *hook, const char *script, const char *mode,
		 const char *pidfile, const unsigned char *arg2, size_t arg2_len,
		 unsigned timeout_ms, result_t *r)
{
	swl_out_t o;
	swl_val_t v;
	long t0 = now_ms();

	memset(r, 0, sizeof(*r));
	logs[0] = '\0';
	last_log[0] = '\0';
	log_bytes = 0;
	swl_out_init(&o);
	swl_open(&o);
	swl_kv_str(&o, "hook", hook);
	/* absolute, as the plugin sends it (the helper runs in "/") */
	if (script[0] != '/') {
		char cwd[4096], abs[8192];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		snprintf(abs, sizeof(abs), "%s/%s", cwd, script);
		swl_kv_str(&o, "script", abs);
	} else {
		swl_kv_str(&o, "script", script);
	}
	swl_kv_str(&o, "cluster", "testcluster");
	swl_put_cstr(&o, "args");
	swl_open(&o);
	swl_put_int(&o, 1);
	swl_open(&o);
	swl_kv_int(&o, "job_id", 42);
	swl_kv_str(&o, "user_name", "alice");
	swl_kv_str(&o, "network", mode);
	swl_kv_str(&o, "pidfile", pidfile);
	swl_close(&o);
	if (arg2) {
		swl_put_int(&o, 2);
		swl_put_raw(&o, arg2, arg2_len);
	}
	swl_close(&o);
	swl_close(&o);
	assert_false(o.bad);
	swl_run(helper, hook, o.data, o.len, timeout_ms, log_fn, NULL, &r->run);
	swl_out_free(&o);
	r->ms = now_ms() - t0;
	if (r->run.status != SWL_RUN_ANSWERED)
		return;
	assert_true(swl_valid(r->run.answer, r->run.answer_len));
	swl_get(r->run.answer, r->run.answer + r->run.answer_len, &r->top);
	assert_int_equal(r->top.tag, '{');
	assert_true(swl_field(&r->top, "status", &v));
	snprintf(r->status, sizeof(r->status), "%.*s", (int)v.n, v.s);
	if (swl_field(&r->top, "msg", &v) && v.tag == 's')
		snprintf(r->msg, sizeof(r->msg), "%.*s", (int)v.n, v.s);
	if (swl_field(&r->top, "rc", &v))
		r->rc = (long)v.i;
	r->value.tag = 'n';
	swl_field(&r->top, "value", &r->value);
}

static bool answer_has(const result_t *r, const char *s)
{
	return r->run.answer && memmem(r->run.answer, r->run.answer_len, s, strlen(s));
}

static bool str_is(const swl_val_t *t, const char *k, const char *want, size_t n)
{
	swl_val_t v;

	return swl_field(t, k, &v) && v.tag == 's' && v.n == n && !memcmp(v.s, want, n);
}

static bool int_is(const swl_val_t *t, const char *k, int64_t want)
{
	swl_val_t v;

	return swl_field(t, k, &v) && v.tag == 'i' && v.i == want;
}

#define HOOKS "tests/switch/scripts/hooks.lua"

static void test_accept_round_trip(void **state __attribute__((unused)))
{
	result_t r;
	swl_val_t v, n3;
	const unsigned char *blob;
	size_t blob_len;
	result_t r2;

	call("job_start", HOOKS, "accept", NULL, NULL, 0, 5000, &r);
	assert_int_equal(r.run.status, SWL_RUN_ANSWERED);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.value.tag, '{');
	assert_true(int_is(&r.value, "v", 2));
	assert_true(int_is(&r.value, "job", 42));
	assert_true(int_is(&r.value, "big", (int64_t)1 << 40));
	assert_true(str_is(&r.value, "name", "s\0e\n", 4));
	assert_true(swl_field(&r.value, "ratio", &v) && v.tag == 'd' && v.d == 0.25);
	assert_true(swl_field(&r.value, "ok", &v) && v.tag == 't');
	assert_true(swl_field(&r.value, "no", &v) && v.tag == 'f');
	assert_true(swl_field(&r.value, "nested", &v) && v.tag == '{');
	/* the log line came back, formatted, with the call count of a
	 * fresh state */
	assert_non_null(strstr(logs, "i:job_start 42 for alice, calls=1\n"));

	/* the stored jobinfo goes back in as job_complete's argument */
	blob = r.value.s - 1;
	blob_len = (size_t)(swl_get(blob, r.run.answer + r.run.answer_len, &n3) - blob);
	call("job_complete", HOOKS, "accept", NULL, blob, blob_len, 5000, &r2);
	assert_string_equal(r2.status, "ok");
	assert_int_equal(r2.rc, 0);
	swl_run_free(&r2.run);
	/* nil jobinfo: an abandoned setup */
	call("job_complete", HOOKS, "accept", NULL, (const unsigned char *)"n", 1, 5000, &r2);
	assert_int_equal(r2.rc, 7);
	swl_run_free(&r2.run);
	swl_run_free(&r.run);
}

static void test_return_conventions(void **state __attribute__((unused)))
{
	result_t r;

	call("job_start", HOOKS, "decline", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.value.tag, 'n');
	swl_run_free(&r.run);

	call("job_start", HOOKS, "fail", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.rc, -1);
	swl_run_free(&r.run);

	call("job_start", HOOKS, "error", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "error");
	assert_true(answer_has(&r, "deliberate"));
	swl_run_free(&r.run);

	call("job_start", HOOKS, "norc", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "badrc");
	swl_run_free(&r.run);

	call("job_start", HOOKS, "unsaved", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "unsaved");
	swl_run_free(&r.run);

	/* subtables shared down 60 levels: refused once past the cap, long
	 * before the timeout (2^60 paths would never end) */
	call("job_start", HOOKS, "shared", NULL, NULL, 0, 20000, &r);
	assert_string_equal(r.status, "unsaved");
	assert_non_null(strstr(r.msg, "cannot be stored"));
	swl_run_free(&r.run);

	/* a jobinfo over 64 KiB (it rides in every step's credential) */
	call("job_start", HOOKS, "big", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "unsaved");
	assert_non_null(strstr(r.msg, "64 KiB"));
	swl_run_free(&r.run);

	/* os.exit: no answer */
	call("job_start", HOOKS, "exit", NULL, NULL, 0, 5000, &r);
	assert_int_equal(r.run.status, SWL_RUN_EXITED);
	assert_null(r.run.answer);
}

static void test_load(void **state __attribute__((unused)))
{
	result_t r;
	swl_val_t v;

	call("load", HOOKS, "", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_true(swl_field(&r.value, "block_job_complete", &v) && v.tag == 't');
	assert_true(swl_field(&r.value, "setup_special_steps", &v) && v.tag == 'f');
	swl_run_free(&r.run);
	/* a chunk returning a number other than SUCCESS refuses the script */
	call("load", "tests/switch/scripts/refuse.lua", "", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "load");
	assert_true(answer_has(&r, "returned 1 on load"));
	swl_run_free(&r.run);
	call("load", "tests/switch/scripts/missing.lua", "", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "load");
	swl_run_free(&r.run);
}

static void test_fresh_state(void **state __attribute__((unused)))
{
	result_t r;
	swl_val_t v;
	int i;

	for (i = 0; i < 3; i++) {
		call("job_start", HOOKS, "fresh", NULL, NULL, 0, 5000, &r);
		assert_true(int_is(&r.value, "calls", 1));
		assert_true(str_is(&r.value, "cluster", "testcluster", 11));
		assert_true(swl_field(&r.value, "eagain", &v) && v.tag == 'i' && v.i == EAGAIN);
		swl_run_free(&r.run);
	}
}

static void test_quiet_fds(void **state __attribute__((unused)))
{
	result_t r;

	call("job_start", HOOKS, "quiet", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	/* stdin is /dev/null: io.read gives nil */
	assert_true(str_is(&r.value, "stdin", "nil", 3));
	/* print is logged (tab-separated), stdout/stderr went nowhere */
	assert_non_null(strstr(logs, "i:printed\t42\tnil\n"));
	assert_null(strstr(logs, "to stdout"));
	assert_null(strstr(logs, "to stderr"));
	swl_run_free(&r.run);
}

static void test_to_json(void **state __attribute__((unused)))
{
	result_t r;

	call("job_start", HOOKS, "json", NULL, NULL, 0, 5000, &r);
	assert_non_null(strstr(logs, "i:{\"a\":\"q\\\"uote\",\"b\":[1,2,\"three\"],\"c\":true,\"n\":1.5}\n"));
	swl_run_free(&r.run);
}

static pid_t read_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;

	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

static bool gone(pid_t pid)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return true;
		usleep(20000);
	}
	return false;
}

static void test_timeout_kills_group(void **state __attribute__((unused)))
{
	char pidfile[] = "/tmp/cbb-runner-pid-XXXXXX";
	int fd = mkstemp(pidfile);
	result_t r;
	pid_t child;

	assert_true(fd >= 0);
	close(fd);
	call("job_start", HOOKS, "hang", pidfile, NULL, 0, 1000, &r);
	assert_int_equal(r.run.status, SWL_RUN_TIMEOUT);
	assert_true(r.ms >= 1000 && r.ms < 3000);
	child = read_pid(pidfile);
	assert_true(child > 0);
	assert_true(gone(child)); /* the sleep the script left went too */
	unlink(pidfile);
}

static void test_exit_kills_group(void **state __attribute__((unused)))
{
	char pidfile[] = "/tmp/cbb-runner-pid-XXXXXX";
	int fd = mkstemp(pidfile);
	result_t r;
	pid_t child;

	assert_true(fd >= 0);
	close(fd);
	/* the answer comes at once although a child lives on (the answer
	 * descriptor is close-on-exec) and the child is killed after */
	call("job_start", HOOKS, "orphan", pidfile, NULL, 0, 5000, &r);
	assert_int_equal(r.run.status, SWL_RUN_ANSWERED);
	assert_true(r.ms < 2000);
	child = read_pid(pidfile);
	assert_true(child > 0);
	assert_true(gone(child));
	swl_run_free(&r.run);
	unlink(pidfile);
}

/* a flood of log lines is cut at SWL_LOG_MAX; the answer survives */
static void test_log_flood(void **state __attribute__((unused)))
{
	result_t r;

	call("job_start", HOOKS, "flood", NULL, NULL, 0, 20000, &r);
	assert_int_equal(r.run.status, SWL_RUN_ANSWERED);
	assert_string_equal(r.status, "ok");
	assert_non_null(strstr(last_log, "the rest left out"));
	assert_true(log_bytes <= SWL_LOG_MAX + SWL_LOG_LINE_MAX);
	assert_true(log_bytes > SWL_LOG_MAX / 2);
	swl_run_free(&r.run);
}

/* finalizers that hang after the answer cannot take it back */
static void test_gc_hang(void **state __attribute__((unused)))
{
	result_t r;
	swl_val_t v;

	call("job_start", HOOKS, "gc_hang", NULL, NULL, 0, 3000, &r);
	assert_int_equal(r.run.status, SWL_RUN_ANSWERED);
	assert_true(r.ms < 2500);
	assert_true(swl_field(&r.value, "kept", &v) && v.tag == 't');
	swl_run_free(&r.run);
}

/* slurm.log(level, msg) and slurm.error(msg), as Slurm's own table has */
static void test_slurm_log(void **state __attribute__((unused)))
{
	result_t r;

	call("job_start", HOOKS, "slurm_log", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_non_null(strstr(logs, "i:level zero\n"));
	assert_non_null(strstr(logs, "d:level two\n"));
	assert_non_null(strstr(logs, "e:an error\n"));
	swl_run_free(&r.run);
}

static void test_step_env(void **state __attribute__((unused)))
{
	result_t r;
	swl_val_t v;

	call("step_init", HOOKS, "", NULL, (const unsigned char *)"n", 1, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.value.tag, '{');
	assert_true(str_is(&r.value, "S", "str", 3));
	assert_true(str_is(&r.value, "N", "42", 2));
	assert_true(str_is(&r.value, "F", "1.5", 3));
	assert_true(str_is(&r.value, "T", "1", 1));
	assert_true(swl_field(&r.value, "U", &v) && v.tag == 'f');
	assert_non_null(strstr(logs, "left out"));
	swl_run_free(&r.run);
}

static void test_no_such_helper(void **state __attribute__((unused)))
{
	swl_run_t run;

	swl_run("/nonexistent/switch-lua-run", "job_start", (const unsigned char *)"n", 1,
		1000, log_fn, NULL, &run);
	assert_int_equal(run.status, SWL_RUN_NOSTART);
	assert_non_null(strstr(run.why, "/nonexistent/switch-lua-run"));
}

/* lua/switch.lua: conduit_bb.so through require, in the helper */
static void test_conduit_bb(void **state __attribute__((unused)))
{
	char cpath[1024];
	result_t r;
	swl_val_t v;

	char here[2048], planted[2200], marker[2300], *abs_mod;
	FILE *f;

	abs_mod = realpath(module_dir, NULL);
	assert_non_null(abs_mod);
	/* ";;" (Lua's defaults) too: their ./?.lua and ./?.so entries are
	 * what a planted file would ride on */
	snprintf(cpath, sizeof(cpath), "%s/?.so;;", abs_mod);
	free(abs_mod);
	setenv("LUA_CPATH", cpath, 1);
	setenv("LUA_PATH", ";;", 1);
	setenv("CONDUIT_BB_CONF", "/nonexistent/conduit_bb.conf", 1);
	/* the daemon's working directory holds a conduit_bb.lua someone
	 * planted: the helper (root) never runs it */
	assert_non_null(getcwd(here, sizeof(here)));
	snprintf(planted, sizeof(planted), "%s/build/test/planted", here);
	snprintf(marker, sizeof(marker), "%s/ran", planted);
	assert_int_equal(mkdir(planted, 0755) == 0 || errno == EEXIST, 1);
	(void)unlink(marker);
	snprintf(planted + strlen(planted), sizeof(planted) - strlen(planted),
		 "/conduit_bb.lua");
	f = fopen(planted, "w");
	assert_non_null(f);
	fprintf(f, "io.open('%s', 'w'):close()\nreturn {}\n", marker);
	fclose(f);
	*strrchr(planted, '/') = '\0';
	assert_int_equal(chdir(planted), 0);
	{
		char script[2200];

		snprintf(script, sizeof(script), "%s/lua/switch.lua", here);
		call("load", script, "", NULL, NULL, 0, 5000, &r);
	}
	assert_int_equal(chdir(here), 0);
	assert_string_equal(r.status, "ok");
	assert_true(swl_field(&r.value, "block_job_complete", &v) && v.tag == 'f');
	assert_int_equal(access(marker, F_OK), -1);
	swl_run_free(&r.run);
	unsetenv("LUA_PATH");
	/* no conduit: segment in --network: declined */
	call("job_start", "lua/switch.lua", "other:thing", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.value.tag, 'n');
	swl_run_free(&r.run);
	/* a request but no SessionKeyFile: the setup fails, logged */
	call("job_start", "lua/switch.lua", "conduit:pool=a100+gpus=1", NULL, NULL, 0, 5000, &r);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.rc, -1);
	assert_non_null(strstr(logs, "e:conduit_bb: switch: job 42: setup failed"));
	swl_run_free(&r.run);
	unsetenv("LUA_CPATH");
}

static void test_wire_rejects(void **state __attribute__((unused)))
{
	static const unsigned char bad1[] = { 's', 9, 0, 0, 0, 'a' };   /* short */
	static const unsigned char bad2[] = { '{', 'n', 'n', '}' };       /* nil key */
	static const unsigned char bad3[] = { '{', 's', 1, 0, 0, 0, 'k' }; /* open */
	unsigned char deep[64];
	int i;

	assert_false(swl_valid(bad1, sizeof(bad1)));
	assert_false(swl_valid(bad2, sizeof(bad2)));
	assert_false(swl_valid(bad3, sizeof(bad3)));
	assert_false(swl_valid((const unsigned char *)"nn", 2)); /* two values */
	for (i = 0; i < 32; i++)
		deep[i] = '{';
	for (i = 32; i < 64; i++)
		deep[i] = '}';
	assert_false(swl_valid(deep, sizeof(deep))); /* deeper than 16 */
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_round_trip),
		cmocka_unit_test(test_return_conventions),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_fresh_state),
		cmocka_unit_test(test_quiet_fds),
		cmocka_unit_test(test_to_json),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_exit_kills_group),
		cmocka_unit_test(test_log_flood),
		cmocka_unit_test(test_gc_hang),
		cmocka_unit_test(test_slurm_log),
		cmocka_unit_test(test_step_env),
		cmocka_unit_test(test_no_such_helper),
		cmocka_unit_test(test_conduit_bb),
		cmocka_unit_test(test_wire_rejects),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: test_runner HELPER MODULE_DIR\n");
		return 2;
	}
	/* absolute: a test runs the helper from another directory */
	{
		char *h = realpath(argv[1], NULL);

		helper = h ? h : argv[1];
	}
	module_dir = argv[2];
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_switch.c - whole job lifecycles through the emulated switch/lua
 * host (host.c), with lua/switch.lua loading conduit_bb.so.
 *   test_switch MODULE_DIR
 */
#include "../unit/cmocka_all.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

static char dir[] = "/tmp/cbb-switch-XXXXXX";
static char conf[300], keyfile[300], otherkey[300], cpath[1024];
static const char *module_dir, *ctl_dir; /* the test controller, if any */

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
	j.user_id = 2001;
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

/* The job's user and the step's job come from Slurm, bound to the jobinfo. */
static void test_identity(void **state)
{
	host_t h;
	host_job_t j = job(106, "conduit:pool=t4");
	step_result_t r;

	(void)state;
	set_conf("");
	new_host(&h);
	/* no user_id, and a name this host cannot resolve (LDAP down) */
	j.user_id = -1;
	j.user_name = "nosuchuser-cbb";
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "switch: job 106: setup failed: the job's uid "
			       "is unknown: Slurm gave no user_id and user "
			       "'nosuchuser-cbb' does not resolve on this host"));
	/* uid 0 is never given to a user who is not root */
	j = job(107, "conduit:pool=t4");
	j.user_id = 0;
	assert_int_equal(host_job_start(&h, &j), START_FAILED);
	assert_non_null(strstr(h.log, "refusing uid 0 for user 'alice'"));
	/* a name that resolves stands in for a missing user_id */
	j = job(108, "conduit:pool=t4");
	j.user_id = -1;
	j.user_name = "root";
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);

	/* a stepinfo moved to another job's step is refused */
	j = job(109, "conduit:pool=t4");
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	host_step_of(&h, &j, 110, "", &r);
	assert_true(r.failed);
	assert_non_null(strstr(h.log, "refusing the stepinfo of job 109: it was "
			       "made for job 109, not this step's job 110"));
	host_step(&h, &j, "", &r);
	assert_false(r.failed);
	/* ... and so is one from another cluster */
	h.cluster = "elsewhere";
	host_step(&h, &j, "", &r);
	assert_true(r.failed);
	assert_non_null(strstr(h.log, "it was made on cluster emulated, not "
			       "elsewhere"));
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

/* ---- with a session controller (tests/switch/controller.py) ---------- */

static void ctl(const char *what)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "sh tests/switch/controller-ctl.sh %s %s", what,
		 ctl_dir);
	assert_int_equal(system(cmd), 0);
}

static void http_conf(const char *extra)
{
	char text[2048], port[16] = "";
	FILE *f;

	snprintf(text, sizeof(text), "%s/port", ctl_dir);
	f = fopen(text, "r");
	assert_non_null(f);
	assert_non_null(fgets(port, sizeof(port), f));
	fclose(f);
	port[strcspn(port, "\n")] = '\0';
	snprintf(text, sizeof(text),
		 "SwitchController=http\nSwitchControllerURL=https://localhost:%s\n"
		 "SwitchCACert=%s/pki/ca.crt\nSwitchClientCert=%s/pki/service.crt\n"
		 "SwitchClientKey=%s/pki/service.key\nSwitchTimeout=2\n%s",
		 port, ctl_dir, ctl_dir, ctl_dir, extra);
	set_conf(text);
}

/* How many controller log lines say `what` for job `id`. */
static int ctl_count(const char *what, long id)
{
	char path[400], line[1024], pat[64], job[32];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", ctl_dir);
	snprintf(pat, sizeof(pat), "\"what\": \"%s\"", what);
	snprintf(job, sizeof(job), "/%ld\"", id);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, pat) && strstr(line, job);
	fclose(f);
	return n;
}

/* The uid the controller recorded for job `id`'s session, or -1. */
static long ctl_uid(long id)
{
	char path[400], line[1024], job[32];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", ctl_dir);
	snprintf(job, sizeof(job), "/%ld\"", id);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *u = strstr(line, "\"uid\": ");

		if (strstr(line, job) && strstr(line, "\"created\"") && u)
			uid = strtol(u + 7, NULL, 10);
	}
	fclose(f);
	return uid;
}

static void faults(const char *json)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/faults.json", ctl_dir);
	write_file(path, json, 0644);
}

static void test_http_session(void **state)
{
	host_t h;
	host_job_t j = job(201, "conduit:pool=a100+gpus=2");
	step_result_t r;
	char *tok;

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	assert_int_equal(ctl_count("created", 201), 1);
	host_step(&h, &j, "SLURM_JOB_ID=201\n", &r);
	assert_false(r.failed);
	tok = strstr(r.env, "CONDUIT_SESSION_TOKEN=tok-");
	assert_non_null(tok);
	/* the controller's variables pass SwitchEnvNames (CONDUIT_*) */
	assert_true(env_has(&r, "CONDUIT_REGION=test-1"));
	assert_null(strstr(r.env, "SLURM_BAD"));       /* SLURM_* refused */
	assert_null(strstr(r.env, "BAD NAME"));
	assert_null(strstr(r.env, "LD_PRELOAD"));
	assert_null(strstr(r.env, "PATH="));
	assert_null(strstr(r.env, "BROKER_REGION"));
	/* the controller was told the uid Slurm gave */
	assert_int_equal(ctl_uid(201), 2001);
	assert_true(env_has(&r, "CONDUIT_SESSION_ENDPOINT=broker-1.example.invalid:7443"));
	assert_true(env_has(&r, "CONDUIT_SESSION_VLANS=101,201"));
	/* the token is sealed in the jobinfo and never logged */
	{
		char token[64];

		snprintf(token, sizeof(token), "%.36s", tok + strlen("CONDUIT_SESSION_TOKEN="));
		assert_null(memmem(j.packed, j.packed_len, token, strlen(token)));
		assert_null(strstr(h.log, token));
	}
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 201), 1);
	/* a repeated teardown (restart) finds it gone: still released */
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 201), 1);
}

static void test_http_repeat_start(void **state)
{
	host_t h;
	host_job_t a = job(202, "conduit:pool=t4+gpus=1"), b = job(202, "conduit:pool=t4+gpus=1");

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &a), START_ACCEPTED);
	assert_int_equal(host_job_start(&h, &b), START_ACCEPTED); /* restart */
	assert_int_equal(ctl_count("created", 202), 1);
	assert_int_equal(ctl_count("existing", 202), 1);
	assert_non_null(memmem(b.packed, b.packed_len, "sess-", 5));
	assert_int_equal(host_job_complete(&h, &b), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 202), 1);
}

static void test_http_no_capacity(void **state)
{
	host_t h;
	host_job_t big = job(203, "conduit:pool=a100+gpus=4"), more = job(204, "conduit:pool=a100+gpus=2");

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &big), START_ACCEPTED);
	assert_int_equal(host_job_start(&h, &more), START_FAILED);
	assert_non_null(strstr(h.log, "switch: job 204: setup failed: no capacity in pool "
			       "a100: need 2 GPU(s), 0 free; Slurm requeues the job"));
	assert_int_equal(host_job_complete(&h, &big), COMPLETE_RELEASED);
	/* the requeued job gets its session once capacity is back */
	assert_int_equal(host_job_start(&h, &more), START_ACCEPTED);
	assert_int_equal(host_job_complete(&h, &more), COMPLETE_RELEASED);
}

static void test_http_controller_trouble(void **state)
{
	host_t h;
	host_job_t a = job(205, "conduit:pool=t4+gpus=1"), b = job(206, "conduit:pool=t4");

	(void)state;
	/* a failed release with block_job_complete: EAGAIN, then success */
	http_conf("SwitchBlockJobComplete=yes\n");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &a), START_ACCEPTED);
	faults("{\"fail_next\": 1, \"status\": 503}");
	assert_int_equal(host_job_complete(&h, &a), COMPLETE_RELEASED);
	assert_int_equal(a.complete_calls, 2);
	assert_int_equal(ctl_count("released", 205), 1);
	/* controller down: setup fails; release retried, then drained */
	ctl("stop");
	assert_int_equal(host_job_start(&h, &b), START_FAILED);
	assert_non_null(strstr(h.log, "switch: job 206: setup failed: controller PUT"));
	b.packed_len = 0;
	b.complete_calls = 0;
	assert_int_equal(host_job_complete(&h, &b), COMPLETE_DRAINED);
	assert_int_equal(b.complete_calls, 3); /* 1 + switch_retries */
	/* without block_job_complete a failed release fails at once */
	http_conf("");
	new_host(&h);
	b.complete_calls = 0;
	assert_int_equal(host_job_complete(&h, &b), COMPLETE_DRAINED);
	assert_int_equal(b.complete_calls, 1);
	ctl("start");
	faults("{}");
}

static void test_http_abandoned_setup(void **state)
{
	host_t h;
	host_job_t j = job(207, "conduit:pool=t4+gpus=2");

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	j.packed_len = 0; /* the setup's answer was lost: nil jobinfo */
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 207), 1);
}

static void test_http_tampered_token(void **state)
{
	host_t h;
	host_job_t j = job(208, "conduit:pool=t4");
	step_result_t r;
	char *p;

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	p = memmem(j.packed, j.packed_len, "S5:token", 8);
	assert_non_null(p);
	p = strchr(p + 8, ':') + 5; /* inside the sealed value */
	*p = *p == 'A' ? 'B' : 'A';
	host_step(&h, &j, "", &r);
	assert_true(r.failed);
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
}

/*
 * The controller restarts between a job's setup, a repeated setup (a
 * slurmctld restart) and two teardowns: it keeps its sessions, so the
 * job is reserved once, keeps the same session, and is released once.
 */
static void test_http_controller_restart(void **state)
{
	host_t h;
	host_job_t a = job(211, "conduit:pool=t4+gpus=1"), b = job(211, "conduit:pool=t4+gpus=1");
	step_result_t r1, r2;
	char *id1, *id2;

	(void)state;
	http_conf("");
	new_host(&h);
	assert_int_equal(host_job_start(&h, &a), START_ACCEPTED);
	ctl("stop");
	ctl("start");
	assert_int_equal(host_job_start(&h, &b), START_ACCEPTED);
	assert_int_equal(ctl_count("created", 211), 1);
	assert_int_equal(ctl_count("existing", 211), 1);
	host_step(&h, &a, "", &r1);
	host_step(&h, &b, "", &r2);
	assert_false(r1.failed);
	assert_false(r2.failed);
	id1 = strstr(r1.env, "CONDUIT_SESSION_ID=");
	id2 = strstr(r2.env, "CONDUIT_SESSION_ID=");
	assert_non_null(id1);
	assert_non_null(id2);
	assert_int_equal(strcspn(id1, "\n"), strcspn(id2, "\n"));
	assert_int_equal(strncmp(id1, id2, strcspn(id1, "\n")), 0);
	assert_int_equal(host_job_complete(&h, &b), COMPLETE_RELEASED);
	ctl("stop");
	ctl("start");
	assert_int_equal(host_job_complete(&h, &a), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 211), 1);
	assert_int_equal(ctl_count("created", 211), 1);
}

/*
 * A reserve answer with a value the steps' reader (cbb_jobinfo_read)
 * would refuse fails the setup at once, and releases what it reserved,
 * rather than signing a jobinfo that fails every step of the job.
 */
static void test_http_values_checked(void **state)
{
	static const struct {
		long id;
		const char *extra, *msg;
	} bad[] = {
		{ 312, "{\"session_extra\": {\"vram_mib\": 9007199254740992}}",
		  "switch: job 312: setup failed: controller reply: vram_mib "
		  "9007199254740992 is out of range (0 to 9007199254740991)" },
		{ 313, "{\"session_extra\": {\"gpus\": 5000}}",
		  "switch: job 313: setup failed: controller reply: gpus 5000 "
		  "is out of range (0 to 4096)" },
		{ 314, "{\"session_extra\": {\"pool\": \"pool-0123456789"
		  "0123456789012345678901234567890123456789012345678901234567890\"}}",
		  "switch: job 314: setup failed: controller reply: pool is "
		  "not a string of at most 64 bytes" },
		{ 315, "{\"session_extra\": {\"vram_mib\": \"8192\"}}",
		  "switch: job 315: setup failed: controller reply: vram_mib "
		  "is not a whole number" },
	};
	size_t i;

	(void)state;
	http_conf("");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		host_t h;
		host_job_t j = job(bad[i].id, "conduit:pool=t4+gpus=1");

		new_host(&h);
		faults(bad[i].extra);
		assert_int_equal(host_job_start(&h, &j), START_FAILED);
		if (!strstr(h.log, bad[i].msg))
			fail_msg("job %ld: want <%s> in the log:\n%s", bad[i].id,
				 bad[i].msg, h.log);
		/* what the controller reserved is released again */
		assert_int_equal(ctl_count("released", bad[i].id), 1);
	}
	faults("{}");
	/* the largest value the reader takes is accepted */
	{
		host_t h;
		host_job_t j = job(316, "conduit:pool=t4+gpus=1");
		step_result_t r;

		new_host(&h);
		faults("{\"session_extra\": {\"vram_mib\": 9007199254740991}}");
		assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
		host_step(&h, &j, "", &r);
		assert_false(r.failed);
		assert_true(env_has(&r, "CONDUIT_SESSION_VRAM_MIB=9007199254740991"));
		faults("{}");
		assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	}
}

/* SessionDelivery=file: the token in a 0600 file of the job's user. */
static void test_http_token_file(void **state)
{
	host_t h;
	host_job_t j = job(209, "conduit:pool=t4");
	step_result_t r;
	char extra[600], path[600], want[700], token[128] = "";
	struct passwd *pw = getpwnam("nobody");
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(pw);
	j.user_name = "nobody";
	j.user_id = (long)pw->pw_uid;
	snprintf(extra, sizeof(extra), "SessionDelivery=file\nSessionDir=%s/sessions\n", dir);
	http_conf(extra);
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	host_step(&h, &j, "CONDUIT_SESSION_TOKEN=from-the-shell\n", &r);
	assert_false(r.failed);
	snprintf(path, sizeof(path), "%s/sessions/emulated.209.token", dir);
	snprintf(want, sizeof(want), "CONDUIT_SESSION_TOKEN_FILE=%s", path);
	assert_true(env_has(&r, want));
	assert_null(strstr(r.env, "CONDUIT_SESSION_TOKEN="));  /* unset */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, pw->pw_uid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(token, sizeof(token), f));
	fclose(f);
	assert_int_equal(strncmp(token, "tok-", 4), 0);
	assert_null(strstr(h.log, token + 4));
	/* a second step rewrites the same file */
	host_step(&h, &j, "", &r);
	assert_false(r.failed);
	assert_true(env_has(&r, want));
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	/* the owner is the uid Slurm gave, signed in the jobinfo: a name
	 * this node cannot look up (an LDAP hiccup) does not matter */
	{
		host_job_t k = job(210, "conduit:pool=t4");
		char kpath[600];

		k.user_name = "no-such-user-cbb";
		assert_int_equal(host_job_start(&h, &k), START_ACCEPTED);
		host_step(&h, &k, "", &r);
		assert_false(r.failed);
		snprintf(kpath, sizeof(kpath), "%s/sessions/emulated.210.token", dir);
		assert_int_equal(stat(kpath, &st), 0);
		assert_int_equal(st.st_uid, 2001);
		assert_int_equal(host_job_complete(&h, &k), COMPLETE_RELEASED);
		unlink(kpath);
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/sessions", dir);
	rmdir(path);
}

/*
 * SessionDelivery=file with a SessionDir that cannot hold the file: the
 * step fails with one line saying why, and the token (unsealed by then)
 * reaches neither the step's environment nor the log.  step_init's other
 * way out with the configuration it got from the call context.
 */
static void test_http_token_file_refused(void **state)
{
	host_t h;
	host_job_t j = job(212, "conduit:pool=t4");
	step_result_t r;
	char extra[600], want[700];

	(void)state;
	/* a regular file where the directory should be */
	snprintf(extra, sizeof(extra), "SessionDelivery=file\nSessionDir=%s\n",
		 conf);
	http_conf(extra);
	new_host(&h);
	assert_int_equal(host_job_start(&h, &j), START_ACCEPTED);
	host_step(&h, &j, "CONDUIT_SESSION_TOKEN=from-the-shell\n", &r);
	assert_true(r.failed);
	snprintf(want, sizeof(want), "switch: step_init: job 212: SessionDir %s "
		 "is not a directory", conf);
	if (!strstr(h.log, want))
		fail_msg("log:\n%s", h.log);
	assert_null(strstr(h.log, "tok-"));
	assert_null(strstr(r.env, "tok-"));
	assert_int_equal(host_job_complete(&h, &j), COMPLETE_RELEASED);
	assert_int_equal(ctl_count("released", 212), 1);
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
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_key_file_rules),
		cmocka_unit_test(test_bad_request_fails_setup),
		cmocka_unit_test(test_directives_off_by_default),
		cmocka_unit_test(test_ctld_directives),
		cmocka_unit_test(test_step_directives),
		cmocka_unit_test(test_abandoned_setup),
		cmocka_unit_test(test_host_kills_slow_setup),
		cmocka_unit_test(test_http_session),
		cmocka_unit_test(test_http_repeat_start),
		cmocka_unit_test(test_http_no_capacity),
		cmocka_unit_test(test_http_controller_trouble),
		cmocka_unit_test(test_http_abandoned_setup),
		cmocka_unit_test(test_http_tampered_token),
		cmocka_unit_test(test_http_token_file),
		cmocka_unit_test(test_http_token_file_refused),
		cmocka_unit_test(test_http_controller_restart),
		cmocka_unit_test(test_http_values_checked),
	};
	int fd, rc;

	module_dir = argc > 1 ? argv[1] : "build/lua5.4";
	ctl_dir = argc > 2 ? argv[2] : NULL;
	if (!ctl_dir) {
		fprintf(stderr, "usage: test_switch MODULE_DIR CONTROLLER_DIR\n");
		return 2;
	}
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

/* test_client.c - key, pick, status, jobstate, statefile, percent-decode. */
#include "cmocka_all.h"

#include <unistd.h>

#include "jobstate.h"
#include "key.h"
#include "stage.h"
#include "statefile.h"
#include "status.h"

static void test_key_roundtrip(void **state)
{
	cbb_key_t k = { 42, "", 3, 7, CBB_KEY_POST, 19 }, back;
	char buf[CBB_KEY_MAX];

	(void)state;
	cbb_key_cluster(k.cluster, "hpc one/x");
	assert_string_equal(k.cluster, "hpc_one_x");
	cbb_key_format(buf, sizeof(buf), &k);
	assert_string_equal(buf, "SLURMJOB:42,CLUSTER:hpc_one_x,RESTART:3,"
			    "SLURMINDEX:7,SLURMTYPE:CONDUIT_POST,LINE:19");
	assert_true(cbb_key_parse(buf, &back));
	assert_memory_equal(&k, &back, sizeof(k));
	/* the documented `conduit status 'SLURMJOB:42,'` prefix holds */
	assert_int_equal(strncmp(buf, "SLURMJOB:42,", 12), 0);
	assert_false(cbb_key_parse("SLURMJOB:10,SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE", &back));
	assert_false(cbb_key_parse("SLURMJOB:42,CLUSTER:c,RESTART:0,SLURMINDEX:1,"
				   "SLURMTYPE:CONDUIT_PRE,LINE:3x", &back));
	assert_false(cbb_key_parse("", &back));
	cbb_key_cluster(k.cluster, NULL);
	assert_string_equal(k.cluster, "cluster");
}

static void test_key_regex(void **state)
{
	char rx[CBB_KEY_MAX];

	(void)state;
	cbb_key_job_regex(rx, sizeof(rx), "a.b-c", 10, -1);
	assert_string_equal(rx, "^SLURMJOB:10,CLUSTER:a\\.b\\-c,");
	cbb_key_job_regex(rx, sizeof(rx), "x", 10, 2);
	assert_string_equal(rx, "^SLURMJOB:10,CLUSTER:x,RESTART:2,");
}

static cbb_transfer_t T(const char *id, const char *comment, int state,
			int error, int64_t created)
{
	cbb_transfer_t t;

	memset(&t, 0, sizeof(t));
	t.id = (char *)(uintptr_t)id;
	t.comment = (char *)(uintptr_t)comment;
	t.error_message = (char *)(uintptr_t)"";
	t.state = state;
	t.error = error;
	t.created = created;
	t.active = state != 100 && state != 1 && state != 3;
	return t;
}

#define C1 "SLURMJOB:5,CLUSTER:c,RESTART:0,SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE,LINE:4"
#define C2 "SLURMJOB:5,CLUSTER:c,RESTART:0,SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,LINE:5"
#define C3 "SLURMJOB:5,CLUSTER:c,RESTART:1,SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE,LINE:4"
#define CO "SLURMJOB:5,CLUSTER:c,RESTART:1,SLURMINDEX:1,SLURMTYPE:CONDUIT_POST,LINE:9"

static void test_pick(void **state)
{
	cbb_transfer_t v[5];
	cbb_transfers_t t = { v, 5 };
	unsigned n;

	(void)state;
	v[0] = T("old-failed", C1, 1, 22, 100);
	v[1] = T("running", C1, 24, 0, 50);
	v[2] = T("newer-failed", C1, 1, 4, 200);
	v[3] = T("other", C2, 100, 0, 10);
	v[4] = T("validate", C1, 15, 0, 300);
	v[4].validation_only = true;
	/* running beats failed even when older; validate-only never counts */
	assert_string_equal(cbb_pick(&t, CBB_KEY_PRE, 1, 0, &n)->id, "running");
	assert_int_equal(n, 3);
	v[1].state = 100;
	v[1].active = false;
	assert_string_equal(cbb_pick(&t, CBB_KEY_PRE, 1, 0, &n)->id, "running");
	v[1].state = 1; /* now everything failed: the newest failure */
	v[1].error = 22;
	assert_string_equal(cbb_pick(&t, CBB_KEY_PRE, 1, 0, &n)->id, "newer-failed");
	assert_null(cbb_pick(&t, CBB_KEY_PRE, 1, 1, &n));
	assert_null(cbb_pick(&t, CBB_KEY_POST, 1, 0, &n));
	/* error set before the state catches up is a failure already */
	v[3].state = 24;
	v[3].error = 5;
	assert_true(cbb_transfer_failed(&v[3]));
}

static void test_status(void **state)
{
	cbb_transfer_t v[4];
	cbb_transfers_t t = { v, 4 };
	cbb_buf_t out;

	(void)state;
	v[0] = T("a-old", C1, 100, 0, 10);
	v[1] = T("b-restart1", C3, 24, 0, 20);
	v[1].bytes = 3 * 1024 * 1024;
	v[1].rate = 1536;
	v[1].files = 2;
	v[2] = T("c-out", CO, 1, 4, 30);
	v[2].error_message = (char *)(uintptr_t)"pftool\nexited 3";
	v[3] = T("d-foreign", "not ours", 100, 0, 1);
	cbb_buf_init(&out, 0);
	assert_int_equal(cbb_status_render(&t, 5, false, &out), 0);
	assert_string_equal(out.data,
		"DIR  LINE  STATE                         FILES       BYTES          RATE  TRANSFER_ID                           ERROR\n"
		"in   4     TRANSFER_DATA_TRANSFERRING        2     3.0 MiB     1.5 KiB/s  b-restart1                            \n"
		"out  9     TRANSFER_ERROR                    0         0 B         0 B/s  c-out                                 ERROR_PFTOOL_FAILED: pftool exited 3\n"
		"(attempt after 1 requeue)\n");
	cbb_buf_reset(&out);
	assert_int_equal(cbb_status_render(&t, 5, true, &out), 0);
	assert_non_null(strstr(out.data, "{\"job_id\":5,\"restart\":1,\"transfers\":[{\"direction\":\"in\",\"line\":4,\"index\":1,\"transfer_id\":\"b-restart1\",\"state\":\"TRANSFER_DATA_TRANSFERRING\""));
	cbb_buf_reset(&out);
	t.n = 0;
	assert_int_equal(cbb_status_render(&t, 5, false, &out), 0);
	assert_string_equal(out.data, "No Conduit transfers found for Slurm job 5\n");
	cbb_buf_free(&out);
}

static void test_jobstate(void **state)
{
	char st[32];

	(void)state;
	assert_int_equal(cbb_job_state_classify("PENDING"), CBB_JOB_ALIVE);
	assert_int_equal(cbb_job_state_classify("RUNNING"), CBB_JOB_ALIVE);
	assert_int_equal(cbb_job_state_classify("CANCELLED"), CBB_JOB_OVER);
	assert_int_equal(cbb_job_state_classify("COMPLETED"), CBB_JOB_OVER);
	assert_int_equal(cbb_job_state_classify("WEIRD"), CBB_JOB_UNKNOWN);
	/* a command that does not exist, or says nothing useful */
	assert_int_equal(cbb_job_state("/nonexistent/scontrol", 1, 1000, st,
				       sizeof(st)), CBB_JOB_UNKNOWN);
	assert_int_equal(cbb_job_state("true", 1, 1000, st, sizeof(st)),
			 CBB_JOB_UNKNOWN);
	/* a hung scontrol is killed at the time limit */
	assert_int_equal(cbb_job_state("tests/unit/slow-scontrol", 1, 300, st,
				       sizeof(st)), CBB_JOB_UNKNOWN);
	setenv("FAKE_SCONTROL_DIR", "tests/unit", 1);
	assert_int_equal(cbb_job_state("tests/conduit/fake-scontrol", 424242,
				       2000, st, sizeof(st)), CBB_JOB_GONE);
}

static void test_percent_decode(void **state)
{
	char s[] = "no such item: %E2%80%94 100%25 sure%0Asecond %zz %";

	(void)state;
	cbb_grpc_percent_decode(s);
	assert_string_equal(s, "no such item: \xe2\x80\x94 100% sure\nsecond %zz %");
}

static void test_statefile(void **state)
{
	char dir[] = "/tmp/cbb-state-XXXXXX", id[64], cmd[64];
	cbb_config_t cfg;
	cbb_plan_t plan;
	cbb_directive_t d[2];
	time_t t1, t2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cbb_config_defaults(&cfg);
	cfg.state_dir = strdup(dir);
	t1 = cbb_down_since(&cfg, "c", 9);
	sleep(1);
	t2 = cbb_down_since(&cfg, "c", 9);
	assert_int_equal(t1, t2); /* the first outage time is kept */
	cbb_down_clear(&cfg, "c", 9);
	assert_true(cbb_down_since(&cfg, "c", 9) > t1);

	assert_false(cbb_started_lookup(&cfg, "c", 9, 0, 0, 1, id, sizeof(id)));
	cbb_started_record(&cfg, "c", 9, 0, 0, 1, "id-1");
	cbb_started_record(&cfg, "c", 9, 0, 1, 1, "id-out");
	cbb_started_record(&cfg, "c", 9, 0, 0, 1, "id-2");
	assert_true(cbb_started_lookup(&cfg, "c", 9, 0, 0, 1, id, sizeof(id)));
	assert_string_equal(id, "id-2");
	assert_false(cbb_started_lookup(&cfg, "c", 9, 1, 0, 1, id, sizeof(id)));

	memset(&plan, 0, sizeof(plan));
	memset(d, 0, sizeof(d));
	plan.v = d;
	plan.n = 2;
	d[0].line = 7;
	d[1].line = 9;
	cbb_lines_save(&cfg, "c", 9, &plan);
	d[0].line = 2;
	d[1].line = 3;
	cbb_lines_apply(&cfg, "c", 9, &plan);
	assert_int_equal(d[0].line, 7);
	assert_int_equal(d[1].line, 9);
	plan.n = 1; /* a plan that does not fit the map keeps its lines */
	d[0].line = 2;
	cbb_lines_apply(&cfg, "c", 9, &plan);
	assert_int_equal(d[0].line, 2);

	cbb_state_forget(&cfg, "c", 9);
	assert_false(cbb_started_lookup(&cfg, "c", 9, 0, 0, 1, id, sizeof(id)));
	snprintf(cmd, sizeof(cmd), "rmdir %s", dir);
	assert_int_equal(system(cmd), 0); /* nothing was left behind */
	cbb_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_roundtrip),
		cmocka_unit_test(test_key_regex),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_jobstate),
		cmocka_unit_test(test_percent_decode),
		cmocka_unit_test(test_statefile),
	};
	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}

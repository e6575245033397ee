/* test_client.c - key, pick, status, jobstate, statefile, percent-decode,
 * job outcomes for --when=. */
#include "cmocka_all.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobstate.h"
#include "key.h"
#include "outcome.h"
#include "stage.h"
#include "statefile.h"
#include "bbstat.h"

/*
 * A fresh StateDir handle for each call (the one before it closed), so
 * every call opens and checks StateDir itself, as a hook call does.
 */
static cbb_statedir_t *SD(const cbb_config_t *cfg, const char *cluster)
{
	static cbb_statedir_t sd;

	cbb_statedir_close(&sd);
	cbb_statedir_init(&sd, cfg, cluster);
	return &sd;
}

static void test_key_roundtrip(void **state)
{
	cbb_key_t k = { 42, "", 3, 7, CBB_KEY_POST, 19, 0 }, back;
	char buf[CBB_KEY_MAX];

	(void)state;
	cbb_cluster_safe(k.cluster, "hpc one/x");
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
	/* a move-aside names the place it clears: PART, last */
	k.type = CBB_KEY_ASIDE;
	k.part = 2;
	cbb_key_format(buf, sizeof(buf), &k);
	assert_string_equal(buf, "SLURMJOB:42,CLUSTER:hpc_one_x,RESTART:3,"
			    "SLURMINDEX:7,SLURMTYPE:CONDUIT_ASIDE,LINE:19,PART:2");
	assert_true(cbb_key_parse(buf, &back));
	assert_memory_equal(&k, &back, sizeof(k));
	assert_false(cbb_key_parse("SLURMJOB:42,CLUSTER:c,RESTART:0,SLURMINDEX:1,"
				   "SLURMTYPE:CONDUIT_ASIDE,LINE:3", &back));
	assert_false(cbb_key_parse("SLURMJOB:42,CLUSTER:c,RESTART:0,SLURMINDEX:1,"
				   "SLURMTYPE:CONDUIT_POST,LINE:3,PART:1", &back));
	cbb_cluster_safe(k.cluster, NULL);
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
	v[2] = T("c-out\x1b[2J", CO, 1, 4, 30);
	v[2].error_message = (char *)(uintptr_t)"pftool\nexited 3\xc2\x9b";
	v[3] = T("d-foreign", "not ours", 100, 0, 1);
	cbb_buf_init(&out, 0);
	assert_int_equal(cbb_status_render(&t, NULL, 0, 5, false, &out), 0);
	/* every attempt has its rows; server text cannot drive a terminal */
	assert_string_equal(out.data,
		"DIR  LINE  ATT STATE                         FILES       BYTES          RATE  TRANSFER_ID                           ERROR\n"
		"in   4     0   TRANSFER_FINALIZED                0         0 B         0 B/s  a-old                                 \n"
		"in   4     1   TRANSFER_DATA_TRANSFERRING        2     3.0 MiB     1.5 KiB/s  b-restart1                            \n"
		"out  9     1   TRANSFER_ERROR                    0         0 B         0 B/s  c-out\\x1b[2J                          ERROR_PFTOOL_FAILED: pftool\\x0aexited 3\\xc2\\x9b\n");
	cbb_buf_reset(&out);
	assert_int_equal(cbb_status_render(&t, NULL, 0, 5, true, &out), 0);
	assert_non_null(strstr(out.data, "{\"job_id\":5,\"restart\":1,\"transfers\":[{\"direction\":\"in\",\"line\":4,\"index\":1,\"attempt\":0,\"transfer_id\":\"a-old\",\"state\":\"TRANSFER_FINALIZED\""));
	assert_non_null(strstr(out.data, "\"transfer_id\":\"c-out\\\\x1b[2J\""));
	cbb_buf_reset(&out);
	t.n = 0;
	assert_int_equal(cbb_status_render(&t, NULL, 0, 5, false, &out), 0);
	assert_string_equal(out.data, "No Conduit transfers found for Slurm job 5\n");
	cbb_buf_free(&out);
}

static void test_jobstate(void **state)
{
	cbb_job_facts_t f;

	(void)state;
	assert_int_equal(cbb_job_state_classify("PENDING"), CBB_JOB_ALIVE);
	assert_int_equal(cbb_job_state_classify("RUNNING"), CBB_JOB_ALIVE);
	assert_int_equal(cbb_job_state_classify("CANCELLED"), CBB_JOB_OVER);
	assert_int_equal(cbb_job_state_classify("COMPLETED"), CBB_JOB_OVER);
	/* a job in stage-out has finished computing */
	assert_int_equal(cbb_job_state_classify("STAGE_OUT"), CBB_JOB_OVER);
	assert_int_equal(cbb_job_state_classify("WEIRD"), CBB_JOB_UNKNOWN);

	/* rows are picked by job id; the array's own row for its id */
	assert_int_equal(cbb_job_state_parse("7 5 1 RUNNING\n5 5 2 COMPLETED\n"
					     "6 5 0 COMPLETED\n", 0, "", 5, &f),
			 CBB_JOB_OVER);
	assert_string_equal(f.state, "COMPLETED");
	assert_int_equal(f.array_job_id, 5);
	assert_true(f.array_task);
	assert_int_equal(cbb_job_state_parse("9 9 N/A PENDING\n", 0, "", 9, &f),
			 CBB_JOB_ALIVE);
	assert_false(f.array_task);
	/* Slurm's words on stderr, never the output, say a job is gone */
	assert_int_equal(cbb_job_state_parse("", 1, "slurm_load_jobs error: "
					     "Invalid job id specified\n", 9,
					     &f), CBB_JOB_GONE);
	assert_int_equal(cbb_job_state_parse("Invalid job id\n", 1, "", 9, &f),
			 CBB_JOB_UNKNOWN);
	assert_int_equal(cbb_job_state_parse("9 9 N/A PENDING\n", 1,
					     "Invalid job id", 9, &f),
			 CBB_JOB_UNKNOWN);
	assert_int_equal(cbb_job_state_parse("8 8 N/A COMPLETED\n", 0, "", 9,
					     &f), CBB_JOB_UNKNOWN);
	assert_int_equal(cbb_job_state_parse("garbage\n", 0, "", 9, &f),
			 CBB_JOB_UNKNOWN);

	/* a command that does not exist, or says nothing useful */
	assert_int_equal(cbb_job_state("/nonexistent/squeue", 1, 1000, &f),
			 CBB_JOB_UNKNOWN);
	assert_int_equal(cbb_job_state("true", 1, 1000, &f), CBB_JOB_UNKNOWN);
	/* a hung squeue is killed at the time limit */
	assert_int_equal(cbb_job_state("tests/unit/slow-squeue", 1, 300, &f),
			 CBB_JOB_UNKNOWN);
	/* killed after saying "Invalid job id": no exit status, no answer */
	assert_int_equal(cbb_job_state("tests/unit/killed-squeue", 9, 2000, &f),
			 CBB_JOB_UNKNOWN);
	assert_string_equal(f.state, "");
	/* an empty job-state directory of its own: fake-squeue logs each
	 * call in it (.calls), which must not land in the source tree */
	{
		char dir[] = "/tmp/cbb-gone-XXXXXX", calls[64];

		assert_non_null(mkdtemp(dir));
		setenv("FAKE_SQUEUE_DIR", dir, 1);
		assert_int_equal(cbb_job_state("tests/conduit/fake-squeue",
					       424242, 2000, &f), CBB_JOB_GONE);
		snprintf(calls, sizeof(calls), "%s/.calls", dir);
		unlink(calls);
		assert_int_equal(rmdir(dir), 0);
	}
}

/* One squeue for an array: does any of the given tasks still wait? */
static void test_any_alive(void **state)
{
	char dir[] = "/tmp/cbb-alive-XXXXXX", path[64];
	const uint32_t some[] = { 7, 8 }, gone[] = { 99 };
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("FAKE_SQUEUE_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/5", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("5 5 0 CANCELLED\n7 5 1 PENDING\n8 5 2 COMPLETED\n", fp);
	fclose(fp);
	assert_int_equal(cbb_any_alive("tests/conduit/fake-squeue", 5, some, 2,
				       2000), 1);
	assert_int_equal(cbb_any_alive("tests/conduit/fake-squeue", 5, some + 1,
				       1, 2000), 0);
	/* a task squeue no longer lists is over */
	assert_int_equal(cbb_any_alive("tests/conduit/fake-squeue", 5, gone, 1,
				       2000), 0);
	/* no task to ask about; squeue failing is not an answer */
	assert_int_equal(cbb_any_alive("/nonexistent/squeue", 5, some, 0, 2000),
			 0);
	assert_int_equal(cbb_any_alive("/nonexistent/squeue", 5, some, 2, 2000),
			 -1);
	assert_int_equal(cbb_any_alive("tests/unit/slow-squeue", 5, some, 2, 300),
			 -1);
	assert_int_equal(cbb_any_alive("false", 5, some, 2, 2000), -1);
	/*
	 * killed after saying "Invalid job id": there is no exit status to
	 * read, so this is no answer, never "Slurm forgot the array"
	 */
	assert_int_equal(cbb_any_alive("tests/unit/killed-squeue", 5, some, 2,
				       2000), -1);
	/* Slurm forgot the whole array */
	assert_int_equal(cbb_any_alive("tests/conduit/fake-squeue", 6, some, 2,
				       2000), 0);
	unlink(path);
	rmdir(dir);
}

static void test_percent_decode(void **state)
{
	char s[] = "no such item: %E2%80%94 100%25 sure%0Asecond %zz %";

	(void)state;
	cbb_grpc_percent_decode(s);
	assert_string_equal(s, "no such item: \xe2\x80\x94 100% sure\nsecond %zz %");
}

static cbb_rec_t R(uint32_t restart, int64_t submit, int type,
		   uint32_t attempt, uint32_t index, char kind, const char *id)
{
	cbb_rec_t r;

	memset(&r, 0, sizeof(r));
	r.restart = restart;
	r.submit = submit;
	r.type = type;
	r.attempt = attempt;
	r.index = index;
	r.made = 1000;
	r.kind = kind;
	snprintf(r.id, sizeof(r.id), "%s", id);
	return r;
}

static void test_statefile(void **state)
{
	char dir[] = "/tmp/cbb-state-XXXXXX", cmd[512], path[128];
	cbb_config_t cfg;
	cbb_recs_t recs;
	cbb_rec_t r;
	cbb_err_t err;
	time_t t1, t2;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cbb_config_defaults(&cfg);
	cfg.state_dir = strdup(dir);
	t1 = cbb_down_since(SD(&cfg, "c"), 9);
	sleep(1);
	t2 = cbb_down_since(SD(&cfg, "c"), 9);
	assert_int_equal(t1, t2); /* the first outage time is kept */
	cbb_down_clear(SD(&cfg, "c"), 9);
	assert_true(cbb_down_since(SD(&cfg, "c"), 9) > t1);

	/* records of this job (restart 1, submitted at 500) */
	cbb_err_clear(&err);
	assert_int_equal(cbb_recs_load(SD(&cfg, "c"), 9, 1, 500, &recs, &err), 0);
	assert_int_equal(recs.n, 0);
	r = R(1, 500, 0, 1, 1, 'S', "id-1");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 9, &r, 1, &err), 0);
	r = R(0, 400, 0, 0, 1, 'S', "earlier-attempt");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 9, &r, 1, &err), 0);
	/* the stage-out of attempt 0, requeued: Slurm changed the submit time */
	r = R(1, 400, 1, 0, 2, 'U', "-");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 9, &r, 1, &err), 0);
	/* an earlier job that had the same id */
	r = R(1, 77, 0, 1, 1, 'S', "other-job");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 9, &r, 1, &err), 0);
	r = R(3, 900, 0, 3, 1, 'S', "other-job-2");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 9, &r, 1, &err), 0);
	snprintf(path, sizeof(path), "%s/c.9.started", dir);
	f = fopen(path, "a");
	fputs("garbage line\nv1 1 500 0 1 1 1000 S torn", f); /* no newline */
	fclose(f);
	assert_int_equal(cbb_recs_load(SD(&cfg, "c"), 9, 1, 500, &recs, &err), 0);
	assert_int_equal(recs.n, 3);
	assert_string_equal(recs.v[0].id, "id-1");
	assert_string_equal(recs.v[1].id, "earlier-attempt");
	assert_int_equal(recs.v[2].kind, 'U');
	cbb_recs_free(&recs);
	/* what did not belong was removed from the file */
	snprintf(cmd, sizeof(cmd), "test $(wc -l < %s) = 3 && ! grep -q other %s",
		 path, path);
	assert_int_equal(system(cmd), 0);

	/* a state file that is a symbolic link is never followed */
	cbb_down_clear(SD(&cfg, "c"), 9);
	snprintf(cmd, sizeof(cmd), "ln -s /etc/passwd %s/c.9.down", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(cbb_down_since(SD(&cfg, "c"), 9), time(NULL));
	snprintf(cmd, sizeof(cmd), "ln -s /tmp/cbb-nowhere %s/c.10.started", dir);
	assert_int_equal(system(cmd), 0);
	r = R(0, 1, 0, 0, 1, 'S', "x");
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 10, &r, 1, &err), -1);
	assert_non_null(strstr(err.msg, "cannot record"));
	assert_int_equal(system("test ! -e /tmp/cbb-nowhere"), 0);
	snprintf(cmd, sizeof(cmd), "rm %s/c.9.down %s/c.10.started", dir, dir);
	assert_int_equal(system(cmd), 0);

	cbb_sd_forget(SD(&cfg, "c"), 9);
	/* what stays: the .skipped file, with the job's user and the records
	 * of what it started (a requeue after the teardown reads them) */
	snprintf(cmd, sizeof(cmd), "test \"$(ls %s)\" = c.9.skipped && "
		 "grep -q ' S id-1$' %s/c.9.skipped && rm %s/c.9.skipped && "
		 "rmdir %s", dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0); /* nothing else was left behind */
	cbb_config_free(&cfg);
}

/*
 * An array's shared lock under stress: 8 processes take it 60 times
 * each; inside, one starts the shared stage-in when no start record is
 * there, and one in four tears the array's records down (forget, under
 * the lock, as the last task's teardown does).  Nobody is ever inside
 * together with another (the forgotten lock file was unlinked while
 * others waited on it), and no stage-in is started twice without a
 * teardown in between.
 */
#define STRESS_PROCS 8
#define STRESS_ITER 60

static void stress_task(const cbb_config_t *cfg, const char *side, int who)
{
	char inside[256], logp[256], line[16];
	unsigned seed = (unsigned)getpid() * 2654435761u;
	int i, logfd;

	snprintf(inside, sizeof(inside), "%s/inside", side);
	snprintf(logp, sizeof(logp), "%s/log", side);
	logfd = open(logp, O_WRONLY | O_APPEND);
	for (i = 0; i < STRESS_ITER; i++) {
		cbb_recs_t recs;
		cbb_rec_t r;
		cbb_err_t err;
		size_t k;
		bool started = false, forget;
		int fd = cbb_shared_lock(SD(cfg, "c"), 77, NULL, 10000), m;

		if (fd < 0) {
			(void)!write(logfd, "B\n", 2);
			continue;
		}
		m = open(inside, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (m < 0)
			(void)!write(logfd, "X\n", 2); /* two inside at once */
		cbb_err_clear(&err);
		if (cbb_shared_load(SD(cfg, "c"), 77, &recs, &err) == 0) {
			for (k = 0; k < recs.n; k++)
				started = started || recs.v[k].kind == 'S';
			cbb_recs_free(&recs);
		}
		if (!started) {
			snprintf(line, sizeof(line), "S%d\n", who);
			(void)!write(logfd, line, strlen(line));
			r = R(0, 500, 3, 0, 1, 'S', "shared-1");
			(void)cbb_shared_add(SD(cfg, "c"), 77, &r, 1, &err);
		}
		usleep(rand_r(&seed) % 2000);
		forget = rand_r(&seed) % 4 == 0;
		if (forget)
			(void)!write(logfd, "F\n", 2);
		if (m >= 0) {
			close(m);
			unlink(inside);
		}
		/* the last thing before the unlock, as in array.c: once the
		 * lock file is gone a newcomer may lock a new one */
		if (forget)
			cbb_shared_forget(SD(cfg, "c"), 77);
		cbb_lock_release(fd);
		usleep(rand_r(&seed) % 500);
	}
	close(logfd);
}

static void test_shared_lock_stress(void **state)
{
	char dir[] = "/tmp/cbb-lock-XXXXXX", side[64], logp[96], cmd[256];
	char text[64 * 1024], *p, last = 'F';
	cbb_config_t cfg;
	pid_t pids[STRESS_PROCS];
	int i, st, fd, together = 0, out = 0, twice = 0, starts = 0,
	    forgets = 0;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(side, sizeof(side), "%s/side", dir);
	assert_int_equal(mkdir(side, 0700), 0);
	snprintf(logp, sizeof(logp), "%s/log", side);
	fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	cbb_config_defaults(&cfg);
	snprintf(cmd, sizeof(cmd), "%s/state", dir);
	cfg.state_dir = strdup(cmd);
	for (i = 0; i < STRESS_PROCS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			stress_task(&cfg, side, i);
			_exit(0);
		}
	}
	for (i = 0; i < STRESS_PROCS; i++) {
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	fd = open(logp, O_RDONLY);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	for (p = text; *p; p = strchr(p, '\n') + 1) {
		together += *p == 'X';
		out += *p == 'B';
		if (*p == 'S') {
			starts++;
			twice += last == 'S';
		}
		forgets += *p == 'F';
		if (*p == 'S' || *p == 'F')
			last = *p;
	}
	if (together || out || twice)
		fail_msg("%d times inside together, %d locked out, %d stage-ins "
			 "started twice, over %d starts and %d teardowns",
			 together, out, twice, starts, forgets);
	assert_true(starts >= 1 && starts <= forgets + 1);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	cbb_config_free(&cfg);
}

/* An array's records are tied to one array: submit time and uid. */
static void test_shared_identity(void **state)
{
	char dir[] = "/tmp/cbb-ident-XXXXXX", path[128], cmd[256], text[512];
	cbb_array_ident_t mine = { 1000, 61001 }, older = { 900, 61001 },
			  later = { 1100, 61001 }, other = { 1000, 61002 }, who;
	cbb_config_t cfg;
	cbb_recs_t recs;
	cbb_rec_t r;
	cbb_err_t err;
	bool foreign;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cbb_config_defaults(&cfg);
	cfg.state_dir = strdup(dir);
	cbb_err_clear(&err);
	snprintf(path, sizeof(path), "%s/c.50.shared", dir);
	/* an older conduit_bb's file (no identity): only this array's lines stay */
	f = fopen(path, "w");
	fputs("v1 0 900 3 0 1 5 S old-array\nv1 0 1000 3 0 1 5 S this-array\n"
	      "v1 0 1000 3 0 0 5 J 51\n", f);
	fclose(f);
	fd = cbb_shared_lock(SD(&cfg, "c"), 50, &mine, 0);
	assert_true(fd >= 0);
	r = R(0, 1000, 3, 0, 0, 'J', "52");
	r.has_uid = true;
	r.uid = 61001;
	assert_int_equal(cbb_shared_add(SD(&cfg, "c"), 50, &r, 1, &err), 0);
	cbb_lock_release(fd);
	f = fopen(path, "r");
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	assert_string_equal(text, "a1 1000 61001\nv1 0 1000 3 0 1 5 S this-array\n"
			    "v1 0 1000 3 0 0 5 J 51\nv2 0 1000 3 0 0 1000 J 52 61001\n");
	/* loads keep the identity line and read v2 */
	assert_int_equal(cbb_shared_load(SD(&cfg, "c"), 50, &recs, &err), 0);
	assert_int_equal(recs.n, 3);
	assert_true(recs.v[2].has_uid && recs.v[2].uid == 61001);
	cbb_recs_free(&recs);
	/* the same array again, and an older one: nothing changes */
	fd = cbb_shared_lock(SD(&cfg, "c"), 50, &mine, 0);
	cbb_lock_release(fd);
	fd = cbb_shared_lock(SD(&cfg, "c"), 50, &older, 0);
	cbb_lock_release(fd);
	assert_int_equal(cbb_shared_load_of(SD(&cfg, "c"), 50, &mine, &recs,
					    &foreign, &err), 0);
	assert_false(foreign);
	assert_int_equal(recs.n, 3);
	cbb_recs_free(&recs);
	/* another user's array, or a later one, is not this one's */
	assert_int_equal(cbb_shared_load_of(SD(&cfg, "c"), 50, &other, &recs,
					    &foreign, &err), 0);
	assert_true(foreign);
	assert_int_equal(recs.n, 0);
	cbb_recs_free(&recs);
	assert_int_equal(cbb_shared_tasks_peek(SD(&cfg, "c"), 50, &mine), 2);
	assert_int_equal(cbb_shared_tasks_peek(SD(&cfg, "c"), 50, &other), 0);
	assert_int_equal(cbb_shared_tasks_peek(SD(&cfg, "c"), 50, NULL), 0);
	/* a later array that has the id takes the file over, empty */
	fd = cbb_shared_lock(SD(&cfg, "c"), 50, &later, 0);
	cbb_lock_release(fd);
	assert_int_equal(cbb_shared_load(SD(&cfg, "c"), 50, &recs, &err), 0);
	assert_int_equal(recs.n, 0);
	cbb_recs_free(&recs);
	assert_int_equal(cbb_shared_tasks_peek(SD(&cfg, "c"), 50, &later), 0);
	/* a task's own join: of its user only */
	r = R(0, 1000, 3, 0, 0, 'J', "50");
	r.has_uid = true;
	r.uid = 61001;
	assert_int_equal(cbb_recs_add(SD(&cfg, "c"), 53, &r, 1, &err), 0);
	assert_int_equal(cbb_joined_of(SD(&cfg, "c"), 53, 61002, &who), 0);
	assert_int_equal(cbb_joined_of(SD(&cfg, "c"), 53, 61001, &who), 50);
	assert_true(who.submit == 1000 && who.uid == 61001);
	assert_int_equal(cbb_joined_array_peek(SD(&cfg, "c"), 53, &who), 50);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	cbb_config_free(&cfg);
}

/* StateDir itself: refused when others could plant files in it. */
static void test_state_dir(void **state)
{
	char dir[] = "/tmp/cbb-sd-XXXXXX", sub[64], cmd[512];
	cbb_config_t cfg;
	cbb_err_t err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/state", dir);
	cbb_config_defaults(&cfg);
	cfg.state_dir = strdup(sub);
	cbb_err_clear(&err);
	assert_int_equal(cbb_sd_check(&cfg, false, &err), -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_sd_check(&cfg, true, &err), 0); /* made 0700 */
	snprintf(cmd, sizeof(cmd), "test \"$(stat -c %%a %s)\" = 700", sub);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "chmod 0777 %s", sub);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(cbb_sd_check(&cfg, true, &err), -1);
	snprintf(cmd, sizeof(cmd), "conduit_bb: StateDir %s is writable by "
		 "group or others (chmod 0700 %s)", sub, sub);
	assert_string_equal(err.msg, cmd);
	snprintf(cmd, sizeof(cmd), "chmod 0700 %s", sub);
	assert_int_equal(system(cmd), 0);
	if (geteuid() == 0) { /* another user's directory */
		snprintf(cmd, sizeof(cmd), "chown 65534 %s", sub);
		assert_int_equal(system(cmd), 0);
		cbb_err_clear(&err);
		assert_int_equal(cbb_sd_check(&cfg, true, &err), -1);
		assert_non_null(strstr(err.msg, "belongs to uid 65534, not root "
				       "or the SlurmUser"));
	}
	/* a symbolic link to a directory is refused, not followed */
	snprintf(cmd, sizeof(cmd), "rmdir %s && mkdir -m 0700 %s/real && "
		 "ln -s %s/real %s", sub, dir, dir, sub);
	assert_int_equal(system(cmd), 0);
	cbb_err_clear(&err);
	assert_int_equal(cbb_sd_check(&cfg, true, &err), -1);
	assert_non_null(strstr(err.msg, "not a symbolic link"));
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	cbb_config_free(&cfg);
}

/* Every base state Slurm can report at stage-out, and no state at all. */
static void test_outcome(void **state)
{
	static const struct {
		bool have_state;
		uint32_t st, exit_code;
		bool known, success;
		const char *why;
	} c[] = {
		{ true, 3, 0, true, true, "exit=0" },
		{ true, 3 | 0x8000, 0, true, true, "exit=0" }, /* + a flag */
		{ true, 5, 256, true, false, "exit=1" },
		{ true, 5, 9, true, false, "signal=9" },
		{ true, 4, 0, true, false, "CANCELLED" },
		{ true, 6, 0, true, false, "TIMEOUT" },
		{ true, 7, 0, true, false, "NODE_FAIL" },
		{ true, 8, 0, true, false, "PREEMPTED" },
		{ true, 11, 0, true, false, "OUT_OF_MEMORY" },
		{ true, 0, 0, true, false, "requeued" },
		{ true, 1, 0, false, false, "unknown" },  /* RUNNING */
		{ true, 12, 0, false, false, "unknown" }, /* a future state */
		{ false, 3, 0, false, false, "unknown" },
	};
	cbb_outcome_t o;
	char text[48];
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cbb_outcome(c[i].have_state, c[i].st, true, c[i].exit_code, &o);
		assert_int_equal(o.known, c[i].known);
		assert_int_equal(o.success, c[i].success);
		assert_string_equal(o.why, c[i].why);
		/* unknown runs everything; known runs what --when= says */
		assert_true(cbb_when_runs(CBB_WHEN_ALWAYS, &o));
		assert_int_equal(cbb_when_runs(CBB_WHEN_SUCCESS, &o),
				 !o.known || o.success);
		assert_int_equal(cbb_when_runs(CBB_WHEN_FAILURE, &o),
				 !o.known || !o.success);
	}
	cbb_outcome_text("exit=1", text, sizeof(text));
	assert_string_equal(text, "job exit 1");
	cbb_outcome_text("signal=9", text, sizeof(text));
	assert_string_equal(text, "job killed by signal 9");
	cbb_outcome_text("TIMEOUT", text, sizeof(text));
	assert_string_equal(text, "job TIMEOUT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_roundtrip),
		cmocka_unit_test(test_key_regex),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_jobstate),
		cmocka_unit_test(test_any_alive),
		cmocka_unit_test(test_percent_decode),
		cmocka_unit_test(test_statefile),
		cmocka_unit_test(test_state_dir),
		cmocka_unit_test(test_shared_lock_stress),
		cmocka_unit_test(test_shared_identity),
		cmocka_unit_test(test_outcome),
	};
	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}

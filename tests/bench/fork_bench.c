/*
 * fork_bench.c - the hooks measured the way Slurm runs them (measures,
 * asserts nothing): one new process per hook call, a fresh Lua state in
 * it, require("conduit_bb"), the one hook, lua_close, exit.
 *
 *   fork_bench MODE WORK_DIR SERVER_DIR SQUEUE_LOG REPS MODULE_DIR [MODULE_DIR_B]
 *
 * MODE fork: the process is a fork of this one (slurmscriptd before
 * 24.11: liblua already mapped, the module not).  MODE exec: the fork
 * execs this program again (24.11 on: slurmscriptd fork+execs the
 * slurmctld binary as a script launcher, which maps liblua and the module
 * anew).  Wall is from before fork() to after waitpid(); CPU is the
 * child's user+sys time from wait4().  "floor" is the same process doing
 * everything but the hook: state, require, close, exit.
 *
 * For N = 1, 100, 500 stage-in directives each hook runs REPS times and
 * the median is printed.  The polls (test_data_in) run while all N
 * transfers are running on the server (its DATA_TRANSFERRING state is
 * held), as during a stage-in.  With MODULE_DIR_B the two modules run
 * in turn, call by call (A B A B ...), each on a job of its own, and the
 * median of the per-pair ratios A/B is printed beside them.  squeue runs
 * are counted from SQUEUE_LOG (the stand-in squeue appends a line to it).
 * CBB_CONF_B names another conduit_bb.conf for module B (the same build
 * with other settings, say).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hook_host.h"

#define MAXREPS 201

static const char *work, *server_dir, *squeue_log;
static long submitted; /* every job's submit time: when the bench began */
static int exec_mode;
static const char *conf_b; /* CBB_CONF_B: module B's conduit_bb.conf */
static const char *conf_round; /* the shared-poll round's conduit_bb.conf */
static char self[4096];

typedef struct {
	const char *hook;    /* slurm_bb_... or "floor" */
	const char *mod_dir;
	long job_id;
	const char *script;
	int with_state;      /* job_info carries job_state */
} call_t;

/* A job_info table like the one Slurm passes (the fields read). */
static void push_job_info(lua_State *L, long job_id, int with_state)
{
	lua_newtable(L);
	lua_pushinteger(L, job_id);
	lua_setfield(L, -2, "job_id");
	lua_pushinteger(L, 61001);
	lua_setfield(L, -2, "user_id");
	lua_pushinteger(L, 61001);
	lua_setfield(L, -2, "group_id");
	lua_pushstring(L, "cbbuser");
	lua_setfield(L, -2, "user_name");
	lua_pushstring(L, work);
	lua_setfield(L, -2, "work_dir");
	lua_pushstring(L, "bench");
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, 0);
	lua_setfield(L, -2, "restart_cnt");
	lua_pushinteger(L, (lua_Integer)submitted);
	lua_setfield(L, -2, "submit_time");
	if (with_state) {
		lua_pushinteger(L, 0); /* JOB_PENDING: staging in */
		lua_setfield(L, -2, "job_state");
	}
}

/* The child's whole life: what a hook process does.  Returns its exit status. */
static int child(const call_t *c)
{
	lua_State *L = luaL_newstate();
	char jid[32], pathfile[1024];
	int nargs = 0, rc = 0;
	const char *h = c->hook;

	hh_setup_state(L, c->mod_dir, "bench");
	if (luaL_dostring(L, "require('conduit_bb')") != 0) {
		fprintf(stderr, "require: %s\n", lua_tostring(L, -1));
		return 3;
	}
	if (strcmp(h, "floor")) {
		snprintf(jid, sizeof(jid), "%ld", c->job_id);
		lua_getglobal(L, h);
		if (!strcmp(h, "slurm_bb_job_process")) {
			lua_pushstring(L, c->script);
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			push_job_info(L, c->job_id, c->with_state);
			nargs = 4;
		} else if (!strcmp(h, "slurm_bb_get_status")) {
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			lua_pushstring(L, "conduit");
			lua_pushstring(L, jid);
			nargs = 4;
		} else if (!strcmp(h, "slurm_bb_job_teardown")) {
			lua_pushstring(L, jid);
			lua_pushstring(L, c->script);
			lua_pushstring(L, "false");
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			nargs = 5;
		} else if (!strcmp(h, "slurm_bb_setup")) {
			lua_pushstring(L, jid);
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			lua_pushstring(L, "(null)");
			lua_pushstring(L, "0");
			lua_pushstring(L, c->script);
			push_job_info(L, c->job_id, c->with_state);
			nargs = 7;
		} else if (!strcmp(h, "slurm_bb_real_size")) {
			lua_pushstring(L, jid);
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			push_job_info(L, c->job_id, c->with_state);
			nargs = 4;
		} else if (!strcmp(h, "slurm_bb_paths")) {
			snprintf(pathfile, sizeof(pathfile), "%s/paths-%ld", work,
				 c->job_id);
			lua_pushstring(L, jid);
			lua_pushstring(L, c->script);
			lua_pushstring(L, pathfile);
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			push_job_info(L, c->job_id, c->with_state);
			nargs = 6;
		} else { /* data_in, test_data_in, pre_run, post_run, ... */
			lua_pushstring(L, jid);
			lua_pushstring(L, c->script);
			lua_pushstring(L, "61001");
			lua_pushstring(L, "61001");
			push_job_info(L, c->job_id, c->with_state);
			nargs = 5;
		}
		lua_call(L, nargs, 2);
		if (lua_tointeger(L, -2) != 0) {
			fprintf(stderr, "%s: %s\n", h, lua_tostring(L, -1));
			rc = 1;
		} else if (lua_isstring(L, -1) &&
			   !strcmp(lua_tostring(L, -1), "BUSY")) {
			rc = 10; /* busy: still staging */
		}
	}
	lua_close(L);
	return rc;
}

typedef struct {
	double wall, cpu;
	int status;
} run_t;

static int nmods;
static const char *mods[2];

static double now_ms(void)
{
	return hh_now_ms();
}

static run_t run(const call_t *c)
{
	run_t r = { 0, 0, -1 };
	struct rusage ru;
	double t0;
	int st = 0;
	pid_t pid;

	fflush(NULL); /* the child must not print our buffers again */
	t0 = now_ms();
	pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (conf_b && c->mod_dir == mods[1])
			setenv("CONDUIT_BB_CONF", conf_b, 1);
		if (conf_round)
			setenv("CONDUIT_BB_CONF", conf_round, 1);
		if (exec_mode) {
			char jid[32], ws[8], sub[32];

			snprintf(jid, sizeof(jid), "%ld", c->job_id);
			snprintf(ws, sizeof(ws), "%d", c->with_state);
			snprintf(sub, sizeof(sub), "%ld", submitted);
			execl(self, self, "--child", c->hook, c->mod_dir, jid,
			      c->script, ws, work, sub, (char *)NULL);
			_exit(127);
		}
		exit(child(c)); /* exit, not _exit: atexit handlers run */
	}
	while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	r.wall = now_ms() - t0;
	r.cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return r;
}

static long lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static void faults(const char *json)
{
	char path[1024], tmp[1100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/faults.json", server_dir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f) {
		perror(tmp);
		exit(1);
	}
	fputs(json, f);
	fclose(f);
	rename(tmp, path);
}


/* One row: each module's median wall and CPU, and the paired ratios. */
static void measure(const char *label, const char *hook, long job_id[2],
		    const char *script, int with_state, int reps,
		    int want_status)
{
	double w[2][MAXREPS], c[2][MAXREPS], rw[MAXREPS], rc[MAXREPS];
	long sq0 = lines_of(squeue_log), bad = 0;
	int i, m;

	for (i = 0; i < reps; i++) {
		for (m = 0; m < nmods; m++) {
			call_t cl = { hook, mods[m], job_id[m], script, with_state };
			run_t r = run(&cl);

			if (r.status != want_status && !(want_status == -1 &&
							 (r.status == 0 || r.status == 10)))
				bad++;
			w[m][i] = r.wall;
			c[m][i] = r.cpu;
		}
		if (nmods == 2) {
			rw[i] = w[0][i] / w[1][i];
			rc[i] = c[0][i] / (c[1][i] > 0 ? c[1][i] : 1e-3);
		}
	}
	printf("| %s | %.2f | %.2f |", label, hh_median(w[0], reps), hh_median(c[0], reps));
	if (nmods == 2)
		printf(" %.2f | %.2f | %.2f | %.2f |", hh_median(w[1], reps),
		       hh_median(c[1], reps), hh_median(rw, reps), hh_median(rc, reps));
	printf(" %.2f |", (double)(lines_of(squeue_log) - sq0) / (reps * nmods));
	if (bad)
		printf(" (%ld calls ended otherwise than expected)", bad);
	printf("\n");
	fflush(stdout);
}

static void write_script(const char *path, int n);

static long count_in(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	long n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* conduit_bb.conf with one more line, for the round's child processes */
static const char *conf_with(const char *line, const char *name)
{
	static char paths[2][1100];
	static int k;
	const char *base = getenv("CONDUIT_BB_CONF");
	char *path = paths[k++ % 2], buf[4096];
	FILE *in = base ? fopen(base, "r") : NULL, *out;
	size_t n;

	snprintf(path, sizeof(paths[0]), "%s/conduit_bb-%s.conf", work, name);
	out = fopen(path, "w");
	if (!in || !out) {
		perror(path);
		exit(1);
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fprintf(out, "%s\n", line);
	fclose(in);
	fclose(out);
	return path;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Shared polls (docs/performance.md): `jobs` staging jobs of one user, 50
 * directives each, their transfers held running; after a warm-up (until a
 * round of polls starts nothing more), one round of polls, one per job,
 * with PollShare=0 and with PollShare=10.  Prints each round's CPU per
 * poll and its Queries; cpu0, cpu_net and cpu_shared return the means the
 * model needs: a poll without sharing, the round's first (the Query for
 * all) and the others.
 */
static void round_of(int jobs, long first_id, double *cpu0, double *cpu_net,
		     double *cpu_shared)
{
	char script[1024], rpclog[1100], statefiles[1200];
	const char *off = conf_with("PollShare=0", "share-off");
	const char *on = conf_with("PollShare=10", "share-on");
	double cpu[256];
	int k, w, pass;

	snprintf(script, sizeof(script), "%s/round-50.sh", work);
	write_script(script, 50);
	snprintf(rpclog, sizeof(rpclog), "%s/rpc.log", server_dir);
	faults("{\"step_ms\": 1, \"delay_ms\": {\"DATA_TRANSFERRING\": 3600000}}");
	/* (with sharing on: each hook marks its job as staging, as in a
	 * cluster where every staging job is polled every PollInterval) */
	conf_round = on;
	for (k = 0; k < jobs; k++) {
		call_t cl = { "slurm_bb_data_in", mods[0], first_id + k, script, 1 };

		run(&cl);
	}
	/* warm-up: until a round starts and validates nothing more */
	for (w = 0; w < 20; w++) {
		long before = count_in(rpclog, "Transfer\"");

		for (k = 0; k < jobs; k++) {
			call_t cl = { "slurm_bb_test_data_in", mods[0],
				      first_id + k, script, 1 };

			run(&cl);
		}
		if (count_in(rpclog, "Transfer\"") == before)
			break;
	}
	sleep(2); /* past the second of the last start */
	for (pass = 0; pass < 2; pass++) {
		long q0 = count_in(rpclog, "\"method\": \"Query\"");
		double sum = 0, sumw = 0, sorted[256];
		int bad = 0;

		conf_round = pass ? on : off;
		/* (no reply saved from before: the round's first poll asks) */
		snprintf(statefiles, sizeof(statefiles), "rm -f %s/../state/*.poll",
			 work);
		if (system(statefiles) != 0)
			bad++;
		for (k = 0; k < jobs; k++) {
			call_t cl = { "slurm_bb_test_data_in", mods[0],
				      first_id + k, script, 1 };
			run_t r = run(&cl);

			bad += r.status != 10;
			cpu[k] = r.cpu;
			sum += r.cpu;
			sumw += r.wall;
		}
		memcpy(sorted, cpu, (size_t)jobs * sizeof(double));
		qsort(sorted, (size_t)jobs, sizeof(double), by_value);
		printf("| %d × 50 | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %ld |%s\n",
		       jobs, pass ? "10" : "0 (off)", sum / jobs,
		       sorted[jobs / 2], cpu[0], jobs > 1 ?
		       (sum - cpu[0]) / (jobs - 1) : 0.0, sumw / jobs,
		       count_in(rpclog, "\"method\": \"Query\"") - q0,
		       bad ? " (some polls did not answer BUSY)" : "");
		if (!pass)
			*cpu0 = sum / jobs;
		else {
			*cpu_net = cpu[0];
			*cpu_shared = jobs > 1 ? (sum - cpu[0]) / (jobs - 1) : 0;
		}
	}
	conf_round = NULL;
	faults("{\"step_ms\": 1}");
}

static void write_script(const char *path, int n)
{
	if (hh_write_script(path, work, n) < 0) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1, 100, 500 };
	long base = 700000 + (long)(time(NULL) % 5000) * 20;
	int reps, m;
	size_t s;

	if (argc == 9 && !strcmp(argv[1], "--child")) {
		call_t c = { argv[2], argv[3], atol(argv[4]), argv[5],
			     atoi(argv[6]) };

		work = argv[7];
		submitted = atol(argv[8]);
		return child(&c);
	}
	submitted = (long)time(NULL) - 5;
	if (argc < 7 || argc > 8) {
		fprintf(stderr, "usage: fork_bench fork|exec WORK_DIR SERVER_DIR "
			"SQUEUE_LOG REPS MODULE_DIR [MODULE_DIR_B]\n");
		return 2;
	}
	exec_mode = !strcmp(argv[1], "exec");
	conf_b = getenv("CBB_CONF_B");
	work = argv[2];
	server_dir = argv[3];
	squeue_log = argv[4];
	reps = atoi(argv[5]);
	if (reps < 1 || reps > MAXREPS)
		reps = 21;
	mods[0] = argv[6];
	mods[1] = argc == 8 ? argv[7] : NULL;
	nmods = argc == 8 ? 2 : 1;
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0) {
		perror("readlink");
		return 1;
	}

	printf("Model: %s; medians of %d calls per row; wall and CPU in ms%s.\n\n",
	       exec_mode ? "fork+exec per hook call (Slurm 24.11 on)" :
			   "fork per hook call (slurmscriptd before 24.11)",
	       reps, nmods == 2 ? "; A and B run in turn, call by call" : "");
	printf("| N, hook | wall | CPU |%s squeue runs per call |\n",
	       nmods == 2 ? " B wall | B CPU | A/B wall | A/B CPU |" : "");
	printf("|---|---|---|%s---|\n", nmods == 2 ? "---|---|---|---|" : "");
	/* (CBB_BENCH_ROUND_ONLY: the shared-poll round alone) */
	for (s = getenv("CBB_BENCH_ROUND_ONLY") ? sizeof(sizes) / sizeof(sizes[0]) : 0;
	     s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], r = n >= 500 ? (reps + 1) / 2 : reps, i;
		long job[2], none[2];
		char script[1024], label[64];

		if (r < 1)
			r = 1;
		for (m = 0; m < 2; m++) {
			job[m] = base + (long)s * 4 + m;
			none[m] = base + 1000000 + (long)s * 4 + m; /* no records */
		}
		snprintf(script, sizeof(script), "%s/fork-bench-%d.sh", work, n);
		write_script(script, n);
#define ROW(name, hook, jobs, ws, st) \
	do { \
		snprintf(label, sizeof(label), "%d, %s", n, name); \
		measure(label, hook, jobs, script, ws, r, st); \
	} while (0)
		if (n == 1)
			ROW("floor (require only)", "floor", job, 1, 0);
		ROW("job_process", "slurm_bb_job_process", job, 1, 0);
		ROW("setup", "slurm_bb_setup", job, 1, 0);
		ROW("real_size", "slurm_bb_real_size", job, 1, 0);
		ROW("pre_run", "slurm_bb_pre_run", job, 1, 0);
		ROW("post_run", "slurm_bb_post_run", job, 1, 0);
		ROW("paths", "slurm_bb_paths", job, 1, 0);
		ROW("teardown (no hurry, nothing staged)", "slurm_bb_job_teardown",
		    none, 1, 0);
		/* the transfers stay DATA_TRANSFERRING while the polls run */
		faults("{\"step_ms\": 1, \"delay_ms\": {\"DATA_TRANSFERRING\": 3600000}}");
		for (m = 0; m < nmods; m++) {
			call_t cl = { "slurm_bb_data_in", mods[m], job[m], script, 1 };
			run_t d = run(&cl);

			printf("| %d, data_in (one call%s) | %.2f | %.2f |%s |\n", n,
			       nmods == 2 ? (m ? ", B" : ", A") : "", d.wall, d.cpu,
			       nmods == 2 ? " | | | | " : " -");
		}
		usleep(300000); /* every transfer visible and running */
		ROW("test_data_in (poll, N running)", "slurm_bb_test_data_in",
		    job, 1, 10);
		if (n == 100)
			ROW("test_data_in, job_info without job_state",
			    "slurm_bb_test_data_in", job, 0, 10);
		ROW("get_status", "slurm_bb_get_status", job, 1, 0);
		/* let them finish, and poll until done (not measured) */
		faults("{\"step_ms\": 1}");
		for (m = 0; m < nmods; m++) {
			for (i = 0; i < 600; i++) {
				call_t cl = { "slurm_bb_test_data_in", mods[m],
					      job[m], script, 1 };

				if (run(&cl).status != 10)
					break;
				usleep(100000);
			}
		}
	}
	if (nmods == 1 && !getenv("CBB_BENCH_NO_ROUND")) {
		double c0 = 0, cn = 0, cs = 0, m0, m1;

		printf("\n### Shared polls: one round of polls of one user's "
		       "staging jobs (%s)\n\n", exec_mode ? "fork+exec" : "fork");
		printf("Each poll a new process, all within the window; CPU in ms "
		       "(first: the round's first poll, which asks for all; rest: "
		       "the mean of the others).\n\n");
		printf("| jobs × directives | PollShare | mean CPU | median CPU | "
		       "first CPU | rest CPU | mean wall | Queries |\n");
		printf("|---|---|---|---|---|---|---|---|\n");
		round_of(20, base + 3000000, &c0, &cn, &cs);
		round_of(50, base + 3001000, &c0, &cn, &cs);
		/* 1000 staging jobs of 20 users (50 each), PollInterval=15 s:
		 * 66.7 polls a second; with sharing each user's pass is one
		 * Query for 50 jobs and 49 polls from the saved reply */
		m0 = 1000.0 / 15 * c0 / 1000;
		m1 = 20.0 / 15 * (cn + 49 * cs) / 1000;
		printf("\nModel, 1000 staging jobs of 20 users, PollInterval=15 s "
		       "(from the 50-job round): PollShare=0: %.2f CPU-s per s, "
		       "%d Queries a minute; PollShare=10: %.2f CPU-s per s, %d "
		       "Queries a minute.\n", m0, 4000, m1, 80);
	}
	return 0;
}

/*
 * bench.c - measure the hooks (not a test: it asserts nothing).
 *
 *   bench MODULE_DIR SERVER_DIR WORK_DIR
 *
 * For N = 1, 10, 100, 500 directives: wall time of job_process (median
 * of many calls), data_in (one call: N StartTransfer on one connection),
 * test_data_in and get_status (medians), and the RPCs each made, counted
 * from the Conduit test server's own log.  Each call gets a fresh Lua
 * state loading the module, as under Slurm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "hook_host.h"

static const char *mod_dir, *server_dir, *work;

static int job_info_index(lua_State *L)
{
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "job_id"))
		lua_pushinteger(L, (lua_Integer)lua_tointeger(L, lua_upvalueindex(1)));
	else if (!strcmp(k, "user_id"))
		lua_pushinteger(L, 61001);
	else if (!strcmp(k, "work_dir"))
		lua_pushstring(L, work);
	else if (!strcmp(k, "restart_cnt"))
		lua_pushinteger(L, 0);
	else
		lua_pushnil(L);
	return 1;
}

/* Call one hook in a fresh state; returns ms, and whether it said BUSY. */
static double call(const char *hook, const char *const *args, int nargs,
		   long job_id, int *busy, int *rc)
{
	lua_State *L = luaL_newstate();
	double t0, t1;
	int i;

	hh_setup_state(L, mod_dir, "bench");

	t0 = hh_now_ms();
	if (luaL_dostring(L, "require('conduit_bb')") != 0) {
		fprintf(stderr, "%s\n", lua_tostring(L, -1));
		exit(1);
	}
	lua_getglobal(L, hook);
	for (i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	if (strcmp(hook, "slurm_bb_get_status")) {
		lua_newtable(L);
		lua_newtable(L);
		lua_pushinteger(L, job_id);
		lua_pushcclosure(L, job_info_index, 1);
		lua_setfield(L, -2, "__index");
		lua_setmetatable(L, -2);
		nargs++;
	}
	lua_call(L, nargs, 2);
	t1 = hh_now_ms();
	*rc = (int)lua_tointeger(L, 1);
	*busy = lua_isstring(L, 2) && !strcmp(lua_tostring(L, 2), "BUSY");
	if (*rc != 0)
		fprintf(stderr, "%s: %s\n", hook, lua_tostring(L, 2));
	lua_close(L);
	return t1 - t0;
}

/* RPCs of `method` in the server's log, and their server-side ms. */
static long rpc_count_ms(const char *method, double *ms)
{
	char path[1024], line[65536], pat[64];
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rpc.log", server_dir);
	snprintf(pat, sizeof(pat), "\"method\": \"%s\"", method);
	if (ms)
		*ms = 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *m;

		if (!strstr(line, pat))
			continue;
		n++;
		if (ms && (m = strstr(line, "\"ms\": ")))
			*ms += atof(m + 6);
	}
	fclose(f);
	return n;
}

static long rpc_count(const char *method)
{
	return rpc_count_ms(method, NULL);
}

/* The server log's size: a mark to count from. */
static long log_mark(void)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/rpc.log", server_dir);
	return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Distinct client connections (address:port) of the RPCs since mark. */
static int connections_since(long mark)
{
	char path[1024], line[65536], peers[64][64];
	int n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/rpc.log", server_dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	fseek(f, mark, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "\"peer\": \"");
		char peer[64];
		size_t k;

		if (!p)
			continue;
		p += 9;
		k = strcspn(p, "\"");
		if (k >= sizeof(peer))
			k = sizeof(peer) - 1;
		memcpy(peer, p, k);
		peer[k] = '\0';
		for (i = 0; i < n && strcmp(peers[i], peer); i++)
			;
		if (i == n && n < 64)
			strcpy(peers[n++], peer);
	}
	fclose(f);
	return n;
}

/* CPU seconds this process has used (the hook runs in it). */
static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 1, 10, 100, 500 };
	double t[200], cpu100 = 0;
	long job_id = 900000 + (long)(time(NULL) % 10000) * 10;
	size_t s;

	if (argc != 4)
		return 2;
	mod_dir = argv[1];
	server_dir = argv[2];
	work = argv[3];
	printf("| directives | job_process (local) | data_in | StartTransfer RPCs "
	       "(server time, summed) | Query RPCs | test_data_in, median "
	       "(server's share) | Query RPCs per poll | connections per poll "
	       "| hook CPU per poll | get_status |\n"
	       "|---|---|---|---|---|---|---|---|---|---|\n");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s], i, busy, rc, reps;
		char script[1024], jid[32];
		const char *args[5];
		long q0, st0, polls = 0, qpoll, qsum = 0, conns = 0;
		double dj, din, tdi, gs, tsrv, srv[200], start_srv0, start_srv1;
		double cpu[200], tcpu;

		job_id++;
		snprintf(jid, sizeof(jid), "%ld", job_id);
		snprintf(script, sizeof(script), "%s/bench-%d.sh", work, n);
		if (hh_write_script(script, work, n) < 0) {
			perror(script);
			return 1;
		}

		/* job_process: local parse, median of many fresh-state calls */
		reps = n >= 100 ? 50 : 200;
		args[0] = script;
		args[1] = "61001";
		args[2] = "61001";
		for (i = 0; i < reps && i < 200; i++)
			t[i] = call("slurm_bb_job_process", args, 3, job_id, &busy, &rc);
		dj = hh_median(t, reps < 200 ? reps : 200);

		args[0] = jid;
		args[1] = script;
		args[2] = "61001";
		args[3] = "61001";
		q0 = rpc_count("Query");
		st0 = rpc_count_ms("StartTransfer", &start_srv0);
		din = call("slurm_bb_data_in", args, 4, job_id, &busy, &rc);
		st0 = rpc_count_ms("StartTransfer", &start_srv1) - st0;
		q0 = rpc_count("Query") - q0;

		/* poll until done; time every poll, minus the server's share */
		for (i = 0; i < 200; i++) {
			double s0, s1, c0;
			long mark = log_mark();

			rpc_count_ms("Query", &s0);
			qpoll = rpc_count("Query");
			c0 = cpu_ms();
			t[i] = call("slurm_bb_test_data_in", args, 4, job_id, &busy, &rc);
			cpu[i] = cpu_ms() - c0;
			conns += connections_since(mark);
			rpc_count_ms("Query", &s1);
			qpoll = rpc_count("Query") - qpoll;
			srv[i] = s1 - s0;
			qsum += qpoll;
			polls++;
			if (!busy)
				break;
			usleep(200000);
		}
		tdi = hh_median(t, (int)polls);
		tsrv = hh_median(srv, (int)polls);
		tcpu = hh_median(cpu, (int)polls);
		if (n == 100)
			cpu100 = tcpu;

		args[0] = "61001";
		args[1] = "61001";
		args[2] = "conduit";
		args[3] = jid;
		for (i = 0; i < 10; i++)
			t[i] = call("slurm_bb_get_status", args, 4, job_id, &busy, &rc);
		gs = hh_median(t, 10);
		printf("| %d | %.2f ms | %.1f ms | %ld (%.0f ms) | %ld | %.1f ms (%.1f ms) "
		       "| %.2f | %.2f | %.1f ms | %.1f ms |\n", n, dj, din, st0,
		       start_srv1 - start_srv0, q0, tdi, tsrv,
		       (double)qsum / (double)polls,
		       (double)conns / (double)polls, tcpu, gs);
		fflush(stdout);
	}
	/* Slurm polls each staging job every PollInterval, one process each */
	printf("\nModelled: 1000 staging jobs (100 directives each) polled every "
	       "15 s = %.1f polls/s x %.1f ms of hook CPU = %.0f%% of one core "
	       "on the controller host (the hook's own work, Lua state included; "
	       "slurmscriptd's fork of each hook process comes on top).\n",
	       1000.0 / 15, cpu100, 1000.0 / 15 * cpu100 / 10.0);
	return 0;
}

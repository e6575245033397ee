/*
 * hook_loop.c - call burst_buffer.lua hooks the way slurmctld does, many
 * times, and show that memory and file descriptors stay flat.
 *
 *   hook_loop MODULE_DIR SHIM GOOD_SCRIPT BAD_SCRIPT ITERATIONS THREADS
 *
 * Every call builds a fresh lua_State (luaL_newstate + luaL_openlibs),
 * installs a `slurm` table, runs the shim (which requires conduit_bb, so
 * the module is dlopen'ed and, on lua_close, dlclose'd), calls one hook
 * with a job_info proxy whose fields come from an __index C function (as
 * Slurm's does), checks the result, and closes the state.  Calls
 * alternate between job_process on a good script, job_process on a bad
 * one, and pools, in THREADS threads at once.
 *
 * HOOK_LOOP_NO_RSS=1 skips the RSS bound (for runs under valgrind, whose
 * own bookkeeping grows; valgrind checks for leaks instead).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/hook_host.h"

static const char *mod_dir, *shim, *good, *bad;

static int job_info_index(lua_State *L)
{
	const char *k = luaL_checkstring(L, 2);

	if (!strcmp(k, "job_id"))
		lua_pushinteger(L, 4242);
	else if (!strcmp(k, "user_id"))
		lua_pushinteger(L, 1000);
	else if (!strcmp(k, "work_dir"))
		lua_pushstring(L, "/home/user");
	else if (!strcmp(k, "name"))
		lua_pushstring(L, "stress");
	else if (!strcmp(k, "user_name"))
		lua_pushstring(L, "user");
	else if (!strcmp(k, "array_task_id"))
		lua_pushinteger(L, 4294967294LL);
	else
		lua_pushnil(L);
	return 1;
}

static void setup_state(lua_State *L)
{
	hh_setup_state(L, mod_dir, "stress");
}

static void push_job_info(lua_State *L)
{
	lua_newtable(L);
	lua_newtable(L);
	lua_pushcfunction(L, job_info_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, -2);
}

/* One hook call in a fresh state; returns 0 when the result is right. */
static int one_call(long i)
{
	lua_State *L = luaL_newstate();
	int kind = (int)(i % 3), ok = 0;

	if (!L)
		return -1;
	setup_state(L);
	if (luaL_dofile(L, shim) != 0) {
		fprintf(stderr, "shim: %s\n", lua_tostring(L, -1));
		lua_close(L);
		return -1;
	}
	if (kind == 2) {
		lua_getglobal(L, "slurm_bb_pools");
		if (lua_pcall(L, 0, LUA_MULTRET, 0) == 0)
			ok = lua_gettop(L) == 1 && lua_tonumber(L, 1) == 0;
	} else {
		lua_getglobal(L, "slurm_bb_job_process");
		lua_pushstring(L, kind == 0 ? good : bad);
		lua_pushstring(L, "1000");
		lua_pushstring(L, "1000");
		push_job_info(L);
		if (lua_pcall(L, 4, LUA_MULTRET, 0) == 0 && lua_gettop(L) == 2 &&
		    lua_isstring(L, 2))
			ok = lua_tonumber(L, 1) == (kind == 0 ? 0 : -1);
	}
	if (!ok && i < 3) /* report the first few only */
		fprintf(stderr, "call %ld (kind %d) gave an unexpected result: "
			"%s\n", i, kind, lua_tostring(L, -1));
	lua_close(L);
	return ok ? 0 : -1;
}

static void *worker(void *arg)
{
	long i, n = (long)(size_t)arg, bad_calls = 0;

	for (i = 0; i < n; i++)
		bad_calls += one_call(i) != 0;
	return (void *)(size_t)bad_calls;
}

static long run(long n, int nthreads)
{
	pthread_t t[16];
	long bad_calls = 0;
	void *r;
	int k;

	for (k = 0; k < nthreads; k++)
		pthread_create(&t[k], NULL, worker,
			       (void *)(size_t)(n / nthreads));
	for (k = 0; k < nthreads; k++) {
		pthread_join(t[k], &r);
		bad_calls += (long)(size_t)r;
	}
	return bad_calls;
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	long iterations, warm, half, rss0, rss_mid, rss1, failures;
	int nthreads, fd0, fd1;

	if (argc != 7) {
		fprintf(stderr, "usage: hook_loop MODULE_DIR SHIM GOOD BAD "
			"ITERATIONS THREADS\n");
		return 2;
	}
	mod_dir = argv[1];
	shim = argv[2];
	good = argv[3];
	bad = argv[4];
	iterations = atol(argv[5]);
	nthreads = atoi(argv[6]);
	if (nthreads < 1 || nthreads > 16 || iterations < 100)
		return 2;

	warm = iterations / 10 < 1000 ? iterations / 10 : 1000;
	half = (iterations - warm) / 2;
	failures = run(warm, nthreads);
	rss0 = rss_kib();
	fd0 = open_fds();
	failures += run(half, nthreads);
	rss_mid = rss_kib();
	failures += run(iterations - warm - half, nthreads);
	rss1 = rss_kib();
	fd1 = open_fds();
	printf("calls=%ld threads=%d rss_after_warmup=%ld KiB rss_half=%ld KiB "
	       "rss_end=%ld KiB fds_after_warmup=%d fds_end=%d "
	       "failed_calls=%ld\n", iterations, nthreads, rss0, rss_mid, rss1,
	       fd0, fd1, failures);
	if (failures)
		return 1;
	if (fd1 != fd0) {
		fprintf(stderr, "file descriptors leaked\n");
		return 1;
	}
	if (getenv("HOOK_LOOP_NO_RSS"))
		return 0;
	/*
	 * Allocator arenas settle during the first half; the second half
	 * must be flat (a leak of 8 bytes a call over 50,000 calls is 390
	 * KiB), and the whole run stays within 1 MiB of the warm-up.
	 */
	if (rss1 - rss_mid > 256 || rss1 - rss0 > 1024) {
		fprintf(stderr, "RSS grew: %ld KiB in the second half, %ld KiB "
			"in all\n", rss1 - rss_mid, rss1 - rss0);
		return 1;
	}
	return 0;
}

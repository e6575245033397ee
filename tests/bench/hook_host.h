/*
 * hook_host.h - what the measuring and stress programs need to call
 * conduit_bb's hooks the way Slurm does: a fresh Lua state with the
 * standard libraries, package.cpath at the module's directory, and a
 * `slurm` table whose logging goes nowhere; medians and the benches' job
 * script.  Header-only (static), for tests/bench/bench.c, fork_bench.c,
 * vs_reference.c and tests/stress/hook_loop.c.
 */
#ifndef CBB_HOOK_HOST_H
#define CBB_HOOK_HOST_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static inline double hh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int hh_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of n values (sorts them); 0 for none. */
static inline double hh_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), hh_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The benches' job script: n stage-in directives, each copying
 * WORK/src/data set to a directory of its own.  -1 when it cannot be
 * written.
 */
static inline int hh_write_script(const char *path, const char *work, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return -1;
	fprintf(f, "#!/bin/bash\n#SBATCH -N 1\n");
	for (i = 0; i < n; i++)
		fprintf(f, "#CONDUIT_PRE cp -r '%s/src/data set' %s/dst/%d-%%j/\n",
			work, work, i);
	fprintf(f, "srun ./app\n");
	return fclose(f) == 0 ? 0 : -1;
}

static inline int hh_nolog(lua_State *L)
{
	(void)L;
	return 0;
}

/* openlibs, cpath, and slurm = { log..., SUCCESS, ERROR, CLUSTER_NAME } */
static inline void hh_setup_state(lua_State *L, const char *mod_dir,
			   const char *cluster)
{
	static const char *const logs[] = { "log", "error", "log_debug",
					    "log_info", "log_error",
					    "log_verbose", "log_user" };
	char cpath[1024];
	size_t i;

	luaL_openlibs(L);
	lua_getglobal(L, "package");
	snprintf(cpath, sizeof(cpath), "%s/?.so", mod_dir);
	lua_pushstring(L, cpath);
	lua_setfield(L, -2, "cpath");
	lua_pop(L, 1);
	lua_newtable(L);
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		lua_pushcfunction(L, hh_nolog);
		lua_setfield(L, -2, logs[i]);
	}
	lua_pushinteger(L, 0);
	lua_setfield(L, -2, "SUCCESS");
	lua_pushinteger(L, -1);
	lua_setfield(L, -2, "ERROR");
	lua_pushstring(L, cluster);
	lua_setfield(L, -2, "CLUSTER_NAME");
	lua_setglobal(L, "slurm");
}

#endif

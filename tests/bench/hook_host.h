/*
 * hook_host.h - what the measuring and stress programs need to call
 * conduit_bb's hooks the way Slurm does: a fresh Lua state with the
 * standard libraries, package.cpath at the module's directory, and a
 * `slurm` table whose logging goes nowhere.  Header-only (static), for
 * tests/bench/bench.c, tests/bench/vs_reference.c, tests/stress/hook_loop.c.
 */
#ifndef CBB_HOOK_HOST_H
#define CBB_HOOK_HOST_H

#include <stdio.h>
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

/*
 * helper_seal.c - what the helper does first (helper.h): nothing of the
 * place or the daemon that started it may steer it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "frame.h"
#include "helper.h"
#include "wire.h"


/* The request: stdin to its end, at most twice SWL_WIRE_MAX. */
static int read_request(unsigned char **buf, size_t *len)
{
	size_t cap = 4096;
	unsigned char *b = malloc(cap);

	*len = 0;
	if (!b)
		return -1;
	for (;;) {
		ssize_t r;

		if (*len == cap) {
			unsigned char *nb;

			if (cap >= SWL_WIRE_MAX * 2 || !(nb = realloc(b, cap * 2))) {
				free(b);
				return -1;
			}
			b = nb;
			cap *= 2;
		}
		r = read(STDIN_FILENO, b + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	*buf = b;
	return 0;
}

/*
 * The helper runs as root where slurmd or slurmstepd started it: nothing
 * of that place may steer it.  "/" as its working directory (Lua's
 * default search path tries ./?.lua before any C module: a
 * conduit_bb.lua planted in slurmd's directory would run as root), a
 * fixed environment (PATH, HOME, LANG, and only the variables that say
 * where the configs and Lua's modules are, as the daemon's own
 * environment set them: root's, never a user's; a relative entry of
 * Lua's search paths is dropped, swl_absolute_paths), the daemon's
 * oom_score_adj (-999 in slurmstepd) back to 0.  The request is read
 * from stdin to its end; then stdout moves to SWL_FD_ANSWER
 * (close-on-exec: nothing the script starts can write to it), stdio
 * becomes /dev/null, and no other descriptor stays open.  Returns
 * false when that cannot be done.
 */
bool swl_seal(unsigned char **req, size_t *req_len)
{
	static const char *const keep[] = {
		"SLURM_CONF", "CONDUIT_BB_CONF", "LUA_PATH", "LUA_CPATH",
		"LUA_PATH_5_2", "LUA_CPATH_5_2", "LUA_PATH_5_3", "LUA_CPATH_5_3",
		"LUA_PATH_5_4", "LUA_CPATH_5_4",
	};
	char *kept[sizeof(keep) / sizeof(keep[0])];
	size_t i;
	int fd;

	if (dup2(STDOUT_FILENO, SWL_FD_ANSWER) != SWL_FD_ANSWER ||
	    fcntl(SWL_FD_ANSWER, F_SETFD, FD_CLOEXEC) < 0)
		return false;
	if (close_range(SWL_FD_ANSWER + 1, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (fd = SWL_FD_ANSWER + 1; fd < (max > 0 ? max : 65536); fd++)
			close(fd);
	}
	if (read_request(req, req_len) < 0)
		*req = NULL;
	fd = open("/dev/null", O_RDWR);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0 ||
	    dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		return false;
	if (fd > STDERR_FILENO)
		close(fd);
	if (chdir("/") < 0)
		return false;
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		const char *v = getenv(keep[i]);

		kept[i] = v ? strdup(v) : NULL;
	}
	if (clearenv() != 0)
		return false;
	if (setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1) < 0 ||
	    setenv("HOME", "/", 1) < 0 || setenv("LANG", "C", 1) < 0)
		return false;
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (kept[i] && setenv(keep[i], kept[i], 1) < 0)
			return false;
		free(kept[i]);
	}
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) != 1) {
			/* (a kernel without it: nothing to reset) */
		}
		close(fd);
	}
	return true;
}
/* Lua's search paths without a relative entry (./?.lua, ./?.so): only
 * the system's directories, whatever the working directory holds. */
void swl_absolute_paths(lua_State *L)
{
	static const char *const which[] = { "path", "cpath" };
	size_t i;

	lua_getglobal(L, "package");
	for (i = 0; i < 2 && lua_istable(L, -1); i++) {
		const char *p, *e;
		luaL_Buffer b;
		bool first = true;

		lua_getfield(L, -1, which[i]);
		p = lua_tostring(L, -1);
		luaL_buffinit(L, &b);
		for (; p && *p; p = *e ? e + 1 : e) {
			e = strchr(p, ';');
			if (!e)
				e = p + strlen(p);
			if (*p != '/')
				continue;
			if (!first)
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, (size_t)(e - p));
			first = false;
		}
		luaL_pushresult(&b);
		lua_setfield(L, -3, which[i]);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}


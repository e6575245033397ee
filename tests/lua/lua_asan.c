/* lua_asan.c - `lua5.4` for the sanitizer run of the busted specs
 * (build/asan/bin/lua5.4): a Lua 5.4 interpreter linked with the
 * ASan+UBSan runtimes, which the module built with them needs loaded
 * first.  Preloading the runtimes into Debian's lua5.4 instead would load
 * them into every shell, flock and stat a spec starts as well, at ten
 * times the cost of each; first in PATH, this one is what the specs'
 * own Lua children (array tasks, rewritten scripts) run, and nothing else
 * carries the sanitizers.
 *
 *   lua5.4 SCRIPT [ARG...]
 *
 * As lua(1) runs a script: arg[-1] is this program, arg[0] the script,
 * arg[1..] and the chunk's ... the arguments; a '#' first line is
 * skipped; an error prints its traceback and exits 1.
 */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL)
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int main(int argc, char **argv)
{
	lua_State *L;
	int i, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRIPT [ARG...]\n", argv[0]);
		return 2;
	}
	L = luaL_newstate();
	if (L == NULL) {
		fprintf(stderr, "%s: no memory for a Lua state\n", argv[0]);
		return 1;
	}
	luaL_openlibs(L);
	lua_createtable(L, argc - 2, 2);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	lua_pushcfunction(L, traceback);
	rc = luaL_loadfile(L, argv[1]);
	if (rc == LUA_OK) {
		for (i = 2; i < argc; i++)
			lua_pushstring(L, argv[i]);
		rc = lua_pcall(L, argc - 2, 0, 1);
	}
	if (rc != LUA_OK)
		fprintf(stderr, "%s: %s\n", argv[0], lua_tostring(L, -1));
	lua_close(L);
	return rc == LUA_OK ? 0 : 1;
}

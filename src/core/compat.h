/*
 * compat.h - the few Lua C API differences between 5.1 and 5.4 that
 * conduit_bb uses.  Anything outside 5.1-5.4 is refused at compile time:
 * the module must be built for exactly the Lua that Slurm was built with.
 */
#ifndef CBB_COMPAT_H
#define CBB_COMPAT_H

#include <lua.h>
#include <lauxlib.h>

#if !defined(LUA_VERSION_NUM) || LUA_VERSION_NUM < 501 || LUA_VERSION_NUM > 504
#error "conduit_bb supports Lua 5.1, 5.2, 5.3 and 5.4 only"
#endif

#if LUA_VERSION_NUM == 501
/* 5.1 has no luaL_setfuncs; register into the table on top, no globals. */
static inline void cbb_setfuncs(lua_State *L, const luaL_Reg *l)
{
	for (; l->name; l++) {
		lua_pushcfunction(L, l->func);
		lua_setfield(L, -2, l->name);
	}
}
#define cbb_rawlen(L, i) lua_objlen((L), (i))
#else
#define cbb_setfuncs(L, l) luaL_setfuncs((L), (l), 0)
#define cbb_rawlen(L, i) lua_rawlen((L), (i))
#endif

#endif

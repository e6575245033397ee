/*
 * module.c - luaopen_conduit_bb, the one exported symbol.
 *
 * `require("conduit_bb")` defines the global slurm_* hooks and returns
 * the module table; it defines no other globals.  Slurm builds a fresh
 * Lua state for every hook call, so this runs on every call: it must be
 * cheap and keep no state in C statics.
 */
#include "compat.h"
#include "hooks.h"
#include "hooks_step.h"
#include "hooks_switch.h"

#ifndef CBB_VERSION
#define CBB_VERSION "0.0.0"
#endif

int luaopen_conduit_bb(lua_State *L);

/*
 * The Lua this module was built for ("Lua 5.1" ... "Lua 5.4"), in a
 * section of its own: the module links no liblua to tell by, and
 * `conduit-bb doctor` compares it with the Lua slurmctld links.
 */
__attribute__((used, section(".conduit_bb.lua")))
static const char built_for_lua[] = LUA_VERSION;

static const luaL_Reg module_funcs[] = {
	{ "parse", cbb_l_parse },
	{ NULL, NULL },
};

__attribute__((visibility("default"))) int luaopen_conduit_bb(lua_State *L)
{
	lua_newtable(L);
	cbb_setfuncs(L, module_funcs);
	lua_pushliteral(L, "conduit_bb");
	lua_setfield(L, -2, "_NAME");
	lua_pushliteral(L, CBB_VERSION);
	lua_setfield(L, -2, "_VERSION");
	cbb_register_bb_hooks(L);
	cbb_register_stage_hooks(L);
	cbb_register_report_hooks(L);
	cbb_register_switch_hooks(L);
	cbb_register_step_hooks(L);
	return 1;
}

/*
 * jobinfo_lua.h - the jobinfo as the Lua table switch/lua packs with the
 * job and hands to each step.  Only the fields below travel, each with
 * its type; reading back is strict (every field typed as written, no
 * other key) so a step can refuse a table it did not expect.  Neither
 * function raises for bad content, only on memory errors.
 */
#ifndef CBB_JOBINFO_LUA_H
#define CBB_JOBINFO_LUA_H

#include "compat.h"
#include "err.h"
#include "jobinfo.h"

/* Push ji as a new table. */
void cbb_jobinfo_push(lua_State *L, const cbb_jobinfo_t *ji);

/* Read the table at idx into ji; -1 with a reason when it is not one. */
int cbb_jobinfo_read(lua_State *L, int idx, cbb_jobinfo_t *ji,
		     cbb_err_t *err);

#endif

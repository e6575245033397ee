/* hooks_bb.h - the slurm_bb_* hooks Slurm's burst_buffer/lua calls. */
#ifndef CBB_HOOKS_BB_H
#define CBB_HOOKS_BB_H

#include "compat.h"

/* Define the slurm_bb_* globals. */
void cbb_register_bb_hooks(lua_State *L);

/* conduit_bb.parse(text, job[, opts]) */
int cbb_l_parse(lua_State *L);

#endif

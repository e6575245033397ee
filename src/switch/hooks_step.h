/* hooks_step.h - the switch/lua step hooks: see hooks_step.c. */
#ifndef CBB_HOOKS_STEP_H
#define CBB_HOOKS_STEP_H

#include "compat.h"

void cbb_register_step_hooks(lua_State *L);

#endif

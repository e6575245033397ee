/* hooks_switch.h - the controller-side switch hooks: see hooks_switch.c. */
#ifndef CBB_HOOKS_SWITCH_H
#define CBB_HOOKS_SWITCH_H

#include "compat.h"

void cbb_register_switch_hooks(lua_State *L);

#endif

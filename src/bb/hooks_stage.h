/* hooks_stage.h - setup, data_in ... get_status: see hooks_stage.c. */
#ifndef CBB_HOOKS_STAGE_H
#define CBB_HOOKS_STAGE_H

#include "compat.h"

void cbb_register_stage_hooks(lua_State *L);

#endif

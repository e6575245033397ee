/* hooks_report.h - get_status and paths: see hooks_report.c. */
#ifndef CBB_HOOKS_REPORT_H
#define CBB_HOOKS_REPORT_H

#include "compat.h"

void cbb_register_report_hooks(lua_State *L);

#endif

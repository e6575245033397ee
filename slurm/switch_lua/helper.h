/*
 * helper.h - what the parts of switch-lua-run (the switch/lua plugin's
 * helper) share:
 *   helper.c       the request and one hook call
 *   helper_lua.c   values between Lua and the wire form, the slurm table
 *   helper_out.c   the answer stream: log lines, then the result
 *   helper_seal.c  the working directory, environment, descriptors and
 *                  search paths it runs with, and reading the request
 * Plain C and Lua: no Slurm.
 */
#ifndef SWL_HELPER_H
#define SWL_HELPER_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "wire.h"

/* The answer stream, moved off stdout by swl_seal (frame.h). */
#define SWL_FD_ANSWER 3

/* helper_out.c: a log line back to the plugin; the result, last */
void swl_say(char level, const char *msg, size_t len);
void swl_sayf(char level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void swl_answer(const void *value, size_t len);

/* helper_lua.c */
/* Push the wire value v; returns 0, or -1 when it is not well formed. */
int swl_push_wire(lua_State *L, const swl_val_t *v);
/* Store the Lua value at idx; NULL, or what cannot be stored. */
const char *swl_put_lua(lua_State *L, int idx, swl_out_t *o, int depth);
/* The global slurm table (and print) a hook sees. */
void swl_slurm_table(lua_State *L, const char *cluster);

/* helper_seal.c */
bool swl_seal(unsigned char **req, size_t *req_len);
void swl_absolute_paths(lua_State *L);

#endif

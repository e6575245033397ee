/* jobinfo_lua.c - see jobinfo_lua.h */
#include "jobinfo_lua.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "luahost.h"

/* Fields of the jobinfo table: the only keys it may carry. */
enum { F_STR, F_NUM, F_VLANS };
static const struct {
	const char *name;
	int type;
	size_t off, size;
} fields[] = {
#define S(f) F_STR, offsetof(cbb_jobinfo_t, f), sizeof(((cbb_jobinfo_t *)0)->f)
#define N(f) F_NUM, offsetof(cbb_jobinfo_t, f), sizeof(((cbb_jobinfo_t *)0)->f)
	{ "v", N(v) },
	{ "job_id", N(job_id) },
	{ "cluster", S(cluster) },
	{ "user", S(user) },
	{ "uid", N(uid) },
	{ "session", S(session) },
	{ "pool", S(pool) },
	{ "gpus", N(gpus) },
	{ "vram_mib", N(vram_mib) },
	{ "endpoint", S(endpoint) },
	{ "vlans", F_VLANS, 0, 0 },
	{ "directives", S(directives) },
	{ "token", S(token) },
	{ "env", S(env) },
	{ "mac", S(mac) },
#undef S
#undef N
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

void cbb_jobinfo_push(lua_State *L, const cbb_jobinfo_t *ji)
{
	size_t i, k;

	lua_createtable(L, 0, (int)NFIELDS);
	for (i = 0; i < NFIELDS; i++) {
		const char *p = (const char *)ji + fields[i].off;

		if (fields[i].type == F_STR) {
			lua_pushstring(L, p);
		} else if (fields[i].type == F_NUM) {
			if (fields[i].size == sizeof(uint64_t))
				lua_pushinteger(L, (lua_Integer)*(const uint64_t *)p);
			else
				lua_pushinteger(L, (lua_Integer)*(const uint32_t *)p);
		} else {
			lua_createtable(L, (int)ji->n_vlans, 0);
			for (k = 0; k < ji->n_vlans; k++) {
				lua_pushinteger(L, (lua_Integer)ji->vlans[k]);
				lua_rawseti(L, -2, (int)k + 1);
			}
		}
		lua_setfield(L, -2, fields[i].name);
	}
}

static int whole(lua_State *L, int idx, double max, uint64_t *out)
{
	return cbb_lua_whole(L, idx, max, out) ? 0 : -1;
}

/*
 * Read a jobinfo table back, strictly: every field typed as written,
 * no other key.  Never raises for bad content (only on memory errors).
 */
int cbb_jobinfo_read(lua_State *L, int idx, cbb_jobinfo_t *ji,
		     cbb_err_t *err)
{
	size_t i, seen = 0;

	memset(ji, 0, sizeof(*ji));
	if (!lua_istable(L, idx))
		return cbb_err(err, "jobinfo is not a table");
	idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ?
					lua_tostring(L, -2) : NULL;
		uint64_t v;

		for (i = 0; k && i < NFIELDS; i++)
			if (!strcmp(k, fields[i].name))
				break;
		if (!k || i == NFIELDS) {
			lua_pop(L, 2);
			return cbb_err(err, "jobinfo has an unexpected field");
		}
		seen++;
		if (fields[i].type == F_STR) {
			size_t n;
			const char *s = lua_type(L, -1) == LUA_TSTRING ?
						lua_tolstring(L, -1, &n) : NULL;

			if (!s || n >= fields[i].size || memchr(s, '\0', n)) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field %s is not a "
					       "valid string", fields[i].name);
			}
			memcpy((char *)ji + fields[i].off, s, n + 1);
		} else if (fields[i].type == F_NUM) {
			double max = fields[i].size == 8 ?
					     (double)CBB_JOBINFO_NUM_MAX :
					     4294967295.0;

			if (whole(L, -1, max, &v) < 0) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field %s is not a "
					       "whole number", fields[i].name);
			}
			if (fields[i].size == 8)
				*(uint64_t *)((char *)ji + fields[i].off) = v;
			else
				*(uint32_t *)((char *)ji + fields[i].off) =
					(uint32_t)v;
		} else {
			size_t n = lua_istable(L, -1) ? cbb_rawlen(L, -1) : 99, k2;

			if (n > 16) {
				lua_pop(L, 2);
				return cbb_err(err, "jobinfo field vlans is not "
					       "a list of VLAN ids");
			}
			for (k2 = 0; k2 < n; k2++) {
				lua_rawgeti(L, -1, (int)k2 + 1);
				if (whole(L, -1, 4094, &v) < 0) {
					lua_pop(L, 3);
					return cbb_err(err, "jobinfo field vlans "
						       "is not a list of VLAN "
						       "ids");
				}
				ji->vlans[k2] = (unsigned)v;
				lua_pop(L, 1);
			}
			ji->n_vlans = n;
		}
		lua_pop(L, 1);
	}
	if (ji->v != CBB_JOBINFO_VERSION)
		return cbb_err(err, "jobinfo version %u is not %d (made by "
			       "another conduit-bb release: requeue the job "
			       "to set its session up again)", ji->v,
			       CBB_JOBINFO_VERSION);
	if (seen != NFIELDS)
		return cbb_err(err, "jobinfo lacks fields");
	return 0;
}


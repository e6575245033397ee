/*
 * doctor_module.c - `conduit-bb doctor`: the module and the Lua that
 * slurmctld's burst_buffer/lua plugin links (read from their ELF).
 */
#include "doctor_int.h"

/* ---- the module and the Lua slurmctld links ---------------------------- */

struct needed_lua {
	char ver[8];
	char lib[128];
};

static void on_needed(void *ud, const char *name)
{
	struct needed_lua *n = ud;

	if (!n->ver[0] && cbb_elf_lua_of(name, n->ver, sizeof(n->ver)))
		snprintf(n->lib, sizeof(n->lib), "%s", name);
}

static const char *const plugin_dirs[] = {
	"/usr/lib/x86_64-linux-gnu/slurm-wlm", /* Debian, Ubuntu */
	"/usr/lib/x86_64-linux-gnu/slurm",
	"/usr/lib64/slurm",                    /* EL */
	"/usr/lib/slurm",
	"/usr/local/lib/slurm",
	"/usr/local/lib64/slurm",
	NULL,
};

/* burst_buffer_lua.so in PluginDir (a colon list), else where the
 * distributions put it. */
static bool find_plugin(char *out, size_t size)
{
	char dirs[1024], *save = NULL, *p;
	size_t i;

	if (doctor_slurm_get("PluginDir", dirs, sizeof(dirs))) {
		for (p = strtok_r(dirs, ":", &save); p;
		     p = strtok_r(NULL, ":", &save)) {
			snprintf(out, size, "%s/burst_buffer_lua.so", p);
			if (access(out, F_OK) == 0)
				return true;
		}
		return false;
	}
	for (i = 0; plugin_dirs[i]; i++) {
		snprintf(out, size, "%s/burst_buffer_lua.so", plugin_dirs[i]);
		if (access(out, F_OK) == 0)
			return true;
	}
	return false;
}

void doctor_check_slurm_lua(doctor_t *d)
{
	struct needed_lua n = { "", "" };
	char plugin[PATH_MAX + 32];
	cbb_elf_t e;
	cbb_err_t err;

	if (!find_plugin(plugin, sizeof(plugin))) {
		doctor_say(&d->rep, RES_FAIL, "slurm Lua", "Slurm's burst_buffer/lua "
		    "plugin (burst_buffer_lua.so) is not in PluginDir; install "
		    "Slurm's plugins (Debian: slurmctld) or fix PluginDir= in "
		    "slurm.conf");
		return;
	}
	cbb_err_clear(&err);
	if (cbb_elf_open(&e, plugin, &err) < 0) {
		doctor_say(&d->rep, RES_FAIL, "slurm Lua", "%s", err.msg);
		return;
	}
	cbb_elf_needed(&e, on_needed, &n);
	cbb_elf_close(&e);
	if (!n.ver[0]) {
		doctor_say(&d->rep, RES_WARN, "slurm Lua", "%s links no versioned liblua; "
		    "cannot tell which Lua slurmctld runs (Debian and Ubuntu: "
		    "5.1, EL8: 5.3, EL9: 5.4)", plugin);
		return;
	}
	snprintf(d->lua, sizeof(d->lua), "%s", n.ver);
	doctor_say(&d->rep, RES_OK, "slurm Lua", "%s links %s: slurmctld runs Lua %s",
	    plugin, n.lib, n.ver);
}

/* Lua's default package.cpath directories for a version, in order. */
static const char *const cmod_dirs[] = {
	"/usr/local/lib/lua/", "/usr/lib/x86_64-linux-gnu/lua/",
	"/usr/lib/lua/", "/usr/lib64/lua/", "/usr/local/lib64/lua/",
	NULL,
};

static bool find_module(const char *ver, char *out, size_t size)
{
	size_t i;

	for (i = 0; cmod_dirs[i]; i++) {
		snprintf(out, size, "%s%s/conduit_bb.so", cmod_dirs[i], ver);
		if (access(out, F_OK) == 0)
			return true;
	}
	return false;
}

/* The Lua a module was built for: its .conduit_bb.lua section, else what
 * it imports (5.2 and 5.3 import the same functions). */
static bool module_lua(const cbb_elf_t *e, char *ver, size_t size)
{
	const char *s;
	size_t len;

	s = cbb_elf_section(e, ".conduit_bb.lua", &len);
	if (s && len >= 8 && !memcmp(s, "Lua 5.", 6) && memchr(s, '\0', len)) {
		snprintf(ver, size, "%.3s", s + 4);
		return true;
	}
	if (cbb_elf_imports(e, "lua_objlen"))
		snprintf(ver, size, "5.1");
	else if (cbb_elf_imports(e, "lua_newuserdatauv"))
		snprintf(ver, size, "5.4");
	else if (cbb_elf_imports(e, "lua_rawlen"))
		snprintf(ver, size, "5.2/5.3");
	else
		return false;
	return true;
}

void doctor_check_module(doctor_t *d)
{
	static const char *const vers[] = { "5.1", "5.2", "5.3", "5.4", NULL };
	char path[PATH_MAX + 32], built[16];
	cbb_buf_t others;
	cbb_elf_t e;
	cbb_err_t err;
	size_t i;

	if (d->module) {
		snprintf(path, sizeof(path), "%s", d->module);
	} else if (!d->lua[0] || !find_module(d->lua, path, sizeof(path))) {
		cbb_buf_init(&others, 4 * sizeof(path));
		for (i = 0; vers[i]; i++)
			if (find_module(vers[i], path, sizeof(path)))
				(void)cbb_buf_printf(&others, "%s%s", others.len ?
						     ", " : "", path);
		if (d->lua[0] || !others.len) {
			doctor_say(&d->rep, RES_FAIL, "module", "no conduit_bb.so on Lua "
			    "%s's package.cpath%s%s; make install LUA_VERSION=%s "
			    "PREFIX=/usr", d->lua[0] ? d->lua : "(any)",
			    others.len ? "; found only " : "",
			    others.len ? others.data : "",
			    d->lua[0] ? d->lua : "5.1");
			cbb_buf_free(&others);
			return;
		}
		/* which Lua slurmctld runs is unknown: look at the first */
		snprintf(path, sizeof(path), "%.*s",
			 (int)strcspn(others.data, ","), others.data);
		cbb_buf_free(&others);
	}
	cbb_err_clear(&err);
	if (cbb_elf_open(&e, path, &err) < 0) {
		doctor_say(&d->rep, RES_FAIL, "module", "%s", err.msg);
		return;
	}
	if (!module_lua(&e, built, sizeof(built))) {
		cbb_elf_close(&e);
		doctor_say(&d->rep, RES_FAIL, "module", "%s imports no Lua function: not "
		    "a Lua C module", path);
		return;
	}
	cbb_elf_close(&e);
	if (!d->lua[0])
		doctor_say(&d->rep, RES_WARN, "module", "%s was built for Lua %s; which "
		    "Lua slurmctld links is unknown (above)", path, built);
	else if (!strstr(built, d->lua))
		doctor_say(&d->rep, RES_FAIL, "module", "%s was built for Lua %s, but "
		    "slurmctld links Lua %s: every hook would fail to load; "
		    "rebuild and install it with make install LUA_VERSION=%s",
		    path, built, d->lua, d->lua);
	else
		doctor_say(&d->rep, RES_OK, "module", "%s was built for Lua %s, the Lua "
		    "slurmctld links", path, built);
}

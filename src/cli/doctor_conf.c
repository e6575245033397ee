/*
 * doctor_conf.c - `conduit-bb doctor`: conduit_bb.conf (every bad line),
 * slurm.conf, burst_buffer.lua and burst_buffer.conf.
 */
#include "doctor_int.h"

/* ---- conduit_bb.conf: every bad line, not only the first --------------- */

/*
 * Parse the file line by line: each line is parsed after the good lines
 * before it (bad ones left out as blank lines, so numbers stay right and
 * a repeated key still names the line that set it first).  Every error is
 * reported; the checks after go on with the good lines.
 */
void doctor_check_config(doctor_t *d, const char *given)
{
	cbb_buf_t good;
	cbb_err_t err;
	char *text = NULL;
	size_t len, pos = 0;
	bool missing = false;
	unsigned bad = 0, keys = 0;

	if (given)
		snprintf(d->conf_path, sizeof(d->conf_path), "%s", given);
	else
		cbb_config_locate(d->conf_path, sizeof(d->conf_path));
	cbb_config_defaults(&d->cfg);
	cbb_err_clear(&err);
	if (cbb_read_file(d->conf_path, CBB_CONF_MAX_BYTES, &text, &len,
			  &missing, &err) < 0) {
		doctor_say(&d->rep, RES_FAIL, "config", "%s; make it readable (mode "
		    "0644) or fix CONDUIT_BB_CONF", err.msg);
		return;
	}
	d->cfg_ok = true;
	if (missing) {
		doctor_say(&d->rep, RES_WARN, "config", "%s does not exist: every "
		    "default applies; copy conduit_bb.conf.example there and "
		    "set ConduitServer, CACert, ClientCert, ClientKey",
		    d->conf_path);
		return;
	}
	cbb_buf_init(&good, CBB_CONF_MAX_BYTES * 2);
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		size_t mark = good.len;
		cbb_config_t c;

		pos += n + 1;
		(void)cbb_buf_add(&good, line, n);
		(void)cbb_buf_addc(&good, '\n');
		cbb_err_clear(&err);
		cbb_config_defaults(&c);
		if (cbb_config_parse(&c, good.data, good.len, d->conf_path,
				     &err) < 0) {
			doctor_say(&d->rep, RES_FAIL, "config", "%s", err.msg);
			bad++;
			good.len = mark;
			(void)cbb_buf_addc(&good, '\n');
		} else {
			size_t k = strspn(line, " \t");

			keys += k < n && line[k] != '#';
		}
		cbb_config_free(&c);
	}
	cbb_config_free(&d->cfg);
	cbb_config_defaults(&d->cfg);
	cbb_err_clear(&err);
	(void)cbb_config_parse(&d->cfg, good.data ? good.data : "", good.len,
			       d->conf_path, &err);
	d->cfg.path = strdup(d->conf_path);
	if (!bad)
		doctor_say(&d->rep, RES_OK, "config", "%s parses (%u key%s set)",
		    d->conf_path, keys, keys == 1 ? "" : "s");
	cbb_buf_free(&good);
	free(text);
}

/* ---- slurm.conf, burst_buffer.lua, burst_buffer.conf ------------------- */

bool doctor_slurm_get(const char *key, char *val, size_t size)
{
	char path[PATH_MAX];

	return cbb_slurm_conf_get(key, path, sizeof(path), val, size) == 0;
}

void doctor_check_slurm_conf(doctor_t *d)
{
	char v[256], *slash;
	struct passwd *pw;
	struct stat st;

	if (stat(d->slurm_conf, &st) < 0) {
		doctor_say(&d->rep, RES_FAIL, "slurm.conf", "cannot read %s: %s; point "
		    "SLURM_CONF or --slurm-conf at slurm.conf", d->slurm_conf,
		    strerror(errno));
		return;
	}
	snprintf(d->slurm_dir, sizeof(d->slurm_dir), "%s", d->slurm_conf);
	slash = strrchr(d->slurm_dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(d->slurm_dir, sizeof(d->slurm_dir), ".");
	if (!doctor_slurm_get("BurstBufferType", v, sizeof(v)))
		doctor_say(&d->rep, RES_FAIL, "slurm.conf", "%s has no BurstBufferType; "
		    "add BurstBufferType=burst_buffer/lua and restart slurmctld",
		    d->slurm_conf);
	else if (strcmp(v, "burst_buffer/lua"))
		doctor_say(&d->rep, RES_FAIL, "slurm.conf", "%s has BurstBufferType=%s; "
		    "set BurstBufferType=burst_buffer/lua and restart slurmctld",
		    d->slurm_conf, v);
	else
		doctor_say(&d->rep, RES_OK, "slurm.conf", "%s: BurstBufferType="
		    "burst_buffer/lua", d->slurm_conf);
	if (!doctor_slurm_get("SlurmUser", v, sizeof(v)))
		snprintf(v, sizeof(v), "root"); /* Slurm's default */
	pw = getpwnam(v);
	if (!pw) {
		doctor_say(&d->rep, RES_FAIL, "SlurmUser", "%s names SlurmUser=%s, who "
		    "does not exist here; create the user or fix slurm.conf",
		    d->slurm_conf, v);
		return;
	}
	snprintf(d->su.name, sizeof(d->su.name), "%s", pw->pw_name);
	d->su.uid = pw->pw_uid;
	d->su.gid = pw->pw_gid;
	d->su.known = true;
	if (geteuid() != 0 && geteuid() != d->su.uid)
		doctor_say(&d->rep, RES_WARN, "SlurmUser", "%s (uid %u); this runs as "
		    "uid %u, so what SlurmUser can read is not tested: run "
		    "doctor as root or as %s", d->su.name, (unsigned)d->su.uid,
		    (unsigned)geteuid(), d->su.name);
	else
		doctor_say(&d->rep, RES_OK, "SlurmUser", "%s (uid %u): the hooks run as "
		    "this user; file checks below are made as it", d->su.name,
		    (unsigned)d->su.uid);
}

void doctor_check_shim(doctor_t *d)
{
	char path[PATH_MAX + 32], *text = NULL;
	cbb_err_t err;
	bool missing = false;
	size_t len;

	if (!d->slurm_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/burst_buffer.lua", d->slurm_dir);
	cbb_err_clear(&err);
	if (cbb_read_file(path, 65536, &text, &len, &missing, &err) < 0 ||
	    missing) {
		doctor_say(&d->rep, RES_FAIL, "burst_buffer.lua", "%s: %s; it must hold "
		    "the one line " SHIM " (make install puts it there)", path,
		    missing ? "missing" : err.msg);
		free(text);
		return;
	}
	if (!strcmp(text, SHIM) || !strcmp(text, SHIM "\n"))
		doctor_say(&d->rep, RES_OK, "burst_buffer.lua", "%s is the one line "
		    SHIM, path);
	else
		doctor_say(&d->rep, RES_FAIL, "burst_buffer.lua", "%s is not the one "
		    "line " SHIM " (%zu bytes, %s); replace it with that line: "
		    "conduit_bb defines every hook itself", path, len,
		    strstr(text, "conduit_bb") ? "it mentions conduit_bb but "
		    "holds more" : "another plugin's script");
	free(text);
}

void doctor_check_bb_conf(doctor_t *d)
{
	char path[PATH_MAX + 32], *text = NULL, *p;
	cbb_err_t err;
	bool missing = false;
	size_t len;
	char dir[CBB_DIRECTIVE_MAX + 2] = "";

	if (!d->slurm_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/burst_buffer.conf", d->slurm_dir);
	cbb_err_clear(&err);
	if (cbb_read_file(path, (size_t)1 << 20, &text, &len, &missing,
			  &err) < 0 || missing) {
		doctor_say(&d->rep, RES_WARN, "burst_buffer.conf", "%s: %s; Slurm then "
		    "looks for #BB_LUA directives: create it with Directive=%s",
		    path, missing ? "missing" : err.msg, d->cfg.directive);
		free(text);
		return;
	}
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		p += strspn(p, " \t");
		if (!strncasecmp(p, "Directive", 9)) {
			char *v = p + 9 + strspn(p + 9, " \t");

			if (*v == '=') {
				v++;
				v += strspn(v, " \t");
				snprintf(dir, sizeof(dir), "%.*s",
					 (int)strcspn(v, " \t\r\n#"), v);
			}
		}
	}
	free(text);
	if (!dir[0])
		doctor_say(&d->rep, RES_WARN, "burst_buffer.conf", "%s sets no "
		    "Directive=; add Directive=%s (Slurm's default is BB_LUA)",
		    path, d->cfg.directive);
	else if (strcmp(dir, d->cfg.directive))
		doctor_say(&d->rep, RES_FAIL, "burst_buffer.conf", "%s has Directive=%s "
		    "but conduit_bb.conf Directive=%s: Slurm never hands the "
		    "hooks their directives; make them equal", path, dir,
		    d->cfg.directive);
	else
		doctor_say(&d->rep, RES_OK, "burst_buffer.conf", "Directive=%s, as in "
		    "conduit_bb.conf", dir);
}

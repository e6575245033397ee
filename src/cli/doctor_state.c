/*
 * doctor_state.c - `conduit-bb doctor`: StateDir and AuditLog as SlurmUser
 * sees them, Slurm's commands, and the switch half when configured.
 */
#include "doctor_int.h"

/* ---- StateDir and AuditLog ---------------------------------------------- */

void doctor_check_state_dir(doctor_t *d)
{
	const char *dir = cbb_conf_state_dir(&d->cfg);
	unsigned long long avail, inodes;
	struct statvfs vfs;
	struct stat st;
	unsigned mode;
	int rc;

	if (lstat(dir, &st) < 0) {
		doctor_say(&d->rep, errno == ENOENT ? RES_WARN : RES_FAIL, "StateDir",
		    "%s: %s; the hooks make it on first use if they can: "
		    "mkdir -m 0700 %s && chown %s %s", dir, strerror(errno),
		    dir, doctor_who(&d->su), dir);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		doctor_say(&d->rep, RES_FAIL, "StateDir", "%s is %s, not a directory: "
		    "every staging hook fails; make it a real directory "
		    "(mode 0700, owned by %s)", dir, S_ISLNK(st.st_mode) ?
		    "a symbolic link" : "a file", doctor_who(&d->su));
		return;
	}
	mode = (unsigned)(st.st_mode & 07777);
	if (d->su.known && st.st_uid != d->su.uid && st.st_uid != 0) {
		struct passwd *pw = getpwuid(st.st_uid);

		doctor_say(&d->rep, RES_FAIL, "StateDir", "%s belongs to uid %u (%s), "
		    "not SlurmUser %s: every staging hook refuses it; chown %s %s",
		    dir, (unsigned)st.st_uid, pw ? pw->pw_name : "no user",
		    d->su.name, d->su.name, dir);
		return;
	}
	if (mode & 022) {
		doctor_say(&d->rep, RES_FAIL, "StateDir", "%s is mode %04o: writable by "
		    "group or others, so every staging hook refuses it; chmod "
		    "0700 %s", dir, mode, dir);
		return;
	}
	rc = doctor_as_slurm_user(&d->su, AS_WRITE_DIR, dir);
	if (rc > 0) {
		doctor_say(&d->rep, RES_FAIL, "StateDir", "%s is not writable by "
		    "SlurmUser %s (%s): the hooks cannot record what they "
		    "start; %s", dir, doctor_who(&d->su), strerror(rc), rc == EROFS ?
		    "put StateDir on a writable file system" : "chown it to "
		    "SlurmUser and chmod 0700");
		return;
	}
	if (statvfs(dir, &vfs) < 0) {
		doctor_say(&d->rep, RES_WARN, "StateDir", "%s: cannot tell free space: %s",
		    dir, strerror(errno));
		return;
	}
	avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
	inodes = vfs.f_files ? (unsigned long long)vfs.f_favail : ~0ULL;
	if (avail < STATE_MIN_FREE || inodes < STATE_MIN_INODES)
		doctor_say(&d->rep, RES_FAIL, "StateDir", "%s has %llu KiB and %llu "
		    "inodes free: the hooks' next record may not fit; free "
		    "space on that file system", dir, avail >> 10, inodes);
	else if (avail < STATE_WARN_FREE)
		doctor_say(&d->rep, RES_WARN, "StateDir", "%s has only %llu MiB free; "
		    "free space on that file system", dir, avail >> 20);
	else if (mode != 0700)
		doctor_say(&d->rep, RES_WARN, "StateDir", "%s is mode %04o: other users "
		    "can read the jobs' records; chmod 0700 %s", dir, mode, dir);
	else
		doctor_say(&d->rep, RES_OK, "StateDir", "%s: owned by %s, mode 0700, "
		    "writable by %s, %llu MiB free", dir, st.st_uid ? doctor_who(&d->su)
		    : "root", doctor_who(&d->su), avail >> 20);
}

/* The hooks' own open of AuditLog (audit.c), as they run it. */
static int audit_probe(const void *arg, char *msg, size_t size)
{
	int fd = cbb_audit_open(arg, msg, size);

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

void doctor_check_audit_log(doctor_t *d)
{
	const char *log = d->cfg.audit_log;
	char dir[PATH_MAX], why[PATH_MAX + 256], *slash;
	struct stat st;
	bool exists;
	int rc;

	if (!log)
		return;
	exists = lstat(log, &st) == 0;
	snprintf(dir, sizeof(dir), "%s", log);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (exists) {
		/* exactly what every hook does: the same rules, as SlurmUser */
		rc = doctor_as_slurm_user_call(&d->su, audit_probe, log, why,
					       sizeof(why));
	} else if (stat(slash && dir[0] ? dir : "/", &st) == 0 &&
		   (st.st_mode & (S_IWGRP | S_IWOTH))) {
		rc = 1;
		snprintf(why, sizeof(why), "its directory %s has mode %04o: it "
			 "must not be writable by group or others", dir[0] ?
			 dir : "/", (unsigned)(st.st_mode & 07777));
	} else {
		/* the hooks create it: SlurmUser must be able to */
		rc = doctor_as_slurm_user(&d->su, AS_WRITE_DIR, slash ? dir : ".");
		if (rc > 0)
			snprintf(why, sizeof(why), "SlurmUser %s cannot create "
				 "it (%s)", doctor_who(&d->su), strerror(rc));
	}
	if (rc > 0)
		doctor_say(&d->rep, RES_WARN, "AuditLog", "%s: %s: the hooks write "
		    "no audit line and no hook record (the stages still succeed, "
		    "conduit-bb metrics lacks them); make it a file of %s, mode "
		    "0640, in a directory only its owner may write", log, why,
		    doctor_who(&d->su));
	else if (rc < 0)
		doctor_say(&d->rep, RES_OK, "AuditLog", "%s: not tried as %s "
		    "(doctor runs as neither root nor SlurmUser)", log,
		    doctor_who(&d->su));
	else
		doctor_say(&d->rep, RES_OK, "AuditLog", "%s: %s by %s", log,
		    exists ? "appendable" : "can be created", doctor_who(&d->su));
}

/* ---- Slurm's commands ------------------------------------------------------ */

/* `PROG --version` as the hooks run it: the first line of its output. */
static int version_probe(const void *arg, char *msg, size_t size)
{
	char p[PATH_MAX], flag[] = "--version", *argv[3];
	cbb_buf_t out, err;
	int status = -1, rc;

	snprintf(p, sizeof(p), "%s", (const char *)arg);
	argv[0] = p;
	argv[1] = flag;
	argv[2] = NULL;
	cbb_buf_init(&out, 4096);
	cbb_buf_init(&err, 4096);
	rc = cbb_run(argv, 5000, &out, &err, &status);
	if (rc < 0 || status != 0) {
		snprintf(msg, size, "%s", rc == 0 && status > 0 ? "it failed" :
			 "not found, not executable, or no answer in 5 s");
		rc = 1;
	} else {
		snprintf(msg, size, "%.*s", (int)(out.data ?
			 strcspn(out.data, "\n") : 0), out.data ? out.data : "");
		rc = 0;
	}
	cbb_buf_free(&out);
	cbb_buf_free(&err);
	return rc;
}

void doctor_check_program(doctor_t *d, const char *check, const char *prog,
			  const char *key)
{
	char line[512];
	bool as_su = d->su.known && geteuid() == 0 && d->su.uid != 0;
	int rc;

	/* the hooks run it as SlurmUser: so does this, when root; as
	 * another user, as that user */
	rc = doctor_as_slurm_user_call(&d->su, version_probe, prog, line,
				       sizeof(line));
	if (rc < 0 && !as_su)
		rc = version_probe(prog, line, sizeof(line));
	if (rc != 0)
		doctor_say(&d->rep, RES_FAIL, check, "cannot run %s --version%s%s "
		    "(%s); install Slurm's client commands%s or set %s= in "
		    "conduit_bb.conf", prog, as_su ? " as SlurmUser " : "",
		    as_su ? doctor_who(&d->su) : "", rc < 0 ? "cannot act as "
		    "SlurmUser" : line, as_su ? " where SlurmUser can run them" :
		    "", key);
	else
		doctor_say(&d->rep, RES_OK, check, "%s: %s", prog, line);
}

/* ---- the switch half, when configured ------------------------------------- */

void doctor_check_switch(doctor_t *d)
{
	const cbb_config_t *c = &d->cfg;
	uint8_t key[CBB_MAC_KEY_LEN];
	char cluster[CBB_CLUSTER_MAX], path[PATH_MAX];
	cbb_err_t err;
	int rc;

	if (!c->switch_http && !c->session_key_file)
		return;
	cbb_err_clear(&err);
	if (!c->session_key_file)
		doctor_say(&d->rep, RES_FAIL, "SessionKeyFile", "not set: the switch "
		    "hooks cannot sign jobinfo; set SessionKeyFile= (at least 32 "
		    "random bytes, mode 0600)");
	else if (doctor_check_access(d, "SessionKeyFile", c->session_key_file, true)) {
		if (cbb_mac_key_load(c->session_key_file, key, &err) < 0)
			doctor_say(&d->rep, RES_FAIL, "SessionKeyFile", "%s", err.msg);
		else
			doctor_say(&d->rep, RES_OK, "SessionKeyFile", "%s: private, "
			    "readable by %s", c->session_key_file, doctor_who(&d->su));
		cbb_key_wipe(key);
	}
	if (!c->switch_http)
		return;
	if ((c->switch_ca && !doctor_check_access(d, "SwitchCACert", c->switch_ca, false)) ||
	    (c->switch_cert && !doctor_check_access(d, "SwitchClientCert", c->switch_cert,
					      false)) ||
	    (c->switch_key && !doctor_check_access(d, "SwitchClientKey", c->switch_key,
					     true)))
		return;
	if (cbb_slurm_cluster_name(path, sizeof(path), cluster,
				   sizeof(cluster)) < 0)
		snprintf(cluster, sizeof(cluster), "cluster");
	cbb_err_clear(&err);
	/* releasing job 0's session: no job has it, so nothing changes */
	rc = cbb_ctl_release(c, cluster, 0, &err);
	if (rc == CBB_CTL_OK || rc == CBB_CTL_GONE)
		doctor_say(&d->rep, RES_OK, "SwitchController", "%s answered", c->switch_url);
	else
		doctor_say(&d->rep, RES_FAIL, "SwitchController", "%s: %s; check the "
		    "controller, SwitchCACert, SwitchClientCert and "
		    "SwitchClientKey", c->switch_url, err.msg);
}

/* ---- switch.lua, where the switch/lua plugin will look --------------------- */

/* key=value of SwitchParameters, else of SlurmctldParameters, as the
 * plugin reads them (slurm/switch_lua/call.c) */
static bool switch_param(const char *key, char *val, size_t size)
{
	static const char *const lists[] = { "SwitchParameters",
					     "SlurmctldParameters" };
	char list[1024];
	size_t kl = strlen(key), i;

	for (i = 0; i < 2; i++) {
		const char *p;

		if (!doctor_slurm_get(lists[i], list, sizeof(list)))
			continue;
		for (p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			if (!strncmp(p, key, kl) && p[kl] == '=') {
				snprintf(val, size, "%.*s", (int)strcspn(p + kl + 1, ","),
					 p + kl + 1);
				return true;
			}
	}
	return false;
}

/*
 * With SwitchType=switch/lua: the script every slurmstepd of this node
 * will run, and, on a configless node (slurm.conf in slurmd's
 * conf-cache: slurmd fetched it), the two files slurmd does not fetch.
 */
void doctor_check_switch_script(doctor_t *d)
{
	char v[256], script[PATH_MAX + 16], real[PATH_MAX], *text = NULL;
	const char *cache = "slurmd fetches only Slurm's own files into its "
			    "conf-cache on a configless node";
	bool configless, missing = false;
	cbb_err_t err;
	size_t len;

	if (!d->slurm_dir[0] || !doctor_slurm_get("SwitchType", v, sizeof(v)) ||
	    strcmp(v, "switch/lua"))
		return;
	configless = realpath(d->slurm_dir, real) &&
		     strlen(real) >= 11 && !strcmp(real + strlen(real) - 11,
						   "/conf-cache");
	if (configless)
		doctor_say(&d->rep, RES_OK, "configless", "%s is slurmd's copy of "
		    "the controller's (%s)", d->slurm_conf, real);
	if (!switch_param("switch_lua_script", script, sizeof(script)))
		snprintf(script, sizeof(script), "%s/switch.lua", d->slurm_dir);
	cbb_err_clear(&err);
	if (cbb_read_file(script, 65536, &text, &len, &missing, &err) < 0 ||
	    missing) {
		doctor_say(&d->rep, RES_FAIL, "switch.lua", "%s: %s: every step of "
		    "a --network job on this node runs without its session%s%s%s",
		    script, missing ? "missing" : err.msg,
		    configless ? "; " : "", configless ? cache : "",
		    configless ? ": install switch.lua on this node and set "
		    "SwitchParameters=switch_lua_script=/etc/slurm/switch.lua" :
		    ": install it there (make install-switch-plugin, the RPM)");
	} else {
		doctor_say(&d->rep, RES_OK, "switch.lua", "%s%s", script,
		    !strcmp(text, SHIM) || !strcmp(text, SHIM "\n") ?
		    " is the one line " SHIM : ": a script of the site's own");
	}
	free(text);
	/* conduit_bb.conf found beside a fetched slurm.conf: not fetched */
	if (configless && (!getenv("CONDUIT_BB_CONF") ||
			   !getenv("CONDUIT_BB_CONF")[0]) &&
	    access(d->conf_path, F_OK) < 0)
		doctor_say(&d->rep, RES_FAIL, "configless", "%s: missing: %s; "
		    "install conduit_bb.conf on this node and set CONDUIT_BB_CONF "
		    "in slurmd's environment (systemd: Environment=CONDUIT_BB_CONF=/etc/slurm/conduit_bb.conf)",
		    d->conf_path, cache);
}

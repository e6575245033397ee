/*
 * doctor.c - `conduit-bb doctor [--json]`: check an installation end to
 * end, as root or as SlurmUser, one line per check:
 *
 *   ok    what was found
 *   warn  what will bite later, and what to do
 *   FAIL  what stops staging now, and what to do
 *
 * Exit status: 0 when nothing failed (warnings allowed), 1 when a check
 * failed, 2 on a usage error.  Run as root, the file checks are made as
 * SlurmUser for real (a child process takes its uid and groups and opens
 * the files), because that is who the hooks run as.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "admin.h"
#include "audit.h"
#include "buf.h"
#include "cluster.h"
#include "conduit.h"
#include "config.h"
#include "controller.h"
#include "elf.h"
#include "grpc.h"
#include "jobinfo.h"
#include "readfile.h"
#include "run.h"

#define SHIM "require(\"conduit_bb\")"
#define EXPIRY_WARN_DAYS 30
#define STATE_MIN_FREE ((unsigned long long)16 << 20)  /* FAIL below */
#define STATE_WARN_FREE ((unsigned long long)256 << 20) /* warn below */
#define STATE_MIN_INODES 1000ULL

typedef enum { RES_OK, RES_WARN, RES_FAIL } res_t;

typedef struct {
	bool json;
	json_t *checks;
	unsigned n[3];
} report_t;

/* Who the hooks run as. */
typedef struct {
	char name[64];
	uid_t uid;
	gid_t gid;
	bool known;
} slurm_user_t;

typedef struct {
	report_t rep;
	cbb_config_t cfg;
	bool cfg_ok;            /* parsed (possibly without bad lines) */
	char conf_path[PATH_MAX];
	char slurm_conf[PATH_MAX];
	char slurm_dir[PATH_MAX];
	const char *module;     /* --module */
	slurm_user_t su;
	char lua[8];            /* the Lua slurmctld's plugin links, or "" */
	X509 *ca, *cert;
} doctor_t;

static void say(report_t *r, res_t s, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say(report_t *r, res_t s, const char *check, const char *fmt, ...)
{
	static const char *const word[] = { "ok", "warn", "FAIL" };
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cbb_one_line(msg);
	r->n[s]++;
	if (!r->json) {
		printf("%-5s %s: %s\n", word[s], check, msg);
		fflush(stdout);
		return;
	}
	json_array_append_new(r->checks,
			      json_pack("{s:s, s:s, s:s}", "check", check,
					"status", s == RES_OK ? "ok" :
					s == RES_WARN ? "warn" : "fail",
					"message", msg));
}

/* ---- acting as SlurmUser ---------------------------------------------- */

typedef enum { AS_READ, AS_APPEND, AS_WRITE_DIR } as_op_t;

static int as_op(as_op_t op, const char *path)
{
	char probe[PATH_MAX];
	int fd;

	if (op != AS_WRITE_DIR) {
		fd = open(path, (op == AS_READ ? O_RDONLY : O_WRONLY | O_APPEND |
				 O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	snprintf(probe, sizeof(probe), "%s/.conduit-bb-doctor.%ld", path,
		 (long)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return errno;
	close(fd);
	return unlink(probe) < 0 ? errno : 0;
}

/*
 * Do `op` on `path` as SlurmUser: directly when we are SlurmUser, in a
 * child that becomes SlurmUser when we are root.  Returns 0, an errno,
 * or -1 when it cannot be told (neither root nor SlurmUser).
 */
static int as_slurm_user(const slurm_user_t *su, as_op_t op, const char *path)
{
	pid_t pid;
	int st;

	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return as_op(op, path);
	if (geteuid() != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (initgroups(su->name, su->gid) < 0 || setgid(su->gid) < 0 ||
		    setuid(su->uid) < 0)
			_exit(255);
		_exit(as_op(op, path) & 0xff);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}

/*
 * Call fn(arg, msg, size) as SlurmUser: directly when we are SlurmUser,
 * in a child with SlurmUser's uid and groups when we are root (its
 * message coming back through a pipe).  fn's result (0 or 1), or -1 when
 * it cannot be told (neither root nor SlurmUser, or the child could not
 * become SlurmUser).
 */
typedef int (*as_fn_t)(const void *arg, char *msg, size_t size);

static int as_slurm_user_call(const slurm_user_t *su, as_fn_t fn,
			      const void *arg, char *msg, size_t size)
{
	int fds[2], st;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	msg[0] = '\0';
	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return fn(arg, msg, size);
	if (geteuid() != 0)
		return -1;
	if (pipe(fds) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int rc;

		close(fds[0]);
		if (initgroups(su->name, su->gid) < 0 || setgid(su->gid) < 0 ||
		    setuid(su->uid) < 0)
			_exit(255);
		rc = fn(arg, msg, size);
		if (write(fds[1], msg, strlen(msg)) < 0)
			_exit(255);
		_exit(rc ? 1 : 0);
	}
	close(fds[1]);
	while (got + 1 < size &&
	       (n = read(fds[0], msg + got, size - got - 1)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	msg[got] = '\0';
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}

static const char *who(const slurm_user_t *su)
{
	return su->known ? su->name : "SlurmUser";
}

/* ---- conduit_bb.conf: every bad line, not only the first --------------- */

/*
 * Parse the file line by line: each line is parsed after the good lines
 * before it (bad ones left out as blank lines, so numbers stay right and
 * a repeated key still names the line that set it first).  Every error is
 * reported; the checks after go on with the good lines.
 */
static void check_config(doctor_t *d, const char *given)
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
		say(&d->rep, RES_FAIL, "config", "%s; make it readable (mode "
		    "0644) or fix CONDUIT_BB_CONF", err.msg);
		return;
	}
	d->cfg_ok = true;
	if (missing) {
		say(&d->rep, RES_WARN, "config", "%s does not exist: every "
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
			say(&d->rep, RES_FAIL, "config", "%s", err.msg);
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
		say(&d->rep, RES_OK, "config", "%s parses (%u key%s set)",
		    d->conf_path, keys, keys == 1 ? "" : "s");
	cbb_buf_free(&good);
	free(text);
}

/* ---- slurm.conf, burst_buffer.lua, burst_buffer.conf ------------------- */

static bool slurm_get(const char *key, char *val, size_t size)
{
	char path[PATH_MAX];

	return cbb_slurm_conf_get(key, path, sizeof(path), val, size) == 0;
}

static void check_slurm_conf(doctor_t *d)
{
	char v[256], *slash;
	struct passwd *pw;
	struct stat st;

	if (stat(d->slurm_conf, &st) < 0) {
		say(&d->rep, RES_FAIL, "slurm.conf", "cannot read %s: %s; point "
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
	if (!slurm_get("BurstBufferType", v, sizeof(v)))
		say(&d->rep, RES_FAIL, "slurm.conf", "%s has no BurstBufferType; "
		    "add BurstBufferType=burst_buffer/lua and restart slurmctld",
		    d->slurm_conf);
	else if (strcmp(v, "burst_buffer/lua"))
		say(&d->rep, RES_FAIL, "slurm.conf", "%s has BurstBufferType=%s; "
		    "set BurstBufferType=burst_buffer/lua and restart slurmctld",
		    d->slurm_conf, v);
	else
		say(&d->rep, RES_OK, "slurm.conf", "%s: BurstBufferType="
		    "burst_buffer/lua", d->slurm_conf);
	if (!slurm_get("SlurmUser", v, sizeof(v)))
		snprintf(v, sizeof(v), "root"); /* Slurm's default */
	pw = getpwnam(v);
	if (!pw) {
		say(&d->rep, RES_FAIL, "SlurmUser", "%s names SlurmUser=%s, who "
		    "does not exist here; create the user or fix slurm.conf",
		    d->slurm_conf, v);
		return;
	}
	snprintf(d->su.name, sizeof(d->su.name), "%s", pw->pw_name);
	d->su.uid = pw->pw_uid;
	d->su.gid = pw->pw_gid;
	d->su.known = true;
	if (geteuid() != 0 && geteuid() != d->su.uid)
		say(&d->rep, RES_WARN, "SlurmUser", "%s (uid %u); this runs as "
		    "uid %u, so what SlurmUser can read is not tested: run "
		    "doctor as root or as %s", d->su.name, (unsigned)d->su.uid,
		    (unsigned)geteuid(), d->su.name);
	else
		say(&d->rep, RES_OK, "SlurmUser", "%s (uid %u): the hooks run as "
		    "this user; file checks below are made as it", d->su.name,
		    (unsigned)d->su.uid);
}

static void check_shim(doctor_t *d)
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
		say(&d->rep, RES_FAIL, "burst_buffer.lua", "%s: %s; it must hold "
		    "the one line " SHIM " (make install puts it there)", path,
		    missing ? "missing" : err.msg);
		free(text);
		return;
	}
	if (!strcmp(text, SHIM) || !strcmp(text, SHIM "\n"))
		say(&d->rep, RES_OK, "burst_buffer.lua", "%s is the one line "
		    SHIM, path);
	else
		say(&d->rep, RES_FAIL, "burst_buffer.lua", "%s is not the one "
		    "line " SHIM " (%zu bytes, %s); replace it with that line: "
		    "conduit_bb defines every hook itself", path, len,
		    strstr(text, "conduit_bb") ? "it mentions conduit_bb but "
		    "holds more" : "another plugin's script");
	free(text);
}

static void check_bb_conf(doctor_t *d)
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
		say(&d->rep, RES_WARN, "burst_buffer.conf", "%s: %s; Slurm then "
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
		say(&d->rep, RES_WARN, "burst_buffer.conf", "%s sets no "
		    "Directive=; add Directive=%s (Slurm's default is BB_LUA)",
		    path, d->cfg.directive);
	else if (strcmp(dir, d->cfg.directive))
		say(&d->rep, RES_FAIL, "burst_buffer.conf", "%s has Directive=%s "
		    "but conduit_bb.conf Directive=%s: Slurm never hands the "
		    "hooks their directives; make them equal", path, dir,
		    d->cfg.directive);
	else
		say(&d->rep, RES_OK, "burst_buffer.conf", "Directive=%s, as in "
		    "conduit_bb.conf", dir);
}

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

	if (slurm_get("PluginDir", dirs, sizeof(dirs))) {
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

static void check_slurm_lua(doctor_t *d)
{
	struct needed_lua n = { "", "" };
	char plugin[PATH_MAX + 32];
	cbb_elf_t e;
	cbb_err_t err;

	if (!find_plugin(plugin, sizeof(plugin))) {
		say(&d->rep, RES_FAIL, "slurm Lua", "Slurm's burst_buffer/lua "
		    "plugin (burst_buffer_lua.so) is not in PluginDir; install "
		    "Slurm's plugins (Debian: slurmctld) or fix PluginDir= in "
		    "slurm.conf");
		return;
	}
	cbb_err_clear(&err);
	if (cbb_elf_open(&e, plugin, &err) < 0) {
		say(&d->rep, RES_FAIL, "slurm Lua", "%s", err.msg);
		return;
	}
	cbb_elf_needed(&e, on_needed, &n);
	cbb_elf_close(&e);
	if (!n.ver[0]) {
		say(&d->rep, RES_WARN, "slurm Lua", "%s links no versioned liblua; "
		    "cannot tell which Lua slurmctld runs (Debian and Ubuntu: "
		    "5.1, EL8: 5.3, EL9: 5.4)", plugin);
		return;
	}
	snprintf(d->lua, sizeof(d->lua), "%s", n.ver);
	say(&d->rep, RES_OK, "slurm Lua", "%s links %s: slurmctld runs Lua %s",
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

static void check_module(doctor_t *d)
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
			say(&d->rep, RES_FAIL, "module", "no conduit_bb.so on Lua "
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
		say(&d->rep, RES_FAIL, "module", "%s", err.msg);
		return;
	}
	if (!module_lua(&e, built, sizeof(built))) {
		cbb_elf_close(&e);
		say(&d->rep, RES_FAIL, "module", "%s imports no Lua function: not "
		    "a Lua C module", path);
		return;
	}
	cbb_elf_close(&e);
	if (!d->lua[0])
		say(&d->rep, RES_WARN, "module", "%s was built for Lua %s; which "
		    "Lua slurmctld links is unknown (above)", path, built);
	else if (!strstr(built, d->lua))
		say(&d->rep, RES_FAIL, "module", "%s was built for Lua %s, but "
		    "slurmctld links Lua %s: every hook would fail to load; "
		    "rebuild and install it with make install LUA_VERSION=%s",
		    path, built, d->lua, d->lua);
	else
		say(&d->rep, RES_OK, "module", "%s was built for Lua %s, the Lua "
		    "slurmctld links", path, built);
}

/* ---- certificates and key ---------------------------------------------- */

static X509 *load_cert(const char *path, char *why, size_t size)
{
	X509 *x = NULL;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(why, size, "%s", strerror(errno));
		return NULL;
	}
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!x)
		snprintf(why, size, "no PEM certificate in it");
	ERR_clear_error();
	return x;
}

static void name_of(X509_NAME *n, char *buf, size_t size)
{
	int cn = X509_NAME_get_index_by_NID(n, NID_commonName, -1);
	ASN1_STRING *s;

	if (cn < 0 || !(s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, cn)))) {
		X509_NAME_oneline(n, buf, (int)size);
		return;
	}
	snprintf(buf, size, "CN=%.*s", ASN1_STRING_length(s),
		 (const char *)ASN1_STRING_get0_data(s));
}

static void date_of(const ASN1_TIME *t, char *buf, size_t size)
{
	struct tm tm;

	if (ASN1_TIME_to_tm(t, &tm) == 1)
		strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm);
	else
		snprintf(buf, size, "(bad date)");
}

/* Validity: FAIL expired or not yet valid, warn under 30 days. */
static void check_dates(doctor_t *d, const char *check, const char *path,
			X509 *x, const char *what_to_do)
{
	int days = 0, secs = 0;
	char when[64], sub[256], iss[256];

	name_of(X509_get_subject_name(x), sub, sizeof(sub));
	name_of(X509_get_issuer_name(x), iss, sizeof(iss));
	if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0) {
		date_of(X509_get0_notBefore(x), when, sizeof(when));
		say(&d->rep, RES_FAIL, check, "%s (%s) is not valid until %s; "
		    "check the clock, or %s", path, sub, when, what_to_do);
		return;
	}
	date_of(X509_get0_notAfter(x), when, sizeof(when));
	if (!ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(x))) {
		say(&d->rep, RES_FAIL, check, "%s: unreadable expiry date", path);
		return;
	}
	if (days < 0 || secs < 0 || (days == 0 && secs == 0))
		say(&d->rep, RES_FAIL, check, "%s (%s) expired on %s, %d day%s "
		    "ago; %s", path, sub, when, -days, days == -1 ? "" : "s",
		    what_to_do);
	else if (days < EXPIRY_WARN_DAYS)
		say(&d->rep, RES_WARN, check, "%s (%s) expires in %d day%s (%s); "
		    "%s before then", path, sub, days, days == 1 ? "" : "s",
		    when, what_to_do);
	else
		say(&d->rep, RES_OK, check, "%s: %s, issued by %s, expires in %d "
		    "days (%s)", path, sub, iss, days, when);
}

/* Readable by SlurmUser (tested as it), and for keys by nobody else. */
static bool check_access(doctor_t *d, const char *check, const char *path,
			 bool secret)
{
	struct stat st;
	int rc;

	if (stat(path, &st) < 0) {
		say(&d->rep, RES_FAIL, check, "cannot read %s: %s", path,
		    strerror(errno));
		return false;
	}
	if (secret && (st.st_mode & 077)) {
		say(&d->rep, RES_FAIL, check, "%s is mode %04o: readable by %s; "
		    "chmod 0600 %s (and chown %s %s)", path,
		    (unsigned)(st.st_mode & 07777),
		    st.st_mode & 004 ? "every user" : "its group", path,
		    who(&d->su), path);
		return false;
	}
	rc = as_slurm_user(&d->su, AS_READ, path);
	if (rc > 0) {
		say(&d->rep, RES_FAIL, check, "%s cannot be read by SlurmUser %s "
		    "(%s); chown %s %s%s", path, who(&d->su), strerror(rc),
		    who(&d->su), path, secret ? " && chmod 0600 it" :
		    " or chmod 0644 it");
		return false;
	}
	if (secret && d->su.known && st.st_uid != d->su.uid) {
		say(&d->rep, RES_WARN, check, "%s belongs to uid %u, not SlurmUser "
		    "%s; chown %s %s", path, (unsigned)st.st_uid, d->su.name,
		    d->su.name, path);
		return true;
	}
	return true;
}

static int no_passphrase(char *buf, int size, int rw, void *u)
{
	return 0;
}

static void check_tls(doctor_t *d)
{
	const cbb_config_t *c = &d->cfg;
	char why[256], sub[256];
	EVP_PKEY *key = NULL;
	FILE *f;

	if (!c->ca_cert || !c->client_cert || !c->client_key) {
		say(&d->rep, RES_FAIL, "certificates", "not set in %s:%s%s%s; "
		    "set them to Conduit's external CA and the conduit-service "
		    "certificate and key", d->conf_path,
		    c->ca_cert ? "" : " CACert",
		    c->client_cert ? "" : " ClientCert",
		    c->client_key ? "" : " ClientKey");
		return;
	}
	if (check_access(d, "CACert", c->ca_cert, false)) {
		d->ca = load_cert(c->ca_cert, why, sizeof(why));
		if (!d->ca)
			say(&d->rep, RES_FAIL, "CACert", "%s: %s", c->ca_cert, why);
		else if (X509_check_ca(d->ca) == 0)
			say(&d->rep, RES_FAIL, "CACert", "%s is not a CA certificate; "
			    "use Conduit's external CA (conduit-external-ca.pem)",
			    c->ca_cert);
		else
			check_dates(d, "CACert", c->ca_cert, d->ca, "get the "
				    "Conduit server's new external CA");
	}
	if (check_access(d, "ClientCert", c->client_cert, false)) {
		d->cert = load_cert(c->client_cert, why, sizeof(why));
		if (!d->cert) {
			say(&d->rep, RES_FAIL, "ClientCert", "%s: %s",
			    c->client_cert, why);
		} else {
			check_dates(d, "ClientCert", c->client_cert, d->cert,
				    "make a new certificate on the Conduit server "
				    "(conduit-server external-client-cert "
				    "--client-commonname conduit-service) and "
				    "install it");
			name_of(X509_get_subject_name(d->cert), sub, sizeof(sub));
			if (strcmp(sub, "CN=conduit-service"))
				say(&d->rep, RES_WARN, "ClientCert", "%s is %s, not "
				    "CN=conduit-service: Conduit lets only "
				    "conduit-service act for the jobs' users",
				    c->client_cert, sub);
		}
	}
	if (d->ca && d->cert) {
		X509_STORE *store = X509_STORE_new();
		X509_STORE_CTX *ctx = X509_STORE_CTX_new();
		int ok = 0;

		if (store && ctx && X509_STORE_load_file(store, c->ca_cert) == 1 &&
		    X509_STORE_CTX_init(ctx, store, d->cert, NULL) == 1) {
			/* expiry is its own line above */
			X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_NO_CHECK_TIME);
			ok = X509_verify_cert(ctx);
		}
		name_of(X509_get_issuer_name(d->cert), why, sizeof(why));
		if (ok == 1)
			say(&d->rep, RES_OK, "chain", "%s verifies against CACert "
			    "%s", c->client_cert, c->ca_cert);
		else
			say(&d->rep, RES_FAIL, "chain", "%s (issued by %s) does not "
			    "verify against CACert %s (%s): the server will refuse "
			    "it; use a certificate from the CA in CACert, or the "
			    "CA that issued it", c->client_cert, why, c->ca_cert,
			    ctx ? X509_verify_cert_error_string(
				    X509_STORE_CTX_get_error(ctx)) : "no memory");
		X509_STORE_CTX_free(ctx);
		X509_STORE_free(store);
		ERR_clear_error();
	}
	if (!check_access(d, "ClientKey", c->client_key, true))
		return;
	f = fopen(c->client_key, "r");
	if (f) {
		key = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL);
		fclose(f);
	}
	ERR_clear_error();
	if (!key) {
		say(&d->rep, RES_FAIL, "ClientKey", "%s holds no unencrypted PEM "
		    "private key; install the key the certificate was made "
		    "with (without a passphrase)", c->client_key);
		return;
	}
	if (d->cert && X509_check_private_key(d->cert, key) != 1)
		say(&d->rep, RES_FAIL, "ClientKey", "%s does not match ClientCert "
		    "%s: the TLS handshake cannot succeed; install the key the "
		    "certificate was made with", c->client_key, c->client_cert);
	else
		say(&d->rep, RES_OK, "ClientKey", "%s: mode 0600, readable by %s%s",
		    c->client_key, who(&d->su),
		    d->cert ? ", matches ClientCert" : "");
	ERR_clear_error();
	EVP_PKEY_free(key);
}

/* ---- the server ---------------------------------------------------------- */

static const char *server_hint(const char *msg)
{
	if (strstr(msg, "check ClientCert"))
		return "the server closed the connection after the handshake, "
		       "which is how a TLS 1.3 server refuses a client "
		       "certificate (expired, or not from its CA: see ClientCert "
		       "and chain above)";
	if (strstr(msg, "verify"))
		return "CACert must be the CA of the server's certificate, and "
		       "the certificate must name ConduitServer's host (else set "
		       "ServerName=)";
	if (strstr(msg, "bad certificate configuration"))
		return "fix ClientCert/ClientKey (above)";
	if (strstr(msg, "refused") || strstr(msg, "resolve") ||
	    strstr(msg, "timed out") || strstr(msg, "connect"))
		return "is the Conduit server running and reachable at "
		       "ConduitServer? (firewall, host, port)";
	return "see docs/admin.md, Troubleshooting";
}

static void check_server(doctor_t *d)
{
	const cbb_config_t *c = &d->cfg;
	cbb_transfers_t t = { NULL, 0 };
	char sub[256] = "CN=?", version[128];
	cbb_grpc_t g;
	cbb_err_t err;
	bool again;
	unsigned ms;
	int rc;

	if (!c->server_host) {
		say(&d->rep, RES_FAIL, "server", "ConduitServer is not set in %s; "
		    "set ConduitServer=host:port", d->conf_path);
		return;
	}
	if (d->cert)
		name_of(X509_get_subject_name(d->cert), sub, sizeof(sub));
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, c, 0, &err) < 0) {
		say(&d->rep, RES_FAIL, "server", "%s", err.msg);
		cbb_grpc_close(&g);
		return;
	}
	/* a comment no transfer has: the answer is small whoever asks */
	rc = cbb_conduit_query(&g, "", "^CONDUIT-BB-DOCTOR:$", &t, &again, &err);
	ms = cbb_grpc_spent_ms(&g);
	if (rc < 0) {
		say(&d->rep, RES_FAIL, "server", "%s:%u did not answer a Query "
		    "with ClientCert %s (%s): %s; %s", c->server_host,
		    c->server_port, sub, again ? "no answer" : "refused",
		    err.msg, server_hint(err.msg));
		cbb_grpc_close(&g);
		return;
	}
	cbb_transfers_free(&t);
	version[0] = '\0';
	cbb_err_clear(&err);
	if (cbb_conduit_version(&g, version, sizeof(version), &err) < 0)
		snprintf(version, sizeof(version), "version unknown");
	cbb_grpc_close(&g);
	say(&d->rep, RES_OK, "server", "%s:%u answered a Query in %u ms; it sees "
	    "ClientCert's %s (Conduit %s)", c->server_host, c->server_port, ms,
	    sub, version[0] ? version : "?");
}

/* ---- StateDir and AuditLog ---------------------------------------------- */

static void check_state_dir(doctor_t *d)
{
	const char *dir = cbb_conf_state_dir(&d->cfg);
	unsigned long long avail, inodes;
	struct statvfs vfs;
	struct stat st;
	unsigned mode;
	int rc;

	if (lstat(dir, &st) < 0) {
		say(&d->rep, errno == ENOENT ? RES_WARN : RES_FAIL, "StateDir",
		    "%s: %s; the hooks make it on first use if they can: "
		    "mkdir -m 0700 %s && chown %s %s", dir, strerror(errno),
		    dir, who(&d->su), dir);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		say(&d->rep, RES_FAIL, "StateDir", "%s is %s, not a directory: "
		    "every staging hook fails; make it a real directory "
		    "(mode 0700, owned by %s)", dir, S_ISLNK(st.st_mode) ?
		    "a symbolic link" : "a file", who(&d->su));
		return;
	}
	mode = (unsigned)(st.st_mode & 07777);
	if (d->su.known && st.st_uid != d->su.uid && st.st_uid != 0) {
		struct passwd *pw = getpwuid(st.st_uid);

		say(&d->rep, RES_FAIL, "StateDir", "%s belongs to uid %u (%s), "
		    "not SlurmUser %s: every staging hook refuses it; chown %s %s",
		    dir, (unsigned)st.st_uid, pw ? pw->pw_name : "no user",
		    d->su.name, d->su.name, dir);
		return;
	}
	if (mode & 022) {
		say(&d->rep, RES_FAIL, "StateDir", "%s is mode %04o: writable by "
		    "group or others, so every staging hook refuses it; chmod "
		    "0700 %s", dir, mode, dir);
		return;
	}
	rc = as_slurm_user(&d->su, AS_WRITE_DIR, dir);
	if (rc > 0) {
		say(&d->rep, RES_FAIL, "StateDir", "%s is not writable by "
		    "SlurmUser %s (%s): the hooks cannot record what they "
		    "start; %s", dir, who(&d->su), strerror(rc), rc == EROFS ?
		    "put StateDir on a writable file system" : "chown it to "
		    "SlurmUser and chmod 0700");
		return;
	}
	if (statvfs(dir, &vfs) < 0) {
		say(&d->rep, RES_WARN, "StateDir", "%s: cannot tell free space: %s",
		    dir, strerror(errno));
		return;
	}
	avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
	inodes = vfs.f_files ? (unsigned long long)vfs.f_favail : ~0ULL;
	if (avail < STATE_MIN_FREE || inodes < STATE_MIN_INODES)
		say(&d->rep, RES_FAIL, "StateDir", "%s has %llu KiB and %llu "
		    "inodes free: the hooks' next record may not fit; free "
		    "space on that file system", dir, avail >> 10, inodes);
	else if (avail < STATE_WARN_FREE)
		say(&d->rep, RES_WARN, "StateDir", "%s has only %llu MiB free; "
		    "free space on that file system", dir, avail >> 20);
	else if (mode != 0700)
		say(&d->rep, RES_WARN, "StateDir", "%s is mode %04o: other users "
		    "can read the jobs' records; chmod 0700 %s", dir, mode, dir);
	else
		say(&d->rep, RES_OK, "StateDir", "%s: owned by %s, mode 0700, "
		    "writable by %s, %llu MiB free", dir, st.st_uid ? who(&d->su)
		    : "root", who(&d->su), avail >> 20);
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

static void check_audit_log(doctor_t *d)
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
		rc = as_slurm_user_call(&d->su, audit_probe, log, why,
					sizeof(why));
	} else if (stat(slash && dir[0] ? dir : "/", &st) == 0 &&
		   (st.st_mode & (S_IWGRP | S_IWOTH))) {
		rc = 1;
		snprintf(why, sizeof(why), "its directory %s has mode %04o: it "
			 "must not be writable by group or others", dir[0] ?
			 dir : "/", (unsigned)(st.st_mode & 07777));
	} else {
		/* the hooks create it: SlurmUser must be able to */
		rc = as_slurm_user(&d->su, AS_WRITE_DIR, slash ? dir : ".");
		if (rc > 0)
			snprintf(why, sizeof(why), "SlurmUser %s cannot create "
				 "it (%s)", who(&d->su), strerror(rc));
	}
	if (rc > 0)
		say(&d->rep, RES_WARN, "AuditLog", "%s: %s: the hooks write no "
		    "audit line and no hook record (the stages still succeed, "
		    "conduit-bb metrics lacks them); make it a file of %s, mode "
		    "0640, in a directory only its owner may write", log, why,
		    who(&d->su));
	else if (rc < 0)
		say(&d->rep, RES_OK, "AuditLog", "%s: not tried as %s (doctor "
		    "runs as neither root nor SlurmUser)", log, who(&d->su));
	else
		say(&d->rep, RES_OK, "AuditLog", "%s: %s by %s", log,
		    exists ? "appendable" : "can be created", who(&d->su));
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

static void check_program(doctor_t *d, const char *check, const char *prog,
			  const char *key)
{
	char line[512];
	bool as_su = d->su.known && geteuid() == 0 && d->su.uid != 0;
	int rc;

	/* the hooks run it as SlurmUser: so does this, when root; as
	 * another user, as that user */
	rc = as_slurm_user_call(&d->su, version_probe, prog, line,
				sizeof(line));
	if (rc < 0 && !as_su)
		rc = version_probe(prog, line, sizeof(line));
	if (rc != 0)
		say(&d->rep, RES_FAIL, check, "cannot run %s --version%s%s (%s); "
		    "install Slurm's client commands%s or set %s= in "
		    "conduit_bb.conf", prog, as_su ? " as SlurmUser " : "",
		    as_su ? who(&d->su) : "", rc < 0 ? "cannot act as "
		    "SlurmUser" : line, as_su ? " where SlurmUser can run them" :
		    "", key);
	else
		say(&d->rep, RES_OK, check, "%s: %s", prog, line);
}

/* ---- the switch half, when configured ------------------------------------- */

static void check_switch(doctor_t *d)
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
		say(&d->rep, RES_FAIL, "SessionKeyFile", "not set: the switch "
		    "hooks cannot sign jobinfo; set SessionKeyFile= (at least 32 "
		    "random bytes, mode 0600)");
	else if (check_access(d, "SessionKeyFile", c->session_key_file, true)) {
		if (cbb_mac_key_load(c->session_key_file, key, &err) < 0)
			say(&d->rep, RES_FAIL, "SessionKeyFile", "%s", err.msg);
		else
			say(&d->rep, RES_OK, "SessionKeyFile", "%s: private, "
			    "readable by %s", c->session_key_file, who(&d->su));
		cbb_key_wipe(key);
	}
	if (!c->switch_http)
		return;
	if ((c->switch_ca && !check_access(d, "SwitchCACert", c->switch_ca, false)) ||
	    (c->switch_cert && !check_access(d, "SwitchClientCert", c->switch_cert,
					      false)) ||
	    (c->switch_key && !check_access(d, "SwitchClientKey", c->switch_key,
					     true)))
		return;
	if (cbb_slurm_cluster_name(path, sizeof(path), cluster,
				   sizeof(cluster)) < 0)
		snprintf(cluster, sizeof(cluster), "cluster");
	cbb_err_clear(&err);
	/* releasing job 0's session: no job has it, so nothing changes */
	rc = cbb_ctl_release(c, cluster, 0, &err);
	if (rc == CBB_CTL_OK || rc == CBB_CTL_GONE)
		say(&d->rep, RES_OK, "SwitchController", "%s answered", c->switch_url);
	else
		say(&d->rep, RES_FAIL, "SwitchController", "%s: %s; check the "
		    "controller, SwitchCACert, SwitchClientCert and "
		    "SwitchClientKey", c->switch_url, err.msg);
}

/* ---- the command ------------------------------------------------------------ */

static void doctor_usage(FILE *f)
{
	fprintf(f, "usage: conduit-bb doctor [--json] [--config FILE] "
		"[--slurm-conf FILE] [--module FILE]\n");
}

int cbb_cmd_doctor(int argc, char **argv)
{
	const char *config = NULL, *env;
	doctor_t d;
	int i;

	memset(&d, 0, sizeof(d));
	for (i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--json")) {
			d.rep.json = true;
		} else if (!strcmp(argv[i], "--config") && v) {
			config = v;
			i++;
		} else if (!strcmp(argv[i], "--slurm-conf") && v) {
			setenv("SLURM_CONF", v, 1);
			i++;
		} else if (!strcmp(argv[i], "--module") && v) {
			d.module = v;
			i++;
		} else {
			doctor_usage(stderr);
			return 2;
		}
	}
	/* conduit_bb.conf is looked for beside slurm.conf, as the hooks do */
	env = getenv("SLURM_CONF");
	snprintf(d.slurm_conf, sizeof(d.slurm_conf), "%s",
		 env && env[0] ? env : "/etc/slurm/slurm.conf");
	if (d.rep.json)
		d.rep.checks = json_array();
	check_config(&d, config);
	check_slurm_conf(&d);
	check_shim(&d);
	check_bb_conf(&d);
	check_slurm_lua(&d);
	check_module(&d);
	if (d.cfg_ok) {
		char buf[PATH_MAX];

		check_tls(&d);
		check_server(&d);
		check_state_dir(&d);
		check_audit_log(&d);
		check_program(&d, "squeue", cbb_conf_squeue(&d.cfg, buf,
							    sizeof(buf)), "Squeue");
		check_program(&d, "scontrol", cbb_conf_scontrol(&d.cfg),
			      "Scontrol");
		check_switch(&d);
	}
	if (d.rep.json) {
		json_t *root = json_pack("{s:o, s:i, s:i, s:i}", "checks",
					 d.rep.checks, "ok", (int)d.rep.n[RES_OK],
					 "warnings", (int)d.rep.n[RES_WARN],
					 "failed", (int)d.rep.n[RES_FAIL]);

		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		putchar('\n');
		json_decref(root);
	} else {
		printf("doctor: %u ok, %u warning%s, %u failed\n", d.rep.n[RES_OK],
		       d.rep.n[RES_WARN], d.rep.n[RES_WARN] == 1 ? "" : "s",
		       d.rep.n[RES_FAIL]);
	}
	X509_free(d.ca);
	X509_free(d.cert);
	cbb_config_free(&d.cfg);
	return d.rep.n[RES_FAIL] ? 1 : 0;
}

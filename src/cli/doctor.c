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
#include "doctor_int.h"

void doctor_say(report_t *r, res_t s, const char *check, const char *fmt, ...)
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

static int become_slurm_user(const void *who)
{
	const slurm_user_t *su = who;

	if (initgroups(su->name, su->gid) < 0 || setgid(su->gid) < 0 ||
	    setuid(su->uid) < 0)
		return -1;
	return 0;
}

typedef struct {
	as_op_t op;
	const char *path;
	as_fn_t fn;
	const void *arg;
	size_t size;
} as_call_t;

static int op_apart(const void *arg, cbb_buf_t *out)
{
	const as_call_t *c = arg;

	(void)out;
	return as_op(c->op, c->path) & 0xff;
}

static int fn_apart(const void *arg, cbb_buf_t *out)
{
	const as_call_t *c = arg;
	char msg[4096];
	int rc;

	rc = c->fn(c->arg, msg, c->size < sizeof(msg) ? c->size : sizeof(msg));
	(void)cbb_buf_adds(out, msg);
	return rc ? 1 : 0;
}

/*
 * Do `op` on `path` as SlurmUser: directly when we are SlurmUser, in a
 * child that becomes SlurmUser when we are root.  Returns 0, an errno,
 * or -1 when it cannot be told (neither root nor SlurmUser).
 */
int doctor_as_slurm_user(const slurm_user_t *su, as_op_t op, const char *path)
{
	as_call_t c = { op, path, NULL, NULL, 0 };
	cbb_buf_t none;
	int rc;

	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return as_op(op, path);
	if (geteuid() != 0)
		return -1;
	cbb_buf_init(&none, 1);
	rc = cbb_apart(become_slurm_user, su, op_apart, &c, &none);
	cbb_buf_free(&none);
	return rc;
}

/*
 * Call fn(arg, msg, size) as SlurmUser: directly when we are SlurmUser,
 * in a child with SlurmUser's uid and groups when we are root (its
 * message coming back through a pipe).  fn's result (0 or 1), or -1 when
 * it cannot be told (neither root nor SlurmUser, or the child could not
 * become SlurmUser).
 */
int doctor_as_slurm_user_call(const slurm_user_t *su, as_fn_t fn,
			      const void *arg, char *msg, size_t size)
{
	as_call_t c = { AS_READ, NULL, fn, arg, size };
	cbb_buf_t got;
	int rc;

	msg[0] = '\0';
	if (!su->known)
		return -1;
	if (geteuid() == su->uid)
		return fn(arg, msg, size);
	if (geteuid() != 0)
		return -1;
	cbb_buf_init(&got, size);
	rc = cbb_apart(become_slurm_user, su, fn_apart, &c, &got);
	snprintf(msg, size, "%s", got.data ? got.data : "");
	cbb_buf_free(&got);
	return rc;
}

const char *doctor_who(const slurm_user_t *su)
{
	return su->known ? su->name : "SlurmUser";
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
	doctor_check_config(&d, config);
	doctor_check_slurm_conf(&d);
	doctor_check_shim(&d);
	doctor_check_bb_conf(&d);
	doctor_check_slurm_lua(&d);
	doctor_check_module(&d);
	if (d.cfg_ok) {
		char buf[PATH_MAX];

		doctor_check_tls(&d);
		doctor_check_server(&d);
		doctor_check_state_dir(&d);
		doctor_check_audit_log(&d);
		doctor_check_program(&d, "squeue", cbb_conf_squeue(&d.cfg, buf,
							    sizeof(buf)), "Squeue");
		doctor_check_program(&d, "scontrol", cbb_conf_scontrol(&d.cfg),
			      "Scontrol");
		doctor_check_switch(&d);
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

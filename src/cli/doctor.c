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
 * the files), because that is who the hooks run as (doctor_as.c).
 * The checks are in doctor_conf.c, doctor_module.c, doctor_tls.c and
 * doctor_state.c; each reports through doctor_report.c.
 */
#include "doctor_int.h"

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
	/* slurm.conf where Slurm's commands look: SLURM_CONF, the default,
	 * then a configless node's copy (slurmd links /run/slurm/conf to
	 * its conf-cache); conduit_bb.conf is looked for beside it, as the
	 * hooks do */
	env = getenv("SLURM_CONF");
	if ((!env || !env[0]) && access("/etc/slurm/slurm.conf", F_OK) < 0 &&
	    access("/run/slurm/conf/slurm.conf", F_OK) == 0)
		setenv("SLURM_CONF", "/run/slurm/conf/slurm.conf", 1);
	env = getenv("SLURM_CONF");
	snprintf(d.slurm_conf, sizeof(d.slurm_conf), "%s",
		 env && env[0] ? env : "/etc/slurm/slurm.conf");
	if (d.rep.json)
		d.rep.checks = json_array();
	doctor_check_config(&d, config);
	doctor_check_slurm_conf(&d);
	doctor_check_shim(&d);
	doctor_check_bb_conf(&d);
	doctor_check_switch_script(&d);
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

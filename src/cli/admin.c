/* admin.c - see admin.h */
#include "admin.h"

void cbb_admin_usage(FILE *f)
{
	fprintf(f,
		"\n"
		"For admins:\n"
		"       conduit-bb doctor [--json] [--config FILE] "
		"[--slurm-conf FILE] [--module FILE]\n"
		"       conduit-bb status [--json] [--all] [--stuck DURATION] "
		"[--config FILE]\n"
		"       conduit-bb metrics [--output FILE] [--config FILE]\n"
		"       conduit-bb recover [--config FILE] [--after DURATION] "
		"[--cancel-stuck] [JOB...]\n"
		"\n"
		"doctor checks the installation end to end (run it as root or "
		"SlurmUser):\n"
		"one line per check, ok, warn or FAIL with what to do; exit 0 "
		"when nothing\n"
		"failed.\n"
		"status lists every job StateDir knows with a stage in progress "
		"or failed\n"
		"(as root), from one Query for all of them, and the jobs a "
		"slurmctld restart\n"
		"left where Slurm will not move them.\n"
		"metrics prints Prometheus text (AuditLog counters, StateDir "
		"gauges) for\n"
		"node_exporter's textfile collector.\n"
		"recover finishes now the stage-outs Slurm dropped (a slurmctld "
		"restart\n"
		"killed their hooks), as the next hook's sweep would, releases "
		"jobs held\n"
		"for a hook Slurm killed and requeues jobs whose launch was lost "
		"(as root).\n");
}

int cbb_admin_config(const char *path, cbb_config_t *cfg)
{
	cbb_err_t err;

	cbb_err_clear(&err);
	if (cbb_config_load(cfg, path, &err) == 0)
		return 0;
	fprintf(stderr, "conduit-bb: %s\n", err.msg);
	cbb_config_free(cfg);
	return 2;
}

int cbb_admin_statedir(const char *path, cbb_config_t *cfg,
		       cbb_sd_list_t *sd)
{
	cbb_err_t err;

	if (cbb_admin_config(path, cfg))
		return 2;
	cbb_err_clear(&err);
	if (cbb_sd_become_owner(cfg, &err) == 0 && cbb_sd_list(cfg, sd, &err) == 0)
		return 0;
	fprintf(stderr, "conduit-bb: %s\n", err.msg);
	cbb_config_free(cfg);
	return 2;
}

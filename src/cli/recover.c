/*
 * recover.c - `conduit-bb recover [--config FILE] [JOB...]`: finish now
 * the stage-outs Slurm dropped (docs/admin.md, "Stage-outs Slurm drops"),
 * as the next hook's sweep would, instead of waiting for one: every job
 * StateDir holds a stage-out plan of (or the jobs named) is asked about
 * with one squeue; each that Slurm has ended for good, or left in
 * STAGE_OUT with no stage-out hook for ten minutes, gets one poll of its
 * stage-out through the module's own engine (src/bb/engine/lost.c):
 * what is missing is started, once, with the job's keys and records, and
 * what runs is followed.  Run again until nothing is left running, or
 * leave the rest to the sweeps.  Every other job is left to Slurm.
 *
 * Run as root it becomes StateDir's owner first (SlurmUser), as the hooks
 * run.  Exit status: 0, 1 when a stage-out failed or could not be read,
 * 2 on a usage, config or StateDir problem.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "config.h"
#include "grpc.h"
#include "jobstate.h"
#include "log.h"
#include "lost.h"
#include "statedir.h"
#include "statefile.h"

#define RECOVER_MAX 256

static void usage(FILE *f)
{
	fprintf(f, "usage: conduit-bb recover [--config FILE] [JOB...]\n");
}

/* The engine's log lines, as the command's output (its own, not Slurm's) */
static void say(void *ud, int level, const char *msg)
{
	(void)ud;
	if (level <= CBB_LOG_INFO)
		printf("%s%s\n", level <= CBB_LOG_ERROR ? "error: " : "", msg);
}

/* One job's dropped stage-out, one poll: 0 ended, 1 runs, -1 failed. */
static int finish(const cbb_config_t *cfg, const cbb_sd_plan_t *p)
{
	const cbb_sd_job_t *sj = p->job;
	cbb_job_ctx_t self;
	cbb_statedir_t dir;
	cbb_grpc_t g;
	cbb_err_t err;
	int rc;

	if (!p->dropped) {
		printf("job %u: left to Slurm (squeue: %s)\n", sj->job_id,
		       p->f.state[0] ? p->f.state : "no answer");
		return 0;
	}
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, cfg, 0, &err) < 0) {
		printf("error: job %u: %s\n", sj->job_id, err.msg);
		return -1;
	}
	cbb_statedir_init(&dir, cfg, sj->cluster);
	cbb_job_ctx_init(&self, cfg, &g, sj->cluster, sj->job_id, 0);
	self.sd = &dir;
	self.log = say;
	rc = cbb_lost_finish(&self, sj->job_id, &p->f, "conduit-bb recover");
	if (rc == 1)
		printf("job %u: stage-out still running: run this again, or "
		       "leave it to the next hook's sweep\n", sj->job_id);
	cbb_grpc_close(&g);
	cbb_statedir_close(&dir);
	return rc;
}

int cbb_cmd_recover(int argc, char **argv)
{
	const char *config = NULL;
	cbb_sd_plan_t p[RECOVER_MAX];
	uint32_t only[RECOVER_MAX];
	cbb_sd_list_t sd;
	cbb_config_t cfg;
	size_t i, k, nonly = 0;
	bool answered;
	int a, rc = 0;

	for (a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--config") && a + 1 < argc &&
		    nonly == 0) {
			config = argv[++a];
		} else if (argv[a][0] >= '0' && argv[a][0] <= '9' &&
			   strspn(argv[a], "0123456789") == strlen(argv[a]) &&
			   strlen(argv[a]) <= 10 && nonly < RECOVER_MAX &&
			   strtoul(argv[a], NULL, 10) <= UINT32_MAX) {
			only[nonly++] = (uint32_t)strtoul(argv[a], NULL, 10);
		} else {
			usage(stderr); /* (the job ids come last) */
			return 2;
		}
	}
	if (cbb_admin_statedir(config, &cfg, &sd))
		return 2;
	/* (a plan that cannot be read is looked at too: finish says why) */
	k = cbb_sd_plans(&cfg, &sd, only, nonly, true, p, RECOVER_MAX,
			 &answered);
	if (!answered) {
		fprintf(stderr, "conduit-bb: squeue gave no answer: nothing "
			"done\n");
		rc = 2;
	}
	for (i = 0; rc != 2 && i < k; i++)
		if (finish(&cfg, &p[i]) < 0)
			rc = 1;
	if (rc != 2)
		printf("recover: %zu job%s with a stage-out plan looked at\n", k,
		       k == 1 ? "" : "s");
	cbb_sd_free(&sd);
	cbb_config_free(&cfg);
	return rc;
}

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

static bool named(uint32_t id, char **ids, int n)
{
	int i;

	if (n == 0)
		return true;
	for (i = 0; i < n; i++)
		if (strtoul(ids[i], NULL, 10) == id)
			return true;
	return false;
}

/* Whether the job's stage-out plan was never seen to end (a plan that
 * does not read is looked at too: finish() says why). */
static bool open_plan(const cbb_config_t *cfg, const cbb_sd_job_t *sj)
{
	cbb_statedir_t dir;
	cbb_recs_t r;
	cbb_lost_t l;
	cbb_err_t err;
	bool open = true;

	cbb_err_clear(&err);
	cbb_statedir_init(&dir, cfg, sj->cluster);
	if (cbb_lost_load(&dir, sj->job_id, &l, &err) == 0) {
		if (cbb_recs_load(&dir, sj->job_id, UINT32_MAX, 0, &r, &err) == 0) {
			open = cbb_lost_open(&l, &r);
			cbb_recs_free(&r);
		}
		cbb_lost_free(&l);
	}
	cbb_statedir_close(&dir);
	return open;
}

/* One job's dropped stage-out, one poll: 0 ended, 1 runs, -1 failed. */
static int finish(const cbb_config_t *cfg, const cbb_sd_job_t *sj,
		  const cbb_job_facts_t *f)
{
	cbb_job_ctx_t self;
	cbb_statedir_t dir;
	cbb_grpc_t g;
	cbb_err_t err;
	int rc = -1;

	cbb_statedir_init(&dir, cfg, sj->cluster);
	if (!cbb_outplan_dropped(&dir, sj->job_id,
				 cbb_job_ended_for_good(f), f->state)) {
		printf("job %u: left to Slurm (squeue: %s)\n", sj->job_id,
		       f->state[0] ? f->state : "no answer");
		cbb_statedir_close(&dir);
		return 0;
	}
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, cfg, 0, &err) < 0) {
		printf("error: job %u: %s\n", sj->job_id, err.msg);
		cbb_statedir_close(&dir);
		return -1;
	}
	cbb_job_ctx_init(&self, cfg, &g, sj->cluster, sj->job_id, 0);
	self.sd = &dir;
	self.log = say;
	rc = cbb_lost_finish(&self, sj->job_id, f, "conduit-bb recover");
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
	cbb_sd_job_t *pick[RECOVER_MAX];
	uint32_t ids[RECOVER_MAX];
	cbb_job_facts_t *f;
	cbb_sd_list_t sd;
	cbb_config_t cfg;
	cbb_err_t err;
	char sq[4200], **named_ids = NULL;
	size_t i, k = 0;
	int a, nn = 0, rc = 0;

	for (a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--config") && a + 1 < argc) {
			config = argv[++a];
		} else if (argv[a][0] >= '0' && argv[a][0] <= '9' &&
			   strspn(argv[a], "0123456789") == strlen(argv[a])) {
			if (!named_ids)
				named_ids = argv + a;
			else if (named_ids + nn != argv + a) {
				usage(stderr); /* ids come last, together */
				return 2;
			}
			nn++;
		} else {
			usage(stderr);
			return 2;
		}
	}
	cbb_err_clear(&err);
	if (cbb_config_load(&cfg, config, &err) < 0) {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
		cbb_config_free(&cfg);
		return 2;
	}
	if (cbb_sd_become_owner(&cfg, &err) < 0 ||
	    cbb_sd_list(&cfg, &sd, &err) < 0) {
		fprintf(stderr, "conduit-bb: %s\n", err.msg);
		cbb_config_free(&cfg);
		return 2;
	}
	for (i = 0; i < sd.n && k < RECOVER_MAX; i++)
		if ((sd.v[i].files & CBB_SD_OUTPLAN) &&
		    named(sd.v[i].job_id, named_ids, nn) && open_plan(&cfg, &sd.v[i])) {
			pick[k] = &sd.v[i];
			ids[k++] = sd.v[i].job_id;
		}
	f = calloc(k + 1, sizeof(*f));
	if (!f) {
		fprintf(stderr, "conduit-bb: out of memory\n");
		rc = 2;
	} else if (k && cbb_jobs_state(cbb_conf_squeue(&cfg, sq, sizeof(sq)),
				       ids, k, CBB_SQUEUE_TIMEOUT_MS, f) < 0) {
		fprintf(stderr, "conduit-bb: squeue gave no answer: nothing "
			"done\n");
		rc = 2;
	}
	for (i = 0; rc != 2 && i < k; i++)
		if (finish(&cfg, pick[i], &f[i]) < 0)
			rc = 1;
	if (rc != 2)
		printf("recover: %zu job%s with a stage-out plan looked at\n", k,
		       k == 1 ? "" : "s");
	free(f);
	cbb_sd_free(&sd);
	cbb_config_free(&cfg);
	return rc;
}

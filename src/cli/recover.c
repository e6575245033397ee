/*
 * recover.c - `conduit-bb recover [--config FILE] [--after DURATION]
 * [--cancel-stuck] [JOB...]`: what a slurmctld restart left for an admin
 * to do (docs/admin.md, "What Slurm loses in a restart"), done at once:
 *
 * - the stage-outs Slurm dropped (docs/admin.md, "Stage-outs Slurm
 *   drops") are finished as the next hook's sweep would: every job
 *   StateDir holds a stage-out plan of (or the jobs named) is asked about
 *   with one squeue; each that Slurm has ended for good, left in
 *   STAGE_OUT with no buffer, or with no stage-out hook for ten minutes,
 *   gets one poll of its stage-out through the module's own engine
 *   (src/bb/engine/lost.c): what is missing is started, once, with the
 *   job's keys and records, and what runs is followed;
 * - the jobs Slurm will never move by itself (slurmlost.h) get what an
 *   admin would do by hand: a job held because Slurm killed its stage-in
 *   hook is released (`scontrol release`: Slurm stages it in again, and
 *   the hooks find what is already there), a RUNNING job whose launch was
 *   lost is requeued (`scontrol requeue`), and a job left in stage-in
 *   with no buffer, which Slurm can neither start nor requeue, is
 *   cancelled only with --cancel-stuck (`scancel`: its teardown aborts
 *   its transfers; the user submits it again).
 *
 * Run again until nothing is left running, or leave the rest to the
 * sweeps.  Every other job is left to Slurm.  Run as root it becomes
 * StateDir's owner first (SlurmUser, an operator in Slurm's eyes), as
 * the hooks run.  Exit status: 0, 1 when a stage-out failed or could not
 * be read, an scontrol/scancel failed or Slurm did not say what it lost,
 * 2 on a usage, config or StateDir problem or when squeue gave no answer
 * about the stage-out plans.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin.h"
#include "config.h"
#include "grpc.h"
#include "jobstate.h"
#include "log.h"
#include "outcome.h"
#include "lost.h"
#include "slurmjob.h"
#include "slurmlost.h"
#include "stage.h"
#include "statedir.h"
#include "statefile.h"
#include "symbols.h"

#define RECOVER_MAX 256

static void usage(FILE *f)
{
	fprintf(f, "usage: conduit-bb recover [--config FILE] [--after DURATION] "
		"[--cancel-stuck] [JOB...]\n");
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

/* "N", "Ns" or "Nm", at most a week */
static int duration(const char *s, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || v > 7 * 86400)
		return -1;
	if (!strcmp(end, "m"))
		v *= 60;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (v > 7 * 86400)
		return -1;
	*out = v;
	return 0;
}

/* scontrol ACTION ID (or scancel ID): 0, or -1 with what it said */
static int act(const cbb_config_t *cfg, const char *prog, const char *action,
	       uint32_t id, char *said, size_t size)
{
	char path[4200], where[4200], idtxt[16], verb[16], *out, *err;
	char *argv[] = { path, action ? verb : idtxt, action ? idtxt : NULL,
			 NULL };
	int rc;

	snprintf(path, sizeof(path), "%s", cbb_sl_beside(cfg, prog, where,
							 sizeof(where)));
	snprintf(idtxt, sizeof(idtxt), "%u", id);
	snprintf(verb, sizeof(verb), "%s", action ? action : "");
	rc = cbb_sl_run(argv, 10000, 4096, &out, &err);
	snprintf(said, size, "%s", rc < 0 ? "could not be run or timed out" : err);
	said[strcspn(said, "\n")] = '\0';
	free(out);
	free(err);
	return rc == 0 ? 0 : -1;
}

/* The cluster StateDir knows the job by, or NULL. */
static const char *cluster_of(const cbb_sd_list_t *sd, uint32_t id)
{
	size_t i;

	for (i = 0; i < sd->n; i++)
		if (sd->v[i].job_id == id)
			return sd->v[i].cluster;
	return NULL;
}

/*
 * A job whose launch Slurm lost: its attempt marked before it is
 * requeued, so that the stage-out Slurm runs for it skips every
 * directive (the batch script never ran: nothing of the job's to copy).
 */
static void mark_unlaunched(const cbb_config_t *cfg, const cbb_sd_list_t *sd,
			    const cbb_sl_job_t *j)
{
	const char *cluster = cluster_of(sd, j->job_id);
	cbb_statedir_t dir;

	if (!cluster)
		return;
	cbb_statedir_init(&dir, cfg, cluster);
	cbb_unlaunched_mark(&dir, j->job_id, j->restart);
	cbb_statedir_close(&dir);
}

/*
 * A job just cancelled in stage-in: what its hurried teardown would do
 * (Slurm may kill that teardown with the cancelled job's scripts), if
 * StateDir knows it.
 */
static int stop_stage_in(const cbb_config_t *cfg, const cbb_sd_list_t *sd,
			 uint32_t id)
{
	cbb_job_ctx_t self;
	cbb_statedir_t dir;
	cbb_grpc_t g;
	cbb_err_t err;
	int rc;
	const char *cluster = cluster_of(sd, id);

	if (!cluster)
		return 0;
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, cfg, 0, &err) < 0) {
		printf("error: job %u: %s\n", id, err.msg);
		return -1;
	}
	cbb_statedir_init(&dir, cfg, cluster);
	cbb_job_ctx_init(&self, cfg, &g, cluster, 0, 0);
	self.sd = &dir;
	self.log = say;
	rc = cbb_stage_stop_cancelled(&self, id);
	cbb_grpc_close(&g);
	cbb_statedir_close(&dir);
	return rc;
}

/*
 * A job in STAGE_OUT with no buffer, or one ended with no stage-out
 * (unstaged), that StateDir holds no stage-out plan of: no hook of its
 * stage-out ever ran (Slurm 25.11 takes job ends for a minute after it
 * stopped slurmscriptd on its way down: its post_run and teardowns
 * "failed, status=-1, response=(null)" and the buffer was removed).
 * Its plan is built from what Slurm keeps of the job, as its data_out
 * would have built it (slurmjob.h, cbb_lost_rebuild), and finished below
 * with the others: its record first (the .outdone mark is the
 * attempt's), its script only when the plan is to be built.  1 built, 0
 * none needed, -1 failed (said).
 */
static int rebuild(const cbb_config_t *cfg, const cbb_sd_list_t *sd,
		   const cbb_sl_job_t *lj)
{
	const char *cluster = cluster_of(sd, lj->job_id);
	char conf[256], path[4096], *script = NULL;
	const char *word;
	cbb_slurm_job_t s;
	cbb_job_ctx_t j;
	cbb_job_t job;
	cbb_statedir_t dir;
	cbb_err_t err;
	size_t len, i;
	int rc;

	for (i = 0; i < sd->n; i++)
		if (sd->v[i].job_id == lj->job_id &&
		    (sd->v[i].files & CBB_SD_OUTPLAN))
			return 0; /* a hook saved it */
	cbb_err_clear(&err);
	if (cbb_slurm_job_ask(cfg, lj->job_id, &s, &err) < 0) {
		printf("error: job %u: its stage-out plan cannot be built: %s\n",
		       lj->job_id, err.msg);
		return -1;
	}
	/* still as it was found: in STAGE_OUT, or ended (unstaged) */
	if (lj->kind == CBB_SL_STAGE_OUT ? !s.stage_out :
	    !s.have_state || cbb_job_state_over(s.job_state, &word) != 1 ||
	    s.stage_out)
		return 0; /* moved on since: Slurm's again */
	/* the cluster its records name, else Slurm's (slurm.CLUSTER_NAME,
	 * the hooks' first choice), else slurm.conf's */
	if (!cluster && s.cluster[0])
		cluster = s.cluster;
	if (!cluster) {
		if (cbb_slurm_cluster_name(path, sizeof(path), conf,
					   sizeof(conf)) < 0) {
			printf("error: job %u: its stage-out plan cannot be "
			       "built: %s has no ClusterName\n", lj->job_id,
			       path);
			return -1;
		}
		cluster = conf;
	}
	cbb_statedir_init(&dir, cfg, cluster);
	if (cbb_outdone_for(&dir, s.job_id, s.submit)) {
		cbb_statedir_close(&dir);
		return 0; /* finished already (Slurm still lists the job) */
	}
	if (!s.end || time(NULL) - s.end > CBB_REBUILD_MAX_AGE_S) {
		cbb_statedir_close(&dir);
		printf("error: job %u: no hook of its stage-out ever ran, and it "
		       "ended %s: its plan is not built (docs/admin.md, "
		       "\"Restarting slurmctld\")\n", s.job_id,
		       s.end ? "over 7 days ago" : "at a time Slurm does not say");
		return -1;
	}
	if (cbb_slurm_job_script(cfg, s.job_id, &script, &len, &err) < 0) {
		cbb_statedir_close(&dir);
		printf("error: job %u: its stage-out plan cannot be built: %s\n",
		       s.job_id, err.msg);
		return -1;
	}
	memset(&job, 0, sizeof(job));
	job.job_id = s.job_id;
	job.array_job_id = s.array_job_id;
	job.array_task_id = s.array_task_id;
	job.user_id = s.user_id;
	job.user_name = s.user_name[0] ? s.user_name : NULL;
	job.work_dir = s.work_dir;
	job.name = s.name;
	cbb_job_ctx_init(&j, cfg, NULL, cluster, s.job_id, s.user_id);
	j.sd = &dir;
	j.log = say;
	j.restart = s.restart;
	j.submit = s.submit;
	j.have_state = s.have_state;
	j.job_state = s.job_state;
	j.have_exit = s.have_exit;
	j.exit_code = s.exit_code;
	j.requeued = s.have_state && s.job_state == 0 && s.restart > 0;
	if (s.array_task_id != CBB_NO_VAL)
		j.array_job_id = s.array_job_id;
	j.array_task_id = s.array_task_id;
	rc = cbb_lost_rebuild(&j, script, len, &job, &err);
	free(script);
	cbb_statedir_close(&dir);
	if (rc < 0) {
		printf("error: job %u: its stage-out plan cannot be built from "
		       "its script: %s\n", s.job_id, err.msg);
		return -1;
	}
	if (rc == 1) {
		printf("job %u: no hook of its stage-out ever ran, and it has "
		       "nothing to stage out\n", s.job_id);
		return 0;
	}
	printf("job %u: no hook of its stage-out ever ran: its plan built from "
	       "Slurm's copy of its script\n", s.job_id);
	return 1;
}

/* One job Slurm will not move by itself: what an admin would do. */
static int unstick(const cbb_config_t *cfg, const cbb_sd_list_t *sd,
		   const cbb_sl_job_t *j, bool cancel)
{
	char what[256], said[512];
	const char *prog = "scontrol", *action = NULL, *done = NULL;

	cbb_sl_what(j, what, sizeof(what));
	switch (j->kind) {
	case CBB_SL_HELD:
		action = "release";
		done = "released: Slurm stages it in again";
		break;
	case CBB_SL_LAUNCH:
		action = "requeue";
		done = "requeued: Slurm runs it again (the stage-out of the "
		       "attempt that never ran skips every directive)";
		mark_unlaunched(cfg, sd, j);
		break;
	case CBB_SL_STAGE_IN:
		if (!cancel) {
			printf("job %u: %s; Slurm can neither start nor requeue it: "
			       "cancel it (conduit-bb recover --cancel-stuck %u) and "
			       "submit it again\n", j->job_id, what, j->job_id);
			return 0;
		}
		prog = "scancel";
		done = "cancelled: its stage-in transfers are aborted; submit it "
		       "again";
		break;
	case CBB_SL_STAGE_OUT:
	case CBB_SL_UNSTAGED:
		printf("job %u: %s; %s\n", j->job_id, what, j->out_done ?
		       cbb_sl_remedy_of(j) : j->kind == CBB_SL_UNSTAGED ?
		       "its stage-out is conduit_bb's to finish (above)" :
		       "its stage-out is conduit_bb's to finish (above); Slurm "
		       "keeps showing STAGE_OUT");
		return 0;
	}
	if (act(cfg, prog, action, j->job_id, said, sizeof(said)) < 0) {
		printf("error: job %u: %s; %s %s%s%u failed: %s\n", j->job_id,
		       what, prog, action ? action : "", action ? " " : "",
		       j->job_id, said);
		return -1;
	}
	printf("job %u: %s; %s\n", j->job_id, what, done);
	if (j->kind == CBB_SL_STAGE_IN)
		return stop_stage_in(cfg, sd, j->job_id);
	return 0;
}

int cbb_cmd_recover(int argc, char **argv)
{
	const char *config = NULL;
	static cbb_sl_list_t lost;
	cbb_sd_plan_t p[RECOVER_MAX];
	uint32_t only[RECOVER_MAX];
	cbb_sd_list_t sd;
	cbb_config_t cfg;
	size_t i, k, nonly = 0;
	bool answered, cancel = false;
	long after = -1;
	int a, rc = 0;

	for (a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--config") && a + 1 < argc &&
		    nonly == 0) {
			config = argv[++a];
		} else if (!strcmp(argv[a], "--cancel-stuck") && nonly == 0) {
			cancel = true;
		} else if (!strcmp(argv[a], "--after") && a + 1 < argc &&
			   nonly == 0 && duration(argv[a + 1], &after) == 0) {
			a++;
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
	cbb_slurm_lost(&cfg, after, only, nonly, &lost);
	if (!lost.answered) {
		fprintf(stderr, "conduit-bb: squeue or scontrol gave no answer: "
			"the jobs Slurm lost in a restart are not looked at\n");
		rc = 1;
	}
	/* a stage-out no hook ever saw: its plan first, then StateDir
	 * listed again to find it */
	for (i = k = 0; i < lost.n; i++)
		if (lost.v[i].kind == CBB_SL_STAGE_OUT ||
		    lost.v[i].kind == CBB_SL_UNSTAGED) {
			int b = rebuild(&cfg, &sd, &lost.v[i]);

			if (b < 0)
				rc = 1;
			k += b > 0;
		}
	if (k) {
		cbb_err_t err;

		cbb_sd_free(&sd);
		cbb_err_clear(&err);
		if (cbb_sd_list(&cfg, &sd, &err) < 0) {
			fprintf(stderr, "conduit-bb: %s\n", err.msg);
			cbb_config_free(&cfg);
			return 2;
		}
	}
	/* (a plan that cannot be read is looked at too: finish says why) */
	k = cbb_sd_plans(&cfg, &sd, only, nonly, true, &lost, p, RECOVER_MAX,
			 &answered);
	if (!answered) {
		fprintf(stderr, "conduit-bb: squeue gave no answer: nothing "
			"done\n");
		rc = 2;
	}
	for (i = 0; rc != 2 && i < k; i++)
		if (finish(&cfg, &p[i]) < 0)
			rc = 1;
	cbb_sd_mark_done(&sd, &lost);
	for (i = 0; rc != 2 && i < lost.n; i++)
		if (unstick(&cfg, &sd, &lost.v[i], cancel) < 0)
			rc = 1;
	if (rc != 2)
		printf("recover: %zu job%s with a stage-out plan looked at; %zu "
		       "job%s Slurm lost in a restart\n", k, k == 1 ? "" : "s",
		       lost.n, lost.n == 1 ? "" : "s");
	cbb_sd_free(&sd);
	cbb_config_free(&cfg);
	return rc;
}

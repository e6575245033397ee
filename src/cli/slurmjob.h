/*
 * slurmjob.h - one job as Slurm keeps it, for `conduit-bb recover` to
 * build the stage-out plan no hook saved (lost.h, cbb_lost_rebuild):
 * its record from `scontrol show job ID --json` (the facts job_info
 * gives the hooks: uid, user and job name, working directory, array
 * ids, restart count, submit and end time, base state and exit code)
 * and its
 * batch script from `scontrol write batch_script ID -` (the copy Slurm
 * hands the stage hooks).  Every field is checked; one that is missing
 * or of another type declines the job rather than guessing it.
 */
#ifndef CBB_CLI_SLURMJOB_H
#define CBB_CLI_SLURMJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"

typedef struct {
	uint32_t job_id, user_id, restart;
	uint32_t array_job_id;  /* 0: not an array task */
	uint32_t array_task_id; /* CBB_NO_VAL: not an array task */
	int64_t submit;
	int64_t end;            /* when its compute ended; 0: not known */
	bool have_state;        /* a base state among its state words */
	uint32_t job_state;     /* Slurm's enum job_states: the base only */
	bool stage_out;         /* STAGE_OUT among its state words */
	bool have_exit;
	uint32_t exit_code;     /* the batch script's wait status */
	char user_name[64], name[256], work_dir[4096];
	char cluster[256];      /* slurmctld's ClusterName; "" if not said */
} cbb_slurm_job_t;

/*
 * Read `scontrol show job ID --json`'s answer for job `id` (text, len
 * bytes).  -1 with err when it is not one job of that id with every
 * field this needs.
 */
int cbb_slurm_job_json(const char *text, size_t len, uint32_t id,
		       cbb_slurm_job_t *out, cbb_err_t *err);

/* Ask Slurm (Scontrol=) for the job's record.  -1 with err. */
int cbb_slurm_job_ask(const cbb_config_t *cfg, uint32_t id,
		      cbb_slurm_job_t *out, cbb_err_t *err);

/* ... and for its batch script (*script, *len; the caller frees it). */
int cbb_slurm_job_script(const cbb_config_t *cfg, uint32_t id,
			 char **script, size_t *len, cbb_err_t *err);

#endif

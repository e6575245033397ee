/*
 * statedir.h - which jobs StateDir knows, for `conduit-bb status` and
 * `conduit-bb metrics`.  The records themselves are read with the
 * module's own statefile.c (cbb_recs_load, cbb_shared_load); this only
 * lists the files, <cluster>.<job>.<what> (statefile.h), and reads the
 * time a .down file holds without creating one (cbb_down_since would).
 */
#ifndef CBB_CLI_STATEDIR_H
#define CBB_CLI_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"
#include "config.h"
#include "err.h"
#include "jobstate.h"
#include "slurmlost.h"
#include "statefile.h"

enum {
	CBB_SD_STARTED = 1 << 0,
	CBB_SD_DOWN = 1 << 1,
	CBB_SD_SHARED = 1 << 2,
	CBB_SD_SKIPPED = 1 << 3,
	CBB_SD_OVER = 1 << 4,
	CBB_SD_OUTPLAN = 1 << 5,
	CBB_SD_OUTDONE = 1 << 6,
};

typedef struct {
	char cluster[CBB_CLUSTER_MAX];
	uint32_t job_id;
	unsigned files;      /* CBB_SD_* */
	int64_t down_since;  /* from .down; 0 when none */
} cbb_sd_job_t;

typedef struct {
	cbb_sd_job_t *v;
	size_t n;
	bool missing;        /* StateDir does not exist */
} cbb_sd_list_t;

/* List StateDir, sorted by cluster and job id. */
int cbb_sd_list(const cbb_config_t *cfg, cbb_sd_list_t *out, cbb_err_t *err);
void cbb_sd_free(cbb_sd_list_t *l);

/* A record of a start: started, unconfirmed, refused or lost. */
bool cbb_sd_is_start(char kind);

/*
 * The stage a job's records say it is in: its stage-out once it has a
 * start record of one (the newest attempt), else its stage-in; whether
 * that stage's summary is written (the stage is over); and how many of
 * its directives have a newest start record of each kind.
 */
typedef struct {
	bool out;
	bool any;           /* any start record at all */
	uint32_t attempt;
	bool accounted;
	unsigned started, unsure, refused, lost;
} cbb_sd_stage_t;
void cbb_sd_stage_of(const cbb_recs_t *recs, cbb_sd_stage_t *st);

/*
 * The jobs of `sd` whose stage-out plan was never seen to end
 * (cbb_lost_is_open; with `unreadable`, one whose plan or records cannot
 * be read too), only those of `only` when nonly > 0, at most max, into
 * out[], asked about with one squeue: what it said of each, and whether
 * Slurm dropped that stage-out (cbb_outplan_dropped; a job the answer
 * leaves out is not known to be gone; one `lost` (slurmlost.h, may be
 * NULL) finds in STAGE_OUT with no buffer is dropped at once: no hook
 * will come for it).  Returns how many; *answered is
 * false when squeue gave no answer (then none is dropped).
 */
typedef struct {
	cbb_sd_job_t *job;
	cbb_job_facts_t f;
	bool dropped;
} cbb_sd_plan_t;
size_t cbb_sd_plans(const cbb_config_t *cfg, cbb_sd_list_t *sd,
		    const uint32_t *only, size_t nonly, bool unreadable,
		    const cbb_sl_list_t *lost, cbb_sd_plan_t *out, size_t max,
		    bool *answered);

/* Mark the jobs of `lost` in STAGE_OUT whose stage-out StateDir says
 * conduit_bb finished (.outdone) as such (out_done). */
void cbb_sd_mark_done(const cbb_sd_list_t *sd, cbb_sl_list_t *lost);

/*
 * Run as StateDir's owner from now on: the module refuses a StateDir
 * owned by anyone but root or itself, and root reading SlurmUser's
 * StateDir would be refused.  Called as root; nothing when StateDir is
 * root's or missing.  -1 with err when it cannot.
 */
int cbb_sd_become_owner(const cbb_config_t *cfg, cbb_err_t *err);

#endif

/*
 * status_int.h - what `conduit-bb status` (status.c) and its output
 * (status_print.c) share: a job as StateDir and the Query show it, its
 * directives, the options.
 */
#ifndef CBB_CLI_STATUS_INT_H
#define CBB_CLI_STATUS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conduit.h"
#include "slurmlost.h"
#include "statedir.h"
#include "statefile.h"

#define DEFAULT_STUCK_S (30 * 60)

typedef enum { D_WAITING, D_RUNNING, D_DONE, D_FAILED, D_REFUSED,
	       D_LOST } dstate_t;

/* One directive of the stage shown. */
typedef struct {
	uint32_t index, line;
	int type;                   /* cbb_key_type_t */
	dstate_t state;
	const cbb_transfer_t *x;    /* its transfer, when the server has it */
	char record;                /* the newest record's kind */
	int64_t made;
} dir_t;

typedef struct {
	const cbb_sd_job_t *sd;
	cbb_recs_t recs, shared;
	uint32_t array_id;          /* from a J record, 0 when none */
	bool out;                   /* stage-out (else stage-in) */
	uint32_t attempt;
	bool accounted;             /* the stage's summary is written: over */
	dir_t *d;
	size_t nd;
	const char *user;
	uint64_t bytes, rate;
	int64_t since;              /* the stage's first record */
	bool failed, stuck;
	int64_t stuck_for;
	bool dropped;               /* Slurm ended the job for good with
				       its stage-out never seen to end: the
				       module's sweeps finish it (lost.c) */
	char slurm_state[32];       /* squeue's word, for such a job */
} job_t;

typedef struct {
	bool json, all;
	unsigned stuck_s;
	const char *config;
} opts_t;

/*
 * The rows, as text; have_t: the Query answered; lost: what Slurm lost
 * in a restart; now: for ages.
 */
void cbb_status_print_text(job_t *jobs, size_t n, const opts_t *o,
			   bool have_t, bool queried, const cbb_sl_list_t *lost,
			   int64_t now);
/* The same as JSON (ntransfers: how many the Query returned). */
void cbb_status_print_json(job_t *jobs, size_t n, const opts_t *o,
			   bool have_t, size_t ntransfers, const char *qerr,
			   const cbb_sl_list_t *lost, int64_t now);

#endif

/*
 * statefile.h - the little state conduit_bb keeps between hook calls
 * (each call has a fresh Lua state and often a fresh process): when the
 * Conduit server was first found unreachable for a job, so that polling
 * can stay BUSY for ServerDownGrace and then fail with a clear reason.
 * Files live in StateDir, one per job, and are removed once the server
 * answers again.
 */
#ifndef CBB_STATEFILE_H
#define CBB_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"

/* Record (if not yet recorded) that the server is down for this job and
 * return when that was first seen; now on any storage problem. */
time_t cbb_down_since(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id);
void cbb_down_clear(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id);

/*
 * The script line of each directive, saved by job_process (which sees
 * the user's script) for the stage hooks: when directives use % symbols
 * Slurm gives those hooks a rewritten script holding only the directive
 * lines, whose line numbers would mean nothing to the user.
 */
#include "directive.h"

void cbb_lines_save(const cbb_config_t *cfg, const char *cluster,
		    uint32_t job_id, const cbb_plan_t *plan);
/* Renumber plan->v[i].line from the saved map when it fits the plan. */
void cbb_lines_apply(const cbb_config_t *cfg, const char *cluster,
		     uint32_t job_id, cbb_plan_t *plan);
/*
 * Transfers data_in/data_out started, appended as they start.  Conduit's
 * Query can briefly miss a transfer it has just created; a repeated
 * data_in trusts this record over such a miss and starts nothing twice.
 */
void cbb_started_record(const cbb_config_t *cfg, const char *cluster,
			uint32_t job_id, uint32_t restart, int type,
			uint32_t index, const char *id);
bool cbb_started_lookup(const cbb_config_t *cfg, const char *cluster,
			uint32_t job_id, uint32_t restart, int type,
			uint32_t index, char *id, size_t size);

/*
 * Whether it is time to ask Slurm again about a job whose transfers are
 * still running (at most once every `every_s` seconds per job: Slurm
 * polls each staging job every second, and each question is an RPC to
 * slurmctld).  Records the asking time when it answers true.
 */
bool cbb_ask_due(const cbb_config_t *cfg, const char *cluster,
		 uint32_t job_id, unsigned every_s);

/* Forget everything kept for a job that is over. */
void cbb_state_forget(const cbb_config_t *cfg, const char *cluster,
		      uint32_t job_id);

#endif

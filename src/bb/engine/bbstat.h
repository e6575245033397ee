/*
 * bbstat.h - `scontrol show bbstat conduit JOBID [json]`: one row per
 * directive and run attempt (a requeued job has an attempt per run),
 * from one Query's worth of transfers and the stage-outs that --when=
 * skipped.  Text that comes from the server
 * (transfer ids, error messages) is shown with control characters
 * escaped, so it cannot drive the reader's terminal.
 */
#ifndef CBB_STATUS_H
#define CBB_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "conduit.h"
#include "statefile.h"

/*
 * skips (may be NULL): the job's .skipped records, shown as
 * "SKIPPED (when=success, job exit 1)" rows.  shared_tasks: how many
 * tasks use the array's shared stage-ins, shown on their rows.
 */
int cbb_status_render(const cbb_transfers_t *t, const cbb_recs_t *skips,
		      unsigned shared_tasks, uint32_t job_id, bool json,
		      cbb_buf_t *out);

#endif

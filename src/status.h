/*
 * status.h - `scontrol show bbstat conduit JOBID [json]`: one row per
 * directive of the job's latest attempt (Slurm restart count), from one
 * Query's worth of transfers.
 */
#ifndef CBB_STATUS_H
#define CBB_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "conduit.h"

int cbb_status_render(const cbb_transfers_t *t, uint32_t job_id, bool json,
		      cbb_buf_t *out);

#endif

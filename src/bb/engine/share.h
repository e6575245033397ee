/*
 * share.h - the shared poll reply (share.c): one Query answers every
 * poll of a user's staging jobs within PollShare seconds.
 */
#ifndef CBB_SHARE_H
#define CBB_SHARE_H

#include <stdbool.h>

#include "facts.h"
#include "job.h"

/*
 * The job's transfers into f->have (and f->answer, f->query_err) from
 * the saved reply when it can stand for this job's Query now, else from
 * one Query for every staging job of the user, saved for the others.
 * false when this call does not share (PollShare=0, an array task, a
 * data_in, data_out or teardown: the caller asks alone).
 */
bool cbb_share_query(cbb_job_ctx_t *j, cbb_facts_t *f);

/*
 * For get_status (bbstat, under slurmctld's burst-buffer lock): the job's
 * transfers from the saved reply of its user when it is fresh (within
 * PollShare) and covers the job; false: ask the server.  Read only.
 */
bool cbb_share_status(cbb_statedir_t *sd, const cbb_config_t *cfg,
		      const char *cluster, uint32_t uid, const char *user,
		      uint32_t job_id, cbb_transfers_t *out);

#endif

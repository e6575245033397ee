/*
 * key.h - the Conduit comment that ties a transfer to a Slurm job.
 *
 *   SLURMJOB:<job>,CLUSTER:<cluster>,RESTART:<n>,SLURMINDEX:<i>,
 *   SLURMTYPE:CONDUIT_PRE|CONDUIT_POST|CONDUIT_VALIDATE,LINE:<line>
 *
 * A stage-in that every task of a job array shares is kept under the
 * array's id: SLURMJOB:<array job id>,...,RESTART:0,...,
 * SLURMTYPE:CONDUIT_PRE_ARRAY (docs/directives.md, "Job arrays").
 *
 * What an earlier attempt left where a directive writes is moved aside
 * before the directive runs again (docs/directives.md, "Requeued jobs"):
 * SLURMTYPE:CONDUIT_ASIDE, RESTART the attempt about to stage, INDEX and
 * LINE the directive's, and a last field PART:<n>, which of the places
 * it writes (one per source when the destination is a directory).
 *
 * Conduit is asked what a directive's paths are before some directives
 * start (docs/directives.md, "Where a directory lands"; validation only,
 * nothing moves): SLURMTYPE:CONDUIT_PROBE, RESTART the attempt, INDEX and
 * LINE the directive's, and PART:<n>, which question it answers
 * (CBB_PROBE_* in engine/facts.h).
 *
 * Formats: every key above is format 1, read by every release.  A key
 * of a later format ends in ",KEYV:<n>"; one newer than this release
 * reads is not ours (never acted on), so a release never misreads a
 * later one's transfers.  No key written today carries it.
 *
 * It starts with "SLURMJOB:<job>," so `conduit status 'SLURMJOB:10,'`
 * finds a job's transfers as documented; the cluster name and the run
 * attempt (the field is named RESTART on the wire: Slurm's restart count
 * when the attempt ran; job.h says which attempt a stage serves) make it
 * unambiguous across clusters and requeues.  This is the only place
 * that builds or reads it.
 */
#ifndef CBB_KEY_H
#define CBB_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

#define CBB_KEY_MAX 192

typedef enum {
	CBB_KEY_PRE = 0,
	CBB_KEY_POST = 1,
	CBB_KEY_VALIDATE = 2,
	CBB_KEY_SHARED = 3, /* one stage-in for every task of an array */
	CBB_KEY_ASIDE = 4,  /* an earlier attempt's output moved aside */
	CBB_KEY_PROBE = 5,  /* a validation that asks what a path is */
} cbb_key_type_t;
#define CBB_KEY_NTYPES 6
/* The newest key format this release reads (see above). */
#define CBB_KEY_FORMAT 1

typedef struct {
	uint32_t job_id;
	char cluster[CBB_CLUSTER_MAX];
	uint32_t attempt;  /* RESTART: the run attempt the transfer serves */
	uint32_t index;
	cbb_key_type_t type;
	uint32_t line;
	uint32_t part;   /* CBB_KEY_ASIDE and CBB_KEY_PROBE only */
} cbb_key_t;

void cbb_key_format(char *buf, size_t size, const cbb_key_t *k);

/* Parse a comment; false when it is not one of ours. */
bool cbb_key_parse(const char *comment, cbb_key_t *k);

/*
 * Anchored regex for a job's transfers: every attempt when
 * attempt < 0, else one attempt.
 */
void cbb_key_job_regex(char *buf, size_t size, const char *cluster,
		       uint32_t job_id, long attempt);

/*
 * The head every key of one attempt of a job starts with,
 * "SLURMJOB:<job>,CLUSTER:<cluster>,RESTART:<attempt>," (the job's
 * CONDUIT_BB_KEY, for a user's own `conduit status`).
 */
void cbb_key_prefix(char *buf, size_t size, const char *cluster,
		    uint32_t job_id, uint32_t attempt);

/*
 * A task's transfers and its array's shared stage-ins (and their probes)
 * in one regex (the array's own task has job_id == array_job_id).
 */
void cbb_key_array_regex(char *buf, size_t size, const char *cluster,
			 uint32_t job_id, uint32_t array_job_id);

/*
 * Anchored regex for every transfer, of every attempt, of any of n jobs
 * of one cluster: ^SLURMJOB:(1|2|3),CLUSTER:<cluster>, (an array's shared
 * stage-ins are under the array's own id: list it among the ids).  One
 * Query then answers for all of them (`conduit-bb status`).  Returns the
 * length the regex needs, as snprintf does; buf may be NULL when size
 * is 0.
 */
size_t cbb_key_jobs_regex(char *buf, size_t size, const char *cluster,
			  const uint32_t *ids, size_t n);

#endif

/*
 * directive_json.h - a directive as JSON, the one shape every output
 * uses: the job's CONDUIT_BB_STAGE_IN/OUT variables (slurm_bb_paths),
 * each AuditLog line, and `conduit-bb check --json`.
 *
 * The fields, always in this order (jansson keeps insertion order, and
 * users' scripts and golden tests read the text):
 *
 *   line, [index, type], action, recursive,
 *   [every_attempt, when (stage-out only), shared_by_array],
 *   sources, destination
 *
 * The bracketed ones only with the flags below.  A caller may set keys
 * of its own before (the AuditLog's job fields) and after (its outcome).
 */
#ifndef CBB_DIRECTIVE_JSON_H
#define CBB_DIRECTIVE_JSON_H

#include <jansson.h>

#include "directive.h"

enum {
	CBB_DJSON_PLACE = 1 << 0,   /* index and type ("PRE"/"POST") */
	CBB_DJSON_OPTIONS = 1 << 1, /* every_attempt and when */
	CBB_DJSON_SHARED = 1 << 2,  /* shared_by_array (cbb_directive_shared) */
};

/* Add d's fields to the object o; -1 when even the sources array
 * cannot be made (a field jansson cannot add is left out). */
int cbb_directive_json_into(json_t *o, const cbb_directive_t *d,
			    unsigned flags);

/* A new object with d's fields (NULL when out of memory). */
json_t *cbb_directive_json(const cbb_directive_t *d, unsigned flags);

#endif

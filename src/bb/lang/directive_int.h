/*
 * directive_int.h - what the parser (directive.c) asks
 * directive_check.c; nothing else includes it.
 */
#ifndef CBB_DIRECTIVE_INT_H
#define CBB_DIRECTIVE_INT_H

#include "directive.h"

/* Apply option word w to d: 0, or -1 (err says why it is refused). */
int cbb_directive_option(const char *w, cbb_directive_t *d, cbb_err_t *err);

/*
 * Whether path is in the site's allow-list for a source (dst 0) or a
 * destination (dst 1) of stage st: 0, or -1 (err names the key).
 */
int cbb_directive_path_allowed(const cbb_config_t *cfg, cbb_stage_t st,
			       int dst, const char *path, cbb_err_t *err);

#endif

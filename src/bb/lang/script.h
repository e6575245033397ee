/*
 * script.h - find the burst-buffer directive lines of a batch script
 * exactly the way Slurm's burst_buffer/lua plugin does (_xlate_batch):
 *
 *  - the script is split on '\n' and empty lines are skipped;
 *  - scanning stops at the first line that does not start with '#'
 *    (a line starting with white space, or a lone '\r', stops it too);
 *  - a line counts when '#' is immediately followed by the directive
 *    name (a case-sensitive prefix match, so "#CONDUITX" counts);
 *  - a directive line ending in '\' is continued by the next directive
 *    line, whose leading "#<directive>" is dropped (and its leading
 *    white space too when the '\' followed white space).
 *
 * The result is the list of logical directive lines Slurm stores in
 * job_info.burst_buffer, each with the script line number it began on.
 */
#ifndef CBB_SCRIPT_H
#define CBB_SCRIPT_H

#include <stddef.h>

#include "err.h"

/* Longest logical directive line accepted (after joining). */
#define CBB_LINE_MAX 16384
/* How many ignored directive lines after the first command are noted. */
#define CBB_LATE_MAX 32

typedef struct {
	unsigned lineno;  /* script line the directive starts on */
	char *text;       /* "#<directive>...", NUL-terminated */
	size_t len;
} cbb_dline_t;

typedef struct {
	cbb_dline_t *lines;
	size_t count;
	char *store;                  /* every line's text, one block */
	unsigned first_command;       /* line of the first command, 0 if none */
	unsigned late[CBB_LATE_MAX];  /* directive lines Slurm ignores */
	size_t nlate;
} cbb_script_t;

/*
 * Scan `len` bytes of `text` (a NUL byte ends the script, as in Slurm).
 * More than `max_lines` logical directive lines is an error.
 * Returns 0, or -1 with `err` set; `out` must be freed either way.
 */
int cbb_script_scan(const char *text, size_t len, const char *directive,
		    size_t max_lines, cbb_script_t *out, cbb_err_t *err);
void cbb_script_free(cbb_script_t *s);

#endif

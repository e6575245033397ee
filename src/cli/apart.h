/*
 * apart.h - run a function as another user, in a child process, its
 * output handed back through a pipe.  Root's commands use it where the
 * answer must be what that user meets: `doctor` checks files, the
 * AuditLog and Slurm's commands as SlurmUser; `metrics` reads StateDir
 * as its owner while root writes the output file.
 */
#ifndef CBB_CLI_APART_H
#define CBB_CLI_APART_H

#include "buf.h"

/* Become `who` in the child (< 0: cannot); NULL: fn does it itself. */
typedef int (*cbb_apart_become_t)(const void *who);
/* The work, in the child: its result (0..254) and its output in `out`. */
typedef int (*cbb_apart_fn_t)(const void *arg, cbb_buf_t *out);

/*
 * fn's result, its output appended to `out` (at most out's limit); -1
 * when there is no child, the child could not become `who`, or it died.
 */
int cbb_apart(cbb_apart_become_t become, const void *who, cbb_apart_fn_t fn,
	      const void *arg, cbb_buf_t *out);

#endif

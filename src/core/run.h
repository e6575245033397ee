/*
 * run.h - run a helper program (squeue, scontrol) from a hook, safely:
 * argv only (no shell), stdin from /dev/null, stdout and stderr captured
 * into capped buffers (never the hook's own, which are its answer to
 * Slurm), and a hard time limit after which the child is killed.
 */
#ifndef CBB_RUN_H
#define CBB_RUN_H

#include <stdbool.h>

#include "buf.h"

/*
 * Run argv[0] (a path, or a name looked up in PATH) with argv.  out and
 * err must be initialised (their caps bound what is kept).  Returns 0
 * with *status the child's exit status, or -1 when it could not be
 * started, was killed at timeout_ms, died of a signal, or wrote more
 * than out can keep.
 */
int cbb_run(char *const argv[], unsigned timeout_ms, cbb_buf_t *out,
	    cbb_buf_t *err, int *status);

#endif

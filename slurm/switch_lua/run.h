/*
 * run.h - run the helper (helper.c) once, through Slurm's run_command()
 * (src/common/run_command.c): a process group of its own, the request
 * on its stdin, the answer stream (frame.h) on its stdout, killed with
 * its group at the deadline or when the daemon shuts down
 * (run_command_shutdown), and its group killed again once it has
 * exited (whatever the script left running).
 */
#ifndef SWL_RUN_H
#define SWL_RUN_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	SWL_RUN_ANSWERED,  /* an 'R' frame arrived and the helper exited 0 */
	SWL_RUN_EXITED,    /* it exited without answering (os.exit) */
	SWL_RUN_TIMEOUT,   /* the deadline passed: killed */
	SWL_RUN_SIGNALED,  /* it died on a signal (counted as a timeout) */
	SWL_RUN_NOSTART,   /* it could not be started */
} swl_run_status_t;

typedef struct {
	swl_run_status_t status;
	int wstatus;             /* waitpid's status */
	unsigned char *answer;   /* the 'R' payload (xmalloc'd), or NULL */
	size_t answer_len;
	char why[256];           /* for SWL_RUN_NOSTART */
} swl_run_t;

/* Called for each 'L' frame, in order, once the helper is done. */
typedef void (*swl_log_fn)(const void *ctx, char level, const char *msg,
			   size_t len);

/* what: the hook, for Slurm's own log lines about the run */
void swl_run(const char *helper, const char *what, const unsigned char *req,
	     size_t req_len, unsigned timeout_ms, swl_log_fn log,
	     const void *ctx, swl_run_t *r);
void swl_run_free(swl_run_t *r);

#endif

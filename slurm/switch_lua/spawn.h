/*
 * spawn.h - run the helper (helper.c) once: its own process group,
 * stdin/stdout/stderr on /dev/null, the request on fd 3, the answer
 * stream on fd 4, a deadline after which the whole group is killed, and
 * the group killed again once the helper has exited (whatever the
 * script left running).  Plain POSIX: no Slurm, no Lua.
 */
#ifndef SWL_SPAWN_H
#define SWL_SPAWN_H

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
	unsigned char *answer;   /* the 'R' payload (malloc'd), or NULL */
	size_t answer_len;
	char why[256];           /* for SWL_RUN_NOSTART */
} swl_run_t;

/* Called for each 'L' frame as it arrives. */
typedef void (*swl_log_fn)(const void *ctx, char level, const char *msg,
			   size_t len);

void swl_run(const char *helper, const unsigned char *req, size_t req_len,
	     unsigned timeout_ms, swl_log_fn log, const void *ctx, swl_run_t *r);
void swl_run_free(swl_run_t *r);

/*
 * Kill every helper still running (the daemon is shutting down); later
 * swl_run calls start nothing.
 */
void swl_run_stop_all(void);

#endif

/*
 * swl.h - what the parts of the switch/lua plugin share: its settings,
 * the jobinfo kept on the job record, and calling the helper.  Each file
 * calls only the ones below it (no circle; tests/cycle-check.sh):
 *
 *   switch_lua.c  the plugin's symbols and every switch_p_* of Slurm
 *                 26.05's op table; jobinfo and stepinfo pack/unpack
 *   restart.c     slurmctld after a restart: the setups and teardowns
 *                 the job records say were running
 *   ctld.c        slurmctld: job_start, its result applied under the locks
 *   teardown.c    slurmctld: job_complete, retries, drains
 *   task.c        slurmctld: the work a job hands to the pool (ctld.h)
 *   pool.c        slurmctld: the worker threads and their queue (pool.h)
 *   stepd.c       slurmstepd: step_preinit, step_init, step_postfini
 *   call.c        the settings, one hook call, the script's load answers
 *   run.c         running the helper through run_command (switch-lua-run,
 *                 helper.c)
 *   wire.c        the byte form of requests, answers and jobinfo
 *
 * Must be included after src/common/slurm_xlator.h and Slurm's headers.
 */
#ifndef SWL_SWL_H
#define SWL_SWL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "run.h"
#include "wire.h"

#define SWL_TYPE "switch/lua"   /* plugin_type, and every log line's prefix */
#define SWL_PLUGIN_ID 1001        /* never changes: stored in job state */
/*
 * The formats of the packed jobinfo and stepinfo.  A build reads every
 * format from SWL_FORMAT_MIN to its own SWL_FORMAT (formats are only ever
 * added), and packs for a peer the newest format the peer's Slurm
 * release reads (switch_lua.c, format_for): a rolling upgrade's older
 * slurmd, a rollback's older slurmctld.  What it cannot read is declined,
 * never a failed load.
 */
#define SWL_FORMAT_MIN 1
#ifndef SWL_FORMAT   /* (a test builds another to change it: e2e switch_format.sh) */
#define SWL_FORMAT    1
#endif
#define SWL_MAGIC     0x53574c55  /* "SWLU" */

#ifndef SWL_HELPER_PATH
#define SWL_HELPER_PATH "/usr/libexec/slurm/switch-lua-run"
#endif

/* SwitchParameters (or SlurmctldParameters) */
typedef struct {
	unsigned timeout_s;        /* switch_timeout: a hook's whole run */
	unsigned retries;          /* switch_retries: EAGAIN answers allowed */
	unsigned retry_interval_s; /* switch_retry_interval: between them */
	unsigned workers;          /* switch_workers: helpers at once */
	bool drain_on_failure;     /* switch_drain_on_failure */
	char *helper;              /* switch_lua_helper */
	char *script;              /* switch_lua_script (switch.lua) */
} swl_conf_t;

extern swl_conf_t swl_conf;

/* A job's setup through its teardown, as the job record keeps it. */
typedef enum {
	SWL_SETUP = 1,    /* job_start running (the job is held) */
	SWL_READY,        /* accepted: blob is the jobinfo */
	SWL_TEARDOWN,     /* job_complete running or to be run again */
	SWL_DONE,         /* torn down */
} swl_state_t;

#define SWL_F_ENDED 0x1 /* the job ended while its setup ran */

typedef struct {
	uint32_t magic;
	uint16_t state;           /* swl_state_t */
	uint16_t flags;           /* SWL_F_* */
	/* the run it belongs to */
	uint32_t job_id;
	uint64_t sluid;
	uint16_t restart_cnt;
	time_t start_time;
	uint32_t retries;         /* EAGAIN answers so far */
	unsigned char *blob;      /* the jobinfo table (wire form), or NULL */
	uint32_t blob_len;
	/* this slurmctld only, never packed */
	uint64_t seq;             /* unique per record: "still the same one" */
	bool busy;                /* a thread of this slurmctld works on it */
} swl_jobinfo_t;

/* A step's copy of an accepted jobinfo. */
typedef struct {
	uint32_t magic;
	uint32_t job_id;
	unsigned char *blob;
	uint32_t blob_len;
} swl_stepinfo_t;

swl_jobinfo_t *swl_jobinfo_new(void);
void swl_jobinfo_destroy(swl_jobinfo_t *ji);

/* The answer of one hook call, classified. */
typedef enum {
	SWL_OK,           /* returned: rc (and value) are set */
	SWL_LUA_ERROR,    /* raised an error, or did not load */
	SWL_BAD_RC,       /* returned something that is not a number */
	SWL_UNSAVED,      /* job_start: the jobinfo cannot be stored */
	SWL_EXITED,       /* exited without returning */
	SWL_TIMED_OUT,    /* killed at switch_timeout, or died on a signal */
	SWL_NOT_RUN,      /* the helper could not be started */
} swl_outcome_t;

typedef struct {
	swl_outcome_t outcome;
	int rc;
	swl_val_t value;          /* points into answer; tag 'n' when absent */
	char msg[512];            /* what went wrong */
	swl_run_t run;
} swl_call_t;

/*
 * Run hook (without its slurm_switch_ prefix, or "load") with the given
 * arguments (each one wire value, NULL for nil).  Logs what the script
 * logs, prefixed with what.
 */
void swl_call(const char *hook, const char *what, const swl_out_t *arg1,
	      const unsigned char *arg2, size_t arg2_len, swl_call_t *c);
void swl_call_free(swl_call_t *c);
const char *swl_outcome_str(const swl_call_t *c);

/* SwitchParameters into swl_conf (call.c) */
void swl_conf_read(void);
/* Ask the script's two yes/no hooks once, in slurmctld (call.c);
 * false when switch.lua does not load */
bool swl_load_script(void);
bool swl_block_job_complete(void);
bool swl_setup_special_steps(void);

/* ctld.c */
int swl_ctld_init(void);
void swl_ctld_fini(void);
void swl_ctld_job_start(void *job_ptr);
/* teardown.c */
void swl_ctld_job_complete(void *job_ptr);
/* restart.c */
void swl_ctld_restore(void);

#endif

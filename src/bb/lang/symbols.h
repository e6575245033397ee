/*
 * symbols.h - Slurm's '%' symbol replacement for burst-buffer directives.
 *
 * Slurm rewrites the directive lines it hands to the stage hooks
 * (bb_handle_job_script): %% %A %a %b %d %j %u %x are replaced, and a
 * "\\" stops all replacement from there to the end of the directives.
 * job_process sees the raw script, so conduit_bb repeats the replacement
 * there to validate what the stage hooks will later receive.
 *
 * Slurm silently drops an unknown "%c" pair (and a '%' at the end of a
 * line swallows the newline); conduit_bb rejects both instead, so that
 * what is validated at submission is exactly what is staged.
 */
#ifndef CBB_SYMBOLS_H
#define CBB_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define CBB_NO_VAL 0xfffffffeU /* Slurm's NO_VAL: "not an array task" */

typedef struct {
	uint32_t job_id;
	uint32_t array_job_id;
	uint32_t array_task_id;
	uint32_t user_id;
	const char *user_name; /* may be NULL: looked up from user_id */
	const char *work_dir;
	const char *name;
} cbb_job_t;

/* Bits of the symbols a line used, for `conduit-bb check` notes. */
enum {
	CBB_SYM_PERCENT = 1 << 0,
	CBB_SYM_A = 1 << 1,
	CBB_SYM_a = 1 << 2,
	CBB_SYM_b = 1 << 3,
	CBB_SYM_d = 1 << 4,
	CBB_SYM_j = 1 << 5,
	CBB_SYM_u = 1 << 6,
	CBB_SYM_x = 1 << 7,
};
/* The symbols whose value differs between the tasks of a job array. */
#define CBB_SYM_PER_TASK (CBB_SYM_a | CBB_SYM_b | CBB_SYM_j)

/*
 * Append `in` (len bytes) to `out` with symbols replaced.  `*stopped`
 * carries Slurm's "\\" state from one directive line to the next; `*used`
 * collects CBB_SYM_* bits.  Returns 0 or -1 with `err` set.
 */
int cbb_symbols_expand(const char *in, size_t len, const cbb_job_t *job,
		       bool *stopped, unsigned *used, cbb_buf_t *out,
		       cbb_err_t *err);

#endif

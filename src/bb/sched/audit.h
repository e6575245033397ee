/*
 * audit.h - the AuditLog file: opening it for one append as an audit
 * trail may be opened, and the hook records.
 *
 * Two kinds of JSON line share the file (docs/admin.md, "AuditLog"):
 *
 *   - a directive line when a stage ends (account.c): no "record" key
 *     (the format older versions wrote, unchanged);
 *   - a hook record, "record":"hook", once per call of the hooks that
 *     do the staging work, with how long the call took:
 *       {"time":1764590000,"record":"hook","hook":"slurm_bb_test_data_in",
 *        "job":42,"cluster":"c","stage":"in","result":"busy",
 *        "started":0,"retried":0,"failed":0,"duration_us":8412}
 *     (started/retried: the transfers a stage hook started, and of them
 *     those of a directive that had one before, lost or failed; failed:
 *     the failed transfers a poll found when it failed the stage)
 *     `conduit-bb metrics` makes the hook latency histogram of them.
 *
 * Every write is one write(2) on a descriptor opened O_APPEND, so lines
 * of hooks that run at once never interleave, and opened anew each time,
 * so logrotate needs no signal.
 */
#ifndef CBB_AUDIT_H
#define CBB_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open `path` (absolute) for one append, trusting only what an audit
 * trail may be: never through a symbolic link and never blocking (a
 * FIFO: O_NONBLOCK), a regular file of the effective uid with no other
 * name, in a directory that neither group nor others may write.  A
 * missing file is created 0640.  The fd, or -1 with why in msg.
 */
int cbb_audit_open(const char *path, char *msg, size_t size);

typedef struct {
	const char *hook;    /* "slurm_bb_data_in" ... */
	uint32_t job_id;     /* 0: unknown, left out */
	const char *cluster; /* NULL: left out */
	const char *stage;   /* "in", "out" or NULL */
	const char *result;  /* "ok", "busy" or "error" */
	uint64_t duration_us;
	bool counted;        /* a stage hook: started and retried are said */
	unsigned started;    /* transfers it started */
	unsigned retried;    /* of them, directives that had one before */
	unsigned failed;     /* failed transfers a poll failed the stage for */
} cbb_hook_record_t;

/*
 * Append one hook record to `path`.  0, or -1 with why in msg (the
 * caller logs it; a hook never fails for it).
 */
int cbb_audit_hook(const char *path, const cbb_hook_record_t *r, char *msg,
		   size_t size);

#endif

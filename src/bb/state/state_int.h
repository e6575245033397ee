/*
 * state_int.h - what the StateDir files share among themselves
 * (dir.c, job.c, shared.c,
 * forget.c); nothing outside them includes it.  statefile.h is the
 * contract for everyone else.
 */
#ifndef CBB_STATE_INT_H
#define CBB_STATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include "buf.h"
#include "key.h"
#include "statefile.h"

/* What a record file may hold at most. */
#define RECS_MAX_BYTES ((size_t)1 << 20)

/* dir.c: StateDir and the files of a job in it. */
/*
 * The handle's StateDir fd, opened and checked at its first use (made,
 * mode 0700, when `create`); -1 (err set) when it is missing or unsafe.
 * Borrowed: the handle closes it.
 */
int cbb_sf_dir(cbb_statedir_t *sd, bool create, cbb_err_t *err);
/* Open StateDir as a directory fd after checking it is safe. */
int cbb_sf_dir_open(const cbb_config_t *cfg, bool create, cbb_err_t *err);
/* "<cluster>.<job>.<what>" */
void cbb_sf_name(char *buf, size_t size, const char *cluster, uint32_t job_id,
		 const char *what);
/*
 * The handle's StateDir fd (cbb_sf_dir; err may be NULL) and, in name,
 * the name there of the job's file `what`; -1 when StateDir cannot be
 * had (name is then not set).
 */
int cbb_sf_at(cbb_statedir_t *sd, bool create, uint32_t job_id,
	      const char *what, char *name, size_t size, cbb_err_t *err);
/* Open a job's state file; flags as for open(2), created with 0600. */
int cbb_sf_open(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		int flags, cbb_err_t *err);
void cbb_sf_unlink(cbb_statedir_t *sd, uint32_t job_id, const char *what);
/* After a failed rewrite: empty rather than half-written. */
void cbb_sf_empty(int fd);
/* A small file whole, NUL-terminated (at most max bytes); NULL on failure. */
char *cbb_sf_read_all(int fd, size_t max, size_t *len);

/* statefile.c: the record lines. */
int cbb_sf_rec_format(char *buf, size_t size, const cbb_rec_t *r);
/* The identity at the head of a .shared file's text, if any. */
bool cbb_sf_text_header(const char *text, cbb_array_ident_t *a);
/* Two identities that may be one array: unknown parts match anything. */
bool cbb_sf_ident_match(const cbb_array_ident_t *a, const cbb_array_ident_t *b);
/* A record an array with identity `a` wrote. */
bool cbb_sf_rec_of_array(const cbb_rec_t *r, const cbb_array_ident_t *a);
/* The records of `text` that are this job's (with `keep`, their lines
 * too); returns how many lines were dropped. */
size_t cbb_sf_parse_recs(const char *text, size_t len, uint32_t restart,
			 int64_t submit, cbb_recs_t *out, cbb_buf_t *keep);
/* Load (and clean) the records of one file of a job, under its lock. */
int cbb_sf_recs_load(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		     uint32_t restart, int64_t submit, cbb_recs_t *out,
		     cbb_err_t *err);
/* The same, read only, for callers inside slurmctld. */
int cbb_sf_recs_peek(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		     uint32_t restart, int64_t submit, cbb_recs_t *out,
		     cbb_array_ident_t *hdr, bool *has_hdr, cbb_err_t *err);
/* The uid the last record of one file of a job names (not a JOINED
 * one), read only; CBB_UID_UNKNOWN when none does. */
uint32_t cbb_sf_uid_peek(cbb_statedir_t *sd, uint32_t job_id, const char *what);
/* Append n records with one write(2) under the file's lock. */
int cbb_sf_recs_add(cbb_statedir_t *sd, uint32_t job_id, const char *what,
		    const cbb_rec_t *r, size_t n, cbb_err_t *err);

/* forget.c: the jobs that have a file of `kind` (modified at `since` or
 * later; 0: any), up to max. */
size_t cbb_sd_jobs_with(cbb_statedir_t *sd, cbb_sd_kind_t kind, uint32_t *ids,
			size_t max, time_t since);
/* forget.c: sweep the .skipped, .over and old .shared files (see there). */
void cbb_sd_sweep_old(cbb_statedir_t *sd);

/*
 * dir.c: replace StateDir's file `name` (whose kind is `suffix`) whole:
 * the parts written to a fresh file, ".<name's base>.<random>.<suffix>",
 * then renamed over `name`, so no reader sees half of one.  0, or -1
 * with errno set (the fresh file removed).
 */
typedef struct {
	const void *p;
	size_t n;
} cbb_sf_part_t;
int cbb_sf_replace(int dfd, const char *name, const char *suffix,
		   const cbb_sf_part_t *part, size_t n);
/*
 * dir.c: open StateDir's file `name` for reading only when nobody but
 * this process's user can have written it: a regular file of this user,
 * no group or other bits, at most max bytes (st: its stat).  An fd, or
 * -1 when there is none that can be trusted.
 */
int cbb_sf_open_private(int dfd, const char *name, size_t max,
			struct stat *st);

/* dir.c: take the lock on a file of StateDir (see there). */
int cbb_sf_lock_at(int dfd, const char *name, unsigned wait_ms);

/* CLOCK_MONOTONIC in milliseconds (lock waits bound by the clock, not by
 * a count of naps) */
long long cbb_sf_mono_ms(void);

#endif

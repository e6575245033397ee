/*
 * jobinfo.h - what the switch half hands from job_start to every step
 * (Slurm stores it with the job and copies it into each step's stepinfo).
 *
 * A versioned record (v=2) of plain values, signed with HMAC-SHA256 under
 * a key derived from SessionKeyFile, so the step hooks refuse a jobinfo
 * that was altered or made elsewhere.  The MAC covers a canonical text
 * form, not Lua's table layout, so it survives the host's pack/unpack;
 * each field is written as name:length:value, so no value can pass for
 * another field.  Version 1 (conduit-bb 0.1.0) joined fields with
 * newlines without escaping and is refused.
 */
#ifndef CBB_JOBINFO_H
#define CBB_JOBINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define CBB_JOBINFO_VERSION 2
#define CBB_MAC_KEY_LEN 32
/* The largest number a jobinfo field may hold (2^53 - 1: Lua 5.1 and
 * 5.2 carry numbers as doubles); cbb_jobinfo_read refuses more. */
#define CBB_JOBINFO_NUM_MAX 9007199254740991LL

typedef struct {
	uint32_t v;
	uint32_t job_id;
	char cluster[64];
	char user[64];
	uint32_t uid;
	char session[128];
	char pool[65];
	uint32_t gpus;
	uint64_t vram_mib;
	char endpoint[256];
	unsigned vlans[16];
	size_t n_vlans;
	char directives[256];
	char token[2048];  /* the controller's token, sealed (cbb_seal) */
	char env[1024];    /* controller variables, "NAME=value\n"... */
	char mac[65];   /* lower-case hex */
} cbb_jobinfo_t;

/* The canonical text the MAC covers. */
int cbb_jobinfo_canonical(const cbb_jobinfo_t *ji, cbb_buf_t *out);

/*
 * Load SessionKeyFile: a regular file of at least 32 bytes that neither
 * group nor others may read; the MAC key is derived from it.
 */
int cbb_mac_key_load(const char *path, uint8_t key[CBB_MAC_KEY_LEN],
		     cbb_err_t *err);

int cbb_jobinfo_sign(cbb_jobinfo_t *ji, const uint8_t key[CBB_MAC_KEY_LEN]);
/* True when ji carries a valid MAC (compared in constant time). */
bool cbb_jobinfo_verify(const cbb_jobinfo_t *ji,
			const uint8_t key[CBB_MAC_KEY_LEN]);

/*
 * Seal a secret (the session token) for one job: AES-256-GCM under a key
 * derived from SessionKeyFile (not the MAC key), a random nonce, and the
 * cluster, job id and session as associated data;
 * base64(nonce | ciphertext | tag).  Unseal fails on any change, and for
 * another cluster, job or session.
 */
int cbb_seal(const char *keyfile, uint32_t job_id, const char *cluster,
	     const char *session, const char *plain, char *out, size_t size,
	     cbb_err_t *err);
int cbb_unseal(const char *keyfile, uint32_t job_id, const char *cluster,
	       const char *session, const char *sealed, char *out, size_t size,
	       cbb_err_t *err);

/* Wipe key material from memory. */
void cbb_key_wipe(uint8_t key[CBB_MAC_KEY_LEN]);

#endif

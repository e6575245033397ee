/* jobinfo.c - see jobinfo.h */
#include "jobinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto_dl.h"
#include "readfile.h"

/* One field as "name:length:value\n": no value can forge another. */
static int field(cbb_buf_t *out, const char *name, const char *value)
{
	return cbb_buf_printf(out, "%s:%zu:%s\n", name, strlen(value), value);
}

static int number(cbb_buf_t *out, const char *name, unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", v);
	return field(out, name, buf);
}

int cbb_jobinfo_canonical(const cbb_jobinfo_t *ji, cbb_buf_t *out)
{
	char vlans[16 * 6 + 1];
	size_t i, o = 0;
	int rc = 0;

	vlans[0] = '\0';
	for (i = 0; i < ji->n_vlans && i < 16; i++)
		o += (size_t)snprintf(vlans + o, sizeof(vlans) - o, "%s%u",
				      i ? "," : "", ji->vlans[i]);
	rc |= cbb_buf_adds(out, "conduit-bb jobinfo\n");
	rc |= number(out, "v", ji->v);
	rc |= number(out, "job_id", ji->job_id);
	rc |= field(out, "cluster", ji->cluster);
	rc |= field(out, "user", ji->user);
	rc |= number(out, "uid", ji->uid);
	rc |= field(out, "session", ji->session);
	rc |= field(out, "pool", ji->pool);
	rc |= number(out, "gpus", ji->gpus);
	rc |= number(out, "vram_mib", ji->vram_mib);
	rc |= field(out, "endpoint", ji->endpoint);
	rc |= field(out, "vlans", vlans);
	rc |= field(out, "directives", ji->directives);
	rc |= field(out, "token", ji->token);
	rc |= field(out, "env", ji->env);
	return rc ? -1 : 0;
}

static int derive(const char *path, const char *label, uint8_t *key,
		  cbb_err_t *err);

int cbb_mac_key_load(const char *path, uint8_t key[CBB_MAC_KEY_LEN],
		     cbb_err_t *err)
{
	return derive(path, "conduit-bb jobinfo mac v1", key, err);
}

/* A key for `label` from SessionKeyFile, which must be private. */
static int derive(const char *path, const char *label, uint8_t *key,
		  cbb_err_t *err)
{
	unsigned int len = CBB_MAC_KEY_LEN;
	struct stat st;
	char *data;
	size_t n;
	int rc = 0;

	if (!path)
		return cbb_err(err, "SessionKeyFile is not set in "
			       "conduit_bb.conf");
	if (cbb_crypto_load(err) < 0)
		return -1;
	if (stat(path, &st) < 0)
		return cbb_err(err, "cannot read SessionKeyFile %s", path);
	if (st.st_mode & 077)
		return cbb_err(err, "SessionKeyFile %s must not be readable by "
			       "group or others (chmod 0600)", path);
	if (cbb_read_file(path, 4096, &data, &n, NULL, err) < 0)
		return -1;
	if (n < 32) {
		rc = cbb_err(err, "SessionKeyFile %s holds %zu bytes; make it "
			     "at least 32 random bytes (e.g. openssl rand 64)",
			     path, n);
	} else if (!cbb_crypto.hmac(cbb_crypto.sha256(), data, (int)n,
			 (const unsigned char *)label, strlen(label), key,
			 &len)) {
		rc = cbb_err(err, "cannot derive a key from %s", path);
	}
	explicit_bzero(data, n);
	free(data);
	return rc;
}

static int compute(const cbb_jobinfo_t *ji, const uint8_t *key, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	cbb_buf_t b;
	cbb_err_t err;
	int rc = -1;

	cbb_err_clear(&err);
	if (cbb_crypto_load(&err) < 0)
		return -1;
	cbb_buf_init(&b, 0);
	if (cbb_jobinfo_canonical(ji, &b) == 0 &&
	    cbb_crypto.hmac(cbb_crypto.sha256(), key, CBB_MAC_KEY_LEN,
		 (const unsigned char *)b.data, b.len, mac, &len) && len == 32) {
		for (i = 0; i < len; i++) {
			hex[2 * i] = digits[mac[i] >> 4];
			hex[2 * i + 1] = digits[mac[i] & 15];
		}
		hex[64] = '\0';
		rc = 0;
	}
	cbb_buf_free(&b);
	return rc;
}

int cbb_jobinfo_sign(cbb_jobinfo_t *ji, const uint8_t key[CBB_MAC_KEY_LEN])
{
	return compute(ji, key, ji->mac);
}

bool cbb_jobinfo_verify(const cbb_jobinfo_t *ji,
			const uint8_t key[CBB_MAC_KEY_LEN])
{
	char want[65];

	if (strlen(ji->mac) != 64 || compute(ji, key, want) < 0)
		return false;
	return cbb_crypto.memcmp(want, ji->mac, 64) == 0;
}

void cbb_key_wipe(uint8_t key[CBB_MAC_KEY_LEN])
{
	explicit_bzero(key, CBB_MAC_KEY_LEN);
}

#define NONCE 12
#define TAG 16

/* The token opens only for this cluster, job and session. */
static int aad_of(char *aad, size_t size, uint32_t job_id, const char *cluster,
		  const char *session)
{
	int n = snprintf(aad, size, "conduit-bb token v2\n%zu:%s\n%u\n%zu:%s",
			 strlen(cluster), cluster, job_id, strlen(session),
			 session);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int cbb_seal(const char *keyfile, uint32_t job_id, const char *cluster,
	     const char *session, const char *plain, char *out, size_t size,
	     cbb_err_t *err)
{
	uint8_t key[32], buf[NONCE + 1024 + TAG];
	size_t n = strlen(plain);
	char aad[512];
	EVP_CIPHER_CTX *ctx;
	int len, ok = 0;

	if (cbb_crypto_load(err) < 0)
		return -1;
	if (n > 1024)
		return cbb_err(err, "session token longer than 1024 bytes");
	if (4 * ((NONCE + n + TAG + 2) / 3) + 1 > size)
		return cbb_err(err, "sealed token does not fit");
	if (aad_of(aad, sizeof(aad), job_id, cluster, session) < 0)
		return cbb_err(err, "cluster or session name too long");
	if (derive(keyfile, "conduit-bb token seal v1", key, err) < 0)
		return -1;
	ctx = cbb_crypto.ctx_new();
	if (ctx && cbb_crypto.rand_bytes(buf, NONCE) == 1 &&
	    cbb_crypto.encrypt_init(ctx, cbb_crypto.aes_256_gcm(), NULL, NULL, NULL) == 1 &&
	    cbb_crypto.ctx_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE, NULL) == 1 &&
	    cbb_crypto.encrypt_init(ctx, NULL, NULL, key, buf) == 1 &&
	    cbb_crypto.encrypt_update(ctx, NULL, &len, (const unsigned char *)aad,
			      (int)strlen(aad)) == 1 &&
	    cbb_crypto.encrypt_update(ctx, buf + NONCE, &len,
			      (const unsigned char *)plain, (int)n) == 1 &&
	    cbb_crypto.encrypt_final(ctx, buf + NONCE + len, &len) == 1 &&
	    cbb_crypto.ctx_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG,
				buf + NONCE + n) == 1) {
		cbb_crypto.encode_block((unsigned char *)out, buf, (int)(NONCE + n + TAG));
		ok = 1;
	}
	cbb_crypto.ctx_free(ctx);
	explicit_bzero(key, sizeof(key));
	return ok ? 0 : cbb_err(err, "cannot seal the session token");
}

int cbb_unseal(const char *keyfile, uint32_t job_id, const char *cluster,
	       const char *session, const char *sealed, char *out, size_t size,
	       cbb_err_t *err)
{
	uint8_t key[32], buf[NONCE + 1024 + TAG + 8];
	size_t sl = strlen(sealed);
	char aad[512];
	EVP_CIPHER_CTX *ctx;
	int n, len, ok = 0;

	if (cbb_crypto_load(err) < 0)
		return -1;
	if (sl % 4 || sl > 4 * ((sizeof(buf) - 8) / 3))
		return cbb_err(err, "sealed token is malformed");
	n = cbb_crypto.decode_block(buf, (const unsigned char *)sealed, (int)sl);
	if (n < 0)
		return cbb_err(err, "sealed token is malformed");
	if (sl >= 1 && sealed[sl - 1] == '=')
		n--;
	if (sl >= 2 && sealed[sl - 2] == '=')
		n--;
	if (n < NONCE + TAG || (size_t)(n - NONCE - TAG) >= size)
		return cbb_err(err, "sealed token is malformed");
	if (aad_of(aad, sizeof(aad), job_id, cluster, session) < 0)
		return cbb_err(err, "cluster or session name too long");
	if (derive(keyfile, "conduit-bb token seal v1", key, err) < 0)
		return -1;
	n -= NONCE + TAG;
	ctx = cbb_crypto.ctx_new();
	if (ctx &&
	    cbb_crypto.decrypt_init(ctx, cbb_crypto.aes_256_gcm(), NULL, NULL, NULL) == 1 &&
	    cbb_crypto.ctx_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE, NULL) == 1 &&
	    cbb_crypto.decrypt_init(ctx, NULL, NULL, key, buf) == 1 &&
	    cbb_crypto.decrypt_update(ctx, NULL, &len, (const unsigned char *)aad,
			      (int)strlen(aad)) == 1 &&
	    cbb_crypto.decrypt_update(ctx, (unsigned char *)out, &len, buf + NONCE, n) == 1 &&
	    cbb_crypto.ctx_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG,
				buf + NONCE + n) == 1 &&
	    cbb_crypto.decrypt_final(ctx, (unsigned char *)out + len, &len) == 1) {
		out[n] = '\0';
		ok = 1;
	}
	cbb_crypto.ctx_free(ctx);
	explicit_bzero(key, sizeof(key));
	if (!ok) {
		explicit_bzero(out, size);
		return cbb_err(err, "sealed token does not open (altered, for "
			       "another job, or another SessionKeyFile)");
	}
	return 0;
}

/* jobinfo.c - see jobinfo.h */
#include "jobinfo.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "readfile.h"

int cbb_jobinfo_canonical(const cbb_jobinfo_t *ji, cbb_buf_t *out)
{
	size_t i;
	int rc = 0;

	rc |= cbb_buf_printf(out, "conduit-bb jobinfo\nv=%u\njob_id=%u\n"
			     "cluster=%s\nuser=%s\nsession=%s\npool=%s\n"
			     "gpus=%u\nvram_mib=%llu\nendpoint=%s\nvlans=",
			     ji->v, ji->job_id, ji->cluster, ji->user,
			     ji->session, ji->pool, ji->gpus,
			     (unsigned long long)ji->vram_mib, ji->endpoint);
	for (i = 0; i < ji->n_vlans; i++)
		rc |= cbb_buf_printf(out, "%s%u", i ? "," : "", ji->vlans[i]);
	rc |= cbb_buf_printf(out, "\ndirectives=%s\n", ji->directives);
	return rc ? -1 : 0;
}

int cbb_mac_key_load(const char *path, uint8_t key[CBB_MAC_KEY_LEN],
		     cbb_err_t *err)
{
	static const char label[] = "conduit-bb jobinfo mac v1";
	unsigned int len = CBB_MAC_KEY_LEN;
	struct stat st;
	char *data;
	size_t n;
	int rc = 0;

	if (!path)
		return cbb_err(err, "SessionKeyFile is not set in "
			       "conduit_bb.conf");
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
	} else if (!HMAC(EVP_sha256(), data, (int)n,
			 (const unsigned char *)label, sizeof(label) - 1, key,
			 &len)) {
		rc = cbb_err(err, "cannot derive a key from %s", path);
	}
	OPENSSL_cleanse(data, n);
	free(data);
	return rc;
}

static int compute(const cbb_jobinfo_t *ji, const uint8_t *key, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	cbb_buf_t b;
	int rc = -1;

	cbb_buf_init(&b, 0);
	if (cbb_jobinfo_canonical(ji, &b) == 0 &&
	    HMAC(EVP_sha256(), key, CBB_MAC_KEY_LEN,
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
	return CRYPTO_memcmp(want, ji->mac, 64) == 0;
}

void cbb_key_wipe(uint8_t key[CBB_MAC_KEY_LEN])
{
	OPENSSL_cleanse(key, CBB_MAC_KEY_LEN);
}

/*
 * crypto_dl.h - OpenSSL's libcrypto, loaded on first need.
 *
 * The switch half signs jobinfo (HMAC-SHA-256) and seals session tokens
 * (AES-256-GCM) with libcrypto; nothing else in a hook process needs it
 * before it talks to a server.  Linking it would map and relocate it in
 * every hook process Slurm starts (about 1-2 ms each), so it is
 * dlopen()ed by the first call that needs it, and only the calls below
 * are resolved.  When libcurl was loaded first (curl_dl.h) this is the
 * same library, already mapped.  Thread-safe, never unloaded.  Internal
 * to core.
 */
#ifndef CBB_CRYPTO_DL_H
#define CBB_CRYPTO_DL_H

/* prototypes only: the calls go through the pointers below */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>
#include <openssl/rand.h>

#include "err.h"

#ifndef CBB_LIBCRYPTO
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#define CBB_LIBCRYPTO "libcrypto.so.3"
#else
#define CBB_LIBCRYPTO "libcrypto.so.1.1"
#endif
#endif

#define CBB_CRYPTO_CALLS(X) \
	X(init_crypto, OPENSSL_init_crypto) \
	X(hmac, HMAC) \
	X(sha256, EVP_sha256) \
	X(rand_bytes, RAND_bytes) \
	X(memcmp, CRYPTO_memcmp) \
	X(aes_256_gcm, EVP_aes_256_gcm) \
	X(ctx_new, EVP_CIPHER_CTX_new) \
	X(ctx_free, EVP_CIPHER_CTX_free) \
	X(ctx_ctrl, EVP_CIPHER_CTX_ctrl) \
	X(encrypt_init, EVP_EncryptInit_ex) \
	X(encrypt_update, EVP_EncryptUpdate) \
	X(encrypt_final, EVP_EncryptFinal_ex) \
	X(decrypt_init, EVP_DecryptInit_ex) \
	X(decrypt_update, EVP_DecryptUpdate) \
	X(decrypt_final, EVP_DecryptFinal_ex) \
	X(encode_block, EVP_EncodeBlock) \
	X(decode_block, EVP_DecodeBlock)

#define CBB_CRYPTO_MEMBER(name, fn) __typeof__(fn) *name;

typedef struct {
	CBB_CRYPTO_CALLS(CBB_CRYPTO_MEMBER)
} cbb_crypto_api_t;

/* Valid once cbb_crypto_load() has succeeded. */
extern cbb_crypto_api_t cbb_crypto;

/*
 * Load libcrypto (first call only) and initialise it without reading
 * openssl.cnf or registering its exit handler (unless the host did so
 * before).  -1 with err naming the library when it cannot be loaded.
 */
int cbb_crypto_load(cbb_err_t *err);

#endif

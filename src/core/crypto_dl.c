/* crypto_dl.c - see crypto_dl.h */
#include "crypto_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

cbb_crypto_api_t cbb_crypto;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[CBB_ERR_MAX];

#define CBB_CRYPTO_RESOLVE(name, fn) \
	p = dlsym(h, #fn); \
	if (!p) { \
		snprintf(load_error, sizeof(load_error), "conduit_bb: %s " \
			 "lacks %s", CBB_LIBCRYPTO, #fn); \
		return; \
	} \
	memcpy(&cbb_crypto.name, &p, sizeof(cbb_crypto.name));

static void load(void)
{
	void *h = dlopen(CBB_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL), *p;

	if (!h) {
		const char *why = dlerror();

		snprintf(load_error, sizeof(load_error), "conduit_bb: cannot "
			 "load %s (OpenSSL's libcrypto: libssl3 on Debian, "
			 "openssl-libs on EL): %s", CBB_LIBCRYPTO, why ? why : "?");
		return;
	}
	CBB_CRYPTO_CALLS(CBB_CRYPTO_RESOLVE)
	(void)cbb_crypto.init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG |
				     OPENSSL_INIT_NO_ATEXIT, NULL);
}

int cbb_crypto_load(cbb_err_t *err)
{
	pthread_once(&load_once, load);
	if (load_error[0])
		return cbb_err(err, "%s", load_error);
	return 0;
}

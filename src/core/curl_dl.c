/* curl_dl.c - see curl_dl.h */
#include "curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

cbb_curl_api_t cbb_curl;
cbb_ssl_api_t cbb_ssl;
bool cbb_ssl_ok;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[CBB_ERR_MAX];

/* dlsym into a function pointer (ISO C has no cast between the two). */
static bool resolve(void *h, const char *name, void *slot, size_t size)
{
	void *p = dlsym(h, name);

	if (!p)
		return false;
	memcpy(slot, &p, size);
	return true;
}

#define CBB_DL_RESOLVE_CURL(name, fn) \
	if (!resolve(h, #fn, &cbb_curl.name, sizeof(cbb_curl.name))) { \
		snprintf(load_error, sizeof(load_error), "conduit_bb: %s " \
			 "lacks %s (libcurl 7.66 or later is needed)", \
			 CBB_LIBCURL, #fn); \
		return; \
	}
#define CBB_DL_RESOLVE_SSL(name, fn) \
	ok = ok && resolve(h, #fn, &cbb_ssl.name, sizeof(cbb_ssl.name));

/*
 * OpenSSL is set up before libcurl asks it to: without reading
 * openssl.cnf (nothing in it is for this client, which sets its own
 * protocol, groups and trust) and without the exit handler that frees
 * every table just before the hook process exits.  When the host
 * initialised OpenSSL itself these flags do nothing: the first call wins.
 */
static void init_openssl(void)
{
	if (cbb_ssl_ok)
		(void)cbb_ssl.init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG |
				       OPENSSL_INIT_NO_ATEXIT, NULL);
}

static void load(void)
{
	const curl_version_info_data *v;
	CURLcode rc;
	void *h;
	bool ok = true;

	/*
	 * RTLD_LAZY: libcurl itself is linked -z now, but most of the
	 * libraries it brings (LDAP, SSH, RTMP, GSSAPI, ...) are not, and
	 * their calls are never made here: binding them all now is 1800 of
	 * the 10,700 relocations of loading Debian's libcurl.
	 */
	h = dlopen(CBB_LIBCURL, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();

		snprintf(load_error, sizeof(load_error), "conduit_bb: cannot "
			 "load %s, which the network hooks need "
			 "(install libcurl with OpenSSL: libcurl4 on Debian, "
			 "libcurl on EL): %s", CBB_LIBCURL, why ? why : "?");
		return;
	}
	CBB_CURL_CALLS(CBB_DL_RESOLVE_CURL)
	/* OpenSSL's calls from libcurl's own scope: the libssl it uses */
	v = cbb_curl.version_info(CURLVERSION_NOW);
	if (v && v->ssl_version && !strncmp(v->ssl_version, "OpenSSL", 7)) {
		CBB_SSL_CALLS(CBB_DL_RESOLVE_SSL)
		cbb_ssl_ok = ok;
	}
	init_openssl();
	rc = cbb_curl.global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK)
		snprintf(load_error, sizeof(load_error), "conduit: libcurl "
			 "initialisation failed: %s", cbb_curl.easy_strerror(rc));
}

int cbb_curl_load(cbb_err_t *err)
{
	pthread_once(&load_once, load);
	if (load_error[0])
		return cbb_err(err, "%s", load_error);
	return 0;
}

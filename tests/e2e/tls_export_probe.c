/*
 * tls_export_probe.c - can a hook process hand its TLS session to the
 * next one through libcurl (curl_easy_ssls_export, 8.12+)?
 *
 *   tls_export_probe URL CA [CERT KEY]
 *
 * Makes one HTTPS request (TLS 1.3, the given CA; with CERT and KEY as a
 * client certificate, as conduit_bb talks to Conduit), then counts the
 * sessions curl_easy_ssls_export offers.  Prints "exported N session(s)"
 * or "no export: ..." (Debian builds libcurl without the export; where it
 * is built in, libcurl's documentation says sessions made with a client
 * certificate are never exported).  Run by the e2e suite inside its Debian
 * root against a TLS server that asks for a client certificate but does
 * not require one, with and without one (docs/performance.md).
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

static size_t sink(char *p, size_t s, size_t n, void *u)
{
	(void)p;
	(void)u;
	return s * n;
}

#if LIBCURL_VERSION_NUM >= 0x080c00
static CURLcode count(CURL *h, void *u, const char *key,
		      const unsigned char *shmac, size_t shmac_len,
		      const unsigned char *sdata, size_t sdata_len,
		      curl_off_t valid_until, int tls_id, const char *alpn,
		      size_t earlydata_max)
{
	(void)h;
	(void)key;
	(void)shmac;
	(void)shmac_len;
	(void)sdata;
	(void)valid_until;
	(void)tls_id;
	(void)alpn;
	(void)earlydata_max;
	if (sdata_len)
		++*(int *)u;
	return CURLE_OK;
}
#endif

int main(int argc, char **argv)
{
	CURLSH *share;
	CURL *h;
	CURLcode rc;
	int n = 0;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: tls_export_probe URL CA [CERT KEY]\n");
		return 2;
	}
#if LIBCURL_VERSION_NUM < 0x080c00
	printf("no export: libcurl %s has no curl_easy_ssls_export\n",
	       LIBCURL_VERSION);
	return 0;
#else
	curl_global_init(CURL_GLOBAL_DEFAULT);
	share = curl_share_init();
	curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_SHARE, share);
	curl_easy_setopt(h, CURLOPT_URL, argv[1]);
	curl_easy_setopt(h, CURLOPT_CAINFO, argv[2]);
	curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_3);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	if (argc == 5) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, argv[3]);
		curl_easy_setopt(h, CURLOPT_SSLKEY, argv[4]);
	}
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		printf("request failed: %s\n", curl_easy_strerror(rc));
		return 1;
	}
	rc = curl_easy_ssls_export(h, count, &n);
	if (rc == CURLE_NOT_BUILT_IN)
		printf("no export: not built into this libcurl\n");
	else if (rc != CURLE_OK)
		printf("no export: %s\n", curl_easy_strerror(rc));
	else
		printf("exported %d session(s)\n", n);
	curl_easy_cleanup(h);
	curl_share_cleanup(share);
	curl_global_cleanup();
	return 0;
#endif
}

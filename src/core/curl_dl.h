/*
 * curl_dl.h - libcurl, and the OpenSSL under it, loaded on first need.
 *
 * conduit_bb.so is not linked against libcurl: Debian's libcurl alone
 * pulls in some thirty libraries (LDAP, SSH, RTMP, GSSAPI, IDN, PSL ...)
 * whose mapping and relocation cost every `require("conduit_bb")` about
 * 8 ms, in every hook process Slurm starts, including the many that never
 * talk to a server.  cbb_curl_load() dlopens libcurl the first time a
 * hook needs the network and resolves only the calls below; a hook that
 * needs no server never maps it.
 *
 * The OpenSSL calls (cbb_ssl) are looked up in libcurl's own dependency
 * tree, so they are those of the very libssl libcurl drives (TLS session
 * resumption, src/core/tls.c, works on libcurl's SSL objects); they are
 * NULL when libcurl is built on another TLS library.
 *
 * Thread-safe; loaded once per process, never unloaded.  Internal to core.
 */
#ifndef CBB_CURL_DL_H
#define CBB_CURL_DL_H

#include <stdbool.h>

/* prototypes only: the calls go through the pointers below */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "err.h"

/* The soname dlopen()ed; a packager may name another at build time. */
#ifndef CBB_LIBCURL
#define CBB_LIBCURL "libcurl.so.4"
#endif

#define CBB_CURL_CALLS(X) \
	X(global_init, curl_global_init) \
	X(version_info, curl_version_info) \
	X(easy_init, curl_easy_init) \
	X(easy_setopt, curl_easy_setopt) \
	X(easy_getinfo, curl_easy_getinfo) \
	X(easy_perform, curl_easy_perform) \
	X(easy_cleanup, curl_easy_cleanup) \
	X(easy_strerror, curl_easy_strerror) \
	X(slist_append, curl_slist_append) \
	X(slist_free_all, curl_slist_free_all) \
	X(multi_init, curl_multi_init) \
	X(multi_setopt, curl_multi_setopt) \
	X(multi_add_handle, curl_multi_add_handle) \
	X(multi_remove_handle, curl_multi_remove_handle) \
	X(multi_perform, curl_multi_perform) \
	X(multi_info_read, curl_multi_info_read) \
	X(multi_poll, curl_multi_poll) \
	X(multi_cleanup, curl_multi_cleanup)

#define CBB_SSL_CALLS(X) \
	X(init_ssl, OPENSSL_init_ssl) \
	X(ctx_get_ex_new_index, CRYPTO_get_ex_new_index) \
	X(ctx_set_ex_data, SSL_CTX_set_ex_data) \
	X(ctx_get_ex_data, SSL_CTX_get_ex_data) \
	X(ctx_set_info_callback, SSL_CTX_set_info_callback) \
	X(ctx_sess_set_new_cb, SSL_CTX_sess_set_new_cb) \
	X(ctx_sess_get_new_cb, SSL_CTX_sess_get_new_cb) \
	X(ctx_ctrl, SSL_CTX_ctrl) \
	X(get_ssl_ctx, SSL_get_SSL_CTX) \
	X(get_session, SSL_get_session) \
	X(set_session, SSL_set_session) \
	X(session_reused, SSL_session_reused) \
	X(session_is_resumable, SSL_SESSION_is_resumable) \
	X(session_free, SSL_SESSION_free) \
	X(i2d_session, i2d_SSL_SESSION) \
	X(d2i_session, d2i_SSL_SESSION) \
	X(ctx_set_cert_cb, SSL_CTX_set_cert_cb) \
	X(use_chain_file, SSL_use_certificate_chain_file) \
	X(use_key_file, SSL_use_PrivateKey_file) \
	X(err_get, ERR_get_error) \
	X(err_string, ERR_error_string_n) \
	X(err_clear, ERR_clear_error) \
	X(digest, EVP_Digest) \
	X(md_sha256, EVP_sha256)

#define CBB_DL_MEMBER(name, fn) __typeof__(fn) *name;

typedef struct {
	CBB_CURL_CALLS(CBB_DL_MEMBER)
} cbb_curl_api_t;

typedef struct {
	CBB_SSL_CALLS(CBB_DL_MEMBER)
} cbb_ssl_api_t;

/* Valid once cbb_curl_load() has succeeded. */
extern cbb_curl_api_t cbb_curl;
/* Valid when cbb_curl_load() succeeded and cbb_ssl_ok. */
extern cbb_ssl_api_t cbb_ssl;
extern bool cbb_ssl_ok;

/*
 * Load libcurl (first call only), initialise OpenSSL (without reading
 * openssl.cnf and without its exit handler, unless the host did so
 * before) and libcurl.  -1 with err naming the library when it cannot
 * be loaded or lacks a call.
 */
int cbb_curl_load(cbb_err_t *err);

#endif

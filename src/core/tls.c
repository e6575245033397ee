/* tls.c - see tls.h */
#include "tls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "curl_dl.h"
#include "readfile.h"

#define SESSION_FILE "tls-session"
#define SESSION_MAGIC "CBBTLS1\n"
#define SESSION_MAX (16 * 1024)
#define BIND_FILE_MAX (1 << 20)
/* a temporary file this old is a killed hook's, never one being written */
#define TMP_STALE_S 60

/* ---- the session file ------------------------------------------------ */

/* The saved session, when it was saved under this very binding. */
static SSL_SESSION *load_session(const cbb_tls_resume_t *r)
{
	unsigned char buf[SESSION_MAX];
	const unsigned char *p;
	SSL_SESSION *s = NULL;
	struct stat st;
	size_t hdr = sizeof(SESSION_MAGIC) - 1 + sizeof(r->bind);
	ssize_t n;
	int dfd = cbb_open_private_dir(r->dir, NULL), fd;

	if (dfd < 0)
		return NULL;
	fd = openat(dfd, SESSION_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return NULL;
	/* as private as the key it stands for, or not used */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size > (off_t)sizeof(buf)) {
		close(fd);
		return NULL;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > (ssize_t)hdr &&
	    !memcmp(buf, SESSION_MAGIC, sizeof(SESSION_MAGIC) - 1) &&
	    !memcmp(buf + sizeof(SESSION_MAGIC) - 1, r->bind, sizeof(r->bind))) {
		p = buf + hdr;
		s = cbb_ssl.d2i_session(NULL, &p, (long)((size_t)n - hdr));
		if (s && !cbb_ssl.session_is_resumable(s)) {
			cbb_ssl.session_free(s);
			s = NULL;
		}
	}
	cbb_wipe(buf, sizeof(buf));
	return s;
}

/* Whether name is one of save_session's temporary names,
 * "tls-session.<pid>.<n>", and nothing else. */
static bool tmp_name(const char *name)
{
	const char *p = name + sizeof(SESSION_FILE);
	int part;

	if (strncmp(name, SESSION_FILE ".", sizeof(SESSION_FILE)))
		return false;
	for (part = 0; part < 2; part++) {
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p != (part ? '\0' : '.'))
			return false;
		p++;
	}
	return true;
}

/*
 * A hook killed between creating its temporary file and renaming it
 * (Slurm kills hooks at their time limit) leaves the file behind, and
 * nothing else ever removes it.  On each save: every temporary name in
 * StateDir that is a regular file of ours older than TMP_STALE_S goes.
 * Only names are read (fstatat without following), and unlinkat works
 * on the entry itself, both relative to StateDir's descriptor; a link,
 * FIFO or directory with such a name, or a file of another uid (not
 * ours to remove), is left alone.
 */
static void sweep_tmp(int dfd)
{
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;

		if (!tmp_name(e->d_name) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    now - st.st_mtime < TMP_STALE_S)
			continue;
		(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

static void save_session(cbb_tls_resume_t *r, SSL_SESSION *s)
{
	static unsigned seq;
	unsigned char buf[SESSION_MAX], *p;
	size_t hdr = sizeof(SESSION_MAGIC) - 1 + sizeof(r->bind), len;
	char tmp[64];
	int der = cbb_ssl.i2d_session(s, NULL), dfd, fd;
	bool ok;

	if (der <= 0 || (size_t)der > sizeof(buf) - hdr)
		return;
	memcpy(buf, SESSION_MAGIC, sizeof(SESSION_MAGIC) - 1);
	memcpy(buf + sizeof(SESSION_MAGIC) - 1, r->bind, sizeof(r->bind));
	p = buf + hdr;
	if (cbb_ssl.i2d_session(s, &p) != der)
		goto out;
	len = hdr + (size_t)der;
	dfd = cbb_open_private_dir(r->dir, NULL);
	if (dfd < 0)
		goto out;
	snprintf(tmp, sizeof(tmp), SESSION_FILE ".%ld.%u", (long)getpid(),
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd >= 0) {
		ok = write(fd, buf, len) == (ssize_t)len;
		ok = close(fd) == 0 && ok;
		/* in place at once: a reader sees the old file or the new */
		if (!ok || renameat(dfd, tmp, dfd, SESSION_FILE) < 0)
			(void)unlinkat(dfd, tmp, 0);
		else
			r->saves++;
	}
	sweep_tmp(dfd);
	close(dfd);
out:
	cbb_wipe(buf, sizeof(buf));
}

/* ---- OpenSSL's callbacks on libcurl's SSL objects -------------------- */

static pthread_once_t index_once = PTHREAD_ONCE_INIT;
static int ctx_index = -1;
/* libcurl's own new-session callback, called first (the same for every
 * context libcurl makes) */
static int (*curl_new_cb)(SSL *, SSL_SESSION *);

static void make_index(void)
{
	ctx_index = cbb_ssl.ctx_get_ex_new_index(CRYPTO_EX_INDEX_SSL_CTX, 0,
						 NULL, NULL, NULL, NULL);
}

static cbb_tls_resume_t *resume_of(const SSL *ssl)
{
	SSL_CTX *ctx = cbb_ssl.get_ssl_ctx(ssl);

	return ctx && ctx_index >= 0 ? cbb_ssl.ctx_get_ex_data(ctx, ctx_index) :
				       NULL;
}

static int on_new_session(SSL *ssl, SSL_SESSION *s)
{
	cbb_tls_resume_t *r = resume_of(ssl);
	/* 1: libcurl kept a reference (OpenSSL must not free the session) */
	int kept = curl_new_cb ? curl_new_cb(ssl, s) : 0;

	/* the first ticket of a connection is enough */
	if (r && !r->read_only && r->saved_for != ssl) {
		r->saved_for = ssl;
		save_session(r, s);
	}
	return kept;
}

/* Ours in the chain, libcurl's after it, whichever set its first. */
static void chain_new_session(SSL_CTX *ctx)
{
	int (*cur)(SSL *, SSL_SESSION *) = cbb_ssl.ctx_sess_get_new_cb(ctx);

	if (cur == on_new_session)
		return;
	if (cur)
		curl_new_cb = cur;
	/* a client cache kept outside OpenSSL: the callback is all it does */
	if (!cur)
		(void)cbb_ssl.ctx_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE,
				   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL,
				   NULL);
	cbb_ssl.ctx_sess_set_new_cb(ctx, on_new_session);
}

static void on_info(const SSL *cssl, int where, int ret)
{
	cbb_tls_resume_t *r = resume_of(cssl);
	SSL *ssl;

	(void)ret;
	if (!r)
		return;
	memcpy(&ssl, &cssl, sizeof(ssl)); /* OpenSSL passes it const */
	if (where & SSL_CB_HANDSHAKE_START) {
		SSL_SESSION *cur = cbb_ssl.get_session(ssl), *s;

		chain_new_session(cbb_ssl.get_ssl_ctx(ssl));
		r->offered = r->resumed = false;
		if (cur && cbb_ssl.session_is_resumable(cur))
			return; /* libcurl has one of its own */
		s = load_session(r);
		if (s) {
			r->offered = cbb_ssl.set_session(ssl, s) == 1;
			cbb_ssl.session_free(s); /* the SSL holds its reference */
		}
	} else if (where & SSL_CB_HANDSHAKE_DONE) {
		r->resumed = cbb_ssl.session_reused(ssl) == 1;
	}
}

/* on_cert's failure: why `what` (the file at path) would not load. */
static int cert_failed(cbb_tls_resume_t *r, const char *what, const char *path)
{
	unsigned long e = cbb_ssl.err_get();
	char why[160] = "";

	if (e)
		cbb_ssl.err_string(e, why, sizeof(why));
	snprintf(r->cert_error, sizeof(r->cert_error), "%s %s %s%s%s", what,
		 path, e && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH ?
		 "does not match ClientCert" : "will not load",
		 why[0] ? ": " : "", why);
	return 0;
}

/*
 * The server asked for the client certificate (a full handshake): load
 * it and the key onto this connection (loading the key also checks it
 * against the certificate).  0 aborts the handshake; the reason is kept
 * in r->cert_error for the caller's message (grpc_status.c).
 */
static int on_cert(SSL *ssl, void *arg)
{
	cbb_tls_resume_t *r = arg;

	cbb_ssl.err_clear();
	if (cbb_ssl.use_chain_file(ssl, r->cert) != 1)
		return cert_failed(r, "ClientCert", r->cert);
	if (cbb_ssl.use_key_file(ssl, r->key, SSL_FILETYPE_PEM) != 1)
		return cert_failed(r, "ClientKey", r->key);
	return 1;
}

/* CURLOPT_SSL_CTX_FUNCTION: libcurl's context for one connection. */
static CURLcode on_ssl_ctx(CURL *curl, void *sslctx, void *ud)
{
	SSL_CTX *ctx = sslctx;
	cbb_tls_resume_t *r = ud;

	(void)curl;
	/* first: libcurl was given no certificate to load (cbb_tls_setopt) */
	if (r->cert)
		cbb_ssl.ctx_set_cert_cb(ctx, on_cert, r);
	if (ctx_index < 0 || !cbb_ssl.ctx_set_ex_data(ctx, ctx_index, ud))
		return CURLE_OK; /* no resumption, nothing else changes */
	chain_new_session(ctx);
	cbb_ssl.ctx_set_info_callback(ctx, on_info);
	return CURLE_OK;
}

/* ---- the binding ------------------------------------------------------ */

static bool add_file(cbb_buf_t *b, const char *path)
{
	char *data = NULL, len[32];
	size_t n = 0;
	cbb_err_t err;
	bool ok;

	cbb_err_clear(&err);
	if (!path)
		return cbb_buf_add(b, "-", 2) == 0;
	if (cbb_read_file(path, BIND_FILE_MAX, &data, &n, NULL, &err) < 0)
		return false;
	snprintf(len, sizeof(len), "%zu:", n);
	ok = cbb_buf_add(b, len, strlen(len)) == 0 && cbb_buf_add(b, data, n) == 0;
	cbb_wipe(data, n); /* the key, among them */
	free(data);
	return ok;
}

void cbb_tls_resume_init(cbb_tls_resume_t *r, const cbb_tls_bind_t *bd)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char head[640];
	cbb_buf_t b;
	bool ok;

	memset(r, 0, sizeof(*r));
	if (!cbb_ssl_ok || !bd->state_dir)
		return;
	pthread_once(&index_once, make_index);
	if (ctx_index < 0)
		return;
	if (snprintf(r->dir, sizeof(r->dir), "%s", bd->state_dir) >= (int)sizeof(r->dir))
		return;
	snprintf(head, sizeof(head), "conduit-bb tls-session 1\n%s\n%s\n%u\n%lu\n",
		 bd->server_name ? bd->server_name : "", bd->host ? bd->host : "",
		 bd->port, (unsigned long)geteuid());
	cbb_buf_init(&b, 3 * BIND_FILE_MAX + sizeof(head));
	cbb_buf_secret(&b); /* it holds the key while it is hashed */
	ok = cbb_buf_add(&b, head, strlen(head)) == 0 && add_file(&b, bd->ca) &&
	     add_file(&b, bd->cert) && add_file(&b, bd->key) &&
	     cbb_ssl.digest(b.data, b.len, md, &mdlen, cbb_ssl.md_sha256(), NULL) == 1 &&
	     mdlen == sizeof(r->bind);
	cbb_buf_free(&b);
	if (!ok)
		return;
	memcpy(r->bind, md, sizeof(r->bind));
	r->on = true;
}

/* ---- the options ------------------------------------------------------- */

/*
 * Never a proxy: libcurl takes https_proxy, HTTPS_PROXY, ALL_PROXY (and
 * NO_PROXY) from the environment, which is the hook's, the user's shell's
 * for `conduit-bb`; a proxy there would be handed the mTLS connection to
 * Conduit or the controller (or hang it).  An empty CURLOPT_PROXY turns
 * the environment's proxy off, and CURLOPT_NOPROXY "*" says no host is
 * reached through one; a libcurl built without proxies knows neither
 * option and uses none.
 */
static int no_proxy(CURL *e)
{
	CURLcode rc = cbb_curl.easy_setopt(e, CURLOPT_PROXY, "");

	if (rc == CURLE_OK)
		rc = cbb_curl.easy_setopt(e, CURLOPT_NOPROXY, "*");
	return rc == CURLE_OK || rc == CURLE_UNKNOWN_OPTION ||
	       rc == CURLE_NOT_BUILT_IN ? 0 : -1;
}

int cbb_tls_setopt(void *easy, const cbb_tls_t *t)
{
	CURL *e = easy;

	if (no_proxy(e))
		return -1;
	if (
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85: the string form */
	    cbb_curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https") ||
#else
	    cbb_curl.easy_setopt(e, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS) ||
#endif
	    cbb_curl.easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L))
		return -1;
	if (t->tls13 && cbb_curl.easy_setopt(e, CURLOPT_SSLVERSION,
					     (long)CURL_SSLVERSION_TLSv1_3))
		return -1;
	/* Trust only the configured CA: Debian's libcurl keeps its default
	 * CApath unless it is cleared. */
	if (t->ca && (cbb_curl.easy_setopt(e, CURLOPT_CAINFO, t->ca) ||
		      cbb_curl.easy_setopt(e, CURLOPT_CAPATH, NULL)))
		return -1;
	if (t->resume && t->resume->on && t->cert) {
		/* on_cert loads them if the server asks (no CURLOPT_SSLKEY:
		 * the key is then in the certificate's file, as libcurl
		 * would take it) */
		t->resume->cert = t->cert;
		t->resume->key = t->key ? t->key : t->cert;
		t->resume->cert_error[0] = '\0';
	} else {
		if (t->cert && (cbb_curl.easy_setopt(e, CURLOPT_SSLCERT, t->cert) ||
				cbb_curl.easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM")))
			return -1;
		if (t->key && (cbb_curl.easy_setopt(e, CURLOPT_SSLKEY, t->key) ||
			       cbb_curl.easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM")))
			return -1;
	}
	/* the first group is the one whose key share the ClientHello
	 * carries; a libcurl before 7.73 knows no such option and keeps
	 * OpenSSL's defaults */
	if (t->groups && t->groups[0]) {
		CURLcode rc = cbb_curl.easy_setopt(e, CURLOPT_SSL_EC_CURVES,
						   t->groups);

		if (rc != CURLE_OK && rc != CURLE_UNKNOWN_OPTION &&
		    rc != CURLE_NOT_BUILT_IN)
			return -1;
	}
	if (t->resume && t->resume->on &&
	    (cbb_curl.easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx) ||
	     cbb_curl.easy_setopt(e, CURLOPT_SSL_CTX_DATA, t->resume)))
		return -1;
	return 0;
}

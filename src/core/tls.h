/*
 * tls.h - the one TLS set-up of every libcurl handle conduit_bb makes
 * (the Conduit client, src/core/grpc_request.c, and the switch half's session
 * controller client, src/switch/controller.c), and TLS session
 * resumption across hook processes.
 *
 * Verification is always on: the peer's chain against CACert only (not
 * the system store), its name against the URL's host.  No proxy, ever:
 * whatever https_proxy, HTTPS_PROXY or ALL_PROXY the environment holds,
 * the connection goes straight to the server.
 *
 * The client certificate and key are loaded only when the server asks
 * for them (a full handshake), from OpenSSL's certificate callback on
 * libcurl's SSL objects; a resumed connection never reads them, which
 * saves decoding both in every poll (OpenSSL 3.0's decoders cost about
 * 2 ms of CPU in a new process).  Without resumption (TLSResume=no, a
 * file the binding cannot read, libcurl not on OpenSSL) libcurl loads
 * them as before, when the connection is set up.
 *
 * Resumption: Slurm runs every stage hook in a new process, so each one
 * would pay a full mutual-TLS handshake.  A session the server hands out
 * (a TLS 1.3 ticket) is saved, as OpenSSL serialises it, to one file in
 * StateDir (`tls-session`, mode 0600, owned by the hook's user, written
 * under a temporary name and renamed into place), and the next process
 * puts it on its connection before the ClientHello.  The file starts
 * with a SHA-256 over everything the session is bound to: the server's
 * name, address and port, the contents of CACert, ClientCert and
 * ClientKey, and the effective uid; a file saved under any other binding
 * is never offered (the next full handshake replaces it).  A server that
 * does not accept the ticket (restarted, rotated its keys, expired it)
 * simply makes a full handshake.  libcurl offers no call for this with a
 * client certificate, so it is done in OpenSSL's callbacks on libcurl's
 * own SSL objects (CURLOPT_SSL_CTX_FUNCTION), and only when libcurl runs
 * on OpenSSL.  Internal to core.
 */
#ifndef CBB_TLS_H
#define CBB_TLS_H

#include <limits.h>
#include <stdbool.h>

#include "err.h"

typedef struct {
	char dir[PATH_MAX];       /* StateDir */
	unsigned char bind[32];   /* SHA-256 of the binding */
	bool on;                  /* path and binding are set */
	bool read_only;           /* offer a saved session, save none (hooks
				     that must not write StateDir) */
	/* what the last connection did (for tests and the bench) */
	bool offered;             /* a saved session was put on it */
	bool resumed;             /* the server accepted it */
	unsigned saves;           /* sessions saved */
	const void *saved_for;    /* the SSL the last save came from */
	/* the client certificate and key, loaded when the server asks */
	const char *cert, *key;
	char cert_error[200];     /* why loading them failed, or "" */
} cbb_tls_resume_t;

typedef struct {
	const char *ca;           /* CACert: the only trust anchor(s) */
	const char *cert, *key;   /* client certificate and key (PEM) */
	const char *groups;       /* TLSGroups; NULL: OpenSSL's defaults */
	bool tls13;               /* TLS 1.3 only */
	cbb_tls_resume_t *resume; /* NULL: no resumption */
} cbb_tls_t;

/* What a session is bound to (cbb_tls_resume_init). */
typedef struct {
	const char *server_name;  /* the name TLS checks */
	const char *host;         /* the address dialled */
	unsigned port;
	const char *ca, *cert, *key;
	const char *state_dir;
} cbb_tls_bind_t;

/*
 * Set TLS options on a libcurl easy handle (a CURL *), and no proxy: 0,
 * or -1 when libcurl refused one.  cbb_curl_load() must have succeeded.
 */
int cbb_tls_setopt(void *easy, const cbb_tls_t *t);

/*
 * Prepare resumption for one connection's binding: reads and hashes the
 * certificate files (the key's bytes are wiped after).  Leaves r->on
 * false (no resumption, nothing else changes) when libcurl is not on
 * OpenSSL or a file cannot be read; never fails the caller.
 */
void cbb_tls_resume_init(cbb_tls_resume_t *r, const cbb_tls_bind_t *b);

#endif

/*
 * grpc_request.c - one unary call as an HTTP/2 request on libcurl: the
 * framed message as the POST body, gRPC's headers (content type,
 * trailers, grpc-timeout from what is left of the budget, the request
 * id), libcurl's options and the TLS set-up shared with the switch
 * half's controller client (tls.c), and freeing a call's state.
 */
#include "curl_dl.h"
#include "grpc_frame.h"
#include "grpc_int.h"
#include "tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* A request id unique to this process's calls, and likely across hosts. */
static uint64_t new_rid(void)
{
	static uint64_t seq;
	struct timespec ts;
	uint64_t n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)getpid() << 40) ^ ((uint64_t)ts.tv_sec << 20) ^
	       (uint64_t)ts.tv_nsec ^ (n << 52) ^ n;
}

void cbb_rpc_reset(cbb_rpc_t *c)
{
	if (c->easy)
		cbb_curl.easy_cleanup(c->easy);
	if (c->headers)
		cbb_curl.slist_free_all(c->headers);
	free(c->framed);
	free(c->resp);
	c->easy = c->headers = NULL;
	c->framed = c->resp = NULL;
	c->resp_len = c->resp_cap = c->expect = c->got = 0;
	c->http_status = 0;
	c->in_trailers = c->grpc_ct = c->have_status = false;
	c->have_message = c->sent = false;
	c->too_big = c->bad_frame = false;
	c->curl_err[0] = '\0';
	c->curl_rc = 0;
}

int cbb_grpc_request_setup(cbb_grpc_t *g, cbb_rpc_t *c, unsigned timeout_ms,
			    bool fresh)
{
	const cbb_config_t *cfg = g->cfg;
	struct curl_slist *h = NULL, *h2;
	char url[512], tmo[64], rid[64];
	cbb_tls_t tls = { cfg->ca_cert, cfg->client_cert, cfg->client_key,
			  cbb_conf_tls_groups(cfg), true, &g->resume };
	CURL *e;

	cbb_rpc_reset(c);
	c->status = CBB_GRPC_UNKNOWN;
	c->message[0] = '\0';
	c->max_reply = cfg->max_reply_bytes;
	e = cbb_curl.easy_init();
	if (cbb_grpc_frame(c) < 0 || !e) {
		if (e)
			cbb_curl.easy_cleanup(e);
		return -1;
	}
	c->easy = e;

	snprintf(url, sizeof(url), "%s/conduitapi.ConduitApi/%s",
		 g->base_url, c->method);
	/* the server is told a little less, so its DEADLINE_EXCEEDED wins */
	cbb_grpc_timeout_header(tmo, sizeof(tmo), timeout_ms > 200 ? timeout_ms - 50 :
							 timeout_ms);
	if (!c->rid)
		c->rid = new_rid();
	snprintf(rid, sizeof(rid), "conduit-bb-request-id: %016llx",
		 (unsigned long long)c->rid);
	h2 = cbb_curl.slist_append(h, "Content-Type: application/grpc");
	if (h2)
		h = h2;
	h2 = h2 ? cbb_curl.slist_append(h, "TE: trailers") : NULL;
	h2 = h2 ? cbb_curl.slist_append(h, "Accept:") : NULL;
	h2 = h2 ? cbb_curl.slist_append(h, "Expect:") : NULL;
	h2 = h2 ? cbb_curl.slist_append(h, tmo) : NULL;
	h2 = h2 ? cbb_curl.slist_append(h, rid) : NULL;
	c->headers = h;
	if (!h2)
		return -1;

	if (cbb_curl.easy_setopt(e, CURLOPT_URL, url) ||
	    cbb_curl.easy_setopt(e, CURLOPT_HTTP_VERSION,
			     (long)CURL_HTTP_VERSION_2TLS) ||
	    cbb_curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_PIPEWAIT, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_POST, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
			     (curl_off_t)(c->req_len + 5)) ||
	    cbb_curl.easy_setopt(e, CURLOPT_POSTFIELDS, c->framed) ||
	    cbb_curl.easy_setopt(e, CURLOPT_HTTPHEADER, h) ||
	    cbb_curl.easy_setopt(e, CURLOPT_USERAGENT, "conduit-bb/" CBB_VERSION) ||
	    cbb_curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			     (long)(timeout_ms < 5000 ? timeout_ms : 5000)) ||
	    cbb_curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout_ms) ||
	    cbb_curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, cbb_grpc_on_header) ||
	    cbb_curl.easy_setopt(e, CURLOPT_HEADERDATA, c) ||
	    cbb_curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, cbb_grpc_on_body) ||
	    cbb_curl.easy_setopt(e, CURLOPT_WRITEDATA, c) ||
	    cbb_curl.easy_setopt(e, CURLOPT_ERRORBUFFER, c->curl_err) ||
	    cbb_curl.easy_setopt(e, CURLOPT_PRIVATE, c))
		return -1;
	if (cbb_tls_setopt(e, &tls))
		return -1;
	if (g->resolve_list &&
	    cbb_curl.easy_setopt(e, CURLOPT_RESOLVE, (struct curl_slist *)g->resolve_list))
		return -1;
	if (fresh && cbb_curl.easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L))
		return -1;
	return 0;
}

/* grpc.c - see grpc.h */
#include "grpc.h"
#include "curl_dl.h"
#include "grpc_frame.h"
#include "tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int cbb_grpc_global_init(cbb_err_t *err)
{
	return cbb_curl_load(err);
}

const char *cbb_grpc_code_name(int status)
{
	static const char *const names[CBB_GRPC_NCODES] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
		"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};

	return status >= 0 && status < CBB_GRPC_NCODES ? names[status] :
							 "UNKNOWN";
}

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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned cbb_grpc_left_ms(const cbb_grpc_t *g)
{
	uint64_t now = now_ms();

	return now >= g->end_ms ? 0 : (unsigned)(g->end_ms - now);
}

unsigned cbb_grpc_spent_ms(const cbb_grpc_t *g)
{
	return (unsigned)(now_ms() - g->t0_ms);
}

int cbb_grpc_open(cbb_grpc_t *g, const cbb_config_t *cfg, unsigned budget_ms,
		  cbb_err_t *err)
{
	const char *host = cfg->server_host;
	bool v6;

	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
	g->budget_ms = budget_ms ? budget_ms : cfg->request_timeout_ms;
	g->t0_ms = now_ms();
	g->end_ms = g->t0_ms + g->budget_ms;
	if (!host)
		return cbb_err(err, "conduit: ConduitServer is not set in "
			       "conduit_bb.conf");
	if (cbb_grpc_global_init(err) < 0)
		return -1;
	if (cfg->tls_resume) {
		cbb_tls_bind_t b = { cfg->server_name, host, cfg->server_port,
				     cfg->ca_cert, cfg->client_cert,
				     cfg->client_key, cbb_conf_state_dir(cfg) };

		cbb_tls_resume_init(&g->resume, &b);
	}
	v6 = strchr(host, ':') != NULL;
	if (cfg->server_name) {
		/*
		 * Dial ServerName (so TLS checks that name) but connect to
		 * the configured address.
		 */
		snprintf(g->base_url, sizeof(g->base_url), "https://%s:%u",
			 cfg->server_name, cfg->server_port);
		snprintf(g->resolve, sizeof(g->resolve), "%s:%u:%s%s%s",
			 cfg->server_name, cfg->server_port, v6 ? "[" : "",
			 host, v6 ? "]" : "");
	} else {
		snprintf(g->base_url, sizeof(g->base_url), "https://%s%s%s:%u",
			 v6 ? "[" : "", host, v6 ? "]" : "", cfg->server_port);
	}
	if (g->resolve[0] &&
	    !(g->resolve_list = cbb_curl.slist_append(NULL, g->resolve)))
		return cbb_err(err, "conduit: out of memory");
	g->multi = cbb_curl.multi_init();
	if (!g->multi)
		return cbb_err(err, "conduit: out of memory");
	cbb_curl.multi_setopt(g->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	cbb_curl.multi_setopt(g->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);
	cbb_curl.multi_setopt(g->multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 100L);
	return 0;
}

void cbb_grpc_close(cbb_grpc_t *g)
{
	if (g->multi)
		cbb_curl.multi_cleanup(g->multi);
	if (g->resolve_list)
		cbb_curl.slist_free_all(g->resolve_list);
	g->multi = NULL;
	g->resolve_list = NULL;
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

static int setup_call(cbb_grpc_t *g, cbb_rpc_t *c, unsigned timeout_ms,
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

static void transport_error(cbb_grpc_t *g, cbb_rpc_t *c)
{
	const cbb_config_t *cfg = g->cfg;
	const char *detail = c->curl_err[0] ? c->curl_err :
			     cbb_curl.easy_strerror((CURLcode)c->curl_rc);

	c->transport = true;
	c->status = CBB_GRPC_UNAVAILABLE;
	switch (c->curl_rc) {
	case CURLE_COULDNT_CONNECT:
		snprintf(c->message, sizeof(c->message),
			 "conduit: connect to %s:%u refused", cfg->server_host,
			 cfg->server_port);
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(c->message, sizeof(c->message),
			 "conduit: cannot resolve %s", cfg->server_name ?
			 cfg->server_name : cfg->server_host);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		c->status = CBB_GRPC_DEADLINE_EXCEEDED;
		snprintf(c->message, sizeof(c->message),
			 "conduit: %s timed out after %u ms (budget %u ms)",
			 c->method, cbb_grpc_spent_ms(g), g->budget_ms);
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
#if LIBCURL_VERSION_NUM < 0x073e00
	case CURLE_SSL_CACERT:
#endif
		/* not an outage: the wrong server, or the wrong CA */
		c->status = CBB_GRPC_FAILED_PRECONDITION;
		c->transport = false;
		snprintf(c->message, sizeof(c->message),
			 "conduit: TLS: certificate verify failed (%s)", detail);
		break;
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CRL_BADFILE:
		c->status = CBB_GRPC_FAILED_PRECONDITION;
		c->transport = false; /* local configuration: do not retry */
		snprintf(c->message, sizeof(c->message),
			 "conduit: TLS: bad certificate configuration (%s)",
			 detail);
		break;
	case CURLE_SSL_CIPHER: /* OpenSSL refused TLSGroups */
		c->status = CBB_GRPC_FAILED_PRECONDITION;
		c->transport = false; /* local configuration: do not retry */
		snprintf(c->message, sizeof(c->message),
			 "conduit: TLS: TLSGroups=%s not accepted (%s)",
			 cbb_conf_tls_groups(cfg), detail);
		break;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		/*
		 * With TLS 1.3 a refused client certificate is only seen
		 * after the handshake, as a reset stream or connection.
		 */
		snprintf(c->message, sizeof(c->message),
			 "conduit: connection with %s:%u failed (%s); if this "
			 "persists, check ClientCert/ClientKey", cfg->server_host,
			 cfg->server_port, detail);
		break;
	default:
		snprintf(c->message, sizeof(c->message), "conduit: %s: %s "
			 "(curl error %d)", c->method, detail, c->curl_rc);
		break;
	}
	cbb_one_line(c->message);
}

/* Decide how a finished call went. */
static void finish(cbb_grpc_t *g, cbb_rpc_t *c)
{
	long ver = 0;
	/* from here on have_status says the status is the server's own */
	bool server_status = c->have_status;

	c->have_status = false;
	c->transport = false;
	if (c->too_big) {
		c->status = CBB_GRPC_RESOURCE_EXHAUSTED;
		snprintf(c->message, sizeof(c->message), "conduit: %s reply "
			 "larger than MaxReplyBytes=%zu", c->method, c->max_reply);
		return;
	}
	if (c->bad_frame) {
		c->status = CBB_GRPC_INTERNAL;
		snprintf(c->message, sizeof(c->message), "conduit: %s reply is "
			 "not one uncompressed message", c->method);
		return;
	}
	if (c->curl_rc != CURLE_OK) {
		transport_error(g, c);
		return;
	}
	cbb_curl.easy_getinfo(c->easy, CURLINFO_HTTP_VERSION, &ver);
	if (ver != CURL_HTTP_VERSION_2_0) {
		c->status = CBB_GRPC_UNAVAILABLE;
		snprintf(c->message, sizeof(c->message), "conduit: %s:%u did "
			 "not speak HTTP/2", g->cfg->server_host,
			 g->cfg->server_port);
		return;
	}
	if (c->http_status != 200) {
		c->status = c->http_status == 503 || c->http_status == 502 ||
					    c->http_status == 504 ?
				    CBB_GRPC_UNAVAILABLE : CBB_GRPC_UNKNOWN;
		c->transport = c->status == CBB_GRPC_UNAVAILABLE;
		snprintf(c->message, sizeof(c->message), "conduit: HTTP %d "
			 "from %s:%u", c->http_status, g->cfg->server_host,
			 g->cfg->server_port);
		return;
	}
	if (!c->grpc_ct) {
		c->status = CBB_GRPC_UNKNOWN;
		snprintf(c->message, sizeof(c->message), "conduit: reply is not "
			 "gRPC (unexpected content-type)");
		return;
	}
	if (!server_status) {
		/* libcurl 7.88 loses trailers on GOAWAY: maybe not done */
		c->status = CBB_GRPC_UNAVAILABLE;
		c->transport = true;
		snprintf(c->message, sizeof(c->message), "conduit: %s reply "
			 "without grpc-status", c->method);
		return;
	}
	if (c->status != CBB_GRPC_OK) {
		static const char head[] = "conduit: server said: ";
		char said[CBB_ERR_MAX];
		size_t n;

		c->have_status = true;
		memcpy(said, c->message, sizeof(said));
		c->have_message = said[0] != '\0';
		if (!said[0])
			strcpy(said, "(no message)");
		n = strlen(said);
		if (n > sizeof(c->message) - sizeof(head))
			n = sizeof(c->message) - sizeof(head);
		memcpy(c->message, head, sizeof(head) - 1);
		memcpy(c->message + sizeof(head) - 1, said, n);
		c->message[sizeof(head) - 1 + n] = '\0';
		return;
	}
	if (c->got < 5 || c->resp_len != c->expect) {
		c->status = CBB_GRPC_INTERNAL;
		snprintf(c->message, sizeof(c->message), "conduit: truncated "
			 "%s reply", c->method);
		return;
	}
	c->have_status = true;
	c->message[0] = '\0';
}

/* Mark a call that was never sent because the budget is spent. */
static void out_of_time(cbb_grpc_t *g, cbb_rpc_t *c)
{
	cbb_rpc_reset(c);
	c->transport = true;
	c->status = CBB_GRPC_DEADLINE_EXCEEDED;
	snprintf(c->message, sizeof(c->message), "conduit: %s not sent: the "
		 "%u ms budget was spent after %u ms", c->method, g->budget_ms,
		 cbb_grpc_spent_ms(g));
}

static size_t run_once(cbb_grpc_t *g, cbb_rpc_t **calls, size_t n, bool fresh)
{
	CURLM *m = g->multi;
	unsigned tmo = cbb_grpc_left_ms(g);
	/* a backstop in case libcurl's own timeout does not fire */
	uint64_t end = g->end_ms + 20;
	size_t i, added = 0, failed = 0;
	int running = 0, left;
	CURLMsg *msg;

	for (i = 0; i < n; i++) {
		cbb_rpc_t *c = calls[i];

		if (tmo == 0) {
			out_of_time(g, c);
			continue;
		}
		if (setup_call(g, c, tmo, fresh) < 0 ||
		    cbb_curl.multi_add_handle(m, c->easy) != CURLM_OK) {
			c->status = CBB_GRPC_RESOURCE_EXHAUSTED;
			snprintf(c->message, sizeof(c->message),
				 "conduit: cannot set up %s (out of memory?)",
				 c->method);
			if (c->easy) {
				cbb_curl.easy_cleanup(c->easy);
				c->easy = NULL;
			}
			continue;
		}
		c->curl_rc = -1; /* not finished */
		c->sent = true;
		g->calls++;
		added++;
	}
	while (added) {
		uint64_t now;

		if (cbb_curl.multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = cbb_curl.multi_info_read(m, &left))) {
			cbb_rpc_t *c = NULL;
			long nc = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			cbb_curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
					  (char **)&c);
			cbb_curl.easy_getinfo(msg->easy_handle,
					  CURLINFO_NUM_CONNECTS, &nc);
			g->connects += (unsigned)nc;
			c->curl_rc = msg->data.result;
			cbb_curl.multi_remove_handle(m, c->easy);
			finish(g, c);
			added--;
		}
		now = now_ms();
		if (!added || now >= end)
			break;
		cbb_curl.multi_poll(m, NULL, 0, end - now < 100 ? (int)(end - now) : 100,
				NULL);
	}
	for (i = 0; i < n; i++) {
		cbb_rpc_t *c = calls[i];

		if (c->easy && c->curl_rc == -1) { /* the backstop fired */
			cbb_curl.multi_remove_handle(m, c->easy);
			c->curl_rc = CURLE_OPERATION_TIMEDOUT;
			finish(g, c);
		}
		if (c->easy) {
			cbb_curl.easy_cleanup(c->easy);
			c->easy = NULL;
		}
		if (c->headers)
			cbb_curl.slist_free_all(c->headers);
		c->headers = NULL;
		free(c->framed);
		c->framed = NULL;
		failed += c->status != CBB_GRPC_OK;
	}
	return failed;
}

size_t cbb_grpc_run(cbb_grpc_t *g, cbb_rpc_t **calls, size_t n)
{
	cbb_rpc_t **again;
	size_t failed, i, k = 0;

	if (n == 0)
		return 0;
	failed = run_once(g, calls, n, false);
	if (!failed || cbb_grpc_left_ms(g) == 0)
		return failed;
	/* One retry, on a fresh connection, of what is safe to repeat. */
	again = malloc(n * sizeof(*again));
	if (!again)
		return failed;
	for (i = 0; i < n; i++)
		if (calls[i]->status != CBB_GRPC_OK && calls[i]->transport &&
		    calls[i]->idempotent)
			again[k++] = calls[i];
	if (k)
		failed = failed - k + run_once(g, again, k, true);
	free(again);
	return failed;
}

/*
 * grpc_status.c - what a finished call's outcome is, as a gRPC status
 * and one line for people: libcurl's error codes (refused, timed out,
 * TLS verification, our own certificate or TLSGroups configuration), the
 * HTTP/2 and gRPC checks of a reply (HTTP 200, the content type, one
 * whole message, grpc-status from the trailers), and the server's own
 * status with its message.  Whether a failure happened below gRPC
 * (`transport`: the server may not have seen it) is decided here too;
 * what each status means for a transfer is bb's (cbb_conduit_answer).
 */
#include "curl_dl.h"
#include "grpc_int.h"

#include <stdio.h>
#include <string.h>

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

static void transport_error(const cbb_grpc_t *g, cbb_rpc_t *c)
{
	const cbb_config_t *cfg = g->cfg;
	const char *detail = c->curl_err[0] ? c->curl_err :
			     cbb_curl.easy_strerror((CURLcode)c->curl_rc);
	int rc = c->curl_rc;

	/* the server asked for the client certificate, which would not load
	 * (src/core/tls.c loads it then): as if libcurl had refused it */
	if (g->resume.cert_error[0]) {
		detail = g->resume.cert_error;
		rc = CURLE_SSL_CERTPROBLEM;
	}
	c->transport = true;
	c->status = CBB_GRPC_UNAVAILABLE;
	switch (rc) {
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

void cbb_grpc_classify(const cbb_grpc_t *g, cbb_rpc_t *c)
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

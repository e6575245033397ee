/*
 * grpc.h - unary gRPC calls over HTTP/2 + TLS with libcurl.
 *
 * One cbb_grpc_t is one hook's connection to the Conduit server: every
 * call made through it is multiplexed on a single HTTP/2 connection
 * (curl_multi, PIPEWAIT, one connection per host).  Nothing outlives
 * cbb_grpc_close(): no handle, buffer or descriptor.
 *
 * A connection has one time budget, set when it is opened: every connect,
 * TLS handshake, RPC and retry made through it shares that one deadline,
 * so a hook never outlives it whatever the server does (a retry only gets
 * what is left).  Each call carries what is left twice: the grpc-timeout
 * header lets the server give up, and a local libcurl timeout covers a
 * dead or silent server and libcurl 7.88's HTTP/2 stalls.  A reply is a
 * success only with HTTP 200, a gRPC content type, exactly one
 * uncompressed message within MaxReplyBytes, and grpc-status 0 (from
 * trailers or a Trailers-Only reply).  The reply buffer grows with the
 * bytes that actually arrive, never from the peer's declared length.
 *
 * The code, one file per idea: grpc.c (opening and closing a connection,
 * its budget), grpc_run.c (running calls, the retry), grpc_request.c (one
 * call's HTTP/2 request on libcurl, TLS through tls.c), grpc_status.c
 * (what a finished call's outcome is), grpc_frame.c (gRPC's framing).
 * libcurl is loaded by the first cbb_grpc_open() of a process (curl_dl.h).
 */
#ifndef CBB_GRPC_H
#define CBB_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "tls.h"

/* gRPC status codes (grpc/doc/statuscodes.md) */
enum {
	CBB_GRPC_OK = 0,
	CBB_GRPC_CANCELLED = 1,
	CBB_GRPC_UNKNOWN = 2,
	CBB_GRPC_INVALID_ARGUMENT = 3,
	CBB_GRPC_DEADLINE_EXCEEDED = 4,
	CBB_GRPC_NOT_FOUND = 5,
	CBB_GRPC_ALREADY_EXISTS = 6,
	CBB_GRPC_PERMISSION_DENIED = 7,
	CBB_GRPC_RESOURCE_EXHAUSTED = 8,
	CBB_GRPC_FAILED_PRECONDITION = 9,
	CBB_GRPC_ABORTED = 10,
	CBB_GRPC_OUT_OF_RANGE = 11,
	CBB_GRPC_UNIMPLEMENTED = 12,
	CBB_GRPC_INTERNAL = 13,
	CBB_GRPC_UNAVAILABLE = 14,
	CBB_GRPC_DATA_LOSS = 15,
	CBB_GRPC_UNAUTHENTICATED = 16,
	CBB_GRPC_NCODES = 17,
};

/* "CANCELLED", "UNAVAILABLE", ...; "UNKNOWN" out of range. */
const char *cbb_grpc_code_name(int status);

typedef struct cbb_rpc cbb_rpc_t;

typedef struct {
	void *multi;        /* CURLM */
	char base_url[320]; /* https://host:port */
	char resolve[320];  /* "host:port:addr" when ServerName differs */
	void *resolve_list; /* that entry as a curl_slist */
	const cbb_config_t *cfg;
	uint64_t t0_ms;     /* monotonic ms when the budget started */
	uint64_t end_ms;    /* ... and when it runs out */
	unsigned budget_ms;
	unsigned calls;     /* RPCs attempted, retries included */
	unsigned connects;  /* new connections opened */
	cbb_tls_resume_t resume; /* TLS session resumption (tls.h) */
	bool lazy;          /* opened by cbb_grpc_open_lazy: libcurl is
			       loaded, and the connection made, by the
			       first call */
} cbb_grpc_t;

struct cbb_rpc {
	/* in */
	const char *method;     /* e.g. "Query" */
	const uint8_t *req;     /* serialized request message */
	size_t req_len;
	bool idempotent;        /* safe to repeat after a transport error */
	uint64_t rid;           /* request id, sent as conduit-bb-request-id
				   and kept across retries (0: one is made
				   when the call is first sent) */
	/* out */
	int status;             /* gRPC status; CBB_GRPC_UNAVAILABLE etc. */
	bool transport;         /* failed below gRPC: the server may not
				   have seen the call */
	bool sent;              /* handed to the connection: the server may
				   have seen it (false: never left) */
	bool have_status;       /* the status is the server's grpc-status */
	bool have_message;      /* ... and it came with a grpc-message */
	char message[CBB_ERR_MAX]; /* one line, for people */
	uint8_t *resp;          /* the reply message (malloc'd) */
	size_t resp_len;
	/* private */
	void *easy;
	void *headers;
	uint8_t *framed;
	size_t expect;          /* message length from the frame prefix */
	size_t resp_cap;        /* bytes allocated at resp */
	size_t max_reply;       /* MaxReplyBytes */
	size_t got;             /* body bytes received */
	uint8_t prefix[5];
	int http_status;
	bool in_trailers, grpc_ct, too_big, bad_frame;
	char curl_err[256];
	int curl_rc;
};

/*
 * Open a connection whose every call must finish within `budget_ms` of
 * now (0: RequestTimeout).  Nothing is sent yet.
 */
int cbb_grpc_open(cbb_grpc_t *g, const cbb_config_t *cfg, unsigned budget_ms,
		  cbb_err_t *err);
/*
 * The same, but nothing is loaded until the first call (cbb_grpc_run
 * opens it then, with what is left of the budget): a hook that decides
 * without the server (a poll from the shared reply) never maps libcurl
 * or OpenSSL.  Fails at once only when ConduitServer is not set.
 */
int cbb_grpc_open_lazy(cbb_grpc_t *g, const cbb_config_t *cfg,
		       unsigned budget_ms, cbb_err_t *err);
void cbb_grpc_close(cbb_grpc_t *g);

/* Milliseconds left of the budget (0 when spent), and spent so far. */
unsigned cbb_grpc_left_ms(const cbb_grpc_t *g);
unsigned cbb_grpc_spent_ms(const cbb_grpc_t *g);

/*
 * Run the calls concurrently and wait for all of them, within what is
 * left of the budget.  Calls that failed in transport and are idempotent
 * are retried once on a fresh connection, with what is left then.  Each
 * call's status/message/resp says how it went; returns how many failed.
 */
size_t cbb_grpc_run(cbb_grpc_t *g, cbb_rpc_t **calls, size_t n);

/* Free a call's reply and private state (the call struct stays). */
void cbb_rpc_reset(cbb_rpc_t *c);

/* Decode grpc-message percent escapes in place (lenient). */
void cbb_grpc_percent_decode(char *s);

#endif

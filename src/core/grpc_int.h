/*
 * grpc_int.h - what the files of the gRPC client share among themselves
 * (grpc.c the connection and its budget, grpc_run.c running calls,
 * grpc_request.c one call's request, grpc_status.c a finished call's
 * status); nothing outside them includes it.  They call one way:
 * grpc_run uses the other three, grpc_status uses grpc's clock.
 */
#ifndef CBB_GRPC_INT_H
#define CBB_GRPC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "grpc.h"

/* Monotonic milliseconds, the clock of every budget. */
uint64_t cbb_grpc_now_ms(void);

/*
 * Make c's libcurl handle: the request, its headers and options, which
 * must finish within timeout_ms; fresh: on a new connection (a retry).
 * -1 on out of memory or an option libcurl refused (c->easy may be set:
 * the caller frees it).
 */
int cbb_grpc_request_setup(cbb_grpc_t *g, cbb_rpc_t *c, unsigned timeout_ms,
			   bool fresh);

/*
 * Decide how a finished call went, from what libcurl and the reply's
 * callbacks left in c (curl_rc, http_status, grpc_ct, have_status, ...):
 * sets c->status, c->message, c->transport, c->have_status and
 * c->have_message.
 */
void cbb_grpc_classify(const cbb_grpc_t *g, cbb_rpc_t *c);

#endif

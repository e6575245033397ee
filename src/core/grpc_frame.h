/*
 * grpc_frame.h - gRPC's framing on HTTP/2, without the transport: the
 * 5-byte length prefix of a request, the reply's prefix and body as
 * libcurl hands them over, the status and message from the trailers,
 * and the grpc-timeout header.  grpc_request.c sets them as libcurl's
 * callbacks; they never block and never call into libcurl.
 *
 * A reply is refused (too_big) before any allocation when its prefix
 * announces more than max_reply bytes; a compressed frame or a second
 * message marks it bad_frame.  Internal to core.
 */
#ifndef CBB_GRPC_FRAME_H
#define CBB_GRPC_FRAME_H

#include <stddef.h>

#include "grpc.h"

/* c->framed = prefix + c->req; -1 on out of memory. */
int cbb_grpc_frame(cbb_rpc_t *c);

/* libcurl CURLOPT_HEADERFUNCTION: status line, headers and trailers. */
size_t cbb_grpc_on_header(char *data, size_t size, size_t n, void *ud);

/* libcurl CURLOPT_WRITEFUNCTION: one length-prefixed reply message. */
size_t cbb_grpc_on_body(char *data, size_t size, size_t n, void *ud);

/* "grpc-timeout: 600m": the shortest encoding with at most 8 digits. */
void cbb_grpc_timeout_header(char *buf, size_t size, unsigned ms);

#endif

/*
 * conduit_int.h - what conduit.c (the RPCs) takes from conduit_reply.c
 * (their replies decoded); nothing else includes it.
 */
#ifndef CBB_CONDUIT_INT_H
#define CBB_CONDUIT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "conduit.h"
#include "grpc.h"

/* Decode a MultiTransferDetails reply (Query) into `out`. */
int cbb_conduit_decode_multi(const cbb_rpc_t *c, cbb_transfers_t *out,
			     cbb_err_t *err);

/*
 * The transfer id of a StartTransfer reply into id (size bytes): false
 * when the reply does not decode or its id is not one Conduit makes.
 */
bool cbb_conduit_reply_id(const cbb_rpc_t *c, char *id, size_t size);

#endif

/*
 * netreq.h - the switch half's request, taken from the job's --network.
 *
 * --network is a comma-separated list of segments; conduit_bb reads the
 * one that starts with "<prefix>:" (SwitchPrefix, default "conduit") and
 * leaves the others to whoever owns them:
 *
 *   --network=conduit:pool=a100+gpus=2+vram=8G
 *
 * Keys (allow-listed): pool=NAME, gpus=N (1-64), vram=SIZE (M, G or T;
 * a per-GPU slice).  Bare words are the test directives of the seed
 * harness (skip, defer, start_crash, ...), acted on only when the site
 * sets AllowTestDirectives=yes.  Pure C: no Lua types.
 */
#ifndef CBB_NETREQ_H
#define CBB_NETREQ_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define CBB_POOL_MAX 64

/* Test directives, as bits. */
enum {
	CBB_TD_SKIP = 1 << 0,
	CBB_TD_DEFER = 1 << 1,
	CBB_TD_START_CRASH = 1 << 2,
	CBB_TD_COMPLETE_AGAIN = 1 << 3,
	CBB_TD_COMPLETE_CRASH = 1 << 4,
	CBB_TD_PREINIT_WARN = 1 << 5,
	CBB_TD_PREINIT_FAIL = 1 << 6,
	CBB_TD_PREINIT_CRASH = 1 << 7,
	CBB_TD_INIT_WARN = 1 << 8,
	CBB_TD_INIT_FAIL = 1 << 9,
	CBB_TD_INIT_CRASH = 1 << 10,
	CBB_TD_NOENV = 1 << 11,
	CBB_TD_POSTFINI_WARN = 1 << 12,
	CBB_TD_POSTFINI_DRAIN = 1 << 13,
	CBB_TD_POSTFINI_CRASH = 1 << 14,
};

typedef struct {
	bool present;             /* a segment with our prefix was found */
	char pool[CBB_POOL_MAX + 1];
	uint32_t gpus;            /* 0: not asked */
	uint64_t vram_mib;        /* 0: whole GPUs */
	uint32_t directives;      /* CBB_TD_* seen */
} cbb_netreq_t;

/*
 * Parse `network` (may be NULL).  A missing segment is not an error
 * (present=false).  Returns 0 or -1 with a one-line message.
 */
int cbb_netreq_parse(const char *network, const char *prefix,
		     cbb_netreq_t *req, cbb_err_t *err);

/* "skip+noenv" for a set of directive bits (buf is always terminated). */
void cbb_netreq_directives(uint32_t bits, char *buf, size_t size);

#endif

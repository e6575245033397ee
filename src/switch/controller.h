/*
 * controller.h - the session controller's REST API (docs/controller-api.md)
 * over HTTPS with mutual TLS: reserve (idempotent PUT) and release
 * (DELETE, where "gone" counts as released).  One request at a time,
 * each with a hard deadline (SwitchTimeout).
 */
#ifndef CBB_CONTROLLER_H
#define CBB_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "netreq.h"

typedef struct {
	char session_id[128];
	char pool[65];
	uint32_t gpus;
	uint64_t vram_mib;
	char endpoint[256];
	char token[1025];       /* secret: never logged */
	unsigned vlans[16];
	size_t n_vlans;
	char env[1024];         /* "NAME=value\n"..., names checked */
} cbb_session_t;

typedef enum {
	CBB_CTL_OK = 0,
	CBB_CTL_GONE,         /* release: there was nothing to release */
	CBB_CTL_NO_CAPACITY,  /* reserve: requeue the job */
	CBB_CTL_REFUSED,      /* reserve: a request it will never serve */
	CBB_CTL_TRANSIENT,    /* unreachable, timeout, 5xx */
} cbb_ctl_rc_t;

typedef struct {
	const char *cluster;
	uint32_t job_id;
	const char *user;
	uint32_t uid;
	const char *nodes;
	uint32_t num_nodes;
	const char *partition;
	const cbb_netreq_t *req;
} cbb_ctl_job_t;

/* Wipe a session (its token) where it lies; see cbb_wipe. */
void cbb_session_wipe(cbb_session_t *s);

/*
 * Reserve a session.  The answer's token is wiped wherever this code or
 * jansson held it; *out holds it until the caller's cbb_session_wipe.
 */
cbb_ctl_rc_t cbb_ctl_reserve(const cbb_config_t *cfg, const cbb_ctl_job_t *job,
			     cbb_session_t *out, cbb_err_t *err);
cbb_ctl_rc_t cbb_ctl_release(const cbb_config_t *cfg, const char *cluster,
			     uint32_t job_id, cbb_err_t *err);

#endif

/*
 * grpc.c - a hook's connection to the Conduit server (grpc.h): opening
 * it (the URL, ServerName's resolve entry, the libcurl multi handle that
 * multiplexes every call on one HTTP/2 connection, TLS resumption's
 * binding), closing it, and its one time budget.  Running calls on it is
 * grpc_run.c; one call's request grpc_request.c; what a finished call's
 * outcome means grpc_status.c; the wire's framing grpc_frame.c.
 */
#include "grpc.h"
#include "curl_dl.h"
#include "grpc_int.h"
#include "tls.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t cbb_grpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned cbb_grpc_left_ms(const cbb_grpc_t *g)
{
	uint64_t now = cbb_grpc_now_ms();

	return now >= g->end_ms ? 0 : (unsigned)(g->end_ms - now);
}

unsigned cbb_grpc_spent_ms(const cbb_grpc_t *g)
{
	return (unsigned)(cbb_grpc_now_ms() - g->t0_ms);
}

int cbb_grpc_open(cbb_grpc_t *g, const cbb_config_t *cfg, unsigned budget_ms,
		  cbb_err_t *err)
{
	const char *host = cfg->server_host;
	bool v6;

	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
	g->budget_ms = budget_ms ? budget_ms : cfg->request_timeout_ms;
	g->t0_ms = cbb_grpc_now_ms();
	g->end_ms = g->t0_ms + g->budget_ms;
	if (!host)
		return cbb_err(err, "conduit: ConduitServer is not set in "
			       "conduit_bb.conf");
	if (cbb_curl_load(err) < 0)
		return -1;
	if (cfg->tls_resume) {
		cbb_tls_bind_t b = { cfg->server_name, host, cfg->server_port,
				     cfg->ca_cert, cfg->client_cert,
				     cfg->client_key, cbb_conf_state_dir(cfg) };

		cbb_tls_resume_init(&g->resume, &b);
	}
	/*
	 * The budget is the server's (connect, TLS, every RPC and retry),
	 * as it was when linking loaded libcurl before any hook ran: it
	 * starts once libcurl is loaded (the first open of a process) and
	 * the session file is read.
	 */
	g->t0_ms = cbb_grpc_now_ms();
	g->end_ms = g->t0_ms + g->budget_ms;
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

int cbb_grpc_open_lazy(cbb_grpc_t *g, const cbb_config_t *cfg,
		       unsigned budget_ms, cbb_err_t *err)
{
	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
	g->budget_ms = budget_ms ? budget_ms : cfg->request_timeout_ms;
	g->t0_ms = cbb_grpc_now_ms();
	g->end_ms = g->t0_ms + g->budget_ms;
	if (!cfg->server_host)
		return cbb_err(err, "conduit: ConduitServer is not set in "
			       "conduit_bb.conf");
	g->lazy = true;
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

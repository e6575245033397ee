/*
 * grpc_run.c - running calls on a connection (grpc.h): all of them at
 * once on the multi handle, each within what is left of the budget (with
 * a backstop should libcurl's own timeout not fire), each finished call
 * classified by grpc_status.c, and one retry on a fresh connection of
 * the idempotent calls that failed in transport.
 */
#include "curl_dl.h"
#include "grpc_int.h"

#include <stdio.h>
#include <stdlib.h>

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
		if (cbb_grpc_request_setup(g, c, tmo, fresh) < 0 ||
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
			cbb_grpc_classify(g, c);
			added--;
		}
		now = cbb_grpc_now_ms();
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
			cbb_grpc_classify(g, c);
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
	if (!g->multi) {
		/* opened lazily (cbb_grpc_open_lazy): now, with what is left
		 * of the hook's budget */
		unsigned left = cbb_grpc_left_ms(g), budget = g->budget_ms;
		uint64_t t0 = g->t0_ms, end = g->end_ms;
		cbb_err_t err;
		int rc = -1;

		cbb_err_clear(&err);
		if (g->lazy && g->cfg) {
			rc = cbb_grpc_open(g, g->cfg, left ? left : 1, &err);
			/* the hook's budget, from the hook's start, as when
			 * it was opened at once (its messages name it) */
			g->budget_ms = budget;
			g->t0_ms = t0;
			g->end_ms = end;
		}
		if (rc < 0) {
			/* (a problem of ours, libcurl that will not load:
			 * refused, as a TLS setup of ours that fails is,
			 * never an outage to wait out) */
			for (i = 0; i < n; i++) {
				cbb_rpc_reset(calls[i]);
				calls[i]->sent = true;
				calls[i]->transport = false;
				calls[i]->status = CBB_GRPC_FAILED_PRECONDITION;
				snprintf(calls[i]->message,
					 sizeof(calls[i]->message), "%s",
					 err.msg[0] ? err.msg :
					 "conduit: no connection opened");
			}
			return n;
		}
	}
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

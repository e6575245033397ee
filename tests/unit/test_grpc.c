/*
 * test_grpc.c - one time budget per connection, against servers that
 * never answer: one that accepts TCP and never reads, one that reads
 * what it is sent (the TLS hello, the request) and never answers.  The
 * whole call, retries included, ends within the budget, and the message
 * gives the real elapsed time.  And no proxy from the environment: the
 * Conduit client and the switch controller client go straight to their
 * server whatever https_proxy or ALL_PROXY say.
 */
#include "cmocka_all.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conduit.h"
#include "controller.h"

/* -Wl,--wrap=calloc (tests.mk): the module's callocs fail while set. */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static volatile int calloc_fails;

void *__wrap_calloc(size_t n, size_t size)
{
	return calloc_fails ? NULL : __real_calloc(n, size);
}

typedef struct {
	int lfd;
	int port;
	int reads; /* read what arrives (1) or never read (0) */
	volatile int stop;
} silent_t;

static void *serve(void *arg)
{
	silent_t *s = arg;
	int fds[16], n = 0, i;

	while (!s->stop && n < 16) {
		struct timeval tv = { 0, 100000 };
		fd_set rd;

		FD_ZERO(&rd);
		FD_SET(s->lfd, &rd);
		for (i = 0; i < n; i++)
			if (fds[i] >= 0)
				FD_SET(fds[i], &rd);
		if (select(FD_SETSIZE, &rd, NULL, NULL, &tv) <= 0)
			continue;
		if (FD_ISSET(s->lfd, &rd))
			fds[n++] = accept(s->lfd, NULL, NULL);
		for (i = 0; s->reads && i < n; i++) {
			char buf[4096];

			if (fds[i] >= 0 && FD_ISSET(fds[i], &rd) &&
			    read(fds[i], buf, sizeof(buf)) <= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return NULL;
}

static int listen_any(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* One Query against a silent server with a 1000 ms budget.  Every result is
 * taken first and asserted after the server thread is joined, so a failed
 * assertion never leaves that thread reading a dead stack frame.  The upper
 * bound is loose on purpose (a loaded CI machine may not run us for a
 * second); what must hold exactly is that the call does not end before the
 * budget and that the error reports the time it really took. */
static void query_silent(int reads)
{
	silent_t s = { 0, 0, reads, 0 };
	pthread_t th;
	cbb_config_t cfg;
	cbb_grpc_t g;
	cbb_transfers_t t;
	cbb_err_t err, err2;
	cbb_answer_t answer = CBB_ANSWER_OK;
	int rc, rc2 = 0;
	long t0, t_open, took = 0, took2 = 0, whole = 0;
	const char *after;
	long said;

	s.lfd = listen_any(&s.port);
	assert_int_equal(pthread_create(&th, NULL, serve, &s), 0);
	cbb_config_defaults(&cfg);
	cfg.server_host = strdup("127.0.0.1");
	cfg.server_port = (unsigned)s.port;
	cfg.request_timeout_ms = 60000; /* the budget below wins */
	cbb_err_clear(&err);
	cbb_err_clear(&err2);
	t_open = now_ms(); /* the budget runs from here */
	rc = cbb_grpc_open(&g, &cfg, 1000, &err);
	if (rc == 0) {
		t0 = now_ms();
		answer = cbb_conduit_query(&g, "1000", "^x", &t, &err);
		rc = answer == CBB_ANSWER_OK ? 0 : -1;
		took = now_ms() - t0;
		whole = now_ms() - t_open;
		/* nothing left: a later call is not even sent */
		t0 = now_ms();
		rc2 = cbb_conduit_query(&g, "1000", "^x", &t, &err2) ==
		      CBB_ANSWER_OK ? 0 : -1;
		took2 = now_ms() - t0;
		cbb_grpc_close(&g);
	}
	s.stop = 1;
	pthread_join(th, NULL);
	close(s.lfd);
	cbb_config_free(&cfg);

	assert_int_equal(rc, -1);
	assert_int_equal(answer, CBB_ANSWER_RETRY); /* not a refusal */
	/* the whole call, retry included, ends with the budget */
	assert_true(took >= 950);
	assert_true(took < 5000);
	assert_non_null(strstr(err.msg, "conduit: Query timed out after "));
	assert_non_null(strstr(err.msg, " ms (budget 1000 ms)"));
	after = strstr(err.msg, "after ");
	assert_non_null(after);
	said = atol(after + 6);
	/* the real elapsed time, not the budget echoed back */
	assert_true(said >= 950);
	assert_true(said <= whole);
	assert_int_equal(rc2, -1);
	assert_true(took2 < 1000);
	assert_non_null(strstr(err2.msg, "not sent: the 1000 ms budget was "
			       "spent after"));
}

static void test_silent_tcp_server(void **state)
{
	(void)state;
	query_silent(0);
}

static void test_server_that_reads_and_stalls(void **state)
{
	(void)state;
	query_silent(1);
}

/* A refused connection fails fast and is retried once, within budget. */
static void test_refused_retries_once(void **state)
{
	cbb_config_t cfg;
	cbb_grpc_t g;
	cbb_transfers_t t;
	cbb_err_t err;
	int port, fd = listen_any(&port);

	(void)state;
	close(fd); /* nothing listens there now */
	cbb_config_defaults(&cfg);
	cfg.server_host = strdup("127.0.0.1");
	cfg.server_port = (unsigned)port;
	cbb_err_clear(&err);
	assert_int_equal(cbb_grpc_open(&g, &cfg, 2000, &err), 0);
	/* a connection refused is an outage: ask again, not a refusal */
	assert_int_equal(cbb_conduit_query(&g, "1000", "^x", &t, &err),
			 CBB_ANSWER_RETRY);
	assert_int_equal(g.calls, 2);
	assert_non_null(strstr(err.msg, "refused"));
	cbb_grpc_close(&g);
	cbb_config_free(&cfg);
}

/*
 * A server that takes each connection, reads what comes first and hangs
 * up: it counts the connections and keeps the first byte of each
 * (0x16 for a TLS handshake; a proxy client would send "CONNECT ..." or a
 * SOCKS greeting).  Stops when asked, or after 16 connections.
 */
typedef struct {
	int lfd, port;
	volatile int stop;
	int conns;
	int first[16]; /* each connection's first byte, -1 none */
} hangup_t;

static void *hang_up(void *arg)
{
	hangup_t *h = arg;

	while (!h->stop && h->conns < 16) {
		struct pollfd p = { h->lfd, POLLIN, 0 };
		unsigned char buf[4096];
		ssize_t n;
		int fd;

		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept(h->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		h->first[h->conns++] = n > 0 ? buf[0] : -1;
		close(fd);
	}
	return NULL;
}

/* Connections waiting on a listening socket nobody accepts on: a client
 * that reached it is in its queue (the kernel completes the handshake). */
static int queued(int lfd)
{
	struct pollfd p = { lfd, POLLIN, 0 };

	return poll(&p, 1, 0);
}

static void test_no_proxy_from_environment(void **state)
{
	static const char *const vars[][2] = {
		{ "https_proxy", "http" },
		{ "HTTPS_PROXY", "http" },
		{ "ALL_PROXY", "http" },
		{ "all_proxy", "socks5h" },
		{ "ALL_PROXY", "socks5" },
	};
	size_t v;
	int pport, pfd = listen_any(&pport);

	(void)state;
	/* a no_proxy of the caller's must not be what passes the test */
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	for (v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
		hangup_t h;
		pthread_t th;
		cbb_config_t cfg;
		cbb_grpc_t g;
		cbb_transfers_t t;
		cbb_err_t err, cerr;
		char val[64], url[64];
		int rc = 0, crc, grpc_conns, ctl_conns, i;
		int grpc_queued, ctl_queued;

		memset(&h, 0, sizeof(h));
		h.lfd = listen_any(&h.port);
		snprintf(val, sizeof(val), "%s://127.0.0.1:%d", vars[v][1], pport);
		setenv(vars[v][0], val, 1);
		assert_int_equal(pthread_create(&th, NULL, hang_up, &h), 0);
		cbb_config_defaults(&cfg);
		cfg.server_host = strdup("127.0.0.1");
		cfg.server_port = (unsigned)h.port;
		snprintf(url, sizeof(url), "https://127.0.0.1:%d", h.port);
		cfg.switch_url = strdup(url);
		cfg.switch_timeout_ms = 10000;
		cbb_err_clear(&err);
		cbb_err_clear(&cerr);
		/* the server hangs up on the hello: both fail at once, never
		 * waiting for a budget, when they do not go through the proxy */
		if (cbb_grpc_open(&g, &cfg, 10000, &err) == 0) {
			rc = cbb_conduit_query(&g, "1000", "^x", &t, &err) ==
			     CBB_ANSWER_OK ? 0 : -1;
			cbb_grpc_close(&g);
		}
		grpc_conns = h.conns;
		grpc_queued = queued(pfd);
		crc = cbb_ctl_release(&cfg, "hpc", 7, &cerr);
		ctl_queued = queued(pfd);
		h.stop = 1;
		pthread_join(th, NULL);
		ctl_conns = h.conns - grpc_conns;
		close(h.lfd);
		unsetenv(vars[v][0]);
		cbb_config_free(&cfg);
		if (grpc_queued || ctl_queued || !grpc_conns || !ctl_conns)
			fprintf(stderr, "%s=%s: proxy %d %d, server %d %d: %s / %s\n",
				vars[v][0], val, grpc_queued, ctl_queued,
				grpc_conns, ctl_conns, err.msg, cerr.msg);
		/* nothing reached the proxy, both reached the server with a
		 * TLS hello */
		assert_int_equal(grpc_queued, 0);
		assert_int_equal(ctl_queued, 0);
		assert_true(grpc_conns >= 1);
		assert_true(ctl_conns >= 1);
		for (i = 0; i < h.conns; i++)
			assert_int_equal(h.first[i], 0x16);
		assert_int_equal(rc, -1);
		assert_int_equal(crc, CBB_CTL_TRANSIENT);
	}
	close(pfd);
}

/*
 * The answer table (conduit.h), cell by cell: every status the server may
 * send, for each RPC, and the answers that never came from the server.
 * Expected meanings as docs/admin.md states them.
 */
static cbb_rpc_t server_said(int status, const char *msg)
{
	cbb_rpc_t c;

	memset(&c, 0, sizeof(c));
	c.sent = true;
	c.have_status = true;
	c.status = status;
	c.have_message = msg[0] != '\0';
	snprintf(c.message, sizeof(c.message), "conduit: server said: %s",
		 msg[0] ? msg : "(no message)");
	return c;
}

static void test_answer_table(void **state)
{
	/* for StartTransfer: R refused, T try again, M may have happened */
	static const char start[] = "-MRRMRRRTRTRRMMMR";
	static const char repeat[] = "-TRRTRRRTRTRRTTTR";
	cbb_rpc_kind_t kinds[] = { CBB_RPC_VALIDATE, CBB_RPC_QUERY, CBB_RPC_STOP,
				   CBB_RPC_VERSION };
	int st;
	size_t k;
	cbb_rpc_t c;

	(void)state;
	for (st = 1; st < CBB_GRPC_NCODES; st++) {
		cbb_answer_t want = start[st] == 'R' ? CBB_ANSWER_REFUSED :
				    start[st] == 'T' ? CBB_ANSWER_RETRY :
						       CBB_ANSWER_MAYBE;

		/* a Conduit application error carries a message */
		c = server_said(st, "some words");
		assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), want);
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			want = repeat[st] == 'R' ? CBB_ANSWER_REFUSED :
							CBB_ANSWER_RETRY;
			assert_int_equal(cbb_conduit_answer(kinds[k], &c), want);
		}
	}
	c = server_said(CBB_GRPC_OK, "");
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_OK);
	/* UNKNOWN is not always one of Conduit's errors */
	c = server_said(CBB_GRPC_UNKNOWN, "");
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_MAYBE);
	assert_int_equal(cbb_conduit_answer(CBB_RPC_QUERY, &c), CBB_ANSWER_RETRY);
	c = server_said(CBB_GRPC_UNKNOWN, "server shutting down");
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_RETRY);
	c = server_said(CBB_GRPC_UNKNOWN, "Exception calling application: x");
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_MAYBE);
	/* the real server's own stores failing: an outage, asked again */
	{
		static const char *const outage[] = {
			"failed to get user transfers from rqlite: Post "
			"\"http://127.0.0.1:4001/db/query\": dial tcp "
			"127.0.0.1:4001: connect: connection refused",
			"failed to get transfers from rqlite: x",
			"error getting user from request: LDAP Result Code 200 "
			"\"Network Error\": dial tcp 10.0.0.1:636: i/o timeout",
			"etcdserver: request timed out",
		};
		static const char *const verdict[] = {
			"error getting user from request: conduit-service provided "
			"a uid 45678 in request, but couldn't find user: user: "
			"unknown userid 45678",
			"no user provided in request",
			"request contains too many sources. byte limit: 4000, "
			"received: 5000. Please use a directory instead",
		};

		for (k = 0; k < sizeof(outage) / sizeof(outage[0]); k++) {
			c = server_said(CBB_GRPC_UNKNOWN, outage[k]);
			assert_int_equal(cbb_conduit_answer(CBB_RPC_QUERY, &c),
					 CBB_ANSWER_RETRY);
			assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c),
					 CBB_ANSWER_RETRY);
		}
		for (k = 0; k < sizeof(verdict) / sizeof(verdict[0]); k++) {
			c = server_said(CBB_GRPC_UNKNOWN, verdict[k]);
			assert_int_equal(cbb_conduit_answer(CBB_RPC_QUERY, &c),
					 CBB_ANSWER_REFUSED);
			assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c),
					 CBB_ANSWER_REFUSED);
		}
	}
	/* never sent: nothing happened */
	memset(&c, 0, sizeof(c));
	c.status = CBB_GRPC_DEADLINE_EXCEEDED;
	c.transport = true;
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_RETRY);
	/* sent, no answer from the server: it may have happened */
	c.sent = true;
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_MAYBE);
	assert_int_equal(cbb_conduit_answer(CBB_RPC_STOP, &c), CBB_ANSWER_RETRY);
	/* the server said OK but the reply broke (too big, truncated) */
	c.transport = false;
	c.status = CBB_GRPC_INTERNAL;
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_MAYBE);
	/* our own TLS configuration: final */
	c.status = CBB_GRPC_FAILED_PRECONDITION;
	assert_int_equal(cbb_conduit_answer(CBB_RPC_START, &c), CBB_ANSWER_REFUSED);
	assert_int_equal(cbb_conduit_answer(CBB_RPC_QUERY, &c), CBB_ANSWER_REFUSED);
	assert_string_equal(cbb_answer_name(CBB_ANSWER_MAYBE), "maybe");
	assert_string_equal(cbb_grpc_code_name(CBB_GRPC_CANCELLED), "CANCELLED");
	assert_string_equal(cbb_grpc_code_name(99), "UNKNOWN");
}

/* Out of memory before anything is sent: every call says so, none ok. */
static void test_batches_out_of_memory(void **state)
{
	cbb_stop_t stop[2];
	cbb_start_t start[2];
	cbb_grpc_t g;
	size_t i;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(stop, 0, sizeof(stop));
	memset(start, 0, sizeof(start));
	for (i = 0; i < 2; i++) {
		stop[i].id = "6f1c0000-0000-0000-0000-000000000000";
		stop[i].ok = true;   /* whatever the caller left there */
		start[i].ok = true;
	}
	calloc_fails = 1;
	assert_int_equal(cbb_conduit_stop(&g, stop, 2), 2);
	assert_int_equal(cbb_conduit_start(&g, start, 2, false), 2);
	calloc_fails = 0;
	for (i = 0; i < 2; i++) {
		assert_false(stop[i].ok);
		assert_int_equal(stop[i].answer, CBB_ANSWER_RETRY);
		assert_string_equal(stop[i].message, "conduit: out of memory");
		assert_false(start[i].ok);
		/* nothing was sent: never an unsure start */
		assert_int_equal(start[i].answer, CBB_ANSWER_RETRY);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_table),
		cmocka_unit_test(test_batches_out_of_memory),
		cmocka_unit_test(test_silent_tcp_server),
		cmocka_unit_test(test_server_that_reads_and_stalls),
		cmocka_unit_test(test_refused_retries_once),
		cmocka_unit_test(test_no_proxy_from_environment),
	};
	return cmocka_run_group_tests_name("grpc", tests, NULL, NULL);
}

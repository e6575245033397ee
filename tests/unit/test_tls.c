/*
 * test_tls.c - StateDir/tls-session's temporary files: a hook killed
 * between writing `tls-session.<pid>.<n>` and renaming it leaves the
 * file behind, and the next saved session sweeps it.  The session comes
 * from a real TLS 1.3 handshake: an in-process OpenSSL server (its own
 * self-signed certificate, made here) hands the Conduit client tickets,
 * and the client saves one.  Planted around it: stale and fresh
 * temporary files, and things that only look like them (another uid's
 * file, a symbolic link, a FIFO, a directory, names a little off); only
 * the stale regular files of our own uid go, and nothing is followed or
 * opened.
 */
#include "cmocka_all.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "conduit.h"

/* ---- a TLS 1.3 server that hands out tickets and hangs up -------------- */

typedef struct {
	int lfd, port;
	SSL_CTX *ctx;
	volatile int stop;
	int handshakes;
} srv_t;

/*
 * Each connection: the handshake (OpenSSL sends its session tickets as
 * it completes), what the client sends, then close_notify, and what
 * comes after until the client hangs up, so no reset can overtake the
 * tickets on their way.
 */
static void *serve(void *arg)
{
	srv_t *s = arg;

	while (!s->stop) {
		struct pollfd p = { s->lfd, POLLIN, 0 };
		char buf[4096];
		SSL *ssl;
		int fd;

		if (poll(&p, 1, 100) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		ssl = SSL_new(s->ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_accept(ssl) == 1) {
			s->handshakes++;
			(void)SSL_read(ssl, buf, sizeof(buf));
			(void)SSL_shutdown(ssl);
			while (SSL_read(ssl, buf, sizeof(buf)) > 0)
				;
		}
		SSL_free(ssl);
		close(fd);
	}
	return NULL;
}

/* A self-signed certificate for 127.0.0.1, written to path as the CA. */
static SSL_CTX *server_ctx(const char *path)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	SSL_CTX *ctx;
	FILE *f;

	assert_non_null(k);
	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, k);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)"unit-tls", -1, -1, 0);
	X509_set_issuer_name(x, n);
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1");
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, k, EVP_sha256()) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_X509(f, x), 1);
	assert_int_equal(fclose(f), 0);
	ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(ctx);
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey(ctx, k), 1);
	X509_free(x);
	EVP_PKEY_free(k);
	return ctx;
}

static int listen_any(int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* ---- the planted files ------------------------------------------------- */

static char dir[64];

static void at(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s", dir, name);
}

static void plant_file(const char *name, time_t age)
{
	char path[256];
	struct timespec ts[2];
	int fd;

	at(path, sizeof(path), name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* the same times on a link, FIFO or directory itself */
static void age_entry(const char *name, time_t age)
{
	char path[256];
	struct timespec ts[2];

	at(path, sizeof(path), name);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static bool exists(const char *name)
{
	char path[256];
	struct stat st;

	at(path, sizeof(path), name);
	return lstat(path, &st) == 0;
}

static void test_saved_session_sweeps_stale_tmp_files(void **state)
{
	/* stale: an hour old; fresh: a second */
	static const char *const gone[] = {
		"tls-session.4242.1", "tls-session.1.17", "tls-session.999999.4294967295",
	};
	static const char *const kept_names[] = {
		"tls-session.x.1", "tls-session.12.3.bak", "tls-session.12.",
		"tls-session..3", "tls-session.12", "tls-session-12.3",
		"xtls-session.12.3",
	};
	srv_t s;
	pthread_t th;
	cbb_config_t cfg;
	cbb_grpc_t g;
	cbb_transfers_t t;
	cbb_err_t err;
	char ca[128], victim[128], path[256];
	bool root = geteuid() == 0;
	unsigned saves = 0;
	bool resumable = false;
	struct stat st;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/unit_tls.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0700), 0);
	snprintf(ca, sizeof(ca), "%s.ca.pem", dir);
	snprintf(victim, sizeof(victim), "%s.victim", dir);

	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		plant_file(gone[i], 3600);
	plant_file("tls-session.4243.1", 1);         /* fresh: being written */
	for (i = 0; i < sizeof(kept_names) / sizeof(kept_names[0]); i++)
		plant_file(kept_names[i], 3600);
	/* a stale link to a file of someone's, a FIFO, a directory */
	{
		int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "victim\n", 7), 7);
		close(fd);
	}
	at(path, sizeof(path), "tls-session.4244.1");
	assert_int_equal(symlink(victim, path), 0);
	age_entry("tls-session.4244.1", 3600);
	at(path, sizeof(path), "tls-session.4245.1");
	assert_int_equal(mkfifo(path, 0600), 0);
	age_entry("tls-session.4245.1", 3600);
	at(path, sizeof(path), "tls-session.4246.1");
	assert_int_equal(mkdir(path, 0700), 0);
	age_entry("tls-session.4246.1", 3600);
	if (root) { /* another uid's: not ours to remove */
		plant_file("tls-session.4247.1", 3600);
		at(path, sizeof(path), "tls-session.4247.1");
		assert_int_equal(lchown(path, 65534, 65534), 0);
	}

	memset(&s, 0, sizeof(s));
	s.ctx = server_ctx(ca);
	s.lfd = listen_any(&s.port);
	assert_int_equal(pthread_create(&th, NULL, serve, &s), 0);
	cbb_config_defaults(&cfg);
	cfg.server_host = strdup("127.0.0.1");
	cfg.server_port = (unsigned)s.port;
	cfg.ca_cert = strdup(ca);
	cfg.state_dir = strdup(dir);
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, &cfg, 20000, &err) == 0) {
		resumable = g.resume.on;
		/* no gRPC server: the call fails, after the handshake */
		(void)cbb_conduit_query(&g, "1000", "^x", &t, &err);
		saves = g.resume.saves;
		cbb_grpc_close(&g);
	}
	s.stop = 1;
	pthread_join(th, NULL);
	close(s.lfd);
	SSL_CTX_free(s.ctx);
	cbb_config_free(&cfg);

	if (!saves)
		fprintf(stderr, "no session saved (%d handshakes): %s\n",
			s.handshakes, err.msg);
	assert_true(resumable);
	assert_true(s.handshakes >= 1);
	/* a session was saved, in place */
	assert_true(saves >= 1);
	at(path, sizeof(path), "tls-session");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* the stale temporary files went */
	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		assert_false(exists(gone[i]));
	/* the rest stayed */
	assert_true(exists("tls-session.4243.1"));
	for (i = 0; i < sizeof(kept_names) / sizeof(kept_names[0]); i++)
		assert_true(exists(kept_names[i]));
	at(path, sizeof(path), "tls-session.4244.1");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(victim, &st), 0); /* never followed */
	assert_int_equal(st.st_size, 7);
	at(path, sizeof(path), "tls-session.4245.1");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	at(path, sizeof(path), "tls-session.4246.1");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	if (root)
		assert_true(exists("tls-session.4247.1"));
}

/* StateDir, the CA file and the victim, passed or failed */
static int clean_up(void **state)
{
	char cmd[256];

	(void)state;
	if (!dir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.ca.pem' '%s.victim'", dir,
		 dir, dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_saved_session_sweeps_stale_tmp_files,
					  clean_up),
	};
	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}

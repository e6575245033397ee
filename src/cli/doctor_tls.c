/*
 * doctor_tls.c - `conduit-bb doctor`: the CA, client certificate and key
 * (dates, names, modes, the pair), and a real Query to the server.
 */
#include "doctor_int.h"

/* ---- certificates and key ---------------------------------------------- */

static X509 *load_cert(const char *path, char *why, size_t size)
{
	X509 *x = NULL;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(why, size, "%s", strerror(errno));
		return NULL;
	}
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!x)
		snprintf(why, size, "no PEM certificate in it");
	ERR_clear_error();
	return x;
}

static void name_of(X509_NAME *n, char *buf, size_t size)
{
	int cn = X509_NAME_get_index_by_NID(n, NID_commonName, -1);
	ASN1_STRING *s;

	if (cn < 0 || !(s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, cn)))) {
		X509_NAME_oneline(n, buf, (int)size);
		return;
	}
	snprintf(buf, size, "CN=%.*s", ASN1_STRING_length(s),
		 (const char *)ASN1_STRING_get0_data(s));
}

static void date_of(const ASN1_TIME *t, char *buf, size_t size)
{
	struct tm tm;

	if (ASN1_TIME_to_tm(t, &tm) == 1)
		strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm);
	else
		snprintf(buf, size, "(bad date)");
}

/* Validity: FAIL expired or not yet valid, warn under 30 days. */
static void check_dates(doctor_t *d, const char *check, const char *path,
			X509 *x, const char *what_to_do)
{
	int days = 0, secs = 0;
	char when[64], sub[256], iss[256];

	name_of(X509_get_subject_name(x), sub, sizeof(sub));
	name_of(X509_get_issuer_name(x), iss, sizeof(iss));
	if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0) {
		date_of(X509_get0_notBefore(x), when, sizeof(when));
		doctor_say(&d->rep, RES_FAIL, check, "%s (%s) is not valid until %s; "
		    "check the clock, or %s", path, sub, when, what_to_do);
		return;
	}
	date_of(X509_get0_notAfter(x), when, sizeof(when));
	if (!ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(x))) {
		doctor_say(&d->rep, RES_FAIL, check, "%s: unreadable expiry date", path);
		return;
	}
	if (days < 0 || secs < 0 || (days == 0 && secs == 0))
		doctor_say(&d->rep, RES_FAIL, check, "%s (%s) expired on %s, %d day%s "
		    "ago; %s", path, sub, when, -days, days == -1 ? "" : "s",
		    what_to_do);
	else if (days < EXPIRY_WARN_DAYS)
		doctor_say(&d->rep, RES_WARN, check, "%s (%s) expires in %d day%s (%s); "
		    "%s before then", path, sub, days, days == 1 ? "" : "s",
		    when, what_to_do);
	else
		doctor_say(&d->rep, RES_OK, check, "%s: %s, issued by %s, expires in %d "
		    "days (%s)", path, sub, iss, days, when);
}

/* Readable by SlurmUser (tested as it), and for keys by nobody else. */
bool doctor_check_access(doctor_t *d, const char *check, const char *path,
			 bool secret)
{
	struct stat st;
	int rc;

	if (stat(path, &st) < 0) {
		doctor_say(&d->rep, RES_FAIL, check, "cannot read %s: %s", path,
		    strerror(errno));
		return false;
	}
	if (secret && (st.st_mode & 077)) {
		doctor_say(&d->rep, RES_FAIL, check, "%s is mode %04o: readable by %s; "
		    "chmod 0600 %s (and chown %s %s)", path,
		    (unsigned)(st.st_mode & 07777),
		    st.st_mode & 004 ? "every user" : "its group", path,
		    doctor_who(&d->su), path);
		return false;
	}
	rc = doctor_as_slurm_user(&d->su, AS_READ, path);
	if (rc > 0) {
		doctor_say(&d->rep, RES_FAIL, check, "%s cannot be read by SlurmUser %s "
		    "(%s); chown %s %s%s", path, doctor_who(&d->su), strerror(rc),
		    doctor_who(&d->su), path, secret ? " && chmod 0600 it" :
		    " or chmod 0644 it");
		return false;
	}
	if (secret && d->su.known && st.st_uid != d->su.uid) {
		doctor_say(&d->rep, RES_WARN, check, "%s belongs to uid %u, not SlurmUser "
		    "%s; chown %s %s", path, (unsigned)st.st_uid, d->su.name,
		    d->su.name, path);
		return true;
	}
	return true;
}

static int no_passphrase(char *buf, int size, int rw, void *u)
{
	return 0;
}

void doctor_check_tls(doctor_t *d)
{
	const cbb_config_t *c = &d->cfg;
	char why[256], sub[256];
	EVP_PKEY *key = NULL;
	FILE *f;

	if (!c->ca_cert || !c->client_cert || !c->client_key) {
		doctor_say(&d->rep, RES_FAIL, "certificates", "not set in %s:%s%s%s; "
		    "set them to Conduit's external CA and the conduit-service "
		    "certificate and key", d->conf_path,
		    c->ca_cert ? "" : " CACert",
		    c->client_cert ? "" : " ClientCert",
		    c->client_key ? "" : " ClientKey");
		return;
	}
	if (doctor_check_access(d, "CACert", c->ca_cert, false)) {
		d->ca = load_cert(c->ca_cert, why, sizeof(why));
		if (!d->ca)
			doctor_say(&d->rep, RES_FAIL, "CACert", "%s: %s", c->ca_cert, why);
		else if (X509_check_ca(d->ca) == 0)
			doctor_say(&d->rep, RES_FAIL, "CACert", "%s is not a CA certificate; "
			    "use Conduit's external CA (conduit-external-ca.pem)",
			    c->ca_cert);
		else
			check_dates(d, "CACert", c->ca_cert, d->ca, "get the "
				    "Conduit server's new external CA");
	}
	if (doctor_check_access(d, "ClientCert", c->client_cert, false)) {
		d->cert = load_cert(c->client_cert, why, sizeof(why));
		if (!d->cert) {
			doctor_say(&d->rep, RES_FAIL, "ClientCert", "%s: %s",
			    c->client_cert, why);
		} else {
			check_dates(d, "ClientCert", c->client_cert, d->cert,
				    "make a new certificate on the Conduit server "
				    "(conduit-server external-client-cert "
				    "--client-commonname conduit-service) and "
				    "install it");
			name_of(X509_get_subject_name(d->cert), sub, sizeof(sub));
			if (strcmp(sub, "CN=conduit-service"))
				doctor_say(&d->rep, RES_WARN, "ClientCert", "%s is %s, not "
				    "CN=conduit-service: Conduit lets only "
				    "conduit-service act for the jobs' users",
				    c->client_cert, sub);
		}
	}
	if (d->ca && d->cert) {
		X509_STORE *store = X509_STORE_new();
		X509_STORE_CTX *ctx = X509_STORE_CTX_new();
		int ok = 0;

		if (store && ctx && X509_STORE_load_file(store, c->ca_cert) == 1 &&
		    X509_STORE_CTX_init(ctx, store, d->cert, NULL) == 1) {
			/* expiry is its own line above */
			X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_NO_CHECK_TIME);
			ok = X509_verify_cert(ctx);
		}
		name_of(X509_get_issuer_name(d->cert), why, sizeof(why));
		if (ok == 1)
			doctor_say(&d->rep, RES_OK, "chain", "%s verifies against CACert "
			    "%s", c->client_cert, c->ca_cert);
		else
			doctor_say(&d->rep, RES_FAIL, "chain", "%s (issued by %s) does not "
			    "verify against CACert %s (%s): the server will refuse "
			    "it; use a certificate from the CA in CACert, or the "
			    "CA that issued it", c->client_cert, why, c->ca_cert,
			    ctx ? X509_verify_cert_error_string(
				    X509_STORE_CTX_get_error(ctx)) : "no memory");
		X509_STORE_CTX_free(ctx);
		X509_STORE_free(store);
		ERR_clear_error();
	}
	if (!doctor_check_access(d, "ClientKey", c->client_key, true))
		return;
	f = fopen(c->client_key, "r");
	if (f) {
		key = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL);
		fclose(f);
	}
	ERR_clear_error();
	if (!key) {
		doctor_say(&d->rep, RES_FAIL, "ClientKey", "%s holds no unencrypted PEM "
		    "private key; install the key the certificate was made "
		    "with (without a passphrase)", c->client_key);
		return;
	}
	if (d->cert && X509_check_private_key(d->cert, key) != 1)
		doctor_say(&d->rep, RES_FAIL, "ClientKey", "%s does not match ClientCert "
		    "%s: the TLS handshake cannot succeed; install the key the "
		    "certificate was made with", c->client_key, c->client_cert);
	else
		doctor_say(&d->rep, RES_OK, "ClientKey", "%s: mode 0600, readable by %s%s",
		    c->client_key, doctor_who(&d->su),
		    d->cert ? ", matches ClientCert" : "");
	ERR_clear_error();
	EVP_PKEY_free(key);
}

/* ---- the server ---------------------------------------------------------- */

static const char *server_hint(const char *msg)
{
	if (strstr(msg, "check ClientCert"))
		return "the server closed the connection after the handshake, "
		       "which is how a TLS 1.3 server refuses a client "
		       "certificate (expired, or not from its CA: see ClientCert "
		       "and chain above)";
	if (strstr(msg, "verify"))
		return "CACert must be the CA of the server's certificate, and "
		       "the certificate must name ConduitServer's host (else set "
		       "ServerName=)";
	if (strstr(msg, "bad certificate configuration"))
		return "fix ClientCert/ClientKey (above)";
	if (strstr(msg, "refused") || strstr(msg, "resolve") ||
	    strstr(msg, "timed out") || strstr(msg, "connect"))
		return "is the Conduit server running and reachable at "
		       "ConduitServer? (firewall, host, port)";
	return "see docs/admin.md, Troubleshooting";
}

void doctor_check_server(doctor_t *d)
{
	const cbb_config_t *c = &d->cfg;
	cbb_transfers_t t = { NULL, 0 };
	char sub[256] = "CN=?", version[128];
	cbb_grpc_t g;
	cbb_err_t err;
	cbb_answer_t answer;
	unsigned ms;

	if (!c->server_host) {
		doctor_say(&d->rep, RES_FAIL, "server", "ConduitServer is not set in %s; "
		    "set ConduitServer=host:port", d->conf_path);
		return;
	}
	if (d->cert)
		name_of(X509_get_subject_name(d->cert), sub, sizeof(sub));
	cbb_err_clear(&err);
	if (cbb_grpc_open(&g, c, 0, &err) < 0) {
		doctor_say(&d->rep, RES_FAIL, "server", "%s", err.msg);
		cbb_grpc_close(&g);
		return;
	}
	/* a comment no transfer has, for a user named (never an empty one,
	 * conduit.h) that needs no account on the server: Conduit takes a
	 * name as it is; the answer is empty */
	answer = cbb_conduit_query(&g, "conduit-bb-doctor",
				   "^CONDUIT-BB-DOCTOR:$", &t, &err);
	ms = cbb_grpc_spent_ms(&g);
	if (answer != CBB_ANSWER_OK) {
		doctor_say(&d->rep, RES_FAIL, "server", "%s:%u did not answer a Query "
		    "with ClientCert %s (%s): %s; %s", c->server_host,
		    c->server_port, sub, answer == CBB_ANSWER_REFUSED ?
		    "refused" : "no answer",
		    err.msg, server_hint(err.msg));
		cbb_grpc_close(&g);
		return;
	}
	cbb_transfers_free(&t);
	version[0] = '\0';
	cbb_err_clear(&err);
	if (cbb_conduit_version(&g, version, sizeof(version), &err) < 0)
		snprintf(version, sizeof(version), "version unknown");
	cbb_grpc_close(&g);
	doctor_say(&d->rep, RES_OK, "server", "%s:%u answered a Query in %u ms; it sees "
	    "ClientCert's %s (Conduit %s)", c->server_host, c->server_port, ms,
	    sub, version[0] ? version : "?");
}

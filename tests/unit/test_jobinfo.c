/* test_jobinfo.c - the switch jobinfo: canonical form, MAC, key file. */
#include "cmocka_all.h"

#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "controller.h"
#include "jobinfo.h"

static cbb_jobinfo_t sample(void)
{
	cbb_jobinfo_t ji;

	memset(&ji, 0, sizeof(ji));
	ji.v = 2;
	ji.job_id = 42;
	strcpy(ji.cluster, "hpc");
	strcpy(ji.user, "alice");
	ji.uid = 2001;
	strcpy(ji.session, "static-hpc-42");
	strcpy(ji.pool, "a100");
	ji.gpus = 2;
	ji.vram_mib = 8192;
	strcpy(ji.endpoint, "fabric:8080");
	ji.vlans[0] = 101;
	ji.vlans[1] = 102;
	ji.n_vlans = 2;
	return ji;
}

static void test_canonical(void **state)
{
	cbb_jobinfo_t ji = sample();
	cbb_buf_t b;

	(void)state;
	cbb_buf_init(&b, 0);
	assert_int_equal(cbb_jobinfo_canonical(&ji, &b), 0);
	assert_string_equal(b.data, "conduit-bb jobinfo\nv:1:2\njob_id:2:42\n"
			    "cluster:3:hpc\nuser:5:alice\nuid:4:2001\n"
			    "session:13:static-hpc-42\npool:4:a100\ngpus:1:2\n"
			    "vram_mib:4:8192\nendpoint:11:fabric:8080\n"
			    "vlans:7:101,102\ndirectives:0:\ntoken:0:\nenv:0:\n");
	cbb_buf_free(&b);
}

/* No value can pass for another field: lengths make the text exact. */
static void test_canonical_unambiguous(void **state)
{
	uint8_t k[CBB_MAC_KEY_LEN];
	cbb_jobinfo_t a = sample(), b = sample();

	(void)state;
	memset(k, 7, sizeof(k));
	/* v1 wrote "endpoint=E\nvlans=..." and "env=..." without escaping:
	 * a newline moved from one field into the next signed the same */
	strcpy(a.endpoint, "fabric:8080\nvlans:7:101,102");
	a.n_vlans = 0;
	strcpy(b.endpoint, "fabric:8080");
	assert_int_equal(cbb_jobinfo_sign(&a, k), 0);
	assert_int_equal(cbb_jobinfo_sign(&b, k), 0);
	assert_string_not_equal(a.mac, b.mac);
	a = sample();
	b = sample();
	strcpy(a.token, "t\nenv:0:");
	strcpy(b.token, "t");
	assert_int_equal(cbb_jobinfo_sign(&a, k), 0);
	assert_int_equal(cbb_jobinfo_sign(&b, k), 0);
	assert_string_not_equal(a.mac, b.mac);
}

static void test_sign_verify(void **state)
{
	uint8_t k1[CBB_MAC_KEY_LEN], k2[CBB_MAC_KEY_LEN];
	cbb_jobinfo_t ji = sample(), other;

	(void)state;
	memset(k1, 1, sizeof(k1));
	memset(k2, 2, sizeof(k2));
	assert_int_equal(cbb_jobinfo_sign(&ji, k1), 0);
	assert_int_equal(strlen(ji.mac), 64);
	assert_true(cbb_jobinfo_verify(&ji, k1));
	assert_false(cbb_jobinfo_verify(&ji, k2));
	other = ji;
	other.gpus = 3;                     /* any field change breaks it */
	assert_false(cbb_jobinfo_verify(&other, k1));
	other = ji;
	other.n_vlans = 1;
	assert_false(cbb_jobinfo_verify(&other, k1));
	other = ji;
	other.mac[0] = other.mac[0] == 'a' ? 'b' : 'a';
	assert_false(cbb_jobinfo_verify(&other, k1));
	other = ji;
	other.mac[10] = '\0';
	assert_false(cbb_jobinfo_verify(&other, k1));
}

static void test_key_file(void **state)
{
	char dir[] = "/tmp/cbb-key-XXXXXX", path[100];
	uint8_t k[CBB_MAC_KEY_LEN], k2[CBB_MAC_KEY_LEN];
	cbb_err_t err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k", dir);
	cbb_err_clear(&err);
	assert_int_equal(cbb_mac_key_load(NULL, k, &err), -1);
	assert_string_equal(err.msg, "SessionKeyFile is not set in conduit_bb.conf");
	f = fopen(path, "w");
	fputs("short", f);
	fclose(f);
	chmod(path, 0600);
	cbb_err_clear(&err);
	assert_int_equal(cbb_mac_key_load(path, k, &err), -1);
	assert_non_null(strstr(err.msg, "holds 5 bytes"));
	f = fopen(path, "w");
	fputs("0123456789abcdef0123456789abcdef!", f);
	fclose(f);
	chmod(path, 0640);
	cbb_err_clear(&err);
	assert_int_equal(cbb_mac_key_load(path, k, &err), -1);
	assert_non_null(strstr(err.msg, "must not be readable by group or others"));
	chmod(path, 0400);
	assert_int_equal(cbb_mac_key_load(path, k, &err), 0);
	assert_int_equal(cbb_mac_key_load(path, k2, &err), 0);
	assert_memory_equal(k, k2, sizeof(k)); /* derived deterministically */
	unlink(path);
	rmdir(dir);
}

static void test_seal(void **state)
{
	char dir[] = "/tmp/cbb-seal-XXXXXX", key1[100], key2[100];
	char sealed[2048], sealed2[2048], out[1100];
	cbb_err_t err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(key1, sizeof(key1), "%s/k1", dir);
	snprintf(key2, sizeof(key2), "%s/k2", dir);
	f = fopen(key1, "w");
	fputs("one-site-secret-one-site-secret-one-site-secret", f);
	fclose(f);
	f = fopen(key2, "w");
	fputs("two-site-secret-two-site-secret-two-site-secret", f);
	fclose(f);
	chmod(key1, 0600);
	chmod(key2, 0600);
	cbb_err_clear(&err);
	assert_int_equal(cbb_seal(key1, 42, "hpc", "sess-1", "s3cr3t-token",
				  sealed, sizeof(sealed), &err), 0);
	assert_null(strstr(sealed, "s3cr3t"));
	assert_int_equal(cbb_unseal(key1, 42, "hpc", "sess-1", sealed, out,
				    sizeof(out), &err), 0);
	assert_string_equal(out, "s3cr3t-token");
	/* a fresh nonce every time */
	assert_int_equal(cbb_seal(key1, 42, "hpc", "sess-1", "s3cr3t-token",
				  sealed2, sizeof(sealed2), &err), 0);
	assert_string_not_equal(sealed, sealed2);
	/* another job, cluster, session or key, or one changed byte: refused */
	assert_int_equal(cbb_unseal(key1, 43, "hpc", "sess-1", sealed, out,
				    sizeof(out), &err), -1);
	assert_non_null(strstr(err.msg, "does not open"));
	cbb_err_clear(&err);
	assert_int_equal(cbb_unseal(key1, 42, "other", "sess-1", sealed, out,
				    sizeof(out), &err), -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_unseal(key1, 42, "hpc", "sess-2", sealed, out,
				    sizeof(out), &err), -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_unseal(key2, 42, "hpc", "sess-1", sealed, out,
				    sizeof(out), &err), -1);
	cbb_err_clear(&err);
	sealed[10] = sealed[10] == 'A' ? 'B' : 'A';
	assert_int_equal(cbb_unseal(key1, 42, "hpc", "sess-1", sealed, out,
				    sizeof(out), &err), -1);
	cbb_err_clear(&err);
	assert_int_equal(cbb_unseal(key1, 42, "hpc", "sess-1", "not base64!",
				    out, sizeof(out), &err), -1);
	assert_string_equal(err.msg, "sealed token is malformed");
	unlink(key1);
	unlink(key2);
	rmdir(dir);
}

/*
 * The first reserve puts jansson's memory under a free that wipes (the
 * controller's answer holds the token); malloc stays malloc.
 */
static void test_json_memory_wiped(void **state)
{
	json_malloc_t m = NULL;
	json_free_t f = NULL;
	cbb_config_t cfg;
	cbb_netreq_t req;
	cbb_ctl_job_t j;
	cbb_session_t s;
	cbb_err_t err;
	json_t *o;

	(void)state;
	json_get_alloc_funcs(&m, &f);
	assert_true(m == malloc && f == free);
	o = json_string("tok-allocated-before-the-switch");
	cbb_config_defaults(&cfg); /* no SwitchControllerURL: fails at once */
	memset(&req, 0, sizeof(req));
	memset(&j, 0, sizeof(j));
	j.cluster = "hpc";
	j.job_id = 7;
	j.user = "alice";
	j.nodes = "n1";
	j.partition = "p";
	j.req = &req;
	cbb_err_clear(&err);
	assert_int_equal(cbb_ctl_reserve(&cfg, &j, &s, &err), CBB_CTL_TRANSIENT);
	json_get_alloc_funcs(&m, &f);
	assert_true(m == malloc);
	assert_true(f != free && f != NULL);
	json_decref(o); /* a block from before: freed by the wiping free */
	o = json_pack("{s:s}", "token", "tok-after");
	assert_non_null(o);
	json_decref(o);
	cbb_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_canonical_unambiguous),
		cmocka_unit_test(test_sign_verify),
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_seal),
		cmocka_unit_test(test_json_memory_wiped),
	};
	return cmocka_run_group_tests_name("jobinfo", tests, NULL, NULL);
}

/* test_config.c - conduit_bb.conf parsing, lookup and loading. */
#include "cmocka_all.h"

#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

static void parse_ok(const char *text, cbb_config_t *c)
{
	cbb_err_t err;

	cbb_err_clear(&err);
	cbb_config_defaults(c);
	if (cbb_config_parse(c, text, strlen(text), "t.conf", &err) < 0)
		fail_msg("<%s>: %s", text, err.msg);
}

static void test_defaults(void **state)
{
	cbb_config_t c;

	(void)state;
	parse_ok("", &c);
	assert_null(c.server_host);
	assert_int_equal(c.request_timeout_ms, 10000);
	assert_int_equal(c.submit_timeout_ms, 2000);
	assert_int_equal(c.submit_validation, CBB_VALIDATE_LOCAL);
	assert_string_equal(c.directive, "CONDUIT");
	assert_int_equal(c.max_directives, 100);
	assert_int_equal(c.max_source_bytes, 4000);
	assert_int_equal(c.allow[0][0].n, 0);
	assert_int_equal(c.down_grace_s, 300);
	assert_int_equal(c.out_down_grace_s, 3600);
	assert_int_equal(c.start_visible_grace_s, 60);
	assert_int_equal(c.max_reply_bytes, 16 << 20);
	assert_string_equal(cbb_conf_tls_groups(&c), "P-256:X25519:P-384");
	assert_true(c.tls_resume);
	/* controllers may set CONDUIT_* only, by default */
	assert_true(cbb_conf_env_name_allowed(&c, "CONDUIT_X"));
	assert_false(cbb_conf_env_name_allowed(&c, "LD_PRELOAD"));
	assert_false(cbb_conf_env_name_allowed(&c, "PATH"));
	assert_false(cbb_conf_env_name_allowed(&c, "SLURM_JOB_ID"));
	cbb_config_free(&c);
}

static void test_new_keys(void **state)
{
	cbb_config_t c;
	char buf[256];

	(void)state;
	parse_ok("StartVisibleGrace=5\nStageOutDownGrace=7200\n"
		 "MaxReplyBytes=65536\nSwitchEnvNames=NCCL_*, MY_VAR\n"
		 "Squeue=/opt/slurm/bin/squeue\n", &c);
	assert_int_equal(c.start_visible_grace_s, 5);
	assert_int_equal(c.out_down_grace_s, 7200);
	assert_int_equal(c.max_reply_bytes, 65536);
	assert_true(cbb_conf_env_name_allowed(&c, "NCCL_SOCKET_IFNAME"));
	assert_true(cbb_conf_env_name_allowed(&c, "MY_VAR"));
	assert_false(cbb_conf_env_name_allowed(&c, "MY_VAR2"));
	assert_false(cbb_conf_env_name_allowed(&c, "CONDUIT_X"));
	cbb_config_free(&c);
	/* exact names that only begin like SLURM_ are not Slurm's */
	parse_ok("SwitchEnvNames=S,SLURM,SLURMX_*\n", &c);
	assert_true(cbb_conf_env_name_allowed(&c, "S"));
	assert_true(cbb_conf_env_name_allowed(&c, "SLURM"));
	assert_true(cbb_conf_env_name_allowed(&c, "SLURMX_A"));
	assert_false(cbb_conf_env_name_allowed(&c, "SLURM_A"));
	cbb_config_free(&c);
	parse_ok("Squeue=/opt/slurm/bin/squeue\n", &c);
	assert_string_equal(cbb_conf_squeue(&c, buf, sizeof(buf)),
			    "/opt/slurm/bin/squeue");
	cbb_config_free(&c);
	/* older configurations name scontrol: squeue is found beside it */
	parse_ok("Scontrol=/opt/slurm/bin/scontrol\n", &c);
	assert_string_equal(cbb_conf_squeue(&c, buf, sizeof(buf)),
			    "/opt/slurm/bin/squeue");
	cbb_config_free(&c);
	parse_ok("", &c);
	assert_string_equal(cbb_conf_squeue(&c, buf, sizeof(buf)), "squeue");
	cbb_config_free(&c);
	parse_ok("TLSGroups=X25519:P-256\nTLSResume=no\n", &c);
	assert_string_equal(cbb_conf_tls_groups(&c), "X25519:P-256");
	assert_false(c.tls_resume);
	cbb_config_free(&c);
}

static void test_slurm_cluster_name(void **state)
{
	char dir[] = "/tmp/cbb-sc-XXXXXX", path[300], got[300], name[64];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/slurm.conf", dir);
	setenv("SLURM_CONF", path, 1);
	assert_int_equal(cbb_slurm_cluster_name(got, sizeof(got), name,
						sizeof(name)), -1);
	assert_string_equal(got, path);
	f = fopen(path, "w");
	fputs("# ClusterName=commented\nSlurmctldHost=x\n"
	      "  clustername = hpc-one  # ours\nNodeName=n1\n", f);
	fclose(f);
	assert_int_equal(cbb_slurm_cluster_name(got, sizeof(got), name,
						sizeof(name)), 0);
	assert_string_equal(name, "hpc-one");
	f = fopen(path, "w");
	fputs("ClusterNameX=no\nClusterName=\n", f);
	fclose(f);
	assert_int_equal(cbb_slurm_cluster_name(got, sizeof(got), name,
						sizeof(name)), -1);
	unsetenv("SLURM_CONF");
	unlink(path);
	rmdir(dir);
}

static void test_full(void **state)
{
	cbb_config_t c;

	(void)state;
	parse_ok("# conduit_bb.conf\n"
		 "conduitserver = conduit.example.com:23456   # the server\n"
		 "CACert=/etc/slurm/ca.pem\n"
		 "ClientCert=/etc/slurm/cert.pem\r\n"
		 "ClientKey=/etc/slurm/key.pem\n"
		 "ServerName=conduit-server.example.com\n"
		 "RequestTimeout=2.5\n"
		 "SUBMITTIMEOUT=500ms\n"
		 "SubmitValidation=Local\n"
		 "Directive=STAGE_1\n"
		 "MaxDirectives=7\n"
		 "MaxSourceBytes=100\n"
		 "StageInSources=/archive/, /project//x\n"
		 "StageInDestinations=/scratch\n"
		 "StageOutSources=/scratch\n"
		 "StageOutDestinations=/\n"
		 "StateDir=/var/tmp/cbb\n"
		 "ServerDownGrace=0\n"
		 "Scontrol=/opt/slurm/bin/scontrol\n", &c);
	assert_string_equal(c.server_host, "conduit.example.com");
	assert_int_equal(c.server_port, 23456);
	assert_string_equal(c.ca_cert, "/etc/slurm/ca.pem");
	assert_string_equal(c.client_cert, "/etc/slurm/cert.pem");
	assert_string_equal(c.client_key, "/etc/slurm/key.pem");
	assert_string_equal(c.server_name, "conduit-server.example.com");
	assert_int_equal(c.request_timeout_ms, 2500);
	assert_int_equal(c.submit_timeout_ms, 500);
	assert_string_equal(c.directive, "STAGE_1");
	assert_int_equal(c.max_directives, 7);
	assert_int_equal(c.max_source_bytes, 100);
	assert_int_equal(c.allow[0][0].n, 2);
	assert_string_equal(c.allow[0][0].v[0], "/archive");
	assert_string_equal(c.allow[0][0].v[1], "/project/x");
	assert_string_equal(c.allow[1][1].v[0], "/");
	assert_string_equal(cbb_conf_state_dir(&c), "/var/tmp/cbb");
	assert_int_equal(c.down_grace_s, 0);
	assert_string_equal(cbb_conf_scontrol(&c), "/opt/slurm/bin/scontrol");
	cbb_config_free(&c);
	parse_ok("SubmitValidation=remote\nScontrol=scontrol\n", &c);
	assert_int_equal(c.submit_validation, CBB_VALIDATE_REMOTE);
	assert_string_equal(cbb_conf_scontrol(&c), "scontrol");
	assert_string_equal(cbb_conf_state_dir(&c), "/var/spool/conduit_bb");
	cbb_config_free(&c);
	parse_ok("ConduitServer=[::1]:1\n", &c);
	assert_string_equal(c.server_host, "::1");
	assert_int_equal(c.server_port, 1);
	cbb_config_free(&c);
}

static const struct {
	const char *text, *msg;
} bad[] = {
	{ "Bogus=1", "t.conf line 1: unknown key 'Bogus' (see conduit_bb.conf.example)" },
	{ "\n\nConduitServer", "t.conf line 3: expected Key=Value, e.g. ConduitServer=conduit.example.com:23456" },
	{ "CACert=", "t.conf line 1: CACert has no value, e.g. CACert=/etc/slurm/conduit-external-ca.pem" },
	{ "CACert=etc/ca.pem", "t.conf line 1: CACert: 'etc/ca.pem' is not an absolute path; e.g. CACert=/etc/slurm/conduit-external-ca.pem" },
	{ "ConduitServer=conduit.example.com", "t.conf line 1: ConduitServer: 'conduit.example.com' is not host:port; e.g. ConduitServer=conduit.example.com:23456" },
	{ "ConduitServer=h:70000", "t.conf line 1: ConduitServer: 'h:70000' has no valid port (1-65535); e.g. ConduitServer=conduit.example.com:23456" },
	{ "ConduitServer=h/x:1", "t.conf line 1: ConduitServer: 'h/x' is not a host name or address; e.g. ConduitServer=conduit.example.com:23456" },
	{ "ServerName=a b", "t.conf line 1: ServerName: 'a b' is not a host name; e.g. ServerName=conduit-server.example.com" },
	{ "RequestTimeout=fast", "t.conf line 1: RequestTimeout: 'fast' is not a duration; e.g. RequestTimeout=10" },
	{ "RequestTimeout=0", "t.conf line 1: RequestTimeout: '0' is out of range (0.1 to 600 seconds); e.g. RequestTimeout=10" },
	{ "SubmitTimeout=1.5ms", "t.conf line 1: SubmitTimeout: '1.5ms' is not a duration; e.g. SubmitTimeout=2" },
	{ "SubmitValidation=maybe", "t.conf line 1: SubmitValidation: 'maybe' is neither local nor remote; e.g. SubmitValidation=local" },
	{ "Directive=CON DUIT", "t.conf line 1: Directive: 'CON DUIT' may hold only letters, digits and '_'; e.g. Directive=CONDUIT" },
	{ "MaxDirectives=0", "t.conf line 1: MaxDirectives: '0' is not a whole number from 1 to 1000; e.g. MaxDirectives=100" },
	{ "MaxDirectives=-5", "t.conf line 1: MaxDirectives: '-5' is not a whole number from 1 to 1000; e.g. MaxDirectives=100" },
	{ "MaxSourceBytes=4k", "t.conf line 1: MaxSourceBytes: '4k' is not a whole number from 1 to 1048576; e.g. MaxSourceBytes=4000" },
	{ "StageInSources=scratch", "t.conf line 1: StageInSources: 'scratch' is not an absolute directory; e.g. StageInSources=/archive,/project" },
	{ "StageInSources=/a,", "t.conf line 1: StageInSources: trailing ','; e.g. StageInSources=/archive,/project" },
	{ "Directive=A\ndirective=B", "t.conf line 2: Directive is already set on line 1" },
	{ "ServerDownGrace=1h", "t.conf line 1: ServerDownGrace: '1h' is not a whole number from 0 to 86400; e.g. ServerDownGrace=300" },
	{ "Scontrol=bin/scontrol", "t.conf line 1: Scontrol: 'bin/scontrol' must be an absolute path or a bare command name; e.g. Scontrol=/usr/bin/scontrol" },
	{ "StateDir=spool", "t.conf line 1: StateDir: 'spool' is not an absolute path; e.g. StateDir=/var/spool/conduit_bb" },
	{ "SwitchController=grpc", "t.conf line 1: SwitchController: 'grpc' is neither none nor http; e.g. SwitchController=none" },
	{ "SessionDelivery=mail", "t.conf line 1: SessionDelivery: 'mail' is neither env nor file; e.g. SessionDelivery=env" },
	{ "SessionDir=run/cbb", "t.conf line 1: SessionDir: 'run/cbb' is not an absolute path; e.g. SessionDir=/run/conduit_bb" },
	{ "StartVisibleGrace=0", "t.conf line 1: StartVisibleGrace: '0' is not a whole number from 1 to 86400; e.g. StartVisibleGrace=60" },
	{ "StageOutDownGrace=-1", "t.conf line 1: StageOutDownGrace: '-1' is not a whole number from 0 to 86400; e.g. StageOutDownGrace=3600" },
	{ "MaxReplyBytes=1000", "t.conf line 1: MaxReplyBytes: '1000' is not a whole number from 65536 to 1073741824; e.g. MaxReplyBytes=16777216" },
	{ "SwitchEnvNames=SLURM_*", "t.conf line 1: SwitchEnvNames: 'SLURM_*' would let a controller set Slurm's own variables; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEnvNames=LD PRELOAD", "t.conf line 1: SwitchEnvNames: 'LD PRELOAD' is not a variable name or NAME_PREFIX*; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEnvNames=SL*", "t.conf line 1: SwitchEnvNames: 'SL*' would let a controller set Slurm's own variables; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEnvNames=SLURM_JOB_ID", "t.conf line 1: SwitchEnvNames: 'SLURM_JOB_ID' would let a controller set Slurm's own variables; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEnvNames=A,,B", "t.conf line 1: SwitchEnvNames: '' is not a variable name or NAME_PREFIX*; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEnvNames=A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q,R,S,T,U,V,W,X,Y,Z,A1,B1,C1,D1,E1,F1,G1", "t.conf line 1: SwitchEnvNames: more than 32 names; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "StageInSources=/a,/b,/c,/d,/e,/f,/g,/h,/i,/j,/k,/l,/m,/n,/o,/p,/q,/r,/s,/t,/u,/v,/w,/x,/y,/z,/a1,/b1,/c1,/d1,/e1,/f1,/g1", "t.conf line 1: StageInSources: more than 32 prefixes; e.g. StageInSources=/archive,/project" },
	{ "SwitchEnvNames=A,", "t.conf line 1: SwitchEnvNames: trailing ','; e.g. SwitchEnvNames=CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "Squeue=bin/squeue", "t.conf line 1: Squeue: 'bin/squeue' must be an absolute path or a bare command name; e.g. Squeue=/usr/bin/squeue" },
	{ "TLSGroups=P-256::X25519", "t.conf line 1: TLSGroups: 'P-256::X25519' is not a list of TLS groups such as P-256:X25519; e.g. TLSGroups=P-256:X25519:P-384" },
	{ "TLSGroups=P-256 X25519", "t.conf line 1: TLSGroups: 'P-256 X25519' is not a list of TLS groups such as P-256:X25519; e.g. TLSGroups=P-256:X25519:P-384" },
	{ "TLSResume=maybe", "t.conf line 1: TLSResume: 'maybe' is neither yes nor no; e.g. TLSResume=yes" },
};

static void test_bad(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cbb_config_t c;
		cbb_err_t err;

		cbb_err_clear(&err);
		cbb_config_defaults(&c);
		if (cbb_config_parse(&c, bad[i].text, strlen(bad[i].text),
				     "t.conf", &err) == 0)
			fail_msg("<%s> was accepted", bad[i].text);
		if (strcmp(err.msg, bad[i].msg))
			fail_msg("<%s>:\n want %s\n got  %s", bad[i].text,
				 bad[i].msg, err.msg);
		cbb_config_free(&c);
	}
}

static void test_locate(void **state)
{
	char buf[256];

	(void)state;
	unsetenv("CONDUIT_BB_CONF");
	unsetenv("SLURM_CONF");
	assert_string_equal(cbb_config_locate(buf, sizeof(buf)),
			    "/etc/slurm/conduit_bb.conf");
	setenv("SLURM_CONF", "/opt/slurm/etc/slurm.conf", 1);
	assert_string_equal(cbb_config_locate(buf, sizeof(buf)),
			    "/opt/slurm/etc/conduit_bb.conf");
	setenv("CONDUIT_BB_CONF", "/x/y.conf", 1);
	assert_string_equal(cbb_config_locate(buf, sizeof(buf)), "/x/y.conf");
	unsetenv("CONDUIT_BB_CONF");
	unsetenv("SLURM_CONF");
}

static void test_load(void **state)
{
	char dir[] = "/tmp/cbb-conf-XXXXXX", path[300];
	cbb_config_t c;
	cbb_err_t err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	cbb_err_clear(&err);
	assert_int_equal(cbb_config_load(&c, path, &err), 0); /* defaults */
	assert_null(c.path);
	cbb_config_free(&c);

	snprintf(path, sizeof(path), "%s/conduit_bb.conf", dir);
	f = fopen(path, "w");
	fputs("MaxDirectives=3\n", f);
	fclose(f);
	setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
	setenv("CONDUIT_BB_CONF", path, 1);
	assert_int_equal(cbb_config_load(&c, NULL, &err), 0);
	assert_int_equal(c.max_directives, 3);
	assert_string_equal(c.path, path);
	cbb_config_free(&c);
	unsetenv("CONDUIT_BB_CONF");
	unsetenv("SLURM_CONF");

	assert_int_equal(cbb_config_load(&c, dir, &err), -1); /* a directory */
	assert_true(strstr(err.msg, "is not a regular file") != NULL);
	cbb_config_free(&c);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_new_keys),
		cmocka_unit_test(test_slurm_cluster_name),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_locate),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}

/* config.c - see config.h */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_values.h"
#include "path.h"
#include "readfile.h"

#define DEFAULT_REQUEST_TIMEOUT_MS 10000
#define DEFAULT_SUBMIT_TIMEOUT_MS 2000
#define DEFAULT_MAX_DIRECTIVES 100
#define DEFAULT_MAX_SOURCE_BYTES 4000
#define DEFAULT_DOWN_GRACE_S 300
#define DEFAULT_OUT_DOWN_GRACE_S 3600
#define DEFAULT_START_VISIBLE_GRACE_S 60
#define DEFAULT_POLL_SHARE_S 10
#define DEFAULT_MAX_REPLY_BYTES (16u << 20)

const char *cbb_conf_squeue(const cbb_config_t *c, char *buf, size_t size)
{
	const char *slash;

	if (c->squeue)
		return c->squeue;
	if (c->scontrol && (slash = strrchr(c->scontrol, '/'))) {
		snprintf(buf, size, "%.*s/squeue", (int)(slash - c->scontrol),
			 c->scontrol);
		return buf;
	}
	return "squeue";
}

bool cbb_conf_env_name_allowed(const cbb_config_t *c, const char *name)
{
	size_t i;

	if (!strncmp(name, "SLURM_", 6))
		return false;
	if (c->env_names.n == 0) /* the default: CONDUIT_* */
		return !strncmp(name, "CONDUIT_", 8);
	for (i = 0; i < c->env_names.n; i++) {
		const char *pat = c->env_names.v[i];
		size_t n = strlen(pat);

		if (pat[n - 1] == '*' ? !strncmp(name, pat, n - 1) :
					!strcmp(name, pat))
			return true;
	}
	return false;
}

/* A key, and how its value is read: by `set`, or, when `set` is NULL, as
 * a whole number within its range (below) into an unsigned field. */
typedef struct {
	const char *key;
	cbb_setter_fn set;
	size_t offset;
	const char *example;
} key_t_;

static const struct {
	const char *key;
	unsigned long lo, hi;
} ranges[] = {
	{ "MaxDirectives", 1, 1000 },
	{ "MaxSourceBytes", 1, 1 << 20 },
	{ "StartVisibleGrace", 1, 86400 },
	{ "PollShare", 0, 300 },
	{ "MaxReplyBytes", 65536, 1u << 30 },
};

static int set_in_range(const char *key, const char *val, void *field,
			cbb_err_t *err)
{
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (!strcmp(ranges[i].key, key))
			return cbb_set_uint(val, field, ranges[i].lo,
					    ranges[i].hi, err);
	return cbb_err(err, "%s has no range", key); /* a table mistake */
}

#define OFF(f) offsetof(cbb_config_t, f)
static const key_t_ keys[] = {
	{ "ConduitServer", cbb_set_server, 0, "conduit.example.com:23456" },
	{ "CACert", cbb_set_file, OFF(ca_cert), "/etc/slurm/conduit-external-ca.pem" },
	{ "ClientCert", cbb_set_file, OFF(client_cert), "/etc/slurm/conduit-cert.pem" },
	{ "ClientKey", cbb_set_file, OFF(client_key), "/etc/slurm/conduit-key.pem" },
	{ "ServerName", cbb_set_hostname, OFF(server_name), "conduit-server.example.com" },
	{ "RequestTimeout", cbb_set_duration, OFF(request_timeout_ms), "10" },
	{ "SubmitValidation", cbb_set_validation, 0, "local" },
	{ "SubmitTimeout", cbb_set_duration, OFF(submit_timeout_ms), "2" },
	{ "DataMover", cbb_set_mover, 0, "rsync" },
	{ "Directive", cbb_set_word, OFF(directive), "CONDUIT" },
	{ "MaxDirectives", NULL, OFF(max_directives), "100" },
	{ "MaxSourceBytes", NULL, OFF(max_source_bytes), "4000" },
	{ "StageInSources", cbb_set_prefixes, OFF(allow[0][0]), "/archive,/project" },
	{ "StageInDestinations", cbb_set_prefixes, OFF(allow[0][1]), "/scratch" },
	{ "StageOutSources", cbb_set_prefixes, OFF(allow[1][0]), "/scratch" },
	{ "StageOutDestinations", cbb_set_prefixes, OFF(allow[1][1]), "/archive,/project" },
	{ "StateDir", cbb_set_file, OFF(state_dir), CBB_STATE_DIR },
	{ "ServerDownGrace", cbb_set_grace, OFF(down_grace_s), "300" },
	{ "StageOutDownGrace", cbb_set_grace, OFF(out_down_grace_s), "3600" },
	{ "StartVisibleGrace", NULL, OFF(start_visible_grace_s), "60" },
	{ "PollShare", NULL, OFF(poll_share_s), "10" },
	{ "MaxReplyBytes", NULL, OFF(max_reply_bytes), "16777216" },
	{ "TLSGroups", cbb_set_tls_groups, OFF(tls_groups), CBB_TLS_GROUPS },
	{ "TLSResume", cbb_set_bool, OFF(tls_resume), "yes" },
	{ "Scontrol", cbb_set_program, OFF(scontrol), "/usr/bin/scontrol" },
	{ "Squeue", cbb_set_program, OFF(squeue), "/usr/bin/squeue" },
	{ "AdminComment", cbb_set_bool, OFF(admin_comment), "no" },
	{ "AuditLog", cbb_set_file, OFF(audit_log), "/var/log/slurm/conduit_bb-audit.log" },
	{ "SwitchPrefix", cbb_set_word, OFF(switch_prefix), "conduit" },
	{ "AllowTestDirectives", cbb_set_bool, OFF(allow_test_directives), "no" },
	{ "SwitchSpecialSteps", cbb_set_bool, OFF(special_steps), "no" },
	{ "SwitchBlockJobComplete", cbb_set_bool, OFF(block_job_complete), "no" },
	{ "SwitchController", cbb_set_controller, 0, "none" },
	{ "SwitchControllerURL", cbb_set_https_url, OFF(switch_url), "https://broker.example.org:8443" },
	{ "SwitchCACert", cbb_set_file, OFF(switch_ca), "/etc/slurm/broker-ca.pem" },
	{ "SwitchClientCert", cbb_set_file, OFF(switch_cert), "/etc/slurm/broker-client.pem" },
	{ "SwitchClientKey", cbb_set_file, OFF(switch_key), "/etc/slurm/broker-client.key" },
	{ "SwitchTimeout", cbb_set_duration, OFF(switch_timeout_ms), "5" },
	{ "SessionKeyFile", cbb_set_file, OFF(session_key_file), "/etc/slurm/conduit_bb.key" },
	{ "SessionDelivery", cbb_set_delivery, 0, "env" },
	{ "SessionDir", cbb_set_file, OFF(session_dir), CBB_SESSION_DIR },
	{ "SwitchEnvNames", cbb_set_env_names, OFF(env_names), "CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEndpoint", cbb_set_string, OFF(switch_endpoint), "fabric.example.org:8080" },
	{ "SwitchVlans", cbb_set_vlans, 0, "101,102" },
};
#undef OFF

void cbb_config_defaults(cbb_config_t *c)
{
	int s, k;

	memset(c, 0, sizeof(*c));
	c->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
	c->submit_timeout_ms = DEFAULT_SUBMIT_TIMEOUT_MS;
	c->submit_validation = CBB_VALIDATE_LOCAL;
	strcpy(c->directive, "CONDUIT");
	c->max_directives = DEFAULT_MAX_DIRECTIVES;
	c->max_source_bytes = DEFAULT_MAX_SOURCE_BYTES;
	c->down_grace_s = DEFAULT_DOWN_GRACE_S;
	c->out_down_grace_s = DEFAULT_OUT_DOWN_GRACE_S;
	c->start_visible_grace_s = DEFAULT_START_VISIBLE_GRACE_S;
	c->poll_share_s = DEFAULT_POLL_SHARE_S;
	c->max_reply_bytes = DEFAULT_MAX_REPLY_BYTES;
	c->tls_resume = true;
	strcpy(c->switch_prefix, "conduit");
	c->switch_timeout_ms = 5000;
	for (s = 0; s < 2; s++)
		for (k = 0; k < 2; k++)
			c->allow[s][k].n = 0; /* empty list: anywhere */
}

void cbb_config_free(cbb_config_t *c)
{
	int s, k;

	free(c->path);
	free(c->server_host);
	free(c->ca_cert);
	free(c->client_cert);
	free(c->client_key);
	free(c->server_name);
	free(c->state_dir);
	free(c->scontrol);
	free(c->squeue);
	free(c->audit_log);
	free(c->tls_groups);
	cbb_prefixes_clear(&c->env_names);
	free(c->session_key_file);
	free(c->session_dir);
	free(c->switch_endpoint);
	free(c->switch_url);
	free(c->switch_ca);
	free(c->switch_cert);
	free(c->switch_key);
	for (s = 0; s < 2; s++)
		for (k = 0; k < 2; k++)
			cbb_prefixes_clear(&c->allow[s][k]);
	memset(c, 0, sizeof(*c));
}

static const key_t_ *find_key(const char *k, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].key) == n && !strncasecmp(keys[i].key, k, n))
			return &keys[i];
	return NULL;
}

int cbb_config_parse(cbb_config_t *c, const char *text, size_t len,
		     const char *name, cbb_err_t *err)
{
	unsigned seen[sizeof(keys) / sizeof(keys[0])] = { 0 };
	unsigned lineno = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *line = text + pos, *nl, *eq, *hash;
		size_t n, kl, vl;
		const key_t_ *key;
		char *val;
		void *field;
		int rc;
		unsigned idx;

		nl = memchr(line, '\n', len - pos);
		n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		lineno++;
		if (memchr(line, '\0', n))
			return cbb_err(err, "%s line %u: NUL byte", name,
				       lineno);
		hash = memchr(line, '#', n);
		if (hash)
			n = (size_t)(hash - line);
		while (n && isspace((unsigned char)*line)) {
			line++;
			n--;
		}
		while (n && isspace((unsigned char)line[n - 1]))
			n--;
		if (n == 0)
			continue;
		eq = memchr(line, '=', n);
		if (!eq)
			return cbb_err(err, "%s line %u: expected Key=Value, "
				       "e.g. ConduitServer=conduit.example."
				       "com:23456", name, lineno);
		kl = (size_t)(eq - line);
		while (kl && isspace((unsigned char)line[kl - 1]))
			kl--;
		key = find_key(line, kl);
		if (!key) {
			char shown[80];

			return cbb_err(err, "%s line %u: unknown key '%s' "
				       "(see conduit_bb.conf.example)", name,
				       lineno, cbb_show(shown, sizeof(shown),
							line, kl));
		}
		idx = (unsigned)(key - keys);
		if (seen[idx])
			return cbb_err(err, "%s line %u: %s is already set on "
				       "line %u", name, lineno, key->key,
				       seen[idx]);
		seen[idx] = lineno;
		eq++;
		vl = n - (size_t)(eq - line);
		while (vl && isspace((unsigned char)*eq)) {
			eq++;
			vl--;
		}
		if (vl == 0)
			return cbb_err(err, "%s line %u: %s has no value, e.g. "
				       "%s=%s", name, lineno, key->key,
				       key->key, key->example);
		val = strndup(eq, vl);
		if (!val)
			return cbb_err(err, "out of memory");
		field = key->offset ? (char *)c + key->offset : NULL;
		rc = key->set ? key->set(c, val, field, err) :
				set_in_range(key->key, val, field, err);
		free(val);
		if (rc < 0) {
			cbb_err_prefix(err, "%s line %u: %s", name, lineno,
				       key->key);
			/* one line: the message, then a good example */
			if (strlen(err->msg) + strlen(key->example) + 40 <
			    sizeof(err->msg)) {
				strcat(err->msg, "; e.g. ");
				strcat(err->msg, key->key);
				strcat(err->msg, "=");
				strcat(err->msg, key->example);
			}
			return -1;
		}
	}
	return 0;
}

const char *cbb_config_locate(char *buf, size_t size)
{
	const char *env = getenv("CONDUIT_BB_CONF");
	const char *slurm = getenv("SLURM_CONF");

	if (env && env[0]) {
		snprintf(buf, size, "%s", env);
		return buf;
	}
	if (slurm && slurm[0]) {
		const char *slash = strrchr(slurm, '/');

		if (slash) {
			snprintf(buf, size, "%.*s/%s", (int)(slash - slurm),
				 slurm, CBB_CONF_NAME);
			return buf;
		}
	}
	snprintf(buf, size, "%s", CBB_CONF_DEFAULT);
	return buf;
}

int cbb_config_load(cbb_config_t *c, const char *path, cbb_err_t *err)
{
	char where[PATH_MAX], *text;
	size_t len;
	bool missing;
	int rc;

	cbb_config_defaults(c);
	if (!path)
		path = cbb_config_locate(where, sizeof(where));
	if (cbb_read_file(path, CBB_CONF_MAX_BYTES, &text, &len, &missing,
			  err) < 0)
		return -1;
	if (missing)
		return 0;
	c->path = strdup(path);
	if (!c->path) {
		free(text);
		return cbb_err(err, "out of memory");
	}
	rc = cbb_config_parse(c, text, len, path, err);
	free(text);
	return rc;
}

int cbb_slurm_conf_get(const char *key, char *path, size_t psize, char *val,
		       size_t vsize)
{
	const char *env = getenv("SLURM_CONF");
	size_t kl = strlen(key);
	char *text, *line, *next;
	size_t len;
	cbb_err_t err;
	int rc = -1;

	snprintf(path, psize, "%s", env && env[0] ? env : "/etc/slurm/slurm.conf");
	cbb_err_clear(&err);
	if (cbb_read_file(path, (size_t)4 << 20, &text, &len, NULL, &err) < 0)
		return -1;
	for (line = text; line && rc < 0; line = next) {
		char *v, *end;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (isspace((unsigned char)*line))
			line++;
		if (strncasecmp(line, key, kl))
			continue;
		v = line + kl;
		while (isspace((unsigned char)*v))
			v++;
		if (*v++ != '=')
			continue;
		while (isspace((unsigned char)*v))
			v++;
		end = v + strcspn(v, " \t\r#");
		if (end == v || (size_t)(end - v) >= vsize)
			continue;
		memcpy(val, v, (size_t)(end - v));
		val[end - v] = '\0';
		rc = 0;
	}
	free(text);
	return rc;
}

int cbb_slurm_cluster_name(char *path, size_t psize, char *name, size_t nsize)
{
	return cbb_slurm_conf_get("ClusterName", path, psize, name, nsize);
}

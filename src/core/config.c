/* config.c - see config.h */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "path.h"
#include "readfile.h"

#define DEFAULT_REQUEST_TIMEOUT_MS 10000
#define DEFAULT_SUBMIT_TIMEOUT_MS 2000
#define DEFAULT_MAX_DIRECTIVES 100
#define DEFAULT_MAX_SOURCE_BYTES 4000
#define DEFAULT_DOWN_GRACE_S 300
#define DEFAULT_OUT_DOWN_GRACE_S 3600
#define DEFAULT_START_VISIBLE_GRACE_S 60
#define DEFAULT_MAX_REPLY_BYTES (16u << 20)

static int set_uint(const char *val, unsigned *dst, unsigned long lo,
		    unsigned long hi, cbb_err_t *err);
static void prefixes_clear(cbb_prefixes_t *p);

typedef int (*setter_fn)(cbb_config_t *c, const char *val, void *field,
			 cbb_err_t *err);

typedef struct {
	const char *key;
	setter_fn set;
	size_t offset;
	const char *example;
} key_t_;

static int set_string(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err)
{
	char **dst = field;
	(void)c;

	free(*dst);
	*dst = strdup(val);
	return *dst ? 0 : cbb_err(err, "out of memory");
}

static int set_file(cbb_config_t *c, const char *val, void *field,
		    cbb_err_t *err)
{
	if (val[0] != '/')
		return cbb_err(err, "'%s' is not an absolute path", val);
	return set_string(c, val, field, err);
}

static int set_server(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err)
{
	const char *colon = strrchr(val, ':');
	char *end, *host;
	unsigned long port;
	size_t i, hl;
	(void)field;

	if (!colon || colon == val || !colon[1])
		return cbb_err(err, "'%s' is not host:port", val);
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port < 1 || port > 65535 || !isdigit((unsigned char)colon[1]))
		return cbb_err(err, "'%s' has no valid port (1-65535)", val);
	hl = (size_t)(colon - val);
	if (val[0] == '[' && val[hl - 1] == ']') { /* [IPv6]:port */
		val++;
		hl -= 2;
	}
	for (i = 0; i < hl; i++)
		if (!isalnum((unsigned char)val[i]) && !strchr(".-_:", val[i]))
			return cbb_err(err, "'%.*s' is not a host name or "
				       "address", (int)hl, val);
	if (hl == 0 || hl > 253)
		return cbb_err(err, "host name length must be 1-253");
	host = strndup(val, hl);
	if (!host)
		return cbb_err(err, "out of memory");
	free(c->server_host);
	c->server_host = host;
	c->server_port = (unsigned)port;
	return 0;
}

static int set_hostname(cbb_config_t *c, const char *val, void *field,
			cbb_err_t *err)
{
	size_t i, n = strlen(val);

	if (n > 253)
		return cbb_err(err, "host name longer than 253 bytes");
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && !strchr(".-_:", val[i]))
			return cbb_err(err, "'%s' is not a host name", val);
	return set_string(c, val, field, err);
}

/* Seconds, with an optional fraction ("2.5") or an "ms" suffix. */
static int set_duration(cbb_config_t *c, const char *val, void *field,
			cbb_err_t *err)
{
	unsigned *dst = field;
	unsigned long whole = 0, frac = 0, scale = 1000, ms;
	const char *p = val;
	(void)c;

	if (!isdigit((unsigned char)*p))
		return cbb_err(err, "'%s' is not a duration", val);
	while (isdigit((unsigned char)*p) && whole < 1000000)
		whole = whole * 10 + (unsigned long)(*p++ - '0');
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return cbb_err(err, "'%s' is not a duration", val);
		while (isdigit((unsigned char)*p)) {
			if (scale > 1) {
				scale /= 10;
				frac += (unsigned long)(*p - '0') * scale;
			}
			p++;
		}
	}
	if (!strcmp(p, "ms") && frac == 0 && scale == 1000)
		ms = whole;
	else if (!*p || !strcmp(p, "s"))
		ms = whole * 1000 + frac;
	else
		return cbb_err(err, "'%s' is not a duration", val);
	if (ms < 100 || ms > 600000)
		return cbb_err(err, "'%s' is out of range (0.1 to 600 "
			       "seconds)", val);
	*dst = (unsigned)ms;
	return 0;
}

static int set_bool(cbb_config_t *c, const char *val, void *field,
		    cbb_err_t *err)
{
	bool *dst = field;
	(void)c;

	if (!strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
	    !strcmp(val, "1"))
		*dst = true;
	else if (!strcasecmp(val, "no") || !strcasecmp(val, "false") ||
		 !strcmp(val, "0"))
		*dst = false;
	else
		return cbb_err(err, "'%s' is neither yes nor no", val);
	return 0;
}

static int set_word(cbb_config_t *c, const char *val, void *field,
		    cbb_err_t *err)
{
	char *dst = field;
	size_t i, n = strlen(val);
	(void)c;

	if (n == 0 || n > CBB_DIRECTIVE_MAX)
		return cbb_err(err, "must be 1 to %d characters",
			       CBB_DIRECTIVE_MAX);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && val[i] != '_')
			return cbb_err(err, "'%s' may hold only letters, digits "
				       "and '_'", val);
	memcpy(dst, val, n + 1);
	return 0;
}

/* One of two words: `off` sets *flag false, `on` sets it true. */
static int set_either(bool *flag, const char *val, const char *off,
		      const char *on, cbb_err_t *err)
{
	if (strcasecmp(val, off) && strcasecmp(val, on))
		return cbb_err(err, "'%s' is neither %s nor %s", val, off, on);
	*flag = !strcasecmp(val, on);
	return 0;
}

static int set_controller(cbb_config_t *c, const char *val, void *field,
			  cbb_err_t *err)
{
	(void)field;
	return set_either(&c->switch_http, val, "none", "http", err);
}

static int set_delivery(cbb_config_t *c, const char *val, void *field,
			cbb_err_t *err)
{
	(void)field;
	return set_either(&c->session_file, val, "env", "file", err);
}

static int set_https_url(cbb_config_t *c, const char *val, void *field,
			 cbb_err_t *err)
{
	size_t n = strlen(val);

	if (strncmp(val, "https://", 8) || n < 9 || val[n - 1] == '/' ||
	    strpbrk(val, " \t\"'<>\\"))
		return cbb_err(err, "'%s' is not an https:// URL without a "
			       "trailing '/'", val);
	return set_string(c, val, field, err);
}

static int set_vlans(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err)
{
	const char *p = val;
	(void)field;

	c->n_switch_vlans = 0;
	while (*p) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)*p))
			return cbb_err(err, "'%s' is not a list of VLAN ids", val);
		v = strtoul(p, &end, 10);
		if (v < 1 || v > 4094)
			return cbb_err(err, "VLAN ids run from 1 to 4094");
		if (c->n_switch_vlans == sizeof(c->switch_vlans) /
						 sizeof(c->switch_vlans[0]))
			return cbb_err(err, "at most 16 VLANs");
		c->switch_vlans[c->n_switch_vlans++] = (unsigned)v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return cbb_err(err, "'%s' is not a list of VLAN ids", val);
	}
	return 0;
}

/* A whole number of seconds up to a day (0 allowed). */
static int set_grace(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err)
{
	(void)c;
	return set_uint(val, field, 0, 86400, err);
}

/* A program: an absolute path, or a bare name looked up in PATH. */
static int set_program(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err)
{
	if (val[0] != '/' && strchr(val, '/'))
		return cbb_err(err, "'%s' must be an absolute path or a bare "
			       "command name", val);
	return set_string(c, val, field, err);
}

static int set_uint(const char *val, unsigned *dst, unsigned long lo,
		    unsigned long hi, cbb_err_t *err)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (!isdigit((unsigned char)val[0]) || errno || *end || v < lo ||
	    v > hi)
		return cbb_err(err, "'%s' is not a whole number from %lu to "
			       "%lu", val, lo, hi);
	*dst = (unsigned)v;
	return 0;
}

static int set_visible_grace(cbb_config_t *c, const char *val, void *field,
			     cbb_err_t *err)
{
	(void)c;
	return set_uint(val, field, 1, 86400, err);
}

static int set_max_reply(cbb_config_t *c, const char *val, void *field,
			 cbb_err_t *err)
{
	(void)c;
	return set_uint(val, field, 65536, 1u << 30, err);
}

/*
 * SwitchEnvNames: comma-separated NAME or PREFIX* (letters, digits, '_';
 * not starting with a digit).  SLURM_* is never allowed: Slurm owns it.
 */
static int set_env_names(cbb_config_t *c, const char *val, void *field,
			 cbb_err_t *err)
{
	cbb_prefixes_t *p = field;
	const char *s = val;
	(void)c;

	prefixes_clear(p);
	while (*s) {
		size_t n = strcspn(s, ","), i, len = n;
		char *item;

		if (len && s[len - 1] == '*')
			len--;
		if (len == 0 || len > 64 || isdigit((unsigned char)s[0]))
			return cbb_err(err, "'%.*s' is not a variable name or "
				       "NAME_PREFIX*", (int)n, s);
		for (i = 0; i < len; i++)
			if (!isalnum((unsigned char)s[i]) && s[i] != '_')
				return cbb_err(err, "'%.*s' is not a variable "
					       "name or NAME_PREFIX*", (int)n, s);
		if (!strncmp(s, "SLURM_", len < 6 ? len : 6))
			return cbb_err(err, "'%.*s' would let a controller set "
				       "Slurm's own variables", (int)n, s);
		if (p->n >= CBB_PREFIX_MAX)
			return cbb_err(err, "more than %d names", CBB_PREFIX_MAX);
		item = strndup(s, n);
		if (!item)
			return cbb_err(err, "out of memory");
		p->v[p->n++] = item;
		s += n;
		if (*s == ',' && !*++s)
			return cbb_err(err, "trailing ','");
	}
	return 0;
}

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

static int set_max_directives(cbb_config_t *c, const char *val, void *field,
			      cbb_err_t *err)
{
	(void)c;
	return set_uint(val, field, 1, 1000, err);
}

static int set_max_source_bytes(cbb_config_t *c, const char *val,
				void *field, cbb_err_t *err)
{
	(void)c;
	return set_uint(val, field, 1, 1 << 20, err);
}

static int set_validation(cbb_config_t *c, const char *val, void *field,
			  cbb_err_t *err)
{
	(void)field;
	if (!strcasecmp(val, "local")) {
		c->submit_validation = CBB_VALIDATE_LOCAL;
		return 0;
	}
	if (!strcasecmp(val, "remote")) {
		c->submit_validation = CBB_VALIDATE_REMOTE;
		return 0;
	}
	return cbb_err(err, "'%s' is neither local nor remote", val);
}

static void prefixes_clear(cbb_prefixes_t *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	p->n = 0;
}

/* Comma-separated absolute directories, stored cleaned. */
static int set_prefixes(cbb_config_t *c, const char *val, void *field,
			cbb_err_t *err)
{
	cbb_prefixes_t *p = field;
	const char *s = val;
	(void)c;

	prefixes_clear(p);
	while (*s) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char *item, *clean;

		while (n && isspace((unsigned char)*s)) {
			s++;
			n--;
		}
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (n == 0 || n >= CBB_PATH_MAX || s[0] != '/')
			return cbb_err(err, "'%.*s' is not an absolute "
				       "directory", (int)(n ? n : 0), s);
		if (p->n >= CBB_PREFIX_MAX)
			return cbb_err(err, "more than %d prefixes",
				       CBB_PREFIX_MAX);
		item = strndup(s, n);
		if (!item)
			return cbb_err(err, "out of memory");
		clean = cbb_path_resolve(NULL, item, false, err);
		free(item);
		if (!clean)
			return -1;
		p->v[p->n++] = clean;
		s += (e ? (size_t)(e - s) + 1 : strlen(s));
		if (e && !*s)
			return cbb_err(err, "trailing ','");
	}
	return 0;
}

#define OFF(f) offsetof(cbb_config_t, f)
static const key_t_ keys[] = {
	{ "ConduitServer", set_server, 0, "conduit.example.com:23456" },
	{ "CACert", set_file, OFF(ca_cert), "/etc/slurm/conduit-external-ca.pem" },
	{ "ClientCert", set_file, OFF(client_cert), "/etc/slurm/conduit-cert.pem" },
	{ "ClientKey", set_file, OFF(client_key), "/etc/slurm/conduit-key.pem" },
	{ "ServerName", set_hostname, OFF(server_name), "conduit-server.example.com" },
	{ "RequestTimeout", set_duration, OFF(request_timeout_ms), "10" },
	{ "SubmitValidation", set_validation, 0, "local" },
	{ "SubmitTimeout", set_duration, OFF(submit_timeout_ms), "2" },
	{ "Directive", set_word, OFF(directive), "CONDUIT" },
	{ "MaxDirectives", set_max_directives, OFF(max_directives), "100" },
	{ "MaxSourceBytes", set_max_source_bytes, OFF(max_source_bytes), "4000" },
	{ "StageInSources", set_prefixes, OFF(allow[0][0]), "/archive,/project" },
	{ "StageInDestinations", set_prefixes, OFF(allow[0][1]), "/scratch" },
	{ "StageOutSources", set_prefixes, OFF(allow[1][0]), "/scratch" },
	{ "StageOutDestinations", set_prefixes, OFF(allow[1][1]), "/archive,/project" },
	{ "StateDir", set_file, OFF(state_dir), CBB_STATE_DIR },
	{ "ServerDownGrace", set_grace, OFF(down_grace_s), "300" },
	{ "StageOutDownGrace", set_grace, OFF(out_down_grace_s), "3600" },
	{ "StartVisibleGrace", set_visible_grace, OFF(start_visible_grace_s), "60" },
	{ "MaxReplyBytes", set_max_reply, OFF(max_reply_bytes), "16777216" },
	{ "Scontrol", set_program, OFF(scontrol), "/usr/bin/scontrol" },
	{ "Squeue", set_program, OFF(squeue), "/usr/bin/squeue" },
	{ "SwitchPrefix", set_word, OFF(switch_prefix), "conduit" },
	{ "AllowTestDirectives", set_bool, OFF(allow_test_directives), "no" },
	{ "SwitchSpecialSteps", set_bool, OFF(special_steps), "no" },
	{ "SwitchBlockJobComplete", set_bool, OFF(block_job_complete), "no" },
	{ "SwitchController", set_controller, 0, "none" },
	{ "SwitchControllerURL", set_https_url, OFF(switch_url), "https://broker.example.org:8443" },
	{ "SwitchCACert", set_file, OFF(switch_ca), "/etc/slurm/broker-ca.pem" },
	{ "SwitchClientCert", set_file, OFF(switch_cert), "/etc/slurm/broker-client.pem" },
	{ "SwitchClientKey", set_file, OFF(switch_key), "/etc/slurm/broker-client.key" },
	{ "SwitchTimeout", set_duration, OFF(switch_timeout_ms), "5" },
	{ "SessionKeyFile", set_file, OFF(session_key_file), "/etc/slurm/conduit_bb.key" },
	{ "SessionDelivery", set_delivery, 0, "env" },
	{ "SessionDir", set_file, OFF(session_dir), CBB_SESSION_DIR },
	{ "SwitchEnvNames", set_env_names, OFF(env_names), "CONDUIT_*,NCCL_SOCKET_IFNAME" },
	{ "SwitchEndpoint", set_string, OFF(switch_endpoint), "fabric.example.org:8080" },
	{ "SwitchVlans", set_vlans, 0, "101,102" },
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
	c->max_reply_bytes = DEFAULT_MAX_REPLY_BYTES;
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
	prefixes_clear(&c->env_names);
	free(c->session_key_file);
	free(c->session_dir);
	free(c->switch_endpoint);
	free(c->switch_url);
	free(c->switch_ca);
	free(c->switch_cert);
	free(c->switch_key);
	for (s = 0; s < 2; s++)
		for (k = 0; k < 2; k++)
			prefixes_clear(&c->allow[s][k]);
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
		rc = key->set(c, val, field, err);
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

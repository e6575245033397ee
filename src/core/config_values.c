/* config_values.c - see config_values.h */
#include "config_values.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "path.h"

int cbb_set_string(cbb_config_t *c, const char *val, void *field,
		   cbb_err_t *err)
{
	char **dst = field;
	(void)c;

	free(*dst);
	*dst = strdup(val);
	return *dst ? 0 : cbb_err(err, "out of memory");
}

int cbb_set_file(cbb_config_t *c, const char *val, void *field, cbb_err_t *err)
{
	if (val[0] != '/')
		return cbb_err(err, "'%s' is not an absolute path", val);
	return cbb_set_string(c, val, field, err);
}

int cbb_set_server(cbb_config_t *c, const char *val, void *field,
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

int cbb_set_hostname(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err)
{
	size_t i, n = strlen(val);

	if (n > 253)
		return cbb_err(err, "host name longer than 253 bytes");
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && !strchr(".-_:", val[i]))
			return cbb_err(err, "'%s' is not a host name", val);
	return cbb_set_string(c, val, field, err);
}

/* Seconds, with an optional fraction ("2.5") or an "ms" suffix. */
int cbb_set_duration(cbb_config_t *c, const char *val, void *field,
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

/* TLSGroups: group names (P-256, X25519, ...) separated by ':' */
int cbb_set_tls_groups(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err)
{
	size_t i, n = strlen(val);

	if (n == 0 || n > 200 || val[0] == ':' || val[n - 1] == ':' ||
	    strstr(val, "::"))
		return cbb_err(err, "'%s' is not a list of TLS groups such as "
			       "P-256:X25519", val);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)val[i]) && !strchr("-_:", val[i]))
			return cbb_err(err, "'%s' is not a list of TLS groups "
				       "such as P-256:X25519", val);
	return cbb_set_string(c, val, field, err);
}

int cbb_set_bool(cbb_config_t *c, const char *val, void *field, cbb_err_t *err)
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

int cbb_set_word(cbb_config_t *c, const char *val, void *field, cbb_err_t *err)
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
int cbb_set_either(bool *flag, const char *val, const char *off, const char *on,
		   cbb_err_t *err)
{
	if (strcasecmp(val, off) && strcasecmp(val, on))
		return cbb_err(err, "'%s' is neither %s nor %s", val, off, on);
	*flag = !strcasecmp(val, on);
	return 0;
}

int cbb_set_controller(cbb_config_t *c, const char *val, void *field,
		       cbb_err_t *err)
{
	(void)field;
	return cbb_set_either(&c->switch_http, val, "none", "http", err);
}

int cbb_set_delivery(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err)
{
	(void)field;
	return cbb_set_either(&c->session_file, val, "env", "file", err);
}

int cbb_set_https_url(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err)
{
	size_t n = strlen(val);

	if (strncmp(val, "https://", 8) || n < 9 || val[n - 1] == '/' ||
	    strpbrk(val, " \t\"'<>\\"))
		return cbb_err(err, "'%s' is not an https:// URL without a "
			       "trailing '/'", val);
	return cbb_set_string(c, val, field, err);
}

int cbb_set_vlans(cbb_config_t *c, const char *val, void *field, cbb_err_t *err)
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
int cbb_set_grace(cbb_config_t *c, const char *val, void *field, cbb_err_t *err)
{
	(void)c;
	return cbb_set_uint(val, field, 0, 86400, err);
}

/* A program: an absolute path, or a bare name looked up in PATH. */
int cbb_set_program(cbb_config_t *c, const char *val, void *field,
		    cbb_err_t *err)
{
	if (val[0] != '/' && strchr(val, '/'))
		return cbb_err(err, "'%s' must be an absolute path or a bare "
			       "command name", val);
	return cbb_set_string(c, val, field, err);
}

int cbb_set_uint(const char *val, unsigned *dst, unsigned long lo,
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

/*
 * One comma-separated list into p, each item with its blanks trimmed and
 * handed to take, which checks it and returns the string to keep (NULL,
 * with err set, refuses it).  What the list holds names the limit's error.
 */
typedef char *(*list_item_fn)(const char *s, size_t n, cbb_err_t *err);

static int set_list(cbb_prefixes_t *p, const char *val, const char *what,
		    list_item_fn take, cbb_err_t *err)
{
	const char *s = val;

	cbb_prefixes_clear(p);
	while (*s) {
		size_t len = strcspn(s, ","), n = len;
		const char *t = s;
		char *item;

		while (n && isspace((unsigned char)*t))
			t++, n--;
		while (n && isspace((unsigned char)t[n - 1]))
			n--;
		if (p->n >= CBB_PREFIX_MAX)
			return cbb_err(err, "more than %d %s", CBB_PREFIX_MAX,
				       what);
		if (!(item = take(t, n, err)))
			return -1;
		p->v[p->n++] = item;
		s += len;
		if (*s == ',' && !*++s)
			return cbb_err(err, "trailing ','");
	}
	return 0;
}

/* NAME or PREFIX*: letters, digits, '_', not starting with a digit. */
static char *env_name(const char *s, size_t n, cbb_err_t *err)
{
	size_t i, len = n && s[n - 1] == '*' ? n - 1 : n;
	char *item;

	if (len == 0 || len > 64 || isdigit((unsigned char)s[0]))
		goto bad;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			goto bad;
	/* Slurm's: a name in SLURM_*, or a prefix that SLURM_ names match */
	if (!strncmp(s, "SLURM_", len < n && len < 6 ? len : 6)) {
		cbb_err(err, "'%.*s' would let a controller set Slurm's own "
			"variables", (int)n, s);
		return NULL;
	}
	if (!(item = strndup(s, n)))
		cbb_err(err, "out of memory");
	return item;
bad:
	cbb_err(err, "'%.*s' is not a variable name or NAME_PREFIX*", (int)n,
		s);
	return NULL;
}

/* SwitchEnvNames.  SLURM_* is never allowed: Slurm owns it. */
int cbb_set_env_names(cbb_config_t *c, const char *val, void *field,
		      cbb_err_t *err)
{
	(void)c;
	return set_list(field, val, "names", env_name, err);
}

int cbb_set_validation(cbb_config_t *c, const char *val, void *field,
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

int cbb_set_mover(cbb_config_t *c, const char *val, void *field,
		  cbb_err_t *err)
{
	(void)field;
	if (!strcasecmp(val, "rsync")) {
		c->mover = CBB_MOVER_RSYNC;
		return 0;
	}
	if (!strcasecmp(val, "pftool")) {
		c->mover = CBB_MOVER_PFTOOL;
		return 0;
	}
	return cbb_err(err, "'%s' is neither rsync nor pftool", val);
}

void cbb_prefixes_clear(cbb_prefixes_t *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	p->n = 0;
}

/* An absolute directory, kept cleaned. */
static char *directory(const char *s, size_t n, cbb_err_t *err)
{
	char *item, *clean;

	if (n == 0 || n >= CBB_PATH_MAX || s[0] != '/') {
		cbb_err(err, "'%.*s' is not an absolute directory", (int)n, s);
		return NULL;
	}
	if (!(item = strndup(s, n))) {
		cbb_err(err, "out of memory");
		return NULL;
	}
	clean = cbb_path_resolve(NULL, item, false, err);
	free(item);
	return clean;
}

/* Comma-separated absolute directories, stored cleaned. */
int cbb_set_prefixes(cbb_config_t *c, const char *val, void *field,
		     cbb_err_t *err)
{
	(void)c;
	return set_list(field, val, "prefixes", directory, err);
}


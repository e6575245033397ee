/* controller.c - see controller.h */
#include "controller.h"

#include <ctype.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cluster.h"
#include "curl_dl.h"
#include "jobinfo.h"
#include "tls.h"

#define REPLY_MAX (64 * 1024)

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	cbb_buf_t *b = ud;

	return cbb_buf_add(b, data, size * n) < 0 ? 0 : size * n;
}

/* One request; returns the HTTP status, or -1 (err set) below HTTP. */
static long request(const cbb_config_t *cfg, const char *method,
		    const char *cluster, uint32_t job_id, const char *body,
		    cbb_buf_t *reply, cbb_err_t *err)
{
	char url[512], safe[CBB_CLUSTER_MAX], curl_err[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL;
	long status = -1;
	cbb_tls_t tls = { cfg->switch_ca, cfg->switch_cert, cfg->switch_key,
			  cbb_conf_tls_groups(cfg), false, NULL };
	CURLcode rc;
	CURL *e;

	if (!cfg->switch_url)
		return cbb_err(err, "SwitchControllerURL is not set");
	if (cbb_curl_load(err) < 0)
		return -1;
	cbb_cluster_safe(safe, cluster);
	snprintf(url, sizeof(url), "%s/v1/sessions/%s/%u", cfg->switch_url,
		 safe, job_id);
	e = cbb_curl.easy_init();
	if (!e)
		return cbb_err(err, "out of memory");
	h = cbb_curl.slist_append(h, "Content-Type: application/json");
	if (!h) {
		cbb_curl.easy_cleanup(e);
		return cbb_err(err, "out of memory");
	}
	if (cbb_curl.easy_setopt(e, CURLOPT_URL, url) ||
	    cbb_tls_setopt(e, &tls) ||
	    cbb_curl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, method) ||
	    cbb_curl.easy_setopt(e, CURLOPT_HTTPHEADER, h) ||
	    cbb_curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    cbb_curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)cfg->switch_timeout_ms) ||
	    cbb_curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->switch_timeout_ms) ||
	    cbb_curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) ||
	    cbb_curl.easy_setopt(e, CURLOPT_WRITEDATA, reply) ||
	    cbb_curl.easy_setopt(e, CURLOPT_ERRORBUFFER, curl_err) ||
	    (body && (cbb_curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(body)) ||
		      cbb_curl.easy_setopt(e, CURLOPT_POSTFIELDS, body)))) {
		cbb_err(err, "cannot set up the controller request");
		goto out;
	}
	rc = cbb_curl.easy_perform(e);
	if (rc != CURLE_OK) {
		cbb_err(err, "controller %s %s: %s", method, cfg->switch_url,
			curl_err[0] ? curl_err : cbb_curl.easy_strerror(rc));
		cbb_one_line(err->msg);
		goto out;
	}
	cbb_curl.easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
out:
	cbb_curl.slist_free_all(h);
	cbb_curl.easy_cleanup(e);
	return status;
}

void cbb_session_wipe(cbb_session_t *s)
{
	cbb_wipe(s, sizeof(*s));
}

/*
 * jansson copies the token while it parses an answer (the lexer's
 * buffers, the string) and frees those copies as they are.  Its memory
 * goes through a free that wipes each block first; it allocates with
 * malloc as before, so blocks it took before the switch are freed right
 * too (malloc_usable_size knows their size).  Installed once per
 * process, and only over jansson's defaults: a host that set its own
 * allocator keeps it.  (The switch hooks that talk to the controller run
 * in a slurmscriptd child of their own.)
 */
static void wiping_free(void *p)
{
	if (p) {
		cbb_wipe(p, malloc_usable_size(p));
		free(p);
	}
}

static pthread_once_t json_wipe_once = PTHREAD_ONCE_INIT;

static void json_wipe_install(void)
{
	json_malloc_t m = NULL;
	json_free_t f = NULL;

	json_get_alloc_funcs(&m, &f);
	if (m == malloc && f == free)
		json_set_alloc_funcs(malloc, wiping_free);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A well-formed name the site allows (SwitchEnvNames). */
static bool env_name_ok(const cbb_config_t *cfg, const char *k)
{
	size_t i;

	if (!k[0] || isdigit((unsigned char)k[0]) ||
	    !cbb_conf_env_name_allowed(cfg, k))
		return false;
	for (i = 0; k[i]; i++)
		if (!isalnum((unsigned char)k[i]) && k[i] != '_')
			return false;
	return i < 128;
}

/*
 * A string field of the reply, absent or null as "": refused (-1, err
 * set) when it is not a string or does not fit `size` with its NUL, or
 * holds a NUL (what the steps' cbb_jobinfo_read refuses).
 */
static int str_field(json_t *o, const char *k, char *out, size_t size,
		     cbb_err_t *err)
{
	json_t *v = json_object_get(o, k);
	const char *s;
	size_t n;

	out[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	s = json_is_string(v) ? json_string_value(v) : NULL;
	n = s ? json_string_length(v) : 0;
	if (!s || n >= size || strlen(s) != n)
		return cbb_err(err, "controller reply: %s is not a string of at "
			       "most %zu bytes", k, size - 1);
	memcpy(out, s, n + 1);
	return 0;
}

/* A whole-number field from 0 to max, absent or null as 0. */
static int num_field(json_t *o, const char *k, json_int_t max, uint64_t *out,
		     cbb_err_t *err)
{
	json_t *v = json_object_get(o, k);

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return cbb_err(err, "controller reply: %s is not a whole number",
			       k);
	if (json_integer_value(v) < 0 || json_integer_value(v) > max)
		return cbb_err(err, "controller reply: %s %lld is out of range "
			       "(0 to %lld)", k, (long long)json_integer_value(v),
			       (long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/*
 * Every value is checked here, when it arrives, against what the steps
 * accept later (cbb_jobinfo_read): a value they would refuse fails the
 * setup now instead of every step of the job.
 */
static int parse_session(const cbb_config_t *cfg, const char *text,
			 size_t len, cbb_session_t *s, cbb_err_t *err)
{
	json_error_t je;
	json_t *o = json_loadb(text, len, 0, &je), *v;
	const char *k;
	uint64_t gpus = 0;
	size_t i, o_env = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o)) {
		json_decref(o);
		return cbb_err(err, "controller reply is not a JSON object");
	}
	if (str_field(o, "session_id", s->session_id, sizeof(s->session_id),
		      err) < 0 || !s->session_id[0] ||
	    str_field(o, "token", s->token, sizeof(s->token), err) < 0) {
		if (!err->set || !s->session_id[0])
			cbb_err(err, "controller reply lacks a usable "
				"session_id or token");
		rc = -1;
	} else if (str_field(o, "pool", s->pool, sizeof(s->pool), err) < 0 ||
		   str_field(o, "endpoint", s->endpoint, sizeof(s->endpoint),
			     err) < 0 ||
		   num_field(o, "gpus", 4096, &gpus, err) < 0 ||
		   num_field(o, "vram_mib", CBB_JOBINFO_NUM_MAX, &s->vram_mib,
			     err) < 0) {
		rc = -1;
	}
	if (rc < 0) {
		/* the answer may have held a token: wipe what was copied */
		cbb_session_wipe(s);
		json_decref(o);
		return -1;
	}
	s->gpus = (uint32_t)gpus;
	v = json_object_get(o, "vlans");
	for (i = 0; json_is_array(v) && i < json_array_size(v) && i < 16; i++) {
		json_int_t x = json_integer_value(json_array_get(v, i));

		if (x >= 1 && x <= 4094)
			s->vlans[s->n_vlans++] = (unsigned)x;
	}
	json_object_foreach(json_object_get(o, "env"), k, v) {
		const char *val = json_is_string(v) ? json_string_value(v) : NULL;
		int w;

		if (!val || !env_name_ok(cfg, k) || strpbrk(val, "\n\r"))
			continue; /* unsafe names and values are dropped */
		w = snprintf(s->env + o_env, sizeof(s->env) - o_env, "%s=%s\n",
			     k, val);
		if (w < 0 || (size_t)w >= sizeof(s->env) - o_env) {
			s->env[o_env] = '\0';
			break;
		}
		o_env += (size_t)w;
	}
	json_decref(o);
	return 0;
}

cbb_ctl_rc_t cbb_ctl_reserve(const cbb_config_t *cfg, const cbb_ctl_job_t *j,
			     cbb_session_t *out, cbb_err_t *err)
{
	json_t *body = json_pack("{s:s, s:I, s:s, s:I, s:s, s:{s:s, s:I, s:I}}",
				 "user", j->user, "uid", (json_int_t)j->uid,
				 "nodes", j->nodes, "num_nodes", (json_int_t)j->num_nodes,
				 "partition", j->partition, "request",
				 "pool", j->req->pool, "gpus", (json_int_t)j->req->gpus,
				 "vram_mib", (json_int_t)j->req->vram_mib);
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	cbb_buf_t reply;
	cbb_ctl_rc_t rc;
	long status;

	json_decref(body);
	if (!text)
		return cbb_err(err, "out of memory"), CBB_CTL_TRANSIENT;
	(void)pthread_once(&json_wipe_once, json_wipe_install);
	/* the answer holds the token: wiped as it grows and when freed */
	cbb_buf_init(&reply, REPLY_MAX);
	cbb_buf_secret(&reply);
	status = request(cfg, "PUT", j->cluster, j->job_id, text, &reply, err);
	free(text);
	if (status == 200 || status == 201) {
		rc = CBB_CTL_OK;
		if (parse_session(cfg, reply.data ? reply.data : "", reply.len,
				  out, err) < 0) {
			/* a reservation we cannot use is given back */
			cbb_err_t e2;

			cbb_err_clear(&e2);
			(void)cbb_ctl_release(cfg, j->cluster, j->job_id, &e2);
			rc = CBB_CTL_TRANSIENT;
		}
	} else if (status == 409) {
		json_t *o = json_loadb(reply.data ? reply.data : "", reply.len, 0, NULL);

		cbb_err(err, "no capacity in pool %s: need %lld GPU(s), %lld free",
			jstr(o, "pool") ? jstr(o, "pool") : j->req->pool,
			(long long)json_integer_value(json_object_get(o, "need")),
			(long long)json_integer_value(json_object_get(o, "free")));
		json_decref(o);
		rc = CBB_CTL_NO_CAPACITY;
	} else if (status >= 400 && status < 500) {
		json_t *o = json_loadb(reply.data ? reply.data : "", reply.len, 0, NULL);

		cbb_err(err, "the controller refused the request (HTTP %ld): %s",
			status, jstr(o, "message") ? jstr(o, "message") : "");
		cbb_one_line(err->msg);
		json_decref(o);
		rc = CBB_CTL_REFUSED;
	} else {
		if (status > 0)
			cbb_err(err, "the controller answered HTTP %ld", status);
		rc = CBB_CTL_TRANSIENT;
	}
	cbb_buf_free(&reply); /* secret: wiped */
	return rc;
}

cbb_ctl_rc_t cbb_ctl_release(const cbb_config_t *cfg, const char *cluster,
			     uint32_t job_id, cbb_err_t *err)
{
	cbb_buf_t reply;
	long status;

	cbb_buf_init(&reply, REPLY_MAX);
	cbb_buf_secret(&reply); /* a controller may echo the session */
	status = request(cfg, "DELETE", cluster, job_id, NULL, &reply, err);
	cbb_buf_free(&reply);
	if (status == 200 || status == 204)
		return CBB_CTL_OK;
	if (status == 404)
		return CBB_CTL_GONE;
	if (status > 0)
		cbb_err(err, "the controller answered HTTP %ld to the release",
			status);
	return CBB_CTL_TRANSIENT;
}

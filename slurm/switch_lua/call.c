/*
 * call.c - what every part of the plugin needs: its settings
 * (SwitchParameters), one call of a hook of switch.lua through the
 * helper (run.c), the script's two answers at load, and the jobinfo's
 * allocation.
 */
#include "src/common/slurm_xlator.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "frame.h"
#include "swl.h"

swl_conf_t swl_conf;

/* the two hooks asked once, when slurmctld loads the plugin */
static bool block_job_complete_v, special_steps_v;

/* ---- settings ----------------------------------------------------------- */

/* key=value from SwitchParameters, else SlurmctldParameters (xfree it) */
static char *param(const char *key)
{
	char *v = conf_get_opt_str(slurm_conf.switch_param, key);

	if (!v)
		v = conf_get_opt_str(slurm_conf.slurmctld_params, key);
	return v;
}

static unsigned param_uint(const char *key, unsigned dflt, unsigned max)
{
	char *v = param(key), *end = NULL;
	unsigned long n;

	if (!v)
		return dflt;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || !*v || *end || n > max) {
		error("%s: %s%s is not a whole number up to %u: using %u",
		      SWL_TYPE, key, v, max, dflt);
		n = dflt;
	}
	xfree(v);
	return (unsigned)n;
}

void swl_conf_read(void)
{
	char *v;

	swl_conf.timeout_s = param_uint("switch_timeout=", 30, 3600);
	if (!swl_conf.timeout_s)
		swl_conf.timeout_s = 1;
	swl_conf.retries = param_uint("switch_retries=", 3, 1000);
	swl_conf.retry_interval_s = param_uint("switch_retry_interval=", 30,
					       3600);
	swl_conf.workers = param_uint("switch_workers=", 16, 256);
	if (!swl_conf.workers)
		swl_conf.workers = 1;
	swl_conf.drain_on_failure = true;
	if ((v = param("switch_drain_on_failure="))) {
		swl_conf.drain_on_failure = xstrcasecmp(v, "no") &&
					    xstrcasecmp(v, "false") &&
					    xstrcmp(v, "0");
		xfree(v);
	}
	xfree(swl_conf.helper);
	if (!(swl_conf.helper = param("switch_lua_helper=")))
		swl_conf.helper = xstrdup(SWL_HELPER_PATH);
	xfree(swl_conf.script);
	if (!(swl_conf.script = param("switch_lua_script=")))
		swl_conf.script = get_extra_conf_path("switch.lua");
}

/* ---- one helper call --------------------------------------------------- */

static void log_line(const void *ctx, char level, const char *msg,
		     size_t len)
{
	const char *what = ctx;
	int n = len > 4000 ? 4000 : (int)len;

	switch (level) {
	case SWL_LOG_ERROR:
		error("%s: %s%.*s", SWL_TYPE, what, n, msg);
		break;
	case SWL_LOG_VERBOSE:
		verbose("%s: %s%.*s", SWL_TYPE, what, n, msg);
		break;
	case SWL_LOG_DEBUG:
		debug("%s: %s%.*s", SWL_TYPE, what, n, msg);
		break;
	default:
		info("%s: %s%.*s", SWL_TYPE, what, n, msg);
	}
}

void swl_call(const char *hook, const char *what, const swl_out_t *arg1,
	      const unsigned char *arg2, size_t arg2_len, swl_call_t *c)
{
	swl_out_t req;
	swl_val_t top, v;

	memset(c, 0, sizeof(*c));
	c->value.tag = 'n';
	swl_out_init(&req);
	swl_open(&req);
	swl_kv_str(&req, "hook", hook);
	swl_kv_str(&req, "script", swl_conf.script);
	swl_kv_str(&req, "cluster", slurm_conf.cluster_name);
	swl_put_cstr(&req, "args");
	swl_open(&req);
	if (arg1) {
		swl_put_int(&req, 1);
		swl_put_raw(&req, arg1->data, arg1->len);
	}
	if (arg2) {
		swl_put_int(&req, 2);
		swl_put_raw(&req, arg2, arg2_len);
	}
	swl_close(&req);
	swl_close(&req);
	if (req.bad) {
		c->outcome = SWL_NOT_RUN;
		snprintf(c->msg, sizeof(c->msg), "its request is too large");
		swl_out_free(&req);
		return;
	}
	swl_run(swl_conf.helper, hook, req.data, req.len,
		swl_conf.timeout_s * 1000, log_line, what, &c->run);
	swl_out_free(&req);

	switch (c->run.status) {
	case SWL_RUN_NOSTART:
		c->outcome = SWL_NOT_RUN;
		snprintf(c->msg, sizeof(c->msg), "%s", c->run.why);
		return;
	case SWL_RUN_TIMEOUT:
		c->outcome = SWL_TIMED_OUT;
		snprintf(c->msg, sizeof(c->msg), "killed after switch_timeout="
			 "%us", swl_conf.timeout_s);
		return;
	case SWL_RUN_SIGNALED:
		c->outcome = SWL_TIMED_OUT;
		snprintf(c->msg, sizeof(c->msg), "died on signal %d",
			 WTERMSIG(c->run.wstatus));
		return;
	case SWL_RUN_EXITED:
		c->outcome = SWL_EXITED;
		snprintf(c->msg, sizeof(c->msg), "exited (status %d) without "
			 "returning", WIFEXITED(c->run.wstatus) ?
			 WEXITSTATUS(c->run.wstatus) : -1);
		return;
	case SWL_RUN_ANSWERED:
		break;
	}
	if (!swl_valid(c->run.answer, c->run.answer_len) ||
	    !swl_get(c->run.answer, c->run.answer + c->run.answer_len, &top) ||
	    top.tag != '{' || !swl_field(&top, "status", &v) || v.tag != 's') {
		c->outcome = SWL_EXITED;
		snprintf(c->msg, sizeof(c->msg), "its answer is not readable");
		return;
	}
	if (v.n == 2 && !memcmp(v.s, "ok", 2))
		c->outcome = SWL_OK;
	else if (v.n == 5 && !memcmp(v.s, "badrc", 5))
		c->outcome = SWL_BAD_RC;
	else if (v.n == 7 && !memcmp(v.s, "unsaved", 7))
		c->outcome = SWL_UNSAVED;
	else
		c->outcome = SWL_LUA_ERROR;
	if (swl_field(&top, "rc", &v) && v.tag == 'i')
		c->rc = (int)v.i;
	if (swl_field(&top, "msg", &v) && v.tag == 's')
		snprintf(c->msg, sizeof(c->msg), "%.*s", (int)v.n, v.s);
	if (c->outcome == SWL_OK && swl_field(&top, "value", &v))
		c->value = v;
}

void swl_call_free(swl_call_t *c)
{
	swl_run_free(&c->run);
}

const char *swl_outcome_str(const swl_call_t *c)
{
	switch (c->outcome) {
	case SWL_OK:
		return "returned";
	case SWL_LUA_ERROR:
		return "failed";
	case SWL_BAD_RC:
		return "returned no number";
	case SWL_UNSAVED:
		return "returned a jobinfo that cannot be stored";
	case SWL_EXITED:
		return "exited without returning";
	case SWL_TIMED_OUT:
		return "timed out";
	case SWL_NOT_RUN:
		return "could not run";
	}
	return "?";
}

swl_jobinfo_t *swl_jobinfo_new(void)
{
	static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seq;
	swl_jobinfo_t *ji = xmalloc(sizeof(*ji));

	ji->magic = SWL_MAGIC;
	slurm_mutex_lock(&seq_lock);
	ji->seq = ++seq;
	slurm_mutex_unlock(&seq_lock);
	return ji;
}

void swl_jobinfo_destroy(swl_jobinfo_t *ji)
{
	if (!ji)
		return;
	xassert(ji->magic == SWL_MAGIC);
	ji->magic = ~SWL_MAGIC;
	xfree(ji->blob);
	xfree(ji);
}


/* ---- the script's answers at load ---------------------------------------- */

bool swl_load_script(void)
{
	swl_call_t c;
	swl_val_t v;

	swl_call("load", "", NULL, NULL, 0, &c);
	if (c.outcome != SWL_OK) {
		error("%s: refusing to load %s: it %s: %s", SWL_TYPE,
		      swl_conf.script, swl_outcome_str(&c), c.msg);
		swl_call_free(&c);
		return false;
	}
	if (swl_field(&c.value, "block_job_complete", &v))
		block_job_complete_v = v.tag == 't';
	if (swl_field(&c.value, "setup_special_steps", &v))
		special_steps_v = v.tag == 't';
	swl_call_free(&c);
	info("%s: %s loaded: block_job_complete=%s setup_special_steps=%s "
	     "switch_timeout=%us switch_retries=%u switch_workers=%u",
	     SWL_TYPE, swl_conf.script, block_job_complete_v ? "yes" : "no",
	     special_steps_v ? "yes" : "no", swl_conf.timeout_s,
	     swl_conf.retries, swl_conf.workers);
	return true;
}

bool swl_block_job_complete(void)
{
	return block_job_complete_v;
}

bool swl_setup_special_steps(void)
{
	return special_steps_v;
}

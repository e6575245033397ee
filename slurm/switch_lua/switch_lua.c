/*
 * switch_lua.c - switch/lua: Slurm 26.05's switch interface handed to
 * switch.lua (../shared/reference/switch-lua-contract.md; what is
 * implemented, and what 26.05 does not allow, is in docs/switch.md).
 *
 * Every hook of the script runs in a helper process of its own
 * (switch-lua-run, helper.c) on a Lua state loaded for that call alone,
 * killed with its whole process group at switch_timeout.  slurmctld's
 * job_start and job_complete only snapshot the job and hand the call to
 * a thread (ctld.c); slurmstepd's step hooks wait for theirs (stepd.c).
 * srun and slurmd load the plugin too (slurmd loads every switch
 * plugin): there it does nothing.
 *
 * This file: the symbols Slurm looks up, the settings, the jobinfo kept
 * on the job record and its stepinfo copies, and one helper call.
 */
#include "src/common/slurm_xlator.h"

#include <errno.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/switch.h"
#include "src/slurmctld/slurmctld.h"

#include "frame.h"
#include "ops.h"
#include "swl.h"

/* Required Slurm plugin symbols */
const char plugin_name[] = "switch/lua: hooks in switch.lua";
const char plugin_type[] = "switch/lua";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
/* Required for switch plugins */
const uint32_t plugin_id = SWL_PLUGIN_ID;

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
		      plugin_type, key, v, max, dflt);
		n = dflt;
	}
	xfree(v);
	return (unsigned)n;
}

static void read_conf(void)
{
	char *v;

	swl_conf.timeout_s = param_uint("switch_timeout=", 30, 3600);
	if (!swl_conf.timeout_s)
		swl_conf.timeout_s = 1;
	swl_conf.retries = param_uint("switch_retries=", 3, 1000);
	swl_conf.retry_interval_s = param_uint("switch_retry_interval=", 30,
					       3600);
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
		error("%s: %s%.*s", plugin_type, what, n, msg);
		break;
	case SWL_LOG_VERBOSE:
		verbose("%s: %s%.*s", plugin_type, what, n, msg);
		break;
	case SWL_LOG_DEBUG:
		debug("%s: %s%.*s", plugin_type, what, n, msg);
		break;
	default:
		info("%s: %s%.*s", plugin_type, what, n, msg);
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
	swl_run(swl_conf.helper, req.data, req.len, swl_conf.timeout_s * 1000,
		log_line, what, &c->run);
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

/* ---- plugin load -------------------------------------------------------- */

extern int init(void)
{
	swl_call_t c;
	swl_val_t v;

	if (!running_in_slurmctld() && !running_in_slurmstepd())
		return SLURM_SUCCESS; /* srun, slurmd, commands: inert */
	read_conf();
	if (running_in_slurmstepd())
		return SLURM_SUCCESS;
	if (swl_ctld_init() != SLURM_SUCCESS)
		return SLURM_ERROR;
	/* the two hooks asked once: changes apply on restart/reconfigure */
	swl_call("load", "", NULL, NULL, 0, &c);
	if (c.outcome != SWL_OK) {
		error("%s: refusing to load %s: it %s: %s", plugin_type,
		      swl_conf.script, swl_outcome_str(&c), c.msg);
		swl_call_free(&c);
		return SLURM_ERROR;
	}
	if (swl_field(&c.value, "block_job_complete", &v))
		block_job_complete_v = v.tag == 't';
	if (swl_field(&c.value, "setup_special_steps", &v))
		special_steps_v = v.tag == 't';
	swl_call_free(&c);
	info("%s: %s loaded: block_job_complete=%s setup_special_steps=%s "
	     "switch_timeout=%us switch_retries=%u", plugin_type,
	     swl_conf.script, block_job_complete_v ? "yes" : "no",
	     special_steps_v ? "yes" : "no", swl_conf.timeout_s,
	     swl_conf.retries);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	if (running_in_slurmctld())
		swl_ctld_fini();
	swl_run_stop_all();
	/* swl_conf stays: a thread may still be between its helper's end
	 * and the check of ctld.c's stopping flag; the daemon is ending */
}

bool swl_block_job_complete(void)
{
	return block_job_complete_v;
}

/* ---- state -------------------------------------------------------------- */

extern int switch_p_save(void)
{
	return SLURM_SUCCESS; /* everything lives in the job records */
}

extern int switch_p_restore(bool recover)
{
	/* called before the job state is read: ctld.c waits for it */
	if (running_in_slurmctld())
		swl_ctld_restore();
	return SLURM_SUCCESS;
}

/* ---- jobinfo: on the job record, in the job state file ------------------ */

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

extern void switch_p_jobinfo_pack(void *data, buf_t *buffer,
				  uint16_t protocol_version)
{
	swl_jobinfo_t *ji = data;

	xassert(!ji || ji->magic == SWL_MAGIC);
	/* our own format, whatever protocol_version: read back as is */
	pack16(SWL_FORMAT, buffer);
	pack16(ji ? ji->state : 0, buffer);
	pack16(ji ? ji->flags : 0, buffer);
	pack32(ji ? ji->job_id : 0, buffer);
	pack64(ji ? ji->sluid : 0, buffer);
	pack16(ji ? ji->restart_cnt : 0, buffer);
	pack_time(ji ? ji->start_time : 0, buffer);
	pack32(ji ? ji->retries : 0, buffer);
	packmem(ji ? (char *)ji->blob : NULL, ji ? ji->blob_len : 0, buffer);
}

/*
 * Where this plugin's bytes end in buffer, or 0 when that cannot be
 * known.  Slurm packs a plugin's jobinfo and stepinfo as a length (32
 * bits, network order), the plugin's id (32 bits), then the plugin's own
 * bytes (dynamic_plugin_data_pack, src/common/dynamic_plugin_data.c);
 * unpack is called just after the id.  With it, what this build cannot
 * read (a later or earlier format, a damaged record) is skipped whole
 * and declined, and Slurm's load of the job state goes on.
 */
static uint32_t data_end(buf_t *buffer)
{
	const unsigned char *p = (const unsigned char *)get_buf_data(buffer);
	uint32_t off = get_buf_offset(buffer), len;

	if (!p || off < 8)
		return 0;
	len = (uint32_t)p[off - 8] << 24 | (uint32_t)p[off - 7] << 16 |
	      (uint32_t)p[off - 6] << 8 | (uint32_t)p[off - 5];
	if (len < 4 || len - 4 > size_buf(buffer) - off)
		return 0;
	return off - 4 + len;
}

/* Skip what cannot be read: SLURM_SUCCESS with nothing (declined), or
 * SLURM_ERROR when the end is unknown. */
static int decline(buf_t *buffer, uint32_t end, const char *what,
		   uint16_t format, const char *why)
{
	if (!end || end < get_buf_offset(buffer)) {
		error("%s: %s unpack error (format %u): %s", plugin_type, what,
		      format, why);
		return SLURM_ERROR;
	}
	error("%s: %s (format %u, this build reads %u) declined: %s; the "
	      "job has no switch/lua session", plugin_type, what, format,
	      SWL_FORMAT, why);
	set_buf_offset(buffer, end);
	return SLURM_SUCCESS;
}

extern int switch_p_jobinfo_unpack(void **data, buf_t *buffer,
				   uint16_t protocol_version)
{
	swl_jobinfo_t *ji = NULL;
	uint16_t format = 0;
	char *blob = NULL;
	uint32_t len = 0, end = data_end(buffer);

	*data = NULL;
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		goto unpack_error;
	safe_unpack16(&format, buffer);
	if (format != SWL_FORMAT)
		return decline(buffer, end, "jobinfo", format,
			       "made by another switch/lua build");
	ji = swl_jobinfo_new();
	safe_unpack16(&ji->state, buffer);
	safe_unpack16(&ji->flags, buffer);
	safe_unpack32(&ji->job_id, buffer);
	safe_unpack64(&ji->sluid, buffer);
	safe_unpack16(&ji->restart_cnt, buffer);
	safe_unpack_time(&ji->start_time, buffer);
	safe_unpack32(&ji->retries, buffer);
	safe_unpackmem_xmalloc(&blob, &len, buffer);
	if (ji->state < SWL_SETUP || ji->state > SWL_DONE ||
	    (len && !swl_valid((unsigned char *)blob, len))) {
		xfree(blob);
		swl_jobinfo_destroy(ji);
		return decline(buffer, end, "jobinfo", format,
			       "a state or blob it does not know");
	}
	ji->blob = (unsigned char *)blob;
	ji->blob_len = len;
	blob = NULL;
	if (!ji->blob_len)
		xfree(ji->blob);
	*data = ji;
	return SLURM_SUCCESS;

unpack_error:
	xfree(blob);
	swl_jobinfo_destroy(ji);
	return decline(buffer, end, "jobinfo", format, "short or damaged");
}

/* switch.c hands over the job record, not the jobinfo (26.05) */
extern void switch_p_jobinfo_free(void *arg)
{
	job_record_t *job_ptr = arg;

	if (!job_ptr)
		return;
	swl_jobinfo_destroy(job_ptr->switch_jobinfo);
	job_ptr->switch_jobinfo = NULL;
}

/* ---- stepinfo: the accepted jobinfo, copied into every step ------------- */

static swl_stepinfo_t *stepinfo_new(uint32_t job_id, const unsigned char *blob,
				    uint32_t len)
{
	swl_stepinfo_t *si = xmalloc(sizeof(*si));

	si->magic = SWL_MAGIC;
	si->job_id = job_id;
	si->blob = xmalloc(len);
	memcpy(si->blob, blob, len);
	si->blob_len = len;
	return si;
}

extern int switch_p_stepinfo_build(void **stepinfo, void *data,
				   step_record_t *step_ptr)
{
	swl_jobinfo_t *ji = data;

	*stepinfo = NULL;
	/* declined, still in setup or over: no stepinfo, no step hooks */
	if (!ji || ji->magic != SWL_MAGIC || ji->state != SWL_READY ||
	    !ji->blob_len)
		return SLURM_SUCCESS;
	*stepinfo = stepinfo_new(ji->job_id, ji->blob, ji->blob_len);
	return SLURM_SUCCESS;
}

extern void switch_p_stepinfo_duplicate(void *source, void **dest)
{
	swl_stepinfo_t *si = source;

	*dest = NULL;
	if (si && si->magic == SWL_MAGIC && si->blob_len)
		*dest = stepinfo_new(si->job_id, si->blob, si->blob_len);
}

extern void switch_p_stepinfo_free(void *stepinfo)
{
	swl_stepinfo_t *si = stepinfo;

	if (!si)
		return;
	xassert(si->magic == SWL_MAGIC);
	si->magic = ~SWL_MAGIC;
	xfree(si->blob);
	xfree(si);
}

extern void switch_p_stepinfo_pack(void *stepinfo, buf_t *buffer,
				   uint16_t protocol_version)
{
	swl_stepinfo_t *si = stepinfo;

	pack16(SWL_FORMAT, buffer);
	pack32(si ? si->job_id : 0, buffer);
	packmem(si ? (char *)si->blob : NULL, si ? si->blob_len : 0, buffer);
}

extern int switch_p_stepinfo_unpack(void **stepinfo, buf_t *buffer,
				    uint16_t protocol_version)
{
	uint16_t format = 0;
	uint32_t job_id = 0, len = 0, end = data_end(buffer);
	char *blob = NULL;

	*stepinfo = NULL;
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		goto unpack_error;
	safe_unpack16(&format, buffer);
	if (format != SWL_FORMAT)
		return decline(buffer, end, "stepinfo", format,
			       "made by another switch/lua build");
	safe_unpack32(&job_id, buffer);
	safe_unpackmem_xmalloc(&blob, &len, buffer);
	if (len && !swl_valid((unsigned char *)blob, len)) {
		xfree(blob);
		return decline(buffer, end, "stepinfo", format,
			       "a blob it does not know");
	}
	if (len) {
		swl_stepinfo_t *si = xmalloc(sizeof(*si));

		si->magic = SWL_MAGIC;
		si->job_id = job_id;
		si->blob = (unsigned char *)blob;
		si->blob_len = len;
		*stepinfo = si;
	} else {
		xfree(blob);
	}
	return SLURM_SUCCESS;

unpack_error:
	xfree(blob);
	return decline(buffer, end, "stepinfo", format, "short or damaged");
}

/* ---- asked once ---------------------------------------------------------- */

extern bool switch_p_setup_special_steps(void)
{
	/*
	 * slurmctld: the script's answer at load, so batch (and
	 * interactive, extern) steps get a stepinfo.  slurmstepd: yes, so
	 * job_init sees special steps; it asks the script only for a step
	 * that carries a stepinfo (stepd.c), and a stepinfo exists only
	 * when slurmctld's answer was yes.
	 */
	if (running_in_slurmstepd())
		return true;
	return special_steps_v;
}

/* ---- the job's lifecycle, in slurmctld (ctld.c) ------------------------- */

extern int switch_p_job_start(job_record_t *job_ptr, bool test_only)
{
	/* test_only asks "could it start now?": only job_start can tell,
	 * and it may not run under the scheduler's locks */
	if (!test_only)
		swl_ctld_job_start(job_ptr);
	return SLURM_SUCCESS;
}

extern void switch_p_job_complete(job_record_t *job_ptr)
{
	swl_ctld_job_complete(job_ptr);
}

/* ---- the rest of the op table: nothing for switch.lua to do ------------- */

extern int switch_p_job_attach(void *stepinfo, char ***env, uint32_t nodeid,
			       uint32_t procid, uint32_t nnodes,
			       uint32_t nprocs, uint32_t rank)
{
	return SLURM_SUCCESS;
}

extern int switch_p_job_step_complete(void *stepinfo, char *nodelist)
{
	return SLURM_SUCCESS;
}

extern uint32_t switch_p_job_channel(job_record_t *job_ptr, char *node_name)
{
	return NO_VAL;
}

extern int switch_p_fs_init(stepd_step_rec_t *step)
{
	return SLURM_SUCCESS;
}

extern void switch_p_stepmgr_init(void)
{
}

extern void switch_p_stepmgr_fini(uint32_t job_id)
{
}

/*
 * stepd.c - switch/lua in slurmstepd: step_preinit, step_init and
 * step_postfini, as root, for steps that carry a stepinfo (so only
 * steps of jobs whose job_start was accepted).  Slurm calls preinit and
 * postfini for normal steps only (mgr.c), init also for batch and
 * interactive steps when setup_special_steps says so.
 *
 * Each call waits for its helper (the step cannot go on before the
 * answer), bounded by switch_timeout.  A Lua error, a timeout or a
 * helper that cannot run is logged and the step goes on (fail-open);
 * an explicit negative return is enforced: preinit and init fail the
 * step ("Error configuring interconnect"), postfini drains the node.
 * step_init's environment is applied to step->env, which becomes every
 * task's environment; Slurm's setup_env() runs later and overwrites
 * the SLURM_* names.
 */
#include "src/common/slurm_xlator.h"

#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/env.h"
#include "src/common/sluid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/cred.h"
#include "src/interfaces/switch.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "ops.h"
#include "swl.h"

static const char *step_type(const stepd_step_rec_t *step)
{
	if (step->batch)
		return "batch";
	if (step->step_id.step_id == SLURM_INTERACTIVE_STEP)
		return "interactive";
	if (step->step_id.step_id == SLURM_EXTERN_CONT)
		return "extern";
	return "normal";
}

static bool normal_step(const stepd_step_rec_t *step)
{
	return !strcmp(step_type(step), "normal");
}

static const swl_stepinfo_t *stepinfo_of(const stepd_step_rec_t *step)
{
	const swl_stepinfo_t *si;

	if (!step->switch_step || !(si = step->switch_step->data))
		return NULL;
	return si->magic == SWL_MAGIC && si->blob_len ? si : NULL;
}

/* The step as switch.lua sees it: job_id, sluid, partition (normal
 * steps only: their launch credential carries it), and more. */
static void step_table(const stepd_step_rec_t *step, swl_out_t *o)
{
	char sluid[64];

	print_sluid(step->step_id.sluid, sluid, sizeof(sluid));
	swl_out_init(o);
	swl_open(o);
	swl_kv_int(o, "job_id", step->step_id.job_id);
	swl_kv_int(o, "step_id", step->step_id.step_id);
	swl_kv_str(o, "sluid", sluid);
	swl_kv_str(o, "type", step_type(step));
	swl_kv_str(o, "node_name", step->node_name);
	swl_kv_int(o, "node_id", step->nodeid);
	swl_kv_int(o, "num_nodes", step->nnodes);
	swl_kv_int(o, "user_id", step->uid);
	swl_kv_str(o, "user_name", step->user_name);
	if (normal_step(step) && step->msg && step->msg->cred) {
		slurm_cred_arg_t *arg = slurm_cred_get_args(step->msg->cred);

		if (arg) {
			swl_kv_str(o, "partition", arg->job_partition);
			slurm_cred_unlock_args(step->msg->cred);
		}
	}
	swl_close(o);
}

/*
 * Run a step hook.  Returns 1 when it returned (c is set), 0 when the
 * step has no stepinfo or the call failed open (logged), and always
 * leaves c to be freed.
 */
static int step_call(const char *hook, const stepd_step_rec_t *step,
		     swl_call_t *c)
{
	const swl_stepinfo_t *si = stepinfo_of(step);
	char what[96];
	swl_out_t tbl;

	memset(c, 0, sizeof(*c));
	if (!si)
		return 0;
	snprintf(what, sizeof(what), "JobId=%u StepId=%u %s: ",
		 step->step_id.job_id, step->step_id.step_id, hook);
	step_table(step, &tbl);
	swl_call(hook, what, &tbl, si->blob, si->blob_len, c);
	swl_out_free(&tbl);
	if (c->outcome != SWL_OK) {
		/* fail-open: a broken script must not stop the work */
		error("%s: %s%s: %s (the step proceeds)", plugin_type, what,
		      swl_outcome_str(c), c->msg);
		return 0;
	}
	if (c->rc > 0)
		info("%s: %sreturned %d (logged only)", plugin_type, what,
		     c->rc);
	else if (c->rc < 0)
		error("%s: %sreturned %d", plugin_type, what, c->rc);
	else
		verbose("%s: %sreturned 0", plugin_type, what);
	return 1;
}

extern int switch_p_job_preinit(stepd_step_rec_t *step)
{
	swl_call_t c;
	int rc = SLURM_SUCCESS;

	if (step_call("step_preinit", step, &c) && c.rc < 0)
		rc = SLURM_ERROR; /* ESLURM_INTERCONNECT_FAILURE */
	swl_call_free(&c);
	return rc;
}

/* A name a process environment can hold: [A-Za-z_][A-Za-z0-9_]*. */
static bool env_name_ok(const unsigned char *s, size_t n)
{
	size_t i;

	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/*
 * Set (or, for false, unset) each name of step_init's environment.  A
 * name that is not a variable name (a newline in it would forge another
 * variable) or a value with a NUL (it would be cut there) is refused,
 * logged, and left out.
 */
static void apply_env(stepd_step_rec_t *step, const swl_val_t *env)
{
	const unsigned char *p = env->s, *end = env->s + env->n;

	while (p && p < end) {
		swl_val_t k, v;
		char *name, *value;

		p = swl_get(p, end, &k);
		if (!p || !(p = swl_get(p, end, &v)) || k.tag != 's')
			break;
		if (!env_name_ok(k.s, k.n) ||
		    (v.tag == 's' && memchr(v.s, '\0', v.n))) {
			error("%s: step_init: environment entry %.*s refused: "
			      "%s", plugin_type, (int)(k.n > 64 ? 64 : k.n),
			      env_name_ok(k.s, k.n) ? (const char *)k.s : "?",
			      env_name_ok(k.s, k.n) ? "a NUL in its value" :
			      "not a variable name");
			continue;
		}
		name = xstrndup((const char *)k.s, k.n);
		if (v.tag == 's') {
			value = xstrndup((const char *)v.s, v.n);
			env_array_overwrite(&step->env, name, value);
			xfree(value);
		} else if (v.tag == 'f') {
			unsetenvp(step->env, name);
		}
		xfree(name);
	}
}

extern int switch_p_job_init(stepd_step_rec_t *step)
{
	static int special = -1; /* setup_special_steps, asked once */
	swl_call_t c;
	int rc = SLURM_SUCCESS;

	if (!stepinfo_of(step))
		return SLURM_SUCCESS;
	if (!normal_step(step)) {
		if (special < 0) {
			swl_val_t v;

			swl_call("load", "", NULL, NULL, 0, &c);
			special = c.outcome == SWL_OK &&
				  swl_field(&c.value, "setup_special_steps", &v) &&
				  v.tag == 't';
			swl_call_free(&c);
		}
		if (!special)
			return SLURM_SUCCESS;
	}
	if (step_call("step_init", step, &c)) {
		if (c.rc < 0)
			rc = SLURM_ERROR; /* ESLURM_INTERCONNECT_FAILURE */
		else if (c.value.tag == '{')
			apply_env(step, &c.value);
	}
	swl_call_free(&c);
	return rc;
}

extern int switch_p_job_postfini(stepd_step_rec_t *step)
{
	swl_call_t c;
	int rc = SLURM_SUCCESS;

	/* Slurm calls it for normal steps only; a negative rc drains */
	if (step_call("step_postfini", step, &c) && c.rc < 0)
		rc = SLURM_ERROR;
	swl_call_free(&c);
	return rc;
}

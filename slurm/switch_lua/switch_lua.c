/*
 * switch_lua.c - switch/lua: Slurm 26.05's switch interface handed to
 * switch.lua (../shared/reference/switch-lua-contract.md; what is
 * implemented, and what 26.05 does not allow, is in docs/switch.md).
 *
 * Every hook of the script runs in a helper process of its own
 * (switch-lua-run, helper.c) on a Lua state loaded for that call alone,
 * killed with its whole process group at switch_timeout.  slurmctld's
 * job_start and job_complete only snapshot the job and queue the call
 * for a worker (ctld.c, teardown.c, pool.c); slurmstepd's step hooks wait
 * for theirs (stepd.c).
 * srun and slurmd load the plugin too (slurmd loads every switch
 * plugin): there it does nothing.
 *
 * This file: the symbols Slurm looks up, and the jobinfo kept on the job
 * record and its stepinfo copies.
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

#include "ops.h"
#include "swl.h"

/* Required Slurm plugin symbols */
const char plugin_name[] = "switch/lua: hooks in switch.lua";
const char plugin_type[] = SWL_TYPE;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
/* Required for switch plugins */
const uint32_t plugin_id = SWL_PLUGIN_ID;

/* ---- plugin load -------------------------------------------------------- */

extern int init(void)
{
	if (!running_in_slurmctld() && !running_in_slurmstepd())
		return SLURM_SUCCESS; /* srun, slurmd, commands: inert */
	swl_conf_read();
	if (running_in_slurmstepd())
		return SLURM_SUCCESS;
	if (swl_ctld_init() != SLURM_SUCCESS)
		return SLURM_ERROR;
	/* the two hooks asked once: changes apply on restart/reconfigure */
	return swl_load_script() ? SLURM_SUCCESS : SLURM_ERROR;
}

extern void fini(void)
{
	if (running_in_slurmctld())
		swl_ctld_fini();
	/* helpers still running are Slurm's to kill (run_command_shutdown);
	 * swl_conf stays: a worker may still be between its helper's end
	 * and its check that the plugin is stopping; the daemon is ending */
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

/*
 * The format a peer speaking protocol_version reads: one row per Slurm
 * release whose switch/lua packs a newer format than the row before;
 * this build's own release packs SWL_FORMAT.  (Format 1, 26.05, is the
 * first: every format so far has the same fields.)
 */
static const struct {
	uint16_t protocol_version;
	uint16_t format;
} formats[] = {
	{ SLURM_26_05_PROTOCOL_VERSION, 1 },
};

static uint16_t format_for(uint16_t protocol_version)
{
	uint16_t f = SWL_FORMAT_MIN;
	size_t i;

	if (protocol_version >= SLURM_PROTOCOL_VERSION)
		return SWL_FORMAT;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (protocol_version >= formats[i].protocol_version)
			f = formats[i].format;
	return f < SWL_FORMAT ? f : SWL_FORMAT;
}

static bool readable(uint16_t format)
{
	return format >= SWL_FORMAT_MIN && format <= SWL_FORMAT;
}

extern void switch_p_jobinfo_pack(void *data, buf_t *buffer,
				  uint16_t protocol_version)
{
	swl_jobinfo_t *ji = data;

	xassert(!ji || ji->magic == SWL_MAGIC);
	pack16(format_for(protocol_version), buffer);
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
	error("%s: %s (format %u, this build reads %u to %u) declined: %s; "
	      "the job has no switch/lua session", plugin_type, what, format,
	      SWL_FORMAT_MIN, SWL_FORMAT, why);
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
	if (!readable(format))
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

	pack16(format_for(protocol_version), buffer);
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
	if (!readable(format))
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
	return swl_setup_special_steps();
}

/* ---- the job's lifecycle, in slurmctld (ctld.c, teardown.c) ------------- */

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

/*
 * ops.h - what Slurm 26.05 looks up in a switch plugin
 * (src/interfaces/switch.c, syms[]): plugin_id and 22 switch_p_*
 * functions, besides every plugin's plugin_name, plugin_type,
 * plugin_version, init and fini.  A missing one fails the load.
 * switch_lua.map exports exactly these.
 */
#ifndef SWL_OPS_H
#define SWL_OPS_H

#include "src/interfaces/switch.h"

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
extern const uint32_t plugin_id;

extern int init(void);
extern void fini(void);

extern int switch_p_save(void);
extern int switch_p_restore(bool recover);
extern void switch_p_jobinfo_pack(void *jobinfo, buf_t *buffer,
				  uint16_t protocol_version);
extern int switch_p_jobinfo_unpack(void **jobinfo, buf_t *buffer,
				   uint16_t protocol_version);
/* 26.05's switch_g_jobinfo_free passes the job record (switch.c:336) */
extern void switch_p_jobinfo_free(void *job_ptr);
extern int switch_p_stepinfo_build(void **stepinfo, void *jobinfo,
				   step_record_t *step_ptr);
extern void switch_p_stepinfo_duplicate(void *source, void **dest);
extern void switch_p_stepinfo_free(void *stepinfo);
extern void switch_p_stepinfo_pack(void *stepinfo, buf_t *buffer,
				   uint16_t protocol_version);
extern int switch_p_stepinfo_unpack(void **stepinfo, buf_t *buffer,
				    uint16_t protocol_version);
extern bool switch_p_setup_special_steps(void);
extern int switch_p_job_preinit(stepd_step_rec_t *step);
extern int switch_p_job_init(stepd_step_rec_t *step);
extern int switch_p_job_postfini(stepd_step_rec_t *step);
extern int switch_p_job_attach(void *stepinfo, char ***env, uint32_t nodeid,
			       uint32_t procid, uint32_t nnodes,
			       uint32_t nprocs, uint32_t rank);
extern int switch_p_job_step_complete(void *stepinfo, char *nodelist);
extern int switch_p_job_start(job_record_t *job_ptr, bool test_only);
extern void switch_p_job_complete(job_record_t *job_ptr);
extern uint32_t switch_p_job_channel(job_record_t *job_ptr, char *node_name);
extern int switch_p_fs_init(stepd_step_rec_t *step);
extern void switch_p_stepmgr_init(void);
extern void switch_p_stepmgr_fini(uint32_t job_id);

#endif

/*
 * hooks.h - the slurm_bb_* hooks Slurm's burst_buffer/lua calls, in
 * three files by where Slurm runs them: submit.c (job_process and pools,
 * inside slurmctld), staging.c (setup, data_in, test_data_in, real_size,
 * pre_run, post_run, data_out, test_data_out, job_teardown: a
 * slurmscriptd child each) and report.c (get_status, paths).
 */
#ifndef CBB_HOOKS_H
#define CBB_HOOKS_H

#include "compat.h"

/* Define the slurm_bb_* globals of each file. */
void cbb_register_bb_hooks(lua_State *L);
void cbb_register_stage_hooks(lua_State *L);
void cbb_register_report_hooks(lua_State *L);

/* conduit_bb.parse(text, job[, opts]) */
int cbb_l_parse(lua_State *L);

#endif

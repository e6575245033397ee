-- A switch.lua whose job_start never returns: the emulated host must
-- kill it at switch_timeout and tear the job down with a nil jobinfo.
function slurm_switch_block_job_complete() return false end
function slurm_switch_setup_special_steps() return false end
function slurm_switch_job_start() while true do end end
function slurm_switch_job_complete() return slurm.SUCCESS end

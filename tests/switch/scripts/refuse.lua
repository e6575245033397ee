-- refuse.lua - a script whose chunk refuses to load (returns 1)
function slurm_switch_job_start() return 0, {} end
return 1

-- nocluster.lua - every hook with no cluster name from Slurm (no
-- slurm.CLUSTER_NAME, no job_info.cluster), run by faults_spec.lua in a
-- child whose SLURM_CONF it chooses.  With a ClusterName in slurm.conf
-- every hook works; without, the hooks that need the name fail with one
-- clear line.  Args: module dir, work dir, script, expected ("ok" or the
-- message), verdict file.
local module_dir, work, script, expect, verdict = ...
package.cpath = module_dir .. "/?.so;" .. package.cpath
local logged = {}
_G.slurm = { SUCCESS = 0, ERROR = -1, SLURM_BB_BUSY = "BUSY",
             log = function(_, m) logged[#logged + 1] = m end,
             error = function(m) logged[#logged + 1] = m end }
require("conduit_bb")
-- squeue (tests/conduit/fake-squeue) says the job is pending
do
  local f = assert(io.open(assert(os.getenv("FAKE_SQUEUE_DIR")) .. "/5", "w"))
  f:write("PENDING")
  f:close()
end
local ji = setmetatable({}, { __index = function(_, k)
  return ({ job_id = 5, user_id = 61001, work_dir = work, restart_cnt = 0 })[k] end })
local results = {}
-- hooks that need the cluster's name fail without it; the others work
local function check(name, needs, ok, rc, msg)
  local good
  if expect == "ok" or not needs then
    good = ok and rc == 0
  else
    good = ok and rc == -1 and msg == expect
  end
  results[#results + 1] = (good and "ok " or "BAD ") .. name .. " " .. tostring(rc) .. " " ..
                          tostring(msg)
end
local u = "61001"
local hooks = {
  { "job_process", true, function() return slurm_bb_job_process(script, u, u, ji) end },
  { "pools", false, function() return slurm_bb_pools() end },
  { "setup", false, function() return slurm_bb_setup("5", u, u, "(null)", "0", script, ji) end },
  { "data_in", true, function() return slurm_bb_data_in("5", script, u, u, ji) end },
  { "test_data_in", true, function() return slurm_bb_test_data_in("5", script, u, u, ji) end },
  { "real_size", false, function() return slurm_bb_real_size("5", u, u, ji) end },
  { "paths", true, function() return slurm_bb_paths("5", script, work .. "/pathfile", u, u, ji) end },
  { "pre_run", false, function() return slurm_bb_pre_run("5", script, u, u, ji) end },
  { "post_run", false, function() return slurm_bb_post_run("5", script, u, u, ji) end },
  { "data_out", true, function() return slurm_bb_data_out("5", script, u, u, ji) end },
  { "test_data_out", true, function() return slurm_bb_test_data_out("5", script, u, u, ji) end },
  { "teardown", true, function() return slurm_bb_job_teardown("5", script, "false", u, u) end },
  { "get_status", true, function() return slurm_bb_get_status(u, u, "conduit", "5") end },
}
for _, h in ipairs(hooks) do
  local ok, rc, msg = pcall(h[3])
  if not ok then rc, msg = nil, rc end
  check(h[1], h[2], ok, rc, msg)
end
local f = assert(io.open(verdict, "w"))
f:write(table.concat(results, "\n") .. "\n")
f:close()

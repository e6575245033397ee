-- rewritten.lua - the stage-in hooks of an array's tasks as Slurm runs
-- them when a directive has a '%': each gets a rewritten script (only the
-- directive lines, symbols replaced) at a /proc/ path, and the job's own
-- script lies in StateSaveLocation.  Run by array_spec.lua in a child
-- whose SLURM_CONF it chooses (StateSaveLocation comes from there).
-- Args: module dir, work dir, verdict file, then one
-- "job_id:array_job_id:array_task_id:submit_time:script" per task.
-- Each task's data_in runs, then its test_data_in until it is not BUSY;
-- the verdict has a line "job_id data_in-rc test_data_in-rc message".
local module_dir, work, verdict = ...
local specs = { select(4, ...) }
package.cpath = module_dir .. "/?.so;" .. package.cpath
local function fresh()
  _G.slurm = { SUCCESS = 0, ERROR = -1, SLURM_BB_BUSY = "BUSY", CLUSTER_NAME = "testcluster",
               log = function() end, error = function() end }
  package.loaded.conduit_bb = nil
  require("conduit_bb")
end
local tasks = {}
for _, s in ipairs(specs) do
  local id, a, k, submit, script = s:match("^(%d+):(%d+):(%d+):(%d+):(.+)$")
  local t = { job_id = tonumber(id), user_id = 61001, work_dir = work, restart_cnt = 0,
              cluster = "testcluster", submit_time = tonumber(submit), job_state = 0,
              burst_buffer_state = "staging-in", array_job_id = tonumber(a),
              array_task_id = tonumber(k) }
  tasks[#tasks + 1] = { id = id, script = script,
                        info = setmetatable({}, { __index = function(_, f) return t[f] end }) }
end
local u = "61001"
for _, t in ipairs(tasks) do
  fresh()
  t.rc_in = slurm_bb_data_in(t.id, t.script, u, u, t.info)
end
local lines = {}
for _, t in ipairs(tasks) do
  local t0, rc, msg = os.time()
  repeat
    fresh()
    rc, msg = slurm_bb_test_data_in(t.id, t.script, u, u, t.info)
    local busy = rc == 0 and msg == "BUSY"
    if busy then os.execute("sleep 0.1") end
  until not busy or os.time() - t0 > 20
  lines[#lines + 1] = t.id .. " " .. tostring(t.rc_in) .. " " .. tostring(rc) .. " " .. tostring(msg)
end
local f = assert(io.open(verdict, "w"))
f:write(table.concat(lines, "\n") .. "\n")
f:close()

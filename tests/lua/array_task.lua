-- array_task.lua - one array task's staging hooks in a process of its
-- own, as slurmscriptd runs them (array_race_spec.lua starts many at once):
--   lua array_task.lua MODULE_DIR ACTION JOB SCRIPT WORKDIR ARRAY TASK SUBMIT [DELAY]
-- ACTION: "in" (data_in, then test_data_in until it stops saying BUSY),
-- "done" (the same, then the teardown at the job's end), "start"
-- (data_in only), "cancel" (data_in, then a hurried teardown), "teardown"
-- (a teardown only), "hurry" (a hurried teardown only); after DELAY
-- seconds.  Prints one line per hook:
-- name, rc, message.
local dir, action, job, script, workdir, array, task, submit, delay = ...
package.cpath = dir .. "/?.so;" .. package.cpath

local function fresh()
  _G.slurm = {
    SUCCESS = 0, ERROR = -1, SLURM_BB_BUSY = "BUSY", CLUSTER_NAME = "testcluster",
    log = function() end, error = function() end,
  }
  package.loaded.conduit_bb = nil
  return require("conduit_bb")
end

local t = { job_id = tonumber(job), user_id = 61001, work_dir = workdir, restart_cnt = 0,
            cluster = "testcluster", submit_time = tonumber(submit), job_state = 0,
            burst_buffer_state = "staging-in", array_job_id = tonumber(array),
            array_task_id = tonumber(task) }
local info = setmetatable({}, { __index = function(_, k) return t[k] end })
local uid = "61001"

local function say(hook, rc, msg)
  io.write(hook, " ", tostring(rc), " ", tostring(msg or ""):gsub("\n", " "), "\n")
  io.flush()
end

if delay and delay ~= "0" then os.execute("sleep " .. delay) end
if action ~= "teardown" and action ~= "hurry" then
  fresh()
  say("data_in", slurm_bb_data_in(job, script, uid, uid, info))
end
if action == "in" or action == "done" then
  local t0 = os.time()
  while true do
    fresh()
    local rc, msg = slurm_bb_test_data_in(job, script, uid, uid, info)
    if not (rc == 0 and msg == "BUSY") or os.time() - t0 > 60 then
      say("test_data_in", rc, msg)
      break
    end
    os.execute("sleep 0.1")
  end
end
if action == "done" or action == "cancel" or action == "teardown" or action == "hurry" then
  local hurry = (action == "cancel" or action == "hurry") and "true" or "false"
  fresh()
  say("teardown", slurm_bb_job_teardown(job, script, hurry, uid, uid))
end

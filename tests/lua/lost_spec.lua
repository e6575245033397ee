-- lost_spec.lua - a stage-out Slurm dropped (src/bb/engine/lost.c): a
-- data_out killed by a slurmctld restart is never run again, and Slurm
-- calls no stage-out hook of the job after it.  data_out saved what the
-- stage-out was to do; the next start or teardown of another job sweeps
-- StateDir, finds the job over with that stage-out never seen to end, and
-- does what its own test_data_out would have done, every sweep, until it
-- ends: nothing started twice, nothing started for a job Slurm still
-- stages out or that scancel --hurry dropped.  Each check waits on an
-- event (a file, an RPC in the server's log), never on the clock.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(9800)
local sh, slurp, spit, fresh, faults = H.sh, H.slurp, H.spit, H.fresh, H.faults
local new_job, info_of = H.new_job, H.info_of
local statedir, jobstates, work = H.statedir, H.jobstates, H.work

local COMPLETED = 3
-- (the AuditLog's directory may be written by its owner only)
local audit_dir = work .. "/lost-audit"
local audit = audit_dir .. "/audit.log"
local n = 0

local function exists(p) return sh("test -e '" .. p .. "'") end
local function plan_of(j) return statedir .. "/testcluster." .. j.id .. ".outplan" end
-- a sweep may run now (at most one a second over all hooks)
local function due() sh("touch -d '-1 min' " .. statedir .. "/sweep") end
-- one ran since due(): the marker's time is no longer a minute back
local function swept() return sh("test -n \"$(find " .. statedir .. "/sweep -newermt '-30 sec')\"") end

-- A job that ran, with two stage-out directives of its own files.
local function ran()
  n = n + 1
  local tag = "lost" .. n
  local j = new_job({ "#CONDUIT_POST cp in/a.txt out/" .. tag .. "-1.txt",
                      "#CONDUIT_POST cp in/a.txt out/" .. tag .. "-2.txt" }, { state = "STAGE_OUT" })
  j.tag = tag
  j.info = info_of(j, { job_state = COMPLETED, exit_code = 0, burst_buffer_state = "staging-out" })
  return j
end
-- ... whose data_out saved its plan and started nothing (the server
-- not taking starts), as one killed before its first start leaves it.
local function ran_unstarted()
  local j = ran()
  faults('{"unavailable": ["StartTransfer"]}')
  fresh()
  slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)
  faults()
  return j
end
local function out_key(j) return "SLURMJOB:" .. j.id .. ",CLUSTER:testcluster,.*SLURMTYPE:CONDUIT_POST," end
local function arrived(j)
  return slurp(work .. "/out/" .. j.tag .. "-1.txt") == "alpha\n" and
         slurp(work .. "/out/" .. j.tag .. "-2.txt") == "alpha\n"
end
-- StartTransfer calls the server took for the job's stage-out, all told
local function starts_of(j)
  local c = 0
  for line in (slurp(H.sdir .. "/rpc.log") or ""):gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and line:find("SLURMJOB:" .. j.id .. ",", 1, true) and
       line:find("SLURMTYPE:CONDUIT_POST,", 1, true) and line:find('"status": "OK"', 1, true) then
      c = c + 1
    end
  end
  return c
end
-- The job's stage-out transfers the server holds, from its saved state
-- (written whole a moment after each change): "N A", N of them, A active.
local function held(j)
  local p = io.popen("/usr/bin/python3 -c 'import json,sys\n" ..
    "t=json.load(open(sys.argv[1])).values()\n" ..
    "x=[v for v in t if v[\"comment\"].startswith(\"SLURMJOB:" .. j.id .. ",\") and " ..
    "\"SLURMTYPE:CONDUIT_POST,\" in v[\"comment\"] and not v[\"validationOnly\"]]\n" ..
    "print(len(x), sum(1 for v in x if v[\"active\"]))' " .. H.sdir .. "/state.json 2>/dev/null")
  local out = p:read("*l") or ""
  p:close()
  return out
end
-- A hook of another job that sweeps: the teardown of one that never
-- staged (it leaves nothing behind, so the sweeps' few places per round
-- never fill up with jobs of the test's own making).
local function other_hook()
  local o = new_job({ "#CONDUIT_PRE cp in/a.txt out/lost-other.txt" })
  fresh()
  slurm_bb_job_teardown(o.id, o.script, "false", o.uid, o.uid)
  if os.getenv("LOST_DEBUG") then
    for _, x in ipairs(H.logged()) do io.stderr:write(x.level, " ", x.msg, "\n") end
  end
end
-- Sweep until the job's plan is gone (its stage-out ended), at most `s`
-- seconds: each round is one sweep by another job's hook.
local function swept_to_end(j, s)
  return H.wait(function()
    due()
    other_hook()
    return not exists(plan_of(j))
  end, s or 60)
end
local function logged_has(pat)
  for _, x in ipairs(H.logged()) do if x.msg:find(pat) then return true end end
  return false
end

describe("a stage-out Slurm dropped is finished by the next hook's sweep", function()
  setup(function()
    H.workspace()
    assert(sh("mkdir -p " .. audit_dir .. " && chmod 0755 " .. audit_dir))
  end)
  before_each(function()
    H.clean()
    H.conf({ AuditLog = audit })
  end)
  after_each(function() faults() end)

  it("data_out saves the plan before it starts anything; a normal stage-out leaves nothing to finish", function()
    local j = ran()
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.is_true(exists(plan_of(j)))
    assert.are.equal("600", (io.popen("stat -c %a " .. plan_of(j)):read("*l")))
    -- each stage-out poll marks it: the time of the job's last one
    sh("touch -d '-11 min' " .. plan_of(j) .. " " .. plan_of(j) .. ".aged")
    assert.are.same({ 0 }, { H.poll("slurm_bb_test_data_out", j) })
    assert.is_true(sh("test " .. plan_of(j) .. " -nt " .. plan_of(j) .. ".aged"))
    -- seen to end: Slurm's job over now, a sweep starts nothing
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    due()
    other_hook()
    assert.is_true(swept()) -- (the other job's hook swept)
    assert.are.equal(2, starts_of(j))
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.is_false(exists(plan_of(j)))
  end)

  it("starts unanswered, then the hook killed: followed to the end, nothing started twice", function()
    local j = ran()
    -- the server stores each start, then answers too late for the hook
    -- (RequestTimeout=3): the starts are unconfirmed, as when Slurm
    -- kills data_out while it waits
    faults('{"start_then_stall_ms": 6000, "start_then_stall_comment": "' .. out_key(j) .. '"}')
    fresh()
    slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)
    -- (what it sent, the server stored at once; a machine slow enough
    -- may have sent only one within the hook's budget)
    assert.is_true(H.wait(function() return held(j):match("^[12] ") ~= nil end, 30))
    faults()
    spit(jobstates .. "/" .. j.id, "COMPLETED") -- Slurm runs no stage-out hook again
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    -- every transfer was stored before the stage was seen to end: once
    -- the saved state shows them all finished, it shows all there are
    assert.is_true(H.wait(function() return held(j):match(" 0$") ~= nil end, 30))
    assert.are.equal("2 0", held(j))
    assert.is_true(logged_has("job " .. j.id .. ": sweep %(from job %d+%): stage%-out of attempt 0 " ..
                              "completed after Slurm dropped it %(the job is COMPLETED%)"))
    -- the AuditLog says who finished it, one line per directive
    local lines = 0
    for l in (slurp(audit) or ""):gmatch("[^\n]+") do
      if l:find('"job":' .. j.id .. ',', 1, true) and l:find('"finished_by":"sweep"', 1, true) then lines = lines + 1 end
    end
    assert.are.equal(2, lines)
    -- its records went, as its teardown would have taken them
    assert.is_false(exists(statedir .. "/testcluster." .. j.id .. ".started"))
  end)

  it("nothing started before Slurm dropped it: the sweep starts each directive once", function()
    local j = ran_unstarted()
    assert.are.equal(0, starts_of(j))
    spit(jobstates .. "/" .. j.id, "FAILED")
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    assert.are.equal(2, starts_of(j))
  end)

  it("a stage-out poll killed, then the teardown: its records stay while the transfers run, a sweep ends it", function()
    local j = ran()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 600000}}') -- held until lifted below
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.is_true(H.wait(function() return starts_of(j) == 2 end, 30))
    -- Slurm counts the killed poll as the stage failing and, with
    -- TeardownFailure, tears the buffer down without hurry
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.is_true(logged_has("job " .. j.id .. ": teardown: stage%-out that Slurm dropped still runs"))
    assert.is_true(exists(plan_of(j)))
    assert.is_true(exists(statedir .. "/testcluster." .. j.id .. ".started"))
    faults()
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    assert.are.equal(2, starts_of(j))
  end)

  it("a teardown after a stage-out that failed ends it: nothing started again", function()
    local j = ran()
    faults('{"fail_at": [{"state": "DATA_TRANSFERRING", "error": "ERROR_PFTOOL_FAILED", "message": "disk full", "comment": "' .. out_key(j) .. '"}]}')
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.is_true(H.wait(function() return starts_of(j) == 2 end, 30))
    local rc = H.poll("slurm_bb_test_data_out", j)
    assert.are.equal(-1, rc)
    faults()
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.is_false(exists(plan_of(j)))
    assert.are.equal(2, starts_of(j))
  end)

  it("post_run saves the plan: a data_out Slurm killed before it began is finished by the teardown", function()
    local j = ran()
    fresh()
    assert.are.equal(0, (slurm_bb_post_run(j.id, j.script, j.uid, j.uid, j.info)))
    assert.is_true(exists(plan_of(j)))
    assert.are.equal(0, starts_of(j))
    -- data_out killed before it did anything; Slurm counts the stage-out
    -- failed and tears the buffer down (TeardownFailure) while the job
    -- still shows STAGE_OUT (ran(): squeue says so)
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.is_true(logged_has("job " .. j.id .. ": teardown: stage%-out that Slurm dropped still runs " ..
                              "%(the job is STAGE_OUT%)"))
    -- the teardown done, Slurm ends the job; the sweeps follow it
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    assert.are.equal(2, starts_of(j))
  end)

  it("a teardown squeue gives no answer for keeps the open plan; a sweep finishes it", function()
    local j = ran()
    fresh()
    assert.are.equal(0, (slurm_bb_post_run(j.id, j.script, j.uid, j.uid, j.info)))
    -- a slurmctld stopping: squeue dies without an answer
    H.conf({ AuditLog = audit, Squeue = os.getenv("PWD") .. "/tests/unit/killed-squeue" })
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.is_true(logged_has("job " .. j.id .. ": teardown: its stage%-out was never seen to end " ..
                              "and squeue gave no answer"))
    assert.is_true(exists(plan_of(j)))
    assert.are.equal(0, starts_of(j))
    -- Slurm back, the job ended: the sweeps finish it
    H.conf({ AuditLog = audit })
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    assert.are.equal(2, starts_of(j))
  end)

  it("a job Slurm still stages out, or that is alive, is left to its own hooks", function()
    local j = ran_unstarted()
    for _, st in ipairs({ "STAGE_OUT", "COMPLETING", "PENDING" }) do
      spit(jobstates .. "/" .. j.id, st)
      local calls = H.squeue_calls()
      due()
      other_hook()
      -- the sweep asked about it (an event), and started nothing
      assert.is_true(H.squeue_calls() > calls)
      assert.are.equal(0, starts_of(j))
      assert.is_true(exists(plan_of(j)))
    end
  end)

  it("STAGE_OUT with no stage-out hook for ten minutes (a buffer Slurm lost): finished", function()
    local j = ran_unstarted()
    -- (ran(): squeue says STAGE_OUT) the job's last stage-out hook, long ago
    sh("touch -d '-11 min' " .. plan_of(j))
    assert.is_true(swept_to_end(j))
    assert.is_true(arrived(j))
    assert.are.equal(2, starts_of(j))
    assert.is_true(logged_has("job " .. j.id .. ": sweep %(from job %d+%): stage%-out of attempt 0 " ..
                              "completed after Slurm dropped it %(the job is STAGE_OUT%)"))
  end)

  it("scancel --hurry's mark: the stage-out it dropped is not finished", function()
    local j = ran_unstarted()
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    fresh()
    -- a hurried teardown of a job that is over (its own abort, then the
    -- mark), killed before it forgot the job
    spit(statedir .. "/testcluster." .. j.id .. ".over", tostring(os.time() + 5) .. "\n")
    sh("chmod 0600 " .. statedir .. "/testcluster." .. j.id .. ".over")
    assert.is_true(swept_to_end(j))
    assert.are.equal(0, starts_of(j))
  end)

  it("a plan of another version is declined, never guessed at", function()
    local j = ran_unstarted()
    local p = slurp(plan_of(j))
    spit(plan_of(j) .. ".new", (p:gsub('"v":1,', '"v":9,')))
    sh("chmod 0600 " .. plan_of(j) .. ".new && mv " .. plan_of(j) .. ".new " .. plan_of(j))
    spit(jobstates .. "/" .. j.id, "COMPLETED")
    due()
    other_hook()
    assert.is_true(logged_has("its stage%-out plan is of another version"))
    assert.are.equal(0, starts_of(j))
  end)
end)

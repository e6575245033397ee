-- sweep_spec.lua - a job cancelled in stage-in whose own hooks were all
-- killed (polls and hurried teardown) has its stage-in transfers stopped
-- by the next start or teardown of another job, which sweeps StateDir
-- (stage.h, cbb_stage_sweep; never a poll): at most one sweep a second over all hooks, a few jobs
-- per sweep, never waiting on another job's lock, and never a job that is
-- alive or that ran.  Each check waits on an event (a hook's return, an
-- RPC in the server's log, a lock let go), never on the clock.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(9500)
local sh, slurp, spit, fresh, faults = H.sh, H.slurp, H.spit, H.fresh, H.faults
local new_job, rpc_mark, rpcs_since, poll = H.new_job, H.rpc_mark, H.rpcs_since, H.poll
local statedir, jobstates = H.statedir, H.jobstates

-- The states of a job's stage-in transfers, sorted, as bbstat shows them
-- (get_status: a hook that never sweeps)
local function states(id)
  fresh()
  local _, out = slurm_bb_get_status("61001", "61001", "conduit", id)
  local t = {}
  for st in (out or ""):gmatch("\nin%s+%d+%s+%d+%s+TRANSFER_([%u_]+)") do t[#t + 1] = st end
  table.sort(t)
  return table.concat(t, " ")
end
local function none_active(id)
  for st in states(id):gmatch("%S+") do
    if st ~= "FINALIZED" and st ~= "ABORTED" and st ~= "ERROR" then return false end
  end
  return true
end
local wait = H.wait
local function exists(p) return sh("test -e '" .. p .. "'") end
local function due() sh("touch -d '-1 min' " .. statedir .. "/sweep") end
-- a sweep just ran: none is due for a second
local function hold()
  sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir)
  spit(statedir .. "/sweep", "1\n")
end

-- No sweep at all until the function returned is called: another
-- process holds the sweep marker's lock (which no hook waits for).  Not
-- `hold()`, which lasts a second only: under load a hook can come later.
local function lock_sweeps()
  sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir)
  local held = statedir .. "/../sweep-held"
  sh("touch " .. held .. " && flock -x " .. statedir .. "/sweep sh -c 'touch " .. held ..
     ".on; n=0; while [ -e " .. held .. " ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; rm -f " ..
     held .. ".on' >/dev/null 2>&1 &")
  assert.is_true(wait(function() return exists(held .. ".on") end, 30))
  return function()
    sh("rm -f " .. held)
    -- until the lock is free, not just until the holder says it is done:
    -- flock lets go only once it has exited, a while later under load
    assert.is_true(wait(function() return sh("flock -n " .. statedir .. "/sweep true") end, 30))
  end
end

-- A job whose stage-in runs (held in DATA_TRANSFERRING), then is
-- cancelled with every hook of its own killed: nothing of it runs again.
local function orphan(n, no_hold, alive)
  local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/sw-" .. n .. "-1.txt",
                      "#CONDUIT_PRE cp in/a.txt out/sw-" .. n .. "-2.txt" })
  -- (its own data_in sweeps nothing: other orphans stay for the test)
  local unlock = not no_hold and lock_sweeps()
  fresh()
  local rc = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
  if unlock then unlock() end
  assert.are.equal(0, rc)
  assert.is_true(wait(function() return states(j.id) == "DATA_TRANSFERRING DATA_TRANSFERRING" ~= nil end, 10))
  if not alive then spit(jobstates .. "/" .. j.id, "CANCELLED") end
  return j
end
-- A hook of another job (a fresh one, still pending) that sweeps: its
-- data_in unless told which.
local function other_hook(hook)
  local o = new_job({ "#CONDUIT_PRE cp in/a.txt out/sw-other.txt" })
  fresh()
  _G[hook or "slurm_bb_data_in"](o.id, o.script, o.uid, o.uid, o.info)
  return o
end

describe("another job's hook sweeps StateDir for orphaned stage-ins", function()
  setup(H.workspace)
  before_each(function()
    H.clean()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
  end)
  after_each(function() faults() end)

  it("stops a cancelled job's stage-in at the next hook, none reaching FINALIZED", function()
    local a = orphan(1)
    due()
    local mark = rpc_mark()
    other_hook()
    local said = false
    for _, x in ipairs(H.logged()) do
      said = said or x.msg:find("job " .. a.id .. ": sweep %(from job %d+%): the job is CANCELLED " ..
                                "with 2 stage%-in transfer%(s%) still running") ~= nil
    end
    assert.is_true(said)
    -- within the call (so within one PollInterval of it): one
    -- StopTransfer per active transfer
    assert.are.equal(2, rpcs_since(mark, "StopTransfer"))
    assert.is_true(wait(function() return none_active(a.id) end, 5))
    -- Conduit ends an abort as TRANSFER_ERROR with ERROR_ABORTED
    assert.are.equal("ERROR ERROR", states(a.id))
    -- what the hurried teardown would have left: the mark, no records
    assert.is_false(exists(statedir .. "/testcluster." .. a.id .. ".started"))
    assert.is_true(exists(statedir .. "/testcluster." .. a.id .. ".over"))
    -- with the server's hold lifted, a transfer started after them goes
    -- all the way through; they stay as they are
    faults()
    local later = new_job({ "#CONDUIT_PRE cp in/a.txt out/sw-1-later.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(later.id, later.script, later.uid, later.uid, later.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", later)))
    -- Conduit ends an abort as TRANSFER_ERROR with ERROR_ABORTED
    assert.are.equal("ERROR ERROR", states(a.id))
  end)

  it("a teardown without hurry of another job sweeps too", function()
    local a = orphan(2)
    due()
    local o = new_job({ "#CONDUIT_POST cp in/a.txt out/sw-td.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(o.id, o.script, "false", o.uid, o.uid)))
    assert.is_true(wait(function() return none_active(a.id) end, 5))
  end)

  it("at most once a second over all hooks", function()
    local a = orphan(3)
    local b = orphan(4, false, true) -- still staging in
    sh("rm -f " .. statedir .. "/sweep")
    other_hook() -- the first sweep (no marker yet): stops a, not b
    assert.is_true(wait(function() return none_active(a.id) end, 5))
    assert.is_false(none_active(b.id))
    -- b is cancelled, its hooks killed, right after a sweep (as the
    -- one above leaves the marker): the hooks that follow within the
    -- second sweep nothing
    spit(jobstates .. "/" .. b.id, "CANCELLED")
    local mark = rpc_mark()
    hold()
    other_hook()
    hold()
    other_hook("slurm_bb_data_in")
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    assert.is_false(none_active(b.id))
    -- the first hook once the second is over (the marker aged past it)
    due()
    other_hook("slurm_bb_data_out")
    assert.is_true(wait(function() return none_active(b.id) end, 5))
  end)

  it("a poll never sweeps: no squeue, no StopTransfer, even when a sweep is due", function()
    local a = orphan(6)
    -- (another job's polls only: its data_in would sweep)
    local o = new_job({ "#CONDUIT_PRE cp in/a.txt out/sw-poll.txt" })
    local asked = H.squeue_calls()
    for _, hook in ipairs({ "slurm_bb_test_data_in", "slurm_bb_test_data_out" }) do
      due()
      local mark = rpc_mark()
      fresh()
      _G[hook](o.id, o.script, o.uid, o.uid, o.info)
      assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    end
    assert.are.equal(asked, H.squeue_calls())
    assert.is_false(none_active(a.id))
    -- the next start sweeps it
    due()
    other_hook()
    assert.is_true(wait(function() return none_active(a.id) end, 5))
  end)

  it("never waits on another job's lock: a job whose records are locked waits for a later sweep", function()
    local a = orphan(5)
    local f = statedir .. "/testcluster." .. a.id .. ".started"
    -- another process holds the job's record file until told to let go
    -- (`held` removed; at most 60 s, so a hook that did wait returns)
    local held = statedir .. "/../held-" .. a.id
    sh("flock -x " .. f .. " sh -c 'touch " .. held .. "; n=0; while [ -e " .. held ..
       " ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done' >/dev/null 2>&1 &")
    assert.is_true(wait(function() return exists(held) end, 30))
    due()
    local mark = rpc_mark()
    other_hook()
    -- it returned while the lock was still held: it did not wait for it
    assert.is_false(sh("flock -n " .. f .. " true"))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    assert.is_false(none_active(a.id))
    sh("rm -f " .. held)
    assert.is_true(wait(function() return sh("flock -n " .. f .. " true") end, 30))
    due()
    other_hook()
    assert.is_true(wait(function() return none_active(a.id) end, 5))
  end)

  it("asks about at most 8 jobs per sweep, with one squeue; the next sweep takes the rest", function()
    local js = {}
    for n = 1, 10 do js[n] = orphan(10 + n) end
    due()
    local mark = rpc_mark()
    other_hook()
    -- (two transfers each)
    assert.are.equal(16, rpcs_since(mark, "StopTransfer"))
    due()
    other_hook()
    for _, j in ipairs(js) do
      assert.is_true(wait(function() return none_active(j.id) end, 5), j.id)
    end
  end)

  it("leaves alone a job that is alive, and one that ran", function()
    local a = orphan(20)
    spit(jobstates .. "/" .. a.id, "PENDING") -- held, say: not over
    local b = orphan(21)
    spit(jobstates .. "/" .. b.id, "COMPLETING")
    due()
    local mark = rpc_mark()
    other_hook()
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    assert.is_false(none_active(a.id))
    assert.is_false(none_active(b.id))
    assert.is_true(exists(statedir .. "/testcluster." .. a.id .. ".started"))
    assert.is_false(exists(statedir .. "/testcluster." .. a.id .. ".over"))
    -- (their own hooks end them)
    for _, j in ipairs({ a, b }) do
      spit(jobstates .. "/" .. j.id, "CANCELLED")
      fresh()
      assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    end
  end)
end)

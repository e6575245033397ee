-- late_spec.lua - stage hooks that Slurm still runs after a job's hurried
-- teardown.  Slurm's stage-in thread does not look at the job between its
-- steps: a job cancelled during setup gets its data_in after the teardown
-- has aborted and forgotten everything (docs/admin.md, "Cancel races").
-- Such a data_in must start nothing and leave no StateDir record; one
-- that the teardown overtakes while it starts must stop what it started.
-- A later attempt of the job (requeue) is never stopped by the mark.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(60000)
local sh, slurp, spit, fresh = H.sh, H.slurp, H.spit, H.fresh
local info_of, new_job, rpc_mark, rpcs_since = H.info_of, H.new_job, H.rpc_mark, H.rpcs_since
local poll, statedir, jobstates = H.poll, H.statedir, H.jobstates

local function state_file(j, what)
  return statedir .. "/testcluster." .. j.id .. "." .. what
end

-- A job submitted a few seconds ago (the mark covers attempts submitted
-- before the second the teardown asked Slurm).
local function old_job(directives)
  local j = new_job(directives)
  j.submit = os.time() - 5
  j.info = info_of(j)
  return j
end

local function cancel_and_teardown(j)
  spit(jobstates .. "/" .. j.id, "CANCELLED")
  fresh()
  assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
end

describe("a stage hook after the job's teardown", function()
  setup(H.workspace)
  before_each(H.clean)

  it("data_in starts nothing and leaves no record", function()
    local j = old_job({ "#CONDUIT_PRE cp in/a.txt out/late1", "#CONDUIT_PRE cp in/a.txt out/late2" })
    cancel_and_teardown(j)
    assert.is_not_nil(slurp(state_file(j, "over")))
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(0, rpcs_since(mark, "Query"))
    assert.is_nil(slurp(state_file(j, "started")))
    -- nor does a poll (it would start what is missing): job_info says
    -- the job is over (CANCELLED)
    fresh()
    local torn = info_of(j, { burst_buffer_state = "staging-in", job_state = 4 })
    local rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, torn)
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    assert.is_nil(slurp(state_file(j, "started")))
    assert.are.same({ -1, "job " .. j.id .. " is CANCELLED: stage-in stopped, an abort of its " ..
                     "transfers asked of Conduit" },
                    { rc, msg })
  end)

  it("data_in overtaken by the teardown stops what it started, by id", function()
    -- the server creates the transfer, then answers a second late; the
    -- teardown (its Query did not see the transfer yet) runs meanwhile
    -- (a budget well past the stall: the answer must come, only late)
    H.conf({ RequestTimeout = "10" })
    H.faults('{"start_then_stall_ms": 2500, "delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = old_job({ "#CONDUIT_PRE cp in/a.txt out/race1" })
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    -- the teardown's mark lands once the server holds the StartTransfer
    -- (its log line comes before the stall), not after a guessed sleep:
    -- a loaded machine may take longer than any sleep to send the call
    sh("(i=0; while [ $i -lt 400 ] && ! grep -q '\"StartTransfer\".*SLURMJOB:" .. j.id .. ",' " ..
       H.sdir .. "/rpc.log 2>/dev/null; do sleep 0.05; i=$((i + 1)); done; " ..
       "[ -d " .. statedir .. " ] && echo " .. os.time() .. " > " .. state_file(j, "over") .. ") &")
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
    assert.is_nil(slurp(state_file(j, "started")))
    local said = false
    for _, l in ipairs(H.logged()) do
      said = said or l.msg:find("torn down meanwhile: 1 transfer(s) stopped", 1, true) ~= nil
    end
    assert.is_true(said)
  end)

  it("a requeued attempt of the job stages in as usual", function()
    local j = old_job({ "#CONDUIT_PRE cp in/a.txt out/again" })
    cancel_and_teardown(j)
    -- requeued: Slurm gives the new attempt a new submit time
    spit(jobstates .. "/" .. j.id, "PENDING")
    local again = info_of(j, { submit_time = os.time() + 1, restart_cnt = 1 })
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, again)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    local rc, msg = poll("slurm_bb_test_data_in", { id = j.id, script = j.script,
                                                     uid = j.uid, info = again })
    assert.are.same({ 0 }, { rc, msg })
    assert.are.equal("alpha\n", slurp(H.work .. "/out/again"))
  end)

  it("a mark that is not a time covers nothing", function()
    local j = old_job({ "#CONDUIT_PRE cp in/a.txt out/badmark" })
    sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir)
    spit(state_file(j, "over"), "garbage\n")
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
  end)

  it("a teardown while the job is alive leaves no mark", function()
    local j = old_job({ "#CONDUIT_PRE cp in/a.txt out/alive" })
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    assert.is_nil(slurp(state_file(j, "over")))
  end)
end)

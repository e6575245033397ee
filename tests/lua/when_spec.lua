-- when_spec.lua - #CONDUIT_POST --when=success|failure|always against the
-- Conduit test server: which directives reach the server for each job
-- outcome Slurm reports in job_info, what arrives, and what bbstat shows.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(70000)
local sh, slurp, conf, faults, fresh = H.sh, H.slurp, H.conf, H.faults, H.fresh
local info_of, new_job, rpc_mark, rpcs_since = H.info_of, H.new_job, H.rpc_mark, H.rpcs_since
local poll, make_file = H.poll, H.make_file
local work, statedir = H.work, H.statedir

-- Slurm's base states and wait statuses as job_info carries them.
local COMPLETED, CANCELLED, FAILED, PENDING = 3, 4, 5, 0
local n = 0

-- A job with the three typical directives, its files named by a counter.
local function three()
  n = n + 1
  local tag = "w" .. n
  local j = new_job({
    "#CONDUIT_POST --when=success cp in/a.txt out/" .. tag .. "-results.txt",
    "#CONDUIT_POST cp in/a.txt out/" .. tag .. "-logs.txt",
    "#CONDUIT_POST cp --when=failure in/a.txt out/" .. tag .. "-ckpt.txt",
  })
  j.tag = tag
  return j
end

local function arrived(j)
  local got = {}
  for _, what in ipairs({ "results", "logs", "ckpt" }) do
    if slurp(work .. "/out/" .. j.tag .. "-" .. what .. ".txt") then got[#got + 1] = what end
  end
  return table.concat(got, ",")
end

-- Stage a job out with these job_info fields; returns StartTransfer count.
local said
local function stage_out(j, fields)
  fields.submit_time = fields.submit_time or j.submit
  j.info = info_of(j, fields)
  fresh()
  local mark = rpc_mark()
  assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
  said = {}
  for _, l in ipairs(H.logged()) do said[#said + 1] = l.msg end
  said = table.concat(said, "\n")
  assert.are.equal(0, (poll("slurm_bb_test_data_out", j)))
  return rpcs_since(mark, "StartTransfer")
end

local function bbstat(j, caller)
  fresh()
  local rc, out = slurm_bb_get_status(caller or "61001", caller or "61001", "conduit", j.id)
  assert.are.equal(0, rc)
  return out
end

describe("#CONDUIT_POST --when=", function()
  setup(H.workspace)
  before_each(H.clean)

  it("a job that exited 1 stages out logs and checkpoints, not results", function()
    local j = three()
    assert.are.equal(2, stage_out(j, { job_state = FAILED, exit_code = 256 }))
    assert.are.equal("logs,ckpt", arrived(j))
    local out = bbstat(j)
    assert.matches("\nout%s+3%s+0%s+SKIPPED %(when=success, job exit 1%)", out)
    assert.matches("\nout%s+4%s+0%s+TRANSFER_FINALIZED", out)
    assert.matches("\nout%s+5%s+0%s+TRANSFER_FINALIZED", out)
    assert.truthy(said:find("job " .. j.id .. ": line 3: stage-out skipped " ..
                            "(when=success, job exit 1)", 1, true))
  end)

  it("a job that exited 0 stages out results and logs, not checkpoints", function()
    local j = three()
    assert.are.equal(2, stage_out(j, { job_state = COMPLETED, exit_code = 0 }))
    assert.are.equal("results,logs", arrived(j))
    assert.matches("\nout%s+5%s+0%s+SKIPPED %(when=failure, job exit 0%)", bbstat(j))
  end)

  it("cancelled, killed by a signal and requeued count as failure", function()
    local j = three()
    assert.are.equal(2, stage_out(j, { job_state = CANCELLED, exit_code = 0 }))
    assert.are.equal("logs,ckpt", arrived(j))
    assert.matches("SKIPPED %(when=success, job CANCELLED%)", bbstat(j))
    j = three()
    assert.are.equal(2, stage_out(j, { job_state = FAILED, exit_code = 9 }))
    assert.matches("SKIPPED %(when=success, job killed by signal 9%)", bbstat(j))
    -- the stage-out of attempt 0 while the job is pending again
    j = three()
    assert.are.equal(2, stage_out(j, { job_state = PENDING, restart_cnt = 1 }))
    assert.are.equal("logs,ckpt", arrived(j))
    assert.matches("\nout%s+3%s+0%s+SKIPPED %(when=success, job requeued%)", bbstat(j))
  end)

  it("the attempt conduit-bb recover marked unlaunched stages nothing out", function()
    -- (recover marks attempt 0 of a job whose launch Slurm lost, then
    -- requeues it: the stage-out of that attempt comes while it pends)
    local j = three()
    assert(sh("mkdir -p -m 0700 " .. statedir))
    H.spit(statedir .. "/testcluster." .. j.id .. ".unlaunched", "1\n")
    assert.are.equal(0, stage_out(j, { job_state = PENDING, restart_cnt = 1 }))
    assert.are.equal("", arrived(j))
    assert.truthy(said:find("stage-out skipped (when=always, its script never ran)", 1, true))
    assert.matches("\nout%s+4%s+0%s+SKIPPED %(when=always, its script never ran%)", bbstat(j))
    -- another attempt's mark is not this one's
    j = three()
    H.spit(statedir .. "/testcluster." .. j.id .. ".unlaunched", "2\n")
    assert.are.equal(2, stage_out(j, { job_state = PENDING, restart_cnt = 1 }))
  end)

  it("stages everything out when Slurm does not say how the job ended", function()
    local j = three()
    j.info = H.job_info({ job_id = tonumber(j.id), user_id = 61001, work_dir = work,
                          cluster = "testcluster" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_out", j)))
    assert.are.equal("results,logs,ckpt", arrived(j))
    assert.is_nil(bbstat(j):find("SKIPPED"))
  end)

  it("repeated stage-out hooks record and log a skip once", function()
    local j = three()
    assert.are.equal(2, stage_out(j, { job_state = FAILED, exit_code = 256 }))
    assert.truthy(said:find("skipped", 1, true))
    assert.are.equal(0, stage_out(j, { job_state = FAILED, exit_code = 256 }))
    assert.is_nil(said:find("skipped", 1, true))
    local out = bbstat(j)
    local _, rows = out:gsub("SKIPPED", "")
    assert.are.equal(1, rows)
  end)

  it("shows skipped rows to the job's user and root only, also after teardown", function()
    local j = three()
    assert.are.equal(2, stage_out(j, { job_state = FAILED, exit_code = 256 }))
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid)))
    assert.matches("SKIPPED", bbstat(j))
    assert.matches("SKIPPED", bbstat(j, "0"))
    assert.is_nil(bbstat(j, "61002"):find("SKIPPED"))
    fresh()
    local _, json = slurm_bb_get_status("61001", "61001", "conduit", j.id, "json")
    assert.matches('"state":"SKIPPED","when":"success","outcome":"job exit 1"', json, 1, true)
  end)
end)

-- share_spec.lua - the shared poll reply (src/bb/engine/share.c,
-- docs/performance.md "Shared polls"): a round of polls of one user's
-- staging jobs asks Conduit once; each reason the saved reply cannot
-- stand for a job's Query sends that poll to the server.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(40000)
local sh, slurp, spit, conf, faults, fresh = H.sh, H.slurp, H.spit, H.conf, H.faults, H.fresh
local new_job, rpc_mark, rpcs_since = H.new_job, H.rpc_mark, H.rpcs_since
local poll, make_file = H.poll, H.make_file
local sdir, work, statedir = H.sdir, H.work, H.statedir

-- the saved reply of uid 61001 in StateDir
local function reply_path() return statedir .. "/testcluster.u61001.poll" end

local function sh_out(cmd)
  local p = io.popen(cmd)
  local v = p:read("*l")
  p:close()
  return v
end

-- transfers held running: every poll of the round answers BUSY
local function hold() faults('{"hold_at": [{"state": "DATA_TRANSFERRING", "ms": 600000}]}') end

-- n jobs of uid 61001, each staging one file in, started; then the
-- clock is past the second of their starts (a reply asked in that very
-- second could miss them, and is never used for them)
local made = 0
local function staging(n)
  make_file(work .. "/in/share.txt", "shared\n")
  local jobs = {}
  for i = 1, n do
    made = made + 1
    local dest = "out/share-" .. os.time() .. "-" .. made .. ".txt"
    local j = new_job({ "#CONDUIT_PRE cp in/share.txt " .. dest })
    j.dest = work .. "/" .. dest
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    jobs[i] = j
  end
  local t = os.time()
  assert.is_true(H.wait(function() return os.time() > t end, 5))
  return jobs
end

-- one poll of one job, as Slurm makes it: a fresh process's worth of state
local function poll_once(j)
  fresh()
  return slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
end

describe("the shared poll reply", function()
  before_each(function()
    conf({ PollShare = "60" })
    faults()
    sh("rm -rf " .. statedir)
    assert(sh("mkdir -p " .. work .. "/in " .. work .. "/out && chmod a+rwx " .. work .. "/out"))
  end)
  after_each(function() faults() end)

  it("a round of polls of one user's staging jobs asks Conduit once", function()
    hold()
    local jobs = staging(5)
    local mark = rpc_mark()
    for _, j in ipairs(jobs) do
      local rc, msg = poll_once(j)
      assert.are.equal(0, rc)
      assert.are.equal("BUSY", msg)
    end
    assert.are.equal(1, rpcs_since(mark, "Query"))
    -- the reply is root's (or SlurmUser's), private, and names every job
    local st = sh_out("stat -c %a " .. reply_path())
    assert.are.equal("600", st)
    local text = slurp(reply_path())
    for _, j in ipairs(jobs) do assert.truthy(text:find(" " .. j.id, 1, true)) end
    -- bbstat answers from it too, without a Query
    fresh()
    local rc, out = slurm_bb_get_status("0", "0", "conduit", jobs[2].id)
    assert.are.equal(0, rc)
    assert.matches("in%s+3%s+0%s+TRANSFER_", out)
    assert.are.equal(1, rpcs_since(mark, "Query"))
  end)

  it("a poll Slurm still runs after the job's hurried teardown leaves no mark behind", function()
    hold()
    local j = staging(1)[1]
    assert.are.equal("BUSY", select(2, poll_once(j)))
    local mark = statedir .. "/testcluster." .. j.id .. ".polled"
    assert.truthy(io.open(mark))
    spit(H.jobstates .. "/" .. j.id, "CANCELLED")
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    assert.is_nil(io.open(mark))
    -- (a hurried teardown does not stop a poll Slurm had already begun)
    poll_once(j)
    assert.is_nil(io.open(mark))
    assert.is_nil(io.open(statedir .. "/testcluster." .. j.id .. ".started"))
  end)

  it("... nor a data_out Slurm still runs after a hurried teardown in stage-out", function()
    hold()
    make_file(work .. "/in/share.txt", "shared\n")
    local j = new_job({ "#CONDUIT_PRE cp in/share.txt out/late-" .. os.time() .. ".txt",
                        "#CONDUIT_POST cp in/share.txt out/late-out-" .. os.time() .. ".txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local mark = statedir .. "/testcluster." .. j.id .. ".polled"
    assert.truthy(io.open(mark))
    spit(H.jobstates .. "/" .. j.id, "STAGE_OUT")
    local t = os.time()
    assert.is_true(H.wait(function() return os.time() > t end, 5))
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    assert.is_nil(io.open(mark))
    fresh()
    slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)
    assert.is_nil(io.open(mark))
  end)

  it("PollShare=0 asks once per poll, as before", function()
    conf({ PollShare = "0" })
    hold()
    local jobs = staging(3)
    local mark = rpc_mark()
    for _, j in ipairs(jobs) do assert.are.equal("BUSY", select(2, poll_once(j))) end
    assert.are.equal(3, rpcs_since(mark, "Query"))
    assert.is_nil(io.open(reply_path()))
  end)

  it("a reply that cannot be trusted or does not fit sends the poll to the server", function()
    hold()
    local jobs = staging(2)
    assert.are.equal("BUSY", select(2, poll_once(jobs[1])))
    local good = slurp(reply_path())
    local function asks(j)
      local mark = rpc_mark()
      assert.are.equal("BUSY", select(2, poll_once(j)))
      return rpcs_since(mark, "Query")
    end
    -- fresh and fitting: no Query
    assert.are.equal(0, asks(jobs[2]))
    -- readable by others: someone else may have written it
    assert(sh("chmod 0644 " .. reply_path()))
    assert.are.equal(1, asks(jobs[2]))
    -- damaged
    spit(reply_path(), "cbb-poll 1\nserver nonsense")
    assert(sh("chmod 0600 " .. reply_path()))
    assert.are.equal(1, asks(jobs[2]))
    -- another server's
    spit(reply_path(), (good:gsub("\nserver [^\n]*", "\nserver 10.0.0.1:1", 1)))
    assert(sh("chmod 0600 " .. reply_path()))
    assert.are.equal(1, asks(jobs[2]))
    -- another user's answer under this user's name
    spit(reply_path(), (good:gsub("\nuser [^\n]*", "\nuser 61002", 1)))
    assert(sh("chmod 0600 " .. reply_path()))
    assert.are.equal(1, asks(jobs[2]))
    -- past the window (sent two minutes ago; PollShare=60)
    local sent = tonumber(good:match("\nsent (%d+)"))
    spit(reply_path(), (good:gsub("\nsent %d+", "\nsent " .. (sent - 120000), 1)))
    assert(sh("chmod 0600 " .. reply_path()))
    assert.are.equal(1, asks(jobs[2]))
    -- each of those rewrote it: the next poll of another job is answered
    assert.are.equal(0, asks(jobs[1]))
    -- (but never the job whose poll asked: Slurm polls one job every
    -- PollInterval, so a job polled again within the window asks)
    assert.are.equal(1, asks(jobs[2]))
  end)

  it("a job that started after the reply was asked asks the server itself", function()
    hold()
    local jobs = staging(1)
    assert.are.equal("BUSY", select(2, poll_once(jobs[1])))
    -- a new job of the same user: not covered, and newer than the reply
    local late = staging(1)[1]
    local mark = rpc_mark()
    assert.are.equal("BUSY", select(2, poll_once(late)))
    assert.are.equal(1, rpcs_since(mark, "Query"))
    -- which now covers both
    mark = rpc_mark()
    assert.are.equal("BUSY", select(2, poll_once(jobs[1])))
    assert.are.equal(0, rpcs_since(mark, "Query"))
  end)

  it("a finished stage is seen by the first poll after the window", function()
    conf({ PollShare = "2" })
    hold()
    local jobs = staging(2)
    assert.are.equal("BUSY", select(2, poll_once(jobs[1])))
    faults()
    -- done on the server; within the window the reply jobs[1]'s poll
    -- saved still says running, past it a poll asks and sees it done
    local rc, msg = poll("slurm_bb_test_data_in", jobs[2], 60)
    assert.are.equal(0, rc)
    assert.are_not.equal("BUSY", msg)
    assert.are.equal("shared\n", slurp(jobs[2].dest))
  end)
end)

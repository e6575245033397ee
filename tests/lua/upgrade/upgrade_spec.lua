-- upgrade_spec.lua - conduit_bb.so replaced under running stages, both
-- ways: the module of an earlier release (CBB_OLD_MODULE_DIR, built by
-- tests/run-checks.sh's `upgrade` part from the commit CBB_OLD_COMMIT)
-- and this one take turns on the same jobs, StateDir and server, as they
-- do when an admin installs a new package while jobs stage (Slurm loads
-- the module afresh for every hook call).  Nothing may be lost, started
-- twice, or left unreadable.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(0)
local sh, slurp, fresh, faults = H.sh, H.slurp, H.fresh, H.faults
local info_of, new_job, rpc_mark, rpcs_since, make_file = H.info_of, H.new_job, H.rpc_mark,
  H.rpcs_since, H.make_file
local work = H.work
local new_dir = assert(os.getenv("CBB_MODULE_DIR"))
local old_dir = assert(os.getenv("CBB_OLD_MODULE_DIR"), "set CBB_OLD_MODULE_DIR")

-- The module of `which` ("old" or "new"), loaded fresh as Slurm does.
local function with(which)
  local dir = which == "old" and old_dir or new_dir
  package.cpath = dir .. "/?.so;" .. package.cpath:gsub("^[^;]*/%?%.so;", "")
  assert(package.searchpath("conduit_bb", package.cpath) == dir .. "/conduit_bb.so")
  return fresh()
end

-- Poll test_data_* with the module of `which` until it stops saying BUSY.
local function poll(which, hook, j)
  local t0 = os.time()
  while true do
    with(which)
    local rc, msg = _G[hook](j.id, j.script, j.uid, j.uid, j.info)
    if not (rc == 0 and msg == "BUSY") then return rc, msg end
    if os.time() - t0 > 120 then return nil, "still busy" end
    H.sleep(0.1)
  end
end

-- StartTransfers since `mark` of the directives (not probes' or asides')
local function starts(mark, word)
  local log = (slurp(H.sdir .. "/rpc.log") or ""):sub(mark.off + 1)
  local n = 0
  for line in log:gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and line:find('"status": "OK"', 1, true) and
        line:find(word, 1, true) then
      n = n + 1
    end
  end
  return n
end

describe("conduit_bb.so replaced mid-stage", function()
  setup(function()
    H.workspace()
    assert(sh("mkdir -p " .. work .. "/in/tree/sub " .. work .. "/out/into && chmod -R a+rwX " ..
              work .. "/in " .. work .. "/out"))
    make_file(work .. "/in/tree/sub/t.txt", "tree\n")
    make_file(work .. "/in/b.txt", "bravo\n")
  end)
  before_each(function()
    H.clean()
  end)

  it("a stage-in the earlier release started, finished by this one: nothing started twice", function()
    -- the copies held running while the module is replaced
    faults('{"delay_ms": {"DATA_TRANSFERRING": 1500}}')
    local j = new_job({ "#CONDUIT_PRE cp in/b.txt out/up-b.txt",
                        "#CONDUIT_PRE cp -r in/tree out/into/" })
    local mark = rpc_mark()
    with("old")
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- one poll by the old module, then the new one takes over
    with("old")
    slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    faults()
    assert.are.same({ 0 }, { poll("new", "slurm_bb_test_data_in", j) })
    assert.are.equal(1, starts(mark, "SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE,"))
    assert.are.equal(1, starts(mark, "SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,"))
    assert.are.equal("bravo\n", slurp(work .. "/out/up-b.txt"))
    assert.is_truthy(slurp(work .. "/out/into/tree/sub/t.txt"))
    -- and bbstat, as the new module reads what the old one recorded
    with("new")
    local rc, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.are.equal(0, rc)
    assert.matches("\nin%s+3%s+0%s+TRANSFER_FINALIZED", out)
    assert.matches("\nin%s+4%s+0%s+TRANSFER_FINALIZED", out)
    with("new")
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid, j.info)))
  end)

  it("a stage-in this release started, finished by the earlier one (a rollback): nothing started twice", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 1500}}')
    local j = new_job({ "#CONDUIT_PRE cp in/b.txt out/down-b.txt",
                        "#CONDUIT_PRE cp in/a.txt out/down-a.txt" })
    local mark = rpc_mark()
    with("new")
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    faults()
    -- the new module may still wait on what it asked first (probes):
    -- its own polls finish starting, then the old module takes over
    with("new")
    slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0 }, { poll("old", "slurm_bb_test_data_in", j) })
    assert.are.equal(1, starts(mark, "SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE,"))
    assert.are.equal(1, starts(mark, "SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,"))
    assert.are.equal("bravo\n", slurp(work .. "/out/down-b.txt"))
    assert.are.equal("alpha\n", slurp(work .. "/out/down-a.txt"))
    with("old")
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid, j.info)))
  end)

  it("a requeued job: the earlier release staged attempt 0 out, this one moves it aside and stages attempt 1", function()
    local j = new_job({ "#CONDUIT_POST cp in/b.txt out/rq-up.txt" })
    j.info = info_of(j, { job_state = 3, burst_buffer_state = "staging-out" })
    with("old")
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.same({ 0 }, { poll("old", "slurm_bb_test_data_out", j) })
    assert.are.equal("bravo\n", slurp(work .. "/out/rq-up.txt"))
    make_file(work .. "/in/b.txt", "bravo 1\n")
    j.info = info_of(j, { restart_cnt = 1, job_state = 3, submit_time = j.submit + 20,
                          burst_buffer_state = "staging-out" })
    local mark = rpc_mark()
    with("new")
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.same({ 0 }, { poll("new", "slurm_bb_test_data_out", j) })
    assert.are.equal("bravo 1\n", slurp(work .. "/out/rq-up.txt"))
    assert.are.equal(1, starts(mark, "RESTART:1,SLURMINDEX:1,SLURMTYPE:CONDUIT_POST,"))
    -- what attempt 0 wrote is kept, moved aside once (the earlier
    -- release's records say it was this job's)
    local p = io.popen("cat " .. work .. "/out/rq-up.txt.conduit-attempt-0-* 2>/dev/null")
    local kept = p:read("*a")
    p:close()
    assert.are.equal("bravo\n", kept)
    assert.are.equal(1, starts(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
    make_file(work .. "/in/b.txt", "bravo\n")
  end)
end)

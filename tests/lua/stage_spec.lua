-- stage_spec.lua - every staging hook against the Conduit test server:
-- real files, real copies and moves done as uid 61001, RPC counts from the
-- server's own log (tests/lua/harness.lua has the host and the helpers).
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
local started = H.started
H.ids_from(0)
local sh, slurp, spit, conf, faults, fresh = H.sh, H.slurp, H.spit, H.conf, H.faults, H.fresh
local info_of, new_job, rpc_mark, rpcs_since = H.info_of, H.new_job, H.rpc_mark, H.rpcs_since
local sleep, poll, owner, make_file = H.sleep, H.poll, H.owner, H.make_file
local sdir, port, pki, work, statedir, jobstates = H.sdir, H.port, H.pki, H.work, H.statedir, H.jobstates

-- StartTransfers since `mark` of one kind: "ASIDE" (a requeue's
-- move-aside of what an earlier attempt wrote) or the directives' own
local function starts_of(mark, kind)
  local log = (slurp(sdir .. "/rpc.log") or ""):sub(mark.off + 1)
  local n = 0
  for line in log:gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and line:find('"status": "OK"', 1, true) and
        (line:find("SLURMTYPE:CONDUIT_ASIDE,", 1, true) ~= nil) == (kind == "ASIDE") then
      n = n + 1
    end
  end
  return n
end

describe("staging hooks against a Conduit server", function()
  before_each(function()
    conf()
    faults()
    sh("rm -rf " .. statedir)
  end)

  it("defines all 13 burst-buffer hooks", function()
    fresh()
    for _, h in ipairs({ "job_process", "pools", "job_teardown", "setup", "data_in",
                         "test_data_in", "real_size", "paths", "pre_run", "post_run",
                         "data_out", "test_data_out", "get_status" }) do
      assert.are.equal("function", type(_G["slurm_bb_" .. h]), h)
    end
  end)

  it("setup, real_size, pre_run and post_run succeed at once", function()
    fresh()
    local j = new_job({ "#CONDUIT_PRE cp /nonexistent/a /tmp/b" })
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_setup(j.id, j.uid, j.uid, "(null)", "0", j.script, j.info)))
    assert.are.equal(0, (slurm_bb_real_size(j.id, j.uid, j.uid, j.info)))
    assert.are.equal(0, (slurm_bb_pre_run(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (slurm_bb_post_run(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, rpcs_since(mark, "Query") + rpcs_since(mark, "StartTransfer"))
  end)

  it("stages in cp, cp -r, multi-source and mv, as the job's user, once", function()
    assert(sh("mkdir -p " .. work .. "/in/dir/sub " .. work .. "/out " .. work .. "/mv"))
    make_file(work .. "/in/a.txt", "alpha\n")
    make_file(work .. "/in/b.txt", "bravo\n")
    make_file(work .. "/in/dir/sub/c.txt", "charlie\n")
    make_file(work .. "/mv/m.txt", "mike\n")
    assert(sh("chmod -R a+rwX " .. work .. "/in " .. work .. "/out " .. work .. "/mv"))
    local j = new_job({
      "#CONDUIT_PRE cp in/a.txt out/a.txt",
      "#CONDUIT_PRE cp -r in/dir out/dir",
      "#CONDUIT_PRE cp in/a.txt in/b.txt out/",
      "#CONDUIT_PRE mv mv/m.txt out/m.txt",
      "#CONDUIT_POST cp out/a.txt in/back.txt",
    })
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- Conduit is asked first what the tree's destination is (where a
    -- tree lands) and whether the mv's source is a directory, once each;
    -- the two plain copies start at once
    assert.are.equal(2, rpcs_since(mark, "ValidateTransfer"))
    assert.is_true(rpcs_since(mark, "StartTransfer") >= 2)
    -- a repeat (restart, retry) starts nothing twice
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local polls = rpc_mark()
    local rc, msg = poll("slurm_bb_test_data_in", j)
    assert.are.equal(0, rc)
    assert.is_nil(msg)
    assert.is_true(rpcs_since(polls, "Query") >= 1)
    -- each directive started exactly once, each probe sent once
    assert.are.equal(4, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(2, rpcs_since(mark, "ValidateTransfer"))
    assert.are.equal("alpha\n", slurp(work .. "/out/a.txt"))
    assert.are.equal("charlie\n", slurp(work .. "/out/dir/sub/c.txt"))
    assert.are.equal("bravo\n", slurp(work .. "/out/b.txt"))
    assert.are.equal("mike\n", slurp(work .. "/out/m.txt"))
    assert.is_nil(slurp(work .. "/mv/m.txt")) -- moved away
    assert.are.equal("61001", owner(work .. "/out/a.txt"))
    -- stage-out runs its own directives only
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_out", j)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal("alpha\n", slurp(work .. "/in/back.txt"))
    -- mv data_in again after success: still nothing started
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
  end)

  it("one poll is one Query for 40 directives", function()
    local d = {}
    for i = 1, 40 do d[#d + 1] = "#CONDUIT_PRE cp in/a.txt out/many-" .. i end
    local j = new_job(d)
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local mark = rpc_mark()
    fresh()
    slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.equal(1, rpcs_since(mark, "Query"))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
  end)

  it("a requeue does not stage in again what an earlier attempt staged", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/requeue.txt",
                        "#CONDUIT_PRE cp --every-attempt in/a.txt out/requeue-every.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    -- the requeued attempt: Slurm gives it a new submit time
    j.info = info_of(j, { restart_cnt = 1, submit_time = j.submit + 30 })
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    -- only the --every-attempt directive runs again, once what the
    -- first attempt wrote there is moved aside
    assert.are.equal(1, starts_of(mark, "directive"))
    assert.are.equal(1, starts_of(mark, "ASIDE"))
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.matches("\nin%s+3%s+0%s+TRANSFER_FINALIZED", out)
    assert.matches("\nin%s+4%s+0%s+TRANSFER_FINALIZED", out)
    assert.matches("\nin%s+4%s+1%s+TRANSFER_FINALIZED", out)
    assert.is_nil(out:find("\nin%s+3%s+1"))
  end)

  it("each run attempt has its own stage-out, exactly once", function()
    assert(sh("mkdir -p " .. work .. "/attempts " .. work .. "/in"))
    make_file(work .. "/in/a.txt", "alpha\n")
    assert(sh("chmod -R a+rwX " .. work .. "/attempts " .. work .. "/in"))
    local j = new_job({ "#CONDUIT_POST cp in/a.txt attempts/" .. "out-%j.txt" })
    -- Slurm requeued the running job: restart_cnt is already 1 and the
    -- job is pending again when the interrupted attempt's stage-out runs
    local requeued = info_of(j, { restart_cnt = 1, job_state = 32768,
                                  burst_buffer_state = "staging-out" })
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, requeued)))
    -- ... and changes the submit time while it runs
    local later = info_of(j, { restart_cnt = 1, job_state = 0, submit_time = j.submit + 20,
                               burst_buffer_state = "staging-out" })
    local rc, msg = poll("slurm_bb_test_data_out", { id = j.id, script = j.script,
                                                     uid = j.uid, info = later })
    assert.are.same({ 0 }, { rc, msg })
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    -- a slurmctld restart runs that stage-out again: nothing new
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, later)))
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    -- the second attempt ran and ended: its outputs go out too
    local final = info_of(j, { restart_cnt = 1, job_state = 3, submit_time = j.submit + 20,
                               burst_buffer_state = "staging-out" })
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)))
    assert.are.equal(0, (poll("slurm_bb_test_data_out", { id = j.id, script = j.script,
                                                          uid = j.uid, info = final })))
    -- once, after the first attempt's output was moved aside (a requeue
    -- keeps it; data_out or a poll starts it, as soon as the move is done)
    assert.are.equal(1, starts_of(mark, "directive"))
    assert.are.equal(1, starts_of(mark, "ASIDE"))
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.matches("\nout%s+3%s+0%s+TRANSFER_FINALIZED", out)
    assert.matches("\nout%s+3%s+1%s+TRANSFER_FINALIZED", out)
  end)

  it("reports a missing source with the line and Conduit's error", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/ok.txt", "#CONDUIT_PRE cp in/nope.txt out/x" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local rc, msg = poll("slurm_bb_test_data_in", j)
    assert.are.equal(-1, rc)
    assert.are.equal("line 4: stage-in cp failed: ERROR_VALIDATION: failed to get source[" ..
      work .. "/in/nope.txt] plugin: failed to get fs result for path[" .. work ..
      "/in/nope.txt]: failed to walk path for symlinks: failed to lstat path[" .. work ..
      "/in/nope.txt]: lstat " .. work .. "/in/nope.txt: no such file or directory", msg)
  end)

  it("reports a source the user may not read", function()
    assert(sh("mkdir -p " .. work .. "/secret && echo s > " .. work .. "/secret/s.txt && chmod 000 " ..
      work .. "/secret"))
    local j = started({ "#CONDUIT_PRE cp secret/s.txt out/s.txt" })
    local rc, msg = poll("slurm_bb_test_data_in", j)
    assert.are.equal(-1, rc)
    assert.matches("^line 3: stage%-in cp failed: ERROR_VALIDATION: .*permission denied$", msg)
  end)

  it("reports a failure in the data stage at once", function()
    faults('{"fail_at": [{"state": "DATA_TRANSFERRING", "error": "ERROR_PFTOOL_FAILED", ' ..
           '"message": "pftool exited with status 3", "comment": "SLURMTYPE:CONDUIT_POST"}]}')
    local j = started({ "#CONDUIT_POST cp in/a.txt out/post-fail.txt" }, true)
    local rc, msg = poll("slurm_bb_test_data_out", j)
    assert.are.equal(-1, rc)
    assert.are.equal("line 3: stage-out cp failed: ERROR_PFTOOL_FAILED: pftool exited with status 3", msg)
  end)

  it("refuses sources over Conduit's byte limit with the server's words", function()
    conf({ MaxSourceBytes = "100000" })
    local d = "#CONDUIT_PRE cp"
    for i = 1, 80 do d = d .. " in/a-long-file-name-to-fill-the-request-" .. i end
    local j = new_job({ d .. " out/" })
    fresh()
    local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.equal(-1, rc)
    assert.matches("^line 3: conduit: server said: request contains too many sources%. byte limit: 4000", msg)
  end)

  it("teardown aborts active transfers of a cancelled job, repeat-safe", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = started({ "#CONDUIT_PRE cp in/a.txt out/slow1", "#CONDUIT_PRE cp in/a.txt out/slow2" })
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    sleep(0.3)
    fresh()
    local mark = rpc_mark()
    local rc = slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)
    assert.are.equal(0, rc)
    assert.are.equal(2, rpcs_since(mark, "StopTransfer"))
    local rc2, msg = poll("slurm_bb_test_data_in", j)
    assert.are.equal(-1, rc2)
    assert.matches("ERROR_ABORTED: user aborted", msg)
    -- again: nothing left to abort, still fine
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
  end)

  it("teardown leaves transfers alone when Slurm restarts stage-in", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 1500}}')
    local j = started({ "#CONDUIT_PRE cp in/a.txt out/restart1" })
    spit(jobstates .. "/" .. j.id, "PENDING")
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    -- Slurm then runs stage-in again: nothing is started twice
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
  end)

  it("a poll aborts stage-in for a job cancelled without a teardown, from job_info", function()
    -- the cancel can kill the teardown; Slurm then keeps polling, and
    -- each poll's job_info carries the job's state: no squeue needed
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/lost-teardown-info" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local mark = rpc_mark()
    fresh()
    local rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0, "BUSY" }, { rc, msg })       -- pending: left alone
    -- squeue would say CANCELLED at once; it is never asked
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    assert.is_nil(slurp(statedir .. "/testcluster." .. j.id .. ".asked"))
    fresh()
    rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, info_of(j, { job_state = 4 }))
    assert.are.same({ -1, "job " .. j.id .. " is CANCELLED: stage-in stopped, an abort of its " ..
                     "transfers asked of Conduit" },
                    { rc, msg })
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
    assert.is_nil(slurp(statedir .. "/testcluster." .. j.id .. ".asked"))
  end)

  it("a poll whose job_info has no state asks squeue, at most every 10 s", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/lost-teardown" })
    j.info = H.job_info({ job_id = tonumber(j.id), user_id = 61001, work_dir = work,
                          restart_cnt = 0, cluster = "testcluster", submit_time = j.submit,
                          burst_buffer_state = "staging-in" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local mark = rpc_mark()
    fresh()
    local rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0, "BUSY" }, { rc, msg })       -- pending: left alone
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    fresh()
    rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0, "BUSY" }, { rc, msg })       -- Slurm asked < 10 s ago
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    sh("touch -d '-11 seconds' " .. statedir .. "/testcluster." .. j.id .. ".asked")
    fresh()
    rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.equal(-1, rc)
    assert.are.equal("job " .. j.id .. " is CANCELLED: stage-in stopped, an abort of its " ..
                     "transfers asked of Conduit", msg)
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
  end)

  it("teardown without hurry neither aborts nor waits", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = started({ "#CONDUIT_POST cp in/a.txt out/nohurry" }, true)
    fresh()
    local mark, t0 = rpc_mark(), H.now_ms()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, "/nonexistent/dummy", "false", j.uid, j.uid)))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    -- (one that waited would wait for the 60 s transfer)
    assert.is_true(H.now_ms() - t0 < 10000)
  end)

  it("teardown without hurry aborts the stage-ins of a job that is over", function()
    -- Slurm killed the job's polls and its hurried teardown (a cancel in
    -- stage-in, then a restart): this teardown is the last hook to come
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/orphan-in", "#CONDUIT_POST cp in/a.txt out/orphan-out" })
    local alive = new_job({ "#CONDUIT_PRE cp in/a.txt out/orphan-alive" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(alive.id, alive.script, alive.uid, alive.uid, alive.info)))
    -- a job that lives (pending again) keeps its stage-in
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_job_teardown(alive.id, "/nonexistent/dummy", "false", j.uid, j.uid)))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    spit(jobstates .. "/" .. j.id, "CANCELLED")
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, "/nonexistent/dummy", "false", j.uid, j.uid)))
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
    -- and a job with no unfinished stage-in on record costs no RPC at all
    faults()
    local k = new_job({ "#CONDUIT_PRE cp in/a.txt out/orphan-done" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(k.id, k.script, k.uid, k.uid, k.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", k)))
    spit(jobstates .. "/" .. k.id, "COMPLETED")
    fresh()
    mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_job_teardown(k.id, "/nonexistent/dummy", "false", k.uid, k.uid)))
    assert.are.equal(0, rpcs_since(mark, "Query"))
  end)

  it("a job with no directives of a stage makes no RPC", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/only-in" })
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, rpcs_since(mark, "Query"))
  end)

  it("trusts its own record when Query lags a new transfer", function()
    local j = new_job({ "#CONDUIT_PRE mv in/lag.txt out/lag.txt" })
    make_file(work .. "/in/lag.txt", "lag\n")
    assert(sh("chmod 0777 " .. work .. "/in"))
    fresh()
    local mark = rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- the mv starts once Conduit said its source is no directory
    assert.is_true(H.wait(function()
      if rpcs_since(mark, "StartTransfer") == 1 then return true end
      fresh()
      slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
      return rpcs_since(mark, "StartTransfer") == 1
    end, 60))
    -- from here Query lags the new transfer: the record is trusted
    faults('{"query_lag_ms": 3000}')
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    faults()
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal("lag\n", slurp(work .. "/out/lag.txt"))
  end)

  it("stays BUSY while the server is down within the grace, then fails", function()
    local j = started({ "#CONDUIT_PRE cp in/a.txt out/down.txt" })
    assert(sh("sh tests/conduit/server-ctl.sh stop " .. sdir))
    fresh()
    local rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0, "BUSY" }, { rc, msg })
    assert.matches("conduit: connect to 127%.0%.0%.1:" .. port .. " refused", H.logged()[1].msg)
    sleep(2.2)
    fresh()
    rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.equal(-1, rc)
    assert.matches("^conduit: server unreachable for %d+ s %(ServerDownGrace=2 s%): " ..
                   "conduit: connect to 127%.0%.0%.1:" .. port .. " refused$", msg)
    assert(sh("sh tests/conduit/server-ctl.sh start " .. sdir))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
  end)

  it("a stalled server is a timeout, not a hang: the polls take over", function()
    -- a grace far longer than the test: under ASan on a loaded machine
    -- the two stalled calls may take more than the harness's 2 s, and
    -- what is tested here is the budget, not the grace
    conf({ RequestTimeout = "0.5", ServerDownGrace = "300" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/stall.txt" })
    -- the server holds each Query 30 s, or until its caller gives up
    -- (server.py's pause): a client that waits the stall out takes
    -- 30 s, one that keeps its 0.5 s budget well under the 10 s bound,
    -- which leaves room for ASan on a loaded machine
    faults('{"stall_ms": {"Query": 30000}}')
    fresh()
    local t0 = H.now_ms()
    local rc = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.is_true(H.now_ms() - t0 < 10000)
    assert.are.equal(0, rc)
    -- the server's deadline (grpc-timeout) and the client's own race:
    -- either may be the one that speaks
    local said = H.logged()[1].msg
    assert.is_true(said:find("conduit: server said: Deadline Exceeded; the polls will start the " ..
                             "transfers when the server answers", 1, true) ~= nil or
                   said:find("conduit: Query timed out after %d+ ms %(budget 500 ms%); the polls " ..
                             "will start the transfers when the server answers") ~= nil, said)
    fresh()
    t0 = H.now_ms()
    assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info) })
    assert.is_true(H.now_ms() - t0 < 10000)
    faults()
    local mark = rpc_mark()
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
  end)

  describe("TLS", function()
    local j
    before_each(function() j = new_job({ "#CONDUIT_PRE cp in/a.txt out/tls" }) end)
    local function try(over)
      conf(over)
      fresh()
      return slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    end

    it("rejects a server signed by another CA", function()
      local rc, msg = try({ CACert = pki .. "/other-ca.crt" })
      assert.are.equal(-1, rc)
      assert.matches("^conduit: TLS: certificate verify failed", msg)
    end)

    it("verifies the host name", function()
      local rc, msg = try({ ServerName = "wrong.example" })
      assert.are.equal(-1, rc)
      assert.matches("^conduit: TLS: certificate verify failed %(.*wrong%.example", msg)
    end)

    it("fails clearly with an expired or foreign client certificate", function()
      for _, name in ipairs({ "expired", "rogue" }) do
        -- the server drops the connection: like an outage, so the polls
        -- wait out ServerDownGrace, then name the likely cause
        local rc = try({ ClientCert = pki .. "/" .. name .. ".crt",
                         ClientKey = pki .. "/" .. name .. ".key", ServerDownGrace = "0" })
        assert.are.equal(0, rc)
        fresh()
        local msg
        rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
        assert.are.equal(-1, rc)
        assert.matches("^conduit: server unreachable for %d+ s %(ServerDownGrace=0 s%): " ..
                       "conduit: connection with 127%.0%.0%.1:%d+ failed %(.*%); if this " ..
                       "persists, check ClientCert/ClientKey$", msg)
      end
    end)

    it("fails clearly when the client key file is missing", function()
      local rc, msg = try({ ClientKey = "/nonexistent/key.pem" })
      assert.are.equal(-1, rc)
      assert.matches("^conduit: TLS: bad certificate configuration", msg)
    end)
  end)

  describe("get_status", function()
    local j
    setup(function()
      conf()
      faults()
      j = new_job({ "#CONDUIT_PRE cp in/a.txt out/st1.txt", "#CONDUIT_POST cp in/a.txt out/st2.txt" })
      fresh()
      slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
      slurm_bb_data_out(j.id, j.script, j.uid, j.uid, j.info)
      poll("slurm_bb_test_data_in", j)
      poll("slurm_bb_test_data_out", j)
    end)

    it("shows one row per directive to the job's user, with one Query", function()
      fresh()
      local mark = rpc_mark()
      local rc, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
      assert.are.equal(0, rc)
      assert.are.equal(1, rpcs_since(mark, "Query"))
      local lines = {}
      for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
      assert.are.equal(3, #lines)
      assert.matches("^DIR%s+LINE%s+ATT%s+STATE%s+FILES%s+BYTES%s+RATE%s+TRANSFER_ID%s+ERROR$", lines[1])
      assert.matches("^in%s+3%s+0%s+TRANSFER_FINALIZED%s+1%s+6 B%s+", lines[2])
      assert.matches("^out%s+4%s+0%s+TRANSFER_FINALIZED%s+1%s+6 B%s+", lines[3])
    end)

    it("scopes to the caller: another user sees nothing, root sees the job's user's", function()
      fresh()
      local _, other = slurm_bb_get_status("61002", "61002", "conduit", j.id)
      assert.are.equal("No Conduit transfers found for Slurm job " .. j.id .. "\n", other)
      -- root asks Conduit as the user StateDir names, never as everyone
      local rc, root = slurm_bb_get_status("0", "0", "conduit", j.id)
      assert.are.equal(-1, rc)
      assert.matches("no staging record naming its user", root)
      local k = new_job({ "#CONDUIT_PRE cp in/a.txt out/st3.txt" })
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(k.id, k.script, k.uid, k.uid, k.info)))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", k)))
      local mark = rpc_mark()
      fresh()
      rc, root = slurm_bb_get_status("0", "0", "conduit", k.id)
      assert.are.equal(0, rc)
      assert.matches("TRANSFER_FINALIZED", root)
      local log = slurp(sdir .. "/rpc.log"):sub(mark.off + 1)
      assert.matches('"method": "Query"[^\n]*"user": "61001"', log)
      assert.is_nil(log:find('"user": ""', 1, true))
      -- and once the teardown has forgotten the job's records
      fresh()
      assert.are.equal(0, (slurm_bb_job_teardown(k.id, k.script, "false", k.uid, k.uid, k.info)))
      fresh()
      rc, root = slurm_bb_get_status("0", "0", "conduit", k.id)
      assert.are.equal(0, rc)
      assert.matches("TRANSFER_FINALIZED", root)
    end)

    it("prints JSON for tools", function()
      fresh()
      local _, dashed = slurm_bb_get_status("61001", "61001", "conduit", j.id, "--json")
      local rc, out = slurm_bb_get_status("61001", "61001", "conduit", j.id, "json")
      assert.are.equal(dashed, out)
      assert.are.equal(0, rc)
      assert.matches('^{"job_id":' .. j.id .. ',"restart":0,"transfers":%[{"direction":"in","line":3,"index":1,"attempt":0,', out)
      assert.matches('"state":"TRANSFER_FINALIZED","error":"ERROR_NONE"', out)
    end)

    it("explains its usage", function()
      fresh()
      for _, args in ipairs({ {}, { "conduit" }, { "conduit", "x" }, { "other", "1" },
                              { "conduit", "1", "--bogus" } }) do
        local rc, out = slurm_bb_get_status("61001", "61001", (table.unpack or unpack)(args))
        assert.are.equal(0, rc)
        assert.matches("^usage: scontrol show bbstat conduit JOBID %[json%]", out)
      end
    end)
  end)

  it("paths writes the job's staging facts for its environment", function()
    local j = new_job({ "#CONDUIT_PRE cp -r 'in/my dir' /scratch/%j/", "#CONDUIT_POST cp out/r.txt in/" })
    local pf = work .. "/path-" .. j.id
    spit(pf, "")
    fresh()
    local rc = slurm_bb_paths(j.id, j.script, pf, j.uid, j.uid, j.info)
    assert.are.equal(0, rc)
    local text = slurp(pf)
    assert.are.equal(table.concat({
      "CONDUIT_BB_KEY=SLURMJOB:" .. j.id .. ",CLUSTER:testcluster,RESTART:0,",
      "CONDUIT_BB_STAGE_IN_COUNT=1",
      "CONDUIT_BB_STAGE_OUT_COUNT=1",
      'CONDUIT_BB_STAGE_IN=[{"line":3,"action":"cp","recursive":true,"sources":["' .. work ..
        '/in/my dir"],"destination":"/scratch/' .. j.id .. '/"}]',
      'CONDUIT_BB_STAGE_OUT=[{"line":4,"action":"cp","recursive":false,"sources":["' .. work ..
        '/out/r.txt"],"destination":"' .. work .. '/in/"}]',
    }, "\n") .. "\n", text)
  end)

  describe("job_process with SubmitValidation=remote", function()
    it("sends each stage-in directive to Conduit and never waits for the answer", function()
      conf({ SubmitValidation = "remote", SubmitTimeout = "5" })
      faults('{"delay_ms": {"VALIDATING": 5000}}')
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/v.txt", "#CONDUIT_PRE cp in/b out/v2",
                          "#CONDUIT_POST cp out/v.txt in/v-back.txt" })
      fresh()
      local mark = rpc_mark()
      local t0 = H.now_ms()
      assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
      -- inside slurmctld: the validations take 5 s, job_process does not
      assert.is_true(H.now_ms() - t0 < 4000)
      assert.are.equal(2, rpcs_since(mark, "ValidateTransfer"))
      assert.are.equal(0, rpcs_since(mark, "Query"))
    end)

    it("a directive Conduit rejected fails the stage-in with the line, never started", function()
      conf({ SubmitValidation = "remote", SubmitTimeout = "5" })
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/v3.txt", "#CONDUIT_PRE mv in/missing out/v4" })
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
      -- Conduit's answer is read where the job goes next, its stage-in,
      -- before that starts anything
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      local rc, msg = poll("slurm_bb_test_data_in", j)
      assert.are.equal(-1, rc)
      assert.matches("^line 4: stage%-in mv failed: ERROR_VALIDATION: failed to get source%[", msg)
      local log = slurp(sdir .. "/rpc.log"):sub(mark.off + 1)
      assert.is_nil(log:find('"method": "StartTransfer"[^\n]*SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,'))
    end)

    it("accepts what Conduit validates, and the stage-in heeds it", function()
      conf({ SubmitValidation = "remote", SubmitTimeout = "5" })
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/v5.txt" })
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      assert.are.equal(1, rpcs_since(mark, "ValidateTransfer"))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    end)

    it("accepts, and logs, when the server is unreachable", function()
      conf({ ConduitServer = "127.0.0.1:9", SubmitValidation = "remote", SubmitTimeout = "1" })
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/v5.txt" })
      fresh()
      assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
    end)
  end)
end)

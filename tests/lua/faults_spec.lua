-- faults_spec.lua - trust under faults: a server that forgets, lags,
-- never answers or answers too much; records that belong to another job;
-- outages during stage-out; hooks without a cluster name; numbers that
-- are not numbers.  Against the Conduit test server, like stage_spec.lua.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
local started = H.started
H.ids_from(50000)
local sh, slurp, spit, conf, faults, fresh = H.sh, H.slurp, H.spit, H.conf, H.faults, H.fresh
local info_of, new_job, rpc_mark, rpcs_since = H.info_of, H.new_job, H.rpc_mark, H.rpcs_since
local sleep, poll, make_file = H.sleep, H.poll, H.make_file
local sdir, work, statedir, jobstates = H.sdir, H.work, H.statedir, H.jobstates
local module_dir = assert(os.getenv("CBB_MODULE_DIR"))

local function server(cmd) assert(sh("sh tests/conduit/server-ctl.sh " .. cmd .. " " .. sdir)) end
-- Age a job's start records by SECS seconds (their "made" field, the 7th),
-- as if that long had passed since the starts: a grace is then crossed
-- without sleeping through it, however slowly a loaded machine runs the
-- calls before.
local function age_starts(j, secs)
  local f = statedir .. "/testcluster." .. j.id .. ".started"
  local out = {}
  for line in assert(io.open(f)):lines() do
    local w = {}
    for x in line:gmatch("%S+") do w[#w + 1] = x end
    assert(#w >= 9 and (w[1] == "v1" or w[1] == "v2"), "start record format: " .. line)
    w[7] = tostring(tonumber(w[7]) - secs)
    out[#out + 1] = table.concat(w, " ")
  end
  spit(f, table.concat(out, "\n") .. "\n")
end
local function logs_match(pattern)
  for _, l in ipairs(H.logged()) do
    if l.msg:find(pattern) then return true end
  end
  return false
end

-- A listener that never answers; returns its port and a stop function.
local silent_n = 0
local function silent(mode)
  silent_n = silent_n + 1
  local pf = work .. "/silent-" .. mode .. "-" .. silent_n .. ".port"
  os.remove(pf)
  assert(sh("/usr/bin/python3 tests/conduit/silent-server.py " .. pf .. " " .. mode ..
            " >/dev/null 2>&1 & echo $! > " .. pf .. ".pid"))
  for _ = 1, 50 do
    if slurp(pf) then break end
    sleep(0.1)
  end
  local port = assert(slurp(pf)):match("%d+")
  return port, function() sh("kill " .. slurp(pf .. ".pid"):match("%d+")) end
end

describe("trust under faults", function()
  setup(H.workspace)
  before_each(H.clean)

  describe("a transfer that never shows up", function()
    it("is started again after StartVisibleGrace when the server forgot it", function()
      conf({ StartVisibleGrace = "60" })
      faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/forgot.txt" })
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      server("wipe") -- restarted without its database
      faults()
      fresh()
      local mark = rpc_mark()
      assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info) })
      assert.are.equal(0, rpcs_since(mark, "StartTransfer")) -- within the grace
      age_starts(j, 61)
      fresh()
      assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info) })
      assert.is_true(logs_match("line 3: stage%-in transfer [0-9a-f-]+ started %d+ s ago never " ..
                                "showed up on the Conduit server %(StartVisibleGrace=60 s%): it " ..
                                "is lost; starting the directive again"))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      assert.are.equal("alpha\n", slurp(work .. "/out/forgot.txt"))
    end)

    it("a lost mv whose source is gone says so", function()
      conf({ StartVisibleGrace = "1" })
      make_file(work .. "/in/m.txt", "mike\n")
      local j = new_job({ "#CONDUIT_PRE mv in/m.txt out/m.txt" })
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      server("wipe")
      sleep(1.2)
      local rc, msg = poll("slurm_bb_test_data_in", j)
      assert.are.equal(-1, rc)
      assert.matches("^line 3: stage%-in mv failed: ERROR_VALIDATION: failed to get source%[.*" ..
                     "no such file or directory %(an earlier transfer of this mv was lost by " ..
                     "the Conduit server after it started: its source may already have been " ..
                     "moved%)$", msg)
      assert.are.equal("mike\n", slurp(work .. "/out/m.txt"))
    end)

    it("an unconfirmed start is never repeated within the grace", function()
      conf({ RequestTimeout = "0.5" })
      faults('{"start_then_stall_ms": 1500}')
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/unsure.txt" })
      local mark = rpc_mark()
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.is_true(logs_match("line 3: start not confirmed"))
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      faults()
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      -- the server saw one StartTransfer: the first, whose answer was lost
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    end)

    it("a hook killed while its start is in flight never has it repeated", function()
      -- slurmctld kills its running scripts when it shuts down: a data_in
      -- killed after sending StartTransfer, before the answer came back
      make_file(work .. "/in/k.txt", "kilo\n")
      local j = new_job({ "#CONDUIT_PRE mv in/k.txt out/killed.txt" })
      faults('{"start_then_stall_ms": 3000}')
      local mark = rpc_mark()
      local drv = work .. "/killed-hook.lua"
      spit(drv, "package.cpath = '" .. module_dir .. "/?.so;' .. package.cpath\n" ..
           "slurm = { SUCCESS = 0, ERROR = -1, SLURM_BB_BUSY = 'BUSY', CLUSTER_NAME = " ..
           "'testcluster', log = function() end, error = function() end }\n" ..
           "require('conduit_bb')\n" ..
           "local t = { job_id = " .. j.id .. ", user_id = 61001, work_dir = '" .. work ..
           "', restart_cnt = 0, cluster = 'testcluster', submit_time = " .. j.submit ..
           ", job_state = 0 }\n" ..
           "slurm_bb_data_in('" .. j.id .. "', '" .. j.script .. "', '61001', '61001', " ..
           "setmetatable({}, { __index = function(_, k) return t[k] end }))\n" ..
           "io.open('" .. drv .. ".done', 'w'):close()\n")
      -- killed once the server has logged this start (a line after the
      -- mark: earlier tests' starts are in the log too) and holds it.  A
      -- data_in that ended without starting it (its probes outlasted its
      -- budget on a loaded host: a poll would start it) is run again.
      local started = "tail -c +" .. (mark.off + 1) .. " " .. sdir .. "/rpc.log | grep -q StartTransfer"
      assert(sh("for try in 1 2 3 4 5; do rm -f " .. drv .. ".done; " ..
                "lua" .. _VERSION:match("%d+%.%d+") .. " " .. drv .. " & p=$!; " ..
                "i=0; until " .. started .. " || [ -e " .. drv .. ".done ] || [ $i -gt 3000 ]; " ..
                "do sleep 0.1; i=$((i + 1)); done; " ..
                "if " .. started .. "; then sleep 0.2; kill -9 $p 2>/dev/null; wait $p 2>/dev/null; break; fi; " ..
                "wait $p 2>/dev/null; done; true"))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      -- Slurm runs data_in again (its script was killed), then polls,
      -- while Query does not show the new transfer yet
      faults('{"query_lag_ms": 4000}')
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      assert.are.equal("kilo\n", slurp(work .. "/out/killed.txt"))
    end)

    it("a refused start leaves nothing to wait for", function()
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/refused.txt" })
      faults('{"max_source_bytes": 1}')
      local mark = rpc_mark()
      fresh()
      local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
      assert.are.equal(-1, rc)
      assert.matches("^line 3: conduit: server said: request contains too many sources", msg)
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      -- the admin fixed it and released the job: started at once, not
      -- after StartVisibleGrace as if the refused start might exist
      faults()
      fresh()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(2, rpcs_since(mark, "StartTransfer"))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      assert.is_false(logs_match("never showed up"))
      assert.are.equal("alpha\n", slurp(work .. "/out/refused.txt"))
    end)

    it("a retried stage does not report the previous attempt's failure", function()
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/retry.txt" })
      faults('{"fail_at": [{"state": "DATA_TRANSFERRING", "error": "ERROR_PFTOOL_FAILED", ' ..
             '"message": "disk full", "comment": "SLURMJOB:' .. j.id .. ',"}]}')
      fresh()
      slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
      local rc, msg = poll("slurm_bb_test_data_in", j)
      assert.are.same({ -1, "line 3: stage-in cp failed: ERROR_PFTOOL_FAILED: disk full" }, { rc, msg })
      -- fixed, released: stage-in again, while Query lags the new transfer
      sleep(1.5)
      faults('{"query_lag_ms": 1000}')
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      fresh()
      assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info) })
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    end)
  end)

  describe("records and transfers of another job with the same id", function()
    it("a stale StateDir record is ignored and removed", function()
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/stale-rec.txt" })
      assert(sh("mkdir -p -m 0700 " .. statedir))
      local file = statedir .. "/testcluster." .. j.id .. ".started"
      spit(file, "v1 0 1000 0 0 1 1000 S 0f0e0d0c-0000-4000-8000-000000000001\n")
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      assert.is_nil(slurp(file):find("0f0e0d0c", 1, true))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    end)

    it("a finished transfer of an earlier job with the same id is not taken as done", function()
      local j = started({ "#CONDUIT_PRE cp in/a.txt out/reused.txt" })
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      -- Slurm hands the id out again an hour later
      sh("rm -rf " .. statedir)
      local again = { id = j.id, script = j.script, uid = j.uid, submit = j.submit + 3600 }
      again.info = info_of(again)
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_data_in(again.id, again.script, again.uid, again.uid, again.info)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    end)
  end)

  describe("outages during stage-out", function()
    it("stage-out waits StageOutDownGrace, not ServerDownGrace", function()
      conf({ ServerDownGrace = "0", StageOutDownGrace = "60" })
      faults('{"delay_ms": {"DATA_TRANSFERRING": 1500}}')
      local j = new_job({ "#CONDUIT_POST cp in/a.txt out/outage.txt" })
      local out = info_of(j, { job_state = 3, burst_buffer_state = "staging-out" })
      local job = { id = j.id, script = j.script, uid = j.uid, info = out }
      fresh()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, out)))
      server("stop")
      fresh()
      local rc, msg = slurm_bb_test_data_out(j.id, j.script, j.uid, j.uid, out)
      assert.are.same({ 0, "BUSY" }, { rc, msg })
      assert.is_true(logs_match("waiting up to StageOutDownGrace=60 s"))
      server("start")
      faults()
      assert.are.equal(0, (poll("slurm_bb_test_data_out", job)))
      assert.are.equal("alpha\n", slurp(work .. "/out/outage.txt"))
    end)

    it("a stage-out begun while the server is down starts when it is back", function()
      local j = new_job({ "#CONDUIT_POST cp in/a.txt out/late.txt" })
      local out = info_of(j, { job_state = 3, burst_buffer_state = "staging-out" })
      local job = { id = j.id, script = j.script, uid = j.uid, info = out }
      server("stop")
      fresh()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, out)))
      assert.is_true(logs_match("the polls will start the transfers when the server answers"))
      server("start")
      local mark = rpc_mark()
      assert.are.equal(0, (poll("slurm_bb_test_data_out", job)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    end)

    it("an interrupted attempt's failed stage-out is logged once, however many polls", function()
      faults('{"delay_ms": {"DATA_TRANSFERRING": 1500}}')
      local j = new_job({ "#CONDUIT_POST cp out/never-written-y.txt in/never-y.txt",
                          "#CONDUIT_POST cp in/a.txt out/slow-y.txt" })
      local requeued = info_of(j, { restart_cnt = 1, job_state = 0,
                                    burst_buffer_state = "staging-out" })
      fresh()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, requeued)))
      local polls, said = 0, 0
      repeat
        H.sleep(0.2)
        fresh()
        local rc, msg = slurm_bb_test_data_out(j.id, j.script, j.uid, j.uid, requeued)
        polls = polls + 1
        if logs_match("which a requeue interrupted: line 3:") then said = said + 1 end
      until not (rc == 0 and msg == "BUSY") or polls > 100
      assert.is_true(polls >= 3, "polls " .. polls)
      assert.are.equal(1, said)
    end)

    it("an interrupted attempt's stage-out is best effort; a failed one stands", function()
      local j = new_job({ "#CONDUIT_POST cp out/never-written-" .. "x.txt in/never.txt" })
      -- requeued before it wrote its output: logged, the job goes on
      local requeued = info_of(j, { restart_cnt = 1, job_state = 0,
                                    burst_buffer_state = "staging-out" })
      local job = { id = j.id, script = j.script, uid = j.uid, info = requeued }
      fresh()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, requeued)))
      assert.are.equal(0, (poll("slurm_bb_test_data_out", job)))
      assert.is_true(logs_match("stage%-out of attempt 0, which a requeue interrupted: line 3: " ..
                                "stage%-out cp failed: ERROR_VALIDATION"))
      -- the final attempt's stage-out fails for real, and is not retried
      local final = info_of(j, { restart_cnt = 1, job_state = 3,
                                 burst_buffer_state = "staging-out" })
      job.info = final
      fresh()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)))
      local rc, msg = poll("slurm_bb_test_data_out", job)
      assert.are.equal(-1, rc)
      assert.matches("^line 3: stage%-out cp failed: ERROR_VALIDATION", msg)
      fresh() -- a slurmctld restart runs data_out again
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)))
      assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    end)

    it("teardown with the server down keeps the records of a stage-in it could not stop", function()
      faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
      local j = started({ "#CONDUIT_PRE cp in/a.txt out/td1.txt" })
      assert.is_not_nil(slurp(statedir .. "/testcluster." .. j.id .. ".started"))
      server("stop")
      spit(jobstates .. "/" .. j.id, "CANCELLED")
      fresh()
      local rc, msg = slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)
      assert.are.equal(-1, rc) -- what it could not abort, it says
      assert.matches("connect to 127%.0%.0%.1:%d+ refused", msg)
      -- (if every retry fails too, a sweep stops it once the server answers)
      assert.is_not_nil(slurp(statedir .. "/testcluster." .. j.id .. ".started"))
      server("start")
      fresh()
      assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)))
      assert.is_nil(slurp(statedir .. "/testcluster." .. j.id .. ".started"))
    end)

    it("teardown forgets a finished job's files even when the server is down", function()
      local j = started({ "#CONDUIT_PRE cp in/a.txt out/td2.txt" })
      assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
      server("stop")
      spit(jobstates .. "/" .. j.id, "COMPLETED")
      fresh()
      slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)
      assert.is_nil(slurp(statedir .. "/testcluster." .. j.id .. ".started"))
      server("start")
    end)

    it("a hurried teardown aborts nothing when Slurm cannot say the job's state", function()
      conf({ Squeue = "/bin/false" })
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/td2.txt" })
      fresh()
      local mark = rpc_mark()
      local rc, msg = slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid)
      assert.are.equal(-1, rc)
      assert.are.equal("job " .. j.id .. ": teardown: cannot learn the job's state from squeue; " ..
                       "nothing aborted (Slurm retries)", msg)
      assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    end)

    it("after a teardown, polls end without asking the server", function()
      local j = new_job({ "#CONDUIT_POST cp in/a.txt out/torn.txt" })
      local torn = info_of(j, { job_state = 3, burst_buffer_state = "complete" })
      fresh()
      local mark = rpc_mark()
      assert.are.same({ 0 }, { slurm_bb_test_data_out(j.id, j.script, j.uid, j.uid, torn) })
      assert.are.equal(0, rpcs_since(mark, "Query"))
    end)

    it("after a cancel, a stage-in poll aborts what still runs", function()
      faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
      local j = started({ "#CONDUIT_PRE cp in/a.txt out/torn-in.txt" })
      spit(jobstates .. "/" .. j.id, "CANCELLED")
      local torn = info_of(j, { job_state = 4, burst_buffer_state = "teardown" })
      fresh()
      local mark = rpc_mark()
      local rc, msg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, torn)
      assert.are.same({ -1, "job " .. j.id .. " is CANCELLED: stage-in stopped, an abort of its transfers asked of Conduit" },
                      { rc, msg })
      assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
    end)
  end)

  describe("one time budget per hook", function()
    local stops = {}
    teardown(function() for _, s in ipairs(stops) do s() end end)

    for _, mode in ipairs({ "quiet", "read" }) do
      it("job_process remote validation ends within SubmitTimeout (" .. mode .. " server)", function()
        local port, stop = silent(mode)
        stops[#stops + 1] = stop
        -- (RequestTimeout far past SubmitTimeout: a call that ignored the
        -- submit budget would take 20 s, so the bound below can leave a
        -- loaded machine seconds of room and still tell the two apart)
        conf({ ConduitServer = "127.0.0.1:" .. port, SubmitValidation = "remote",
               SubmitTimeout = "1", RequestTimeout = "20" })
        local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/v.txt", "#CONDUIT_PRE cp in/a.txt out/w.txt" })
        fresh()
        local t0 = H.now_ms()
        local rc = slurm_bb_job_process(j.script, j.uid, j.uid, j.info)
        local took = H.now_ms() - t0
        assert.are.equal(0, rc) -- accepted, and logged
        -- the bound is the budget plus room for a loaded machine under ASan;
        -- the silent server never answers, so without the budget it hangs
        assert.is_true(took >= 900 and took <= 8000, "took " .. took .. " ms")
        assert.is_true(logs_match("timed out after %d+ ms %(budget 1000 ms%)") or
                       logs_match("timed out after 9%d%d ms %(budget 1000 ms%)"))
      end)

      it("get_status ends within 5 s (" .. mode .. " server)", function()
        local port, stop = silent(mode)
        stops[#stops + 1] = stop
        conf({ ConduitServer = "127.0.0.1:" .. port, RequestTimeout = "60" })
        fresh()
        local t0 = H.now_ms()
        local rc, msg = slurm_bb_get_status("61001", "61001", "conduit", "123")
        local took = H.now_ms() - t0
        assert.are.equal(-1, rc)
        -- (without the 5 s cap it would wait out RequestTimeout=60)
        assert.is_true(took >= 4900 and took <= 15000, "took " .. took .. " ms")
        assert.matches("^conduit: Query timed out after %d+ ms %(budget 5000 ms%)$", msg)
        local said = tonumber(msg:match("after (%d+) ms"))
        assert.is_true(said >= 4900 and said <= took)
      end)
    end

    it("data_in ends within RequestTimeout, retries included", function()
      local port, stop = silent("read")
      stops[#stops + 1] = stop
      -- 4 s: a retry outside the budget would make it 8 s or more, so the
      -- bound leaves a loaded machine 3 s of room and still tells them apart
      conf({ ConduitServer = "127.0.0.1:" .. port, RequestTimeout = "4" })
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/b.txt" })
      fresh()
      local t0 = H.now_ms()
      assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
      local took = H.now_ms() - t0
      assert.is_true(took >= 3900 and took <= 7000, "took " .. took .. " ms")
    end)
  end)

  it("refuses a reply larger than MaxReplyBytes, and grows to what arrives", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/huge.txt" })
    conf({ MaxReplyBytes = "65536" })
    faults('{"huge_reply_bytes": 100000}')
    fresh()
    local rc, msg = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.are.same({ -1, "conduit: Query reply larger than MaxReplyBytes=65536" }, { rc, msg })
    conf()
    faults('{"huge_reply_bytes": 3000000}')
    fresh()
    rc, msg = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.are.same({ 0, "No Conduit transfers found for Slurm job " .. j.id .. "\n" }, { rc, msg })
  end)

  describe("array tasks Slurm split off", function()
    it("read the array's script and get their environment", function()
      local ssl = work .. "/ssl"
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/task.txt" })
      local a, t = j.id, new_job({}).id
      local function dir(id) return ssl .. "/hash." .. (tonumber(id) % 10) .. "/job." .. id end
      -- Slurm keeps the array's script (job a); task t has no directory
      assert(sh("rm -rf " .. dir(t) .. " && mkdir -p " .. dir(a) .. " && cp " .. j.script .. " " ..
                dir(a) .. "/script"))
      local task = { id = t, script = dir(t) .. "/script", uid = j.uid, submit = j.submit }
      task.info = info_of(task, { array_job_id = tonumber(a), array_task_id = 1 })
      spit(jobstates .. "/" .. t, "PENDING")
      fresh()
      local mark = rpc_mark()
      assert.are.equal(0, (slurm_bb_data_in(task.id, task.script, task.uid, task.uid, task.info)))
      assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", task)))
      fresh()
      local pf = dir(t) .. "/path"
      assert.are.equal(0, (slurm_bb_paths(task.id, task.script, pf, task.uid, task.uid, task.info)))
      assert.matches("CONDUIT_BB_STAGE_IN_COUNT=1\n", slurp(pf))
      local p = io.popen("stat -c %a " .. dir(t))
      assert.are.equal("700", p:read("*l"))
      p:close()
      -- a path file out of Slurm's layout is not created: the job starts
      fresh()
      assert.are.equal(0, (slurm_bb_paths(task.id, task.script, work .. "/no/such/dir/path",
                                          task.uid, task.uid, task.info)))
      assert.is_true(logs_match("the job starts without the CONDUIT_BB_%* variables"))
      sh("rm -f " .. jobstates .. "/" .. t)
    end)
  end)

  describe("no cluster name from Slurm", function()
    local function run(slurm_conf, expect)
      local verdict = work .. "/nocluster.verdict"
      os.remove(verdict)
      assert(sh("env SLURM_CONF=" .. slurm_conf .. " lua" .. _VERSION:match("%d+%.%d+") ..
                " tests/lua/nocluster.lua " .. module_dir .. " " .. work .. " " ..
                work .. "/nocl.sh '" .. expect .. "' " .. verdict))
      return slurp(verdict) or "no verdict"
    end
    setup(function()
      spit(work .. "/nocl.sh", "#!/bin/bash\n#CONDUIT_PRE cp in/a.txt out/nocl.txt\ntrue\n")
    end)

    it("comes from ClusterName in slurm.conf", function()
      spit(work .. "/slurm.conf", "SlurmctldHost=x\nClusterName=fromconf\n")
      local v = run(work .. "/slurm.conf", "ok")
      assert.is_nil(v:find("BAD"), v)
      assert.are.equal(13, select(2, v:gsub("ok [%w_]+ 0", "")), v)
    end)

    it("else every hook that needs it fails with one clear line", function()
      local missing = work .. "/no-slurm.conf"
      local v = run(missing, "conduit_bb: the cluster name is unknown: Slurm gave none and " ..
                    missing .. " has no ClusterName")
      assert.is_nil(v:find("BAD"), v)
      assert.are.equal(13, select(2, v:gsub("\nok ", "")) + 1, v)
    end)
  end)

  describe("numbers that are not numbers", function()
    local bad = { 0 / 0, 1 / 0, -1 / 0, 1e300, -5, "abc", "12abc", "-1", "1e3", "4294967296", "" }
    it("never crash a hook, and never pass for a job id or uid", function()
      local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/nan.txt" })
      local mark = rpc_mark()
      for _, v in ipairs(bad) do
        local ji = info_of(j, { job_id = v, user_id = v, restart_cnt = v, submit_time = v,
                                job_state = v, array_job_id = v, array_task_id = v })
        local calls = {
          function() return slurm_bb_job_process(j.script, v, v, ji) end,
          function() return slurm_bb_setup(v, v, v, "(null)", v, j.script, ji) end,
          function() return slurm_bb_data_in(v, j.script, v, v, ji) end,
          function() return slurm_bb_test_data_in(v, j.script, v, v, ji) end,
          function() return slurm_bb_real_size(v, v, v, ji) end,
          function() return slurm_bb_paths(v, j.script, work .. "/p", v, v, ji) end,
          function() return slurm_bb_pre_run(v, j.script, v, v, ji) end,
          function() return slurm_bb_post_run(v, j.script, v, v, ji) end,
          function() return slurm_bb_data_out(v, j.script, v, v, ji) end,
          function() return slurm_bb_test_data_out(v, j.script, v, v, ji) end,
          function() return slurm_bb_job_teardown(v, j.script, v, v, v) end,
          function() return slurm_bb_get_status(v, v, "conduit", v) end,
        }
        for i, f in ipairs(calls) do
          fresh()
          local ok, rc = pcall(f)
          assert.is_true(ok, "call " .. i .. " raised for " .. tostring(v))
          assert.is_true(rc == 0 or rc == -1, "call " .. i)
        end
      end
      -- the switch hooks: job tables full of junk
      for _, v in ipairs(bad) do
        local job = { job_id = v, user_id = v, num_nodes = v, user_name = "alice",
                      network = "conduit:pool=a100" }
        for i, f in ipairs({
          function() return slurm_switch_job_start(job) end,
          function() return slurm_switch_job_complete(job, nil) end,
          function() return slurm_switch_step_preinit({ job_id = v }, { v = v, job_id = v }) end,
          function() return slurm_switch_step_init({ job_id = v }, { v = v }) end,
          function() return slurm_switch_step_postfini({ job_id = v }, {}) end,
        }) do
          fresh()
          local ok, rc = pcall(f)
          assert.is_true(ok, "switch call " .. i .. " raised for " .. tostring(v))
          assert.is_true(type(rc) == "number" and rc <= 1, "switch call " .. i)
        end
      end
      -- job_process with a real uid but job_info full of junk still works
      fresh()
      local ji = info_of(j, { job_id = 0 / 0, restart_cnt = 1e300, submit_time = -1 / 0 })
      assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, ji)))
      -- nothing was started for a job id or uid that is not one
      assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    end)
  end)
end)

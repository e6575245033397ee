-- account_spec.lua - staging in accounting, against the Conduit test
-- server: one summary per attempt appended to the job's AdminComment
-- (through a stand-in scontrol that records its arguments), one JSON
-- line per transfer in AuditLog, each written once however often Slurm
-- repeats the polls.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(90000)
local sh, slurp, conf, faults, fresh = H.sh, H.slurp, H.conf, H.faults, H.fresh
local info_of, new_job = H.info_of, H.new_job
local poll, make_file = H.poll, H.make_file
local work, statedir, jobstates = H.work, H.statedir, H.jobstates

local function comments(j)
  local got = {}
  for line in (slurp(jobstates .. "/admin_comment.log") or ""):gmatch("[^\n]+") do
    local id, text = line:match("^(%d+)\t(.*)$")
    if id == j.id then got[#got + 1] = text end
  end
  return got
end

local function stage(j, hook)
  fresh()
  assert.are.equal(0, (_G["slurm_bb_" .. hook](j.id, j.script, j.uid, j.uid, j.info)))
  assert.are.equal(0, (poll("slurm_bb_test_" .. hook, j)))
end

local function logged(text)
  for _, l in ipairs(H.logged()) do
    if l.msg:find(text, 1, true) then return true end
  end
  return false
end

describe("staging in accounting", function()
  setup(H.workspace)
  before_each(H.clean)

  it("appends the stage-in summary to AdminComment and logs each stage's", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-a.txt",
                        "#CONDUIT_PRE cp in/a.txt out/acct-b.txt",
                        "#CONDUIT_POST cp in/a.txt out/acct-c.txt" })
    j.info = info_of(j, { admin_comment = "site note" })
    stage(j, "data_in")
    local c = comments(j)
    assert.are.equal(1, #c)
    assert.matches("^site note; conduit attempt 0: in 2 transfers 12 B %d+ s; 0 failed$", c[1])
    assert.truthy(logged("job " .. j.id .. ": conduit attempt 0: in 2 transfers 12 B"))
    -- Slurm polls again (a restart): nothing is added twice
    fresh()
    assert.are.equal(0, (slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(1, #comments(j))
    assert.is_false(logged("conduit attempt"))
    -- stage-out: Slurm refuses updates of a finished job, so the log only
    j.info = info_of(j, { job_state = 3, exit_code = 0, admin_comment = c[1] })
    stage(j, "data_out")
    assert.are.equal(1, #comments(j))
    assert.truthy(logged("job " .. j.id .. ": conduit attempt 0: out 1 transfer 6 B"))
  end)

  it("names an array task, never the array (whose id names every task)", function()
    local a = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-arr-%a.txt" })
    local t = new_job({})
    t.script = a.script
    t.info = info_of(t, { array_job_id = tonumber(a.id), array_task_id = 5 })
    stage(t, "data_in")
    local got = {}
    for line in (slurp(jobstates .. "/admin_comment.log") or ""):gmatch("[^\n]+") do
      if line:find("^" .. a.id .. "_5\t") then got[#got + 1] = line end
    end
    assert.are.equal(1, #got)
  end)

  it("never appends a summary AdminComment already holds", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-held.txt" })
    stage(j, "data_in")
    local first = comments(j)[1]
    -- the StateDir record is gone (say, StateDir was wiped), the comment is not
    sh("rm -rf " .. statedir)
    j.info = info_of(j, { admin_comment = "x; " .. first })
    fresh()
    assert.are.equal(0, (slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(1, #comments(j))
  end)

  it("gives each attempt of a requeued job its own summary", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-rq.txt" })
    stage(j, "data_in")
    j.info = info_of(j, { restart_cnt = 1, submit_time = j.submit + 30 })
    stage(j, "data_in")
    local c = comments(j)
    assert.are.equal(2, #c)
    assert.matches("^conduit attempt 0: in 1 transfer 6 B", c[1])
    -- appended to what Slurm holds by then: attempt 0's summary
    assert.are.equal(c[1], c[2]:sub(1, #c[1]))
    assert.matches("; conduit attempt 1: in 0 transfers 0 B 0 s %(1 kept%); 0 failed$", c[2])
  end)

  it("appends to the AdminComment Slurm holds just before the update", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-edit.txt" })
    j.info = info_of(j, { admin_comment = "site note" })
    -- an operator edits the comment after Slurm handed the hook its job_info
    H.spit(jobstates .. "/admin_comment." .. j.id, "site note; operator: disk checked")
    stage(j, "data_in")
    local c = comments(j)
    assert.are.equal(1, #c)
    assert.matches("^site note; operator: disk checked; conduit attempt 0: in 1 transfer", c[1])
    -- an operator who removed the comment altogether: nothing of the old one
    local k = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-cleared.txt" })
    k.info = info_of(k, { admin_comment = "stale note" })
    H.spit(jobstates .. "/admin_comment." .. k.id, "")
    stage(k, "data_in")
    assert.matches("^conduit attempt 0: in 1 transfer", comments(k)[1])
  end)

  it("writes one JSON line per transfer to AuditLog", function()
    -- (in a directory nobody else may write: work/ is world-writable)
    assert(sh("mkdir -p " .. work .. "/audit && chmod 0755 " .. work .. "/audit"))
    local audit = work .. "/audit/audit-" .. os.time() .. ".log"
    conf({ AuditLog = audit, AdminComment = "no" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/audit-a.txt",
                        "#CONDUIT_POST --when=success cp in/a.txt out/audit-b.txt",
                        "#CONDUIT_POST cp -r in out/audit-dir/" })
    stage(j, "data_in")
    j.info = info_of(j, { job_state = 5, exit_code = 256 })
    stage(j, "data_out")
    assert.are.same({}, comments(j)) -- AdminComment=no
    -- (the hook records, "record":"hook", have a test of their own)
    local lines = {}
    for l in (slurp(audit) or ""):gmatch("[^\n]+") do
      if not l:find('"record":"hook"', 1, true) then lines[#lines + 1] = l end
    end
    assert.are.equal(3, #lines)
    assert.is_nil(lines[1]:find('"record"', 1, true)) -- as older versions wrote
    assert.truthy(lines[1]:find('"job":' .. j.id .. ',', 1, true))
    assert.truthy(lines[1]:find('"direction":"in","line":3,"action":"cp"', 1, true))
    assert.truthy(lines[1]:find('"state":"TRANSFER_FINALIZED","error":"ERROR_NONE"', 1, true))
    assert.truthy(lines[1]:find('"bytes":6,"files":1', 1, true))
    assert.truthy(lines[2]:find('"state":"SKIPPED","when":"success"', 1, true))
    assert.truthy(lines[3]:find('"recursive":true', 1, true))
    assert.truthy(lines[3]:find('"user":"61001"', 1, true))
    local p = io.popen("stat -c %a " .. audit)
    assert.are.equal("640", p:read("*l"))
    p:close()
  end)

  it("records every call of the staging hooks, with its duration", function()
    assert(sh("mkdir -p " .. work .. "/audit && chmod 0755 " .. work .. "/audit"))
    local audit = work .. "/audit/hooks-" .. os.time() .. ".log"
    conf({ AuditLog = audit, AdminComment = "no" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/hookrec-a.txt",
                        "#CONDUIT_POST cp in/a.txt out/hookrec-b.txt" })
    -- every call, with the wall time around it (a record's duration is
    -- inside it) and what it answered
    local calls = {}
    local function call(hook, ...)
      fresh()
      local t0 = H.now_ms()
      local rc, msg = _G[hook](...)
      local wall = H.now_ms() - t0
      -- (job_process writes none: it runs inside slurmctld)
      if hook ~= "slurm_bb_job_process" then
        calls[#calls + 1] = { hook = hook, wall = wall,
                              result = rc ~= 0 and "error" or msg == "BUSY" and "busy" or "ok" }
      end
      return rc, msg
    end
    -- the transfers are held running until a poll has said BUSY, then let
    -- go: each stage gets its BUSY however slowly the hooks run
    local function until_done(hook)
      for _ = 1, 200 do
        local rc, msg = call(hook, j.id, j.script, j.uid, j.uid, j.info)
        if not (rc == 0 and msg == "BUSY") then return rc end
        faults("{}")
        H.sleep(0.1)
      end
    end
    -- a slow server: the stage-in start waits 400 ms for StartTransfer's
    -- answer; each stage's transfers stay running until its first poll
    -- has answered BUSY (until_done lets them go)
    faults('{"stall_ms": {"StartTransfer": 400}, "delay_ms": {"DATA_TRANSFERRING": 600000}}')
    assert.are.equal(0, (call("slurm_bb_job_process", j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (call("slurm_bb_data_in", j.id, j.script, j.uid, j.uid, j.info)))
    faults('{"delay_ms": {"DATA_TRANSFERRING": 600000}}')
    assert.are.equal(0, until_done("slurm_bb_test_data_in"))
    j.info = info_of(j, { job_state = 3, exit_code = 0 })
    faults('{"delay_ms": {"DATA_TRANSFERRING": 600000}}')
    assert.are.equal(0, (call("slurm_bb_data_out", j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, until_done("slurm_bb_test_data_out"))
    assert.are.equal(0, (call("slurm_bb_job_teardown", j.id, j.script, "false", j.uid, j.uid)))
    -- a job_process that refuses a script is an error
    local bad = new_job({ "#CONDUIT_PRE cp --user=root in/a.txt out/x.txt" })
    assert.are.equal(-1, (call("slurm_bb_job_process", bad.script, bad.uid, bad.uid, bad.info)))
    faults("{}")
    local recs = {}
    for l in (slurp(audit) or ""):gmatch("[^\n]+") do
      if l:find('"record":"hook"', 1, true) then recs[#recs + 1] = l end
    end
    assert.are.equal(#calls, #recs)
    local busy = {}
    for i, c in ipairs(calls) do
      local r = recs[i]
      assert.truthy(r:find('^{"time":%d+,"record":"hook","hook":"' .. c.hook .. '",'), r)
      assert.truthy(r:find(',"result":"' .. c.result .. '",', 1, true), r)
      assert.truthy(r:find(',"cluster":"testcluster"', 1, true) or c.hook == "slurm_bb_job_process", r)
      local us = tonumber(r:match(',"duration_us":(%d+)}$'))
      assert.truthy(us, r)
      -- inside the wall time around the call (1 ms of date's resolution)
      assert.is_true(us <= (c.wall + 1) * 1000, r .. " wall " .. c.wall)
      if c.hook:find("data_") then
        assert.truthy(r:find(',"job":' .. j.id .. ',', 1, true), r)
        assert.truthy(r:find(',"stage":"' .. (c.hook:find("_in$") and "in" or "out") .. '",', 1, true), r)
      end
      if c.hook == "slurm_bb_data_in" then
        assert.is_true(us >= 400000, r) -- it waited for the stalled answer
      end
      if c.hook == "slurm_bb_job_teardown" then
        assert.truthy(r:find(',"job":' .. j.id .. ',', 1, true), r)
        assert.is_nil(r:find('"stage"', 1, true))
      end
      if c.result == "busy" then busy[c.hook] = true end
    end
    assert.is_true(busy.slurm_bb_test_data_in and busy.slurm_bb_test_data_out,
                   "the polls said BUSY while the transfers ran")
    -- job_process (the accepted one and the refused one) wrote none: it
    -- runs inside slurmctld, where nothing is written
    for _, r in ipairs(recs) do
      assert.is_nil(r:find('"hook":"slurm_bb_job_process"', 1, true), r)
    end
    -- what the stage hooks started: data_in its one, its polls none; the
    -- stage-out's one by data_out or, when Conduit's answers to its
    -- probes come later, by a poll: one in all
    local out_started = 0
    for i, c in ipairs(calls) do
      local r = recs[i]
      if c.hook == "slurm_bb_data_in" then
        assert.truthy(r:find(',"started":1,"retried":0,"failed":0,', 1, true), r)
      elseif c.hook == "slurm_bb_test_data_in" then
        assert.truthy(r:find(',"started":0,"retried":0,"failed":0,', 1, true), r)
      elseif c.hook:find("data_out") then
        out_started = out_started + tonumber(r:match(',"started":(%d+),'))
        assert.truthy(r:find(',"retried":0,"failed":0,', 1, true), r)
      else
        assert.is_nil(r:find('"started"', 1, true), r)
      end
    end
    assert.are.equal(1, out_started)
  end)

  it("counts a failed stage-in started again as retried in its hook record", function()
    assert(sh("mkdir -p " .. work .. "/audit && chmod 0755 " .. work .. "/audit"))
    local audit = work .. "/audit/retried-" .. os.time() .. ".log"
    conf({ AuditLog = audit, AdminComment = "no" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/retried-a.txt",
                        "#CONDUIT_PRE cp in/a.txt out/retried-b.txt" })
    faults('{"fail_at": [{"state": "VALIDATING", "error": "ERROR_VALIDATION", ' ..
           '"message": "failed to get source[in/a.txt]", "comment": "^SLURMJOB:' .. j.id .. ',.*LINE:4$"}]}')
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(-1, (poll("slurm_bb_test_data_in", j)))
    -- the user fixed it and released the job: Slurm runs data_in again
    faults("{}")
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    local ins = {}
    for l in (slurp(audit) or ""):gmatch("[^\n]+") do
      if l:find('"hook":"slurm_bb_data_in"', 1, true) then ins[#ins + 1] = l end
    end
    assert.are.equal(2, #ins)
    -- the poll that failed the stage counted the failed transfer
    local failed = 0
    for l in (slurp(audit) or ""):gmatch("[^\n]+") do
      if l:find('"hook":"slurm_bb_test_data_in"', 1, true) then
        failed = failed + tonumber(l:match(',"failed":(%d+),'))
        if l:find('"result":"error"', 1, true) then
          assert.truthy(l:find(',"failed":1,', 1, true), l)
        end
      end
    end
    assert.are.equal(1, failed)
    assert.truthy(ins[1]:find(',"started":2,"retried":0,', 1, true), ins[1])
    assert.truthy(ins[2]:find(',"started":1,"retried":1,', 1, true), ins[2])
  end)

  it("logs an AuditLog it cannot write and still finishes the stage", function()
    conf({ AuditLog = work .. "/no/such/dir/audit.log" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/audit-bad.txt" })
    stage(j, "data_in")
    assert.truthy(logged("cannot write AuditLog " .. work .. "/no/such/dir/audit.log"))
  end)

  -- AuditLog is trusted only as a regular file of the hook's own uid in a
  -- directory nobody else may write; anything else is logged, and no line
  -- goes there, without failing or blocking the stage.
  local function refused_audit(path, why)
    conf({ AuditLog = path, AdminComment = "no" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/audit-refused.txt" })
    local t0 = H.now_ms()
    stage(j, "data_in")
    -- a whole stage, polls included, under ASan on a loaded machine
    assert.is_true(H.now_ms() - t0 < 10000)
    local n = 0
    for _, l in ipairs(H.logged()) do
      -- each call's hook record, refused too, is said at debug level only
      if l.level == 2 then
        assert.truthy(l.msg:find("no hook record written to AuditLog " .. path .. ": ", 1, true), l.msg)
        assert.truthy(l.msg:find(why, 1, true), l.msg)
      elseif l.msg:find("AuditLog " .. path, 1, true) then
        n = n + 1
        assert.truthy(l.msg:find(why, 1, true), l.msg)
        assert.truthy(l.msg:find("no audit line written", 1, true), l.msg)
      end
    end
    assert.are.equal(1, n) -- said once
    return j
  end

  it("refuses an AuditLog that is a FIFO, never blocking on it", function()
    local dir = work .. "/audit-fifo"
    assert(sh("rm -rf " .. dir .. " && mkdir -p " .. dir .. " && chmod 0755 " .. dir ..
              " && mkfifo -m 0640 " .. dir .. "/with-reader " .. dir .. "/no-reader"))
    -- a reader holds one open (so a plain open would succeed and write into it)
    assert(sh("(exec 3<>" .. dir .. "/with-reader; sleep 6) >/dev/null 2>&1 &"))
    refused_audit(dir .. "/with-reader", "is not a regular file")
    -- the other has no reader until 8 s from now: a blocking open would
    -- wait for it (the late reader opens it read-write, so it never waits
    -- itself, for a writer that is not coming)
    assert(sh("(sleep 8; exec 3<>" .. dir .. "/no-reader) >/dev/null 2>&1 &"))
    refused_audit(dir .. "/no-reader", "is not a regular file")
  end)

  it("refuses an AuditLog that another uid owns", function()
    local dir = work .. "/audit-owner"
    local path = dir .. "/audit.log"
    assert(sh("rm -rf " .. dir .. " && mkdir -p " .. dir .. " && chmod 0755 " .. dir ..
              " && : > " .. path .. " && chown 61002 " .. path .. " && chmod 0666 " .. path))
    refused_audit(path, "belongs to uid 61002")
    assert.are.equal("", slurp(path))
  end)

  it("refuses an AuditLog in a directory others may write", function()
    for _, mode in ipairs({ "0777", "0775", "1777" }) do
      local dir = work .. "/audit-dir-" .. mode
      assert(sh("rm -rf " .. dir .. " && mkdir -p " .. dir .. " && chmod " .. mode .. " " .. dir))
      refused_audit(dir .. "/audit.log", "writable by group or others")
      assert.is_nil(slurp(dir .. "/audit.log"))
    end
  end)

  it("reports a scontrol that refuses, without failing the stage", function()
    conf({ Scontrol = "/bin/false" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/acct-refused.txt" })
    stage(j, "data_in")
    assert.truthy(logged("could not add the staging summary to AdminComment"))
  end)
end)

-- array_spec.lua - one shared stage-in per job array, against the Conduit
-- test server: the first task starts it, the others join it, its result
-- is theirs, a cancelled task aborts it only when no other task waits on
-- it, and two tasks never both start it.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(80000)
local sh, slurp, spit, conf, faults, fresh = H.sh, H.slurp, H.spit, H.conf, H.faults, H.fresh
local info_of, new_job, rpc_mark, rpcs_since = H.info_of, H.new_job, H.rpc_mark, H.rpcs_since
local poll, make_file, sleep = H.poll, H.make_file, H.sleep
local work, statedir, jobstates = H.work, H.statedir, H.jobstates

local n = 0
local array = H.array

-- What squeue says: each task's own row, and the array's id lists them all.
local function set_state(tasks, i, state)
  tasks[i].state = state
  spit(jobstates .. "/" .. tasks[i].id, state)
  local rows = {}
  for k, t in ipairs(tasks) do
    rows[#rows + 1] = t.id .. " " .. tasks[1].id .. " " .. (k - 1) .. " " .. t.state
  end
  spit(jobstates .. "/" .. tasks[1].id, table.concat(rows, "\n") .. "\n")
end

local function data_in(t)
  fresh()
  return (slurm_bb_data_in(t.id, t.script, t.uid, t.uid, t.info))
end

local function teardown(t, hurry)
  fresh()
  return (slurm_bb_job_teardown(t.id, t.script, hurry and "true" or "false", t.uid, t.uid))
end

-- Hold an array's lock file in the background, as another task's hook
-- would, until the returned function lets it go.  The holder says when
-- it has the lock, and letting go returns once it has, so nothing here
-- depends on how fast a loaded machine runs the holder.  Nothing is
-- killed (under ASan every child has libasan preloaded; pkill hangs).
local holds = 0
local function hold_lock(path)
  holds = holds + 1
  local held = work .. "/hold-" .. holds .. ".held"
  local go = work .. "/hold-" .. holds .. ".go"
  assert(sh("(flock " .. path .. " sh -c 'touch " .. held .. "; while [ ! -e " .. go ..
            " ]; do sleep 0.05; done' >/dev/null 2>&1 &)"))
  local waited = 0
  while true do
    local f = io.open(held)
    if f then f:close() break end
    assert(waited < 60, "the lock holder never took " .. path)
    sleep(0.05)
    waited = waited + 0.05
  end
  return function()
    assert(sh("touch " .. go .. " && flock " .. path .. " true"))
  end
end

describe("one shared stage-in per job array", function()
  setup(function()
    assert(sh("mkdir -p " .. work .. "/in " .. work .. "/out && chmod 0777 " .. work .. "/in " ..
              work .. "/out"))
    make_file(work .. "/in/a.txt", "alpha\n")
  end)
  before_each(function()
    conf()
    faults()
    sh("rm -rf " .. statedir)
    n = n + 1
  end)

  it("is started once by the first task; the others join it and see the data", function()
    local tasks = array(4, { "#CONDUIT_PRE cp in/a.txt out/shared-" .. n .. ".txt" })
    local mark = rpc_mark()
    for _, t in ipairs(tasks) do assert.are.equal(0, data_in(t)) end
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    for _, t in ipairs(tasks) do assert.are.equal(0, (poll("slurm_bb_test_data_in", t))) end
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal("alpha\n", slurp(work .. "/out/shared-" .. n .. ".txt"))
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", tasks[3].id)
    assert.matches("\nin%s+3%s+0%s+TRANSFER_FINALIZED.*%(shared with 4 tasks%)", out)
    fresh()
    local _, json = slurm_bb_get_status("61001", "61001", "conduit", tasks[2].id, "json")
    assert.matches('"shared_with_tasks":4', json, 1, true)
  end)

  it("gives every task the shared transfer's failure, with its line", function()
    local tasks = array(3, { "#CONDUIT_PRE cp in/missing-" .. n .. ".txt out/never.txt" })
    -- the failure comes once every task has joined (a stage-in Slurm runs
    -- again after a failure is started again: that is another test)
    faults('{"delay_ms": {"VALIDATING": 2000}}')
    local mark = rpc_mark()
    for _, t in ipairs(tasks) do assert.are.equal(0, data_in(t)) end
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    for _, t in ipairs(tasks) do
      local rc, msg = poll("slurm_bb_test_data_in", t)
      assert.are.equal(-1, rc)
      assert.matches("^line 3: stage%-in cp failed: ERROR_VALIDATION", msg)
    end
  end)

  it("keeps per-task directives per task and shares the rest", function()
    local tasks = array(3, { "#CONDUIT_PRE cp in/a.txt out/common-" .. n .. ".txt" })
    -- task-specific content (what %a expands to) never matches another's
    for i, t in ipairs(tasks) do
      local s = slurp(t.script) .. ""
      t.script = work .. "/task-" .. t.id .. ".sh"
      spit(t.script, s:gsub("\nsrun", "\n#CONDUIT_PRE cp in/a.txt out/own-" .. n .. "-" .. i ..
                            ".txt\nsrun"))
    end
    local mark = rpc_mark()
    for _, t in ipairs(tasks) do assert.are.equal(0, data_in(t)) end
    assert.are.equal(1 + 3, rpcs_since(mark, "StartTransfer"))
    for i, t in ipairs(tasks) do
      assert.are.equal(0, (poll("slurm_bb_test_data_in", t)))
      assert.are.equal("alpha\n", slurp(work .. "/out/own-" .. n .. "-" .. i .. ".txt"))
    end
  end)

  it("is not aborted when one task is cancelled, and is when the last one goes", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local tasks = array(3, { "#CONDUIT_PRE cp in/a.txt out/slow-" .. n .. ".txt" })
    for _, t in ipairs(tasks) do assert.are.equal(0, data_in(t)) end
    local mark = rpc_mark()
    for i = 1, 3 do set_state(tasks, i, "PENDING") end
    set_state(tasks, 2, "CANCELLED")
    assert.are.equal(0, teardown(tasks[2], true))
    assert.are.equal(0, rpcs_since(mark, "StopTransfer"))
    -- the others still wait on it
    assert.are.same({ 0, "BUSY" }, { (function()
      fresh()
      return slurm_bb_test_data_in(tasks[1].id, tasks[1].script, tasks[1].uid, tasks[1].uid,
                                   tasks[1].info)
    end)() })
    -- the whole array is cancelled
    set_state(tasks, 1, "CANCELLED")
    set_state(tasks, 3, "CANCELLED")
    assert.are.equal(0, teardown(tasks[1], true))
    assert.are.equal(0, teardown(tasks[3], true))
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
    -- nothing of the array is left in StateDir
    local left = io.popen("ls " .. statedir .. " 2>/dev/null | grep -c '\\." .. tasks[1].id ..
                          "\\.shared'"):read("*l")
    assert.are.equal("0", left)
  end)

  it("is never started twice: a task that finds the array busy comes back", function()
    local tasks = array(2, { "#CONDUIT_PRE cp in/a.txt out/locked-" .. n .. ".txt" })
    local lock = statedir .. "/testcluster." .. tasks[1].id .. ".shared-lock"
    assert(sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir))
    -- another task's hook holds the array's lock meanwhile
    local release = hold_lock(lock)
    local mark = rpc_mark()
    local t0 = H.now_ms()
    assert.are.equal(0, data_in(tasks[2]))
    assert.matches("another task of array " .. tasks[1].id .. " is starting the shared transfers",
                   H.logged()[1].msg, 1, true)
    -- it waits 2 s for the lock (CBB_SHARED_WAIT_MS, by the clock), and
    -- its holder never lets go before release(): the bound leaves ASan on
    -- a loaded machine room and still fails a hook that waits it out
    assert.is_true(H.now_ms() - t0 < 8000)
    fresh()
    assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(tasks[2].id, tasks[2].script,
                                                           tasks[2].uid, tasks[2].uid,
                                                           tasks[2].info) })
    assert.are.equal(0, rpcs_since(mark, "StartTransfer"))
    release()
    assert.are.equal(0, (poll("slurm_bb_test_data_in", tasks[2])))
    assert.are.equal(0, data_in(tasks[1]))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
  end)

  -- Slurm gives the stage hooks a rewritten script at a /proc/ path when a
  -- directive has a '%' (symbols replaced, only the directive lines); which
  -- lines the tasks share is then read from the job's own script, by the
  -- rule `conduit-bb check` shows: a %a, %j or %b that is a symbol.
  it("shares a line whose %% makes a, j or b plain text, as conduit-bb check says", function()
    local raw = { "#CONDUIT_PRE cp in/a.txt out/pct-" .. n .. "-%%a.txt",
                  "#CONDUIT_PRE cp in/a.txt out/pct-" .. n .. "-%%j%%b.txt",
                  "#CONDUIT_PRE cp in/a.txt out/task-" .. n .. "-%a.txt",
                  "#CONDUIT_PRE cp in/a.txt out/job-" .. n .. "-%j.txt",
                  "#CONDUIT_PRE cp in/a.txt out/digit-" .. n .. "-%b.txt" }
    local tasks = array(3, raw)
    local a = tasks[1].id
    local ssl = work .. "/ssl-" .. n
    spit(work .. "/slurm-" .. n .. ".conf", "ClusterName=testcluster\nStateSaveLocation=" ..
         ssl .. "\n")
    local args = {}
    for k, t in ipairs(tasks) do
      -- the job's own script where slurmctld keeps it
      local dir = ssl .. "/hash." .. tonumber(t.id) % 10 .. "/job." .. t.id
      assert(sh("mkdir -p " .. dir))
      spit(dir .. "/script", slurp(tasks[1].script))
      -- and what Slurm makes of its directive lines for this task
      local rw = {}
      for i, l in ipairs(raw) do
        rw[i] = l:gsub("%%(.)", { ["%"] = "%", a = tostring(k - 1), j = t.id,
                                  b = tostring((k - 1) % 10), A = a })
      end
      local memfd = work .. "/rewritten-" .. t.id
      spit(memfd, "#!/bin/sh\n" .. table.concat(rw, "\n") .. "\n")
      args[#args + 1] = t.id .. ":" .. a .. ":" .. (k - 1) .. ":" .. t.submit .. ":/proc/self/root" ..
                        memfd
    end
    local verdict = work .. "/rewritten-" .. n .. ".verdict"
    local mark = rpc_mark()
    assert(sh("env SLURM_CONF=" .. work .. "/slurm-" .. n .. ".conf lua" ..
              _VERSION:match("%d+%.%d+") .. " tests/lua/rewritten.lua " ..
              os.getenv("CBB_MODULE_DIR") .. " " .. work .. " " .. verdict .. " " ..
              table.concat(args, " ")))
    local v = slurp(verdict) or "no verdict"
    for _, t in ipairs(tasks) do assert.matches(t.id .. " 0 0 nil\n", v, 1, true) end
    -- the two %% lines once for the array, the other three for each task
    assert.are.equal(2 + 3 * 3, rpcs_since(mark, "StartTransfer"))
    assert.are.equal("alpha\n", slurp(work .. "/out/pct-" .. n .. "-%a.txt"))
    assert.are.equal("alpha\n", slurp(work .. "/out/pct-" .. n .. "-%j%b.txt"))
    for k, t in ipairs(tasks) do
      assert.are.equal("alpha\n", slurp(work .. "/out/task-" .. n .. "-" .. (k - 1) .. ".txt"))
      assert.are.equal("alpha\n", slurp(work .. "/out/job-" .. n .. "-" .. t.id .. ".txt"))
    end
    -- and conduit-bb check marks the same two lines
    local p = io.popen("build/conduit-bb check " .. tasks[1].script .. " --job-id " .. a ..
                       " --array-task 0 --workdir " .. work .. " 2>&1")
    local out = p:read("*a")
    p:close()
    local marked = {}
    for line in out:gmatch("line (%d+):[^\n]*%(once for the whole array%)") do
      marked[#marked + 1] = line
    end
    assert.are.same({ "3", "4" }, marked, out)
  end)

  -- Slurm hands job ids out again: StateDir may still hold the shared
  -- records of an earlier array that had this id (its tasks never tore
  -- down: slurmctld's state was wiped, or a teardown never came).
  local function stale_shared(a, lines)
    assert(sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir))
    spit(statedir .. "/testcluster." .. a .. ".shared", table.concat(lines, "\n") .. "\n")
  end

  it("never takes an earlier array's shared records for its own (a reused id)", function()
    local tasks = array(2, { "#CONDUIT_PRE cp in/a.txt out/reused-" .. n .. ".txt" })
    local old = tasks[1].submit - 86400
    -- the earlier array started the directive and had task 4242 join it
    -- (moments ago: slurmctld's state was wiped, its ids start over)
    stale_shared(tasks[1].id, { "v1 0 " .. old .. " 3 0 1 " .. os.time() .. " S stale-transfer-id",
                                "v1 0 " .. old .. " 3 0 0 " .. old .. " J 4242" })
    local mark = rpc_mark()
    assert.are.equal(0, data_in(tasks[1]))
    -- started at once: the earlier array's start is not this one's
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(0, data_in(tasks[2]))
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    for _, t in ipairs(tasks) do assert.are.equal(0, (poll("slurm_bb_test_data_in", t))) end
    -- bbstat counts this array's two tasks, not the earlier one's
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", tasks[2].id)
    assert.matches("%(shared with 2 tasks%)", out)
    -- the file now says whose it is
    assert.matches("^a1 " .. tasks[1].submit .. " 61001\n",
                   slurp(statedir .. "/testcluster." .. tasks[1].id .. ".shared"))
  end)

  it("aborts the shared stage-in when its last task goes, whatever an earlier array left", function()
    faults('{"delay_ms": {"DATA_TRANSFERRING": 60000}}')
    local tasks = array(2, { "#CONDUIT_PRE cp in/a.txt out/reused-slow-" .. n .. ".txt" })
    local old = tasks[1].submit - 86400
    -- an earlier array's task 4343 joined; a job with that id is alive now
    stale_shared(tasks[1].id, { "v1 0 " .. old .. " 3 0 0 " .. old .. " J 4343" })
    for _, t in ipairs(tasks) do assert.are.equal(0, data_in(t)) end
    set_state(tasks, 1, "CANCELLED")
    set_state(tasks, 2, "CANCELLED")
    local rows = slurp(jobstates .. "/" .. tasks[1].id)
    spit(jobstates .. "/" .. tasks[1].id, rows .. "4343 " .. tasks[1].id .. " 9 PENDING\n")
    local mark = rpc_mark()
    assert.are.equal(0, teardown(tasks[1], true))
    assert.are.equal(0, teardown(tasks[2], true))
    assert.are.equal(1, rpcs_since(mark, "StopTransfer"))
  end)

  it("leaves an earlier array's records alone when another user's array has the id", function()
    local tasks = array(1, { "#CONDUIT_PRE cp in/a.txt out/reused-uid-" .. n .. ".txt" })
    local later = tasks[1].submit + 100
    -- a file headed by a later array (of uid 61002) is not this one's
    stale_shared(tasks[1].id, { "a1 " .. later .. " 61002",
                                "v2 0 " .. later .. " 3 0 0 " .. later .. " J 5151 61002" })
    assert.are.equal(0, data_in(tasks[1]))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", tasks[1])))
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", tasks[1].id)
    assert.is_nil(out:find("shared with 2", 1, true))
  end)

  it("sweeps an array's lock and records once both are a week unused, never a held lock", function()
    assert(sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir))
    local f = statedir .. "/testcluster."
    for _, name in ipairs({ "7001.shared", "7001.shared-lock", "7002.shared-lock",
                            "7003.shared", "7003.shared-lock", "7004.shared-lock" }) do
      assert(sh(": > " .. f .. name .. " && chmod 0600 " .. f .. name))
    end
    -- 7001: both old; 7002: an old lock alone; 7003: old lock, fresh records;
    -- 7004: old, but a task holds it
    assert(sh("touch -d '8 days ago' " .. f .. "7001.shared " .. f .. "7001.shared-lock " ..
              f .. "7002.shared-lock " .. f .. "7003.shared-lock " .. f .. "7004.shared-lock"))
    local release = hold_lock(f .. "7004.shared-lock")
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/sweep-" .. n .. ".txt" })
    assert.are.equal(0, teardown(j, false))
    local function there(name)
      local p = io.popen("test -e " .. f .. name .. " && echo y || echo n")
      local y = p:read("*l") == "y"
      p:close()
      return y
    end
    assert.is_false(there("7001.shared"))
    assert.is_false(there("7001.shared-lock"))
    assert.is_false(there("7002.shared-lock"))
    assert.is_true(there("7003.shared"))
    assert.is_true(there("7003.shared-lock"))
    assert.is_true(there("7004.shared-lock"))
    release()
  end)

  it("a requeued task stages in on its own", function()
    local tasks = array(2, { "#CONDUIT_PRE cp --every-attempt in/a.txt out/again-" .. n .. ".txt",
                             "#CONDUIT_PRE cp in/a.txt out/once-" .. n .. ".txt" })
    local mark = rpc_mark()
    for _, t in ipairs(tasks) do
      assert.are.equal(0, data_in(t))
      assert.are.equal(0, (poll("slurm_bb_test_data_in", t)))
    end
    -- --every-attempt is per task; the other directive is shared
    assert.are.equal(2 + 1, rpcs_since(mark, "StartTransfer"))
    local t = tasks[2]
    t.info = info_of(t, { array_job_id = tonumber(tasks[1].id), array_task_id = 1,
                          restart_cnt = 1, submit_time = t.submit + 30 })
    mark = rpc_mark()
    assert.are.equal(0, data_in(t))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", t)))
    -- attempt 1: the --every-attempt directive again, the shared one
    -- kept.  Its file is overwritten, not moved aside: the task did not
    -- create it (task 0 wrote it first), and a file that was there
    -- before is written over as one run would
    assert.are.equal(1, rpcs_since(mark, "StartTransfer"))
    assert.are.equal(0, select(2, slurp(H.sdir .. "/rpc.log"):sub(mark.off + 1)
                                 :gsub("CONDUIT_ASIDE", "")))
  end)
end)

-- array_race_spec.lua - an array's shared stage-in under tasks that run
-- at once, each in a process of its own (tests/lua/array_task.lua), as
-- slurmscriptd runs them: a teardown never pulls the array's lock away
-- from a task inside it, and however the tasks start, join and tear
-- down together, each shared stage-in is started exactly once.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(97000)
local sh, slurp, spit, faults, fresh = H.sh, H.slurp, H.spit, H.faults, H.fresh
local rpc_mark, sleep = H.rpc_mark, H.sleep
local work, statedir, jobstates = H.work, H.statedir, H.jobstates
local module_dir = assert(os.getenv("CBB_MODULE_DIR"))
local lua = "lua" .. _VERSION:match("%d+%.%d+")

local array = H.array

-- What squeue says: each task's own row, and the array's id lists them all.
local function squeue(tasks)
  local rows = {}
  for _, t in ipairs(tasks) do
    rows[#rows + 1] = t.id .. " " .. tasks.id .. " " .. t.task .. " " .. t.state
    if t.task > 0 then spit(jobstates .. "/" .. t.id, t.state) end
  end
  spit(jobstates .. "/" .. tasks.id, table.concat(rows, "\n") .. "\n")
end

local outs = {}
local function spawn(tasks, t, action, delay)
  local out = work .. "/race-" .. t.id .. "-" .. action .. "-" .. #outs .. ".out"
  os.remove(out .. ".rc")
  outs[#outs + 1] = out
  -- (the status file appears whole, renamed into place: wait_all takes
  -- its existence for the task's end)
  assert(sh(string.format("(%s tests/lua/array_task.lua %s %s %s %s %s %s %d %d %s >%s 2>&1; " ..
                          "echo $? >%s.rc.new; mv %s.rc.new %s.rc) </dev/null >/dev/null 2>&1 &",
                          lua, module_dir, action, t.id, t.script, work, tasks.id, t.task,
                          t.submit, delay or "0", out, out, out, out)))
  return out
end

-- Wait for every spawned task; their outputs, each checked for a
-- sanitizer report (the module may be the ASan build).
local function wait_all(limit)
  local t0 = os.time()
  local got = {}
  for _, out in ipairs(outs) do
    while not slurp(out .. ".rc") do
      assert(os.time() - t0 < limit, "a task did not finish: " .. out)
      sleep(0.1)
    end
    local text = slurp(out) or ""
    assert.is_nil(text:find("Sanitizer", 1, true), text)
    assert.is_nil(text:find("runtime error", 1, true), text)
    assert.are.equal("0", slurp(out .. ".rc"):match("%d+"), text)
    got[out] = text
  end
  outs = {}
  return got
end

-- StartTransfers of the array's shared stage-in since `mark`.
local function shared_starts(mark, a)
  local n = 0
  for line in (slurp(H.sdir .. "/rpc.log") or ""):sub(mark.off + 1):gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and
       line:find("SLURMJOB:" .. a .. ",CLUSTER:testcluster,RESTART:0,", 1, true) and
       line:find("SLURMTYPE:CONDUIT_PRE_ARRAY,", 1, true) then
      n = n + 1
    end
  end
  return n
end

describe("an array's shared stage-in, tasks in processes of their own", function()
  setup(H.workspace)
  before_each(H.clean)

  it("a teardown never takes the array's lock from a task that is inside it", function()
    -- StartTransfer answers 2.5 s late (the transfer exists only then)
    faults('{"stall_ms": {"StartTransfer": 2500}}')
    local tasks = array(3, { "#CONDUIT_PRE cp in/a.txt out/race-one.txt" })
    local A, B, C = tasks[1], tasks[2], tasks[3]
    squeue(tasks)
    -- B joined the array's shared stage-ins before (its own record says so)
    assert(sh("mkdir -p " .. statedir .. " && chmod 0700 " .. statedir))
    spit(statedir .. "/testcluster." .. B.id .. ".started",
         "v1 0 " .. B.submit .. " 3 0 0 " .. os.time() .. " J " .. tasks.id .. "\n")
    local mark = rpc_mark()
    spawn(tasks, A, "start") -- A takes the lock and starts the shared transfer
    sleep(0.8)
    -- B's teardown while A is inside, before A joined: nobody it knows
    -- of waits on the shared records
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(B.id, B.script, "false", B.uid, B.uid)))
    -- C comes: it must find A's start, not a fresh lock of its own
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(C.id, C.script, C.uid, C.uid, C.info)))
    wait_all(30)
    faults()
    -- (the server logs a call when it answers it: A's start, stalled past
    -- RequestTimeout on a busy machine, may be answered after A gave up
    -- and ended; its line is waited for, not guessed)
    local t0 = os.time()
    while shared_starts(mark, tasks.id) == 0 and os.time() - t0 < 30 do sleep(0.1) end
    assert.are.equal(1, shared_starts(mark, tasks.id))
  end)

  it("no task joins a shared stage-in that the last task's teardown is aborting", function()
    -- the shared transfer runs until the test lets it end
    local slow = '"delay_ms": {"DATA_TRANSFERRING": 600000}'
    faults("{" .. slow .. "}")
    local tasks = array(2, { "#CONDUIT_PRE cp in/a.txt out/race-abort.txt" })
    local A, C = tasks[1], tasks[2]
    squeue(tasks)
    local mark = rpc_mark()
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(A.id, A.script, A.uid, A.uid, A.info)))
    -- A is cancelled while C still pends: A's hurried teardown finds no
    -- other task waiting on the shared stage-in and aborts it; the Query
    -- it aborts from is held at a gate until C has tried to start
    A.state = "CANCELLED"
    squeue(tasks)
    local gate = work .. "/gate-" .. A.id
    os.remove(gate)
    faults("{" .. slow .. ', "gate": [{"method": "Query", "comment": "^(?!.*' .. C.id ..
           ')", "file": "' .. gate .. '"}]}')
    local out = spawn(tasks, A, "hurry")
    local t0 = os.time()
    while not (slurp(H.sdir .. "/rpc.log") or ""):sub(mark.off + 1):find('"gated"', 1, true) do
      assert(os.time() - t0 < 30, "A's teardown never sent its Query")
      sleep(0.05)
    end
    -- C starts now: it must not join the transfer being aborted
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(C.id, C.script, C.uid, C.uid, C.info)))
    spit(gate, "")
    local got = wait_all(60)
    assert.truthy(got[out]:find("teardown 0 ", 1, true), got[out])
    -- the aborted transfer failed before C came: C stages in all the same
    faults()
    local rc, msg = H.poll("slurm_bb_test_data_in", C, 60)
    assert.are.equal(0, rc, msg)
    assert.are.equal("alpha\n", slurp(work .. "/out/race-abort.txt"))
    -- A's start and C's own: C joined nothing that was aborted
    assert.are.equal(2, shared_starts(mark, tasks.id))
  end)

  it("starts each shared stage-in exactly once while many tasks join and tear down at once", function()
    faults('{"stall_ms": {"StartTransfer": 300, "Query": 50}}')
    local arrays, mark = {}, rpc_mark()
    for k = 1, 3 do
      local tasks = array(7, { "#CONDUIT_PRE cp in/a.txt out/race-many-" .. k .. ".txt" })
      tasks[7].state = "CANCELLED"
      squeue(tasks)
      arrays[k] = tasks
    end
    -- every task at once: five stage in and tear down at their end (the
    -- first teardowns come while others still start or join), one only
    -- tears down (Slurm ran its teardown first), and one is cancelled
    -- once the others are in (a hurried teardown: the shared transfer
    -- stays, others wait on it)
    for _, tasks in ipairs(arrays) do
      for _, t in ipairs(tasks) do
        if t.task == 5 then
          spawn(tasks, t, "teardown")
        elseif t.task == 6 then
          spawn(tasks, t, "cancel", "1.5")
        else
          spawn(tasks, t, "done")
        end
      end
    end
    local got = wait_all(120)
    faults()
    for _, tasks in ipairs(arrays) do
      assert.are.equal(1, shared_starts(mark, tasks.id))
    end
    -- every task that staged in got the data
    local ok = 0
    for _, text in pairs(got) do
      if text:find("test_data_in 0 ", 1, true) then ok = ok + 1 end
      assert.is_nil(text:find("test_data_in -1", 1, true), text)
    end
    assert.are.equal(3 * 5, ok)
    for k, tasks in ipairs(arrays) do
      assert.are.equal("alpha\n", slurp(work .. "/out/race-many-" .. k .. ".txt"), tasks.id)
    end
  end)
end)

-- status_spec.lua - no stage lost to a server that answers badly.  Every
-- gRPC status, for each RPC the stage hooks send (StartTransfer, Query),
-- given before the server does the work or after it, in stage-in and in
-- stage-out: the stage either completes with its directive's transfer
-- created exactly once and the file in place, or fails at once with the
-- server's message.  The test server's `inject` knob gives the status
-- (tests/conduit/server.py); the expected meaning of each status is this
-- file's own table, written from docs/admin.md ("How conduit_bb reads
-- Conduit's answers"), not read from the module.
--
-- The whole table runs under one Lua (CBB_STATUS_TABLE=all, set by
-- tests/run-checks.sh for Lua 5.4); the other runs take one status of
-- each meaning, enough to exercise the Lua glue and the sanitizers.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(95000)
local slurp, conf, faults, fresh = H.slurp, H.conf, H.faults, H.fresh
local new_job, poll, work = H.new_job, H.poll, H.work

-- R: refused, final; T: nothing happened, try again; M: it may have
-- happened.  For a Query, T and M both mean: ask again.
local STATUSES = {
  { "CANCELLED", "M" }, { "UNKNOWN", "R", "transfer[x] has a Conduit error" },
  { "INVALID_ARGUMENT", "R" }, { "DEADLINE_EXCEEDED", "M" }, { "NOT_FOUND", "R" },
  { "ALREADY_EXISTS", "R" }, { "PERMISSION_DENIED", "R" }, { "RESOURCE_EXHAUSTED", "T" },
  { "FAILED_PRECONDITION", "R" }, { "ABORTED", "T" }, { "OUT_OF_RANGE", "R" },
  { "UNIMPLEMENTED", "R" }, { "INTERNAL", "M" }, { "UNAVAILABLE", "M" },
  { "DATA_LOSS", "M" }, { "UNAUTHENTICATED", "R" },
  -- UNKNOWN is Conduit's code for its own errors, but not only that
  { "UNKNOWN", "M", "" },
  { "UNKNOWN", "T", "server shutting down" },
  { "UNKNOWN", "M", "Exception calling application: boom" },
}
local SOME = { CANCELLED = true, UNAVAILABLE = true, RESOURCE_EXHAUSTED = true,
               PERMISSION_DENIED = true }

-- StartTransfers the server created for a job (from its log).
local function created(job)
  local n = 0
  for line in (slurp(H.sdir .. "/rpc.log") or ""):gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and line:find('"status": "OK"', 1, true)
       and line:find("SLURMJOB:" .. job.id .. ",", 1, true) then
      n = n + 1
    end
  end
  return n
end

local function case(stage, method, after, st)
  local code, class, message = st[1], st[2], st[3]
  if message == nil then message = "injected " .. code end
  local name = ("tmp-status-%s-%s-%s-%s-%d"):format(stage, method, after and "after" or "before",
                                                   code, #message)
  local dir = stage == "in" and "#CONDUIT_PRE" or "#CONDUIT_POST"
  local j = new_job({ dir .. " cp in/a.txt out/" .. name .. ".txt" })
  faults(([[{"inject": [{"method": "%s", "code": "%s", "message": "%s", "after": %s,
             "count": 1, "comment": "SLURMJOB:%s,", "tag": "%s"}]}]]):format(
    method, code, message, tostring(after), j.id, name))
  local hook = stage == "in" and "slurm_bb_data_in" or "slurm_bb_data_out"
  fresh()
  local rc, msg = _G[hook](j.id, j.script, j.uid, j.uid, j.info)
  if class == "R" then
    assert.are.equal(-1, rc, name)
    local shown = message == "" and "(no message)" or message
    local where = method == "StartTransfer" and "^line 3: " or "^"
    assert.matches(where .. "conduit: server said: " .. shown:gsub("%p", "%%%0") .. "$", msg)
    assert.are.equal((after and method == "StartTransfer") and 1 or 0, created(j), name)
    return
  end
  assert.are.equal(0, rc, name .. ": " .. tostring(msg))
  rc, msg = poll(stage == "in" and "slurm_bb_test_data_in" or "slurm_bb_test_data_out", j, 30)
  assert.are.same({ 0, nil }, { rc, msg }, name)
  assert.are.equal(1, created(j), name)
  assert.are.equal("alpha\n", slurp(work .. "/out/" .. name .. ".txt"), name)
end

describe("every gRPC status from the server", function()
  setup(function()
    H.workspace()
  end)
  before_each(function()
    H.clean()
    -- an unsure start that never shows up is given up on after 1 s
    conf({ StartVisibleGrace = "1", RequestTimeout = "5" })
  end)
  after_each(function() faults() end)

  local all = os.getenv("CBB_STATUS_TABLE") == "all"
  for _, stage in ipairs({ "in", "out" }) do
    for _, method in ipairs({ "StartTransfer", "Query" }) do
      for _, after in ipairs({ false, true }) do
        for _, st in ipairs(STATUSES) do
          -- a server that says "nothing happened" after doing it breaks
          -- gRPC's contract: no client can tell it from the truth
          local lie = after and method == "StartTransfer" and st[2] == "T"
          if not lie and (all or (SOME[st[1]] and st[3] == nil)) then
            local what = ("stage-%s: %s answered %s%s %s the work: %s"):format(
              stage, method, st[1], st[3] and (" '" .. st[3] .. "'") or "",
              after and "after" or "before",
              st[2] == "R" and "fails at once with the message" or "completes, started once")
            it(what, function() case(stage, method, after, st) end)
          end
        end
      end
    end
  end

  it("answers RESOURCE_EXHAUSTED twice to StartTransfer: started within the hook", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/tmp-status-twice.txt" })
    faults(([[{"inject": [{"method": "StartTransfer", "code": "RESOURCE_EXHAUSTED",
               "message": "busy", "count": 2, "comment": "SLURMJOB:%s,"}]}]]):format(j.id))
    fresh()
    local mark = H.rpc_mark()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- one request, sent three times
    assert.are.equal(1, H.rpcs_since(mark, "StartTransfer"))
    assert.are.equal(1, created(j))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
  end)

  it("a server that keeps saying 'try again' fails the stage after ServerDownGrace", function()
    conf({ StartVisibleGrace = "1", ServerDownGrace = "1" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/tmp-status-busy.txt" })
    faults(([[{"inject": [{"method": "StartTransfer", "code": "RESOURCE_EXHAUSTED",
               "message": "busy", "count": 1000, "comment": "SLURMJOB:%s,"}]}]]):format(j.id))
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local rc, msg = poll("slurm_bb_test_data_in", j, 10)
    assert.are.equal(-1, rc)
    assert.matches("^conduit: server not taking transfers for %d+ s %(ServerDownGrace=1 s%): " ..
                   "line 3: conduit: server said: busy$", msg)
    assert.are.equal(0, created(j))
  end)
end)

describe("transfer ids from the server", function()
  setup(function() H.workspace() end)
  before_each(function()
    H.clean()
    conf({ StartVisibleGrace = "1" })
  end)
  after_each(function() faults() end)

  it("one that could break a StateDir record is a malformed reply, never written", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/tmp-status-badid.txt" })
    faults([[{"id_suffix": " x\nv1 forged"}]])
    fresh()
    -- the start went through, but its id cannot be trusted: unconfirmed
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    local said = {}
    for _, l in ipairs(H.logged()) do said[#said + 1] = l.msg end
    assert.matches("reply without a usable transfer id", table.concat(said, "\n"))
    -- and a Query that shows it is malformed: an outage, not a verdict
    fresh()
    assert.are.same({ 0, "BUSY" }, { slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info) })
    said = {}
    for _, l in ipairs(H.logged()) do said[#said + 1] = l.msg end
    assert.matches("malformed Query reply %(a transfer id that is not %[A%-Za%-z0%-9%._%-%]%)",
                   table.concat(said, "\n"))
    local recs = slurp(H.statedir .. "/testcluster." .. j.id .. ".started") or ""
    assert.is_nil(recs:find("forged", 1, true))
    faults()
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    assert.are.equal(1, created(j))
  end)
end)

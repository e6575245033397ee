-- real_spec.lua - the staging hooks against the real Conduit: its server,
-- runner and rsync FTA built from ../shared/vendor (tests/conduit/real/
-- build.sh), started by real-ctl.sh (tests/conduit/real/specs.sh runs
-- this).  Each difference the real server showed (docs/testing.md, "The
-- real Conduit") has a test here, judged on disk and by what the hooks
-- report, never by the server's log (the real one keeps none we read).
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(0)
local sh, slurp, conf, fresh = H.sh, H.slurp, H.conf, H.fresh
local info_of, new_job, poll, make_file = H.info_of, H.new_job, H.poll, H.make_file
local work, sdir = H.work, H.sdir
-- The same spec runs against the test server too (no REAL_CTL: its
-- archive_down knob stands for rqlite stopped), and must report the same:
-- what conduit-bb says is compared by the same assertions on both.
local real_ctl = os.getenv("REAL_CTL")

-- The archive store (rqlite) down, or back.
local function archive(up)
  if real_ctl then
    return sh("sh " .. real_ctl .. (up and " start-rqlite " or " stop-rqlite ") .. sdir ..
              " >/dev/null 2>&1")
  end
  H.faults(up and "{}" or '{"archive_down": true}')
  return true
end

-- the base config for the real server: its answers take longer than the
-- test server's (a real stage takes seconds), graces as sites set them
local audit = work .. "/audit/audit.log" -- (in a directory only root writes)
local function real_conf(over)
  local c = { RequestTimeout = "10", ServerDownGrace = "300", StageOutDownGrace = "300",
              AuditLog = audit }
  for k, v in pairs(over or {}) do c[k] = v end
  conf(c)
end

local function exists(p) return sh("test -e '" .. p .. "'") end
local function audit_of(j, line)
  for l in (slurp(audit) or ""):gmatch("[^\n]+") do
    if l:find('"job":' .. j.id .. ',', 1, true) and l:find('"line":' .. line .. ',', 1, true) and
        not l:find('"record":"hook"', 1, true) then
      return l
    end
  end
end
-- a tree in/<name>: sub/result.txt holding `text`
local function tree(name, text)
  assert(sh("mkdir -p " .. work .. "/in/" .. name .. "/sub"))
  make_file(work .. "/in/" .. name .. "/sub/result.txt", text .. "\n")
  -- the job's user's, as a job's files are (a mv removes its source as them)
  assert(sh("chown -R 61001 " .. work .. "/in/" .. name .. " && chmod -R a+rX " .. work .. "/in/" .. name))
end
local function stage(j, hook)
  fresh()
  local rc, msg = _G["slurm_bb_" .. hook](j.id, j.script, j.uid, j.uid, j.info)
  assert.are.same({ 0 }, { rc, rc ~= 0 and msg or nil })
  return poll("slurm_bb_test_" .. hook, j, 300)
end

describe("the real Conduit", function()
  setup(function()
    H.workspace()
    assert(sh("mkdir -p " .. work .. "/audit && chmod 0755 " .. work .. "/audit"))
  end)
  before_each(function()
    H.clean()
    real_conf()
  end)

  it("stages a file in, its size read as Conduit writes it (\"1048576B\")", function()
    assert(sh("head -c 1048576 /dev/urandom > " .. work .. "/in/mib.bin && chmod 0644 " ..
              work .. "/in/mib.bin"))
    local j = new_job({ "#CONDUIT_PRE cp in/mib.bin out/mib.bin" })
    assert.are.same({ 0 }, { stage(j, "data_in") })
    assert(sh("cmp -s " .. work .. "/in/mib.bin " .. work .. "/out/mib.bin"))
    local a = assert(audit_of(j, 3))
    assert.truthy(a:find('"state":"TRANSFER_FINALIZED"', 1, true), a)
    assert.truthy(a:find('"bytes":1048576,"files":1', 1, true), a)
    fresh()
    local _, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.matches("\nin%s+3%s+0%s+TRANSFER_FINALIZED%s+1%s+1%.0 MiB", out)
  end)

  it("cp -r lands a tree at an absent DST as cp -r would, and in an existing one as DST/name", function()
    tree("mesh", "mesh")
    assert(sh("mkdir -p " .. work .. "/out/into && chmod 0777 " .. work .. "/out/into"))
    assert(sh("mkdir -p " .. work .. "/out/new && chmod 0777 " .. work .. "/out/new"))
    local j = new_job({ "#CONDUIT_PRE cp -r in/mesh out/new/mesh",
                        "#CONDUIT_PRE cp -r in/mesh out/into" })
    assert.are.same({ 0 }, { stage(j, "data_in") })
    assert.are.equal("mesh\n", slurp(work .. "/out/new/mesh/sub/result.txt"))
    assert.is_false(exists(work .. "/out/new/mesh/mesh"))
    assert.are.equal("mesh\n", slurp(work .. "/out/into/mesh/sub/result.txt"))
  end)

  it("cp -r to an absent DST of another name is refused, naming the fix, before anything moves", function()
    tree("grid", "grid")
    local j = new_job({ "#CONDUIT_PRE cp -r in/grid out/renamed" })
    fresh()
    local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    if rc == 0 then rc, msg = poll("slurm_bb_test_data_in", j, 300) end
    assert.are.equal(-1, rc)
    assert.matches("^line 3: cp %-r: .*out/renamed does not exist and is not named grid", msg)
    assert.is_false(exists(work .. "/out/renamed"))
  end)

  it("mv of a directory without -r is refused before anything moves, the source intact", function()
    tree("keep", "keep")
    local j = new_job({ "#CONDUIT_PRE mv in/keep out/keep" })
    fresh()
    local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    if rc == 0 then rc, msg = poll("slurm_bb_test_data_in", j, 300) end
    assert.are.equal(-1, rc)
    assert.matches("^line 3: .*%-r", msg)
    assert.are.equal("keep\n", slurp(work .. "/in/keep/sub/result.txt"))
    assert.is_false(exists(work .. "/out/keep"))
  end)

  it("mv -r moves the tree, whole, to DST", function()
    tree("moved", "moved")
    assert(sh("mkdir -p " .. work .. "/out/mv && chmod 0777 " .. work .. "/out/mv"))
    local j = new_job({ "#CONDUIT_PRE mv -r in/moved out/mv/moved" })
    assert.are.same({ 0 }, { stage(j, "data_in") })
    assert.are.equal("moved\n", slurp(work .. "/out/mv/moved/sub/result.txt"))
    assert.is_false(exists(work .. "/out/mv/moved/moved"))
    assert.is_false(exists(work .. "/in/moved/sub/result.txt"))
  end)

  it("waits out an outage behind the server (its rqlite down), then finishes", function()
    make_file(work .. "/in/outage.txt", "outage\n")
    local j = new_job({ "#CONDUIT_PRE cp in/outage.txt out/outage.txt" })
    assert(archive(false))
    finally(function() archive(true) end)
    fresh()
    local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0 }, { rc, rc ~= 0 and msg or nil })
    fresh()
    local trc, tmsg = slurm_bb_test_data_in(j.id, j.script, j.uid, j.uid, j.info)
    assert.are.same({ 0, "BUSY" }, { trc, tmsg })
    -- bbstat says what the server said, as for any server that cannot answer
    fresh()
    local grc, gout = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    assert.are.equal(-1, grc)
    assert.matches("rqlite", gout)
    assert(archive(true))
    assert.are.same({ 0 }, { poll("slurm_bb_test_data_in", j, 300) })
    assert.are.equal("outage\n", slurp(work .. "/out/outage.txt"))
  end)

  it("remote validation: job_process never waits, the stage-in fails with the line", function()
    real_conf({ SubmitValidation = "remote", SubmitTimeout = "2" })
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/rv.txt", "#CONDUIT_PRE cp in/absent.txt out/rv2.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
    fresh()
    local rc, msg = slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)
    if rc == 0 then rc, msg = poll("slurm_bb_test_data_in", j, 300) end
    assert.are.equal(-1, rc)
    assert.matches("^line 4: ", msg)
    assert.matches("absent%.txt", msg)
    assert.is_false(exists(work .. "/out/rv2.txt"))
  end)

  it("stages out, and a requeue moves aside what attempt 0 wrote: nothing nested, nothing lost", function()
    tree("rq", "attempt 0")
    make_file(work .. "/in/rq.txt", "attempt 0\n")
    assert(sh("mkdir -p " .. work .. "/out/rqo && chmod 0777 " .. work .. "/out/rqo"))
    local j = new_job({ "#CONDUIT_POST cp -r in/rq out/rqo/rq",
                        "#CONDUIT_POST cp in/rq.txt out/rqo/rq.txt" })
    j.info = info_of(j, { job_state = 3, burst_buffer_state = "staging-out" })
    assert.are.same({ 0 }, { stage(j, "data_out") })
    assert.are.equal("attempt 0\n", slurp(work .. "/out/rqo/rq/sub/result.txt"))
    -- Slurm tears the job down, then it is requeued (scontrol requeue of
    -- a finished job): attempt 1 writes other results and stages out again
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid, j.info)))
    make_file(work .. "/in/rq/sub/result.txt", "attempt 1\n")
    make_file(work .. "/in/rq.txt", "attempt 1\n")
    j.info = info_of(j, { restart_cnt = 1, job_state = 3, submit_time = j.submit + 20,
                          burst_buffer_state = "staging-out" })
    assert.are.same({ 0 }, { stage(j, "data_out") })
    local dst = work .. "/out/rqo/rq"
    assert.are.equal("attempt 1\n", slurp(dst .. "/sub/result.txt"))
    assert.are.equal("attempt 1\n", slurp(dst .. ".txt"))
    assert.is_false(exists(dst .. "/rq"))
    local function aside(p)
      local f = io.popen("ls -d " .. p .. ".conduit-attempt-0-* 2>/dev/null")
      local a = f:read("*a")
      f:close()
      local one = a:match("^([^\n]+)\n$")
      assert.truthy(one, "not one aside of " .. p .. ": " .. a)
      return one
    end
    -- (Conduit's rsync mover puts a tree moved to an absent name under
    -- its own name in it)
    assert.are.equal("attempt 0\n", slurp(aside(dst) .. "/rq/sub/result.txt"))
    assert.are.equal("attempt 0\n", slurp(aside(dst .. ".txt")))
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid, j.info)))
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "false", j.uid, j.uid, j.info)))
  end)

  it("a cancelled stage-in: the abort is asked, and nothing claims the copy stopped", function()
    assert(sh("head -c 67108864 /dev/zero > " .. work .. "/in/big.bin && chmod 0644 " ..
              work .. "/in/big.bin"))
    local j = new_job({ "#CONDUIT_PRE cp in/big.bin out/big.bin" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- cancelled in stage-in: Slurm runs the hurried teardown
    fresh()
    local rc, msg = slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid, j.info)
    assert.are.equal(0, rc, msg)
    local said = {}
    for _, l in ipairs(H.logged()) do said[#said + 1] = l.msg end
    said = table.concat(said, "\n")
    assert.is_nil(said:find("stopped the copy", 1, true))
    assert.is_nil(said:find("copy stopped", 1, true))
    -- a teardown again (Slurm repeats it): nothing new, still 0
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(j.id, j.script, "true", j.uid, j.uid, j.info)))
  end)
end)

-- requeue_spec.lua - a requeued job's directives that run again (every
-- #CONDUIT_POST, #CONDUIT_PRE --every-attempt) leave what a job that ran
-- once leaves: the final attempt's file or tree at the destination,
-- nothing nested, and each earlier attempt's output moved aside to
-- <target>.conduit-attempt-<k>, never deleted (docs/directives.md,
-- "Requeued jobs").  Real copies and moves by the test server as uid
-- 61001; its destInfo says where each earlier transfer wrote.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(9000)
local sh, slurp, fresh, faults = H.sh, H.slurp, H.fresh, H.faults
local info_of, new_job, rpc_mark, poll, make_file = H.info_of, H.new_job, H.rpc_mark, H.poll, H.make_file
local work = H.work

-- StartTransfers since `mark` whose comment has `word` (CONDUIT_ASIDE ...)
local function starts_with(mark, word)
  local log = (slurp(H.sdir .. "/rpc.log") or ""):sub(mark.off + 1)
  local n = 0
  for line in log:gmatch("[^\n]+") do
    if line:find('"method": "StartTransfer"', 1, true) and line:find(word, 1, true) and
        line:find('"status": "OK"', 1, true) then
      n = n + 1
    end
  end
  return n
end

-- What Slurm passes the stage-out of attempt k once it has run.
local function out_info(j, k)
  return info_of(j, { restart_cnt = k, job_state = 3, submit_time = j.submit + 20 * k,
                      burst_buffer_state = "staging-out" })
end
local function in_info(j, k)
  return info_of(j, { restart_cnt = k, submit_time = j.submit + 20 * k })
end
local function stage(j, k, hook_start, hook_poll, info)
  info = info or out_info(j, k)
  fresh()
  assert.are.equal(0, (_G[hook_start](j.id, j.script, j.uid, j.uid, info)))
  local rc, msg = poll(hook_poll, { id = j.id, script = j.script, uid = j.uid, info = info }, 40)
  assert.are.same({ 0 }, { rc, msg })
end
local function stage_out(j, k) stage(j, k, "slurm_bb_data_out", "slurm_bb_test_data_out") end
local function stage_in(j, k)
  stage(j, k, "slurm_bb_data_in", "slurm_bb_test_data_in", in_info(j, k))
end

local function exists(p) return sh("test -e '" .. p .. "'") end

-- The state of attempt k's stage-out as bbstat shows it (get_status: a
-- row "out LINE ATTEMPT STATE ...")
local function out_state(j, k)
  fresh()
  local _, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
  return (out or ""):match("\nout%s+%d+%s+" .. k .. "%s+TRANSFER_([%u_]+)")
end
local wait = H.wait

-- what attempt k of the job writes before its stage-out
local function outputs(dir, k)
  assert(sh("mkdir -p " .. dir .. "/tree/sub " .. dir .. "/mtree/sub && chmod -R 0777 " .. dir))
  make_file(dir .. "/res.txt", "attempt " .. k .. "\n")
  make_file(dir .. "/m.txt", "moved " .. k .. "\n")
  make_file(dir .. "/tree/sub/r.txt", "tree " .. k .. "\n")
  make_file(dir .. "/mtree/sub/r.txt", "mtree " .. k .. "\n")
  assert(sh("chmod -R a+rwX " .. dir))
end

describe("a requeued job's stage-out lands as a job that ran once", function()
  local base
  before_each(function()
    H.clean()
    base = work .. "/rq"
    assert(sh("mkdir -p " .. base .. " && chmod 0777 " .. base))
  end)
  -- A case's source and destination: both gone, then the destination a
  -- fresh empty directory anyone may write
  local function dirs(tag)
    local src, dst = base .. "/src-" .. tag, base .. "/dst-" .. tag
    assert(sh("rm -rf " .. src .. " " .. dst .. " && mkdir -p " .. dst .. " && chmod 0777 " .. dst))
    return src, dst
  end

  -- action x kind: the directive, the output at the destination after
  -- the final attempt, and where attempt 0's went aside
  local cases = {
    { "cp, a file", "cp %s/res.txt %s/res.txt", "res.txt", "attempt %d\n" },
    { "cp -r, a tree", "cp -r %s/tree %s/tree", "tree/sub/r.txt", "tree %d\n" },
    { "mv, a file", "mv %s/m.txt %s/m.txt", "m.txt", "moved %d\n" },
    { "mv -r, a tree", "mv -r %s/mtree %s/mtree", "mtree/sub/r.txt", "mtree %d\n" },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. ": after two requeues the final attempt's, earlier ones aside", function()
      local src, dst = dirs((c[1]:gsub("[^%w]", "")))
      local j = new_job({ "#CONDUIT_POST " .. c[2]:format(src, dst) })
      local top = c[3]:match("^[^/]+") -- the file or tree the directive writes
      local mark = rpc_mark()
      for k = 0, 2 do
        outputs(src, k)
        stage_out(j, k)
        -- exactly what one run leaves: the file or tree, not nested
        assert.are.equal(c[4]:format(k), slurp(dst .. "/" .. c[3]))
        assert.is_false(exists(dst .. "/" .. top .. "/" .. top))
      end
      -- each earlier attempt's output kept, under its own name
      for k = 0, 1 do
        local rest = c[3]:sub(#top + 1)
        assert.are.equal(c[4]:format(k), slurp(dst .. "/" .. top .. ".conduit-attempt-" .. k .. rest))
        assert.is_false(exists(dst .. "/" .. top .. ".conduit-attempt-" .. k .. "/" .. top))
      end
      assert.are.equal(2, starts_with(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
      assert.are.equal(3, starts_with(mark, "SLURMTYPE:CONDUIT_POST,"))
      -- a hook Slurm repeats (a restart) moves nothing again
      mark = rpc_mark()
      stage_out(j, 2)
      assert.are.equal(0, starts_with(mark, "SLURMTYPE:"))
      assert.are.equal(c[4]:format(2), slurp(dst .. "/" .. c[3]))
    end)
  end

  it("cp -r into an existing directory: the tree at DST/name, attempt 0's aside it", function()
    local src, dst = dirs("into")
    make_file(dst .. "/mine.txt", "the user's own\n")
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. src .. "/res.txt " .. dst .. "/" })
    for k = 0, 1 do
      outputs(src, k)
      stage_out(j, k)
    end
    assert.are.equal("tree 1\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.are.equal("attempt 1\n", slurp(dst .. "/res.txt"))
    assert.is_false(exists(dst .. "/tree/tree"))
    assert.are.equal("tree 0\n", slurp(dst .. "/tree.conduit-attempt-0/sub/r.txt"))
    assert.are.equal("attempt 0\n", slurp(dst .. "/res.txt.conduit-attempt-0"))
    assert.are.equal("the user's own\n", slurp(dst .. "/mine.txt"))
  end)

  it("--every-attempt stage-in: each attempt gets its own tree, the earlier one aside", function()
    local src, dst = base .. "/pre-src", base .. "/pre-dst"
    assert(sh("rm -rf " .. src .. " " .. dst))
    local j = new_job({ "#CONDUIT_PRE cp -r --every-attempt " .. src .. "/tree " .. dst })
    for k = 0, 1 do
      outputs(src, k)
      stage_in(j, k)
    end
    assert.are.equal("tree 1\n", slurp(dst .. "/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree"))
    assert.are.equal("tree 0\n", slurp(dst .. ".conduit-attempt-0/sub/r.txt"))
  end)

  it("an earlier attempt's stage-out still running is waited for, then moved aside", function()
    local src, dst = dirs("late")
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. dst .. "/tree" })
    outputs(src, 0)
    -- attempt 0's stage-out is under way when the job was requeued
    -- (held after its copy, before it is over, until the spec lifts it)
    faults('{"delay_ms": {"DATA_COMPLETE": 60000}}')
    local requeued = info_of(j, { restart_cnt = 1, job_state = 0, burst_buffer_state = "staging-out" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, requeued)))
    assert.is_true(wait(function() return out_state(j, 0) == "DATA_COMPLETE" end, 30))
    -- attempt 1 ran meanwhile and ends: nothing of it starts yet
    outputs(src, 1)
    local mark = rpc_mark()
    local final = out_info(j, 1)
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)))
    fresh()
    local rc, msg = slurm_bb_test_data_out(j.id, j.script, j.uid, j.uid, final)
    assert.are.same({ 0, "BUSY" }, { rc, msg })
    assert.are.equal(0, starts_with(mark, "SLURMTYPE:"))
    faults()
    rc, msg = poll("slurm_bb_test_data_out", { id = j.id, script = j.script, uid = j.uid, info = final }, 40)
    assert.are.same({ 0 }, { rc, msg })
    assert.are.equal("tree 1\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree/tree"))
    assert.are.equal("tree 0\n", slurp(dst .. "/tree.conduit-attempt-0/sub/r.txt"))
    assert.are.equal(1, starts_with(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
  end)

  it("a move-aside sent by a hook that was killed is waited for, never sent twice", function()
    local src, dst = dirs("kill")
    local j = new_job({ "#CONDUIT_POST cp " .. src .. "/res.txt " .. dst .. "/res.txt" })
    outputs(src, 0)
    stage_out(j, 0)
    outputs(src, 1)
    -- the server holds the move-aside's answer; the hook gives up on it
    -- (as one Slurm killed would) with its record saying "sent"
    faults('{"start_then_stall_ms": 4000}')
    local mark = rpc_mark()
    local final = out_info(j, 1)
    fresh()
    assert.are.equal(0, (slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)))
    faults()
    local rc, msg = poll("slurm_bb_test_data_out", { id = j.id, script = j.script, uid = j.uid, info = final }, 40)
    assert.are.same({ 0 }, { rc, msg })
    assert.are.equal(1, starts_with(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
    assert.are.equal(1, starts_with(mark, "SLURMTYPE:CONDUIT_POST,"))
    assert.are.equal("attempt 1\n", slurp(dst .. "/res.txt"))
    assert.are.equal("attempt 0\n", slurp(dst .. "/res.txt.conduit-attempt-0"))
  end)

  it("an interrupted attempt that wrote nothing: the final one moves aside only what is there", function()
    local src, dst = dirs("none")
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. dst .. "/tree" })
    -- attempt 0 completed and staged out; attempt 1 was requeued before
    -- it wrote anything (its stage-out fails on the missing source)
    outputs(src, 0)
    stage_out(j, 0)
    assert(sh("rm -rf " .. src))
    local requeued = info_of(j, { restart_cnt = 2, job_state = 0, submit_time = j.submit + 20,
                                  burst_buffer_state = "staging-out" })
    stage(j, 1, "slurm_bb_data_out", "slurm_bb_test_data_out", requeued)
    outputs(src, 2)
    stage_out(j, 2)
    assert.are.equal("tree 2\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree/tree"))
    assert.are.equal("tree 0\n", slurp(dst .. "/tree.conduit-attempt-0/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree.conduit-attempt-1"))
  end)
end)

-- requeue_spec.lua - a requeued job's directives that run again (every
-- #CONDUIT_POST, #CONDUIT_PRE --every-attempt) leave what a job that ran
-- once leaves: the final attempt's file or tree at the destination,
-- nothing nested, and each earlier attempt's output moved aside to a
-- fresh, unpredictable <target>.conduit-attempt-<k>-<8 hex digits>, never
-- deleted; and never anything the job did not create (another job's
-- output, another user's directory): then the stage fails, naming it,
-- with nothing moved (docs/directives.md, "Requeued jobs").  Real copies
-- and moves by the test server as uid 61001, the way Conduit's rsync
-- mover makes them (a tree moved aside lands under its own name inside
-- the aside name); its destInfo says where each earlier transfer wrote.
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

-- The aside names attempt k's output at `path` went to: every
-- <path>.conduit-attempt-<k>-XXXXXXXX that exists.
local function asides(path, k)
  local out = {}
  local p = io.popen("ls -d '" .. path .. ".conduit-attempt-" .. k .. "-'* 2>/dev/null")
  for l in p:lines() do
    assert.matches("%.conduit%-attempt%-" .. k .. "%-%x%x%x%x%x%x%x%x$", l)
    out[#out + 1] = l
  end
  p:close()
  return out
end
-- What attempt k left at `path` (a file, or a tree with `rest` in it),
-- read from its one aside: a file is the aside itself, a tree lies
-- inside it under its own name (the rsync mover keeps a tree's name).
local function aside_of(path, k, rest)
  local a = asides(path, k)
  assert.are.equal(1, #a)
  if rest == "" then return slurp(a[1]) end
  return slurp(a[1] .. "/" .. path:match("[^/]+$") .. rest)
end

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
      -- each earlier attempt's output kept, once, under a name of its own
      for k = 0, 1 do
        local rest = c[3]:sub(#top + 1)
        assert.are.equal(c[4]:format(k), aside_of(dst .. "/" .. top, k, rest))
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
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
    assert.are.equal("attempt 0\n", aside_of(dst .. "/res.txt", 0, ""))
    assert.are.equal("the user's own\n", slurp(dst .. "/mine.txt"))
  end)

  it("--every-attempt stage-in: each attempt gets its own tree, the earlier one aside", function()
    local src, dst = base .. "/pre-src", base .. "/pre-dst"
    assert(sh("rm -rf " .. src .. " " .. dst .. " && mkdir -m 0777 " .. dst))
    local j = new_job({ "#CONDUIT_PRE cp -r --every-attempt " .. src .. "/tree " .. dst .. "/tree" })
    for k = 0, 1 do
      outputs(src, k)
      stage_in(j, k)
    end
    assert.are.equal("tree 1\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree/tree"))
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
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
    -- its polls go on (its probes answered, it starts) until it is held
    assert.is_true(wait(function()
      fresh()
      slurm_bb_test_data_out(j.id, j.script, j.uid, j.uid, requeued)
      return out_state(j, 0) == "DATA_COMPLETE"
    end, 60))
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
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
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
    assert.are.equal("attempt 0\n", aside_of(dst .. "/res.txt", 0, ""))
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
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
    assert.are.same({}, asides(dst .. "/tree", 1))
  end)

  -- ---- never anything the job did not create (issue 35) ----------------

  it("a job id used again: the older job's output is never moved aside", function()
    local src, dst = dirs("reuse")
    outputs(src, 0)
    -- an older job that had this id staged its tree out an hour ago
    -- (its transfers made that long ago), then went
    assert(sh("mkdir -m 0777 " .. dst .. "/old"))
    local old = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. dst .. "/old/" })
    old.submit = old.submit - 3700
    old.info = info_of(old)
    faults('{"created_offset_ms": -3600000}')
    stage_out(old, 0)
    faults()
    fresh()
    assert.are.equal(0, (slurm_bb_job_teardown(old.id, old.script, "false", old.uid, old.uid)))
    -- this job got the same id (Slurm's state wiped), with its own
    -- directive at the same index
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. dst .. "/tree" })
    j.id = old.id
    j.info = info_of(j)
    local mark = rpc_mark()
    for k = 0, 1 do
      outputs(src, k)
      stage_out(j, k)
    end
    assert.are.equal("tree 0\n", slurp(dst .. "/old/tree/sub/r.txt"))
    assert.are.same({}, asides(dst .. "/old/tree", 0))
    assert.are.same({}, asides(dst .. "/old", 0))
    assert.are.equal("tree 1\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.is_false(exists(dst .. "/tree/tree"))
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
    assert.are.equal(1, starts_with(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
  end)

  it("a name a co-tenant made first is never used: the aside goes elsewhere", function()
    local src, dst = dirs("tenant")
    -- another user made what was once the predictable aside name, open
    -- to all, in the shared directory
    local trap = dst .. "/res.txt.conduit-attempt-0"
    assert(sh("mkdir -m 0777 " .. trap .. " && chown 61002 " .. trap))
    local j = new_job({ "#CONDUIT_POST cp " .. src .. "/res.txt " .. dst .. "/res.txt" })
    for k = 0, 1 do
      outputs(src, k)
      stage_out(j, k)
    end
    assert.are.equal("attempt 1\n", slurp(dst .. "/res.txt"))
    assert.are.equal("attempt 0\n", aside_of(dst .. "/res.txt", 0, ""))
    -- nothing of the job's went into the other user's directory
    assert.is_true(sh("test -z \"$(ls -A " .. trap .. ")\""))
    assert.are.equal("61002", H.owner(trap))
  end)

  it("two jobs of one user, one destination, each requeued: both earlier outputs kept", function()
    local src, dst = dirs("twojobs")
    assert(sh("mkdir -m 0777 " .. src))
    local a = new_job({ "#CONDUIT_POST cp " .. src .. "/res.txt " .. dst .. "/res.txt" })
    local b = new_job({ "#CONDUIT_POST cp " .. src .. "/res.txt " .. dst .. "/res.txt" })
    for k = 0, 1 do
      make_file(src .. "/res.txt", "A" .. k .. "\n")
      stage_out(a, k)
    end
    -- the user moved job A's result away; job B writes the same path
    assert(sh("mv " .. dst .. "/res.txt " .. dst .. "/a-final.txt"))
    for k = 0, 1 do
      make_file(src .. "/res.txt", "B" .. k .. "\n")
      stage_out(b, k)
    end
    local kept = asides(dst .. "/res.txt", 0)
    assert.are.equal(2, #kept)
    local seen = {}
    for _, p in ipairs(kept) do seen[slurp(p)] = true end
    assert.are.same({ ["A0\n"] = true, ["B0\n"] = true }, seen)
    assert.are.equal("A1\n", slurp(dst .. "/a-final.txt"))
    assert.are.equal("B1\n", slurp(dst .. "/res.txt"))
  end)

  it("a directory the job did not create is never moved: the stage-out fails, naming it", function()
    local src, dst = dirs("theirs")
    -- DST/tree existed before the job (the user's, from another run),
    -- holding another user's file
    assert(sh("mkdir -m 0777 " .. dst .. "/tree && chown 61001 " .. dst .. "/tree"))
    make_file(dst .. "/tree/theirs.txt", "not the job's\n")
    assert(sh("chown 61002 " .. dst .. "/tree/theirs.txt"))
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. dst .. "/" })
    outputs(src, 0)
    stage_out(j, 0)
    assert.are.equal("tree 0\n", slurp(dst .. "/tree/sub/r.txt"))
    outputs(src, 1)
    local mark = rpc_mark()
    local final = out_info(j, 1)
    fresh()
    local rc, msg = slurm_bb_data_out(j.id, j.script, j.uid, j.uid, final)
    if rc == 0 then
      rc, msg = poll("slurm_bb_test_data_out", { id = j.id, script = j.script, uid = j.uid, info = final }, 40)
    end
    assert.are.equal(-1, rc)
    assert.matches("^line 3: stage%-out cp: attempt 0 wrote into " .. dst:gsub("%p", "%%%0") ..
                   "/tree, which existed before the job wrote there", msg)
    assert.is_nil(msg:find("\n"))
    -- nothing moved: the other user's file where it was, still theirs
    assert.are.equal(0, starts_with(mark, "SLURMTYPE:"))
    assert.are.equal("not the job's\n", slurp(dst .. "/tree/theirs.txt"))
    assert.are.equal("61002", H.owner(dst .. "/tree/theirs.txt"))
    assert.are.equal("tree 0\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.are.same({}, asides(dst .. "/tree", 0))
  end)

  it("two sources of one name into one directory: one place, one move-aside", function()
    local src, dst = dirs("samename")
    local src2 = src .. "-2"
    assert(sh("rm -rf " .. src2))
    local j = new_job({ "#CONDUIT_POST cp -r " .. src .. "/tree " .. src2 .. "/tree " .. dst .. "/" })
    local mark = rpc_mark()
    for k = 0, 1 do
      outputs(src, k)
      outputs(src2, k)
      stage_out(j, k)
    end
    assert.are.equal("tree 1\n", slurp(dst .. "/tree/sub/r.txt"))
    assert.are.equal("tree 0\n", aside_of(dst .. "/tree", 0, "/sub/r.txt"))
    assert.are.equal(1, starts_with(mark, "SLURMTYPE:CONDUIT_ASIDE,"))
  end)
end)

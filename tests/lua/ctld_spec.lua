-- ctld_spec.lua - the hooks that run inside slurmctld (job_process,
-- paths, pools) or under its burst-buffer lock (get_status) never wait
-- on a StateDir lock, never write StateDir and never create it: another
-- process holding a record file's lock cannot hold slurmctld.
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(95000)
local sh, slurp, conf, fresh = H.sh, H.slurp, H.conf, H.fresh
local info_of, new_job, poll = H.info_of, H.new_job, H.poll
local work, statedir, jobstates = H.work, H.statedir, H.jobstates

-- Hold an exclusive flock on a StateDir file for `s` seconds, in the
-- background, as another hook would.  Nothing is killed: the holder ends
-- by itself (no pkill: under the ASan run every child has libasan
-- preloaded, and pkill then hangs at exit).
local function hold(name, s)
  assert(sh("(flock -x " .. statedir .. "/" .. name .. " sleep " .. s ..
            " &) >/dev/null 2>&1; sleep 0.3"))
end

-- A listing of StateDir, or nil when it does not exist.
local function listing()
  local p = io.popen("cd " .. statedir .. " 2>/dev/null && ls -l --time-style=full-iso . && cat ./* 2>/dev/null | md5sum")
  local s = p:read("*a")
  p:close()
  return s ~= "" and s or nil
end

describe("hooks inside slurmctld and StateDir", function()
  setup(H.workspace)
  before_each(H.clean)

  it("get_status answers within its budget while another process holds the job's record files", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/ctld-a.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    assert.are.equal(0, (poll("slurm_bb_test_data_in", j)))
    -- records of every kind get_status reads: started, skipped, an array's
    for _, f in ipairs({ "started", "skipped", "shared" }) do
      assert(sh("touch " .. statedir .. "/testcluster." .. j.id .. "." .. f))
      hold("testcluster." .. j.id .. "." .. f, 6)
    end
    local t0 = H.now_ms()
    fresh()
    local rc, out = slurm_bb_get_status("61001", "61001", "conduit", j.id)
    local took = H.now_ms() - t0
    assert.are.equal(0, rc)
    assert.matches("TRANSFER_FINALIZED", out)
    -- its budget is 5 s (RequestTimeout=3 here): it waits on no lock
    -- for long (0.1 s at most each); one that waited for these locks
    -- would take their 6 s
    assert.is_true(took < 4500, "get_status took " .. took .. " ms")
    -- json too
    t0 = H.now_ms()
    fresh()
    rc = slurm_bb_get_status("61001", "61001", "conduit", j.id, "json")
    assert.are.equal(0, rc)
    assert.is_true(H.now_ms() - t0 < 4500)
  end)

  it("get_status never rewrites a record file, even one with stale lines", function()
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/ctld-b.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_data_in(j.id, j.script, j.uid, j.uid, j.info)))
    -- a stale line (a later restart count: another job with this id) and a damaged one
    local f = statedir .. "/testcluster." .. j.id .. ".started"
    assert(sh("printf 'v1 9 1 0 9 0 1 S x\\ngarbage\\n' >> " .. f))
    local before = listing()
    fresh()
    assert.are.equal(0, (slurm_bb_get_status("61001", "61001", "conduit", j.id)))
    assert.are.equal(before, listing())
  end)

  it("get_status, pools, job_process and paths never create StateDir", function()
    sh("rm -rf " .. statedir)
    local j = new_job({ "#CONDUIT_PRE cp in/a.txt out/ctld-c.txt" })
    fresh()
    assert.are.equal(0, (slurm_bb_get_status("61001", "61001", "conduit", j.id)))
    fresh()
    assert.are.equal(0, (slurm_bb_pools()))
    fresh()
    assert.are.equal(0, (slurm_bb_job_process(j.script, j.uid, j.uid, j.info)))
    local pf = work .. "/paths-" .. j.id
    H.spit(pf, "")
    fresh()
    assert.are.equal(0, (slurm_bb_paths(j.id, j.script, pf, j.uid, j.uid, j.info)))
    assert.is_nil(listing())
    local p = io.popen("test -e " .. statedir .. " && echo there || echo absent")
    assert.are.equal("absent", p:read("*l"))
    p:close()
  end)

  it("pools still reports an unsafe StateDir, and says nothing of a missing one", function()
    sh("rm -rf " .. statedir)
    fresh()
    assert.are.equal(0, (slurm_bb_pools()))
    assert.are.same({}, H.logged())
    assert(sh("mkdir -p " .. statedir .. " && chmod 0777 " .. statedir))
    fresh()
    assert.are.equal(0, (slurm_bb_pools()))
    assert.truthy(H.logged()[1] and H.logged()[1].msg:find("is writable by group or others", 1, true))
    local p = io.popen("stat -c %a " .. statedir)
    assert.are.equal("777", p:read("*l")) -- reported, not changed
    p:close()
  end)
end)

-- harness.lua - what the staging specs share: a host that loads
-- conduit_bb fresh for every call (as Slurm does), the Conduit test server
-- (tests/conduit/server.py, started by tests/run-checks.sh) with its fault
-- knobs and RPC log, a fake squeue, jobs with Slurm's job_info.  Needs
-- CBB_MODULE_DIR, CBB_SERVER_DIR, CONDUIT_BB_CONF and FAKE_SQUEUE_DIR.
local H = {}
local module_dir = assert(os.getenv("CBB_MODULE_DIR"))
local sdir = assert(os.getenv("CBB_SERVER_DIR"))
local conf_path = assert(os.getenv("CONDUIT_BB_CONF"))
package.cpath = module_dir .. "/?.so;" .. package.cpath

local function sh(cmd)
  local ok = os.execute(cmd)
  return ok == true or ok == 0
end

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function spit(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local port = assert(slurp(sdir .. "/port")):match("%d+")
local pki = sdir .. "/pki"
local work = os.tmpname()
os.remove(work)
assert(sh("mkdir -p " .. work .. " && chmod 0777 " .. work))
local statedir = work .. "/state"
local jobstates = assert(os.getenv("FAKE_SQUEUE_DIR"))
assert(sh("mkdir -p " .. jobstates))

local base = {
  { "ConduitServer", "127.0.0.1:" .. port },
  { "ServerName", "localhost" },
  { "CACert", pki .. "/ca.crt" },
  { "ClientCert", pki .. "/service.crt" },
  { "ClientKey", pki .. "/service.key" },
  { "RequestTimeout", "3" },
  { "StateDir", statedir },
  { "ServerDownGrace", "2" },
  { "StartVisibleGrace", "10" },
  { "Squeue", os.getenv("PWD") .. "/tests/conduit/fake-squeue" },
  { "Scontrol", os.getenv("PWD") .. "/tests/conduit/fake-scontrol" },
  { "AdminComment", "yes" },
}

-- Write conduit_bb.conf: the base settings, with `over` replacing or adding keys.
local function conf(over)
  over = over or {}
  local lines, used = {}, {}
  for _, kv in ipairs(base) do
    local v = over[kv[1]]
    if v == nil then v = kv[2] end
    used[kv[1]] = true
    lines[#lines + 1] = kv[1] .. "=" .. v
  end
  for k, v in pairs(over) do
    if not used[k] then lines[#lines + 1] = k .. "=" .. v end
  end
  spit(conf_path, table.concat(lines, "\n") .. "\n")
end
-- Written whole and renamed into place: the server re-reads the file on
-- every call and worker tick, and a half-written file must never read
-- as "no faults" (a held transfer would run on).
local function faults(json)
  spit(sdir .. "/faults.json.new", json or "{}")
  assert(os.rename(sdir .. "/faults.json.new", sdir .. "/faults.json"))
end

-- ---- the host: slurm table, fresh module per call ---------------------
local logged
local function fresh()
  logged = {}
  _G.slurm = {
    SUCCESS = 0, ERROR = -1, SLURM_BB_BUSY = "BUSY", CLUSTER_NAME = "testcluster",
    log = function(l, m) logged[#logged + 1] = { level = l, msg = m } end,
    error = function(m) logged[#logged + 1] = { level = -1, msg = m } end,
  }
  package.loaded.conduit_bb = nil
  return require("conduit_bb")
end

local function job_info(t)
  return setmetatable({}, { __index = function(_, k) return t[k] end })
end

-- Job ids unique per run: the server keeps its transfers across runs.
local next_job = tonumber(os.getenv("CBB_JOB_BASE") or "") or (os.time() % 100000) * 1000
-- Each spec file gets its own range of ids (busted reloads this module);
-- the ranges are disjoint, as the lanes of tests/run-checks.sh run any
-- spec files one after another against one server.
function H.ids_from(offset) next_job = next_job + offset end
-- What Slurm's job_info holds for a job at a stage; `over` replaces fields.
local function info_of(job, over)
  local t = { job_id = tonumber(job.id), user_id = 61001, work_dir = work,
              restart_cnt = 0, cluster = "testcluster", submit_time = job.submit,
              job_state = 0, burst_buffer_state = "staging-in" }
  for k, v in pairs(over or {}) do t[k] = v end
  return job_info(t)
end
local function new_job(directives, opts)
  opts = opts or {}
  next_job = next_job + 1
  local id = next_job
  local script = work .. "/job" .. id .. ".sh"
  spit(script, "#!/bin/bash\n#SBATCH -N 1\n" .. table.concat(directives, "\n") .. "\nsrun true\n")
  -- what squeue says: a staging job is pending
  spit(jobstates .. "/" .. id, opts.state or "PENDING")
  local job = { id = tostring(id), script = script, uid = opts.uid or "61001",
                submit = os.time() }
  job.info = info_of(job, { restart_cnt = opts.restart or 0 })
  return job
end

-- ---- the server's RPC log ---------------------------------------------
-- Calls are counted by request, not by line: every retry of one call
-- carries the call's conduit-bb-request-id (rid), so a call the module
-- sent again (a lost reply, a server that said "try again") is one
-- request; and a line of a call the server received before the mark
-- (one a hook gave up on, logged late) is not counted after it.
-- An array of `count` tasks with one script: task 0 has the array's id,
-- and every task the array's submit time, as in Slurm (it copies them to
-- each task it splits off).  Each task is pending, knows its index
-- (t.task) and has its job_info; tasks.id is the array's id.
-- A new job whose stage-in (stage-out when `out`) was started: the job,
-- and what data_in (data_out) returned.
local function started(directives, out)
  local j = new_job(directives)
  fresh()
  local rc = (out and slurm_bb_data_out or slurm_bb_data_in)(j.id, j.script, j.uid, j.uid, j.info)
  return j, rc
end
H.started = started

local function array(count, directives)
  local tasks = {}
  for i = 0, count - 1 do
    local t = new_job(directives)
    if i > 0 then
      t.script = tasks[1].script
      t.submit = tasks[1].submit
    end
    t.task = i
    t.state = "PENDING"
    tasks[#tasks + 1] = t
  end
  tasks.id = tasks[1].id
  for _, t in ipairs(tasks) do
    t.info = info_of(t, { array_job_id = tonumber(tasks.id), array_task_id = t.task })
  end
  return tasks
end
H.array = array

-- Wait until cond() holds (true), at most s seconds (false): a bound on
-- an event, never a timing the test depends on.
function H.wait(cond, s)
  local t0 = H.now_ms()
  while not cond() do
    if H.now_ms() - t0 > s * 1000 then return false end
    H.sleep(0.1)
  end
  return true
end

local function wall_ms()
  local p = io.popen("date +%s%3N")
  local v = tonumber(p:read("*l"))
  p:close()
  return v
end
local function rpc_mark()
  return { off = #(slurp(sdir .. "/rpc.log") or ""), ms = wall_ms() }
end
local function rpcs_since(mark, method)
  local log = (slurp(sdir .. "/rpc.log") or ""):sub(mark.off + 1)
  local n, seen = 0, {}
  for line in log:gmatch("[^\n]+") do
    if line:find('"method": "' .. method .. '"', 1, true) then
      local t0 = tonumber(line:match('"t0": ([%d.]+)') or "")
      local rid = line:match('"rid": "([^"]*)"') or ""
      if not (t0 and t0 * 1000 < mark.ms - 1) and not seen[rid] then
        n = n + 1
        if rid ~= "" then seen[rid] = true end
      end
    end
  end
  return n
end

local function sleep(s) sh("sleep " .. s) end

-- Poll test_data_* like Slurm does until it stops saying BUSY: a bound
-- on that event (120 s unless told), never a guess of the machine's
-- speed (40 copies through the test server took over 20 s at load 30).
local function poll(hook, job, limit)
  local t0 = os.time()
  while true do
    fresh()
    local rc, msg = _G[hook](job.id, job.script, job.uid, job.uid, job.info)
    if not (rc == 0 and msg == "BUSY") then return rc, msg end
    if os.time() - t0 > (limit or 120) then return nil, "still busy" end
    sleep(0.1)
  end
end

local function owner(path)
  local p = io.popen("stat -c %u " .. path)
  local u = p:read("*l")
  p:close()
  return u
end

local function make_file(path, text)
  spit(path, text)
  assert(sh("chmod 0644 " .. path))
end


-- Wall-clock milliseconds (os.clock is CPU time).
H.now_ms = wall_ms

H.sh, H.slurp, H.spit, H.conf, H.faults, H.fresh = sh, slurp, spit, conf, faults, fresh
H.job_info, H.info_of, H.new_job, H.rpc_mark, H.rpcs_since = job_info, info_of, new_job, rpc_mark, rpcs_since
H.sleep, H.poll, H.owner, H.make_file = sleep, poll, owner, make_file

-- A spec's setup: the in/out work directories, with in/a.txt ("alpha").
function H.workspace()
  assert(sh("mkdir -p " .. work .. "/in " .. work .. "/out && chmod 0777 " .. work .. "/in " ..
            work .. "/out"))
  make_file(work .. "/in/a.txt", "alpha\n")
end

-- Before each test: the base config, no faults, an empty StateDir.
function H.clean()
  conf()
  H.faults()
  sh("rm -rf " .. statedir)
end
H.sdir, H.port, H.pki, H.work, H.statedir, H.jobstates = sdir, port, pki, work, statedir, jobstates
function H.logged() return logged end
-- squeue runs so far (tests/conduit/fake-squeue leaves a line for each)
function H.squeue_calls()
  local _, n = (slurp(jobstates .. "/.calls") or ""):gsub("\n", "")
  return n
end
return H

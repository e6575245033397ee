-- bb_spec.lua - conduit_bb loaded into a real Lua interpreter with a stub
-- `slurm` table, as Slurm's burst_buffer/lua does.  Run with
--   CBB_MODULE_DIR=build/lua5.4 lua5.4 /usr/bin/busted tests/lua
local module_dir = assert(os.getenv("CBB_MODULE_DIR"), "set CBB_MODULE_DIR")
package.cpath = module_dir .. "/?.so;" .. package.cpath

local tmpdir = os.tmpname()
os.remove(tmpdir)
assert(os.execute("mkdir -p " .. tmpdir))

local function write(name, text)
  local path = tmpdir .. "/" .. name
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

-- Slurm's job_info is an empty table whose fields come from __index.
local function job_info(fields)
  return setmetatable({}, { __index = function(_, k) return fields[k] end })
end

-- A fresh `slurm` table that records what was logged.
local logged
local function stub_slurm()
  logged = {}
  _G.slurm = {
    SUCCESS = 0, ERROR = -1, FAILURE = -1, SLURM_BB_BUSY = "BUSY", CLUSTER_NAME = "spec",
    log = function(level, msg) logged[#logged + 1] = { level = level, msg = msg } end,
    error = function(msg) logged[#logged + 1] = { level = -1, msg = msg } end,
  }
end

-- Load the module the way each Slurm call does: a fresh require.
local function load_module()
  package.loaded.conduit_bb = nil
  for name in pairs(_G) do
    if name:match("^slurm_bb_") or name:match("^slurm_switch_") then _G[name] = nil end
  end
  return require("conduit_bb")
end

-- The runner points CONDUIT_BB_CONF at a scratch file this spec rewrites.
local conf_path = assert(os.getenv("CONDUIT_BB_CONF"), "set CONDUIT_BB_CONF")
local function set_conf(text)
  local f = assert(io.open(conf_path, "wb"))
  f:write(text)
  f:close()
end

describe("conduit_bb module", function()
  before_each(function()
    stub_slurm()
    set_conf("MaxDirectives=4\nStageInSources=/archive,/scratch\n")
  end)

  it("defines the hooks and no other globals", function()
    local before = {}
    for k in pairs(_G) do before[k] = true end
    local m = load_module()
    local added = {}
    for k in pairs(_G) do
      if not before[k] then added[#added + 1] = k end
    end
    table.sort(added)
    assert.are.same({
      "slurm_bb_data_in", "slurm_bb_data_out", "slurm_bb_get_status",
      "slurm_bb_job_process", "slurm_bb_job_teardown", "slurm_bb_paths",
      "slurm_bb_pools", "slurm_bb_post_run", "slurm_bb_pre_run",
      "slurm_bb_real_size", "slurm_bb_setup", "slurm_bb_test_data_in",
      "slurm_bb_test_data_out", "slurm_switch_block_job_complete",
      "slurm_switch_job_complete", "slurm_switch_job_start",
      "slurm_switch_setup_special_steps", "slurm_switch_step_init",
      "slurm_switch_step_postfini", "slurm_switch_step_preinit" }, added)
    assert.are.equal("conduit_bb", m._NAME)
    assert.matches("^%d+%.%d+%.%d+$", m._VERSION)
    assert.are.equal("function", type(m.parse))
  end)

  it("runs the one-line shim", function()
    package.loaded.conduit_bb = nil
    _G.slurm_bb_job_process = nil
    assert(loadfile("lua/burst_buffer.lua"))()
    assert.are.equal("function", type(_G.slurm_bb_job_process))
  end)

  describe("slurm_bb_job_process", function()
    it("accepts a good script and returns its text", function()
      load_module()
      local text = "#!/bin/bash\n#SBATCH -N1\n#CONDUIT_PRE cp -r /archive/in data/%j/\n" ..
                   "#CONDUIT_POST cp out /archive/out/\nsrun ./a.out\n"
      local path = write("good.sh", text)
      local rc, msg = slurm_bb_job_process(path, "1000", "1000",
        job_info({ job_id = 88, work_dir = "/scratch/u", user_id = 1000 }))
      assert.are.equal(0, rc)
      assert.are.equal(text, msg)
      assert.are.equal(1, #logged)
      assert.are.equal(1, logged[1].level)
      assert.are.equal("conduit_bb: job 88: 1 stage-in and 1 stage-out directives accepted",
                       logged[1].msg)
    end)

    it("rejects a bad directive with one line naming the line", function()
      load_module()
      local path = write("bad.sh", "#!/bin/bash\n#SBATCH -N1\n#CONDUIT_PRE cp \"/archive/a /b\n")
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({ job_id = 3 }))
      assert.are.equal(-1, rc)
      assert.are.equal("line 3: #CONDUIT_PRE: unterminated double quote", msg)
      assert.is_nil(msg:find("\n"))
    end)

    it("names the first bad directive and counts the rest", function()
      load_module()
      local path = write("bad3.sh", table.concat({
        "#!/bin/bash",
        "#CONDUIT_PRE cp --user=root /archive/a /scratch/",
        "#CONDUIT_PRE cp /archive/ok /scratch/",
        "#CONDUIT_PRE rsync /archive/b /scratch/",
        "#CONDUIT_POST cp /scratch/c",
        "" }, "\n"))
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({ job_id = 3 }))
      assert.are.equal(-1, rc)
      assert.matches("^line 2: #CONDUIT_PRE: option '%-%-user=root' is not allowed", msg)
      assert.matches(" %(and 2 more: run conduit%-bb check%)$", msg)
      assert.is_nil(msg:find("\n"))
    end)

    it("applies the site's allowed directories", function()
      load_module()
      local path = write("outside.sh", "#!/bin/bash\n#CONDUIT_PRE cp /etc/shadow /scratch/x\n")
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({ job_id = 3 }))
      assert.are.equal(-1, rc)
      assert.are.equal("line 2: #CONDUIT_PRE: source /etc/shadow is outside the allowed " ..
                       "directories (StageInSources=/archive,/scratch)", msg)
    end)

    it("enforces MaxDirectives from conduit_bb.conf", function()
      load_module()
      local lines = { "#!/bin/bash" }
      for i = 1, 5 do lines[#lines + 1] = "#CONDUIT_PRE cp /archive/" .. i .. " /scratch/" end
      local path = write("many.sh", table.concat(lines, "\n") .. "\n")
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
      assert.are.equal("line 6: more than 4 directives (MaxDirectives=4)", msg)
    end)

    it("reports a broken conduit_bb.conf, with the line, to user and log", function()
      set_conf("MaxDirectives=4\nConduitSrever=x:1\n")
      load_module()
      local path = write("ok.sh", "#!/bin/bash\n#CONDUIT_PRE cp /archive/a /scratch/b\n")
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
      assert.are.equal(conf_path .. " line 2: unknown key 'ConduitSrever' (see conduit_bb.conf.example)", msg)
      assert.are.equal(-1, logged[1].level)
    end)

    it("fails cleanly on a missing script or a bad uid", function()
      load_module()
      local rc, msg = slurm_bb_job_process(tmpdir .. "/nope.sh", "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
      assert.matches("cannot open .*nope.sh: No such file or directory", msg)
      rc, msg = slurm_bb_job_process(tmpdir .. "/ok.sh", "not-a-uid", "1000", job_info({}))
      assert.are.equal(-1, rc)
      assert.are.equal("conduit_bb: job_process needs the job script path and the job's uid", msg)
      rc, msg = slurm_bb_job_process()
      assert.are.equal(-1, rc)
      assert.are.equal("string", type(msg))
    end)

    it("never uses a % in user text as a format string", function()
      load_module()
      local path = write("pct.sh", "#!/bin/bash\n#CONDUIT_PRE cp /archive/%s%n /scratch/x\n")
      local rc, msg = slurm_bb_job_process(path, "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
      assert.matches("unknown symbol '%%s'", msg)
      assert.matches("unknown symbol", logged[1].msg)
    end)

    it("keeps working when the host's logger is missing or broken", function()
      load_module()
      local path = write("bad2.sh", "#!/bin/bash\n#CONDUIT_PRE rsync /a /b\n")
      _G.slurm = nil
      local rc = slurm_bb_job_process(path, "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
      _G.slurm = { log = function() error("logger exploded") end }
      rc = slurm_bb_job_process(path, "1000", "1000", job_info({}))
      assert.are.equal(-1, rc)
    end)

    it("looks the user name up when job_info has none (%u)", function()
      load_module()
      local path = write("user.sh", "#!/bin/bash\n#CONDUIT_PRE cp /archive/%u /scratch/x\n")
      local rc = slurm_bb_job_process(path, "0", "0", job_info({ user_id = 0 }))
      assert.are.equal(0, rc)
      local d = require("conduit_bb").parse("#CONDUIT_PRE cp /archive/%u /scratch/x\n", { user_id = 0 })
      assert.are.equal("/archive/root", d[1].sources[1])
    end)
  end)

  describe("slurm_bb_pools", function()
    it("reports no pools", function()
      load_module()
      local n = select("#", slurm_bb_pools())
      assert.are.equal(1, n)
      assert.are.equal(0, (slurm_bb_pools()))
    end)

    it("logs a broken conduit_bb.conf but still succeeds", function()
      set_conf("Directive=\n")
      load_module()
      assert.are.equal(0, (slurm_bb_pools()))
      assert.are.equal(-1, logged[1].level)
      assert.matches("conduit_bb: .* line 1: Directive has no value", logged[1].msg)
    end)
  end)

  describe("parse", function()
    it("returns directives as tables", function()
      local m = load_module()
      local d = assert(m.parse(
        "#!/bin/sh\n#CONDUIT_PRE cp -r '/archive/my data' /scratch/%j/\n#CONDUIT_POST mv /scratch/o /archive/o\n",
        { job_id = 7, work_dir = "/home/u" }))
      assert.are.same({
        { type = "PRE", action = "cp", recursive = true, every_attempt = false,
          sources = { "/archive/my data" }, destination = "/scratch/7/", line = 2, index = 1 },
        { type = "POST", action = "mv", recursive = false, every_attempt = false,
          sources = { "/scratch/o" }, destination = "/archive/o", line = 3, index = 2 },
      }, d)
    end)

    it("does not expand % when asked not to (stage hooks)", function()
      local m = load_module()
      local d = assert(m.parse("#CONDUIT_PRE cp /archive/%j /scratch/\n", {}, { expand = false }))
      assert.are.equal("/archive/%j", d[1].sources[1])
    end)

    it("returns nil and a message for bad input", function()
      local m = load_module()
      local d, msg = m.parse("#CONDUIT_PRE cp /archive/$X /scratch/\n", {})
      assert.is_nil(d)
      assert.are.equal("line 1: #CONDUIT_PRE: unquoted '$' is not expanded (quote it if it is literal)", msg)
    end)

    it("raises on misuse", function()
      local m = load_module()
      assert.has_error(function() m.parse() end)
      assert.has_error(function() m.parse("x", 5) end)
    end)

    it("survives hostile input without crashing", function()
      local m = load_module()
      local seeds = { "#CONDUIT_PRE ", "'", '"', "\\", "%", "\0", "\r", "\n", "-r", "--", "/", "..", "cp", "mv", " " }
      math.randomseed(42)
      for _ = 1, 3000 do
        local parts = {}
        for j = 1, math.random(1, 12) do parts[j] = seeds[math.random(#seeds)] end
        local ok, res, msg = pcall(m.parse, table.concat(parts), { job_id = 1, work_dir = "/w" })
        assert.is_true(ok)
        if res == nil then
          assert.are.equal("string", type(msg))
          assert.is_nil(msg:find("\n"))
        end
      end
    end)
  end)
end)

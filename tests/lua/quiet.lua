-- quiet.lua - run by tests/run-checks.sh with stdout and stderr sent to
-- files that must stay empty: in Slurm 24.11+ a hook's stdout and stderr
-- ARE its answer, so conduit_bb must never write to them, on any path.
-- Args: module dir, work dir, a conduit_bb.conf path (rewritten here),
-- the Conduit test server's port and PKI dir.
local module_dir, work, conf, port, pki = ...
package.cpath = module_dir .. "/?.so;" .. package.cpath
local results = {}

local function spit(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function fresh()
  _G.slurm = { SUCCESS = 0, ERROR = -1, CLUSTER_NAME = "quiet",
               log = function() end, error = function() end }
  package.loaded.conduit_bb = nil
  return require("conduit_bb")
end

local ji = setmetatable({}, { __index = function(_, k)
  return ({ job_id = 7, user_id = 61001, work_dir = work, restart_cnt = 0 })[k] end })
local good = work .. "/good.sh"
spit(good, "#!/bin/bash\n#CONDUIT_PRE cp " .. work .. "/a " .. work .. "/b\n" ..
     "#CONDUIT_POST cp " .. work .. "/b " .. work .. "/c\nhostname\n")
spit(work .. "/bad.sh", "#!/bin/bash\n#CONDUIT_PRE cp '/unterminated\n")

local confs = {
  ok = "ConduitServer=127.0.0.1:" .. port .. "\nServerName=localhost\nCACert=" .. pki ..
       "/ca.crt\nClientCert=" .. pki .. "/service.crt\nClientKey=" .. pki ..
       "/service.key\nStateDir=" .. work .. "/state\nServerDownGrace=0\nSqueue=/nonexistent\n",
  refused = "ConduitServer=127.0.0.1:9\nStateDir=" .. work .. "/state\nServerDownGrace=0\n",
  tls = "ConduitServer=127.0.0.1:" .. port .. "\nCACert=" .. pki .. "/other-ca.crt\n",
  broken = "ConduitServer=nonsense\n",
}
for name, text in pairs(confs) do
  spit(conf, text)
  for _, script in ipairs({ good, work .. "/bad.sh", work .. "/missing.sh" }) do
    fresh()
    local calls = {
      function() return slurm_bb_job_process(script, "61001", "61001", ji) end,
      function() return slurm_bb_pools() end,
      function() return slurm_bb_setup("7", "61001", "61001", "(null)", "0", script, ji) end,
      function() return slurm_bb_data_in("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_test_data_in("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_real_size("7", "61001", "61001", ji) end,
      function() return slurm_bb_paths("7", script, work .. "/path", "61001", "61001", ji) end,
      function() return slurm_bb_pre_run("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_post_run("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_data_out("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_test_data_out("7", script, "61001", "61001", ji) end,
      function() return slurm_bb_job_teardown("7", script, "true", "61001", "61001") end,
      function() return slurm_bb_get_status("61001", "61001", "conduit", "7") end,
      function() return slurm_bb_get_status("61001", "61001", "bogus") end,
      function() return slurm_bb_job_process() end,
      function() return slurm_bb_data_in("x", nil, "y") end,
    }
    for _, f in ipairs(calls) do
      local ok, rc = pcall(f)
      results[#results + 1] = ok and type(rc) == "number"
    end
  end
end
-- the verdict goes to a file, not stdout
local all = true
for _, r in ipairs(results) do all = all and r end
spit(work .. "/verdict", (all and "ok " or "BAD ") .. #results .. "\n")

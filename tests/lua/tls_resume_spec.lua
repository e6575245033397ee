-- tls_resume_spec.lua - TLS sessions carried from one hook to the next
-- (src/core/tls.h): each hook opens a connection of its own, as each of
-- Slurm's hook processes does, and the Conduit test server logs whether
-- a connection resumed a session ("tls_reused", grpcio's
-- ssl_session_reused) and the identity it saw ("cn").
package.path = "tests/lua/?.lua;" .. package.path
local H = require("harness")
H.ids_from(30000)
local sh, slurp, conf, fresh = H.sh, H.slurp, H.conf, H.fresh
local new_job, rpc_mark = H.new_job, H.rpc_mark
local sdir, work, statedir, pki = H.sdir, H.work, H.statedir, H.pki
local session = statedir .. "/tls-session"
local uid = io.popen("id -u"):read("*l")

local function server(cmd) assert(sh("sh tests/conduit/server-ctl.sh " .. cmd .. " " .. sdir)) end

-- The server's log records of `method` since mark: { cn=, reused= }.
local function seen(mark, method)
  local out = {}
  local log = (slurp(sdir .. "/rpc.log") or ""):sub(mark.off + 1)
  for line in log:gmatch("[^\n]+") do
    if line:find('"method": "' .. method .. '"', 1, true) then
      out[#out + 1] = { cn = line:match('"cn": "([^"]*)"'),
                        reused = line:match('"tls_reused": "([^"]*)"') }
    end
  end
  return out
end

local function stat(path)
  local p = io.popen("stat -c '%a %u' " .. path .. " 2>/dev/null")
  local s = p:read("*l")
  p:close()
  return s
end

local function data_in(job)
  fresh()
  return slurm_bb_data_in(job.id, job.script, job.uid, job.uid, job.info)
end

local function poll(job)
  fresh()
  return slurm_bb_test_data_in(job.id, job.script, job.uid, job.uid, job.info)
end

-- One Query (a poll) after mark: what the server saw of it.
local function polled(job)
  local m = rpc_mark()
  local rc = poll(job)
  local q = seen(m, "Query")
  assert.are.equal(1, #q)
  return q[1], rc
end

describe("TLS session resumption across hook processes", function()
  setup(H.workspace)
  before_each(H.clean)

  local function staging()
    local job = new_job({ "#CONDUIT_PRE cp " .. work .. "/in/a.txt " .. work .. "/out/tls-" ..
                          tostring(os.time()) .. ".txt" })
    local m = rpc_mark()
    assert.are.equal(0, (data_in(job)))
    local s = seen(m, "StartTransfer")
    assert.are.equal(1, #s)
    return job, s[1]
  end

  it("a poll resumes the session data_in saved, and the server sees the same identity", function()
    local job, first = staging()
    assert.are.equal("false", first.reused) -- nothing saved before
    assert.are.equal("conduit-service", first.cn)
    -- saved as private as the client key
    assert.are.equal("600 " .. uid, stat(session))
    local q, rc = polled(job)
    assert.are.equal(0, rc)
    assert.are.equal("true", q.reused)
    assert.are.equal("conduit-service", q.cn)
    -- and the next one again (each resumed connection brings a new ticket)
    q = polled(job)
    assert.are.equal("true", q.reused)
    assert.are.equal("conduit-service", q.cn)
  end)

  it("falls back to a full handshake after a server restart, then resumes again", function()
    local job = staging()
    server("restart") -- new ticket keys: the saved session is refused
    local q, rc = polled(job)
    assert.are.equal(0, rc)
    assert.are.equal("false", q.reused)
    assert.are.equal("conduit-service", q.cn)
    q = polled(job)
    assert.are.equal("true", q.reused)
  end)

  it("never offers a session saved under another client certificate", function()
    local job = staging()
    conf({ ClientCert = pki .. "/alice.crt", ClientKey = pki .. "/alice.key" })
    local q = polled(job)
    assert.are.equal("false", q.reused)
    assert.are.equal("alice", q.cn)
    -- nor alice's under the service certificate
    conf()
    q = polled(job)
    assert.are.equal("false", q.reused)
    assert.are.equal("conduit-service", q.cn)
  end)

  it("never offers a session saved for another server name", function()
    local job = staging()
    conf({ ServerName = "conduit-test" }) -- the same server, by its other name
    local q = polled(job)
    assert.are.equal("false", q.reused)
  end)

  it("ignores a session file that others can read, or that is not a session", function()
    local job = staging()
    assert(sh("chmod 0644 " .. session))
    local q = polled(job)
    assert.are.equal("false", q.reused) -- and this poll saved a new one, 0600
    assert.are.equal("600", stat(session):match("%d+"))
    local f = assert(io.open(session, "wb"))
    f:write("CBBTLS1\n" .. string.rep("x", 200))
    f:close()
    q = polled(job)
    assert.are.equal("false", q.reused)
    q = polled(job)
    assert.are.equal("true", q.reused)
  end)

  it("a TLSGroups that OpenSSL refuses fails the poll at once, naming it", function()
    local job = staging()
    conf({ TLSGroups = "P-999" })
    local m = rpc_mark()
    local rc, msg = poll(job)
    assert.are.equal(-1, rc)
    assert.matches("TLSGroups=P-999 not accepted", msg, 1, true)
    assert.are.equal(0, #seen(m, "Query"))
  end)

  -- The certificate and key are loaded only when the server asks for
  -- them (src/core/tls.c on_cert): a full handshake still presents them
  -- (the restart case above), and one that will not load fails the poll
  -- at once, naming the file, as libcurl's own loading did.
  it("a client key that will not load, or does not match, fails at once, naming ClientKey", function()
    local job = staging()
    local junk = work .. "/junk.key"
    local f = assert(io.open(junk, "w"))
    f:write("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
    f:close()
    for key, how in pairs({ [junk] = "will not load", [pki .. "/alice.key"] = "does not match ClientCert" }) do
      conf({ ClientKey = key, ServerDownGrace = "3600" })
      local m = rpc_mark()
      local rc, msg = poll(job)
      assert.are.equal(-1, rc)
      assert.matches("conduit: TLS: bad certificate configuration (ClientKey " .. key .. " " .. how,
                     msg, 1, true)
      assert.are.equal(0, #seen(m, "Query"))
    end
    conf()
    local q, rc = polled(job)
    assert.are.equal(0, rc)
    assert.are.equal("conduit-service", q.cn)
  end)

  it("TLSResume=no neither saves a session nor offers one", function()
    conf({ TLSResume = "no" })
    local job = staging()
    assert.is_nil(stat(session))
    local q = polled(job)
    assert.are.equal("false", q.reused)
    assert.is_nil(stat(session))
  end)
end)

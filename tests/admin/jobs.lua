-- jobs.lua OUT - staging jobs in every state `conduit-bb status` and
-- `conduit-bb metrics` report, made through the real hooks (the module,
-- fresh per call as Slurm loads it) against the Conduit test server:
--   done     stage-in and stage-out finished and accounted: AuditLog
--            lines for a stage-in, a stage-out and one --when= skipped
--   failed   stage-in whose line 4 fails validation, line 3 still moving
--   outage   the server unavailable during its poll (a .down record)
--   running  stage-in of two directives held in DATA_TRANSFERRING
--   out      stage-out of one directive held in DATA_TRANSFERRING
-- Writes NAME=job id lines and WORK=<harness work dir> to OUT, and a line
-- per hook call to OUT.hooks.
-- Environment as for the busted specs (tests/lua/harness.lua).
local H = dofile("tests/lua/harness.lua")
local out = assert(arg[1])
H.workspace()
H.clean()
-- the AuditLog goes where only its owner may write (the work dir is 0777)
assert(H.sh("mkdir -p " .. H.work .. "/log && chmod 0755 " .. H.work .. "/log"))
H.conf({ AuditLog = H.work .. "/log/audit.log" })
local ids = { "WORK=" .. H.work }
-- Every hook call, for the AuditLog's hook records: OUT.hooks gets a line
-- "HOOK RESULT WALL_MS MIN_MS" per call (the wall time around it; the
-- least it can have taken, for a call the server made wait).
local calls, min_ms = {}, 0
local function call(hook, j, info)
  H.fresh()
  local t0 = H.now_ms()
  local rc, msg = _G[hook](j.id, j.script, j.uid, j.uid, info or j.info)
  local wall = H.now_ms() - t0
  calls[#calls + 1] = string.format("%s %s %d %d", hook,
    rc ~= 0 and "error" or msg == "BUSY" and "busy" or "ok", wall, min_ms)
  return rc, msg
end
local function poll(hook, j, info)
  for _ = 1, 200 do
    local rc, msg = call(hook, j, info)
    if not (rc == 0 and msg == "BUSY") then return rc, msg end
    H.sleep(0.1)
  end
  return nil, "still busy"
end

local done = H.new_job({ "#CONDUIT_PRE cp in/a.txt out/done.txt",
                         "#CONDUIT_POST cp in/a.txt out/done-out.txt",
                         "#CONDUIT_POST --when=failure cp in/a.txt out/done-ckpt.txt" })
assert(call("slurm_bb_data_in", done) == 0)
assert(poll("slurm_bb_test_data_in", done) == 0, "done did not stage in")
-- it ran and exited 0 (job_state 3 is COMPLETED): the --when=failure line is skipped
done.info = H.info_of(done, { burst_buffer_state = "staging-out", job_state = 3,
                              exit_code = 0 })
assert(call("slurm_bb_data_out", done) == 0)
assert(poll("slurm_bb_test_data_out", done) == 0, "done did not stage out")
ids[#ids + 1] = "done=" .. done.id

-- the server refuses every Query and start: the poll records the outage
H.faults('{"unavailable": ["Query", "StartTransfer"]}')
local outage = H.new_job({ "#CONDUIT_PRE cp in/a.txt out/outage.txt" })
assert(call("slurm_bb_data_in", outage) == 0)
local rc, msg = call("slurm_bb_test_data_in", outage)
assert(rc == 0 and msg == "BUSY", "outage poll: " .. tostring(rc) .. " " .. tostring(msg))
ids[#ids + 1] = "outage=" .. outage.id

local running = H.new_job({ "#CONDUIT_PRE cp in/a.txt out/r1.txt",
                            "#CONDUIT_PRE cp in/a.txt out/r2.txt" })
local failed = H.new_job({ "#CONDUIT_PRE cp in/a.txt out/f1.txt",
                           "#CONDUIT_PRE cp in/missing.txt out/f2.txt" })
local staging_out = H.new_job({ "#CONDUIT_POST cp in/a.txt out/o1.txt" })
local hold = '"delay_ms": {"DATA_TRANSFERRING": 600000}, "fail_at": [{"state": "VALIDATING", ' ..
         '"error": "ERROR_VALIDATION", "message": "failed to get source[in/missing.txt]", ' ..
         '"comment": "^SLURMJOB:' .. failed.id .. ',.*LINE:4$"}]'
-- running's stage-in start waits 600 ms for each StartTransfer answer:
-- a hook call the latency histogram must put above 0.5 s
H.faults('{' .. hold .. ', "stall_ms": {"StartTransfer": 600}}')
min_ms = 600
assert(call("slurm_bb_data_in", running) == 0)
min_ms = 0
H.faults('{' .. hold .. '}')
assert(call("slurm_bb_data_in", failed) == 0)
rc, msg = poll("slurm_bb_test_data_in", failed)
assert(rc == -1, "failed job: " .. tostring(rc) .. " " .. tostring(msg))
local out_info = H.info_of(staging_out, { burst_buffer_state = "staging-out" })
assert(call("slurm_bb_data_out", staging_out, out_info) == 0)
rc, msg = call("slurm_bb_test_data_out", staging_out, out_info)
assert(rc == 0 and msg == "BUSY", "stage-out poll: " .. tostring(rc) .. " " .. tostring(msg))
ids[#ids + 1] = "running=" .. running.id
ids[#ids + 1] = "failed=" .. failed.id
ids[#ids + 1] = "out=" .. staging_out.id
H.spit(out, table.concat(ids, "\n") .. "\n")
H.spit(out .. ".hooks", table.concat(calls, "\n") .. "\n")

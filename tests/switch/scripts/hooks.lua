-- hooks.lua - a switch.lua for tests/switch/test_runner.c: each hook's
-- behaviour is chosen by the job's network (or the stepinfo's "mode").
-- Module-level state, to prove every call gets a fresh Lua state.
calls = (calls or 0) + 1

local function mode_of(t) return t and (t.network or t.mode) or "" end

function slurm_switch_block_job_complete() return true end
function slurm_switch_setup_special_steps() return false end

function slurm_switch_job_start(job)
	local m = mode_of(job)
	if m == "accept" then
		slurm.log_info("job_start %d for %s, calls=%d", job.job_id, job.user_name, calls)
		return slurm.SUCCESS, { v = 2, job = job.job_id, name = "s\0e\n", ratio = 0.25,
			ok = true, no = false, nested = { 1, 2, { deep = "x" } }, big = 2^40 }
	elseif m == "decline" then
		return slurm.SUCCESS, nil
	elseif m == "fail" then
		return slurm.ERROR
	elseif m == "error" then
		error("deliberate")
	elseif m == "norc" then
		return "yes", {}
	elseif m == "unsaved" then
		return slurm.SUCCESS, { f = print }
	elseif m == "shared" then
		-- 60 levels, each naming the one below twice: 2^60 paths
		local t = { x = 1 }
		for _ = 1, 60 do t = { a = t, b = t } end
		return slurm.SUCCESS, t
	elseif m == "big" then
		return slurm.SUCCESS, { s = string.rep("x", 70 * 1024) }
	elseif m == "exit" then
		os.exit(0)
	elseif m == "hang" then
		-- a child in the helper's process group that outlives the helper
		-- unless the group is killed; its pid is left for the test
		os.execute("sleep 300 & echo $! > " .. job.pidfile .. "; sleep 300")
	elseif m == "orphan" then
		os.execute("sleep 300 & echo $! > " .. job.pidfile)
		return slurm.SUCCESS, nil
	elseif m == "quiet" then
		-- stdin, stdout and stderr are /dev/null; print is logged
		io.write("to stdout\n")
		io.stderr:write("to stderr\n")
		print("printed", 42, nil)
		return slurm.SUCCESS, { stdin = tostring(io.read("l")) }
	elseif m == "json" then
		slurm.log_info("%s", slurm.to_json({ b = { 1, 2, "three" }, a = "q\"uote", c = true, n = 1.5 }))
		return slurm.SUCCESS, nil
	elseif m == "flood" then
		-- far more log lines than the plugin keeps: the answer still comes
		for i = 1, 100000 do slurm.log_info("line %d %s", i, string.rep("y", 100)) end
		return slurm.SUCCESS, { flooded = true }
	elseif m == "gc_hang" then
		-- a finalizer that would hang the helper at lua_close: the answer
		-- is written first and the helper ends without closing the state
		-- (kept in globals: only lua_close would collect them)
		hang_on_close = setmetatable({}, { __gc = function() while true do end end })
		sleep_on_close = setmetatable({}, { __gc = function() os.execute("sleep 300") end })
		return slurm.SUCCESS, { kept = true }
	elseif m == "slurm_log" then
		slurm.log(0, "level zero")
		slurm.log(2, "level two")
		slurm.error("an error")
		return slurm.SUCCESS, nil
	elseif m == "fresh" then
		return slurm.SUCCESS, { calls = calls, cluster = slurm.CLUSTER_NAME, eagain = slurm.EAGAIN }
	end
	return slurm.ERROR
end

function slurm_switch_job_complete(job, jobinfo)
	if jobinfo == nil then return 7 end
	return jobinfo.nested[3].deep == "x" and jobinfo.name == "s\0e\n" and slurm.SUCCESS or -1
end

function slurm_switch_step_init(step, stepinfo)
	return 0, { S = "str", N = 42, F = 1.5, T = true, U = false, [7] = "skipped" }
end

# switch_load.sh - (sourced by run.sh, profile 26.05-switch, last) the
# switch/lua plugin under load and past its edges, on Slurm 26.05.3:
#   1. a burst of 300 --network jobs: slurmctld never runs more than
#      switch_workers of the plugin's threads, and every job ends, set
#      up and torn down once;
#   2. a finalizer (__gc) that hangs after job_start answered loses
#      nothing: the job runs at once;
#   3. a teardown that answers EAGAIN for ever while Slurm purges the job
#      record (MinJobAge=2): the retries end after switch_retries and the
#      nodes are drained.
# switch.lua is, for this part, conduit_bb's with two test behaviours in
# front (--network=burst and --network=gc_hang); the suite's own comes
# back at the end.
LOAD_LUA=/etc/slurm/switch.lua
cp "$R$LOAD_LUA" "$R/tmp/switch.lua.suite"
cat > "$R$LOAD_LUA.new" <<'LUA'
require("conduit_bb")
local start, complete = slurm_switch_job_start, slurm_switch_job_complete
function slurm_switch_job_start(job, ...)
	if job.network == "burst" then
		os.execute("sleep 0.2")
		return slurm.SUCCESS, { burst = job.job_id }
	elseif job.network == "gc_hang" then
		-- runs only when the Lua state is closed, after the answer
		hang_on_close = setmetatable({}, { __gc = function() while true do end end })
		return slurm.SUCCESS, { gc = true }
	end
	return start(job, ...)
end
function slurm_switch_job_complete(job, jobinfo, ...)
	if jobinfo and jobinfo.burst then
		os.execute("sleep 0.5")
		slurm.log_info("burst teardown %d", jobinfo.burst)
		return slurm.SUCCESS
	elseif jobinfo and jobinfo.gc then
		return slurm.SUCCESS
	end
	return complete(job, jobinfo, ...)
end
LUA
mv "$R$LOAD_LUA.new" "$R$LOAD_LUA"
LOAD_WORKERS=$(sed -n 's/.*switch_workers=\([0-9]*\).*/\1/p' "$R/etc/slurm/slurm.conf")

ctld_pid() { for p in $(pgrep -x slurmctld); do [ "$(readlink "/proc/$p/root")" = "$R" ] && echo "$p"; done | head -n 1; }
# the plugin's workers now: slurmctld's threads named swl_worker
workers_now() { grep -lx swl_worker /proc/"$1"/task/*/comm 2>/dev/null | wc -l; }

# ---- 1. a burst of 300 --network jobs ----------------------------------------
write_job burst.sh <<'JOB'
#!/bin/sh
true
JOB
pid=$(ctld_pid)
threads0=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$pid/status")
rm -f "$R/tmp/load-threads"
# (sampled until the part says stop: a file, so no guess of how long)
(
	most=0 most_all=0
	while [ ! -e "$R/tmp/load-threads.stop" ]; do
		n=$(workers_now "$pid")
		a=$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
		[ "$n" -gt "$most" ] && most=$n
		[ "${a:-0}" -gt "$most_all" ] && most_all=$a
		echo "$most $most_all" > "$R/tmp/load-threads.new" && mv "$R/tmp/load-threads.new" "$R/tmp/load-threads"
		sleep 0.1
	done
) &
sampler=$!
JB=$(submit burst.sh --array=1-300 -N1 -n1 --network=burst --output=/dev/null)
expect "burst: 300 --network jobs (an array) are accepted" [ -n "$JB" ]
burst_done() { # every task COMPLETED, and torn down
	[ "$(in_root squeue -h -t all -j "$JB" -o %T | grep -c '^COMPLETED$')" = 300 ] &&
		[ "$(grep -c 'burst teardown ' "$R/var/log/slurm/slurmctld.log")" -ge 300 ]
}
load_t0=$(date +%s)
expect "... all 300 complete, each torn down" wait_for 900 burst_done
touch "$R/tmp/load-threads.stop"
wait "$sampler"
rm -f "$R/tmp/load-threads.stop"
read -r most most_all < "$R/tmp/load-threads"
note "burst: 300 jobs in $(( $(date +%s) - load_t0 )) s; slurmctld had $threads0 threads before, at most $most_all during; at most $most switch/lua workers (switch_workers=$LOAD_WORKERS)"
expect "... slurmctld never ran more than switch_workers=$LOAD_WORKERS of the plugin's threads (at most $most), and some ran" \
	[ "$most" -ge 1 ] && [ "$most" -le "$LOAD_WORKERS" ]
burst_once() { # one job_start and one teardown per task, none twice
	[ "$(grep 'burst teardown ' "$R/var/log/slurm/slurmctld.log" | sed 's/.*burst teardown //' | sort -u | wc -l)" = 300 ] &&
		[ "$(grep -c 'burst teardown ' "$R/var/log/slurm/slurmctld.log")" = 300 ] &&
		[ "$(in_root scontrol show job -o "$JB" | grep -o 'Restarts=[0-9]*' | grep -vc '=0$')" = 0 ]
}
expect "... each set up once and torn down once (300 distinct teardowns, no requeue)" burst_once

# ---- 2. a finalizer that hangs after the answer --------------------------------
JG=$(submit burst.sh -N1 -n1 --network=gc_hang --output=/dev/null)
gc_t0=$(ms)
expect "hanging finalizer: job_start answered, its __gc would loop for ever; the job completes" \
	wait_for 60 state_is "$JG" COMPLETED
note "hanging finalizer: the job completed $(( $(ms) - gc_t0 )) ms after sbatch (switch_timeout=20 s)"
expect "... well within switch_timeout, and no timeout logged for it" \
	sh -c "[ $(( $(ms) - gc_t0 )) -lt 15000 ] && ! grep -q 'JobId=$JG job_start: timed out' '$R/var/log/slurm/slurmctld.log'"

# ---- 3. EAGAIN for ever, with the job record purged meanwhile -------------------
cp "$R/etc/slurm/slurm.conf" "$R/tmp/slurm.conf.suite"
sed -e 's/^MinJobAge=.*/MinJobAge=2/' \
	-e 's/switch_retries=[0-9]*/switch_retries=2/' \
	-e 's/switch_retry_interval=[0-9]*/switch_retry_interval=15/' \
	"$R/tmp/slurm.conf.suite" > "$R/etc/slurm/slurm.conf"
sh "$E2E/cluster.sh" restart-slurmctld
wait_for 60 sh -c "chroot $R scontrol ping 2>/dev/null | grep -q 'is UP'"
JE=$(submit net.sh --export=ALL,HOLD=2 -N2 --network=conduit:pool=t4+gpus=1 --output=/dev/null)
expect "EAGAIN with MinJobAge=2: the job runs with a session" wait_for 60 state_is "$JE" RUNNING
ctl_faults '{"fail_next": 1000, "status": 503}'
purged() { ! in_root scontrol show job "$JE" >/dev/null 2>&1; }
expect "... it ends, its release fails (503) and job_complete answers EAGAIN" \
	wait_for 60 ctld_log "JobId=$JE job_complete: EAGAIN (1 of 2)"
expect "... Slurm purges the job record while the retries go on" wait_for 60 purged
expect "... the retries still end: both nodes drained after switch_retries=2" wait_for 90 drained 2
expect "... with the reason naming the job and the EAGAINs" \
	reason_is cbb1 "switch/lua: JobId=$JE teardown failed: EAGAIN more than switch_retries=2 times"
# (a retry would come switch_retry_interval=15 s after the last call)
eagain_calls() { grep -c "JobId=$JE job_complete: EAGAIN (" "$R/var/log/slurm/slurmctld.log"; }
drains_of() { grep -c "JobId=$JE job_complete: draining" "$R/var/log/slurm/slurmctld.log"; }
sleep 20
expect "... and no call after: two retries logged, one drain, over one retry interval later" \
	[ "$(eagain_calls):$(drains_of)" = 2:1 ]
ctl_faults '{}'

# ---- the suite's switch.lua and slurm.conf back --------------------------------
cp "$R/tmp/slurm.conf.suite" "$R/etc/slurm/slurm.conf"
cp "$R/tmp/switch.lua.suite" "$R$LOAD_LUA"
sh "$E2E/cluster.sh" restart-slurmctld
wait_for 60 sh -c "chroot $R scontrol ping 2>/dev/null | grep -q 'is UP'"
in_root scontrol update nodename=cbb1,cbb2 state=resume
expect "... resumed, the nodes are idle again" wait_for 60 all_idle

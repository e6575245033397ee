# switch.sh - the switch half on a real Slurm (profile 26.05-switch,
# sourced by run.sh): Slurm 26.05.3 with SwitchType=switch/lua (the
# plugin of slurm/switch_lua/, built against this very tree), switch.lua
# = require("conduit_bb"), the test session controller
# (tests/switch/controller.py) and two slurmd on this host, nodes cbb1
# and cbb2, so that a step spans two nodes.  Sessions are delivered as
# a 0600 token file (SessionDelivery=file).

CTL=$R$SESSIONS
ctl_faults() { printf '%s\n' "$1" > "$CTL/faults.json.new" && mv "$CTL/faults.json.new" "$CTL/faults.json"; }
ctl_lines() { grep -F "\"path\": \"/v1/sessions/conduit/$1\"" "$CTL/log" 2>/dev/null; }
ctl_count() { ctl_lines "$1" | grep -c "\"what\": \"$2\""; } # JOB WHAT
ctl_puts() { ctl_lines "$1" | grep -c '"method": "PUT"'; }
ctl_none() { [ -z "$(ctl_lines "$1")" ]; }
refused() { [ "$(ctl_count "$1" 'no capacity')" -ge 1 ]; }
released_once() { [ "$(ctl_count "$1" released)" = 1 ]; }
# PUTs:created:released for a job, once its (asynchronous) teardown is done
ctl_is() { [ "$(ctl_puts "$1"):$(ctl_count "$1" created):$(ctl_count "$1" released)" = "$2" ]; }
ctl_once() { [ "$(ctl_count "$1" created):$(ctl_count "$1" released)" = 1:1 ]; }
ctld_log() { grep -qF -- "$1" "$R/var/log/slurm/slurmctld.log"; }
ctld_count() { grep -cF -- "$1" "$R/var/log/slurm/slurmctld.log"; }
# a node's line of a job's output has PATTERN: node_has OUTPUT NODE PATTERN
node_has() { grep "^$2 " "$R$JOBS/$1" 2>/dev/null | grep -q -- "$3"; }
# N lines of a job's output have PATTERN: lines_are OUTPUT N PATTERN
lines_are() { [ "$(grep -c -- "$3" "$R$JOBS/$1" 2>/dev/null)" = "$2" ]; }
same_session_everywhere() { # one distinct line once the node name is cut
	[ "$(grep -v '^batch' "$R$JOBS/$1" | sed 's/^cbb[12] //' | sort -u | wc -l)" = 1 ]
}
no_hook_for() { # no switch/lua line for JOB in slurmctld's or a slurmd's log
	! grep -q "switch/lua: JobId=$1 " "$R/var/log/slurm/slurmctld.log" \
		"$R/var/log/slurm/slurmd-cbb1.log" "$R/var/log/slurm/slurmd-cbb2.log"
}
restarts_of() { in_root scontrol show job -o "$1" | sed -n 's/.* Restarts=\([0-9]*\) .*/\1/p'; }
restarted() { [ "$(restarts_of "$1")" -ge 1 ] 2>/dev/null; }
drained() { [ "$(in_root sinfo -h -N -o '%N %t' | grep -c 'drain\|drng')" = "$1" ]; }
all_idle() { [ "$(in_root sinfo -h -o %t | sort -u)" = idle ]; }
reason_is() { in_root scontrol show node "$1" | grep -qF "Reason=$2"; }
job_reason() { in_root scontrol show job -o "$1" | grep -qF -e "Reason=$(printf '%s' "$2" | tr ' ' _)" -e "Reason=$2"; }
ms() { date +%s%N | cut -c1-13; }
plugin_exports() { # the op table: 22 switch_p_*, and 6 plugin symbols
	syms=$(nm -D --defined-only "$1" | awk '{print $3}')
	[ "$(printf '%s\n' "$syms" | grep -c '^switch_p_')" = 22 ] &&
		[ "$(printf '%s\n' "$syms" | grep -v '^switch_p_' | tr '\n' ' ')" = \
			"fini init plugin_id plugin_name plugin_type plugin_version " ]
}
slurmd_quiet() { ! grep -h 'switch/lua' "$R"/var/log/slurm/slurmd-cbb[12].log | grep -qi error; }

write_job net.sh <<'JOB'
#!/bin/sh
echo "batch ${CONDUIT_SESSION_ID:-nosession}"
srun -N2 --ntasks-per-node=1 sh -c 'f=${CONDUIT_SESSION_TOKEN_FILE:-}
echo "$SLURMD_NODENAME id=${CONDUIT_SESSION_ID:-none} pool=${CONDUIT_SESSION_POOL:-} gpus=${CONDUIT_SESSION_GPUS:-} token=${CONDUIT_SESSION_TOKEN-unset} file=$f mode=$([ -n "$f" ] && stat -c %a:%U "$f") secret=$([ -n "$f" ] && cat "$f") region=${CONDUIT_REGION:-} preload=${LD_PRELOAD-unset}"'
sleep "${HOLD:-0}"
JOB

# ---- the plugin -------------------------------------------------------------
expect "switch_lua.so exports exactly init, fini, plugin_name/type/version/id and the 22 switch_p_* of 26.05's op table" \
	plugin_exports "$R/usr/lib/x86_64-linux-gnu/slurm/switch_lua.so"
expect "the plugin's objects, and the helper's, call one way: no circle among their files" \
	sh "$HERE/tests/cycle-check.sh" "switch_lua=$R$E2E_SRC/build/switch_lua" \
		"switch-lua-run=$R$E2E_SRC/build/switch_lua-helper"
expect "slurmctld loaded switch/lua and asked switch.lua's two once-hooks" \
	ctld_log "switch/lua: /etc/slurm/switch.lua loaded: block_job_complete=yes setup_special_steps=no"
expect "both slurmd loaded the plugin inert (no error naming switch/lua)" slurmd_quiet

# ---- 1. a session on both nodes ---------------------------------------------
J1=$(submit net.sh -N2 --network=conduit:pool=a100+gpus=2 --output=net-%j.out)
expect "sbatch -N2 --network=conduit:pool=a100+gpus=2 is accepted" [ -n "$J1" ]
expect "the session job completes" wait_for 60 state_is "$J1" COMPLETED
for n in cbb1 cbb2; do
	expect "[$n] the step sees its session: CONDUIT_SESSION_ID, POOL=a100, GPUS=2" \
		node_has "net-$J1.out" $n 'id=sess-[0-9]* pool=a100 gpus=2 '
	expect "[$n] SessionDelivery=file: no CONDUIT_SESSION_TOKEN; a 0600 token file of alice's holding the token" \
		node_has "net-$J1.out" $n "token=unset file=/run/conduit_bb/conduit.$J1.token mode=600:alice secret=tok-[0-9a-f]\{32\} "
	expect "[$n] the controller's allowed env passes (CONDUIT_REGION), LD_PRELOAD does not" \
		node_has "net-$J1.out" $n 'region=test-1 preload=unset'
	expect "[$n] step_init ran in that node's slurmstepd (its log)" \
		grep -q "switch/lua: JobId=$J1 StepId=0 step_init: returned 0" "$R/var/log/slurm/slurmd-$n.log"
done
expect "both nodes saw the same session and token" same_session_everywhere "net-$J1.out"
expect "the batch step carries no session (setup_special_steps=no)" \
	grep -qx "batch nosession" "$R$JOBS/net-$J1.out"
expect "the controller saw one reservation and one release for the job" wait_for 30 ctl_is "$J1" 1:1:1
expect "... for alice's uid, 2001" sh -c "grep -F '/v1/sessions/conduit/$J1\"' '$CTL/log' | grep -q '\"uid\": 2001'"

# ---- 2. a job without --network is left alone -------------------------------
J2=$(submit net.sh -N2 --output=net-%j.out)
expect "a job without --network completes" wait_for 60 state_is "$J2" COMPLETED
expect "... its steps on both nodes have no session" \
	lines_are "net-$J2.out" 2 'id=none pool= gpus= token=unset file= '
expect "... no hook ran for it: no job_start in slurmctld, no step hook on either node" no_hook_for "$J2"
expect "... and the controller never heard of it" ctl_none "$J2"

# ---- 3. no capacity: requeued, started once capacity frees ------------------
J3=$(submit net.sh --export=ALL,HOLD=20 -N1 --network=conduit:pool=a100+gpus=4 --output=net-%j.out)
expect "no capacity: a job takes the whole a100 pool (4 GPUs)" wait_for 60 state_is "$J3" RUNNING
J4=$(submit net.sh -N2 --network=conduit:pool=a100+gpus=2 --output=net-%j.out)
expect "... a second job's reservation is refused (409, no capacity)" wait_for 60 refused "$J4"
expect "... Slurm requeues it (Restarts >= 1)" wait_for 30 restarted "$J4"
expect "... slurmctld's log says why: requeued, switch setup failed" \
	ctld_log "switch/lua: JobId=$J4 requeued: switch setup failed"
expect "... it does not run while the pool is full" [ "$(state_of "$J4")" != RUNNING ]
expect "... the first job completes and releases" wait_for 60 state_is "$J3" COMPLETED
expect "... then the requeued job starts and completes" wait_for 90 state_is "$J4" COMPLETED
expect "... with its session on both nodes" lines_are "net-$J4.out" 2 'id=sess-[0-9]* pool=a100 gpus=2 '
expect "... reserved once, released once (the refused attempts reserved nothing)" wait_for 30 ctl_once "$J4"
note "no capacity: job $J4 was requeued $(restarts_of "$J4") time(s) before it ran"

# ---- 4. slurmctld restarts while a job runs ---------------------------------
J5=$(submit net.sh --export=ALL,HOLD=12 -N2 --network=conduit:pool=a100+gpus=1 --output=net-%j.out)
# (restarted once its step has run: a step created while slurmctld is
# away is refused as "nodes busy" and srun backs off for minutes)
expect "restart while running: the job runs, its step done on both nodes" \
	wait_for 60 lines_are "net-$J5.out" 2 'id=sess-[0-9]* pool=a100 gpus=1 '
sh "$E2E/cluster.sh" restart-slurmctld
expect "... slurmctld comes back and the job completes" wait_for 90 state_is "$J5" COMPLETED
expect "... one reservation and one release in the controller's log" wait_for 30 ctl_is "$J5" 1:1:1

# ---- 5. slurmctld restarts while a job's setup runs -------------------------
# (reserves at once and answers 4 s late: within SwitchTimeout, long
# enough to restart during; so the PUT that job_start sends again after
# the restart always finds the session the first one made)
ctl_faults '{"answer_delay_ms": 4000}'
J6=$(submit net.sh -N2 --network=conduit:pool=a100+gpus=1 --output=net-%j.out)
expect "restart during setup: the job is held CONFIGURING while job_start runs" \
	wait_for 60 state_is "$J6" CONFIGURING
sh "$E2E/cluster.sh" restart-slurmctld
ctl_faults '{}'
expect "... after the restart job_start runs again (slurmctld's log)" \
	wait_for 30 ctld_log "JobId=$J6: its setup was running when slurmctld stopped: held, job_start runs again"
expect "... the job completes" wait_for 90 state_is "$J6" COMPLETED
expect "... its step ran on both nodes with the session, at once (not refused as 'nodes busy': the hold lasts until the nodes answer)" \
	sh -c "! grep -q busy '$R$JOBS/net-$J6.out'"
expect "... its steps saw the session" lines_are "net-$J6.out" 2 'id=sess-[0-9]* pool=a100 gpus=1 '
expect "... one reservation (the repeated PUT got the same session) and one release" \
	wait_for 30 ctl_once "$J6"
note "restart during setup: job $J6 sent $(ctl_puts "$J6") PUT(s), $(ctl_count "$J6" existing) answered with the existing session"

# ---- 6. scancel releases ----------------------------------------------------
J7=$(submit net.sh --export=ALL,HOLD=60 -N2 --network=conduit:pool=a100+gpus=2 --output=net-%j.out)
expect "scancel: the job runs with a session" wait_for 60 state_is "$J7" RUNNING
in_root scancel "$J7"
expect "... scancel ends it" wait_for 30 state_is "$J7" CANCELLED
expect "... and its session is released" wait_for 30 released_once "$J7"

# ---- 7. a setup that fails for a job that cannot be requeued ----------------
J8=$(submit net.sh -N1 --no-requeue --network=conduit:pool=nosuchpool --output=net-%j.out)
expect "a refused request (unknown pool) with --no-requeue: the job is cancelled, never run" \
	wait_for 60 state_is "$J8" CANCELLED
expect "... with the reason 'switch setup failed'" job_reason "$J8" "switch setup failed"
expect "... exactly once (one cancel, no requeue)" \
	[ "$(ctld_count "switch/lua: JobId=$J8 cancelled"):$(ctld_count "switch/lua: JobId=$J8 requeued")" = 1:0 ]
expect "... its script never ran" gone "$JOBS/net-$J8.out"

# ---- 8. a release that keeps failing drains the nodes -----------------------
# (SwitchBlockJobComplete=yes: a failed release answers EAGAIN, retried
# switch_retries=2 times, switch_retry_interval=3 s apart)
J9=$(submit net.sh --export=ALL,HOLD=3 -N2 --network=conduit:pool=t4+gpus=1 --output=net-%j.out)
expect "failed release: the job runs" wait_for 60 state_is "$J9" RUNNING
ctl_faults '{"fail_next": 3, "status": 503}'
expect "... the job completes" wait_for 60 state_is "$J9" COMPLETED
expect "... its release fails (503), job_complete answers EAGAIN and is called again twice" \
	wait_for 30 sh -c "[ \$(grep -c 'JobId=$J9 job_complete: EAGAIN' '$R/var/log/slurm/slurmctld.log') = 2 ]"
expect "... then both its nodes are drained" wait_for 30 drained 2
expect "... with a reason naming the job and the failure" \
	reason_is cbb1 "switch/lua: JobId=$J9 teardown failed: EAGAIN more than switch_retries=2 times"
expect "... the controller saw the three attempts" [ "$(ctl_count "$J9" fault)" = 3 ]
ctl_faults '{}'
in_root scontrol update nodename=cbb1,cbb2 state=resume
expect "... resumed, the nodes are idle again" wait_for 30 all_idle

# ---- 9. a burst-buffer stage and a session in one job -----------------------
write_job bbnet.sh <<'JOB'
#!/bin/sh
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/bbin-%j.txt
echo "staged $(cat /home/alice/jobs/bbin-$SLURM_JOB_ID.txt)"
srun -N2 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME id=${CONDUIT_SESSION_ID:-none} file=${CONDUIT_SESSION_TOKEN_FILE:-}"'
JOB
J10=$(submit bbnet.sh -N2 --network=conduit:pool=a100+gpus=1 --output=bbnet-%j.out)
expect "a stage-in and a session in one job: it completes" wait_for 120 state_is "$J10" COMPLETED
expect "... the file was staged in" grep -qx 'staged alpha' "$R$JOBS/bbnet-$J10.out"
expect "... by one StartTransfer" [ "$(starts_for "$J10")" = 1 ]
expect "... and both nodes' steps saw the session" \
	lines_are "bbnet-$J10.out" 2 "id=sess-[0-9]* file=/run/conduit_bb/conduit.$J10.token"
expect "... reserved once, released once" wait_for 30 ctl_once "$J10"

# ---- 10. a controller that never answers does not stall slurmctld ------------
ctl_faults '{"delay_ms": 60000}'
hung=""
for i in 1 2 3; do
	hung="$hung $(submit net.sh -N1 --network=conduit:pool=t4+gpus=1 --output=/dev/null)"
done
configuring() { in_root squeue -h -t CONFIGURING -o %A | grep -q .; }
wait_for 30 configuring
worst_sb=0
worst_sq=0
sum=0
held=0
for i in 1 2 3 4 5; do
	m0=$(ms)
	as_user alice sbatch --parsable --chdir=$JOBS --output=/dev/null --wrap=true >/dev/null 2>&1
	m1=$(ms)
	in_root squeue >/dev/null 2>&1
	m2=$(ms)
	[ $((m1 - m0)) -gt "$worst_sb" ] && worst_sb=$((m1 - m0))
	[ $((m2 - m1)) -gt "$worst_sq" ] && worst_sq=$((m2 - m1))
	sum=$((sum + m2 - m0))
	n=$(in_root squeue -h -t CONFIGURING -o %A | wc -l)
	[ "$n" -gt "$held" ] && held=$n
	sleep 1
done
note "controller hanging, up to $held setup(s) waiting on it: sbatch worst $worst_sb ms, squeue worst $worst_sq ms (5 of each; mean of a pair $((sum / 5)) ms)"
fast() { [ "$worst_sb" -lt 2000 ] && [ "$worst_sq" -lt 2000 ] && [ "$held" -ge 1 ]; }
expect "sbatch and squeue answer within 2 s while setups wait on a controller that never answers" fast
all_restarted() { for j in $hung; do restarted "$j" || return 1; done; }
expect "... the hung setups fail at SwitchTimeout and Slurm requeues their jobs" wait_for 60 all_restarted
in_root scancel $hung
ctl_faults '{}'
all_cancelled() { for j in $hung; do state_is "$j" CANCELLED || return 1; done; }
expect "... and they can be cancelled" wait_for 60 all_cancelled

# ---- 11. the RPM for this Slurm ---------------------------------------------
rpm_switch() {
	# in a build directory of its own: the host's install part makes its
	# RPM in build/ of the same tree, maybe at this very moment
	rb=$R/tmp/rpm-build
	rm -rf "$rb"
	(cd "$HERE" && make --no-print-directory -s rpm B="$rb" SLURM_SRC="$R/usr/src/slurm-$SLURM_SOURCE" \
		RPM_LUA_VERSION=$LUA >"$R/tmp/rpm.log" 2>&1) || { tail -20 "$R/tmp/rpm.log"; return 1; }
	p=$(ls "$rb"/rpm/RPMS/*/conduit-bb-switch-lua-*.rpm) || return 1
	files=$(rpm -qpl "$p")
	printf '%s\n' "$files" | grep -qx /usr/lib64/slurm/switch_lua.so &&
		printf '%s\n' "$files" | grep -qx /usr/libexec/slurm/switch-lua-run &&
		rpm -qpR "$p" | grep -qx "slurm = $SLURM_SOURCE" || {
		printf '%s\n' "$files"
		rpm -qpR "$p"
		return 1
	}
}
expect "make rpm SLURM_SRC=<this tree>: conduit-bb-switch-lua holds the plugin and its helper, Requires: slurm = $SLURM_SOURCE" \
	rpm_switch

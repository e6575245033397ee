# workloads.sh - what real workloads do (sourced by run.sh): job arrays
# with and without % symbols, a Conduit outage during stage-out, scancel
# and scancel --hurry during stage-out, the reason of a job cancelled in
# stage-in, a job cancelled in stage-in whose every hook Slurm killed.

# ---- arrays -------------------------------------------------------------------
mkdir -p "$R$JOBS/arr" "$R/data/arr"
chown 2001:2001 "$R$JOBS/arr" "$R/data/arr"
write_job array-sym.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/home/alice/jobs/arr/sym-%A_%a.out
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/arr/in-%A-%a.txt
#CONDUIT_POST cp /home/alice/jobs/arr/res-%A-%a.txt /data/arr/res-%A-%a.txt
echo "task $SLURM_ARRAY_TASK_ID $(cat /home/alice/jobs/arr/in-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}.txt)" \
	> /home/alice/jobs/arr/res-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}.txt
echo "count=$CONDUIT_BB_STAGE_IN_COUNT"
JOB
write_job array-plain.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/home/alice/jobs/arr/plain-%A_%a.out
#CONDUIT_PRE cp /data/in/b.txt /home/alice/jobs/arr/
#CONDUIT_POST cp /home/alice/jobs/arr/b.txt /data/arr/
test -f /home/alice/jobs/arr/b.txt && echo "saw b"
echo "count=$CONDUIT_BB_STAGE_IN_COUNT"
JOB
A1=$(submit array-sym.sh --array=0-9)
expect "sbatch accepts an array with %A/%a in its directives" [ -n "$A1" ]
A2=$(submit array-plain.sh --array=0-4)
expect "sbatch accepts an array without %" [ -n "$A2" ]
tasks_done() { # tasks_done ARRAY N: N tasks of the array COMPLETED
	[ "$(in_root squeue -h -t all -j "$1" -o %T | grep -c '^COMPLETED$')" = "$2" ]
}
expect "array with %A/%a: all 10 tasks stage in, run, stage out: COMPLETED" wait_for 180 tasks_done "$A1" 10
expect "array without %: all 5 tasks COMPLETED (the array's script is read)" wait_for 120 tasks_done "$A2" 5
expect "... every task's output arrived, from its own input" \
	all_tasks "$A1" 10 'file_is "/data/arr/res-$A1-$i.txt" "task $i alpha"'
expect "... every task got its environment (paths), split-off tasks too" \
	all_tasks "$A1" 10 'grep -qx "count=1" "$R$JOBS/arr/sym-${A1}_$i.out"'
expect "... the tasks without % saw their input and got their environment" \
	all_tasks "$A2" 5 'grep -qx "saw b" "$R$JOBS/arr/plain-${A2}_$i.out" && grep -qx "count=1" "$R$JOBS/arr/plain-${A2}_$i.out"'
expect "... no task was held" sh -c "! chroot $R squeue -h -t all -j $A1,$A2 -o %r | grep -qi held"
array_ids() { in_root squeue -h -t all -j "$1" -o %A; }
no_array_state() {
	for t in $(array_ids "$A1") $(array_ids "$A2"); do
		no_state_files "$t" || { echo "left: $(state_files "$t")"; return 1; }
	done
}
expect "... no StateDir file left for any task" wait_for 30 no_array_state

# ---- a Conduit outage during stage-out, longer than ServerDownGrace ---------
write_job out-outage.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/ooo-%j.txt /data/out/ooo-%j.txt
echo "result $SLURM_JOB_ID" > /home/alice/jobs/ooo-$SLURM_JOB_ID.txt
JOB
# (held in DATA_TRANSFERRING until the server is back)
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
JO=$(submit out-outage.sh)
wait_starts "$JO" 1 60
sh "$E2E/cluster.sh" stop-conduit
# up again once a stage-out poll has found it down longer than
# ServerDownGrace=10 s (stage-out waits up to StageOutDownGrace=120 s)
expect "a stage-out poll finds the server down longer than ServerDownGrace, and waits" \
	wait_for 60 down_longer_than 10 stage-out "$JO"
sh "$E2E/cluster.sh" start-conduit
faults '{}'
expect "stage-out outage longer than ServerDownGrace: the job COMPLETES" wait_for 90 state_is "$JO" COMPLETED
expect "... with its output" file_is "/data/out/ooo-$JO.txt" "result $JO"
expect "... and no failure reason" sh -c "! chroot $R scontrol show job $JO | grep -q 'slurm_bb_'"
expect "... and no StateDir file left" wait_for 20 no_state_files "$JO"

# ---- scancel --hurry and plain scancel during stage-out -------------------------
write_job slow-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/so-%j.txt /data/out/so-%j.txt
echo "so $SLURM_JOB_ID" > /home/alice/jobs/so-$SLURM_JOB_ID.txt
JOB
# (held in DATA_TRANSFERRING until both are cancelled)
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
JU=$(submit slow-out.sh)
JP=$(submit slow-out.sh)
wait_starts "$JU" 1 60
wait_starts "$JP" 1 60
s0=$(stops)
in_root scancel --hurry "$JU"
in_root scancel "$JP"
expect "scancel --hurry during stage-out aborts the transfer (StopTransfer)" \
	wait_for 30 sh -c "[ \$(grep -c '\"method\": \"StopTransfer\"' $R$SRV/rpc.log) -ge $((s0 + 1)) ]"
ended() { s=$(state_of "$1"); [ "$s" = COMPLETED ] || [ "$s" = CANCELLED ]; }
expect "... the job ends without it" wait_for 60 ended "$JU"
# aborted at the server (ERROR_ABORTED, inactive), it can never copy
aborted_out() { transfers_of "$1" | grep -qx "aborted:0:SLURMTYPE:CONDUIT_POST"; }
never_arrives() { wait_for 30 aborted_out "$1" && gone "/data/out/so-$1.txt"; }
expect "... and its output never arrives (its transfer is aborted)" never_arrives "$JU"
faults '{}'
expect "plain scancel during stage-out lets stage-out finish" wait_for 60 file_is "/data/out/so-$JP.txt" "so $JP"
expect "... nothing of that job was aborted" sh -c "[ \$(grep -c '\"method\": \"StopTransfer\"' $R$SRV/rpc.log) = $((s0 + 1)) ]"
# (the --hurry teardown leaves the mark that stops a late stage hook:
# no_state_files does not count it)
both_gone() { no_state_files "$JU" && no_state_files "$JP"; }
expect "... both jobs end, and leave no StateDir file" wait_for 60 both_gone

# ---- a job cancelled in stage-in: its reason names no wrong line ---------------
write_job cancel-lines.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --job-name=lines
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/cl-%j.txt
true
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 30000}}'
JL=$(submit cancel-lines.sh)
wait_starts "$JL" 1 30
in_root scancel "$JL"
expect "scancel in stage-in: CANCELLED" wait_for 20 state_is "$JL" CANCELLED
# its buffer's teardown done: no hook of the job runs after that
wait_for 30 torn_down "$JL"
expect "... and no reason or comment blames a directive line (it is on line 4)" \
	sh -c "! chroot $R scontrol show job $JL | grep -E 'Reason|StateDesc|SystemComment' | grep -q 'line [0-9]'"
faults '{}'

# ---- cancel in stage-in with every hook of the job killed ---------------------
# As Slurm does when the cancel and the teardown reach slurmscriptd in the
# wrong order: the job's poll and its hurried teardown are SIGKILLed (here
# while each waits on a stalled Query).  The next hook of any job stops
# the transfers (stage_sweep.c), within one PollInterval.
write_job orphan.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/orph1.txt
#CONDUIT_PRE cp /data/in/b.txt /home/alice/jobs/orph2.txt
true
JOB
write_job bystander.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/bystander-%j.txt
true
JOB
still_running() { # still_running JOB STOPS: both transfers run, no StopTransfer since
	[ "$(transfers_of "$1")" = '24:1:SLURMTYPE:CONDUIT_PRE 24:1:SLURMTYPE:CONDUIT_PRE' ] &&
		[ "$(stops)" = "$2" ]
}
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
JK=$(submit orphan.sh)
wait_starts "$JK" 2 30
wait_for 20 still_running "$JK" "$(stops)"
# every Query now hangs: a hook of the job is caught in it, and killed
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}, "stall_ms": {"Query": 60000}}'
s0=$(stops)
in_root scancel "$JK"
killed=0
end=$(( $(date +%s) + 12 ))
while [ "$(date +%s)" -lt "$end" ]; do
	for p in $(hook_pids); do kill -9 "$p" 2>/dev/null && killed=$((killed + 1)); done
	sleep 0.1
done
note "cancel in stage-in: $killed hook process(es) SIGKILLed (the poll, the teardown, any retry)"
expect "cancel in stage-in, hooks killed: the job is cancelled" state_is "$JK" CANCELLED
expect "... its transfers still run, nothing stopped them" still_running "$JK" "$s0"
# the next hook call: another job's (or a teardown Slurm retries)
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
cat > "$R/tmp/stops.py" <<'PY'
# stops.py SRV JOB SINCE: each active transfer of JOB stopped (StopTransfer
# OK) within 1 s of the first RPC any hook sent since SINCE
import json, sys
srv, job, since = sys.argv[1], sys.argv[2], float(sys.argv[3])
st = json.load(open(srv + "/state.json"))
ids = [i for i, t in st.items() if t["comment"].startswith("SLURMJOB:%s," % job) and not t["validationOnly"]]
lines = [json.loads(l) for l in open(srv + "/rpc.log").read().splitlines()]
lines = [r for r in lines if r.get("t0", 0) >= since]
first = min(r["t0"] for r in lines) if lines else None
stopped = {}
for r in lines:
    if r["method"] == "StopTransfer" and r["status"] == "OK":
        for i in r.get("ids", []):
            stopped.setdefault(i, r["t"])
print("first hook RPC at %s, stops %s" % (first, stopped))
sys.exit(0 if first and len(ids) == 2 and all(i in stopped and stopped[i] - first <= 1.0 for i in ids) else 1)
PY
since=$(date +%s.%N)
JY=$(submit bystander.sh)
expect "... the next hook call stops each of its transfers within one PollInterval (1 s)" \
	wait_for 60 in_root /usr/bin/python3 /tmp/stops.py "$SRV" "$JK" "$since"
note "cancel in stage-in: $(in_root /usr/bin/python3 /tmp/stops.py "$SRV" "$JK" "$since")"
faults '{}'
# (the bystander's stage-in goes all the way through once the hold is
# lifted: by then the aborted ones have had every chance to move on)
expect "... the job that made the call completes" wait_for 90 state_is "$JY" COMPLETED
expect "... and none of them reaches FINALIZED (both aborted)" \
	[ "$(transfers_of "$JK")" = 'aborted:0:SLURMTYPE:CONDUIT_PRE aborted:0:SLURMTYPE:CONDUIT_PRE' ]

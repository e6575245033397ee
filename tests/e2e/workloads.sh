# workloads.sh - what real workloads do (sourced by run.sh): job arrays
# with and without % symbols, a Conduit outage during stage-out, scancel
# and scancel --hurry during stage-out, the reason of a job cancelled in
# stage-in.

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
# aborted at the server (state ABORTED, inactive), it can never copy
aborted_out() { transfers_of "$1" | grep -qx "3:0:SLURMTYPE:CONDUIT_POST"; }
never_arrives() { wait_for 30 aborted_out "$1" && gone "/data/out/so-$1.txt"; }
expect "... and its output never arrives (its transfer is ABORTED)" never_arrives "$JU"
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

#!/bin/sh
# run.sh - the end-to-end suite: real Slurm 24.11 (slurmctld, slurmd,
# munge) in a Debian 13 root, conduit_bb.so built there against Lua 5.1,
# and the Conduit test server, all on 127.0.0.1.  Jobs run as alice.
# Prints one line per check and "e2e: N passed, N failed".
set -u
. "$(dirname "$0")/lib.sh"
E2E=$HERE/tests/e2e
pass=0
fail=0
t_start=$(date +%s)
trap 'sh "$E2E/cluster.sh" stop' EXIT
trap 'exit 130' INT TERM

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
expect() { # expect "what" command... : a check
	what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# ---- helpers ----------------------------------------------------------------
submit() { # submit SCRIPT-NAME -> job id (as alice)
	as_user alice sbatch --parsable --chdir=$JOBS "$JOBS/$1" 2>"$R/tmp/sbatch.err"
}
field() { in_root scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"; }
state_is() { [ "$(field "$1" JobState)" = "$2" ]; }
reason_has() { in_root squeue -h -j "$1" -o %r 2>/dev/null | grep -qF -- "$2"; }
faults() { printf '%s\n' "$1" > "$R$SRV/faults.json"; }
starts_for() { grep '"method": "StartTransfer"' "$R$SRV/rpc.log" | grep -c "SLURMJOB:$1,"; }
stops() { grep -c '"method": "StopTransfer"' "$R$SRV/rpc.log"; }
rpc_has() { grep -q "$1" "$R$SRV/rpc.log"; }
transfers_of() { # JSON states of a job's transfers from the server's state
	in_root /usr/bin/python3 -c "
import json,sys
st=json.load(open('$SRV/state.json'))
print(' '.join(sorted('%s:%s:%s' % (t['state'], int(t['active']), t['comment'].split(',')[-2]) for t in st.values() if t['comment'].startswith('SLURMJOB:$1,') and not t['validationOnly'])))"
}
none_active() { ! transfers_of "$1" | grep -q ':1:'; }
file_is() { [ -f "$R$1" ] && [ "$(cat "$R$1")" = "$2" ]; }
owned_by_alice() { [ "$(stat -c %u "$R$1")" = 2001 ]; }
gone() { [ ! -e "$R$1" ]; }
write_job() { # write_job NAME < script
	cat > "$R$JOBS/$1"
	chown 2001:2001 "$R$JOBS/$1"
}

# ---- set up a clean cluster -------------------------------------------------
sh "$E2E/setup.sh" || { echo "e2e: setup failed"; echo "e2e: 0 passed, 1 failed"; exit 1; }
sh "$E2E/cluster.sh" stop
rm -rf "$R/var/spool/slurmctld/"* "$R/var/spool/slurmd/"* "$R/var/spool/conduit_bb" \
	"$R$SRV/"*.json "$R$SRV/rpc.log" "$R/var/log/slurm/"*.log "$R$JOBS" "$R/data/"* "$R/scratch/"*
mkdir -p "$R$JOBS/multi" "$R/data/in/set/sub" "$R/data/mv" "$R/data/out"
echo alpha > "$R/data/in/a.txt"
echo bravo > "$R/data/in/b.txt"
echo charlie > "$R/data/in/set/sub/c.txt"
echo spaced > "$R/data/in/with space.txt"
echo mike > "$R/data/mv/m.txt"
chmod -R a+rX "$R/data/in"
chown -R 2001:2001 "$R$JOBS" "$R/data/mv" "$R/data/out"
t0=$(date +%s)
expect "cluster starts: munged, Conduit test server, slurmctld, slurmd; node idle" \
	sh "$E2E/cluster.sh" start
echo "# setup took $((t0 - t_start)) s, cluster start $(( $(date +%s) - t0 )) s"

# ---- 1. stage-in and stage-out of files and directories ---------------------
write_job stage.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/home/alice/jobs/stage-%j.out
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/a-%j.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/set-%j
#CONDUIT_PRE cp /data/in/a.txt /data/in/b.txt /home/alice/jobs/multi/
#CONDUIT_PRE cp '/data/in/with space.txt' "/home/alice/jobs/with space-%j.txt"
#CONDUIT_PRE mv /data/mv/m.txt /home/alice/jobs/m-%j.txt
#CONDUIT_POST cp -r /home/alice/jobs/results-%j /data/out/results-%j
#CONDUIT_POST mv /home/alice/jobs/summary-%j.txt /data/out/summary-%j.txt
j=$SLURM_JOB_ID
cd /home/alice/jobs
if [ "$(cat a-$j.txt set-$j/sub/c.txt multi/b.txt "with space-$j.txt" m-$j.txt)" = \
     "$(printf 'alpha\ncharlie\nbravo\nspaced\nmike')" ]; then echo "saw-inputs: yes"; fi
mkdir -p results-$j && echo "result of $j" > results-$j/r.txt
echo "summary of $j" > summary-$j.txt
env | grep '^CONDUIT_BB_' | sort
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 1500}}'
J=$(submit stage.sh)
expect "sbatch accepts a job with 5 stage-in and 2 stage-out directives" [ -n "$J" ]
expect "squeue shows BurstBufferStageIn while staging in" wait_for 20 reason_has "$J" BurstBufferStageIn
expect "scontrol shows BurstBufferState=staging-in" wait_for 10 sh -c "[ \"\$(chroot $R scontrol show job $J | grep -o 'BurstBufferState=[a-z-]*')\" = BurstBufferState=staging-in ]"
expect "the job runs only after stage-in" wait_for 60 sh -c "chroot $R scontrol show job -o $J | grep -qE 'JobState=(RUNNING|COMPLETING|STAGE_OUT|COMPLETED)'"
expect "the job saw every staged input" wait_for 30 grep -q 'saw-inputs: yes' "$R$JOBS/stage-$J.out"
expect "squeue shows stage-out in progress" wait_for 30 reason_has "$J" "Stage-out in progress"
expect "while staging out, the moved summary is not at its destination yet" gone /data/out/summary-$J.txt
expect "the job is COMPLETED after stage-out" wait_for 60 state_is "$J" COMPLETED
expect "stage-out finished before COMPLETED: outputs are in place" \
	file_is /data/out/summary-$J.txt "summary of $J"
expect "cp of a file, %j in the destination" file_is "$JOBS/a-$J.txt" alpha
expect "cp -r of a directory" file_is "$JOBS/set-$J/sub/c.txt" charlie
expect "cp of two sources into a directory" file_is "$JOBS/multi/b.txt" bravo
expect "quoted paths with spaces" file_is "$JOBS/with space-$J.txt" spaced
expect "mv moved (the source is gone)" sh -c "[ -f '$R$JOBS/m-$J.txt' ] && [ ! -e '$R/data/mv/m.txt' ]"
expect "stage-out cp -r and mv landed" sh -c "[ -f '$R/data/out/results-$J/r.txt' ] && [ ! -e '$R$JOBS/summary-$J.txt' ]"
expect "files belong to the job's user" owned_by_alice "/data/out/results-$J/r.txt"
expect "each directive was started exactly once (server RPC log)" [ "$(starts_for "$J")" = 7 ]
expect "the job environment has CONDUIT_BB_STAGE_IN_COUNT=5" grep -qx 'CONDUIT_BB_STAGE_IN_COUNT=5' "$R$JOBS/stage-$J.out"
expect "the job environment has CONDUIT_BB_KEY" grep -qx "CONDUIT_BB_KEY=SLURMJOB:$J,CLUSTER:conduit,RESTART:0," "$R$JOBS/stage-$J.out"
expect "CONDUIT_BB_STAGE_OUT lists the stage-out directives as JSON" \
	grep -q "^CONDUIT_BB_STAGE_OUT=\[{\"line\":8,\"action\":\"cp\",\"recursive\":true" "$R$JOBS/stage-$J.out"
faults '{}'

# ---- 2. bbstat: scoping and JSON --------------------------------------------
bbstat() { # bbstat USER args...
	u=$1
	shift
	if [ "$u" = root ]; then in_root scontrol show bbstat "$@"; else as_user "$u" scontrol show bbstat "$@"; fi
}
expect "bbstat as the job's user: a row per directive, all FINALIZED" \
	sh -c "[ \"\$(chroot --userspec=alice:alice $R scontrol show bbstat conduit $J | grep -c TRANSFER_FINALIZED)\" = 7 ]"
expect "bbstat as another user shows nothing" \
	sh -c "chroot --userspec=bob:bob $R scontrol show bbstat conduit $J | grep -qx 'No Conduit transfers found for Slurm job $J'"
expect "bbstat as root sees the job's transfers" \
	sh -c "chroot $R scontrol show bbstat conduit $J | grep -q '^in   7 '"
json_ok() { as_user alice scontrol show bbstat conduit "$J" json | grep -qF "{\"job_id\":$J,\"restart\":0,\"transfers\":["; }
expect "bbstat ... json for tools" json_ok
expect "bbstat with bad arguments prints usage" \
	sh -c "chroot $R scontrol show bbstat conduit | grep -q '^usage: scontrol show bbstat conduit JOBID'"

# ---- 3. a bad directive is refused by sbatch, with the same message as check -
write_job bad.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/ok.txt
#CONDUIT_PRE cp --user=root /data/in/b.txt /home/alice/jobs/b.txt
true
JOB
msg="line 4: #CONDUIT_PRE: option '--user=root' is not allowed: the job's user comes from Slurm"
expect "sbatch refuses a bad directive" sh -c "! chroot --userspec=alice:alice $R env HOME=/home/alice sbatch --chdir=$JOBS $JOBS/bad.sh 2>$R/tmp/bad.err"
expect "sbatch prints the one-line reason" grep -qxF "sbatch: error: burst_buffer/lua: $msg" "$R/tmp/bad.err"
expect "conduit-bb check prints the same message" \
	sh -c "chroot --userspec=alice:alice $R /usr/local/bin/conduit-bb check $JOBS/bad.sh | grep -qF \"$msg\""

# ---- 4. failures are held with a reason naming the line ----------------------
write_job missing.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/nope.txt /home/alice/jobs/nope.txt
true
JOB
J2=$(submit missing.sh)
expect "a missing source holds the job with the line and Conduit's error" \
	wait_for 40 reason_has "$J2" "slurm_bb_test_data_in: line 3: stage-in cp failed: ERROR_VALIDATION: failed to get source[/data/in/nope.txt]"
expect "the held job has priority 0" sh -c "[ \"\$(chroot $R squeue -h -j $J2 -o %Q)\" = 0 ]"
expect "SystemComment records the failure" \
	sh -c "chroot $R scontrol show job $J2 | grep -F 'SystemComment=' | grep -qF 'stage-in cp failed: ERROR_VALIDATION'"
in_root scancel "$J2"
write_job badout.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/never-written.txt /data/out/never.txt
true
JOB
J3=$(submit badout.sh)
expect "a failed stage-out is reported on the job" \
	wait_for 60 sh -c "chroot $R scontrol show job -o $J3 | grep -q 'slurm_bb_test_data_out:_line_3:_stage-out_cp_failed:_ERROR_VALIDATION'"

# ---- 5. scancel during stage-in aborts the transfers -------------------------
write_job slow.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/slow1.txt
#CONDUIT_PRE cp /data/in/b.txt /home/alice/jobs/slow2.txt
true
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 60000}}'
s0=$(stops)
J4=$(submit slow.sh)
wait_for 30 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c SLURMJOB:$J4,) = 2 ]"
wait_for 20 sh -c "grep -q TRANSFER_DATA_TRANSFERRING <<EOT
\$(chroot $R scontrol show bbstat conduit $J4)
EOT" || true
in_root scancel "$J4"
expect "scancel: the job is cancelled" wait_for 20 state_is "$J4" CANCELLED
expect "scancel during stage-in aborts the transfers (StopTransfer)" wait_for 30 sh -c "[ \$(grep -c '\"method\": \"StopTransfer\"' $R$SRV/rpc.log) -ge $((s0 + 2)) ]"
expect "no transfer of the cancelled job is left active at the server" wait_for 15 none_active "$J4"
faults '{}'

# ---- 6. slurmctld restarts during stage-in and stage-out ---------------------
write_job restart-in.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/rin-%j-1.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/rin-%j-set
true
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 4000}}'
s0=$(stops)
J5=$(submit restart-in.sh)
wait_for 30 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c SLURMJOB:$J5,) = 2 ]"
sh "$E2E/cluster.sh" restart-slurmctld
faults '{}'
expect "slurmctld restart during stage-in: the job still completes" wait_for 150 state_is "$J5" COMPLETED
expect "... each stage-in directive transferred exactly once" [ "$(starts_for "$J5")" = 2 ]
expect "... and nothing was aborted" [ "$(stops)" = "$s0" ]
expect "... and the data is there" file_is "$JOBS/rin-$J5-set/sub/c.txt" charlie

write_job restart-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/rout-%j.txt /data/out/rout-%j.txt
echo "out of $SLURM_JOB_ID" > /home/alice/jobs/rout-$SLURM_JOB_ID.txt
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 4000}}'
J6=$(submit restart-out.sh)
expect "sbatch accepts the stage-out job" [ -n "$J6" ]
wait_for 60 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c SLURMJOB:$J6,) = 1 ]"
sh "$E2E/cluster.sh" restart-slurmctld
faults '{}'
expect "slurmctld restart during stage-out: the job still completes" wait_for 150 state_is "$J6" COMPLETED
expect "... the stage-out directive transferred exactly once" [ "$(starts_for "$J6")" = 1 ]
expect "... and its output landed" file_is "/data/out/rout-$J6.txt" "out of $J6"

# ---- 7. requeue: staged again under the new restart count --------------------
write_job requeue.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/rq-%j.txt
sleep 4
JOB
J7=$(submit requeue.sh)
expect "requeue: the job runs" wait_for 60 state_is "$J7" RUNNING
in_root scontrol requeue "$J7"
# Slurm holds a requeued job back for about two minutes; skip that wait
wait_for 20 state_is "$J7" PENDING
in_root scontrol update JobId="$J7" StartTime=now
expect "requeue: stage-in runs again under RESTART:1" wait_for 120 rpc_has "SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE"
expect "requeue: the job completes" wait_for 120 state_is "$J7" COMPLETED
expect "requeue: one transfer per attempt" [ "$(starts_for "$J7")" = 2 ]

# ---- 8. the Conduit server goes down during stage-in -------------------------
write_job down.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/down-%j.txt
true
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 1000}}'
J8=$(submit down.sh)
wait_for 30 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c SLURMJOB:$J8,) = 1 ]"
sh "$E2E/cluster.sh" stop-conduit
sleep 3
sh "$E2E/cluster.sh" start-conduit
faults '{}'
expect "server down for less than ServerDownGrace: the job completes" wait_for 60 state_is "$J8" COMPLETED

J9=$(submit down.sh)
wait_for 30 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c SLURMJOB:$J9,) = 1 ]"
sh "$E2E/cluster.sh" stop-conduit
expect "server down longer than ServerDownGrace: held with a clear reason" \
	wait_for 40 reason_has "$J9" "conduit: server unreachable for"
sh "$E2E/cluster.sh" start-conduit
in_root scancel "$J9"

echo "# e2e took $(( $(date +%s) - t_start )) s"
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

# restarts.sh - slurmctld restarts during stage-in and stage-out,
# requeues (of a running job, after a completed stage-out, during one:
# each destination as a job that ran once leaves it), and the Conduit
# server going down during stage-in (sourced by run.sh).

# ---- 6. one slurmctld restart during a stage-in and a stage-out --------------
# The stage-in job's name looks like scontrol output: nothing may read it
# as the job's state (teardown asks Slurm with hurry after the restart).
write_job restart-in.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/rin-%j-1.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/rin-%j-set/
true
JOB
write_job restart-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/rout-%j.txt /data/out/rout-%j.txt
echo "out of $SLURM_JOB_ID" > /home/alice/jobs/rout-$SLURM_JOB_ID.txt
JOB
# (both held in DATA_TRANSFERRING until slurmctld has restarted)
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
s0=$(stops)
J6=$(submit restart-out.sh)
expect "sbatch accepts the stage-out job" [ -n "$J6" ]
J5=$(submit restart-in.sh --job-name='x JobState=COMPLETED Invalid job id')
wait_starts "$J6" 1 60
wait_starts "$J5" 2 30
sh "$E2E/cluster.sh" restart-slurmctld
faults '{}'
# A job found in stage-in by a restarted slurmctld has its buffer torn
# down and is held back 60 s "for the teardown" (a fixed wait of Slurm's):
# once the teardown is over, let it go at once, as for a requeue below.
wait_for 60 torn_down "$J5" && in_root scontrol update JobId="$J5" StartTime=now
expect "slurmctld restart during stage-in: the job (named 'x JobState=COMPLETED Invalid job id') completes" \
	wait_for 150 state_is "$J5" COMPLETED
expect "... each stage-in directive transferred exactly once" [ "$(starts_for "$J5")" = 2 ]
expect "... and nothing was aborted" [ "$(stops)" = "$s0" ]
expect "... and the data is there" file_is "$JOBS/rin-$J5-set/set/sub/c.txt" charlie
expect "slurmctld restart during stage-out: the job still completes" wait_for 150 state_is "$J6" COMPLETED
expect "... the stage-out directive transferred exactly once" [ "$(starts_for "$J6")" = 1 ]
expect "... and its output landed" file_is "/data/out/rout-$J6.txt" "out of $J6"

# ---- 6b. a restart that kills data_out: the stage-out is finished ------------
# slurmctld kills the burst-buffer scripts still running as it stops.  Held
# in its StartTransfers (the server's gate) when the restart comes, the
# job's data_out dies with them; what Slurm does next is its own (it may
# run the stage-out again, or drop it: docs/admin.md, "Restarting
# slurmctld").  Either way the outputs must arrive, each directive started
# once: a dropped stage-out is finished by its teardown or the next hook's
# sweep from the plan data_out saved first (src/bb/engine/lost.c).
write_job restart-dout.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/rdo-%j-1.txt /data/out/rdo-%j-1.txt
#CONDUIT_POST cp /home/alice/jobs/rdo-%j-2.txt /data/out/rdo-%j-2.txt
for i in 1 2; do echo "out $i of $SLURM_JOB_ID" > /home/alice/jobs/rdo-$SLURM_JOB_ID-$i.txt; done
JOB
JO=$(submit restart-dout.sh --hold)
expect "sbatch accepts a job whose data_out a restart will kill" [ -n "$JO" ]
rm -f "$R$SRV/gate-$JO"
faults '{"gate": [{"method": "StartTransfer", "comment": "SLURMJOB:'"$JO"',.*CONDUIT_POST", "file": "'"$SRV/gate-$JO"'", "count": 2}]}'
# (a budget the restart comes well within: the hook is killed, not timed out)
sed -i 's/^RequestTimeout=.*/RequestTimeout=120/' "$R/etc/slurm/conduit_bb.conf"
in_root scontrol release "$JO"
gated() { rpcs | grep '"status": "gated"' | grep -q "SLURMJOB:$1,"; }
expect "... its data_out is held in its first StartTransfer" wait_for 120 gated "$JO"
sh "$E2E/cluster.sh" restart-slurmctld
killed_dout() { grep -q "slurm_bb_data_out.*JobId=$JO\|JobId=$JO.*slurm_bb_data_out\|jobid=$JO found running" \
	"$R/var/log/slurm/slurmctld.log"; }
killed_dout && note "slurmctld's log: data_out of $JO was running at the restart: $(grep -E "JobId=$JO|jobid=$JO" "$R/var/log/slurm/slurmctld.log" | grep -i 'data_out\|found running' | tail -3 | tr '\n' '|')"
sed -i 's/^RequestTimeout=.*/RequestTimeout=5/' "$R/etc/slurm/conduit_bb.conf"
touch "$R$SRV/gate-$JO" # the held starts go on: the transfers exist
faults '{}'
done_ok() { # both outputs in place, as the job wrote them
	[ "$(cat "$R/data/out/rdo-$JO-1.txt" 2>/dev/null)" = "out 1 of $JO" ] &&
		[ "$(cat "$R/data/out/rdo-$JO-2.txt" 2>/dev/null)" = "out 2 of $JO" ]
}
over_not_staging() { # Slurm is done with the job: ended, not staging out
	st=$(state_of "$JO")
	case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL) return 0 ;; esac
	return 1
}
settled_out() { done_ok || over_not_staging; }
wait_for 150 settled_out || true
if ! done_ok; then
	# Slurm dropped the stage-out: its teardown or the next hook's sweep
	# finishes it (a job with a stage-in of its own: its data_in sweeps)
	note "job $JO is $(state_of "$JO") without its outputs: Slurm dropped its stage-out"
	NUDGE=$(submit restart-in.sh)
	wait_for 150 state_is "$NUDGE" COMPLETED
fi
expect "restart killing data_out: the job's outputs arrive" wait_for 120 done_ok
expect "... each stage-out directive started exactly once" \
	[ "$(rpcs | grep '"method": "StartTransfer"' | grep -v '"status": "gated"' | grep -c "SLURMJOB:$JO,.*CONDUIT_POST")" = 2 ]
records_gone() { ! ls "$R/var/spool/conduit_bb" | grep -qE "^conduit\.$JO\.(started|outplan)\$"; }
expect "... and its StateDir records are gone once it ended" wait_for 150 records_gone
note "job $JO ended $(state_of "$JO"); slurmctld.log on it: $(grep -E "job $JO: (sweep|teardown)" "$R/var/log/slurm/slurmctld.log" | tail -3 | tr '\n' '|')"

# ---- 6c. slurmscriptd gone: the hooks Slurm could not run ------------------
# With slurmscriptd dead (25.11 stops it first when told to stop and goes
# on taking job ends for up to a minute; or a slurmscriptd crash), every
# hook slurmctld asks for fails at once, "response=(null)", and each
# teardown after it: a job that ends gets no stage-out hook at all (Slurm
# removes its buffer and ends it, or keeps it in STAGE_OUT), and a failed
# stage-in poll holds its job.  After the restart, `conduit-bb status`
# lists both and `conduit-bb recover`, run as an admin would, releases
# the held one and builds the other's stage-out from Slurm's record and
# script: both complete with their data, each directive started once.
write_job nohook-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/nh-%j.txt /data/out/nh-%j.txt
#CONDUIT_POST --when=failure cp /home/alice/jobs/nh-%j.txt /data/out/nh-%j-failed.txt
echo "out of $SLURM_JOB_ID" > /home/alice/jobs/nh-$SLURM_JOB_ID.txt
while [ ! -e /home/alice/jobs/nh-$SLURM_JOB_ID.go ]; do sleep 0.2; done
JOB
write_job nohook-in.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/nhi-%j.txt
true
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}' # (the stage-in held)
NA=$(submit nohook-out.sh)
NB=$(submit nohook-in.sh)
expect "slurmscriptd gone: sbatch accepts both jobs" [ -n "$NA" ] && [ -n "$NB" ]
wait_for 60 state_is "$NA" RUNNING
wait_starts "$NB" 1 60
scriptd() { # slurmscriptd: slurmctld's child
	c=$(cat "$R/run/slurmctld.pid" 2>/dev/null)
	for k in $(cat /proc/"${c:-none}"/task/*/children 2>/dev/null); do
		[ "$(cat "/proc/$k/comm" 2>/dev/null)" = slurmscriptd ] && echo "$k"
	done
}
sd_pid=$(scriptd)
expect "... slurmscriptd found" [ -n "$sd_pid" ]
# killed between two of the stage-in job's polls: slurmctld waits for
# the answer to a poll in flight when slurmscriptd dies for ever (a
# condition wait with no timeout: slurmscriptd.c, _wait_for_script_resp);
# one asked for after fails at once, "(null)", and holds the job
idle() { [ -z "$(cat /proc/$sd_pid/task/*/children 2>/dev/null)" ]; }
wait_for 30 idle
kill -9 $sd_pid 2>/dev/null
touch "$R/home/alice/jobs/nh-$NA.go"
no_hook_out() { st=$(state_of "$NA"); [ -n "$st" ] && [ "$st" != RUNNING ] && [ "$st" != COMPLETING ]; }
expect "... the job that ends leaves RUNNING with no stage-out hook run" wait_for 90 no_hook_out
held_b() { chroot "$R" squeue -h -j "$NB" -o %Q 2>/dev/null | grep -qx 0; }
unrun_b=
if wait_for 60 held_b; then
	unrun_b=1
	expect "... the stage-in job is held, its poll \"failed ... response=(null)\"" \
		grep -q "slurm_bb_test_data_in for JobId=$NB failed, status=-1, response=(null)" \
		"$R/var/log/slurm/slurmctld.log"
else
	note "slurmscriptd gone: job $NB not held: its poll was in flight at the kill (slurmctld waits for it until the restart)"
fi
# (both teardowns failing too: Slurm gives up on the buffers)
wait_for 60 sh -c "grep -q 'JobId=$NA failed 2 times' $R/var/log/slurm/slurmctld.log" || true
note "slurmscriptd gone: job $NA is $(state_of "$NA") ($(chroot "$R" squeue -h -t all -j "$NA" -o %r)), job $NB $(state_of "$NB") ($(chroot "$R" squeue -h -t all -j "$NB" -o %r))"
sh "$E2E/cluster.sh" restart-slurmctld
faults '{}'
in_root conduit-bb status --json > "$R/tmp/nohook-status.json" 2>&1
kinds=$(/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%d:%s" % (j["job"], j["kind"]) for j in d["lost_by_slurm"] or []))' "$R/tmp/nohook-status.json" 2>&1)
note "slurmscriptd gone: conduit-bb status lists $kinds"
expect "... conduit-bb status lists the ended job ($kinds)" sh -c \
	"echo ' $kinds ' | grep -q ' $NA:\(unstaged\|stage-out\) '"
[ -z "$unrun_b" ] ||
	expect "... and the held one ($kinds)" sh -c "echo ' $kinds ' | grep -q ' $NB:held '"
admin_done() {
	in_root conduit-bb recover > "$R/tmp/nohook-recover" 2>&1
	cat "$R/tmp/nohook-recover" >> "$R/tmp/nohook-recover.all"
	file_is "/data/out/nh-$NA.txt" "out of $NA" && state_is "$NB" COMPLETED
}
expect "... conduit-bb recover: both complete, with their data" wait_for 150 admin_done
note "slurmscriptd gone: recover said: $(grep -E "job ($NA|$NB):" "$R/tmp/nohook-recover.all" | sort -u | head -6 | tr '\n' '|')"
expect "... the held job's stage-in arrived" file_is "$JOBS/nhi-$NB.txt" alpha
expect "... the ended job's --when=failure line skipped (it exited 0)" gone "/data/out/nh-$NA-failed.txt"
expect "... each directive started once" sh -c \
	"[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c 'SLURMJOB:$NA,.*CONDUIT_POST') = 1 ] &&
	 [ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c 'SLURMJOB:$NB,.*CONDUIT_PRE') = 1 ]"
in_root conduit-bb recover > "$R/tmp/nohook-recover" 2>&1
expect "... and recover, run again, builds nothing" sh -c \
	"! grep -q 'plan built' $R/tmp/nohook-recover && [ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c 'SLURMJOB:$NA,.*CONDUIT_POST') = 1 ]"

# ---- 7. requeue: inputs are not staged twice; every attempt stages out ------
write_job requeue.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/rq-%j-set/
#CONDUIT_PRE cp --every-attempt /data/in/a.txt /home/alice/jobs/rq-%j-every.txt
#CONDUIT_POST cp /home/alice/jobs/rq-%j-out.txt /data/out/rq-%j-out.txt
echo "attempt ${SLURM_RESTART_COUNT:-0}" > /home/alice/jobs/rq-$SLURM_JOB_ID-out.txt
ls /home/alice/jobs/rq-$SLURM_JOB_ID-set/set > /home/alice/jobs/rq-$SLURM_JOB_ID-ls.txt
sleep 4
JOB
J7=$(submit requeue.sh)
expect "requeue: the job runs" wait_for 60 state_is "$J7" RUNNING
# requeued once the first attempt has written what it stages out
wait_for 30 file_is "$JOBS/rq-$J7-ls.txt" sub
in_root scontrol requeue "$J7"
# Slurm holds a requeued job back for about two minutes; skip that wait
wait_for 20 state_is "$J7" PENDING
in_root scontrol update JobId="$J7" StartTime=now
expect "requeue: the job completes" wait_for 150 state_is "$J7" COMPLETED
expect "requeue: a finished stage-in is not repeated (cp -r not nested)" \
	[ "$(starts_of "SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:1,")" = 0 ]
expect "requeue: ... the job saw the tree as staged, not nested in itself" \
	file_is "$JOBS/rq-$J7-ls.txt" "sub"
expect "requeue: --every-attempt stages in again" \
	[ "$(starts_of "SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,")" = 1 ]
# aside_is PATH K TEXT [IN]: attempt K's output at PATH went to one aside,
# which holds TEXT (at IN inside it, for a tree)
aside_is() {
	a=$(aside_of "$1" "$2") && file_is "$a${4:-}" "$3"
}
expect "requeue: ... after attempt 0's copy was moved aside" aside_is "$JOBS/rq-$J7-every.txt" 0 alpha
expect "requeue: ... once" sh -c \
	"[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c 'SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:2,SLURMTYPE:CONDUIT_ASIDE,') = 1 ]"
expect "requeue: the interrupted attempt staged out once, as attempt 0" \
	[ "$(starts_of "SLURMJOB:$J7,CLUSTER:conduit,RESTART:0,SLURMINDEX:3,SLURMTYPE:CONDUIT_POST,")" = 1 ]
expect "requeue: the final attempt staged out once, as attempt 1" \
	[ "$(starts_of "SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:3,SLURMTYPE:CONDUIT_POST,")" = 1 ]
expect "requeue: the final attempt's outputs are what arrived" \
	file_is "/data/out/rq-$J7-out.txt" "attempt 1"
expect "requeue: ... the interrupted attempt's moved aside once, whole" aside_is /data/out/rq-$J7-out.txt 0 'attempt 0'
expect "requeue: ... by one move-aside" sh -c \
	"[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c 'SLURMJOB:$J7,CLUSTER:conduit,RESTART:1,SLURMINDEX:3,SLURMTYPE:CONDUIT_ASIDE,') = 1 ]"
expect "requeue: bbstat shows each attempt's rows" sh -c \
	"chroot $R scontrol show bbstat conduit $J7 | grep -qE '^out +6 +0 +TRANSFER_FINALIZED' &&
	 chroot $R scontrol show bbstat conduit $J7 | grep -qE '^out +6 +1 +TRANSFER_FINALIZED'"
expect "requeue: no failure reason on the completed job" sh -c "! chroot $R squeue -h -t all -j $J7 -o %r | grep -q slurm_bb"

# ---- 7b. requeue after a completed stage-out: each destination as one run leaves
# cp, cp -r, mv, mv -r of files and trees: attempt 0 completes and stages
# out, is requeued, attempt 1 completes and stages out.
mkdir -p "$R/data/rqo"
chown 2001:2001 "$R/data/rqo"
write_job requeue-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_POST cp -r /home/alice/jobs/rqo-%j/tree-%j /data/rqo/tree-%j
#CONDUIT_POST mv -r /home/alice/jobs/rqo-%j/mtree-%j /data/rqo/mtree-%j
#CONDUIT_POST cp /home/alice/jobs/rqo-%j/res.txt /data/rqo/res-%j.txt
#CONDUIT_POST mv /home/alice/jobs/rqo-%j/log.txt /data/rqo/log-%j.txt
k=${SLURM_RESTART_COUNT:-0}
d=/home/alice/jobs/rqo-$SLURM_JOB_ID
j=$SLURM_JOB_ID
mkdir -p $d/tree-$j/sub $d/mtree-$j/sub
echo "attempt $k" > $d/tree-$j/sub/result.txt
echo "attempt $k" > $d/mtree-$j/sub/result.txt
echo "attempt $k" > $d/res.txt
echo "attempt $k" > $d/log.txt
JOB
JQ=$(submit requeue-out.sh)
expect "requeue after stage-out: attempt 0 completes and stages out" wait_for 90 state_is "$JQ" COMPLETED
in_root scontrol requeue "$JQ"
wait_for 20 state_is "$JQ" PENDING
in_root scontrol update JobId="$JQ" StartTime=now
expect "... requeued, attempt 1 completes" wait_for 150 sh -c \
	"[ \"\$(chroot $R squeue -h -t all -j $JQ -o '%T')\" = COMPLETED ] && [ -f $R/data/rqo/log-$JQ.txt ] && grep -qx 'attempt 1' $R/data/rqo/log-$JQ.txt"
for w in tree mtree; do
	expect "... $w (cp -r / mv -r): the final attempt's tree at the destination, not nested" sh -c \
		"[ \"\$(cat $R/data/rqo/$w-$JQ/sub/result.txt)\" = 'attempt 1' ] && [ ! -e $R/data/rqo/$w-$JQ/$w ]"
	# (Conduit's rsync mover puts a tree moved to an absent name under
	# its own name in it: the aside holds $w-$JQ/)
	expect "... $w: attempt 0's tree moved aside, whole (under its own name in a fresh aside)" \
		aside_is /data/rqo/$w-$JQ 0 'attempt 0' /$w-$JQ/sub/result.txt
done
for w in res log; do
	expect "... $w (cp / mv of a file): the final attempt's file" file_is /data/rqo/$w-$JQ.txt 'attempt 1'
	expect "... $w: attempt 0's file moved aside" aside_is /data/rqo/$w-$JQ.txt 0 'attempt 0'
done
once_each() { # 4 directives x 2 attempts, 4 move-asides
	[ "$(starts_of "SLURMJOB:$1,.*SLURMTYPE:CONDUIT_POST,")" = 8 ] &&
		[ "$(starts_of "SLURMJOB:$1,.*SLURMTYPE:CONDUIT_ASIDE,")" = 4 ]
}
expect "... each directive staged out once per attempt, moved aside once" once_each "$JQ"
expect "... owned by alice" owned_by_alice "$(aside_of /data/rqo/tree-$JQ 0)/tree-$JQ/sub/result.txt"

# ---- 7c. requeue during a stage-out ------------------------------------------
# attempt 0 ends and its stage-out is under way (its copy done, the
# transfer held before it is over) when the job is requeued; the final
# attempt's stage-out waits for it, then moves its tree aside.
write_job requeue-during.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_POST cp -r /home/alice/jobs/rqd-%j/dtree-%j /data/rqo/dtree-%j
k=${SLURM_RESTART_COUNT:-0}
d=/home/alice/jobs/rqd-$SLURM_JOB_ID
mkdir -p $d/dtree-$SLURM_JOB_ID/sub
echo "attempt $k" > $d/dtree-$SLURM_JOB_ID/sub/result.txt
JOB
faults '{"delay_ms": {"DATA_COMPLETE": 600000}}' # (held until lifted below)
JD=$(submit requeue-during.sh)
wait_for 90 file_is "/data/rqo/dtree-$JD/sub/result.txt" "attempt 0"
note "requeue during stage-out: job $JD is $(state_of "$JD"), its transfers $(transfers_of "$JD")"
rq=$(in_root scontrol requeue "$JD" 2>&1)
note "requeue during stage-out: scontrol requeue says '$rq'; the job is $(state_of "$JD")"
wait_for 30 state_is "$JD" PENDING
in_root scontrol update JobId="$JD" StartTime=now
faults '{}'
expect "requeue during stage-out: attempt 1 completes" wait_for 150 sh -c \
	"[ \"\$(chroot $R squeue -h -t all -j $JD -o '%T')\" = COMPLETED ] && grep -qx 'attempt 1' $R/data/rqo/dtree-$JD/sub/result.txt"
expect "... the final attempt's tree, not nested" gone /data/rqo/dtree-$JD/dtree-$JD
expect "... attempt 0's aside" aside_is /data/rqo/dtree-$JD 0 'attempt 0' /dtree-$JD/sub/result.txt

# ---- 8. the Conduit server goes down during stage-in -------------------------
write_job down.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/down-%j.txt
true
JOB
# (the transfer is held until the server is back: the job is still in
# stage-in through the outage, whatever the load)
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
J8=$(submit down.sh)
wait_starts "$J8" 1 30
sh "$E2E/cluster.sh" stop-conduit
# up again once a poll of the job has found it down (ServerDownGrace=10 s)
expect "server down: the stage-in poll sees it and waits" \
	wait_for 20 grep -q "conduit_bb: job $J8: stage-in: .*(server down for [0-9]* s; waiting up to ServerDownGrace" \
	"$R/var/log/slurm/slurmctld.log"
sh "$E2E/cluster.sh" start-conduit
faults '{}'
expect "server down for less than ServerDownGrace: the job completes" wait_for 60 state_is "$J8" COMPLETED
expect "... and no poll gave up on it" sh -c "! grep -q 'slurm_bb_test_data_in for JobId=$J8 failed' $R/var/log/slurm/slurmctld.log"

faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
J9=$(submit down.sh)
wait_starts "$J9" 1 30
sh "$E2E/cluster.sh" stop-conduit
expect "server down longer than ServerDownGrace: held with a clear reason" \
	wait_for 40 reason_has "$J9" "conduit: server unreachable for"
sh "$E2E/cluster.sh" start-conduit
in_root scancel "$J9"
faults '{}'


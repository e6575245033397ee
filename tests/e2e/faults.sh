# faults.sh - trust under faults on real Slurm (sourced by run.sh): the
# Conduit server restarted with its database wiped during stage-in, and a
# stale StateDir record for the next job id.  (A job whose name looks like
# scontrol output survives a slurmctld restart in restarts.sh.)

# ---- a server that forgot every transfer, during stage-in ------------------
write_job forgot.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/forgot-%j-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/forgot-%j-set/
cat /home/alice/jobs/forgot-$SLURM_JOB_ID-a.txt > /home/alice/jobs/forgot-$SLURM_JOB_ID.out
JOB
faults '{"delay_ms": {"DATA_TRANSFERRING": 30000}}'
JF=$(submit forgot.sh)
wait_starts "$JF" 2 30
sh "$E2E/cluster.sh" wipe-conduit
faults '{}'
expect "server wiped during stage-in: the job stages again and completes" \
	wait_for 60 state_is "$JF" COMPLETED
expect "... each directive started once more, not more (lost after StartVisibleGrace)" \
	[ "$(starts_for "$JF")" = 4 ]
expect "... and the job read its staged input" file_is "$JOBS/forgot-$JF.out" alpha
expect "... slurmctld's log names each lost transfer" sh -c \
	"[ \$(grep -c 'conduit_bb: job $JF: line [34]: stage-in transfer .* never showed up on the Conduit server (StartVisibleGrace=10 s): it is lost' $R/var/log/slurm/slurmctld.log) = 2 ]"

# A mv that had moved its source when the server forgot it: held with a
# reason that says so; the user puts the source back and releases it.
mkdir -p "$R/data/mv2" && echo november > "$R/data/mv2/n.txt"
chown -R 2001:2001 "$R/data/mv2"
write_job forgot-mv.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE mv /data/mv2/n.txt /home/alice/jobs/forgot-mv-%j.txt
true
JOB
faults '{"delay_ms": {"TEARDOWN_COMPLETE": 30000}}'
JM=$(submit forgot-mv.sh)
wait_starts "$JM" 1 30
wait_for 30 gone /data/mv2/n.txt
sh "$E2E/cluster.sh" wipe-conduit
faults '{}'
expect "a lost mv whose source is gone: held, and the reason says why" \
	wait_for 60 hook_reason "$JM" slurm_bb_test_data_in "line 3: stage-in mv failed: ERROR_VALIDATION: failed to get source[/data/mv2/n.txt]"
expect "... naming the lost transfer's effect" \
	reason_has "$JM" "an earlier transfer of this mv was lost by the Conduit server after it started"
echo november > "$R/data/mv2/n.txt" && chown 2001:2001 "$R/data/mv2/n.txt"
in_root scontrol release "$JM"
expect "... released after the source is back: it completes, StateDir untouched" \
	wait_for 60 state_is "$JM" COMPLETED
expect "... and the data moved" sh -c "[ -f $R$JOBS/forgot-mv-$JM.txt ] && [ ! -e $R/data/mv2/n.txt ]"

# ---- a stale StateDir record for the next job id ---------------------------
JH=$(submit forgot.sh --hold)
in_root scancel "$JH"
JN=$((JH + 1))
mkdir -p "$R/var/spool/conduit_bb"
echo "v1 0 1000 0 0 1 1000 S 0f0e0d0c-0000-4000-8000-00000000dead" > \
	"$R/var/spool/conduit_bb/conduit.$JN.started"
write_job stale.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/b.txt /home/alice/jobs/stale-%j.txt
true
JOB
JS=$(submit stale.sh)
expect "the next job id gets the stale record's id" [ "$JS" = "$JN" ]
expect "a stale StateDir record for the next job id: the job still stages" \
	wait_for 60 state_is "$JS" COMPLETED
expect "... its directive started once" [ "$(starts_for "$JS")" = 1 ]
expect "... the stale record is gone" wait_for 20 no_state_files "$JS"

# ---- the server stopped while a stage-out's StartTransfer is in flight -----
# The server records the request and holds its answer (start_then_stall_ms;
# RequestTimeout is raised above the stall meanwhile, so only the stop can
# end the call); it is stopped before it answers (grpcio cancels the call)
# and started again.  The stage carries on: the job COMPLETES, its output
# in place, the directive started once.
write_job cut-out.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST cp /home/alice/jobs/cut-%j.txt /data/out/cut-%j.txt
echo "cut $SLURM_JOB_ID" > /home/alice/jobs/cut-$SLURM_JOB_ID.txt
JOB
sed -i 's/^RequestTimeout=.*/RequestTimeout=15/' "$R/etc/slurm/conduit_bb.conf"
faults '{"start_then_stall_ms": 6000}'
JC=$(submit cut-out.sh)
out_in_flight() { [ -n "$(outs_in_flight "$1")" ]; }
expect "a stage-out StartTransfer in flight: the server has it, the hook waits for the answer" \
	wait_for 60 out_in_flight "$JC"
sh "$E2E/cluster.sh" stop-conduit
expect "... the server is stopped before it answers" still_unsure "$JC" 1
sh "$E2E/cluster.sh" start-conduit
faults '{}'
sed -i 's/^RequestTimeout=.*/RequestTimeout=5/' "$R/etc/slurm/conduit_bb.conf"
expect "server stopped in a stage-out's StartTransfer, then restarted: the job COMPLETES" \
	wait_for 90 state_is "$JC" COMPLETED
expect "... with its output staged out in place" file_is "/data/out/cut-$JC.txt" "cut $JC"
expect "... the directive started once" [ "$(starts_for "$JC")" = 1 ]
expect "... and no failure reason" sh -c "! chroot $R scontrol show job $JC | grep -q 'slurm_bb_'"

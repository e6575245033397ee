# basic.sh - staging as a user sees it (sourced by run.sh): files and
# directories in and out, bbstat, a refused directive, the module missing,
# failures that hold the job with the line, scancel during stage-in; the
# installation (conduit-bb doctor, and the Debian package slurmctld's
# module comes from).

# ---- 1. stage-in and stage-out of files and directories ---------------------
write_job stage.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/home/alice/jobs/stage-%j.out
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/a-%j.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/set-%j/
#CONDUIT_PRE cp /data/in/a.txt /data/in/b.txt /home/alice/jobs/multi/
#CONDUIT_PRE cp '/data/in/with space.txt' "/home/alice/jobs/with space-%j.txt"
#CONDUIT_PRE mv /data/mv/m.txt /home/alice/jobs/m-%j.txt
#CONDUIT_POST cp -r /home/alice/jobs/results-%j /data/out/results-%j
#CONDUIT_POST mv /home/alice/jobs/summary-%j.txt /data/out/summary-%j.txt
j=$SLURM_JOB_ID
cd /home/alice/jobs
if [ "$(cat a-$j.txt set-$j/set/sub/c.txt multi/b.txt "with space-$j.txt" m-$j.txt)" = \
     "$(printf 'alpha\ncharlie\nbravo\nspaced\nmike')" ]; then echo "saw-inputs: yes"; fi
mkdir -p results-$j && echo "result of $j" > results-$j/r.txt
echo "summary of $j" > summary-$j.txt
env | grep '^CONDUIT_BB_' | sort
# it ends when the test says so (go-<job>), so its stage-out is watched
for i in $(seq 1 900); do [ -e go-$j ] && break; sleep 0.2; done
JOB
# Each stage is held (its transfers stay in DATA_TRANSFERRING) until the
# checks have seen it, then let go: none of them can miss its moment.
HOLD='{"delay_ms": {"DATA_TRANSFERRING": 600000}}'
FLOW='{"delay_ms": {"DATA_TRANSFERRING": 500}}'
faults "$HOLD"
J=$(submit stage.sh)
expect "sbatch accepts a job with 5 stage-in and 2 stage-out directives" [ -n "$J" ]
expect "squeue shows BurstBufferStageIn while staging in" wait_for 30 reason_has "$J" BurstBufferStageIn
expect "scontrol shows BurstBufferState=staging-in" wait_for 10 sh -c "[ \"\$(chroot $R scontrol show job $J | grep -o 'BurstBufferState=[a-z-]*')\" = BurstBufferState=staging-in ]"
faults "$FLOW"
expect "the job runs only after stage-in" wait_for 60 sh -c "chroot $R scontrol show job -o $J | grep -qE 'JobState=(RUNNING|COMPLETING|STAGE_OUT|COMPLETED)'"
expect "the job saw every staged input" wait_for 30 grep -q 'saw-inputs: yes' "$R$JOBS/stage-$J.out"
faults "$HOLD"
touch "$R$JOBS/go-$J"
expect "squeue shows stage-out in progress" wait_for 30 reason_has "$J" "Stage-out in progress"
expect "while staging out, the moved summary is not at its destination yet" gone /data/out/summary-$J.txt
faults "$FLOW"
expect "the job is COMPLETED after stage-out" wait_for 60 state_is "$J" COMPLETED
expect "stage-out finished before COMPLETED: outputs are in place" \
	file_is /data/out/summary-$J.txt "summary of $J"
expect "cp of a file, %j in the destination" file_is "$JOBS/a-$J.txt" alpha
expect "cp -r of a directory (into a new one)" file_is "$JOBS/set-$J/set/sub/c.txt" charlie
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
	sh -c "chroot --userspec=alice:alice $R $CBB_CLI check $JOBS/bad.sh | grep -qF \"$msg\""

# ---- 3b. the module missing: Slurm loads burst_buffer.lua for every hook --
# call, so one sbatch while conduit_bb.so is away sees it.  Slurm 25.05 and
# later answer with Lua's error; 24.11 only logs it in slurmctld's log.
wait_for 30 torn_down "$J" || true # no hook of the first job is left to run
# (where this root's install put it: the Debian package's Lua 5.1 path, or
# make install's /usr/local for a Slurm built from source)
so=/usr/local/lib/lua/$LUA/conduit_bb.so
for f in "$R"/usr/lib/*/lua/$LUA/conduit_bb.so "$R$so"; do
	[ -f "$f" ] && { so=${f#"$R"}; break; }
done
mv "$R$so" "$R$so.away"
as_user alice sbatch --chdir=$JOBS "$JOBS/stage.sh" >/dev/null 2>"$R/tmp/nomodule.err"
nomodule_rc=$?
mv "$R$so.away" "$R$so"
expect "without conduit_bb.so, sbatch refuses a job with directives" [ "$nomodule_rc" != 0 ]
if slurm_at_least 25.05; then
	expect "... and shows Lua's error from loading burst_buffer.lua (Slurm 25.05 and later)" \
		grep -qF "sbatch: error: burst_buffer/lua: /etc/slurm/burst_buffer.lua: " "$R/tmp/nomodule.err"
	expect "... which names the missing module" grep -qF "module 'conduit_bb' not found" "$R/tmp/nomodule.err"
else
	expect "... saying only that the request is invalid (Slurm 24.11)" \
		sh -c "grep -qF 'Burst Buffer request invalid' '$R/tmp/nomodule.err' && ! grep -qF 'not found' '$R/tmp/nomodule.err'"
	expect "... while slurmctld's log names the missing module" \
		grep -qF "module 'conduit_bb' not found" "$R/var/log/slurm/slurmctld.log"
fi

# ---- 4. failures are held with a reason naming the line ----------------------
write_job missing.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/nope.txt /home/alice/jobs/nope.txt
true
JOB
J2=$(submit missing.sh)
expect "a missing source holds the job with the line and Conduit's error" \
	wait_for 40 hook_reason "$J2" slurm_bb_test_data_in "line 3: stage-in cp failed: ERROR_VALIDATION: failed to get source[/data/in/nope.txt]"
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
	wait_for 60 hook_reason_ctl "$J3" slurm_bb_test_data_out "line 3: stage-out cp failed: ERROR_VALIDATION"

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
wait_starts "$J4" 2 30
wait_for 20 sh -c "grep -q TRANSFER_DATA_TRANSFERRING <<EOT
\$(chroot $R scontrol show bbstat conduit $J4)
EOT" || true
in_root scancel "$J4"
expect "scancel: the job is cancelled" wait_for 20 state_is "$J4" CANCELLED
expect "scancel during stage-in aborts the transfers (StopTransfer)" wait_for 30 sh -c "[ \$(grep -c '\"method\": \"StopTransfer\"' $R$SRV/rpc.log) -ge $((s0 + 2)) ]"
expect "no transfer of the cancelled job is left active at the server" wait_for 15 none_active "$J4"
only_over_mark() { no_state_files "$1" && state_files "$1" | grep -qx "conduit\.$1\.over"; }
expect "... its StateDir records are gone, the mark that stops a late data_in stays" \
	wait_for 15 only_over_mark "$J4"
faults '{}'


# ---- 6. the installation: conduit-bb doctor, and the Debian package ----------
# doctor as SlurmUser runs the hooks (this root's slurm.conf: root), with the
# Conduit server up: every check ok or warn, none failed
in_root conduit-bb doctor > "$R/tmp/doctor.out" 2>&1
doctor_rc=$?
sed 's/^/#   /' "$R/tmp/doctor.out"
expect "conduit-bb doctor in the root exits 0 with no FAIL line" \
	sh -c "[ $doctor_rc = 0 ] && ! grep -q '^FAIL ' '$R/tmp/doctor.out' && grep -q '^doctor: .* 0 failed\$' '$R/tmp/doctor.out'"
expect "... and it checked the real server, module and Slurm Lua" \
	sh -c "grep -q '^ok    server: 127.0.0.1:$CONDUIT_PORT answered a Query' '$R/tmp/doctor.out' &&
	       grep -q '^ok    module: .* was built for Lua $LUA' '$R/tmp/doctor.out' &&
	       grep -q '^ok    slurm Lua: .* links liblua$LUA' '$R/tmp/doctor.out'"
# The module the running slurmctld maps: conduit_bb.so is linked -z
# nodelete, so once a hook ran inside slurmctld (pools, at its start;
# every job_process) it stays mapped there; a hook process (slurmscriptd's
# child) maps it while it runs.
mapped_module() { # "pid comm path" of the first slurmctld process mapping it
	c=$(cat "$R/run/slurmctld.pid" 2>/dev/null)
	[ -n "$c" ] || return 1
	for p in $c $(cat /proc/"$c"/task/*/children 2>/dev/null); do
		for k in $p $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			m=$(grep -v '(deleted)' "/proc/$k/maps" 2>/dev/null |
				grep -o '/[^ ]*/conduit_bb\.so' | head -1)
			[ -n "$m" ] && { echo "$k $(cat "/proc/$k/comm") ${m#"$R"}"; return 0; }
		done
	done
	return 1
}
m=
end=$(( $(date +%s) + 30 ))
while [ -z "$m" ] && [ "$(date +%s)" -lt "$end" ]; do
	m=$(mapped_module) || { m=; sleep 0.2; }
done
so=${m##* }
note "slurmctld's process ${m% *} maps $so"
expect "slurmctld maps conduit_bb.so" [ -n "$m" ]
if [ -z "$SLURM_SOURCE" ]; then
	expect "dpkg -s conduit-bb: the package is installed" \
		sh -c "chroot $R dpkg -s conduit-bb 2>/dev/null | grep -qx 'Status: install ok installed'"
	expect "... and dpkg -L conduit-bb holds the module slurmctld maps ($so)" \
		sh -c "[ -n '$so' ] && chroot $R dpkg -L conduit-bb | grep -qxF '$so'"
	expect "... no copy of an earlier make install is left in /usr/local" \
		sh -c "! ls $R/usr/local/lib/lua/*/conduit_bb.so $R/usr/local/bin/conduit-bb 2>/dev/null | grep -q ."
	expect "... and conduit-bb is the package's" \
		sh -c "[ \"\$(chroot $R sh -c 'command -v conduit-bb')\" = /usr/bin/conduit-bb ] &&
		       chroot $R dpkg -S /usr/bin/conduit-bb | grep -q '^conduit-bb: '"
fi

# features.sh - what no other burst-buffer plugin offers (sourced by
# run.sh): stage-out decided by how the job really ended (#CONDUIT_POST
# --when=), staging in accounting (AdminComment, AuditLog), sbatch's
# refusal counting every bad directive, one shared stage-in per array.

# AdminComment summaries are off by default; this part turns them on (the
# file is read at every hook call) and the end of the part turns them off.
echo "AdminComment=yes" >> "$R/etc/slurm/conduit_bb.conf"

# ---- conditional stage-out ----------------------------------------------------
mkdir -p "$R/data/when"
chown 2001:2001 "$R/data/when"
write_job when.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST --when=success cp /home/alice/jobs/when-%j.res /data/when/
#CONDUIT_POST cp /home/alice/jobs/when-%j.log /data/when/
#CONDUIT_POST --when=failure cp /home/alice/jobs/when-%j.ckpt /data/when/
for f in res log ckpt; do echo "$f $SLURM_JOB_ID" > /home/alice/jobs/when-$SLURM_JOB_ID.$f; done
exit "${WHEN_EXIT:-0}"
JOB
W0=$(submit when.sh --export=ALL,WHEN_EXIT=0)
W1=$(submit when.sh --export=ALL,WHEN_EXIT=1)
expect "sbatch accepts #CONDUIT_POST --when=success|failure" sh -c "[ -n '$W0' ] && [ -n '$W1' ]"
expect "a job that exits 0 ends COMPLETED" wait_for 90 state_is "$W0" COMPLETED
expect "a job that exits 1 ends FAILED" wait_for 90 state_is "$W1" FAILED
arrived() { # arrived JOB: which of res,log,ckpt reached /data/when
	got=
	for f in res log ckpt; do
		[ -f "$R/data/when/when-$1.$f" ] && got="$got${got:+,}$f"
	done
	echo "$got"
}
arrived_is() { [ "$(arrived "$1")" = "$2" ]; }
expect "exit 0: results and logs staged out, checkpoints not" wait_for 60 arrived_is "$W0" res,log
expect "exit 1: logs and checkpoints staged out, results not" wait_for 60 arrived_is "$W1" log,ckpt
expect "... a skipped directive never reaches the server (2 starts each)" \
	sh -c "[ $(starts_for "$W0") = 2 ] && [ $(starts_for "$W1") = 2 ]"
expect "bbstat shows the skipped row for exit 0 (when=failure, job exit 0)" \
	sh -c "chroot --userspec=alice:alice $R scontrol show bbstat conduit $W0 | grep -qE '^out +5 +0 +SKIPPED \(when=failure, job exit 0\)'"
expect "bbstat shows the skipped row for exit 1 (when=success, job exit 1)" \
	sh -c "chroot --userspec=alice:alice $R scontrol show bbstat conduit $W1 | grep -qE '^out +3 +0 +SKIPPED \(when=success, job exit 1\)'"
expect "... but not to another user" \
	sh -c "! chroot --userspec=bob:bob $R scontrol show bbstat conduit $W1 | grep -q SKIPPED"
expect "after teardown only the .skipped record stays (for bbstat)" \
	wait_for 30 sh -c "[ \"\$(ls $R/var/spool/conduit_bb | grep -E '^conduit\\.$W1\\.')\" = conduit.$W1.skipped ]"
no_hook_reason() { # the job shows, and names no failed hook
	out=$(in_root scontrol show job "$1") && [ -n "$out" ] &&
		! printf '%s\n' "$out" | grep -q 'slurm_bb_'
}
expect "staging in accounting: stage-out summaries in slurmctld's log, the skip counted" \
	grep -qE "conduit_bb: job $W1: conduit attempt 0: out 2 transfers [0-9]+ B [0-9]+ s \(1 skipped\); 0 failed" \
	"$R/var/log/slurm/slurmctld.log"
audit_of() { grep "\"job\":$1," "$R/var/log/slurm/conduit_bb-audit.log"; }
three_lines() { # the job's directive lines (no "record": hook records are apart)
	[ "$(audit_of "$1" | grep -vc '"record":"hook"')" = 3 ] &&
		audit_of "$1" | grep -v '"record":"hook"' | grep -q '"state":"SKIPPED","when":"success"'
}
expect "... and AuditLog one JSON line per directive (3), the skipped one too" three_lines "$W1"
hook_records() { # each of the job's stage hooks left hook records with a duration
	for h in data_in test_data_in data_out test_data_out; do
		audit_of "$1" | grep '"record":"hook"' |
			grep -qE "\"hook\":\"slurm_bb_$h\",.*\"duration_us\":[0-9]+}\$" || return 1
	done
}
expect "... and a hook record, with its duration, for each call of its stage hooks" hook_records "$W1"
# conduit-bb metrics in the root: its hook histogram counts every hook
# record (of a copy of the AuditLog: the hooks go on appending to it)
cp "$R/var/log/slurm/conduit_bb-audit.log" "$R/tmp/audit-copy.log"
sed 's,^AuditLog=.*,AuditLog=/tmp/audit-copy.log,' "$R/etc/slurm/conduit_bb.conf" > "$R/tmp/metrics.conf"
in_root conduit-bb metrics --config /tmp/metrics.conf > "$R/tmp/metrics.prom" 2>"$R/tmp/metrics.err"
metrics_rc=$?
hist_matches() {
	[ "$metrics_rc" = 0 ] || return 1
	for h in data_in test_data_in data_out test_data_out job_teardown; do
		n=$(grep '"record":"hook"' "$R/tmp/audit-copy.log" | grep -c "\"hook\":\"slurm_bb_$h\"")
		grep -qx "conduit_bb_hook_duration_seconds_count{hook=\"slurm_bb_$h\"} $n" "$R/tmp/metrics.prom" ||
			{ log "slurm_bb_$h: $n records, metrics: $(grep "_count{hook=\"slurm_bb_$h\"}" "$R/tmp/metrics.prom")"; return 1; }
	done
	# and there were some: every job of this suite ran these
	! grep -q 'conduit_bb_hook_duration_seconds_count{hook="slurm_bb_test_data_in"} 0$' "$R/tmp/metrics.prom"
}
expect "conduit-bb metrics: the hook latency histogram counts every hook record of the AuditLog" hist_matches
both_clean() { no_hook_reason "$W0" && no_hook_reason "$W1"; }
expect "a skipped stage-out is not a failure: no hook reason on either job" both_clean

# ---- every bad directive at once ----------------------------------------------
write_job bad3.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp --user=root /data/in/a.txt /home/alice/jobs/x.txt
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/fine.txt
#CONDUIT_PRE rsync /data/in/b.txt /home/alice/jobs/
#CONDUIT_PRE --when=success cp /data/in/b.txt /home/alice/jobs/
true
JOB
expect "sbatch refuses a script with three bad directives" \
	sh -c "! chroot --userspec=alice:alice $R env HOME=/home/alice sbatch --chdir=$JOBS $JOBS/bad3.sh 2>$R/tmp/bad3.err"
expect "... naming the first and counting the rest" grep -qxF \
	"sbatch: error: burst_buffer/lua: line 3: #CONDUIT_PRE: option '--user=root' is not allowed: the job's user comes from Slurm (and 2 more: run conduit-bb check)" \
	"$R/tmp/bad3.err"
expect "conduit-bb check lists all three with their lines, and exits 1" \
	sh -c "chroot --userspec=alice:alice $R $CBB_CLI check $JOBS/bad3.sh > $R/tmp/bad3.out; \
	       [ \$? = 1 ] && [ \$(grep -c ': error: line [356]: ' $R/tmp/bad3.out) = 3 ]"

# ---- one shared stage-in per job array ------------------------------------------
mkdir -p "$R$JOBS/sh"
chown 2001:2001 "$R$JOBS/sh"
write_job shared.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/home/alice/jobs/sh/%A_%a.out
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/sh/common-%A/
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/sh/own-%A-%a.txt
cat /home/alice/jobs/sh/common-$SLURM_ARRAY_JOB_ID/set/sub/c.txt /home/alice/jobs/sh/own-$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID.txt
JOB
shared_key() { echo "SLURMJOB:$1,CLUSTER:conduit,RESTART:0,SLURMINDEX:1,SLURMTYPE:CONDUIT_PRE_ARRAY,"; }
faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}' # held until the cancel below
S1=$(submit shared.sh --array=0-3)
expect "an array with a shared and a per-task stage-in is accepted" [ -n "$S1" ]
expect "... the shared stage-in starts" wait_for 60 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c -- '$(shared_key "$S1")') -ge 1 ]"
expect "... task 1 and another task wait in stage-in" wait_for 60 sh -c \
	"chroot $R squeue -h -j ${S1}_1 -o %r | grep -q BurstBufferStageIn && \
	 [ \$(chroot $R squeue -h -j $S1 -t PD -o %r | grep -c BurstBufferStageIn) -ge 2 ]"
in_root scancel "${S1}_1"
expect "... cancelling one task mid-stage: that task ends CANCELLED" wait_for 30 sh -c \
	"chroot $R squeue -h -t all -j ${S1}_1 -o %T | grep -qx CANCELLED"
faults '{}'
expect "... the other tasks complete" wait_for 120 sh -c \
	"[ \$(chroot $R squeue -h -t all -j $S1 -o %T | grep -c '^COMPLETED$') = 3 ]"
expect "... each saw the shared data and its own" all_tasks "$S1" 4 \
	'[ $i = 1 ] || [ "$(cat $R$JOBS/sh/${S1}_$i.out)" = "$(printf "charlie\nalpha")" ]'
admin_comment_has() { in_root scontrol show job "$1" | grep -qF "AdminComment=$2"; }
expect "... each task's AdminComment has its stage-in summary (accounting)" all_tasks "$S1" 4 \
	'[ $i = 1 ] || admin_comment_has ${S1}_$i "conduit attempt 0: in 2 transfers"'
sacct_comment_has() { in_root sacct -n -P -X -j "$1" -o AdminComment | grep -qF "$2"; }
expect "... and sacct shows it, from slurmdbd and MariaDB" wait_for 60 all_tasks "$S1" 4 \
	'[ $i = 1 ] || sacct_comment_has ${S1}_$i "conduit attempt 0: in 2 transfers"'
note "sacct -j ${S1}_0 -o JobID,State,AdminComment: $(in_root sacct -n -P -X -j "${S1}_0" -o JobID,State,AdminComment)"
expect "... the shared stage-in was started exactly once (server RPC log)" \
	[ "$(starts_of "$(shared_key "$S1")")" = 1 ]
expect "... and the per-task one once for each task that reached stage-in" \
	[ "$(grep '"method": "StartTransfer"' "$R$SRV/rpc.log" | grep -c "SLURMINDEX:2,SLURMTYPE:CONDUIT_PRE,")" -ge 3 ]
expect "... and the array's shared records are gone with its last task" \
	wait_for 30 sh -c "! ls $R/var/spool/conduit_bb | grep -q '^conduit\\.$S1\\.shared'"

faults '{"delay_ms": {"DATA_TRANSFERRING": 600000}}' # held until cancelled
S2=$(submit shared.sh --array=0-3)
expect "cancelling a whole array mid-stage..." wait_for 60 sh -c "[ \$(grep '\"method\": \"StartTransfer\"' $R$SRV/rpc.log | grep -c -- '$(shared_key "$S2")') -ge 1 ]"
s0=$(stops)
in_root scancel "$S2"
shared_row_aborted() { # the array's task $1 shows its shared row aborted
	# (as Conduit ends an abort: TRANSFER_ERROR with ERROR_ABORTED, or
	# ABORT/ABORTED)
	in_root scontrol show bbstat conduit "$1" |
		grep -E '^in +3 +0 +(TRANSFER_ABORT|TRANSFER_ERROR .*ERROR_ABORTED)' |
		grep -q '(shared '
}
# (the server's state, not bbstat: a cancelled task's bbstat depends on
# what of its records the hurried teardown left)
shared_aborted() { transfers_of "$1" | tr ' ' '\n' | grep -q '^aborted:0:SLURMTYPE:CONDUIT_PRE_ARRAY$'; }
expect "... every task ends CANCELLED" wait_for 60 sh -c \
	"[ \$(chroot $R squeue -h -t all -j $S2 -o %T | grep -c '^CANCELLED$') = 4 ]"
# The last task's hurried teardown aborts it.  Slurm may kill that
# teardown: a pending job's cancel flushes its scripts, and when the flush
# reaches slurmscriptd after the teardown it queued has begun, the
# teardown dies with the polls ("teardown for JobId=N terminated by
# slurmctld", no retry).  Then the next hook of any job sweeps StateDir
# and stops it (docs/admin.md, "StateDir").  Which one happened is read
# from slurmctld's log once no burst-buffer script runs any more.
S2_IDS=$(in_root squeue -h -t all -j "$S2" -o %A | sort -u | tr '\n' ' ')
teardown_killed() { # a teardown of one of the array's tasks was killed
	for id in $S2_IDS; do
		grep -q "teardown for JobId=$id terminated by slurmctld" \
			"$R/var/log/slurm/slurmctld.log" && return 0
	done
	return 1
}
settled() { shared_aborted "$S2" || [ -z "$(hook_pids)" ]; }
wait_for 60 settled
if ! shared_aborted "$S2" && teardown_killed; then
	note "Slurm killed the array's last teardown (slurmctld.log); the next hook's sweep must stop the shared stage-in"
	write_job nudge.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_POST --when=failure cp /home/alice/jobs/never-%j.txt /data/out/
true
JOB
	NUDGE=$(submit nudge.sh)
	expect "... aborts its shared stage-in (StopTransfer): Slurm killed the teardown, the next hook's sweep stopped it" \
		wait_for 60 shared_aborted "$S2"
	expect "... the hook that swept ends COMPLETED" wait_for 60 state_is "$NUDGE" COMPLETED
else
	expect "... aborts its shared stage-in (StopTransfer): the last task's teardown" \
		wait_for 60 shared_aborted "$S2"
fi
shared_row_aborted "$S2" ||
	note "bbstat of $S2 (not the check): $(in_root scontrol show bbstat conduit "$S2" 2>&1 | tr '\n' '|')"
faults '{}'
sed -i '/^AdminComment=yes$/d' "$R/etc/slurm/conduit_bb.conf"

# ---- TLS session export (a note, not a check) ---------------------------------
# Resuming the Conduit server's TLS session in the next hook process would
# save most of a poll; libcurl's only way to carry a session across
# processes is curl_easy_ssls_export (8.12+).  Ask this root's libcurl,
# against a server that asks for a client certificate without requiring
# one, whether it exports a session made without and one made with a
# client certificate (conduit_bb always uses one).  docs/performance.md.
tls_probe() {
	d=/tmp/tlsprobe
	mkdir -p "$R$d"
	cp "$E2E/tls_export_probe.c" "$HERE/tests/conduit/make-certs.sh" "$R$d/" &&
		in_root sh -c "cd $d && gcc -O1 tls_export_probe.c -lcurl -o probe &&
			sh make-certs.sh pki" >/dev/null 2>&1 || { echo "probe not built"; return; }
	port=$((CONDUIT_PORT + 7))
	in_root sh -c "cd $d && exec openssl s_server -accept 127.0.0.1:$port -cert pki/server.crt \
		-key pki/server.key -CAfile pki/ca.crt -verify 1 -www -tls1_3" >/dev/null 2>&1 &
	sp=$!
	wait_for 10 /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)"
	a=$(in_root sh -c "cd $d && ./probe https://127.0.0.1:$port/ pki/ca.crt" 2>&1)
	b=$(in_root sh -c "cd $d && ./probe https://127.0.0.1:$port/ pki/ca.crt pki/service.crt pki/service.key" 2>&1)
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	echo "libcurl $(in_root sh -c "pkg-config --modversion libcurl" 2>/dev/null): without a client certificate: $a; with one: $b"
}
note "TLS session export: $(tls_probe)"

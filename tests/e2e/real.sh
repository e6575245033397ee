# real.sh - (sourced by run.sh, last) the same Slurm with the real Conduit
# in place of the test server: Conduit's own server, runner and rsync FTA
# built from ../shared/vendor (tests/conduit/real/build.sh, cached),
# started in the root by real-ctl.sh on the test server's port, with
# conduit_bb.conf pointed at its certificates.  Jobs as a user runs them:
# stage-in of a file and a tree, stage-out, an array with a shared
# stage-in, a requeue, and a mv of a directory without -r.  Judged on
# disk and by Slurm; the real server keeps no log these checks read.
REAL_DIR=/var/lib/conduit-real
real_ok=1
if ! out=$(sh "$HERE/tests/conduit/real/build.sh" --install "$R" 2>&1); then
	real_ok=""
	note "real Conduit: skipped: $(echo "$out" | tail -n 1)"
fi
if [ -n "$real_ok" ]; then
	sh "$E2E/cluster.sh" stop-conduit
	rm -rf "$R$REAL_DIR"
	expect "real Conduit: its server, runner, FTA, etcd and the rqlite stand-in start in the root on 127.0.0.1:$CONDUIT_PORT" \
		in_root env CBB_CONDUIT_BIN=/opt/conduit-real/bin CBB_CONDUIT_USERS=none \
		sh "$E2E_SRC/tests/conduit/real/real-ctl.sh" start "$REAL_DIR" "$CONDUIT_PORT"
	sed -i "s|^CACert=.*|CACert=$REAL_DIR/pki/ca.crt|; s|^ClientCert=.*|ClientCert=$REAL_DIR/pki/service.crt|; s|^ClientKey=.*|ClientKey=$REAL_DIR/pki/service.key|" \
		"$R/etc/slurm/conduit_bb.conf"
	expect "real Conduit: conduit-bb doctor finds it (TLS, client certificate, a Query)" \
		sh -c "chroot $R $CBB_CLI doctor 2>&1 | grep -q '^ *ok *server: '"

	# 1. a file and a tree in, a file out
	# (a destination's parent must exist: Conduit validates every one)
	mkdir -p "$R/data/mv/rdir/sub" "$R$JOBS/real1" "$R$JOBS/real2" "$R/data/out/rrq"
	echo romeo > "$R/data/mv/rdir/sub/r.txt"
	chown -R 2001:2001 "$R/data/mv/rdir" "$R$JOBS/real1" "$R$JOBS/real2" "$R/data/out/rrq"
	write_job real-basic.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/jobs/real-%j-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/real1/set
#CONDUIT_POST cp /home/alice/jobs/real-%j.out /data/out/real-%j.out
cat /home/alice/jobs/real-$SLURM_JOB_ID-a.txt /home/alice/jobs/real1/set/sub/c.txt > /home/alice/jobs/real-$SLURM_JOB_ID.out
JOB
	RB=$(submit real-basic.sh)
	expect "real Conduit: a job with a file and a tree staged in, a file out: COMPLETED" \
		wait_for 240 state_is "$RB" COMPLETED
	expect "... the job read both: the tree at its destination, not nested" sh -c \
		"[ \"\$(cat $R$JOBS/real-$RB.out)\" = \"\$(printf 'alpha\ncharlie')\" ] && [ ! -e $R$JOBS/real1/set/set ]"
	expect "... its output staged out" file_is "/data/out/real-$RB.out" "$(printf 'alpha\ncharlie')"
	expect "... AuditLog has the bytes as Conduit counted them (\"6B\")" sh -c \
		"grep '\"job\":$RB,' $R/var/log/slurm/conduit_bb-audit.log | grep '\"line\":3,' | grep -q '\"bytes\":6,'"
	expect "... no StateDir file left" wait_for 30 no_state_files "$RB"

	# 2. an array: one shared stage-in for all tasks, one of each task's own
	write_job real-array.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp -r /data/in/set /home/alice/jobs/real2/
#CONDUIT_PRE cp /data/in/b.txt /home/alice/jobs/rarr-%A-%a.txt
cat /home/alice/jobs/real2/set/sub/c.txt /home/alice/jobs/rarr-$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID.txt > /home/alice/jobs/rarr-$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID.out
JOB
	RA=$(submit real-array.sh --array=0-2)
	expect "real Conduit: an array of 3 with a shared stage-in: every task COMPLETED" wait_for 300 sh -c \
		"[ \$(chroot $R squeue -h -t all -j $RA -o %T | grep -c '^COMPLETED$') = 3 ]"
	expect "... each task saw the shared tree and its own file" all_tasks "$RA" 3 \
		'[ "$(cat $R$JOBS/rarr-'"$RA"'-$i.out)" = "$(printf "charlie\nbravo")" ]'

	# 3. a requeue after the job ended: attempt 0's tree moved aside
	write_job real-requeue.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_POST cp -r /home/alice/jobs/rrq-%j/rrq-%j /data/out/rrq/rrq-%j
d=/home/alice/jobs/rrq-$SLURM_JOB_ID/rrq-$SLURM_JOB_ID
mkdir -p $d/sub
echo "attempt ${SLURM_RESTART_COUNT:-0}" > $d/sub/r.txt
JOB
	RQ=$(submit real-requeue.sh)
	expect "real Conduit: a requeued job's attempt 0 completes and stages out" wait_for 240 sh -c \
		"[ \"\$(chroot $R squeue -h -t all -j $RQ -o '%T')\" = COMPLETED ] && grep -qx 'attempt 0' $R/data/out/rrq/rrq-$RQ/sub/r.txt"
	in_root scontrol requeue "$RQ"
	wait_for 30 state_is "$RQ" PENDING
	in_root scontrol update JobId="$RQ" StartTime=now
	expect "... attempt 1 completes, its tree at the destination" wait_for 240 sh -c \
		"[ \"\$(chroot $R squeue -h -t all -j $RQ -o '%T')\" = COMPLETED ] && grep -qx 'attempt 1' $R/data/out/rrq/rrq-$RQ/sub/r.txt"
	expect "... not nested in attempt 0's" gone "/data/out/rrq/rrq-$RQ/rrq-$RQ"
	expect "... attempt 0's tree moved aside, whole" \
		sh -c "a=\$(ls -d $R/data/out/rrq/rrq-$RQ.conduit-attempt-0-* 2>/dev/null) && [ \$(echo \"\$a\" | wc -l) = 1 ] && grep -qx 'attempt 0' \"\$a/rrq-$RQ/sub/r.txt\""

	# 4. mv of a directory without -r: refused, nothing moved
	write_job real-mvdir.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE mv /data/mv/rdir /home/alice/jobs/rmv-%j
true
JOB
	RM=$(submit real-mvdir.sh)
	expect "real Conduit: mv of a directory without -r: held, the reason names the line" \
		wait_for 120 reason_has "$RM" "line 3: mv: /data/mv/rdir is a directory"
	expect "... and the directory is where it was" file_is /data/mv/rdir/sub/r.txt romeo
	expect "... nothing at the destination" gone "$JOBS/rmv-$RM"
	in_root scancel "$RM"

	in_root sh "$E2E_SRC/tests/conduit/real/real-ctl.sh" stop "$REAL_DIR" >/dev/null 2>&1
fi

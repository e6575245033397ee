# switch_format.sh - (sourced by run.sh after switch.sh, profile
# 26.05-switch) an upgrade and a rollback that change the plugin's
# jobinfo format, with a --network job running: slurmctld restarted with a
# build whose format is 9 reads the job's format-1 jobinfo (a build reads
# every format up to its own), and restarted again with the suite's build
# (the rollback), which cannot read format 9, declines it with one log
# line and runs the job to its end.  Before, an unreadable jobinfo failed
# the job record and slurmctld's start (fatal in load_all_job_state).
FMT_TREE=/usr/src/slurm-$SLURM_SOURCE
FMT_PLUGIN=$(in_root sh -c 'ls -d /usr/lib/*/slurm/switch_lua.so /usr/lib*/slurm/switch_lua.so 2>/dev/null | head -n 1')
expect "format change: a switch/lua build that packs its jobinfo as format 9 builds" \
	in_root sh -c "make -s -C $E2E_SRC switch-plugin SLURM_SRC=$FMT_TREE LUA_VERSION=$LUA \
		B=/tmp/swl-format-9 CFLAGS='-O2 -DSWL_FORMAT=9' >/tmp/swl-format-9.log 2>&1"
# (an output name of its own: job ids may repeat within a suite)
JF=$(submit net.sh --export=ALL,HOLD=45 -N2 --network=conduit:pool=a100+gpus=1 --output=fmt-%j.out)
expect "... a --network job runs with its session" wait_for 60 sh -c \
	"[ \"\$(chroot $R squeue -h -j $JF -o %T)\" = RUNNING ] &&
	 [ \$(grep -c 'id=sess-[0-9]* pool=a100 gpus=1 ' $R$JOBS/fmt-$JF.out 2>/dev/null) = 2 ]"
# slurmctld saves the job running, with its jobinfo, before it is
# stopped (a restart inside that window re-runs a batch job: Slurm's own,
# docs/switch.md)
fmt_saved() {
	started=$(date -d "$(chroot "$R" squeue -h -j "$JF" -o %S)" +%s 2>/dev/null) &&
		[ "$(stat -c %Y "$R/var/spool/slurmctld/job_state")" -gt "$started" ]
}
wait_for 60 fmt_saved
cp "$R$FMT_PLUGIN" "$R/tmp/switch_lua.so.suite"
cp "$R/tmp/swl-format-9/switch_lua/switch_lua.so" "$R$FMT_PLUGIN"
sh "$E2E/cluster.sh" restart-slurmctld
expect "... slurmctld with the format-9 build starts and answers" \
	wait_for 60 sh -c "chroot $R scontrol ping 2>/dev/null | grep -q 'is UP'"
expect "... the job is kept, still running" wait_for 30 sh -c \
	"chroot $R squeue -h -t all -j $JF -o %T | grep -Eq 'RUNNING|COMPLETING|COMPLETED'"
expect "... its jobinfo read: the newer build reads the older format (no decline logged)" \
	sh -c "! grep -q 'jobinfo (format' '$R/var/log/slurm/slurmctld.log'"
# the format-9 build saves the job state (a change to the job makes it
# save; a slurmctld that changed nothing since its start saves nothing)
t9=$(date +%s)
in_root scontrol update jobid="$JF" comment=format-9
saved_after() { [ "$(stat -c %Y "$R/var/spool/slurmctld/job_state")" -gt "$1" ]; }
expect "... and saves the job state in format 9" wait_for 60 saved_after "$t9"
# back to the suite's build: a rollback across the same job
cp "$R/tmp/switch_lua.so.suite" "$R$FMT_PLUGIN"
sh "$E2E/cluster.sh" restart-slurmctld
expect "... the rollback cannot read format 9: the jobinfo is declined with one log line" \
	wait_for 30 ctld_log "jobinfo (format 9, this build reads 1 to 1) declined"
expect "... and back to the suite's build: slurmctld starts, the job completes" \
	wait_for 120 state_is "$JF" COMPLETED
expect "... once: never requeued" [ "$(restarts_of "$JF")" = 0 ]

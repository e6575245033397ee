# switch_seal.sh - (sourced by run.sh, profile 26.05-switch) a
# conduit_bb.lua planted where slurmctld, slurmd and slurmstepd work (Lua
# tries ./?.lua before any C module) is never run by the root helper
# that runs switch.lua's hooks: the helper works from / with Lua's
# system paths only (docs/switch.md).
SEAL_MARK=/tmp/conduit-bb-planted-ran
rm -f "$R$SEAL_MARK"
for d in /var/log/slurm /var/spool/slurmd /var/spool/slurmctld /var/tmp /; do
	[ -d "$R$d" ] || continue
	printf 'io.open("%s", "w"):close()\nreturn {}\n' "$SEAL_MARK" > "$R$d/conduit_bb.lua"
done
for n in slurmctld slurmd; do
	for pid in $(pgrep -x "$n"); do
		[ "$(readlink "/proc/$pid/root")" = "$R" ] &&
			note "$n works in $(readlink "/proc/$pid/cwd"), where a conduit_bb.lua is planted now"
	done
done
JS=$(submit net.sh -N2 --network=conduit:pool=a100+gpus=1 --output=seal-%j.out)
expect "planted conduit_bb.lua: a --network job completes, its step on both nodes with the session" \
	wait_for 90 sh -c "[ \"\$(chroot $R squeue -h -t all -j $JS -o %T)\" = COMPLETED ] &&
		[ \$(grep -c 'id=sess-[0-9]* pool=a100 gpus=1 ' $R$JOBS/seal-$JS.out 2>/dev/null) = 2 ]"
expect "... and no hook ran the planted file (job_start, step hooks, job_complete)" \
	wait_for 30 sh -c "[ ! -e $R$SEAL_MARK ] && [ \"\$(chroot $R squeue -h -t all -j $JS -o %T)\" = COMPLETED ]"
for d in /var/log/slurm /var/spool/slurmd /var/spool/slurmctld /var/tmp /; do
	rm -f "$R$d/conduit_bb.lua"
done

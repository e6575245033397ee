# wave.sh - a load-and-chaos wave (sourced by run.sh): 100 jobs at once
# (60 plain jobs, 4 arrays of 10 tasks; 3 stage-in and 2 stage-out
# directives each) while slurmctld restarts twice, the Conduit server is
# down longer than ServerDownGrace once during stage-in and once during
# stage-out, 5 running jobs are requeued, 5 jobs are cancelled in
# stage-in and 3 with --hurry in stage-out.  What a site needs is checked
# (tests/e2e/wave_check.py reads the server's RPC log and state); how it
# went is printed, not asserted.
W=/home/alice/wave
rm -rf "$R$W" "$R/data/wave" "$R/tmp/wave-peak"
mkdir -p "$R$W" "$R/data/wave"
chown 2001:2001 "$R$W" "$R/data/wave"
write_job wave-plain.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_PRE cp /data/in/a.txt /home/alice/wave/%j-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/wave/%j-set
#CONDUIT_PRE cp /data/in/b.txt /home/alice/wave/%j-b.txt
#CONDUIT_POST cp /home/alice/wave/%j-res.txt /data/wave/%j-res.txt
#CONDUIT_POST mv /home/alice/wave/%j-log.txt /data/wave/%j-log.txt
n=/home/alice/wave/$SLURM_JOB_ID
echo "attempt ${SLURM_RESTART_COUNT:-0} $(cat $n-a.txt) $(ls $n-set)" > $n-res.txt
echo "log ${SLURM_RESTART_COUNT:-0}" > $n-log.txt
sleep 30
JOB
write_job wave-array.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/wave/%A_%a-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/wave/%A_%a-set
#CONDUIT_PRE cp /data/in/b.txt /home/alice/wave/%A_%a-b.txt
#CONDUIT_POST cp /home/alice/wave/%A_%a-res.txt /data/wave/%A_%a-res.txt
#CONDUIT_POST mv /home/alice/wave/%A_%a-log.txt /data/wave/%A_%a-log.txt
n=/home/alice/wave/${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID
echo "attempt ${SLURM_RESTART_COUNT:-0} $(cat $n-a.txt) $(ls $n-set)" > $n-res.txt
echo "log ${SLURM_RESTART_COUNT:-0}" > $n-log.txt
sleep 30
JOB

ms() { date +%s%3N; }
# slurmctld CPU seconds so far (this process; restarts add up below)
ctld_cpu() {
	p=$(cat "$R/run/slurmctld.pid" 2>/dev/null)
	[ -n "$p" ] && awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$p/stat" 2>/dev/null || echo 0
}
cpu_total=0
add_cpu() { cpu_total=$(awk -v a="$cpu_total" -v b="$(ctld_cpu)" 'BEGIN { print a + b }'); }
# slurmctld saves its job records before it waits for the burst-buffer
# scripts still running; a script that ends in that window changes a
# buffer that is then lost (the job stays in stage-in or stage-out for
# good), and Slurm 24.11's slurmscriptd may crash ending them (docs/admin.md,
# "Restarting slurmctld").  Restart it as an admin would: at the first
# moment within 20 s when no burst-buffer script runs (under this load
# there may be none: then Slurm's losses are counted, see below).
restart_ctld() {
	add_cpu
	end=$(( $(date +%s) + 20 ))
	while [ "$(hooks_now)" -gt 0 ] && [ "$(date +%s)" -lt "$end" ]; do
		sleep 0.1
	done
	note "wave: slurmctld restarted with $(hooks_now) burst-buffer scripts running"
	sh "$E2E/cluster.sh" restart-slurmctld
}
# Jobs Slurm lost in a restart: in stage-in or stage-out by their own
# record, with no buffer of Slurm's left to drive them, or RUNNING for
# minutes with nothing on the node (the launch was lost; docs/admin.md);
# and the other tasks of an array with a task lost in stage-in: Slurm
# 24.11 then starts no stage-in for them again (their buffers torn down
# and complete, no hook ever called; seen once in a 24.11 wave).
lost_by_slurm() {
	first=$(lost_alone)
	[ -n "$first" ] || return 0
	printf '%s\n' $first
	arrays=$(for j in $first; do in_root squeue -h -j "$j" -o %F 2>/dev/null; done | sort -u)
	in_root squeue -h -t PD -u alice -o '%A|%F|%r|%j' 2>/dev/null | grep '|wave-' |
		while IFS='|' read -r j a reason _; do
			[ "$reason" = BurstBufferStageIn ] || continue
			printf '%s\n' $arrays | grep -qx "$a" || continue
			printf '%s\n' $first | grep -qx "$j" && continue
			in_root scontrol show job "$j" |
				grep -qE 'BurstBufferState=(complete|pending)' && echo "$j"
		done
}
lost_alone() {
	# an array task's buffer is listed as JobID=<array>_<task>(<job id>)
	bufs=$(in_root scontrol show burst 2>/dev/null |
		sed -n -e 's/.*JobID=[0-9]*_[0-9]*(\([0-9]*\)).*/\1/p' -e t -e 's/.*JobID=\([0-9]*\).*/\1/p')
	steps=$(for p in $(root_pids); do tr '\0' ' ' 2>/dev/null < /proc/$p/cmdline; echo; done |
		sed -n 's/^slurmstepd: \[\([0-9]*\)\.batch\].*/\1/p')
	in_root squeue -h -t all -u alice -o '%A|%T|%r|%j|%M' 2>/dev/null | grep '|wave-' |
		awk -F'|' '{ n = split($5, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
			$2 == "RUNNING" && s > 120 { print "run " $1; next }
			$2 == "STAGE_OUT" || ($2 == "PENDING" && $3 ~ /BurstBuffer(StageIn|Resources)/) { print "bb " $1 }' |
		while read -r what j; do
			if [ "$what" = run ]; then
				printf '%s\n' $steps | grep -qx "$j" || echo "$j"
				continue
			fi
			printf '%s\n' $bufs | grep -qx "$j" || in_root scontrol show job "$j" |
				grep -qE 'BurstBufferState=(staging-in|staging-out)' && echo "$j"
		done
}
# Jobs whose burst-buffer script slurmctld killed as it shut down (its log
# says so); Slurm 26.05 counts that as the hook failing, with no message.
killed_by_slurm() {
	sed -n 's/.*Script for jobid=\([0-9]*\) found running.*/\1/p' "$R/var/log/slurm/slurmctld.log" |
		sort -un | tr '\n' ' '
}
hooks_now() { # scripts slurmscriptd runs now (its children, forked or not yet)
	n=0
	for p in $(root_pids); do
		case $(tr '\0' ' ' 2>/dev/null < /proc/$p/cmdline) in
		*slurmscriptd*) n=$((n + $(cat /proc/$p/task/*/children 2>/dev/null | wc -w))) ;;
		esac
	done
	echo $n
}
# (samples go to a file: wait_ids runs in a subshell)
sample() { hooks_now >> "$R/tmp/wave-peak"; }
ids_where() { # ids_where STATE REASON-PART [COUNT] (plain jobs only)
	in_root squeue -h -t all -u alice -o '%A|%T|%r|%j' 2>/dev/null |
		awk -F'|' -v s="$1" -v r="$2" '$4 == "wave-plain.sh" && $2 == s && (r == "" || index($3, r))' |
		cut -d'|' -f1 | head -n "${3:-1000}"
}
RELEASABLE='conduit: server unreachable|slurm_bb_[a-z_]+( failed)?: *$'
# The admin's answer to an outage, or to a restart during which Slurm
# killed a hook (26.05 counts that as the hook failing, with no message):
# release what it held.
release_held() {
	for j in $(in_root squeue -h -u alice -t PD -o '%A|%r' |
		grep -E "$RELEASABLE" | cut -d'|' -f1); do
		in_root scontrol release "$j" 2>/dev/null
	done
}

# Slurm polls every staging job every PollInterval; the other scenarios
# use 1 s to run fast, but a hundred jobs polled every second would keep
# two cores saturated (each poll is a process).  Sites use 15 s.
sed -i 's/^PollInterval=.*/PollInterval=5/' "$R/etc/slurm/burst_buffer.conf"
in_root scontrol reconfigure
wait_for 60 sh -c "chroot $R sinfo -h -o %t | grep -qx idle"
faults '{"delay_ms": {"DATA_TRANSFERRING": 1000}}'
wave_t0=$(date +%s)
# Every job is submitted within a minute and they all overlap; submitted
# in one burst, a hundred jobs' first hooks would queue for tens of
# seconds on two cores (each hook is a process), far from what a site
# with a real controller host sees.
lat=""
plain=""
arrays=""
i=0
while [ $i -lt 64 ]; do
	t=$(ms)
	if [ $((i % 16)) = 15 ]; then
		j=$(submit wave-array.sh --array=0-9) && arrays="$arrays $j"
	else
		j=$(submit wave-plain.sh) && plain="$plain $j"
	fi
	lat="$lat $(( $(ms) - t ))"
	i=$((i + 1))
	sleep 0.8
done
expect "wave: 60 jobs and 4 arrays of 10 tasks submitted" \
	sh -c "[ $(echo $plain | wc -w) = 60 ] && [ $(echo $arrays | wc -w) = 4 ]"

# ---- chaos, each when its moment comes -----------------------------------------
wait_ids() { # wait_ids SECONDS STATE REASON N -> N ids (or fewer on timeout)
	end=$(( $(date +%s) + $1 ))
	while :; do
		sample
		release_held
		got=$(ids_where "$2" "$3" "$4")
		[ "$(echo $got | wc -w)" -ge "$4" ] && break
		[ "$(date +%s)" -ge "$end" ] && break
		sleep 0.5
	done
	echo $got
}
cancelled=$(wait_ids 120 PENDING BurstBufferStageIn 5)
for j in $cancelled; do in_root scancel "$j"; done
restart_ctld
sleep 2
sh "$E2E/cluster.sh" stop-conduit
sleep 14 # longer than ServerDownGrace=10 s, during stage-in
sh "$E2E/cluster.sh" start-conduit
requeued=$(wait_ids 180 RUNNING "" 5)
for j in $requeued; do in_root scontrol requeue "$j"; done
sleep 2
for j in $requeued; do in_root scontrol update JobId="$j" StartTime=now 2>/dev/null; done
release_held
hurried=$(wait_ids 180 STAGE_OUT "" 3)
for j in $hurried; do in_root scancel --hurry "$j"; done
wait_ids 120 STAGE_OUT "" 4 >/dev/null
sh "$E2E/cluster.sh" stop-conduit
sleep 14 # longer than ServerDownGrace, shorter than StageOutDownGrace=120 s
sh "$E2E/cluster.sh" start-conduit
restart_ctld
faults '{}'
note "wave: cancelled in stage-in: $cancelled; requeued: $requeued; hurried in stage-out: $hurried"

# ---- then every job must end ---------------------------------------------------
# not ended: any state but the final ones; a pending job held for good
# (priority 0, for a reason the admin loop does not release) counts as
# ended here, and the checks below find it.  Only a pending job: one that
# was held and released may run with priority 0 still shown.
# A squeue that fails (slurmctld restarting) answers nothing, and one
# that a freshly restarted slurmctld answers may not list every job yet:
# neither is "all ended", or the wait would stop early while jobs still run.
unfinished() {
	q=$(in_root squeue -h -r -t all -u alice -o '%A|%T|%Q|%j|%r' 2>/dev/null | grep '|wave-') ||
		{ echo 999; return; }
	[ "$(printf '%s\n' "$q" | grep -c .)" -ge 100 ] || { echo 999; return; }
	printf '%s\n' "$q" |
		grep -vE '^[0-9]+\|(COMPLETED|CANCELLED|FAILED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)\|' |
		awk -F'|' -v rx="$RELEASABLE" -v lost=" $(lost_by_slurm | tr '\n' ' ') " \
			'($2 != "PENDING" || $3 != 0 || $5 ~ rx) && !index(lost, " " $1 " ")' | grep -c .
}
end=$(( $(date +%s) + 420 ))
# one reading decides: whether Slurm lost a job is read afresh each time,
# and a transient scontrol failure must not flip the verdict after the loop
# and it must say 0 twice, 5 s apart (a job may move between the states
# a reading looks at while it is taken)
settled() {
	left=$(unfinished)
	[ "$left" = 0 ] || return 1
	sleep 5
	left=$(unfinished)
	[ "$left" = 0 ]
}
while ! settled && [ "$(date +%s)" -lt "$end" ]; do
	sample
	release_held
	# a requeued job waits out Slurm's requeue delay unless told not to
	for j in $requeued; do
		[ "$(state_of "$j")" = PENDING ] && in_root scontrol update JobId="$j" StartTime=now 2>/dev/null
	done
	sleep 2
done
add_cpu
wall=$(( $(date +%s) - wave_t0 ))
expect "wave: every job ended within 7 minutes" [ "$left" = 0 ]
[ "$left" = 0 ] || note "wave: not ended: $(in_root squeue -h -r -u alice -o '%A:%T:%r' | tr '\n' ' ')"

# ---- what a site needs ---------------------------------------------------------
sleep 5 # the last teardowns
all_ids=$(in_root squeue -h -t all -u alice -o '%A|%j|%F|%K|%T' | awk -F'|' '$2 ~ /^wave-/')
printf '%s\n' "$all_ids" > "$R/tmp/wave-jobs"
lost=$(lost_by_slurm | tr '\n' ' ')
killed=$(killed_by_slurm)
[ -z "$killed" ] || note "wave: slurmctld killed the running burst-buffer scripts of jobs $killed as it shut down"
[ -z "$lost" ] || note "wave: Slurm lost the burst buffers of jobs $lost in a slurmctld restart (they stay in stage-in or stage-out; docs/admin.md); conduit_bb's part is checked for them too"
/usr/bin/python3 "$E2E/wave_check.py" "$R" "$SRV" "$R/tmp/wave-jobs" \
	"$cancelled" "$requeued" "$hurried" "$lost" "$killed" > "$R/tmp/wave-check" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*) ok "wave: ${line#ok }" ;;
	"not ok "*) bad "wave: ${line#not ok }" ;;
	*) note "wave: $line" ;;
	esac
done < "$R/tmp/wave-check"
grep -q '^ok ' "$R/tmp/wave-check" || bad "wave: the wave checker ran"

# ---- how it went ---------------------------------------------------------------
peak=$(sort -n "$R/tmp/wave-peak" 2>/dev/null | tail -1)
med=$(printf '%s\n' $lat | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
max=$(printf '%s\n' $lat | sort -n | tail -1)
note "wave: 100 jobs in ${wall} s; slurmctld ${cpu_total} CPU-s; peak ${peak:-0} hook processes at once; sbatch median ${med} ms, max ${max} ms"

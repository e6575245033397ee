# wave.sh - a load-and-chaos wave (sourced by run.sh): 100 jobs at once
# (60 plain jobs, 4 arrays of 10 tasks; 3 stage-in and 2 stage-out
# directives each) while slurmctld restarts twice, the Conduit server is
# down longer than ServerDownGrace once during stage-in and once during
# stage-out, 5 running jobs are requeued, 5 jobs are cancelled in
# stage-in and 3 with --hurry in stage-out.  What a site needs is checked
# (tests/e2e/wave_check.py reads the server's RPC log and state); how it
# went is printed, not asserted.
W=/home/alice/wave
rm -rf "$R$W" "$R/data/wave" "$R/tmp/wave-peak" "$R/tmp/wave-lost-seen"
mkdir -p "$R$W" "$R/data/wave"
chown 2001:2001 "$R$W" "$R/data/wave"
write_job wave-plain.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#SBATCH --requeue
#CONDUIT_PRE cp /data/in/a.txt /home/alice/wave/%j-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/wave/%j-set/
#CONDUIT_PRE cp /data/in/b.txt /home/alice/wave/%j-b.txt
#CONDUIT_POST cp /home/alice/wave/%j-res.txt /data/wave/%j-res.txt
#CONDUIT_POST mv /home/alice/wave/%j-log.txt /data/wave/%j-log.txt
n=/home/alice/wave/$SLURM_JOB_ID
echo "attempt ${SLURM_RESTART_COUNT:-0} $(cat $n-a.txt) $(ls $n-set/set)" > $n-res.txt
echo "log ${SLURM_RESTART_COUNT:-0}" > $n-log.txt
sleep 30
JOB
write_job wave-array.sh <<'JOB'
#!/bin/bash
#SBATCH --output=/dev/null
#CONDUIT_PRE cp /data/in/a.txt /home/alice/wave/%A_%a-a.txt
#CONDUIT_PRE cp -r /data/in/set /home/alice/wave/%A_%a-set/
#CONDUIT_PRE cp /data/in/b.txt /home/alice/wave/%A_%a-b.txt
#CONDUIT_POST cp /home/alice/wave/%A_%a-res.txt /data/wave/%A_%a-res.txt
#CONDUIT_POST mv /home/alice/wave/%A_%a-log.txt /data/wave/%A_%a-log.txt
n=/home/alice/wave/${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID
echo "attempt ${SLURM_RESTART_COUNT:-0} $(cat $n-a.txt) $(ls $n-set/set)" > $n-res.txt
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
# good), a script it kills counts as its hook failing, and Slurm 24.11's
# slurmscriptd may crash ending them (docs/admin.md, "What Slurm loses in
# a restart").  Admins restart for upgrades whatever runs: so does the
# wave, at the first moment within 40 s when burst-buffer scripts run
# (counted: "restarted with N"), and what Slurm loses is then found by
# `conduit-bb status` and done by `conduit-bb recover` (below).
RESTARTS=$R/tmp/wave-restarts
: > "$RESTARTS"
# Slurm 25.05 cannot save its state when it is stopped while a script
# runs ("Locks left set ... can not save state"): all since its last save
# is lost, even jobs sbatch was told were accepted ("Purged files for
# defunct batch JobId=N"; docs/admin.md).  No plugin can bring those back,
# and the wave needs its jobs: it restarts once slurmctld has written its
# job state after the wave came here (it does so every few seconds while
# jobs change), so what was submitted is on disk.
saved_after() { # saved_after T: job_state written after second T
	[ "$(stat -c %Y "$R/var/spool/slurmctld/job_state" 2>/dev/null || echo 0)" -gt "$1" ]
}
restart_ctld() {
	add_cpu
	asked=$(date +%s)
	wait_for 120 saved_after "$asked" || note "wave: slurmctld did not save its job state within 120 s"
	end=$(( $(date +%s) + 40 ))
	while n=$(hooks_now) && [ "$n" = 0 ] && [ "$(date +%s)" -lt "$end" ]; do
		sleep 0.1
	done
	echo "$n" >> "$RESTARTS"
	note "wave: slurmctld restarted with $n burst-buffer scripts running"
	sh "$E2E/cluster.sh" restart-slurmctld
}
# The admin after a restart: `conduit-bb recover` (docs/admin.md) every
# 15 s, its lines kept: it releases a job held because Slurm killed its
# stage-in hook, requeues one whose launch was lost, finishes a stage-out
# Slurm dropped.
RECOVER_LOG=$R/tmp/wave-recover
: > "$RECOVER_LOG"
recover_at=0
admin_recover() { # admin_recover [ARGS...]: now, or every 15 s without ARGS
	[ $# -gt 0 ] || [ "$(date +%s)" -ge "$recover_at" ] || return 0
	recover_at=$(( $(date +%s) + 15 ))
	in_root conduit-bb recover "$@" > "$RECOVER_LOG.last" 2>&1
	cat "$RECOVER_LOG.last" >> "$RECOVER_LOG"
}
# the jobs recover did VERB ("released", "requeued", "cancelled") for
recovered() {
	sed -n "s/^job \([0-9]*\): .*; $1: .*/\1/p" "$RECOVER_LOG" | sort -un | tr '\n' ' '
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
# Jobs lost by Slurm for good: lost at every reading for 30 s (a job
# between two states can look lost to one reading; Slurm's losses stay).
LOST_SEEN=$R/tmp/wave-lost-seen
lost_for_good() {
	now=$(date +%s)
	: >> "$LOST_SEEN"
	lost_by_slurm | sort -u | while read -r j; do
		first=$(awk -v j="$j" '$1 == j { print $2 }' "$LOST_SEEN")
		echo "$j ${first:-$now}"
	done > "$LOST_SEEN.new"
	mv "$LOST_SEEN.new" "$LOST_SEEN"
	awk -v now="$now" 'now - $2 >= 30 { print $1 }' "$LOST_SEEN"
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
			$2 == "STAGE_OUT" { print "out " $1; next }
			$2 == "PENDING" && $3 ~ /BurstBuffer(StageIn|Resources)|JobHeldAdmin: teardown/ { print "in " $1 }' |
		while read -r what j; do
			if [ "$what" = run ]; then
				printf '%s\n' $steps | grep -qx "$j" || echo "$j"
				continue
			fi
			# (a teardown that failed as slurmctld stopped leaves its
			# state in the job's record too)
			case $what in
			in) states='staging-in|teardown|teardown-fail' ;;
			*) states='post-run|staging-out|staged-out|teardown|teardown-fail' ;;
			esac
			printf '%s\n' $bufs | grep -qx "$j" || in_root scontrol show job "$j" |
				grep -qE "BurstBufferState=($states)\$" && echo "$j"
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
	c=$(cat "$R/run/slurmctld.pid" 2>/dev/null)
	# (slurmscriptd is slurmctld's child: read there, not in all of /proc)
	for k in $(cat /proc/"${c:-none}"/task/*/children 2>/dev/null); do
		[ "$(cat "/proc/$k/comm" 2>/dev/null)" = slurmscriptd ] &&
			n=$((n + $(cat /proc/$k/task/*/children 2>/dev/null | wc -w)))
	done
	echo $n
}
# (samples go to a file: wait_ids runs in a subshell)
sample() { hooks_now >> "$R/tmp/wave-peak"; }
ids_where() { # ids_where STATE REASON-PART [COUNT [body]] (plain jobs only, none of $exclude; only $only if set)
	# body: only jobs whose script runs (it has written its log)
	in_root squeue -h -t all -u alice -o '%A|%T|%r|%j' 2>/dev/null |
		awk -F'|' -v s="$1" -v r="$2" -v x=" ${exclude:-} " -v o=" ${only:-} " \
			'$4 == "wave-plain.sh" && $2 == s && (r == "" || index($3, r)) && !index(x, " " $1 " ") &&
			 (o == "  " || index(o, " " $1 " "))' |
		cut -d'|' -f1 | while read -r j; do
			[ "${4:-}" != body ] || [ -f "$R$W/$j-log.txt" ] && echo "$j"
		done | head -n "${3:-1000}"
}
RELEASABLE='conduit: server unreachable'
# A job slurmctld found in stage-in when it restarted is held back 60 s
# "for the teardown" of its buffer, and a requeued one about two minutes
# (fixed waits of Slurm's): once the buffer is torn down, let it go.
let_go() {
	for j in $(in_root squeue -h -u alice -t PD -o '%A|%r|%j' 2>/dev/null |
		awk -F'|' '$2 == "BeginTime" && $3 ~ /^wave-/ { print $1 }'); do
		torn_down "$j" && in_root scontrol update JobId="$j" StartTime=now 2>/dev/null
	done
}
# The admin's answer to an outage: release what it held (a job held
# because a restart killed its hook is recover's, above).
# Release jobs kept held for a moment of the wave, until Slurm says they
# are (a slurmctld just restarted may not take the first scontrol yet).
release_kept() { # release_kept IDS...
	end=$(( $(date +%s) + 60 ))
	while :; do
		held=$(in_root squeue -h -u alice -t PD -o '%A|%r' 2>/dev/null |
			awk -F'|' -v k=" $* " '$2 == "JobHeldUser" && index(k, " " $1 " ") { print $1 }')
		[ -z "$held" ] && in_root squeue -h -j "$(echo $* | tr ' ' ,)" >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		for j in ${held:-$*}; do in_root scontrol release "$j" 2>/dev/null; done
		sleep 0.5
	done
}
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
# ---- chaos, each when its moment comes, and each made to come ---------------
# A fault knob holds the moment open until the wave reaches it, so the
# wave cannot pass with less chaos than it says, nor fail for lack of it:
# a long DATA_TRANSFERRING keeps jobs in stage-in (or stage-out) until
# enough are there; start_then_stall_ms keeps a StartTransfer in flight
# (the server has it, the hook waits for the answer) until the server is
# stopped under it.
FLOW='"delay_ms": {"DATA_TRANSFERRING": 1000}'
HOLD='"delay_ms": {"DATA_TRANSFERRING": 600000}'
# one turn of the admin's loop: sample the hooks, release what an outage
# held, let go what Slurm holds back after a teardown, and recover what a
# restart left
tend() { sample; release_held; let_go; admin_recover; }
wait_ids() { # wait_ids SECONDS STATE REASON N [body] -> N ids (or fewer on timeout)
	end=$(( $(date +%s) + $1 ))
	while :; do
		tend
		got=$(ids_where "$2" "$3" "$4" "${5:-}")
		[ "$(echo $got | wc -w)" -ge "$4" ] && break
		[ "$(date +%s)" -ge "$end" ] && break
		sleep 0.5
	done
	echo $got
}
# slurmctld's log after byte OFF has a line matching the regex RX
log_since_has() { tail -c +"$(( $1 + 1 ))" "$R/var/log/slurm/slurmctld.log" 2>/dev/null | grep -qE -- "$2"; }
# The server has been down longer than ServerDownGrace=10 s since the stop
# (stopped_at), and a poll after it has said so: in stage-in a job held
# for it, in stage-out one waiting on (StageOutDownGrace=120 s).
down_past_grace() { # down_past_grace stage-in|stage-out
	[ $(( $(date +%s) - stopped_at )) -gt 10 ] || return 1
	case $1 in
	stage-in) log_since_has "$log_off" 'conduit: server unreachable for [0-9]+ s \(ServerDownGrace=' ;;
	stage-out) log_since_has "$log_off" \
		'stage-out: .*\(server down for (1[1-9]|[2-9][0-9]|[0-9]{3,}) s; waiting up to StageOutDownGrace' ;;
	esac
}
# cut_server TYPE "FAULTS": stop the Conduit server under a StartTransfer
# of a stage-in (TYPE 0) or stage-out (TYPE 1) directive in flight, FAULTS
# (JSON members) in force meanwhile; sets cut to "JOB INDEX" of the call
# the stop cut ("" if none came in 120 s; the server is stopped anyway)
# and log_off to where slurmctld's log stood at the stop.  RequestTimeout
# is raised above the stall meanwhile, so only the stop ends the call; an
# answer that got out before the stop is tried again with the next call.
# Only the directives' own starts are held (a requeued job's move-aside
# starts come first, one after the other: held too, they used up
# data_out's time and left its starts to the next poll), and for 12 s:
# longer than a turn of cut_server's loop on a loaded machine, so the
# stop lands while the call it saw is still held.
arm_cut() { # arm_cut "FAULTS": StartTransfer answers held from now on
	sed -i 's/^RequestTimeout=.*/RequestTimeout=25/' "$R/etc/slurm/conduit_bb.conf"
	faults "{\"start_then_stall_ms\": 12000, \"start_then_stall_comment\": \"SLURMTYPE:CONDUIT_(PRE|POST),\", $1}"
}
cut_server() {
	arm_cut "$2"
	cut=""
	tries=0
	while [ -z "$cut" ] && [ $tries -lt 3 ]; do
		tries=$((tries + 1))
		got=""
		end=$(( $(date +%s) + 120 ))
		n=0
		while [ -z "$got" ] && [ "$(date +%s)" -lt "$end" ]; do
			got=$(in_flight "$1" | head -n 1)
			[ -z "$got" ] || break
			# a job Slurm holds back after a requeue (BeginTime, about
			# two minutes) is let go once torn down: when every other
			# job has staged out, the stop can only land in theirs
			[ $((n % 20)) = 0 ] && let_go
			n=$((n + 1))
			sleep 0.1
		done
		log_off=$(stat -c %s "$R/var/log/slurm/slurmctld.log")
		stopped_at=$(date +%s)
		sh "$E2E/cluster.sh" stop-conduit
		[ -n "$got" ] || break
		# shellcheck disable=SC2086
		if still_unsure $got "$1"; then
			cut=$got
		else
			sh "$E2E/cluster.sh" start-conduit
		fi
	done
	cut_tries=$tries
	faults "{$2}"
	sed -i 's/^RequestTimeout=.*/RequestTimeout=5/' "$R/etc/slurm/conduit_bb.conf"
}
faults "{$HOLD}"
wave_t0=$(date +%s)
marks=""
mark() { marks="$marks $1@$(( $(date +%s) - wave_t0 ))s"; }
# Every job is submitted within a minute and they all overlap; submitted
# in one burst, a hundred jobs' first hooks would queue for tens of
# seconds on two cores (each hook is a process), far from what a site
# with a real controller host sees.
lat=""
plain=""
arrays=""
# 8 plain jobs are submitted held (as their user would, sbatch -H) and
# kept for the chaos that needs jobs at a given point: 5 released after
# the first restart, to be requeued while they run, and 3 after that, to
# be hurried in stage-out.  Picked from whatever job happened to be
# running or staging out at that moment, the wave found none when load
# had moved every plain job past that point (the 26.05 cell, with the
# machine loaded by a second job).
for_requeue=""
for_hurry=""
cancelled=""
cut_in=""
in_outage=""
i=0
while [ $i -lt 64 ]; do
	t=$(ms)
	if [ $((i % 16)) = 15 ]; then
		j=$(submit wave-array.sh --array=0-9) && arrays="$arrays $j"
	elif [ $i -ge 52 ] && [ $i -le 59 ]; then
		j=$(submit wave-plain.sh -H) && plain="$plain $j" &&
			if [ $i -le 56 ]; then for_requeue="$for_requeue $j"; else for_hurry="$for_hurry $j"; fi
	else
		j=$(submit wave-plain.sh) && plain="$plain $j"
	fi
	lat="$lat $(( $(ms) - t ))"
	i=$((i + 1))
	case $i in
	32) arm_cut "$FLOW" ;; # the next (plain) job's stage-in will be in flight
	8)  # 5 plain jobs cancelled in stage-in (held there until they are)
		cancelled=$(wait_ids 120 PENDING BurstBufferStageIn 5)
		for j in $cancelled; do in_root scancel "$j"; done
		mark cancelled
		faults "{$FLOW}" ;;
	33) # the server down longer than ServerDownGrace=10 s during stage-in,
		# stopped under a stage-in's StartTransfer in flight; up again once
		# a stage-in poll has given up on it (the job held, released below)
		cut_server 0 "$FLOW"
		cut_in=$cut
		in_tries=$cut_tries
		mark stage-in-cut
		wait_for 120 down_past_grace stage-in && in_outage=yes
		sh "$E2E/cluster.sh" start-conduit
		mark server-up
		release_held ;;
	16 | 48) mark "submitted-$i" ;;
	esac
	[ $i -le 33 ] || release_held
	sleep 0.5
done
mark submitted
expect "wave: 60 jobs and 4 arrays of 10 tasks submitted" \
	sh -c "[ $(echo $plain | wc -w) = 60 ] && [ $(echo $arrays | wc -w) = 4 ]"
expect "wave: 5 jobs cancelled in stage-in" [ "$(echo $cancelled | wc -w)" = 5 ]
expect "wave: a Conduit server stop landed inside a stage-in hook (its StartTransfer in flight: job ${cut_in% *})" \
	[ -n "$cut_in" ]
expect "wave: ... and a stage-in poll found the server down longer than ServerDownGrace" [ -n "$in_outage" ]
restart_ctld
mark restarted
# 5 jobs requeued while running their script (it has written its log),
# and held, as an admin would, until the second slurmctld restart is
# behind them: a requeued job still staging out when slurmctld restarts is
# one Slurm loses (docs/admin.md); released, each goes through stage-out
# again, where the Conduit server will be stopped under one of them
# Each is requeued as soon as its script runs: they need not all run at
# once (each runs 30 s, and they start as their stage-ins end).
release_kept $for_requeue
requeued=""
end=$(( $(date +%s) + 240 ))
while [ "$(echo $requeued | wc -w)" -lt 5 ] && [ "$(date +%s)" -lt "$end" ]; do
	tend
	for j in $(ids_where RUNNING "" 1000 body); do
		case " $for_requeue " in *" $j "*) ;; *) continue ;; esac
		case " $requeued " in *" $j "*) continue ;; esac
		in_root scontrol requeuehold "$j" && requeued="$requeued $j"
	done
	sleep 0.5
done
mark requeued
expect "wave: 5 jobs requeued while running" [ "$(echo $requeued | wc -w)" = 5 ]
# their first attempt staged out (best effort) and torn down
requeued_settled() {
	for j in $requeued; do
		[ "$(state_of "$j")" = PENDING ] && torn_down "$j" || return 1
	done
}
expect "wave: ... each staged its first attempt out and waits, held" wait_for 120 requeued_settled
release_held
# the 3 kept for it run (their stage-in at the usual pace) and their
# stage-out is held from the start (a knob on their transfers only), so
# each stays in it until all 3 are there and hurried, whenever each gets
# there; then every stage-out is held for the restart below
hurry_rx="^(?=.*SLURMJOB:($(echo $for_hurry | tr ' ' '|')),)(?=.*SLURMTYPE:CONDUIT_POST,)"
faults "{$FLOW, \"hold_at\": [{\"state\": \"DATA_TRANSFERRING\", \"ms\": 600000, \"comment\": \"$hurry_rx\"}]}"
release_kept $for_hurry
hurried=$(only=$for_hurry wait_ids 300 STAGE_OUT "" 3)
unset only
faults "{$HOLD}"
for j in $hurried; do in_root scancel --hurry "$j"; done
mark hurried
expect "wave: 3 jobs hurried in stage-out" [ "$(echo $hurried | wc -w)" = 3 ]
# restarted while the held stage-outs only poll (released at once, they
# would all end together, and an ending script is what Slurm loses)
restart_ctld
mark restarted
faults "{$FLOW}"
# the server down longer than ServerDownGrace during stage-out (shorter
# than StageOutDownGrace=120 s), stopped under a stage-out's StartTransfer
# in flight (the requeued jobs' second stage-out is to come, whatever
# else has ended); up again once a stage-out poll has seen it down that
# long
arm_cut "$FLOW"
for j in $requeued; do in_root scontrol release "$j"; done
cut_server 1 "$FLOW"
cut_out=$cut
mark stage-out-cut
out_outage=""
wait_for 120 down_past_grace stage-out && out_outage=yes
sh "$E2E/cluster.sh" start-conduit
mark server-up
expect "wave: a Conduit server stop landed inside a stage-out hook (its StartTransfer in flight: job ${cut_out% *})" \
	[ -n "$cut_out" ]
expect "wave: ... and a stage-out poll found the server down longer than ServerDownGrace" [ -n "$out_outage" ]
faults '{}'
note "wave: cancelled in stage-in: $cancelled; requeued: $requeued; hurried in stage-out: $hurried; the server stopped under the StartTransfer of job ${cut_in% *} (stage-in, stop $in_tries), of job ${cut_out% *} (stage-out, stop $cut_tries)"

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
		awk -F'|' -v rx="$RELEASABLE" -v lost=" $(lost_for_good | tr '\n' ' ') " \
			'($2 != "PENDING" || $3 != 0 || $5 ~ rx) && !index(lost, " " $1 " ")' | grep -c .
}
end=$(( $(date +%s) + 420 ))
# one reading decides: whether Slurm lost a job is read afresh each time,
# and a transient scontrol failure must not flip the verdict after the loop
# and it must say 0 twice, 2 s apart (a job may move between the states
# a reading looks at while it is taken)
settled() {
	left=$(unfinished)
	[ "$left" = 0 ] || return 1
	sleep 2
	left=$(unfinished)
	[ "$left" = 0 ]
}
while ! settled && [ "$(date +%s)" -lt "$end" ]; do
	tend
	sleep 2
done
add_cpu
mark all-ended
wall=$(( $(date +%s) - wave_t0 ))
expect "wave: every job ended within 7 minutes" [ "$left" = 0 ]
[ "$left" = 0 ] || note "wave: not ended: $(in_root squeue -h -r -u alice -o '%A:%T:%r' | tr '\n' ' ')"

# ---- what a site needs ---------------------------------------------------------
# the last teardowns: no burst-buffer script runs, and Slurm keeps no
# buffer of a wave job but those it lost
teardowns_done() {
	[ "$(hooks_now)" = 0 ] || return 1
	ids=" $(in_root squeue -h -t all -u alice -o '%A|%j' | awk -F'|' '$2 ~ /^wave-/ { print $1 }' | tr '\n' ' ') "
	keep=" $(lost_for_good | tr '\n' ' ') "
	for b in $(in_root scontrol show burst 2>/dev/null |
		sed -n -e 's/.*JobID=[0-9]*_[0-9]*(\([0-9]*\)).*/\1/p' -e t -e 's/.*JobID=\([0-9]*\).*/\1/p'); do
		case $ids in *" $b "*) ;; *) continue ;; esac
		case $keep in *" $b "*) ;; *) return 1 ;; esac
	done
}
wait_for 60 teardowns_done

# ---- what the restarts left: conduit-bb status lists it, recover does it ----
# The jobs Slurm lost, by the wave's own reading of squeue, scontrol and
# the node (lost_alone), are each listed by `conduit-bb status`; then
# `conduit-bb recover --cancel-stuck` (a job left in stage-in with no
# buffer can only be cancelled) runs until no stage-out it finishes still
# runs, and every job ends again: what it released or requeued COMPLETED,
# with its outputs (wave_check.py).
# (read before and after status: a job between two states can look lost
# to one reading, as status's own two readings know; 25.05's job 114, an
# array's own task, was, and completed)
before=$(lost_alone | sort -un)
in_root conduit-bb status --json > "$R/tmp/wave-status.json" 2> "$R/tmp/wave-status.err"
alone=$(lost_alone | sort -un | while read -r j; do
	printf '%s\n' $before | grep -qx "$j" && echo "$j"
done | tr '\n' ' ')
listed=" $(/usr/bin/python3 -c 'import json, sys
print(" ".join(str(j["job"]) for j in json.load(open(sys.argv[1]))["lost_by_slurm"]))' \
	"$R/tmp/wave-status.json" 2>/dev/null) "
unlisted=""
for j in $alone; do case $listed in *" $j "*) ;; *) unlisted="$unlisted $j" ;; esac; done
expect "wave: every job Slurm lost in a restart is listed by conduit-bb status (${alone:-none lost})" \
	[ -z "$unlisted" ]
[ -z "$unlisted" ] || note "wave: not listed: $unlisted; status said: $(cat "$R/tmp/wave-status.json" "$R/tmp/wave-status.err" | tr '\n' ' ')"
recover_done() {
	admin_recover --cancel-stuck
	! grep -q 'still running' "$RECOVER_LOG.last"
}
expect "wave: conduit-bb recover leaves no stage-out running" wait_for 180 recover_done
end=$(( $(date +%s) + 300 ))
while ! settled && [ "$(date +%s)" -lt "$end" ]; do
	tend
	sleep 2
done
expect "wave: ... and every job it released or requeued ended" [ "$left" = 0 ]
wait_for 60 teardowns_done
released=$(recovered released)
relaunched=$(recovered requeued)
stuck_cancelled=$(recovered cancelled)
note "wave: conduit-bb recover released ${released:-none}; requeued ${relaunched:-none}; cancelled ${stuck_cancelled:-none}"
# (the first restart comes in stage-in, when a hundred jobs poll; the
# second in stage-out has what runs then, which a fast Slurm may have
# finished: noted)
expect "wave: the stage-in restart came while burst-buffer scripts ran ($(tr '\n' ' ' < "$RESTARTS"))" \
	sh -c "[ \$(grep -c . '$RESTARTS') = 2 ] && [ \$(head -n 1 '$RESTARTS') -gt 0 ]"
all_ids=$(in_root squeue -h -t all -u alice -o '%A|%j|%F|%K|%T' | awk -F'|' '$2 ~ /^wave-/')
printf '%s\n' "$all_ids" > "$R/tmp/wave-jobs"
lost=$(lost_for_good | tr '\n' ' ')
killed=$(killed_by_slurm)
[ -z "$killed" ] || note "wave: slurmctld killed the running burst-buffer scripts of jobs $killed as it shut down"
[ -z "$lost" ] || note "wave: Slurm lost the burst buffers of jobs $lost in a slurmctld restart (they stay in stage-in or stage-out; docs/admin.md); conduit_bb's part is checked for them too"
/usr/bin/python3 "$E2E/wave_check.py" "$R" "$SRV" "$R/tmp/wave-jobs" \
	"$cancelled" "$requeued" "$hurried" "$lost" "$killed" \
	"$released" "$relaunched" "$stuck_cancelled" > "$R/tmp/wave-check" 2>&1
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
note "wave: timeline:$marks"
note "wave: 100 jobs in ${wall} s; slurmctld ${cpu_total} CPU-s; peak ${peak:-0} hook processes at once; sbatch median ${med} ms, max ${max} ms"

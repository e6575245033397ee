#!/bin/sh
# demo.sh - `make demo`: watch data flow through a real Slurm.
#
# Sets up (once, cached) a single-node Slurm 24.11 in a Debian 13 root
# with conduit_bb.so and the Conduit test server (tests/e2e/), submits a
# job as user alice that stages a dataset in, computes on it and stages
# the results out, shows what the user sees over time, then stops the
# cluster.  Needs root; touches only 127.0.0.1 and the cached root.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/tests/e2e/lib.sh"
E2E=$HERE/tests/e2e
trap 'sh "$E2E/cluster.sh" stop' EXIT
trap 'exit 130' INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; }

say "setting up a single-node Slurm 24.11 with conduit_bb (about a minute the first time)"
sh "$E2E/setup.sh" 2>&1 | grep '^e2e:' || exit 1
# a cluster with no jobs and a Conduit server with no transfers: what an
# earlier run left in the cached root (the end-to-end suite's stuck jobs,
# or transfers of a job 1 a minute ago) must not hold the node or stand
# for this run's job 1
rm -rf "$R/var/spool/slurmctld/"* "$R/var/spool/slurmd/"* "$R/var/spool/conduit_bb" \
	"$R$SRV/"*.json "$R$SRV/rpc.log"
sh "$E2E/cluster.sh" start || exit 1
in_root sinfo

# a dataset: a year of daily temperatures for four stations
rm -rf "$R/data/results" "$R$JOBS" # job ids start at 1 again: no files of an earlier run
mkdir -p "$R/data/climate" "$R/data/results" "$R$JOBS"
awk 'BEGIN { srand(2026); print "station,day,celsius";
	split("oslo lima nairobi perth", s, " "); split("6 19 18 17", base, " ");
	split("9 3 2 -5", swing, " ");
	for (i = 1; i <= 4; i++) for (d = 1; d <= 365; d++)
		printf "%s,%d,%.1f\n", s[i], d,
			base[i] - swing[i] * cos(6.2832 * (d - 15) / 365) + 3 * (rand() - 0.5) }' \
	> "$R/data/climate/daily-2026.csv"
chmod -R a+rX "$R/data/climate"
chown 2001:2001 "$R/data/results" "$R$JOBS"
cat > "$R$JOBS/climate.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=climate
#SBATCH --output=/home/alice/jobs/climate-%j.out
#CONDUIT_PRE  cp -r /data/climate /home/alice/jobs/input-%j/
#CONDUIT_POST cp -r /home/alice/jobs/run-%j /data/results/run-%j
in=/home/alice/jobs/input-$SLURM_JOB_ID/climate
out=/home/alice/jobs/run-$SLURM_JOB_ID
mkdir -p "$out"
echo "staged in: $(wc -l < "$in/daily-2026.csv") lines from $CONDUIT_BB_STAGE_IN_COUNT directive(s)"
echo "station,mean,max" > "$out/summary.csv"
awk -F, 'NR > 1 { n[$1]++; t[$1] += $3; if (!($1 in hi) || $3 > hi[$1]) hi[$1] = $3 }
	END { for (s in n) printf "%s,%.1f,%.1f\n", s, t[s] / n[s], hi[s] }' \
	"$in/daily-2026.csv" | sort >> "$out/summary.csv"
sleep 3  # a real job would take longer
echo "computed $(($(wc -l < "$out/summary.csv") - 1)) station summaries"
JOB
chown 2001:2001 "$R$JOBS/climate.sh"
# slow the transfers a little so each stage can be seen
printf '{"delay_ms": {"DATA_TRANSFERRING": 2000}}\n' > "$R$SRV/faults.json.new" &&
	mv "$R$SRV/faults.json.new" "$R$SRV/faults.json"

say "the job script (as user alice)"
cat "$R$JOBS/climate.sh"

say "submit it"
show "sbatch climate.sh"
J=$(as_user alice sbatch --parsable --chdir=$JOBS "$JOBS/climate.sh") || exit 1
echo "Submitted batch job $J"

say "what alice sees while it runs (squeue, and bbstat for the transfers)"
printf '%5s  %-10s %-34s %s\n' TIME STATE REASON "TRANSFERS (bbstat)"
t0=$(date +%s)
last=""
while :; do
	st=$(in_root squeue -h -j "$J" -o '%T|%r' 2>/dev/null)
	[ -z "$st" ] && st="$(in_root scontrol show job -o "$J" | tr ' ' '\n' | sed -n 's/^JobState=//p')|"
	tr=$(as_user alice scontrol show bbstat conduit "$J" 2>/dev/null |
		awk 'NR > 1 { printf "%s:%s ", $1, $3 }' | sed 's/TRANSFER_//g')
	now="${st%%|*}|${st#*|}|$tr"
	if [ "$now" != "$last" ]; then
		printf '%4ss  %-10s %-34s %s\n' $(( $(date +%s) - t0 )) "${st%%|*}" "${st#*|}" "$tr"
		last=$now
	fi
	case ${st%%|*} in COMPLETED|FAILED|CANCELLED) break ;; esac
	[ $(( $(date +%s) - t0 )) -gt 120 ] && { echo "demo: the job did not finish in 120 s"; exit 1; }
	sleep 0.5
done

say "per-transfer detail"
show "scontrol show bbstat conduit $J"
as_user alice scontrol show bbstat conduit "$J"

say "the job's output"
cat "$R$JOBS/climate-$J.out"

say "the results, staged out to /data/results/run-$J"
show "ls -l /data/results/run-$J && cat /data/results/run-$J/summary.csv"
in_root ls -l "/data/results/run-$J"
cat "$R/data/results/run-$J/summary.csv"

printf '{}\n' > "$R$SRV/faults.json.new" && mv "$R$SRV/faults.json.new" "$R$SRV/faults.json"
state=$(in_root scontrol show job -o "$J" | tr ' ' '\n' | sed -n 's/^JobState=//p')
say "done: job $J is $state; stopping the cluster"
[ "$state" = COMPLETED ] && [ -s "$R/data/results/run-$J/summary.csv" ]

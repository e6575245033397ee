#!/bin/sh
# run.sh - the end-to-end suite on one real Slurm: slurmctld, slurmd and
# munge in a Debian root (tests/e2e/lib.sh says which), conduit_bb.so
# built there against the Lua that Slurm uses, and the Conduit test
# server, all on 127.0.0.1.  Jobs run as alice.  Prints one line per
# check, each naming the Slurm ("ok - [24.11] ..."), and
# "e2e: N passed, N failed".  CBB_E2E_PARTS chooses the scenarios (the
# profile's by default: basic restarts faults workloads features wave;
# the same but the wave for 24.11-lua5.4 (24.11's Slurm, whose wave
# 24.11 runs); switch for 26.05-switch; basic restarts workloads features
# wave, the parts that tell Slurm releases apart, for 25.05-lua5.3 and
# 25.11-lua5.4).
set -u
. "$(dirname "$0")/lib.sh"
E2E=$HERE/tests/e2e
# one suite per root at a time (make check runs the roots side by side)
exec 9>"$R.lock"
flock -n 9 || { echo "e2e: another suite is running on $R"; echo "e2e: 0 passed, 1 failed"; exit 1; }
pass=0
fail=0
t_start=$(date +%s)
trap 'sh "$E2E/cluster.sh" stop' EXIT
trap 'exit 130' INT TERM

# ---- set up a clean cluster -------------------------------------------------
sh "$E2E/setup.sh" || { echo "e2e: setup failed"; echo "e2e: 0 passed, 1 failed"; exit 1; }
LABEL=$(slurm_label)
. "$E2E/checks.sh"
sh "$E2E/cluster.sh" stop
rm -rf "$R/var/spool/slurmctld/"* "$R/var/spool/slurmd/"* "$R/var/spool/conduit_bb" \
	"$R$SRV/"*.json "$R$SRV/rpc.log" "$R/var/log/slurm/"*.log "$R$JOBS" "$R/data/"* "$R/scratch/"* \
	"$R$SESSIONS/state.json" "$R$SESSIONS/log" "$R$SESSIONS/faults.json"
mkdir -p "$R$JOBS/multi" "$R/data/in/set/sub" "$R/data/mv" "$R/data/out"
echo alpha > "$R/data/in/a.txt"
echo bravo > "$R/data/in/b.txt"
echo charlie > "$R/data/in/set/sub/c.txt"
echo spaced > "$R/data/in/with space.txt"
echo mike > "$R/data/mv/m.txt"
chmod -R a+rX "$R/data/in"
chown -R 2001:2001 "$R$JOBS" "$R/data/mv" "$R/data/out"
t0=$(date +%s)
expect "cluster starts: munged, Conduit test server, MariaDB, slurmdbd, slurmctld, slurmd; node idle" \
	sh "$E2E/cluster.sh" start
note "Slurm $(in_root /usr/sbin/slurmctld -V) in $R; slurmctld loaded $(lua_of_slurmctld)"
expect "slurmctld runs burst_buffer.lua in Lua $LUA (its memory map)" \
	sh -c "echo '$(lua_of_slurmctld)' | grep -q 'liblua$LUA'"
note "accounting: $(in_root /usr/sbin/slurmdbd -V) over MariaDB $(in_root mariadb -N -e 'select version()')"
note "setup took $((t0 - t_start)) s, cluster start $(( $(date +%s) - t0 )) s"

for part in ${CBB_E2E_PARTS:-$DEFAULT_PARTS}; do
	t0=$(date +%s)
	# the wave keeps both cores busy: tests/run-checks.sh holds it back
	# (CBB_E2E_WAVE_GATE: a file that appears) until the checks that
	# measure time on this machine are done
	if [ "$part" = wave ] && [ -n "${CBB_E2E_WAVE_GATE:-}" ]; then
		while [ ! -e "$CBB_E2E_WAVE_GATE" ]; do sleep 1; done
		note "the wave waited $(( $(date +%s) - t0 )) s for the timing checks beside it"
		t0=$(date +%s)
	fi
	# and one wave at a time across the roots (CBB_E2E_WAVE_LOCK, a file
	# to flock): two waves side by side on two cores load the machine
	# past what any site's controller sees, and Slurm then loses jobs in
	# its restarts (docs/admin.md) that the wave cannot tell from ours.
	# The daemons the wave restarts close fd 8 (cluster.sh).
	if [ "$part" = wave ] && [ -n "${CBB_E2E_WAVE_LOCK:-}" ]; then
		exec 8>"$CBB_E2E_WAVE_LOCK"
		flock -w 2400 8 || note "the wave lock was not free after 40 minutes: running anyway"
		note "the wave waited $(( $(date +%s) - t0 )) s for the other roots' waves"
		t0=$(date +%s)
	fi
	. "$E2E/$part.sh"
	[ "$part" = wave ] && [ -n "${CBB_E2E_WAVE_LOCK:-}" ] && exec 8>&-
	note "$part took $(( $(date +%s) - t0 )) s"
done

note "e2e took $(( $(date +%s) - t_start )) s"
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

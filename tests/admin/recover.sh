#!/bin/sh
# recover.sh - `conduit-bb recover` on the StateDir and test server the
# real hooks filled (tests/admin/jobs.lua): its staging-out job, whose
# one stage-out transfer the server holds, is finished by the command
# once squeue says Slurm ended the job, and left to Slurm while squeue
# says it is pending; StateDir owned by nobody as SlurmUser's would be,
# run as root.  Each step waits on what the command prints or leaves,
# never on the clock.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
CBB=$here/build/conduit-bb
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
. tests/admin/jobs.sh
jobs_setup recover 710000
fail() { echo "FAILED: $*"; echo "--- recover said:"; cat "$t/out"; exit 1; }
jobs_as_slurmuser
chown nobody "$work/log/audit.log"
: > "$t/jobstates/.calls" && chmod 0666 "$t/jobstates/.calls" # (run as nobody)
recover() { # recover ARGS...: $rc, output in $t/out
	CONDUIT_BB_CONF=$t/conduit_bb.conf FAKE_SQUEUE_DIR=$t/jobstates "$CBB" recover "$@" >"$t/out" 2>&1
	rc=$?
}
posts() { # StartTransfers the server took for the job's stage-out
	grep '"method": "StartTransfer"' "$t/server/rpc.log" | grep '"status": "OK"' |
		grep -c "SLURMJOB:$1,.*SLURMTYPE:CONDUIT_POST,"
}
plan=$(ls "$work/state/"*".$out.outplan" 2>/dev/null)
[ -n "$plan" ] || fail "no stage-out plan for job $out (data_out saves one)"

# squeue: pending (alive): left to Slurm, nothing started
echo PENDING > "$t/jobstates/$out"
recover
[ "$rc" -eq 0 ] || fail "alive: exit $rc"
grep -q "^job $out: left to Slurm (squeue: PENDING)$" "$t/out" || fail "alive: not left to Slurm"
[ "$(posts "$out")" = 1 ] || fail "alive: $(posts "$out") starts, not 1"

# Slurm ended it for good: one poll; the server still holds the transfer
echo COMPLETED > "$t/jobstates/$out"
recover "$out"
[ "$rc" -eq 0 ] || fail "held: exit $rc"
grep -q "^job $out: stage-out still running" "$t/out" || fail "held: not said to run"
[ -f "$plan" ] || fail "held: the plan went while its transfer runs"

# the server lets it finish: the command sees it end, nothing started again
echo '{}' > "$t/server/faults.json.new" && mv "$t/server/faults.json.new" "$t/server/faults.json"
i=0
while [ -f "$plan" ] && [ $i -lt 300 ]; do
	recover "$out"
	[ "$rc" -eq 0 ] || fail "finishing: exit $rc"
	i=$((i + 1))
done
[ ! -f "$plan" ] || fail "the plan is still there after $i runs"
grep -q "^job $out: conduit-bb recover: stage-out of attempt 0 completed after Slurm dropped it (the job is COMPLETED)$" "$t/out" ||
	fail "no line saying it completed"
[ "$(posts "$out")" = 1 ] || fail "$(posts "$out") starts of the stage-out, not 1"
grep "\"job\":$out," "$work/log/audit.log" | grep -q '"finished_by":"conduit-bb recover"' ||
	fail "no AuditLog line naming the command"
[ ! -f "$work/state/"*".$out.started" ] || fail "the job's records stayed"
[ "$(cat "$work/out/o1.txt" 2>/dev/null)" = alpha ] || fail "the output did not arrive"

# nothing left: looked at none; a bad argument is a usage error
recover
[ "$rc" -eq 0 ] && grep -q "^recover: 0 jobs with a stage-out plan looked at$" "$t/out" || fail "empty: exit $rc"
"$CBB" recover --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad argument is not a usage error"
echo "ok"

#!/bin/sh
# status.sh - `conduit-bb status` on a StateDir and a Conduit test server
# that the real hooks filled (tests/admin/jobs.lua: jobs done, failed,
# waiting on an outage, running, staging out), with StateDir and the
# client key owned by nobody as SlurmUser's would be, run as root (it
# becomes StateDir's owner).  Asserts the rows, that exactly one Query was
# sent for all the jobs (one user's, asked as that user), --stuck, --all,
# --json, and the server down.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
CBB=$here/build/conduit-bb
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
. tests/admin/jobs.sh
jobs_setup status 700000
fail() { echo "FAILED: $*"; echo "--- status said:"; cat "$t/out"; exit 1; }
jobs_as_slurmuser

status() { # status ARGS...: $rc, output in $t/out, Queries sent in $queries
	before=$(grep -c '"method": "Query"' "$t/server/rpc.log")
	CONDUIT_BB_CONF=$t/conduit_bb.conf FAKE_SQUEUE_DIR=$t/jobstates "$CBB" status "$@" >"$t/out" 2>"$t/err"
	rc=$?
	queries=$(( $(grep -c '"method": "Query"' "$t/server/rpc.log") - before ))
}
row() { # row JOB 'regex of the rest'
	grep -Eq "^$1 +$2" "$t/out" || fail "no row for job $1 matching: $2"
}

status
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$t/err")"
[ "$queries" -eq 1 ] || fail "$queries Queries, not 1"
# that one Query matched every transfer of the five jobs: 2 + 2 + 2 + 1,
# and the 4 place probes of the two started stage-outs (2 each: the
# destination and the source's name in it; a stage-out runs again on a
# requeue, so it learns first which places it creates)
tail -n 1 "$t/server/rpc.log" | grep -q '"cn": "conduit-service".*"user": "61001".*"matched": 11' ||
	fail "the Query did not match the 7 transfers and 4 probes: $(tail -n 1 "$t/server/rpc.log")"
row "$running" 'cbbuser +in +0 +0/2 +0 B +- +[0-9ms]+ +running$'
row "$failed" 'cbbuser +in +0 +0/2 +0 B +- +[0-9ms]+ +FAILED$'
grep -q "^    line 4: failed: ERROR_VALIDATION: failed to get source\[in/missing.txt\]$" "$t/out" ||
	fail "no detail line for the failed directive"
row "$outage" '- +- +0 +0/0 +0 B +- +- +outage \(the hooks found the server unreachable [0-9ms]+ ago\)$'
row "$out" 'cbbuser +out +0 +0/1 +0 B +- +[0-9ms]+ +running$'
grep -q "^$done " "$t/out" && fail "the finished job $done is listed"
grep -q '^status: 4 jobs staging (1 failed, 0 stuck, 1 waiting on an outage, 0 stage-outs dropped by Slurm); 1 Query$' "$t/out" ||
	fail "summary line"
cat "$t/out"

# nothing moves in the held transfers: with --stuck 1s they are stuck
sleep 2
status --stuck 1s
[ "$rc" -eq 0 ] && [ "$queries" -eq 1 ] || fail "--stuck: exit $rc, $queries Queries"
row "$running" '.* STUCK \(nothing moved for [0-9]+s\)$'
row "$out" '.* STUCK \(nothing moved for [0-9]+s\)$'
grep -q '(1 failed, 2 stuck, 1 waiting on an outage, 0 stage-outs dropped by Slurm); 1 Query$' "$t/out" || fail "stuck summary"

status --all
row "$done" 'cbbuser +out +0 +1/1 +6 B +- +[0-9ms]+ +done$'

status --json
[ "$rc" -eq 0 ] && [ "$queries" -eq 1 ] || fail "--json: exit $rc, $queries Queries"
python3 - "$t/out" "$running" "$failed" "$outage" "$out" <<'PY' || fail "--json"
import json, sys
d = json.load(open(sys.argv[1]))
running, failed, outage, out = map(int, sys.argv[2:])
jobs = {j["job"]: j for j in d["jobs"]}
assert set(jobs) == {running, failed, outage, out}, jobs.keys()
assert d["query"] == {"count": 1, "ok": True, "transfers": 11, "error": None}, d["query"]
r = jobs[running]
assert (r["user"], r["stage"], r["done"], r["total"], r["state"]) == ("cbbuser", "in", 0, 2, "running"), r
f = jobs[failed]
bad = [x for x in f["directives"] if x["state"] == "failed"]
assert len(bad) == 1 and bad[0]["line"] == 4 and bad[0]["error"] == "ERROR_VALIDATION", f
assert jobs[outage]["state"] == "outage" and jobs[outage]["outage_s"] >= 0, jobs[outage]
assert jobs[out]["stage"] == "out" and jobs[out]["total"] == 1, jobs[out]
PY

# Slurm ended the staging-out job for good (a slurmctld restart killed its
# stage-out hooks): with squeue saying so, its row says the stage-out was
# dropped and who finishes it; one squeue asked about it, none otherwise
echo COMPLETED > "$t/jobstates/$out"
: > "$t/jobstates/.calls" && chmod 0666 "$t/jobstates/.calls" # (status runs as nobody)
status
[ "$rc" -eq 0 ] || fail "dropped: exit $rc"
row "$out" 'cbbuser +out +0 +0/1 .* dropped \(the job is COMPLETED and Slurm runs no stage-out hook for it any more: the next start or teardown of any job finishes its stage-out\)$'
grep -q '(1 failed, 0 stuck, 1 waiting on an outage, 1 stage-out dropped by Slurm); 1 Query$' "$t/out" ||
	fail "dropped summary"
[ "$(wc -l < "$t/jobstates/.calls")" = 1 ] || fail "dropped: $(wc -l < "$t/jobstates/.calls") squeue calls, not 1"
status --json
python3 - "$t/out" "$out" "$running" <<'PY' || fail "dropped --json"
import json, sys
d = json.load(open(sys.argv[1]))
jobs = {j["job"]: j for j in d["jobs"]}
o, r = jobs[int(sys.argv[2])], jobs[int(sys.argv[3])]
assert o["dropped_stage_out"] is True and o["state"] == "dropped", o
assert r["dropped_stage_out"] is False, r
PY
echo STAGE_OUT > "$t/jobstates/$out"
status
row "$out" 'cbbuser +out +0 +0/1 .* (running|STUCK.*)$'
# ... and dropped again once no stage-out hook of the job has run for ten
# minutes (each one marks its plan): Slurm has no stage-out thread for it
touch -d '-11 min' "$work/state/"*".$out.outplan"
status
row "$out" 'cbbuser +out +0 +0/1 .* dropped \(the job is STAGE_OUT and Slurm runs no stage-out hook'

# the server down: StateDir's side only, exit 1, the reason on stderr
sh tests/conduit/server-ctl.sh stop "$t/server"
CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" status >"$t/out" 2>"$t/err"
rc=$?
[ "$rc" -eq 1 ] || fail "server down: exit $rc"
grep -q "^conduit-bb: a Query for 5 jobs failed: conduit: connect to 127.0.0.1:[0-9]* refused" "$t/err" ||
	fail "server down: stderr $(cat "$t/err")"
row "$running" '- +in +0 +0/2 .* unknown$'
echo "ok"

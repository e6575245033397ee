#!/bin/sh
# recover.sh - `conduit-bb recover` on the StateDir and test server the
# real hooks filled (tests/admin/jobs.lua): its staging-out job, whose
# one stage-out transfer the server holds, is finished by the command
# once squeue says Slurm ended the job, and left to Slurm while squeue
# says it is pending; StateDir owned by nobody as SlurmUser's would be,
# run as root.  Then the jobs a restart left where Slurm will not move
# them, from squeue's, scontrol's and sstat's answers (fake-squeue's .rows etc.):
# each listed by `conduit-bb status`, and what recover asks of scontrol.  Each step waits on what the command prints or leaves,
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

J=$t/jobstates
# a stuck job StateDir knows (jobs.lua's `running`, two stage-in
# transfers the server holds): cancelled, then what its hurried teardown
# would do, at once (Slurm may kill that teardown with the job's
# scripts): its transfers aborted on the server, its records gone
active_of() { # active_of JOB: its transfers the server has active
	/usr/bin/python3 -c 'import json, sys
print(sum(1 for t in json.load(open(sys.argv[1])).values()
          if t["active"] and t["comment"].startswith("SLURMJOB:%s," % sys.argv[2])))' \
		"$t/server/state.json" "$1"
}
[ "$(active_of "$running")" = 2 ] || fail "jobs.lua's stage-in is not running ($(active_of "$running") active)"
echo "$running|PENDING|staging-in|0:00|0.00000000023283|1|N/A|0|" > "$J/.rows"
: > "$J/.actions" && chmod 0666 "$J/.actions"
recover --cancel-stuck "$running"
[ "$rc" -eq 0 ] && [ "$(cat "$J/.actions")" = "scancel $running" ] || fail "--cancel-stuck $running: exit $rc, $(cat "$J/.actions")"
# (the server ends an aborted transfer on its own time)
i=0
while [ "$(active_of "$running")" != 0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(active_of "$running")" = 0 ] || fail "its stage-in transfers still run ($(active_of "$running"))"
grep '"method": "StopTransfer"' "$t/server/rpc.log" | grep -q '"status": "OK"' || fail "no StopTransfer"
[ ! -f "$work/state/"*".$running.started" ] || fail "its records stayed"
[ -f "$work/state/"*".$running.over" ] || fail "no mark to stop a late stage hook"
rm "$J/.rows"
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
[ "$rc" -eq 0 ] && grep -q "^recover: 0 jobs with a stage-out plan looked at; 0 jobs Slurm lost in a restart$" "$t/out" ||
	fail "empty: exit $rc"
"$CBB" recover --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad argument is not a usage error"
"$CBB" recover --after 1h >/dev/null 2>&1
[ $? -eq 2 ] || fail "--after 1h is not a usage error"

# ---- what a restart left where Slurm will not move it (src/cli/slurmlost.c)
# squeue's rows, scontrol's buffers and boot time and sstat's steps as
# Slurm writes them: 801 held for a hook Slurm killed (no message), 802
# RUNNING five minutes in pre-run with nothing on its node, launched just
# before slurmctld started, 803 in stage-in and 804 in STAGE_OUT with no
# buffer; and the near misses: 805 held for a failure of conduit_bb's own
# (it says why), 806 running its batch step, 807 in stage-in with its
# buffer, 808 launched long before the restart
J=$t/jobstates
boot=$(date +%s)
at() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
cat > "$J/.rows" <<ROWS
801|PENDING|complete|0:00|0.00000000000000|1|N/A|0|
802|RUNNING|pre-run|5:00|0.00000000023283|1|$(at $((boot - 3)))|0|
803|PENDING|staging-in|0:00|0.00000000023283|1|N/A|0|
804|STAGE_OUT|staging-out|0:40|0.00000000023283|1|$(at $((boot - 40)))|0|
805|PENDING|complete|0:00|0.00000000000000|1|N/A|0|
806|RUNNING|running|5:00|0.00000000023283|1|$(at $((boot - 3)))|0|
807|PENDING|staging-in|0:00|0.00000000023283|1|N/A|0|
808|RUNNING|running|1-00:00:00|0.00000000023283|1|$(at $((boot - 86400)))|0|
ROWS
printf 'burst_buffer/lua: JobHeldAdmin: slurm_bb_test_data_in failed: |\n' > "$J/.reason.801"
printf 'burst_buffer/lua: JobHeldAdmin: slurm_bb_test_data_in failed: conduit: server unreachable for 12 s|\n' > "$J/.reason.805"
# 809 and 810 held with the reason's text gone (a restart, an update):
# their SystemComment's newest entry says which hook, and how it failed
for k in 809 810; do
	echo "$k|PENDING|complete|0:00|0.00000000000000|1|N/A|0|" >> "$J/.rows"
	echo 'JobHeldAdmin|' > "$J/.reason.$k"
done
{
	echo 'JobId=809 JobName=x SystemComment=12/03/26 12:00:00 burst_buffer/lua: slurm_bb_data_in: '
	echo '   JobState=PENDING Reason=JobHeldAdmin Dependency=(null)'
	echo '   SystemComment=12/03/26 12:40:01 burst_buffer/lua: slurm_bb_test_data_in: conduit: server unreachable'
	echo '12/03/26 12:48:18 burst_buffer/lua: slurm_bb_test_data_in: '
	echo '   StdErr=/dev/null'
} > "$J/.job.809"
{
	echo 'JobId=810 JobName=x'
	echo '   SystemComment=12/03/26 12:48:18 burst_buffer/lua: slurm_bb_test_data_in: '
	echo '12/03/26 12:49:01 burst_buffer/lua: slurm_bb_test_data_in: conduit: server unreachable for 12 s'
	echo '   StdErr=/dev/null'
} > "$J/.job.810"
# 811 ended with no stage-out (slurmscriptd gone: its post_run "failed:
# (null)", then two teardowns; Slurm removed the buffer and ended it);
# 812 held for a stage-in poll Slurm could not run, its reason written
# over by the failed teardown's; near misses: 813 ended and held for a
# post_run failure of conduit_bb's own (it says why), 814 ended and not
# held
cat >> "$J/.rows" <<ROWS
811|COMPLETED|complete|0:10|0.00000000000000|1|$(at $((boot - 3600)))|0|
812|PENDING|complete|0:00|0.00000000000000|1|N/A|0|
813|COMPLETED|complete|0:10|0.00000000000000|1|$(at $((boot - 3600)))|0|
814|COMPLETED|complete|0:10|0.00000000023283|1|$(at $((boot - 3600)))|0|
815|PENDING|complete|0:00|0.00000000000000|1|N/A|0|
ROWS
echo 'burst_buffer/lua: JobHeldAdmin: teardown failed: (null)|' > "$J/.reason.812"
# (815: as 812, in 24.11's words)
echo 'burst_buffer/lua: teardown: (null)|' > "$J/.reason.815"
for k in 811 812 813 815; do
	case $k in
	811) first='slurm_bb_post_run: (null)' ;;
	812|815) first='slurm_bb_test_data_in: (null)' ;;
	813) first='slurm_bb_post_run: conduit: cannot save the plan' ;;
	esac
	{
		echo "JobId=$k JobName=x"
		echo "   SystemComment=12/03/26 16:30:43 burst_buffer/lua: $first"
		echo '12/03/26 16:30:43 burst_buffer/lua: teardown: (null)'
		echo '12/03/26 16:30:53 burst_buffer/lua: teardown: (null)'
		echo '   StdErr='
	} > "$J/.job.$k"
done
printf 'Name=lua OtherTimeout=60\n  Allocated Buffers:\n    JobID=807 CreateTime=x State=allocated\n' > "$J/.burst"
printf 'Configuration data as of x\nBOOT_TIME               = %s\nBcastExclude = x\n' "$(at "$boot")" > "$J/.config"
echo "806.batch" > "$J/.sstat.806"
# 804: no hook of its stage-out ever ran (Slurm 25.11 takes job ends
# while slurmscriptd is gone: post_run "failed ... response=(null)"), so
# StateDir holds nothing of it; Slurm's record and its copy of the script
# (scontrol show job --json, write batch_script) are all there is
echo STAGE_OUT > "$J/804"
printf '#!/bin/bash\n#CONDUIT_POST cp in/a.txt out/rb-%%j.txt\n#CONDUIT_POST --when=failure cp in/a.txt out/rb-fail.txt\nsrun true\n' > "$J/.script.804"
now=$(date +%s)
cat > "$J/.json.804" <<JSON
{"jobs": [{"job_id": 804, "user_id": 61001, "user_name": "", "name": "rb",
  "cluster": "testcluster", "current_working_directory": "$work",
  "restart_cnt": 0, "submit_time": {"set": true, "infinite": false, "number": $((now - 120))},
  "end_time": {"set": true, "infinite": false, "number": $((now - 60))},
  "array_job_id": {"set": true, "infinite": false, "number": 0},
  "array_task_id": {"set": false, "infinite": false, "number": 0},
  "job_state": ["COMPLETED", "STAGE_OUT"],
  "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "infinite": false, "number": 0},
                "signal": {"id": {"set": false, "infinite": false, "number": 0}, "name": ""}}}],
 "meta": {}}
JSON
: > "$J/.actions" && chmod 0666 "$J/.actions"
status() {
	CONDUIT_BB_CONF=$t/conduit_bb.conf FAKE_SQUEUE_DIR=$J "$CBB" status "$@" >"$t/out" 2>&1
	rc=$?
}
status
for w in "801: held: Slurm killed its slurm_bb_test_data_in in a restart: conduit-bb recover releases it" \
	"802: RUNNING 300 s with nothing running on its node: its launch was lost in a restart (burst buffer pre-run): conduit-bb recover requeues it" \
	"803: pending in stage-in with no buffer left in Slurm: no stage-in hook will run for it: Slurm can neither start nor requeue it: conduit-bb recover --cancel-stuck cancels it" \
	"804: in STAGE_OUT with no buffer left in Slurm"; do
	grep -qF "lost by Slurm: job $w" "$t/out" || fail "status does not list job ${w%%:*} as lost"
done
grep -qF "lost by Slurm: job 809: held: Slurm killed its slurm_bb_test_data_in in a restart" "$t/out" ||
	fail "status does not list 809 (its SystemComment)"
grep -qF "lost by Slurm: job 811: COMPLETED with no stage-out: Slurm could not run its slurm_bb_post_run (slurmscriptd gone) and removed its buffer: conduit-bb recover builds its stage-out from Slurm's record and script and finishes it" "$t/out" ||
	fail "status does not list 811 (unstaged)"
grep -qF "lost by Slurm: job 812: held: Slurm killed its slurm_bb_test_data_in in a restart" "$t/out" ||
	fail "status does not list 812 (held, the teardown's reason over it)"
! grep -qE "lost by Slurm: job (80[5678]|810|813|814)" "$t/out" || fail "status lists a job Slurm still drives"
grep -q "; 8 jobs lost by Slurm in a restart$" "$t/out" || fail "status's summary does not count them"
status --json
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
k = {j["job"]: j["kind"] for j in d["lost_by_slurm"]}
assert k == {801: "held", 802: "launch", 803: "stage-in", 804: "stage-out", 809: "held",
             811: "unstaged", 812: "held", 815: "held"}, k' "$t/out" ||
	fail "status --json: lost_by_slurm"

# recover: 801 released, 802 requeued, 803 only said, 804 left to Slurm
recover
[ "$rc" -eq 1 ] || fail "lost: exit $rc (811's record cannot be read: 1)"
[ "$(cat "$J/.actions")" = "release 801
requeue 802
release 809
release 812
release 815" ] || fail "lost: scontrol was asked: $(cat "$J/.actions")"
grep -q "^job 801: held: .*; released: Slurm stages it in again$" "$t/out" || fail "lost: 801 not said released"
grep -q "^job 804: no hook of its stage-out ever ran: its plan built from Slurm's copy of its script$" "$t/out" ||
	fail "lost: 804's plan not built"
grep -q "^job 803: .*cancel it (conduit-bb recover --cancel-stuck 803) and submit it again$" "$t/out" ||
	fail "lost: 803 not said to be cancelled by hand"
grep -q "; 8 jobs Slurm lost in a restart$" "$t/out" || fail "lost: not counted"
grep -q "^error: job 811: its stage-out plan cannot be built: scontrol show job failed: slurm_load_jobs error: Invalid job id specified$" "$t/out" ||
	fail "lost: 811 without a record not said"
# --cancel-stuck, for the job named only
: > "$J/.actions"
recover --cancel-stuck 803
[ "$rc" -eq 0 ] && [ "$(cat "$J/.actions")" = "scancel 803" ] || fail "--cancel-stuck 803: $(cat "$J/.actions")"
grep -q "^job 803: .*; cancelled: its stage-in transfers are aborted; submit it again$" "$t/out" || fail "803 not said cancelled"
# --after: five minutes in pre-run is not lost when pre_run may take ten
: > "$J/.actions"
recover --after 10m 802
[ "$rc" -eq 0 ] && [ ! -s "$J/.actions" ] || fail "--after 10m: $(cat "$J/.actions")"
# a job the second reading sees otherwise (801 released meanwhile, 802
# ended) is left alone
grep -v '^80[12]|' "$J/.rows" > "$J/.rows2"
echo "801|PENDING|pending|0:00|0.00000000023283|1|N/A|0|" >> "$J/.rows2"
echo "802|COMPLETED|complete|5:00|0.00000000023283|1|$(at $((boot - 3)))|0|" >> "$J/.rows2"
recover 801 802
[ "$rc" -eq 0 ] && [ ! -s "$J/.actions" ] || fail "second reading: $(cat "$J/.actions")"
rm "$J/.rows2"
# scontrol refusing: said, exit 1
echo "Requested operation is presently disabled" > "$J/.refuse.requeue"
recover 802
[ "$rc" -eq 1 ] && grep -q "^error: job 802: .*scontrol requeue 802 failed: requeue: Requested operation is presently disabled$" "$t/out" ||
	fail "a refused requeue: exit $rc"
# 804's built plan, finished as a hook-saved one is: its one stage-out
# that runs (the --when=failure one skipped: the job exited 0), once,
# to the path its %j names; then a mark, and never built again
i=0
until grep -q "^job 804: conduit-bb recover: stage-out of attempt 0 completed after Slurm dropped it (the job is STAGE_OUT)$" "$t/out"; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "804's stage-out did not end"
	recover 804
done
[ -f "$work/out/rb-804.txt" ] && [ ! -e "$work/out/rb-fail.txt" ] || fail "804: $(ls "$work/out")"
[ "$(posts 804)" = 1 ] || fail "804: $(posts 804) starts, not 1"
ls "$work/state/"*.804.outdone >/dev/null 2>&1 || fail "804: no .outdone mark"
status
grep -qF "lost by Slurm: job 804: in STAGE_OUT with no buffer left in Slurm: no stage-out hook will run for it: its stage-out was finished by conduit_bb; Slurm keeps showing STAGE_OUT" "$t/out" ||
	fail "status does not say 804's stage-out was finished"
recover 804
[ "$rc" -eq 0 ] && ! grep -q "plan built" "$t/out" && [ "$(posts 804)" = 1 ] || fail "804 built again: exit $rc"
# a job Slurm does not say enough of is declined, said, exit 1
rm "$work/state/"*.804.outdone
sed -i 's/"job_state": \[[^]]*\]/"job_state": 7/' "$J/.json.804"
recover 804
[ "$rc" -eq 1 ] && grep -q "^error: job 804: its stage-out plan cannot be built: scontrol's record of job 804 lacks a field" "$t/out" ||
	fail "a record without states: exit $rc"
echo "ok"

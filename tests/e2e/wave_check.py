#!/usr/bin/python3
"""wave_check.py - what a site needs after the load-and-chaos wave.

  wave_check.py ROOT SRV JOBS CANCELLED REQUEUED HURRIED LOST KILLED \
                RELEASED RELAUNCHED STUCK

ROOT is the Slurm root, SRV the Conduit test server's directory inside it,
JOBS a file of squeue rows "id|name|array_job_id|task_id|state", the
others space-separated job ids.  LOST are jobs whose burst buffer Slurm
lost in a restart and that are still lost after `conduit-bb recover`:
they cannot reach COMPLETED, but what conduit_bb owes them (their
transfers, once each, none left active; a job left in STAGE_OUT, its
outputs) is checked.  KILLED are jobs whose burst-buffer script
slurmctld killed as it shut down: Slurm records that as the hook failing
with an empty message, which is Slurm's doing and not blamed on
conduit_bb.  RELEASED, RELAUNCHED and STUCK are the jobs `conduit-bb
recover` released (held for a hook Slurm killed), requeued (their launch
lost) and cancelled (left in stage-in with no buffer).  Prints "ok WHAT"
or "not ok WHAT" per check (with the offenders), and other lines as notes.
"""
import collections
import json
import os
import re
import subprocess
import sys

root, srv, jobs_file = sys.argv[1:4]
cancelled, requeued, hurried, lost, killed, released, relaunched, stuck = (
    set(x.split()) for x in sys.argv[4:12])
# Slurm 26.05 counts a data_out it killed as it shut down as the hook
# failing, and may end the job without its stage-out: conduit_bb finishes
# that stage-out from the plan data_out saved (docs/admin.md, "Stage-outs
# Slurm drops"), so its outputs are checked like any other's.  Read from
# slurmctld's log (the kill, then the failure of that very hook), to say
# which jobs it was.
out_killed = set()
ctld_log = os.path.join(root, "var/log/slurm/slurmctld.log")
if os.path.exists(ctld_log):
    was_killed = set()
    for line in open(ctld_log, errors="replace"):
        m = re.search(r"JobId=(\d+) slurm_bb_data_out exit status 0:9\b", line)
        if m:
            was_killed.add(m.group(1))
            continue
        m = re.search(r"slurm_bb_data_out for JobId=(\d+) failed, status=-1, response=\.?$", line)
        if m and m.group(1) in was_killed:
            out_killed.add(m.group(1))
jobs = {}
for line in open(jobs_file):
    f = line.strip().split("|")
    if len(f) != 5:
        continue
    jid, name, arr, task, state = f
    label = "%s_%s" % (arr, task) if task.isdigit() else jid
    jobs[jid] = {"label": label, "state": state}


def check(what, bad):
    if bad:
        print("not ok %s (%d: %s)" % (what, len(bad), ", ".join(sorted(bad)[:8])))
    else:
        print("ok " + what)


print("%d jobs: %d cancelled in stage-in, %d requeued, %d hurried in stage-out, %d lost by Slurm; "
      "conduit-bb recover released %d, requeued %d, cancelled %d"
      % (len(jobs), len(cancelled), len(requeued), len(hurried), len(lost), len(released),
         len(relaunched), len(stuck)))
check("100 jobs seen", [] if len(jobs) == 100 else ["%d jobs" % len(jobs)])
if out_killed & set(jobs):
    print("Slurm killed the data_out of %d jobs at shutdown and ended them without their "
          "stage-out: %s (conduit_bb finished it: checked below)"
          % (len(out_killed & set(jobs)), " ".join(sorted(out_killed & set(jobs)))))

# 1. every job not cancelled COMPLETED (or, lost in STAGE_OUT, staged
# out by conduit_bb), its final attempt's outputs in place
bad_state, bad_out = [], []
for jid, j in jobs.items():
    if jid in cancelled or jid in hurried or jid in stuck:
        continue
    if jid in lost and j["state"] != "STAGE_OUT":
        continue
    if j["state"] != "COMPLETED" and jid not in lost:
        bad_state.append("%s:%s" % (jid, j["state"]))
        continue
    k = (jid in requeued) + (jid in relaunched)
    res = os.path.join(root, "data/wave/%s-res.txt" % j["label"])
    log = os.path.join(root, "data/wave/%s-log.txt" % j["label"])
    left = os.path.join(root, "home/alice/wave/%s-log.txt" % j["label"])
    try:
        ok = (open(res).read() == "attempt %d alpha sub\n" % k and
              open(log).read() == "log %d\n" % k and os.stat(res).st_uid == 2001 and
              os.stat(log).st_uid == 2001 and not os.path.exists(left))
    except OSError:
        ok = False
    if not ok:
        bad_out.append(jid)
check("every job not cancelled (by the wave, or by recover as stuck in stage-in) "
      "nor lost by Slurm for good is COMPLETED", bad_state)
check("... with its final attempt's outputs in place, owned by alice", bad_out)

# 2. each directive started exactly once per attempt that needed it
starts = collections.Counter()
rx = re.compile(r"^SLURMJOB:(\d+),CLUSTER:[^,]+,RESTART:(\d+),SLURMINDEX:(\d+),SLURMTYPE:(\w+),")
for line in open(os.path.join(root, srv.lstrip("/"), "rpc.log")):
    r = json.loads(line)
    if r.get("method") != "StartTransfer" or r.get("status") != "OK":
        continue
    m = rx.match(r.get("comment", ""))
    if m and m.group(1) in jobs:
        starts[m.groups()] += 1
check("no directive started twice for one attempt",
      ["%s/r%s/%s" % (g[0], g[1], g[2]) for g, n in starts.items() if n != 1])
missing = []
for jid in jobs:
    if jid in cancelled or jid in hurried or jid in stuck or \
            (jobs[jid]["state"] != "COMPLETED" and jid not in lost):
        continue
    if jid in lost and jobs[jid]["state"] != "STAGE_OUT":
        continue
    k = (jid in requeued) + (jid in relaunched)
    want = [("0", i, "CONDUIT_PRE") for i in "123"]
    for a in range(k + 1):
        # (an attempt whose launch Slurm lost ran no script: whether its
        # stage-out started is Slurm's; never twice: checked above)
        if a < k and jid in relaunched:
            continue
        want += [(str(a), i, "CONDUIT_POST") for i in "45"]
    for r_, i, t in want:
        if starts[(jid, r_, i, t)] != 1:
            missing.append("%s/r%s/%s" % (jid, r_, i))
    if k and any(starts[(jid, str(a), i, "CONDUIT_PRE")] for a in range(1, k + 1) for i in "123"):
        missing.append("%s: stage-in repeated" % jid)
check("each needed directive started once per attempt (stage-in once, stage-out per attempt)",
      missing)

# 3. no transfer left active
state = json.load(open(os.path.join(root, srv.lstrip("/"), "state.json")))
active = [t["id"] for t in state.values()
          if t["active"] and rx.match(t["comment"]) and rx.match(t["comment"]).group(1) in jobs]
check("no transfer left active on the server", active)

# 4. no StateDir file left for a finished job, but the mark a hurried
# teardown leaves for a cancelled job (it stops a stage hook Slurm still
# runs after the teardown; swept after a day), the .skipped file every
# teardown keeps (bbstat's skipped stage-outs, the job's user, and the
# records a requeue after the teardown reads; swept after a week) and
# the .outdone mark of a stage-out `conduit-bb recover` built and
# finished (it is never built twice; swept after 8 days)
sd = os.path.join(root, "var/spool/conduit_bb")
ended = {j for j, v in jobs.items() if v["state"] in ("COMPLETED", "CANCELLED", "FAILED")}
files = [f.split(".") for f in (os.listdir(sd) if os.path.isdir(sd) else [])]
marked = {p[1] for p in files if p[2:] == ["over"]}
left = [".".join(p) for p in files if p[1:2] and p[1] in ended and
        p[2:] != ["skipped"] and p[2:] != ["outdone"] and
        not (p[2:] == ["over"] and (p[1] in cancelled or p[1] in hurried or
                                    jobs[p[1]]["state"] == "CANCELLED"))]
check("no StateDir file left for any finished job", left)
print("%d over marks left by hurried teardowns (swept after a day)" % len(marked))

# 5. no failure reason on a job whose transfers succeeded (a hook that
# slurmctld killed leaves Slurm's own empty-message reason: noted apart)
blamed, slurms = [], []
for jid, j in jobs.items():
    if jid in cancelled or jid in hurried or j["state"] != "COMPLETED":
        continue
    out = subprocess.run(["chroot", root, "scontrol", "show", "job", "-o", jid],
                         capture_output=True, text=True).stdout
    # an array's id shows every task: keep this job's own line
    out = "".join(l for l in out.splitlines() if l.startswith("JobId=%s " % jid))
    reason = re.search(r" Reason=(\S*)", out)
    desc = re.search(r" StateDesc=(.*?) \w+=", out)
    sysc = re.search(r" SystemComment=(.*?) \w+=", out)
    # (a SystemComment keeps the history: a stage-in held through an outage
    # and released is not a failure; a stage-out that failed is)
    texts = [m.group(1) for m in (reason, desc) if m and "slurm_bb" in m.group(1)]
    texts += [sysc.group(1)] if sysc and "test_data_out" in sysc.group(1) else []
    if not texts:
        continue
    empty = all(re.search(r"slurm_bb_\w+(_failed)?:_*$|slurm_bb_\w+( failed)?: *$", t) for t in texts)
    (slurms if jid in killed and empty else blamed).append(jid)
check("no failure reason on a job whose transfers succeeded", blamed)
if slurms:
    print("Slurm's empty failure reason on %d jobs whose script it killed at shutdown: %s"
          % (len(slurms), " ".join(sorted(slurms))))
print("%d transfers started in all" % sum(starts.values()))

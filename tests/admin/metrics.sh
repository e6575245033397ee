#!/bin/sh
# metrics.sh - `conduit-bb metrics` on the AuditLog and StateDir that the
# real hooks wrote (tests/admin/jobs.lua), StateDir and AuditLog owned by
# nobody as SlurmUser's would be, run as root writing --output into a
# root-only directory (as node_exporter's textfile directory is).  The
# output is parsed by the Prometheus text parser of Debian's
# python3-prometheus-client, and the values checked against what the
# hooks did (the hook latency histogram against each call's wall time, a
# call the server made wait 600 ms, and the AuditLog's hook records); the
# parser must also reject a broken exposition.  And --output where another
# user planted FIFOs and symbolic links at the names a fixed temporary
# name would use: none waited on or followed; a directory anyone may
# write without the sticky bit refused.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
CBB=$here/build/conduit-bb
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	{ echo "python3-prometheus-client is missing (tests/deps.sh)"; exit 1; }
. tests/admin/jobs.sh
jobs_setup metrics 800000
chown -R nobody "$work/state" "$work/log/audit.log"
chmod 0640 "$work/log/audit.log"
# and a line that is not conduit_bb's, and a hook record of a hook that
# writes none (both bad lines, neither counted)
echo 'not json' >> "$work/log/audit.log"
echo '{"time":1,"record":"hook","hook":"slurm_bb_paths","result":"ok","duration_us":5}' >> "$work/log/audit.log"
# a stage-out directive a sweep finished after Slurm dropped its stage
# (src/bb/engine/lost.c writes such lines), here one that failed
echo '{"time":2,"job":9,"user":"61001","cluster":"c","attempt":0,"direction":"out","finished_by":"sweep","line":3,"action":"cp","recursive":false,"sources":["/a"],"destination":"/b","transfer_id":"x","shared":false,"bytes":0,"files":0,"seconds":0,"state":"TRANSFER_ERROR","error":"ERROR_PFTOOL_FAILED","error_message":"disk full"}' >> "$work/log/audit.log"
mkdir -m 0755 "$t/textfile"
# and what squeue and scontrol say (fake-squeue): one job held for a
# stage-in poll Slurm killed, one RUNNING in pre-run since just before
# slurmctld started, nothing of it on its node
printf '901|PENDING|complete|0:00|0.00000000000000|1|N/A|0|\n902|RUNNING|pre-run|9:00|0.1|1|%s|0|\n' \
	"$(date -d "@$(( $(date +%s) - 2 ))" +%Y-%m-%dT%H:%M:%S)" > "$t/jobstates/.rows"
printf 'BOOT_TIME = %s\n' "$(date +%Y-%m-%dT%H:%M:%S)" > "$t/jobstates/.config"
printf 'burst_buffer/lua: JobHeldAdmin: slurm_bb_test_data_in failed: |\n' > "$t/jobstates/.reason.901"
export FAKE_SQUEUE_DIR=$t/jobstates

CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics --output "$t/textfile/conduit_bb.prom" ||
	{ echo "metrics failed"; exit 1; }
[ -f "$t/textfile/conduit_bb.prom" ] && [ "$(ls -A "$t/textfile")" = conduit_bb.prom ] ||
	{ echo "no atomic output file, or a file left beside it:"; ls -la "$t/textfile"; exit 1; }
cat "$t/textfile/conduit_bb.prom"
CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics > "$t/stdout.prom" || exit 1
# the same on stdout (but for the outage's age, which may have grown)
same() { # same FILE: as stdout.prom, the outage's age aside
	grep -v '^conduit_bb_outage_seconds ' "$t/stdout.prom" > "$t/a"
	grep -v '^conduit_bb_outage_seconds ' "$1" > "$t/b"
	cmp -s "$t/a" "$t/b" || { echo "$1 differs from stdout"; diff "$t/a" "$t/b"; exit 1; }
}
same "$t/textfile/conduit_bb.prom"

# --output into a directory another user owns (as node_exporter's may be),
# where that user planted what would catch a fixed temporary name: a FIFO
# (opening it for writing waits for a reader), symbolic links to a file of
# root's, at the old name FILE.tmp, at other likely names and at FILE
# itself.  Nothing is waited on (the run ends; `timeout` only bounds a
# failure), nothing followed (the victim unchanged), nothing planted
# touched, no file left beside FILE, and FILE is root's, with the text.
p=$t/planted
mkdir -m 0755 "$p"
chown nobody:nogroup "$p"
printf 'root only\n' > "$t/victim"
chmod 0600 "$t/victim"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_nobody mkfifo "$p/conduit_bb.prom.tmp" "$p/.conduit_bb.prom.tmp" "$p/conduit_bb.prom.new"
for n in conduit_bb.prom.tmp.1 conduit_bb.prom~ .conduit_bb.prom.swp conduit_bb.prom; do
	as_nobody ln -s "$t/victim" "$p/$n"
done
# a hard link to a file of root's, where the kernel allows it
# (fs.protected_hardlinks=0): what O_TRUNC at a fixed name would empty
printf 'root linked\n' > "$t/victim2"
as_nobody ln "$t/victim2" "$p/conduit_bb.prom.tmp.2" 2>/dev/null || rm -f "$t/victim2"
planted=$(cd "$p" && ls -A | LC_ALL=C sort)
CONDUIT_BB_CONF=$t/conduit_bb.conf timeout 300 "$CBB" metrics --output "$p/conduit_bb.prom"
rc=$?
[ $rc -eq 0 ] || { echo "metrics --output into the planted directory: exit $rc (124: it waited on a FIFO)"; exit 1; }
[ "$(cat "$t/victim")" = "root only" ] || { echo "the victim was written through a link"; exit 1; }
[ ! -e "$t/victim2" ] || [ "$(cat "$t/victim2")" = "root linked" ] ||
	{ echo "the hard-linked victim was written"; exit 1; }
[ -f "$p/conduit_bb.prom" ] && [ ! -L "$p/conduit_bb.prom" ] &&
	[ "$(stat -c %U "$p/conduit_bb.prom")" = root ] ||
	{ echo "FILE is not root's regular file"; ls -la "$p"; exit 1; }
same "$p/conduit_bb.prom"
for n in conduit_bb.prom.tmp .conduit_bb.prom.tmp conduit_bb.prom.new; do
	[ -p "$p/$n" ] || { echo "$n is no longer the FIFO planted"; exit 1; }
done
for n in conduit_bb.prom.tmp.1 conduit_bb.prom~ .conduit_bb.prom.swp; do
	[ "$(readlink "$p/$n")" = "$t/victim" ] || { echo "$n is no longer the link planted"; exit 1; }
done
[ "$(cd "$p" && ls -A | LC_ALL=C sort)" = "$planted" ] ||
	{ echo "files left beside FILE:"; ls -la "$p"; exit 1; }
# a directory anyone may write, without the sticky bit: refused, nothing
# written; with the sticky bit (as /tmp): written
mkdir -m 0777 "$t/open"
chmod 0777 "$t/open"
CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics --output "$t/open/conduit_bb.prom" 2> "$t/open.err"
rc=$?
[ $rc -eq 1 ] && grep -q "may be written by anyone and has no sticky bit" "$t/open.err" &&
	[ -z "$(ls -A "$t/open")" ] ||
	{ echo "a world-writable directory was not refused (exit $rc):"; cat "$t/open.err"; ls -la "$t/open"; exit 1; }
chmod 1777 "$t/open"
CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics --output "$t/open/conduit_bb.prom" ||
	{ echo "metrics --output into a sticky directory failed"; exit 1; }
same "$t/open/conduit_bb.prom"

/usr/bin/python3 - "$t/textfile/conduit_bb.prom" "$t/ids.hooks" "$work/log/audit.log" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families as parse

text = open(sys.argv[1]).read()
fams = {f.name: f for f in parse(text)}
def val(fam, name, **labels):
    for s in fams[fam].samples:
        if s.name == name and s.labels == labels:
            return s.value
    raise AssertionError("no sample %s %s" % (name, labels))

types = {n: f.type for n, f in fams.items()}
assert types["conduit_bb_directives"] == "counter", types
assert types["conduit_bb_transfer_duration_seconds"] == "histogram", types
assert types["conduit_bb_staging_jobs"] == "gauge", types
d = "conduit_bb_directives"
# the finished job: a stage-in, a stage-out and one --when=failure skipped
assert val(d, d + "_total", stage="in", outcome="finished") == 1
assert val(d, d + "_total", stage="out", outcome="finished") == 1
assert val(d, d + "_total", stage="out", outcome="skipped") == 1
assert val(d, d + "_total", stage="in", outcome="failed") == 0
b = "conduit_bb_transferred_bytes"
assert val(b, b + "_total", stage="in") == 6 and val(b, b + "_total", stage="out") == 6
h = "conduit_bb_transfer_duration_seconds"
assert val(h, h + "_count", stage="in") == 1 and val(h, h + "_count", stage="out") == 1
assert val(h, h + "_bucket", stage="in", le="+Inf") == 1
buckets = [s for s in fams[h].samples if s.name == h + "_bucket" and s.labels["stage"] == "in"]
assert all(a.value <= b.value for a, b in zip(buckets, buckets[1:])), buckets
assert val("conduit_bb_audit_log_bad_lines", "conduit_bb_audit_log_bad_lines") == 2
f = "conduit_bb_stage_out_directives_finished_after_drop"
assert types[f] == "counter" and val(f, f + "_total") == 1, types.get(f)
assert val(d, d + "_total", stage="out", outcome="failed") == 1
assert val("conduit_bb_audit_log_readable", "conduit_bb_audit_log_readable") == 1
assert val("conduit_bb_statedir_readable", "conduit_bb_statedir_readable") == 1
# staging now: running and failed stage in (2 directives each), one stages out
g = "conduit_bb_staging_jobs"
assert val(g, g, stage="in") == 2 and val(g, g, stage="out") == 1
r = "conduit_bb_stage_directives"
assert val(r, r, stage="in", kind="started") == 4, val(r, r, stage="in", kind="started")
assert val(r, r, stage="in", kind="unconfirmed") == 0
assert val(r, r, stage="out", kind="started") == 1
assert val("conduit_bb_outage_jobs", "conduit_bb_outage_jobs") == 1
assert val("conduit_bb_outage_seconds", "conduit_bb_outage_seconds") >= 0
# the hook latency histogram against what the hooks did (jobs.lua's
# calls: "HOOK RESULT WALL_MS MIN_MS", the wall time around each call and
# the least it can have taken, for the call the server made wait)
calls = [l.split() for l in open(sys.argv[2]) if l.strip()]
hooks = ["slurm_bb_job_process", "slurm_bb_data_in", "slurm_bb_test_data_in",
         "slurm_bb_data_out", "slurm_bb_test_data_out", "slurm_bb_job_teardown"]
hd, hc = "conduit_bb_hook_duration_seconds", "conduit_bb_hook_calls"
assert types[hd] == "histogram" and types[hc] == "counter", types
for hook in hooks:
    mine = [(c[1], int(c[2]), int(c[3])) for c in calls if c[0] == hook]
    for res in ("ok", "busy", "error"):
        got = val(hc, hc + "_total", hook=hook, result=res)
        want = sum(1 for m in mine if m[0] == res)
        assert got == want, (hook, res, got, want)
    assert val(hd, hd + "_count", hook=hook) == len(mine), (hook, len(mine))
    assert val(hd, hd + "_bucket", hook=hook, le="+Inf") == len(mine), hook
    bks = [(float(s.labels["le"]), s.value) for s in fams[hd].samples
           if s.name == hd + "_bucket" and s.labels["hook"] == hook and s.labels["le"] != "+Inf"]
    assert len(bks) >= 10 and bks == sorted(bks), (hook, bks)
    for le, n in bks:
        # (date's milliseconds: a call lasted less than its wall time + 1 ms)
        surely_in = sum(1 for m in mine if m[1] + 1 <= le * 1000)
        surely_out = sum(1 for m in mine if m[2] > le * 1000)
        assert surely_in <= n <= len(mine) - surely_out, (hook, le, n, surely_in, surely_out, mine)
    total = val(hd, hd + "_sum", hook=hook)
    assert sum(m[2] for m in mine) / 1000.0 <= total <= sum(m[1] + 1 for m in mine) / 1000.0, (hook, total, mine)
# every staging hook jobs.lua calls was seen; the slow stage-in start is above 0.5 s
assert val(hd, hd + "_count", hook="slurm_bb_test_data_in") >= 3
assert val(hd, hd + "_bucket", hook="slurm_bb_data_in", le="0.5") <= val(hd, hd + "_count", hook="slurm_bb_data_in") - 1
assert val(hc, hc + "_total", hook="slurm_bb_test_data_in", result="error") == 1  # failed's line 4
assert val(hc, hc + "_total", hook="slurm_bb_test_data_out", result="busy") >= 1  # out, held
# transfers started, from the stage hooks' records: in, done's 1, running's
# 2, failed's 2 (outage's was never taken); out, done's 1 (one skipped)
# and out's 1; none of a directive that had one before
ts, tr = "conduit_bb_transfers_started", "conduit_bb_transfers_retried"
assert types[ts] == "counter" and types[tr] == "counter", types
assert val(ts, ts + "_total", stage="in") == 5, val(ts, ts + "_total", stage="in")
assert val(ts, ts + "_total", stage="out") == 2, val(ts, ts + "_total", stage="out")
assert val(tr, tr + "_total", stage="in") == 0 and val(tr, tr + "_total", stage="out") == 0
# failed's line 4, counted by the poll that failed its stage-in
tf = "conduit_bb_transfers_failed"
assert val(tf, tf + "_total", stage="in") == 1 and val(tf, tf + "_total", stage="out") == 0
# ... and exactly what the AuditLog's hook records say
recs = []
for line in open(sys.argv[3]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("record") == "hook" and o["hook"] in hooks:
        recs.append(o)
assert len(recs) == len(calls), (len(recs), len(calls))
for st in ("in", "out"):
    assert val(ts, ts + "_total", stage=st) == sum(r.get("started", 0) for r in recs if r.get("stage") == st)
for hook in hooks:
    ds = [r["duration_us"] / 1e6 for r in recs if r["hook"] == hook]
    assert abs(val(hd, hd + "_sum", hook=hook) - sum(ds)) < 1e-9, hook
    for s in fams[hd].samples:
        if s.name == hd + "_bucket" and s.labels["hook"] == hook and s.labels["le"] != "+Inf":
            assert s.value == sum(1 for d in ds if d <= float(s.labels["le"])), (hook, s)
# the jobs Slurm lost, by kind
jl = "conduit_bb_jobs_lost_by_slurm"
assert types[jl] == "gauge", types
assert [val(jl, jl, kind=k) for k in ("held", "launch", "stage-in", "stage-out", "unstaged")] == [1, 1, 0, 0, 0]
# the parser is no rubber stamp: it refuses a broken exposition
for bad in ('conduit_bb_x{stage=in} 1\n', 'conduit_bb_x{stage="in"} one\n'):
    try:
        list(parse(bad))
    except ValueError:
        continue
    raise AssertionError("the parser took " + bad)
print("ok: %d metric families parsed" % len(fams))
PY

#!/bin/sh
# metrics.sh - `conduit-bb metrics` on the AuditLog and StateDir that the
# real hooks wrote (tests/admin/jobs.lua), StateDir and AuditLog owned by
# nobody as SlurmUser's would be, run as root writing --output into a
# root-only directory (as node_exporter's textfile directory is).  The
# output is parsed by the Prometheus text parser of Debian's
# python3-prometheus-client, and the values checked against what the
# hooks did; the parser must also reject a broken exposition.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
CBB=$here/build/conduit-bb
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	{ echo "python3-prometheus-client is missing (tests/deps.sh)"; exit 1; }
t=$(mktemp -d /tmp/cbb-metrics.XXXXXX)
chmod 0755 "$t"
work=
cleanup() {
	sh tests/conduit/server-ctl.sh stop "$t/server" 2>/dev/null
	[ -n "$work" ] && rm -rf "$work"
	rm -rf "$t"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sh tests/conduit/server-ctl.sh start "$t/server" >/dev/null || exit 1
mkdir -p "$t/jobstates"
CBB_MODULE_DIR=build/lua5.4 CBB_SERVER_DIR=$t/server CONDUIT_BB_CONF=$t/conduit_bb.conf \
	FAKE_SQUEUE_DIR=$t/jobstates CBB_JOB_BASE=800000 \
	lua5.4 tests/admin/jobs.lua "$t/ids" || { echo "the hooks could not set the jobs up"; exit 1; }
. "$t/ids"
work=$WORK
chown -R nobody "$work/state" "$work/log/audit.log"
chmod 0640 "$work/log/audit.log"
# and a line that is not conduit_bb's
echo 'not json' >> "$work/log/audit.log"
mkdir -m 0755 "$t/textfile"

CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics --output "$t/textfile/conduit_bb.prom" ||
	{ echo "metrics failed"; exit 1; }
[ -f "$t/textfile/conduit_bb.prom" ] && [ ! -e "$t/textfile/conduit_bb.prom.tmp" ] ||
	{ echo "no atomic output file"; exit 1; }
cat "$t/textfile/conduit_bb.prom"
CONDUIT_BB_CONF=$t/conduit_bb.conf "$CBB" metrics > "$t/stdout.prom" || exit 1
# the same on stdout (but for the outage's age, which may have grown)
grep -v '^conduit_bb_outage_seconds ' "$t/stdout.prom" > "$t/a"
grep -v '^conduit_bb_outage_seconds ' "$t/textfile/conduit_bb.prom" > "$t/b"
cmp -s "$t/a" "$t/b" || { echo "stdout differs"; diff "$t/a" "$t/b"; exit 1; }

/usr/bin/python3 - "$t/textfile/conduit_bb.prom" <<'PY'
import sys
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
assert val("conduit_bb_audit_log_bad_lines", "conduit_bb_audit_log_bad_lines") == 1
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
# the parser is no rubber stamp: it refuses a broken exposition
for bad in ('conduit_bb_x{stage=in} 1\n', 'conduit_bb_x{stage="in"} one\n'):
    try:
        list(parse(bad))
    except ValueError:
        continue
    raise AssertionError("the parser took " + bad)
print("ok: %d metric families parsed" % len(fams))
PY

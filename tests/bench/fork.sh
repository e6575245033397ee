#!/bin/sh
# fork.sh BENCH MODE REPS MODULE_DIR [MODULE_DIR_B] - the hooks measured
# the way Slurm runs them (tests/bench/fork_bench.c: one new process per
# call) against a Conduit test server of our own; prints a Markdown
# table.  MODE is fork or exec.  With MODULE_DIR_B the two builds run in
# turn, call by call, for a before/after comparison in one run;
# CBB_BENCH_B_CONF adds configuration lines for B alone.
set -eu
cd "$(dirname "$0")/../.."
bench=$1
mode=$2
reps=$3
mod_a=$(cd "$4" && pwd)
mod_b=${5:+$(cd "$5" && pwd)}
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'sh tests/conduit/server-ctl.sh stop "$dir/server"; rm -rf "$dir"' EXIT
mkdir -p "$dir/work/src/data set" "$dir/work/dst" "$dir/state"
head -c 4096 /dev/urandom > "$dir/work/src/data set/blob"
chmod -R a+rwX "$dir/work"
sh tests/conduit/server-ctl.sh start "$dir/server" >/dev/null
pki=$dir/server/pki
# A stand-in squeue that says the job is pending and counts its runs.
printf '#!/bin/sh\necho x >> %s/squeue.log\necho "$5 $5 N/A PENDING"\n' "$dir" > "$dir/squeue"
chmod 0755 "$dir/squeue"
: > "$dir/squeue.log"
cat > "$dir/conduit_bb.conf" <<CONF
ConduitServer=127.0.0.1:$(cat "$dir/server/port")
ServerName=localhost
CACert=$pki/ca.crt
ClientCert=$pki/service.crt
ClientKey=$pki/service.key
MaxDirectives=1000
StateDir=$dir/state
Squeue=$dir/squeue
CONF
# CBB_BENCH_B_CONF: lines added to module B's copy of the configuration
if [ -n "${CBB_BENCH_B_CONF:-}" ]; then
	{ cat "$dir/conduit_bb.conf"; printf '%s\n' "$CBB_BENCH_B_CONF"; } > "$dir/conduit_bb-b.conf"
	export CBB_CONF_B="$dir/conduit_bb-b.conf"
fi
curl_v=$(pkg-config --modversion libcurl 2>/dev/null || echo "?")
ssl_v=$(openssl version 2>/dev/null | awk '{ print $2 }')
echo "Against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores, libcurl $curl_v, OpenSSL $ssl_v, $(basename "$mod_a")${mod_b:+; A = $mod_a, B = $mod_b})."
CONDUIT_BB_CONF=$dir/conduit_bb.conf "$bench" "$mode" "$dir/work" "$dir/server" \
	"$dir/squeue.log" "$reps" "$mod_a" $mod_b

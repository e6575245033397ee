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
. tests/bench/setup.sh
# CBB_BENCH_B_CONF: lines added to module B's copy of the configuration
if [ -n "${CBB_BENCH_B_CONF:-}" ]; then
	{ cat "$dir/conduit_bb.conf"; printf '%s\n' "$CBB_BENCH_B_CONF"; } > "$dir/conduit_bb-b.conf"
	export CBB_CONF_B="$dir/conduit_bb-b.conf"
fi
echo "Against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores, libcurl $curl_v, OpenSSL $ssl_v, $(basename "$mod_a")${mod_b:+; A = $mod_a, B = $mod_b})."
CONDUIT_BB_CONF=$dir/conduit_bb.conf "$bench" "$mode" "$dir/work" "$dir/server" \
	"$dir/squeue.log" "$reps" "$mod_a" $mod_b

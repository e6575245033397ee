#!/bin/sh
# run.sh - `make bench`: start the Conduit test server, measure the hooks
# (tests/bench/bench.c), count job_process instructions with callgrind.
# Prints a Markdown report; docs/performance.md keeps a dated copy.
set -eu
cd "$(dirname "$0")/../.."
B=build
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'sh tests/conduit/server-ctl.sh stop "$dir/server"; rm -rf "$dir"' EXIT
mkdir -p "$dir/work/src/data set" "$dir/work/dst" "$dir/state"
head -c 65536 /dev/urandom > "$dir/work/src/data set/blob"
chmod -R a+rwX "$dir/work"
sh tests/conduit/server-ctl.sh start "$dir/server"
echo '{"step_ms": 5}' > "$dir/server/faults.json"
pki=$dir/server/pki
cat > "$dir/conduit_bb.conf" <<CONF
ConduitServer=127.0.0.1:$(cat "$dir/server/port")
ServerName=localhost
CACert=$pki/ca.crt
ClientCert=$pki/service.crt
ClientKey=$pki/service.key
MaxDirectives=1000
StateDir=$dir/state
CONF
echo "## Hooks against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
CONDUIT_BB_CONF=$dir/conduit_bb.conf $B/test/bench-5.4 $B/lua5.4 "$dir/server" "$dir/work"
echo
echo "## job_process parser instructions (callgrind)"
echo
echo "| directives | parser instructions per call | per directive |"
echo "|---|---|---|"
for n in 1 100; do
	s=$dir/work/bench-$n.sh
	CONDUIT_BB_CONF=$dir/conduit_bb.conf valgrind --tool=callgrind \
		--callgrind-out-file="$dir/cg.$n" $B/test/hook_loop-5.4 $B/lua5.4 \
		lua/burst_buffer.lua "$s" "$s" 300 1 >/dev/null 2>&1 || true
	total=$(callgrind_annotate --inclusive=yes "$dir/cg.$n" 2>/dev/null |
		awk '/cbb_parse_script/ {gsub(",","",$1); print $1; exit}')
	echo "| $n | $((total / 200)) | $((total / 200 / n)) |"
done

#!/bin/sh
# smoke.sh - the real Conduit, end to end, without Slurm: build it (cached,
# build.sh), start the stack in a temporary directory (real-ctl.sh) and run
# smoke.py's checks against it with a Python gRPC client speaking the
# project's conduit.proto.  Exit 0 pass, 77 skipped (no ../shared/vendor,
# not root, no python3-grpcio), 1 fail.  Needs root: it builds the cached
# root, and starts the stack as root (the runner setuid()s the FTA to the
# test user cbbuser, uid 61001, which real-ctl.sh adds to this host).
set -u
real=$(cd "$(dirname "$0")" && pwd)
here=$(cd "$real/../../.." && pwd)
py=${CBB_PYTHON:-/usr/bin/python3}

. "$real/need.sh"
[ "$(id -u)" = 0 ] || { echo "real Conduit smoke: needs root (run as root: sh tests/conduit/real/smoke.sh)"; exit 77; }
"$py" -c 'import grpc, google.protobuf' 2>/dev/null ||
	{ echo "real Conduit smoke: $py has no grpc/protobuf (apt-get install python3-grpcio python3-protobuf)"; exit 77; }
real_need smoke

dir=$(mktemp -d /tmp/cbb-real-smoke.XXXXXX)
cleanup() {
	CBB_CONDUIT_BIN=$bin sh "$real/real-ctl.sh" stop "$dir" 2>/dev/null
	if [ -n "${SMOKE_KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

t0=$(date +%s)
CBB_CONDUIT_BIN=$bin sh "$real/real-ctl.sh" start "$dir" || exit 1
echo "stack up in $(( $(date +%s) - t0 )) s (conduit on 127.0.0.1:$(cat "$dir/port"))"
pb=${CONDUIT_PB_DIR:-$here/build/gen/py}
[ -f "$pb/conduit_pb2_grpc.py" ] || pb=$dir/py
CONDUIT_PB_DIR=$pb REAL_CTL=$real/real-ctl.sh CBB_CONDUIT_BIN=$bin \
	"$py" "$real/smoke.py" "$dir" || {
	echo "--- server.log (tail)"; tail -20 "$dir/server.log"
	echo "--- runner.log (tail)"; tail -20 "$dir/runner.log"
	exit 1
}
echo "real Conduit smoke: passed in $(( $(date +%s) - t0 )) s"

#!/bin/sh
# specs.sh - conduit_bb's staging hooks against the real Conduit: build it
# (cached, build.sh), start the stack in a temporary directory
# (real-ctl.sh) and run tests/lua/real/real_spec.lua through busted under
# Lua 5.4 with build/lua5.4/conduit_bb.so (make test-build first).  Exit
# 0 pass, 77 skipped (no ../shared/vendor, not root, no python3-grpcio),
# 1 fail.  Root, as smoke.sh: the runner setuid()s the FTA to cbbuser.
set -u
real=$(cd "$(dirname "$0")" && pwd)
here=$(cd "$real/../../.." && pwd)
cd "$here" || exit 1

. "$real/need.sh"
real_need specs
[ -f build/lua5.4/conduit_bb.so ] || { echo "real Conduit specs: no build/lua5.4/conduit_bb.so (make test-build)"; exit 1; }

dir=$(mktemp -d /tmp/cbb-real-specs.XXXXXX)
chmod 0755 "$dir"
cleanup() {
	CBB_CONDUIT_BIN=$bin sh "$real/real-ctl.sh" stop "$dir" 2>/dev/null
	if [ -n "${SPECS_KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

CBB_CONDUIT_BIN=$bin sh "$real/real-ctl.sh" start "$dir" || exit 1
mkdir -p "$dir/jobstates"
CBB_CONDUIT_BIN=$bin REAL_CTL=$real/real-ctl.sh \
	FAKE_SQUEUE_DIR=$dir/jobstates CBB_SERVER_DIR=$dir CBB_JOB_BASE=800000 \
	CONDUIT_BB_CONF=$dir/busted.conf CBB_MODULE_DIR=$here/build/lua5.4 \
	lua5.4 /usr/bin/busted -o TAP tests/lua/real/real_spec.lua >"$dir/busted.tap" 2>&1
rc=$?
# what failed first (the tail of a long TAP run may be all "ok")
[ $rc -eq 0 ] || { grep -v '^ok ' "$dir/busted.tap" | head -60; tail -n 20 "$dir/server.log" 2>/dev/null; }
tail -n 3 "$dir/busted.tap"
[ $rc -eq 0 ] || exit 1

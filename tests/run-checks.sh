#!/bin/sh
# run-checks.sh - run every check of `make check` and count them.
# Prints "ok N - what" or "not ok N - what" (with the output of a failed
# check), then "checks: N passed, N failed, N skipped".  A check that
# exits 77 is skipped (shown with its reason, never counted as passed).
# Exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.." || exit 2
B=build
pass=0
fail=0
skip=0
n=0
log=$(mktemp)
scratch=$(mktemp -d)
chmod 0755 "$scratch"
server=$scratch/conduit
cleanup() {
	sh tests/conduit/server-ctl.sh stop "$server" 2>/dev/null
	sh tests/switch/controller-ctl.sh stop "$scratch/controller" 2>/dev/null
	sh tests/switch/controller-ctl.sh stop "$scratch/controller-asan" 2>/dev/null
	rm -rf "$log" "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

check() { # check "description" command...
	what=$1
	shift
	n=$((n + 1))
	"$@" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $what"
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1))
		echo "ok $n - $what # SKIP $(tail -n 1 "$log")"
	else
		fail=$((fail + 1))
		echo "not ok $n - $what"
		sed 's/^/#   /' "$log" | tail -40
	fi
}

# --- the layout: core <- bb, core <- switch, never bb <-> switch -----------
check "src/ includes point one way (core <- bb, core <- switch)" \
	sh tests/layout-check.sh

# --- the module: one exported symbol, no liblua, for every Lua ----------
exports_only_luaopen() {
	so=$B/lua$1/conduit_bb.so
	syms=$(nm -D --defined-only "$so" | awk '{print $3}')
	[ "$syms" = luaopen_conduit_bb ] || { echo "exports: $syms"; return 1; }
	if readelf -d "$so" | grep -q 'NEEDED.*liblua'; then
		echo "$so links liblua"
		return 1
	fi
	readelf -d "$so" | grep -q 'FLAGS_1.*NODELETE' || { echo "not -z nodelete"; return 1; }
}
for v in 5.1 5.2 5.3 5.4; do
	check "conduit_bb.so for Lua $v exports only luaopen_conduit_bb, no -llua" \
		exports_only_luaopen $v
done

shim_is_one_line() {
	for f in lua/burst_buffer.lua lua/switch.lua; do
		[ "$(cat $f)" = 'require("conduit_bb")' ] || { echo "$f"; return 1; }
		[ "$(wc -l < $f)" -eq 1 ] || return 1
	done
}
check "lua shims are the one line require(\"conduit_bb\")" shim_is_one_line

# --- C unit tests (cmocka), plain and under ASan+UBSan ------------------
UNITS="words path symbols script config buf_err cases client netreq jobinfo grpc"
for u in $UNITS; do
	check "unit $u" $B/test/unit_$u
done
for u in $UNITS; do
	check "unit $u under ASan+UBSan" $B/asan/unit_$u
done
check "fuzz corpus replay under ASan+UBSan" $B/asan/fuzz_replay tests/fuzz/corpus

# --- the module inside real Lua interpreters (busted), against a real ----
# --- gRPC Conduit test server on 127.0.0.1 --------------------------------
mkdir -p "$server/jobstates"
check "the Conduit test server starts (grpcio, mTLS, 127.0.0.1)" \
	sh tests/conduit/server-ctl.sh start "$server"
busted_for() { # lua-version module-dir job-id-base
	# the whole gRPC status table (status_spec.lua) under plain Lua 5.4
	case $2 in */lua5.4) table=all ;; *) table=some ;; esac
	CBB_STATUS_TABLE=$table \
	FAKE_SQUEUE_DIR=$server/jobstates CBB_SERVER_DIR=$server CBB_JOB_BASE=$3 \
		CONDUIT_BB_CONF=$scratch/busted.conf CBB_MODULE_DIR=$2 \
		lua$1 /usr/bin/busted -o TAP tests/lua
}
base=100000
for v in 5.1 5.2 5.3 5.4; do
	check "busted specs (every hook, against the server) under Lua $v" \
		busted_for $v $B/lua$v $base
	base=$((base + 100000))
done
# under_asan NAME LEAKS CMD...: run CMD with the sanitizer runtimes
# preloaded (the Lua interpreters are not built with them); any report
# fails the check.
under_asan() {
	out=$scratch/asan-$1.out
	leaks=$2
	shift 2
	LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=$leaks "$@" >"$out" 2>&1
	rc=$?
	tail -n 20 "$out"
	if grep -q 'Sanitizer\|runtime error' "$out"; then
		grep -A 12 'Sanitizer\|runtime error' "$out" | head -40
		return 1
	fi
	return $rc
}
check "busted specs with conduit_bb.so under ASan+UBSan+LeakSanitizer" \
	under_asan busted 1 busted_for 5.4 $B/asan/mod/lua5.4 $base

hooks_are_silent() {
	q=$scratch/quiet
	mkdir -p "$q"
	CONDUIT_BB_CONF="$q/conduit_bb.conf" lua5.4 tests/lua/quiet.lua $B/lua5.4 "$q" "$q/conduit_bb.conf" \
		"$(cat "$server/port")" "$server/pki" >"$q/stdout" 2>"$q/stderr" </dev/null
	echo "verdict: $(cat "$q/verdict" 2>/dev/null)"
	grep -q '^ok 192$' "$q/verdict" && [ ! -s "$q/stdout" ] && [ ! -s "$q/stderr" ] ||
		{ head -c 2000 "$q/stdout" "$q/stderr"; return 1; }
}
check "192 hook calls on every path (bad config, refused, TLS failure, bad args) print nothing" \
	hooks_are_silent

# --- the switch half, through an emulated switch/lua host -----------------
controller=$scratch/controller
check "the test session controller starts (HTTPS, client certificates, 127.0.0.1)" \
	sh tests/switch/controller-ctl.sh start "$controller"
check "switch: whole job lifecycles through the emulated switch/lua host (Lua 5.4)" \
	$B/test/test_switch $B/lua5.4 "$controller"
# a controller of its own: the scenarios count sessions per job id
check "a second test controller starts, for the sanitizer run" \
	sh tests/switch/controller-ctl.sh start "$controller-asan"
check "switch lifecycles with conduit_bb.so under ASan+UBSan" \
	under_asan switch 0 $B/test/test_switch $B/asan/mod/lua5.4 "$controller-asan"
check "switch/lua plugin's helper: a fresh state per call, the return conventions, /dev/null stdio, the timeout and the exit killing its process group" \
	$B/test/test_runner $B/switch_lua/switch-lua-run $B/lua5.4

# --- conduit-bb check: golden output ------------------------------------
cli_case() {
	d=tests/data/cli/$1
	# shellcheck disable=SC2046
	out=$(cd "$d" && eval "../../../../$B/conduit-bb $(cat args)" 2>&1)
	status=$?
	[ "$status" = "$(cat "$d/status")" ] || { echo "exit $status"; echo "$out"; return 1; }
	printf '%s\n' "$out" | diff -u "$d/expected" - || return 1
}
for d in tests/data/cli/*/; do
	c=$(basename "$d")
	check "conduit-bb $c" cli_case "$c"
done

seed_examples() {
	sh tests/seed-examples.sh "$B/conduit-bb" "$scratch/seed"
}
check "conduit-bb check on the product description's example jobs" seed_examples

# --- living inside slurmctld: 100,000 calls, memory and fds flat --------
for v in 5.4 5.1; do
	check "100000 job_process/pools calls in 2 threads, Lua $v: RSS and fds flat" \
		env CONDUIT_BB_CONF=$scratch/none.conf $B/test/hook_loop-$v $B/lua$v \
		lua/burst_buffer.lua tests/data/stress-good.sh tests/data/stress-bad.sh 100000 2
done

# --- valgrind: no leaks, no errors --------------------------------------
VG="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible --error-exitcode=99"
check "valgrind: parser cases" $VG $B/test/unit_cases
check "valgrind: config" $VG $B/test/unit_config
check "valgrind: conduit-bb check" $VG $B/conduit-bb check docs/examples/stage-in-out.sh --job-id 7
check "valgrind: 3000 hook calls through Lua 5.4" \
	env HOOK_LOOP_NO_RSS=1 CONDUIT_BB_CONF=$scratch/none.conf $VG \
	$B/test/hook_loop-5.4 $B/lua5.4 lua/burst_buffer.lua \
	tests/data/stress-good.sh tests/data/stress-bad.sh 3000 2

# --- install layout -----------------------------------------------------
install_layout() {
	d=$scratch/root
	make --no-print-directory -s install DESTDIR=$d PREFIX=/usr LUA_VERSION=5.1 >/dev/null || return 1
	for f in usr/lib/lua/5.1/conduit_bb.so usr/bin/conduit-bb \
		etc/slurm/burst_buffer.lua etc/slurm/switch.lua \
		etc/slurm/conduit_bb.conf.example usr/share/doc/conduit-bb/README.md; do
		[ -f "$d/$f" ] || { echo "missing $f"; return 1; }
	done
	# an existing site script is never overwritten
	echo 'site' > $d/etc/slurm/burst_buffer.lua
	make --no-print-directory -s install DESTDIR=$d PREFIX=/usr LUA_VERSION=5.1 >/dev/null || return 1
	[ "$(cat $d/etc/slurm/burst_buffer.lua)" = site ] || return 1
	[ -f $d/etc/slurm/burst_buffer.lua.conduit-bb ] || return 1
}
check "make install puts the module, shims and config where Slurm expects them" install_layout

# --- the RPM ------------------------------------------------------------
rpm_contents() {
	make --no-print-directory -s rpm RPM_LUA_VERSION=5.3 SLURM_SRC= >"$scratch/rpm.log" 2>&1 ||
		{ tail -20 "$scratch/rpm.log"; return 1; }
	p=$(ls $B/rpm/RPMS/*/conduit-bb-*.rpm)
	files=$(rpm -qpl "$p")
	for f in /usr/lib64/lua/5.3/conduit_bb.so /usr/bin/conduit-bb \
		/etc/slurm/burst_buffer.lua /etc/slurm/switch.lua /etc/slurm/conduit_bb.conf \
		/usr/share/doc/conduit-bb/admin.md; do
		printf '%s\n' "$files" | grep -qx "$f" || { echo "rpm lacks $f"; return 1; }
	done
	conf=$(rpm -qp --configfiles "$p")
	for f in /etc/slurm/burst_buffer.lua /etc/slurm/switch.lua /etc/slurm/conduit_bb.conf; do
		printf '%s\n' "$conf" | grep -qx "$f" || { echo "$f is not %config"; return 1; }
	done
	rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$p" | grep -q '^cn /etc/slurm/conduit_bb.conf$' ||
		{ echo "conduit_bb.conf is not %config(noreplace)"; return 1; }
	req=$(rpm -qpR "$p")
	printf '%s\n' "$req" | grep -qx 'lua(abi) = 5.3' || { echo "no lua(abi) = 5.3"; return 1; }
	if printf '%s\n' "$req" | grep -v '^config(conduit-bb)' | grep -qiE 'posix|conduit'; then
		echo "unwanted requirement:"; printf '%s\n' "$req"; return 1
	fi
}
check "make rpm: module in the Lua 5.3 C-module dir, %config(noreplace) templates, no lua-posix" \
	rpm_contents

# --- end to end on every real Slurm in the matrix (tests/e2e), counted ---
# --- check by check; each Slurm's root is built once and cached ---------
# CBB_E2E_MATRIX chooses the Slurms (default: 24.11 26.05 24.11-lua5.4).
e2e_one() { # e2e_one SLURM
	elog=$scratch/e2e-$1.log
	t0=$(date +%s)
	CBB_E2E_SLURM=$1 sh tests/e2e/run.sh >"$elog" 2>&1
	grep -E '^(ok|not ok) - |^# ' "$elog"
	e2e_pass=$(grep -c '^ok - ' "$elog")
	e2e_fail=$(grep -c '^not ok - ' "$elog")
	if ! grep -q '^e2e: [0-9]* passed, 0 failed$' "$elog"; then
		e2e_fail=$((e2e_fail + 1))
		echo "not ok - [$1] the end-to-end suite did not finish cleanly:"
		grep -v '^ok - ' "$elog" | tail -30 | sed 's/^/#   /'
	fi
	echo "# [$1] end-to-end: $e2e_pass passed, $e2e_fail failed in $(( $(date +%s) - t0 )) s"
	n=$((n + e2e_pass + e2e_fail))
	pass=$((pass + e2e_pass))
	fail=$((fail + e2e_fail))
}
if [ "${CBB_SKIP_E2E:-}" = 1 ]; then
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - end-to-end suite # SKIP CBB_SKIP_E2E=1"
elif [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - end-to-end suite # SKIP needs root (chroot, mounts)"
else
	for slurm in ${CBB_E2E_MATRIX:-24.11 26.05 24.11-lua5.4}; do
		e2e_one "$slurm"
	done
	# The switch/lua plugin on Slurm 26.05.3 built from source: its own
	# root (/var/tmp/conduit-bb-trixie-switch) and its own ports, so it
	# can run beside the others.
	if [ -f ../shared/vendor/slurm-26.05.3.tar.xz ] ||
		[ -n "${SLURM_SRC:-}${CBB_SLURM_TARBALL:-}" ]; then
		ports_before=${CBB_E2E_PORTS-none}
		export CBB_E2E_PORTS="${CBB_SWITCH_E2E_PORTS:-7817 7818 25600}"
		e2e_one 26.05-switch
		if [ "$ports_before" = none ]; then unset CBB_E2E_PORTS; else CBB_E2E_PORTS=$ports_before; fi
	else
		n=$((n + 1))
		skip=$((skip + 1))
		echo "ok $n - switch/lua plugin end to end on Slurm 26.05 # SKIP no ../shared/vendor/slurm-26.05.3.tar.xz beside the project: run it with SLURM_SRC=<a Slurm 26.05 source tree> make check (or CBB_SLURM_TARBALL=<its tarball>)"
	fi
fi

echo "checks: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

#!/bin/sh
# run-checks.sh - run every check of `make check` and count them.
# Prints "ok N - what" or "not ok N - what" (with the output of a failed
# check), then "checks: N passed, N failed, N skipped" and a table of each
# part's wall time.  A check that exits 77 is skipped (shown with its
# reason, never counted as passed).  Exits non-zero when anything failed.
#
# The checks come in parts (below) that run side by side, since most of
# them wait far more than they compute: the end-to-end suite on each Slurm
# of the matrix from the start (each root builds its own module, and has
# its own ports, state and Conduit test server), the host build beside
# them, then the parts that need the build, CBB_CHECK_JOBS at a time
# (default 4), each with its own test servers.  A part's lines are printed
# in a fixed order as soon as it and every part before it have finished,
# so the output reads the same on every run.
#
#   CBB_CHECKS=all|fast|e2e  all parts (default); everything without a
#                            real Slurm (make check-fast); only the
#                            end-to-end suites (make e2e)
#   CBB_E2E_MATRIX           the Slurms (default: 24.11 26.05 24.11-lua5.4,
#                            and, when their Slurm's source is beside the
#                            project in ../shared/vendor/ (CBB_SLURM_VENDOR),
#                            25.05-lua5.3 25.11-lua5.4 26.05-switch; each
#                            missing one is reported as skipped)
#   CBB_SKIP_E2E=1           the end-to-end suites are skipped (reported)
set -u
cd "$(dirname "$0")/.." || exit 2
B=build
self=tests/run-checks.sh

# ---- the checks of one part, run as `run-checks.sh --part NAME DIR` ------
# A part prints "ok - what", "not ok - what" (then its output as "#   "
# lines) or "ok - what # SKIP why"; the numbers are given when printed.
check() { # check "description" command...
	what=$1
	shift
	"$@" >"$plog" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok - $what"
	elif [ $rc -eq 77 ]; then
		echo "ok - $what # SKIP $(tail -n 1 "$plog")"
	else
		echo "not ok - $what"
		sed 's/^/#   /' "$plog" | tail -40
	fi
}

# Test servers pick a free port themselves; two starting at once could
# pick the same, so they start one at a time (flock -o: the server that
# stays running must not inherit the lock, or it holds it for good).
start_server() { # start_server conduit|controller DIR
	case $1 in
	conduit) flock -o -w 120 "$S/start.lock" sh tests/conduit/server-ctl.sh start "$2" ;;
	controller) flock -o -w 120 "$S/start.lock" sh tests/switch/controller-ctl.sh start "$2" ;;
	esac
}

# --- the host build: the module for every Lua, tools, tests ---------------
part_build() {
	check "the module for Lua 5.1-5.4, conduit-bb and the tests build (make test-build)" \
		make --no-print-directory -s -j"$(nproc)" test-build
}

# --- the layout: core <- bb, core <- switch, never bb <-> switch -----------
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
shim_is_one_line() {
	for f in lua/burst_buffer.lua lua/switch.lua; do
		[ "$(cat $f)" = 'require("conduit_bb")' ] || { echo "$f"; return 1; }
		[ "$(wc -l < $f)" -eq 1 ] || return 1
	done
}
part_static() {
	check "src/ includes point one way (core <- bb, core <- switch), no cycle among the objects" \
		sh tests/layout-check.sh
	# the module: one exported symbol, no liblua, for every Lua
	for v in 5.1 5.2 5.3 5.4; do
		check "conduit_bb.so for Lua $v exports only luaopen_conduit_bb, no -llua" \
			exports_only_luaopen $v
	done
	check "lua shims are the one line require(\"conduit_bb\")" shim_is_one_line
	check "the -O2 objects still wipe every key and token (explicit_bzero/OPENSSL_cleanse)" sh tests/wipe-check.sh
}

# --- C unit tests (cmocka), plain and under ASan+UBSan ------------------
UNITS="words path symbols script config buf_err cases client netreq jobinfo grpc cli tls decide"
part_units() {
	for u in $UNITS; do
		check "unit $u" $B/test/unit_$u
	done
	for u in $UNITS; do
		check "unit $u under ASan+UBSan" $B/asan/unit_$u
	done
	check "fuzz corpus replay under ASan+UBSan" $B/asan/fuzz_replay tests/fuzz/corpus
}

# --- the module inside real Lua interpreters (busted), against a real ----
# --- gRPC Conduit test server on 127.0.0.1 --------------------------------
# The specs wait far more than they compute (the server's states, the
# budgets and graces they test), so each busted run splits its spec files
# into lanes that run side by side.  A lane has a Conduit test server, a
# config and a fake squeue of its own: the specs set the server's fault
# knobs and count its RPCs, so lanes share nothing.  A spec goes to the
# lane with the least work so far, by what it took on plain Lua 5.4 when
# last measured (seconds; a spec not listed counts as 10).
SPEC_SECONDS="faults:48 stage:24 requeue:24 status:19 array:15 account:14 array_race:10
sweep:9 when:7 late:6 ctld:5 tls_resume:5 bb:3 lost:20"
lanes_of() { # lanes_of N SPEC-FILE...: N lines, each one lane's spec files
	n=$1
	shift
	for f in "$@"; do
		b=${f##*/}
		echo "${b%_spec.lua} $f"
	done | awk -v n="$n" -v w="$SPEC_SECONDS" '
		BEGIN { k = split(w, kv, /[ \n]+/); for (i = 1; i <= k; i++) { split(kv[i], p, ":"); sec[p[1]] = p[2] } }
		{ name[NR] = $1; file[NR] = $2; cost[NR] = ($1 in sec) ? sec[$1] : 10 }
		END {
			# longest first (ties by name, so the lanes read the same on every run)
			for (i = 1; i <= NR; i++) order[i] = i
			for (i = 2; i <= NR; i++)
				for (j = i; j > 1 && (cost[order[j]] > cost[order[j - 1]] ||
				     (cost[order[j]] == cost[order[j - 1]] && name[order[j]] < name[order[j - 1]])); j--) {
					t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
				}
			for (l = 1; l <= n; l++) load[l] = 0
			for (i = 1; i <= NR; i++) {
				best = 1
				for (l = 2; l <= n; l++) if (load[l] < load[best]) best = l
				load[best] += cost[order[i]]
				lane[best] = lane[best] " " file[order[i]]
			}
			for (l = 1; l <= n; l++) if (lane[l] != "") print substr(lane[l], 2)
		}'
}
spec_names() { echo "$@" | sed 's,tests/lua/,,g; s,_spec.lua,,g; s, ,\, ,g'; }
busted_for() { # lua-version module-dir job-id-base spec-file...: in lane $L
	tap=$L/busted.tap
	v=$1 mod=$2 base=$3
	shift 3
	# the whole gRPC status table (status_spec.lua) under Lua 5.4
	case $mod in */lua5.4) table=all ;; *) table=some ;; esac
	CBB_STATUS_TABLE=$table \
	FAKE_SQUEUE_DIR=$L/conduit/jobstates CBB_SERVER_DIR=$L/conduit CBB_JOB_BASE=$base \
		CONDUIT_BB_CONF=$L/busted.conf CBB_MODULE_DIR=$mod \
		lua$v /usr/bin/busted -o TAP "$@" >"$tap" 2>&1
	rc=$?
	# what failed first (the tail of a long TAP run may be all "ok")
	[ $rc -eq 0 ] || grep -v '^ok ' "$tap" | head -60
	tail -n 5 "$tap"
	return $rc
}
# busted_lanes N LABEL LUA-VERSION MODULE-DIR JOB-BASE [asan] -- SPEC-FILE...:
# the spec files in N lanes side by side, two checks a lane (its server
# starts, its specs pass), printed lane by lane once all are done
busted_lanes() {
	n=$1 label=$2 v=$3 mod=$4 base=$5 asan=""
	shift 5
	[ "$1" = asan ] && asan=1 && shift
	[ "$1" = -- ] && shift
	lanes_of "$n" "$@" > "$P/lanes"
	n=$(grep -c . "$P/lanes")
	k=0
	while read -r specs; do
		k=$((k + 1))
		(
			L=$P/lane$k
			plog=$L/check.log
			mkdir -p "$L/conduit/jobstates"
			check "the Conduit test server for $label, lane $k of $n, starts (grpcio, mTLS, 127.0.0.1)" \
				start_server conduit "$L/conduit"
			# shellcheck disable=SC2086
			if [ -n "$asan" ]; then
				check "busted specs with conduit_bb.so under ASan+UBSan+LeakSanitizer, $label, lane $k of $n ($(spec_names $specs))" \
					under_asan "busted$k" 1 linked busted_for "$v" "$mod" "$base" $specs
			else
				check "busted specs (every hook, against the server) under $label, lane $k of $n ($(spec_names $specs))" \
					busted_for "$v" "$mod" "$base" $specs
			fi
		) > "$P/lane$k.out" 2>&1 &
	done < "$P/lanes"
	wait
	k=0
	while [ $k -lt "$n" ]; do
		k=$((k + 1))
		cat "$P/lane$k.out"
	done
}
BUSTED_LANES=${CBB_BUSTED_LANES:-3}
part_busted() { # part_busted LUA-VERSION
	case $1 in 5.1) base=100000 ;; 5.2) base=200000 ;; 5.3) base=300000 ;; *) base=400000 ;; esac
	busted_lanes "$BUSTED_LANES" "Lua $1" "$1" $B/lua$1 $base -- tests/lua/*_spec.lua
}
# under_asan NAME LEAKS preload|linked CMD...: run CMD with the sanitizer
# runtimes; any report fails the check.  preload: they are preloaded (for
# a host not built with them).  linked: $B/asan/bin is first in PATH, its
# lua5.4 linked with them (tests/lua/lua_asan.c), so the shells and tools
# the specs start do not carry them too.
under_asan() {
	out=$P/asan-$1.out
	leaks=$2
	how=$3
	shift 3
	(
		export ASAN_OPTIONS=detect_leaks=$leaks
		if [ "$how" = linked ]; then
			PATH=$PWD/$B/asan/bin:$PATH
		else
			LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
			export LD_PRELOAD
		fi
		"$@"
	) >"$out" 2>&1
	rc=$?
	tail -n 20 "$out"
	if grep -q 'Sanitizer\|runtime error' "$out"; then
		grep -A 12 'Sanitizer\|runtime error' "$out" | head -40
		return 1
	fi
	return $rc
}
hooks_are_silent() {
	q=$P/quiet
	mkdir -p "$q"
	CONDUIT_BB_CONF="$q/conduit_bb.conf" lua5.4 tests/lua/quiet.lua $B/lua5.4 "$q" "$q/conduit_bb.conf" \
		"$(cat "$server/port")" "$server/pki" >"$q/stdout" 2>"$q/stderr" </dev/null
	echo "verdict: $(cat "$q/verdict" 2>/dev/null)"
	grep -q '^ok 192$' "$q/verdict" && [ ! -s "$q/stdout" ] && [ ! -s "$q/stderr" ] ||
		{ head -c 2000 "$q/stdout" "$q/stderr"; return 1; }
}
# The sanitizer run is the longest: two parts side by side, the specs
# named here in the second, every other one in the first (so a new spec
# is never left out), each part in lanes of its own.
ASAN_SECOND="bb faults requeue status sweep tls_resume when"
ASAN_LANES=${CBB_ASAN_LANES:-2}
asan_specs() { # asan_specs 1|2: that half's spec files
	for f in tests/lua/*_spec.lua; do
		n=${f#tests/lua/}
		case " $ASAN_SECOND " in
		*" ${n%_spec.lua} "*) [ "$1" = 2 ] && echo "$f" ;;
		*) [ "$1" = 1 ] && echo "$f" ;;
		esac
	done
}
part_busted_asan() { # part_busted_asan 1|2
	# shellcheck disable=SC2046
	busted_lanes "$ASAN_LANES" "the sanitizer run's half $1 of 2" 5.4 $B/asan/mod/lua5.4 \
		$((400000 + 100000 * $1)) asan -- $(asan_specs "$1")
	[ "$1" = 2 ] || return 0
	server=$P/lane1/conduit
	check "192 hook calls on every path (bad config, refused, TLS failure, bad args) print nothing" \
		hooks_are_silent
}

# --- the switch half, through an emulated switch/lua host -----------------
part_switch() {
	controller=$P/controller
	check "the test session controller starts (HTTPS, client certificates, 127.0.0.1)" \
		start_server controller "$controller"
	check "switch: whole job lifecycles through the emulated switch/lua host (Lua 5.4)" \
		$B/test/test_switch $B/lua5.4 "$controller"
	# a controller of its own: the scenarios count sessions per job id
	check "a second test controller starts, for the sanitizer run" \
		start_server controller "$controller-asan"
	check "switch lifecycles with conduit_bb.so under ASan+UBSan" \
		under_asan switch 0 preload $B/test/test_switch $B/asan/mod/lua5.4 "$controller-asan"
	check "switch/lua plugin's helper: a fresh state per call, the return conventions, /dev/null stdio, the timeout and the exit killing its process group" \
		$B/test/test_runner $B/switch_lua/switch-lua-run $B/lua5.4
}

# --- conduit-bb check: golden output ------------------------------------
cli_case() {
	d=tests/data/cli/$1
	# shellcheck disable=SC2046
	out=$(cd "$d" && eval "../../../../$B/conduit-bb $(cat args)" 2>&1)
	status=$?
	[ "$status" = "$(cat "$d/status")" ] || { echo "exit $status"; echo "$out"; return 1; }
	printf '%s\n' "$out" | diff -u "$d/expected" - || return 1
}
seed_examples() {
	sh tests/seed-examples.sh "$B/conduit-bb" "$P/seed"
}
part_cli() {
	for d in tests/data/cli/*/; do
		c=$(basename "$d")
		check "conduit-bb $c" cli_case "$c"
	done
	check "conduit-bb check on the product description's example jobs" seed_examples
}

# --- conduit-bb doctor: each failure mode set up for real (tests/admin) ---
part_admin() {
	for c in healthy expiring expired other-ca key-0644 key-mismatch server-down \
		state-ro state-owner state-mode state-full lua-mismatch no-bb-lua shim config-errors \
		switch configless programs audit-log; do
		check "conduit-bb doctor: $c" sh tests/admin/doctor.sh "$c"
	done
	check "conduit-bb status: jobs the real hooks left in every state, one Query for all" \
		sh tests/admin/status.sh
	check "conduit-bb metrics: parsed by a Prometheus text parser, values from the hooks' AuditLog and StateDir" \
		sh tests/admin/metrics.sh
	check "conduit-bb recover: a stage-out Slurm dropped finished now, once; one Slurm still runs left alone" \
		sh tests/admin/recover.sh
	check "man pages render without warnings, every key of config.c's table in conduit_bb.conf(5)" \
		sh tests/admin/manpages.sh
}

# --- an upgrade mid-stage: the previous release's module and this one ---
# --- take turns on the same jobs (tests/lua/upgrade/upgrade_spec.lua) ----
# CBB_OLD_COMMIT: the release before this work (its module is built from
# git; a tree without that history skips it)
OLD_COMMIT=${CBB_OLD_COMMIT:-80d7875}
build_old_module() {
	git cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null ||
		{ echo "no commit $OLD_COMMIT in this tree's history (a clone without it, or a tarball)"; return 77; }
	rm -rf "$P/old" && mkdir -p "$P/old" &&
		git archive "$OLD_COMMIT" | tar xf - -C "$P/old" &&
		make --no-print-directory -s -C "$P/old" build/lua5.4/conduit_bb.so
}
part_upgrade() {
	L=$P/lane
	mkdir -p "$L/conduit/jobstates"
	check "the module of the release before ($OLD_COMMIT) builds from git" build_old_module
	[ -f "$P/old/build/lua5.4/conduit_bb.so" ] || return 0
	check "the Conduit test server for the upgrade spec starts (grpcio, mTLS, 127.0.0.1)" \
		start_server conduit "$L/conduit"
	CBB_OLD_MODULE_DIR=$P/old/build/lua5.4
	export CBB_OLD_MODULE_DIR
	check "conduit_bb.so replaced mid-stage, both ways: stage-ins finished by the other release, a requeue across it (Lua 5.4)" \
		busted_for 5.4 $B/lua5.4 900000 tests/lua/upgrade/upgrade_spec.lua
}

# --- the real Conduit (tests/conduit/real): its server, runner and rsync ---
# --- FTA built from ../shared/vendor, cached; skipped without it ----------
part_real() {
	check "the real Conduit builds (cached), starts, and answers a client as the docs say (smoke)" \
		sh tests/conduit/real/smoke.sh
	check "the staging hooks against the real Conduit: sizes, trees, mv without -r, outages, remote validation, requeue, cancel" \
		sh tests/conduit/real/specs.sh
	# the same spec against the test server: conduit-bb must report the
	# same against both (one spec, the same assertions)
	L=$P/lane
	mkdir -p "$L/conduit/jobstates"
	check "the Conduit test server for the same spec starts (grpcio, mTLS, 127.0.0.1)" \
		start_server conduit "$L/conduit"
	check "... and the same spec against the test server: conduit-bb reports the same as against the real one" \
		busted_for 5.4 $B/lua5.4 850000 tests/lua/real/real_spec.lua
}

# --- living inside slurmctld: 100,000 calls, memory and fds flat --------
part_hookloop() {
	for v in 5.4 5.1; do
		check "100000 job_process/pools calls in 2 threads, Lua $v: RSS and fds flat" \
			env CONDUIT_BB_CONF=$P/none.conf $B/test/hook_loop-$v $B/lua$v \
			lua/burst_buffer.lua tests/data/stress-good.sh tests/data/stress-bad.sh 100000 2
	done
}

# --- valgrind: no leaks, no errors --------------------------------------
VG="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible --error-exitcode=99"
part_valgrind() {
	check "valgrind: parser cases" $VG $B/test/unit_cases
	check "valgrind: config" $VG $B/test/unit_config
	# squeue that fails, hangs or dies: no answer is read from an exit status
	# that never came
	check "valgrind: client (squeue answers, records, state files)" $VG $B/test/unit_client
	check "valgrind: conduit-bb check" $VG $B/conduit-bb check docs/examples/stage-in-out.sh --job-id 7
	check "valgrind: 3000 hook calls through Lua 5.4" \
		env HOOK_LOOP_NO_RSS=1 CONDUIT_BB_CONF=$P/none.conf $VG \
		$B/test/hook_loop-5.4 $B/lua5.4 lua/burst_buffer.lua \
		tests/data/stress-good.sh tests/data/stress-bad.sh 3000 2
}

# --- install layout and the RPM -------------------------------------------
install_layout() {
	d=$P/root
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
rpm_contents() {
	make --no-print-directory -s rpm RPM_LUA_VERSION=5.3 SLURM_SRC= >"$P/rpm.log" 2>&1 ||
		{ tail -20 "$P/rpm.log"; return 1; }
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
	# the module dlopen()s libcurl (src/core/curl_dl.c): stated, not found by rpm
	printf '%s\n' "$req" | grep -q '^libcurl' || { echo "no libcurl requirement"; return 1; }
	if printf '%s\n' "$req" | grep -v '^config(conduit-bb)' | grep -qiE 'posix|conduit'; then
		echo "unwanted requirement:"; printf '%s\n' "$req"; return 1
	fi
}
part_install() {
	check "make install puts the module, shims and config where Slurm expects them" install_layout
	check "make rpm: module in the Lua 5.3 C-module dir, %config(noreplace) templates, libcurl required, no lua-posix" \
		rpm_contents
	# (after the RPM check: it reads the RPM that check made, or makes one)
	CBB_RPM=$(ls "$PWD"/$B/rpm/RPMS/*/conduit-bb-*.rpm 2>/dev/null | head -n 1)
	export CBB_RPM
	check "make deb: lintian clean, Debian's Lua 5.1 path, conffiles, dpkg install/purge, logrotate; the RPM's logrotate" \
		sh tests/admin/packages.sh
}

# --- end to end on a real Slurm (tests/e2e), counted check by check; -----
# --- each Slurm's root is built once and cached -------------------------
# Its lines are kept as run.sh prints them ("ok - [24.11] ..."), and a
# suite that did not end with its own tally counts as one more failure.
part_e2e() { # part_e2e SLURM PORTS
	elog=$P/e2e.log
	t0=$(date +%s)
	CBB_E2E_SLURM=$1 CBB_E2E_PORTS=$2 CBB_E2E_WAVE_GATE=$S/timing.done CBB_E2E_WAVE_LOCK=$S/wave.lock \
		sh tests/e2e/run.sh >"$elog" 2>&1
	grep -E '^(ok|not ok) - |^# ' "$elog"
	e2e_pass=$(grep -c '^ok - ' "$elog")
	e2e_fail=$(grep -c '^not ok - ' "$elog")
	if ! grep -q '^e2e: [0-9]* passed, 0 failed$' "$elog"; then
		e2e_fail=$((e2e_fail + 1))
		echo "not ok - [$1] the end-to-end suite did not finish cleanly:"
		grep -v '^ok - ' "$elog" | tail -30 | sed 's/^/#   /'
	fi
	echo "# [$1] end-to-end: $e2e_pass passed, $e2e_fail failed in $(( $(date +%s) - t0 )) s"
}

if [ "${1:-}" = --part ]; then
	name=$2
	S=$3
	P=$S/$name
	mkdir -p "$P"
	plog=$P/check.log
	trap 'for c in "$P/conduit" "$P"/lane*/conduit; do
			[ ! -d "$c" ] || sh tests/conduit/server-ctl.sh stop "$c" 2>/dev/null &
		done
		wait
		sh tests/switch/controller-ctl.sh stop "$P/controller" 2>/dev/null
		sh tests/switch/controller-ctl.sh stop "$P/controller-asan" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	case $name in
	busted-asan) part_busted_asan 1 ;;
	busted-asan2) part_busted_asan 2 ;;
	busted-*) part_busted "${name#busted-}" ;;
	e2e-*) part_e2e "${name#e2e-}" "$4" ;;
	*) "part_$name" ;;
	esac
	exit 0
fi

# ---- the parts, side by side ---------------------------------------------
S=$(mktemp -d)
chmod 0755 "$S"
checks=${CBB_CHECKS:-all}
# Slurm release tarballs beside the project (CBB_SLURM_VENDOR: another
# directory holding them; tests/e2e/lib.sh reads the same)
vendor=${CBB_SLURM_VENDOR:-../shared/vendor}
# The Slurms built from them, "PROFILE TARBALL WHAT" (tests/e2e/lib.sh):
# in the matrix when the tarball is there, else reported as skipped
VENDORED="25.05-lua5.3 slurm-25.05.8.tar.xz Slurm_25.05.8_built_against_Lua_5.3,_as_EL8_links_it
25.11-lua5.4 slurm-25.11.7.tar.xz Slurm_25.11.7_built_against_Lua_5.4"
vendored=""
vendor_skips="" # "WHAT|PROFILE|TARBALL" lines
while read -r prof tarball what; do
	if [ -f "$vendor/$tarball" ]; then
		vendored="$vendored $prof"
	else
		vendor_skips="$vendor_skips$(echo "$what" | tr _ ' ')|$prof|$tarball
"
	fi
done <<VENDORED
$VENDORED
VENDORED
# The switch/lua plugin's suite (26.05-switch) needs Slurm 26.05.3's
# source: the vendor tarball, or SLURM_SRC / CBB_SLURM_TARBALL.
switch_src=""
if [ -f "$vendor/slurm-26.05.3.tar.xz" ] ||
	[ -n "${SLURM_SRC:-}${CBB_SLURM_TARBALL:-}" ]; then
	switch_src=" 26.05-switch"
fi
# (26.05-switch last: its second slurmd takes slurmd's port + 10, which
# would be the next suite's)
matrix=${CBB_E2E_MATRIX:-24.11 26.05 24.11-lua5.4$vendored$switch_src}
HOST_PARTS="build static units busted-5.1 busted-5.2 busted-5.3 busted-5.4 busted-asan busted-asan2
switch cli admin hookloop valgrind install real upgrade"
# the order they start in: the longest first
HOST_START="busted-asan busted-asan2 busted-5.4 busted-5.3 busted-5.2 busted-5.1 real upgrade units switch admin
valgrind hookloop install cli static"
# the parts whose checks measure time (deadlines, budgets): the e2e waves,
# which keep both cores busy, wait until these are done
TIMING_PARTS="build busted-asan busted-asan2 busted-5.4 busted-5.3 busted-5.2 busted-5.1 units switch admin"
HOST_PARTS=$(echo $HOST_PARTS)  # one line
HOST_START=$(echo $HOST_START)
E2E_PARTS=""
e2e_skip=""
switch_skip=""
if [ "$checks" != fast ]; then
	if [ "${CBB_SKIP_E2E:-}" = 1 ]; then
		e2e_skip="CBB_SKIP_E2E=1"
	elif [ "$(id -u)" -ne 0 ]; then
		e2e_skip="needs root (chroot, mounts)"
	else
		for s in $matrix; do E2E_PARTS="$E2E_PARTS e2e-$s"; done
		[ -n "$switch_src" ] || [ -n "${CBB_E2E_MATRIX:-}" ] ||
			switch_skip="no $vendor/slurm-26.05.3.tar.xz beside the project: run it with SLURM_SRC=<a Slurm 26.05 source tree> make check (or CBB_SLURM_TARBALL=<its tarball>)"
		[ -z "${CBB_E2E_MATRIX:-}" ] || vendor_skips=""
	fi
fi
[ "$checks" = e2e ] && HOST_PARTS="" && HOST_START=""
ORDER="$HOST_PARTS $E2E_PARTS"
# host parts at once (without the e2e suites beside them, one more)
jobs=${CBB_CHECK_JOBS:-$([ "$checks" = fast ] && echo 5 || echo 4)}
t_all=$(date +%s)

running="" # the parts started and not yet seen done
cleanup() {
	for p in $running; do
		kill -TERM "-$(cat "$S/$p.pid")" 2>/dev/null  # (dash: no "--")
	done
	for p in $running; do
		while kill -0 "$(cat "$S/$p.pid")" 2>/dev/null; do sleep 0.2; done
	done
	rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() { # start PART [ARG]: in a session of its own (cleanup stops it whole)
	setsid sh "$self" --part "$1" "$S" "${2:-}" </dev/null >"$S/$1.out" 2>&1 &
	echo $! > "$S/$1.pid"
	date +%s > "$S/$1.t0"
	running="$running $1"
}
done_yet() { # done_yet PART: it has ended (its wall time is noted once)
	[ -f "$S/$1.time" ] && return 0
	[ -f "$S/$1.pid" ] || return 1
	kill -0 "$(cat "$S/$1.pid")" 2>/dev/null && return 1
	echo $(( $(date +%s) - $(cat "$S/$1.t0") )) > "$S/$1.time"
	running=$(echo "$running" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

# the end-to-end suites at once, each on its own ports
i=0
for p in $E2E_PARTS; do
	if [ -n "${CBB_E2E_PORTS:-}" ] && [ "$(echo $matrix | wc -w)" = 1 ]; then
		ports=$CBB_E2E_PORTS
	else
		ports="$((6817 + 10 * i)) $((6818 + 10 * i)) $((24600 + 10 * i))"
	fi
	start "$p" "$ports"
	i=$((i + 1))
done
[ -n "$HOST_PARTS" ] && start build

pass=0
fail=0
skip=0
n=0
print_part() { # number a finished part's lines and count them
	case $1 in
	e2e-*)
		cat "$S/$1.out"
		e2e_pass=$(grep -c '^ok - ' "$S/$1.out")
		e2e_fail=$(grep -c '^not ok - ' "$S/$1.out")
		n=$((n + e2e_pass + e2e_fail))
		pass=$((pass + e2e_pass))
		fail=$((fail + e2e_fail))
		echo "$((e2e_pass + e2e_fail))" > "$S/$1.count"
		return ;;
	esac
	c=0
	while IFS= read -r line; do
		case $line in
		"ok - "*" # SKIP "*)
			n=$((n + 1)); c=$((c + 1)); skip=$((skip + 1))
			echo "ok $n - ${line#ok - }" ;;
		"ok - "*)
			n=$((n + 1)); c=$((c + 1)); pass=$((pass + 1))
			echo "ok $n - ${line#ok - }" ;;
		"not ok - "*)
			n=$((n + 1)); c=$((c + 1)); fail=$((fail + 1))
			echo "not ok $n - ${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < "$S/$1.out"
	echo "$c" > "$S/$1.count"
}

pending_start=$HOST_START
host_running() { for p in $running; do case $p in e2e-*) ;; *) echo "$p" ;; esac; done | grep -c .; }
build_failed() { [ -f "$S/build.time" ] && grep -q '^not ok' "$S/build.out"; }
printed=""
while :; do
	for p in $running; do done_yet "$p"; done
	# the parts that need the build start once it has passed, a few at a time
	if [ -n "$pending_start" ] && done_yet build; then
		build_failed && pending_start=""
		for p in $pending_start; do
			[ "$(host_running)" -lt "$jobs" ] || break
			start "$p"
			pending_start=$(echo "$pending_start" | tr ' \n' '\n\n' | grep -vx "$p" | tr '\n' ' ')
		done
	fi
	# print, in order, what has finished (nothing of a part that never
	# started because the build failed)
	left=""
	for p in $ORDER; do
		case " $printed " in *" $p "*) continue ;; esac
		if done_yet "$p"; then
			print_part "$p"
		elif [ -f "$S/$p.pid" ] || ! build_failed; then
			left=$p
			break
		fi
		printed="$printed $p"
	done
	# the e2e waves may go once no timing part is left to run
	if [ ! -e "$S/timing.done" ]; then
		t_left=""
		for p in $TIMING_PARTS; do
			case " $HOST_PARTS " in *" $p "*) ;; *) continue ;; esac
			done_yet "$p" || { ! [ -f "$S/$p.pid" ] && build_failed; } || t_left=$p
		done
		[ -n "$t_left" ] || touch "$S/timing.done"
	fi
	[ -z "$left" ] && break
	sleep 0.5
done

if [ -n "$e2e_skip" ]; then
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - end-to-end suite # SKIP $e2e_skip"
fi
if [ -n "$switch_skip" ]; then
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - switch/lua plugin end to end on Slurm 26.05 # SKIP $switch_skip"
fi
# the vendored Slurms whose tarball is missing (none when the suites are
# skipped as a whole, or CBB_E2E_MATRIX names the Slurms)
if [ -z "$e2e_skip" ] && [ "$checks" != fast ]; then
	while IFS='|' read -r what prof tarball; do
		[ -n "$prof" ] || continue
		n=$((n + 1))
		skip=$((skip + 1))
		echo "ok $n - end to end on $what ($prof) # SKIP no $vendor/$tarball beside the project: put that release tarball there (or CBB_SLURM_VENDOR=<a directory holding it>) and run make check, or make e2e SLURM=$prof"
	done <<SKIPS
$vendor_skips
SKIPS
fi

# ---- each part's wall time (side by side: they add up to more than the whole)
echo "# part                checks  wall"
for p in $ORDER; do
	[ -f "$S/$p.time" ] || continue
	printf '# %-20s %5s %5s s\n' "$p" "$(cat "$S/$p.count" 2>/dev/null || echo 0)" "$(cat "$S/$p.time")"
done
printf '# %-20s %5s %5s s\n' "all" "$n" "$(( $(date +%s) - t_all ))"
echo "checks: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

# need.sh - sourced by smoke.sh and specs.sh: what both need before the
# real stack can start.  real_need WHAT: root, rsync (the FTA's rsync
# plugin runs it), and the binaries (build.sh, cached) in $bin; exits 77
# (skipped) or 1 with one line naming WHAT when one is missing.
real_need() {
	[ "$(id -u)" = 0 ] || { echo "real Conduit $1: needs root (run as root: sh tests/conduit/real/$1.sh)"; exit 77; }
	command -v rsync >/dev/null ||
		apt-get -o DPkg::Lock::Timeout=600 install -y -qq rsync >/dev/null 2>&1 ||
		{ echo "real Conduit $1: no rsync (apt-get install rsync)"; exit 77; }
	bin=$(sh "$real/build.sh" --print-bin)
	rc=$?
	[ $rc -eq 77 ] && { echo "$bin"; exit 77; }
	[ $rc -eq 0 ] || { echo "real Conduit $1: build.sh failed"; exit 1; }
}

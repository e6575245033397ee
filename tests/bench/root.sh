#!/bin/sh
# root.sh - the hook benchmark where it matters: inside the e2e root of
# Slurm 24.11 (Debian 13: libcurl 8.14, OpenSSL 3.5, Lua 5.1), with
# conduit_bb.so built there as the e2e suite builds it.  The root is made
# (or reused) by tests/e2e/setup.sh; CBB_BENCH_SLURM picks another
# profile of tests/e2e/lib.sh.  Needs root (chroot).
set -eu
HERE=$(cd "$(dirname "$0")/../.." && pwd)
CBB_E2E_SLURM=${CBB_BENCH_SLURM:-24.11}
. "$HERE/tests/e2e/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "Not measured: the Slurm root needs root (chroot)."
	exit 0
fi
sh "$HERE/tests/e2e/setup.sh" >/dev/null 2>&1 || {
	echo "Not measured: the $PROFILE root could not be set up (tests/e2e/setup.sh)."
	exit 1
}
mount_root
trap 'umount_root' EXIT
# the module as the e2e suite left it: built in the root for a Slurm built
# from source, installed from the Debian package for Debian's Slurm
mods=build/lua$LUA
if [ ! -f "$R$E2E_SRC/$mods/conduit_bb.so" ]; then
	so=$(in_root dpkg -L conduit-bb 2>/dev/null | grep '/conduit_bb\.so$' | head -1)
	[ -n "$so" ] || {
		echo "Not measured: no conduit_bb.so in $R (neither $E2E_SRC/$mods nor the conduit-bb package)."
		exit 1
	}
	mods=${so%/*}
fi
in_root sh -c "cd $E2E_SRC && gcc -std=gnu99 -O2 tests/bench/bench.c \
	\$(pkg-config --cflags --libs lua$LUA) -o build/bench-$LUA &&
	sh tests/bench/hooks.sh build/bench-$LUA $mods"

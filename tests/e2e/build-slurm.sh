#!/bin/sh
# build-slurm.sh - build Slurm $SLURM_SOURCE from source into the root of
# lib.sh's profile, against the Lua the profile names (run by setup.sh,
# once: the root is cached).  The source is the profile's local tarball
# ($SLURM_TARBALL, e.g. ../shared/vendor/slurm-26.05.3.tar.xz), else the
# upstream tarball as Debian's mirror keeps it
# (pool/main/s/slurm-wlm/*.orig.tar.gz; the mirror comes from this
# machine's apt sources, CBB_DEBIAN_MIRROR overrides it).  A profile with
# the switch/lua plugin keeps the configured tree in /usr/src: the plugin
# is built against it (setup.sh).  Only what the suite runs is installed: the daemons
# (slurmdbd too, with accounting_storage/mysql over MariaDB's client
# library), the client commands and the plugins; no slurmrestd.
# burst_buffer/lua needs a JSON parser: json-c (setup.sh installs it).
# Fails loudly when burst_buffer/lua is not built or links another Lua.
set -eu
. "$(dirname "$0")/lib.sh"

[ -n "$SLURM_SOURCE" ] || { log "e2e: profile $PROFILE builds no Slurm"; exit 2; }
t0=$(date +%s)
mkdir -p "$R/usr/src"
src=$R/usr/src/slurm-$SLURM_SOURCE
rm -rf "$src"
mkdir -p "$src"
if [ -d "$SLURM_TARBALL" ]; then
	# a source tree: copied, and configured in the root
	[ -f "$SLURM_TARBALL/configure" ] || { log "e2e: $SLURM_TARBALL is not a Slurm source tree"; exit 1; }
	tarball=$SLURM_TARBALL
	(cd "$SLURM_TARBALL" && tar cf - .) | tar xf - -C "$src"
	[ ! -f "$src/Makefile" ] || (cd "$src" && make -s distclean >/dev/null 2>&1) || true
elif [ -n "$SLURM_TARBALL" ]; then
	# unpacked here, so the root needs no xz
	[ -f "$SLURM_TARBALL" ] || {
		log "e2e: no $SLURM_TARBALL (Slurm $SLURM_SOURCE's release source; CBB_SLURM_VENDOR names another directory holding it)"
		exit 1
	}
	tarball=$(basename "$SLURM_TARBALL")
	tar xf "$SLURM_TARBALL" -C "$src" --strip-components=1
else
	mirror=$(debian_mirror) || exit 1
	tarball=slurm-wlm_$SLURM_SOURCE.orig.tar.gz
	url=${mirror%/}/pool/main/s/slurm-wlm/$tarball
	log "e2e: fetching $url"
	curl -fsS --retry 3 -o "$R/usr/src/$tarball" "$url" || {
		log "e2e: cannot fetch Slurm $SLURM_SOURCE's source from $url"
		exit 1
	}
	tar xzf "$R/usr/src/$tarball" -C "$src" --strip-components=1
	rm -f "$R/usr/src/$tarball"
fi
jobs=$(nproc)
[ "$jobs" -le 2 ] || jobs=2 # the machine runs other roots beside this one
log "e2e: building Slurm $SLURM_SOURCE from $tarball against Lua $LUA${SLURM_CONFIGURE:+ ($SLURM_CONFIGURE)} (configure, make -j$jobs; 3-20 minutes on 2 cores)"
mount_root
in_root sh -c "set -e
	cd /usr/src/slurm-$SLURM_SOURCE
	./configure --prefix=/usr --sysconfdir=/etc/slurm --localstatedir=/var \
		--libdir=/usr/lib/x86_64-linux-gnu --with-munge --disable-debug \
		--disable-slurmrestd --without-hdf5 --without-rrdtool --without-pmix \
		--without-ucx --disable-x11 --disable-static $SLURM_CONFIGURE \
		CFLAGS='-O1 -g0 -pipe' >/usr/src/configure.log 2>&1 ||
		{ tail -30 config.log; exit 1; }
	make -j$jobs >/usr/src/make.log 2>&1 || { tail -40 /usr/src/make.log; exit 1; }
	make install >/usr/src/install.log 2>&1 || { tail -40 /usr/src/install.log; exit 1; }
	ldconfig" || { umount_root; log "e2e: building Slurm $SLURM_SOURCE failed"; exit 1; }
umount_root
plugin=$R/usr/lib/x86_64-linux-gnu/slurm/burst_buffer_lua.so
[ -f "$plugin" ] || { log "e2e: Slurm built without burst_buffer/lua (no Lua $LUA found?)"; exit 1; }
[ -f "$R/usr/lib/x86_64-linux-gnu/slurm/accounting_storage_mysql.so" ] ||
	{ log "e2e: Slurm built without accounting_storage/mysql (no libmariadb-dev?)"; exit 1; }
# (run.sh checks which liblua slurmctld really maps once it runs)
if grep -q "^#define HAVE_LUA 1" "$R/usr/src/slurm-$SLURM_SOURCE/config.h" 2>/dev/null &&
	grep -q "lua$LUA" "$R/usr/src/slurm-$SLURM_SOURCE/config.log"; then :; else
	log "e2e: Slurm's configure did not take Lua $LUA"
	exit 1
fi
case $SLURM_CONFIGURE in
*--enable-multiple-slurmd*)
	grep -q "^#define MULTIPLE_SLURMD 1" "$R/usr/src/slurm-$SLURM_SOURCE/config.h" || {
		log "e2e: Slurm's configure did not take --enable-multiple-slurmd"
		exit 1
	} ;;
esac
# the switch/lua plugin is built against the configured tree (setup.sh)
[ -n "$SWITCH_PLUGIN" ] || rm -rf "$R/usr/src/slurm-$SLURM_SOURCE"
log "e2e: Slurm $SLURM_SOURCE built against Lua $LUA in $(( $(date +%s) - t0 )) s"

#!/bin/sh
# build.sh [--print-bin | --install ROOT] - build the real Conduit
# (conduit-server, conduit-runner, conduit-fta with its rsync plugin, and
# the `conduit` CLI) from ../shared/vendor/ with Debian packages only, and
# put them with Debian's etcd in ROOT_C/opt/conduit-real/bin, where
# ROOT_C=${CBB_CONDUIT_ROOT:-${CBB_E2E_ROOTS:-/var/tmp}/conduit-bb-conduit}
# is a cached Debian 13 (trixie) root: Go 1.24 and Debian's Go libraries
# (GO111MODULE=off, GOPATH = the build tree + /usr/share/gocode, nothing
# downloaded).  CGO_ENABLED=0: the binaries are static and run on this
# Debian 12 host and in any Debian 13 root; etcd is Debian 13's 3.5.16
# (linked to glibc only, needs GLIBC_2.34: runs on both too).
#
# Cached like the e2e roots: the root is complete only with its marker
# (.conduit-bb-root, written last; an unfinished root is rebuilt), and
# the binaries are rebuilt only when their inputs change (the vendor
# tarballs' sha256, the shims, this script: opt/conduit-real/stamp).
# Times: opt/conduit-real/build-time.  Without the vendor tarballs it
# exits 77 (skipped) saying how to run it.
#
#   --print-bin     print the binaries' directory (after building)
#   --install ROOT  also copy them into ROOT/opt/conduit-real/bin (an e2e
#                   root: run real-ctl.sh there with
#                   CBB_CONDUIT_BIN=/opt/conduit-real/bin)
# Environment: CBB_CONDUIT_VENDOR (default ../shared/vendor beside the
# project), CBB_CONDUIT_ROOT, CBB_E2E_ROOTS, CBB_DEBIAN_MIRROR (default:
# the mirror of this machine's apt sources, as tests/e2e/lib.sh finds it).
set -eu
REAL=$(cd "$(dirname "$0")" && pwd)
HERE=$(cd "$REAL/../../.." && pwd)
VENDOR=${CBB_CONDUIT_VENDOR:-$HERE/../shared/vendor}
RC=${CBB_CONDUIT_ROOT:-${CBB_E2E_ROOTS:-/var/tmp}/conduit-bb-conduit}
TARS="conduit-728a128.tar.xz grpckrb-0.0.3.tar.xz goqu-9.19.0.tar.xz"
OUT=/opt/conduit-real            # inside the root
BUILD=/opt/conduit-build         # inside the root: GOPATH, Go's cache

mode=build
install_root=
case ${1:-} in
--print-bin) mode=print ;;
--install) install_root=${2:?usage: build.sh --install ROOT} ;;
"") ;;
*) echo "usage: build.sh [--print-bin | --install ROOT]" >&2; exit 2 ;;
esac

for t in $TARS; do
	[ -f "$VENDOR/$t" ] || {
		echo "real Conduit: skipped, no $VENDOR/$t (put $TARS in ../shared/vendor/ or set CBB_CONDUIT_VENDOR=DIR, then: sh tests/conduit/real/smoke.sh)"
		exit 77
	}
done
[ "$(id -u)" = 0 ] || { echo "real Conduit: skipped, building needs root (debootstrap, chroot): run as root"; exit 77; }

# the e2e helpers: debian_mirror, mount_root, umount_root, log (R is ours)
CBB_E2E_SLURM=24.11
CBB_E2E_ROOT=$RC
. "$HERE/tests/e2e/lib.sh"
R=$RC

# Debian 13's Go, the Go libraries Conduit imports (the rest come from
# ../shared/vendor or are shims in shims/), etcd, rsync
PKGS="golang-go etcd-server etcd-client rsync
golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
golang-github-spf13-cobra-dev golang-github-spf13-viper-dev golang-github-sirupsen-logrus-dev
golang-github-google-uuid-dev golang-etcd-server-dev golang-github-shirou-gopsutil-dev
golang-github-docker-go-units-dev golang-github-jcmturner-gokrb5.v8-dev
golang-github-jcmturner-goidentity.v6-dev golang-github-go-ldap-ldap-dev
golang-gopkg-yaml.v2-dev golang-golang-x-sys-dev
golang-github-gorilla-mux-dev golang-github-gorilla-handlers-dev golang-github-gorilla-websocket-dev
golang-github-andybalholm-brotli-dev golang-github-fatih-color-dev
golang-github-mitchellh-go-homedir-dev golang-github-moby-term-dev golang-github-morikuni-aec-dev
golang-github-containerd-console-dev golang-github-buger-goterm-dev
golang-github-common-nighthawk-go-figure-dev"
# not inputs of the binaries: what real-ctl.sh needs to run the stack
# inside this root too (chroot mode, as in an e2e root)
RUN_PKGS="python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc procps"

# one build at a time (flock -o: nothing started here may keep the lock)
exec 9>"$R.lock"
flock -w 3600 9 || { log "real Conduit: $R.lock is held"; exit 1; }
# unmount at exit only what this run mounted (a stack may be running in
# the root in chroot mode, on mounts of its own)
mounted_here=
mount_here() { mount_root; mounted_here=1; }
trap '[ -z "$mounted_here" ] || umount_root' EXIT

now() { date +%s; }

if [ ! -f "$R/.conduit-bb-root" ]; then
	t0=$(now)
	if [ -d "$R" ] && [ ! -f "$R/.debootstrapped" ]; then
		log "real Conduit: removing an unfinished root at $R"
		umount_root
		for p in proc sys dev/pts dev run dev/shm; do
			mounted "$R/$p" && { log "real Conduit: $R/$p is still mounted; not removing"; exit 1; }
		done
		rm -rf --one-file-system "$R"
	fi
	if [ ! -d "$R" ]; then
		command -v debootstrap >/dev/null ||
			apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
		mirror=$(debian_mirror) || exit 1
		log "real Conduit: debootstrap trixie into $R"
		debootstrap --variant=minbase \
			--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			trixie "$R" "$mirror" /usr/share/debootstrap/scripts/trixie \
			>"$R.debootstrap.log" 2>&1 || { tail -20 "$R.debootstrap.log" >&2; exit 1; }
		touch "$R/.debootstrapped"
	fi
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	echo 'Acquire::Check-Valid-Until "false";' > "$R/etc/apt/apt.conf.d/99conduit-bb"
	mount_here
	log "real Conduit: installing Go 1.24, Go libraries, etcd, rsync in the root"
	in_root apt-get update -qq
	# shellcheck disable=SC2086
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $PKGS $RUN_PKGS >"$R.apt.log" 2>&1 || { tail -20 "$R.apt.log" >&2; exit 1; }
	in_root apt-get clean
	echo "$PKGS $RUN_PKGS" > "$R/.conduit-bb-pkgs"
	echo "root: $(( $(now) - t0 )) s" > "$R/.conduit-bb-root.time"
	touch "$R/.conduit-bb-root"
elif [ "$(cat "$R/.conduit-bb-pkgs" 2>/dev/null)" != "$PKGS $RUN_PKGS" ]; then
	mount_here
	log "real Conduit: the package list changed; installing it"
	in_root apt-get update -qq
	# shellcheck disable=SC2086
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $PKGS $RUN_PKGS >"$R.apt.log" 2>&1 || { tail -20 "$R.apt.log" >&2; exit 1; }
	in_root apt-get clean
	echo "$PKGS $RUN_PKGS" > "$R/.conduit-bb-pkgs"
fi

# the inputs of the binaries
key=$( (cd "$VENDOR" && sha256sum $TARS)
	(cd "$REAL" && find shims build.sh -type f | LC_ALL=C sort | xargs sha256sum)
	echo "$PKGS") 
key=$(echo "$key" | sha256sum | cut -c1-64)

if [ "$(cat "$R$OUT/stamp" 2>/dev/null)" != "$key" ]; then
	t0=$(now)
	log "real Conduit: building conduit-server, -runner, -fta and the CLI (Go, CGO_ENABLED=0)"
	mount_here
	W=$R$BUILD/gopath/src
	rm -rf "$R$BUILD/gopath" "$R$OUT"
	mkdir -p "$W/github.com/lanl" "$W/github.com/kpelzel" "$W/github.com/doug-martin/goqu" "$R$OUT/bin"
	tar xJf "$VENDOR/conduit-728a128.tar.xz" -C "$W/github.com/lanl"
	mv "$W/github.com/lanl/conduit-728a128" "$W/github.com/lanl/conduit"
	tar xJf "$VENDOR/grpckrb-0.0.3.tar.xz" -C "$W/github.com/kpelzel"
	mv "$W/github.com/kpelzel/grpckrb-0.0.3" "$W/github.com/kpelzel/grpckrb"
	# goqu's module path ends in /v9: GOPATH mode wants that directory
	tar xJf "$VENDOR/goqu-9.19.0.tar.xz" -C "$W/github.com/doug-martin/goqu"
	mv "$W/github.com/doug-martin/goqu/goqu-9.19.0" "$W/github.com/doug-martin/goqu/v9"
	cp -R "$REAL/shims/." "$W/"
	# Debian ships gopsutil v4 at the path without /v4; its files import
	# .../gopsutil/v4/...: give GOPATH mode that path
	ln -s /usr/share/gocode/src/github.com/shirou/gopsutil "$W/github.com/shirou/gopsutil/v4"
	for c in server:conduit-server runner:conduit-runner fta:conduit-fta cli:conduit; do
		log "real Conduit:   ${c#*:}"
		in_root env -i PATH=/usr/bin:/bin HOME=/root GO111MODULE=off \
			GOPATH=$BUILD/gopath:/usr/share/gocode GOCACHE=$BUILD/cache \
			CGO_ENABLED=0 GOTOOLCHAIN=local GOPROXY=off GOFLAGS= \
			go build -trimpath -o "$OUT/bin/${c#*:}" "github.com/lanl/conduit/cmd/${c%%:*}" \
			>"$R$OUT/build.log" 2>&1 || {
			cat "$R$OUT/build.log" >&2
			log "real Conduit: building ${c#*:} failed"
			exit 1
		}
	done
	cp "$R/usr/bin/etcd" "$R/usr/bin/etcdctl" "$R$OUT/bin/"
	in_root etcd --version | head -1 > "$R$OUT/etcd-version"
	in_root go version > "$R$OUT/go-version"
	echo "binaries: $(( $(now) - t0 )) s ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))" > "$R$OUT/build-time"
	cat "$R/.conduit-bb-root.time" >> "$R$OUT/build-time" 2>/dev/null || true
	echo "$key" > "$R$OUT/stamp"
	log "real Conduit: $(head -1 "$R$OUT/build-time")"
fi

if [ -n "$install_root" ]; then
	mkdir -p "$install_root$OUT/bin"
	cp "$R$OUT/bin/"* "$install_root$OUT/bin/"
	log "real Conduit: binaries copied to $install_root$OUT/bin"
fi
[ "$mode" = print ] && echo "$R$OUT/bin"
exit 0

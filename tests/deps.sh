#!/bin/sh
# deps.sh - install, from Debian's archive, whatever the build and the
# tests need and this machine lacks.  Idempotent: with everything present
# it installs nothing and does not touch apt.
set -eu
PKGS="make gcc clang pkg-config binutils valgrind
lua5.1 lua5.2 lua5.3 lua5.4
liblua5.1-0-dev liblua5.2-dev liblua5.3-dev liblua5.4-dev lua-busted
libcmocka-dev libjansson-dev libprotobuf-c-dev protobuf-c-compiler
libcurl4-openssl-dev libssl-dev openssl
python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc
rpm debootstrap
python3-prometheus-client man-db groff-base
dpkg-dev lintian logrotate cpio"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing

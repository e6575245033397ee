#!/bin/sh
# build.sh OUTDIR - build the Debian package with dpkg-deb (`make deb`):
# the module built for Lua 5.1 (the Lua every Debian Slurm links) with
# Debian's build flags, installed where Debian's liblua5.1 looks
# (/usr/lib/<multiarch>/lua/5.1, on its default package.cpath), the
# /etc/slurm templates and the logrotate file as conffiles, man pages and
# docs as Debian policy has them, and Depends from dpkg-shlibdeps.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=$1
cd "$here"
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
b=$out/build
root=$out/root
rm -rf "$root"
mkdir -p "$b" "$root/DEBIAN"

# Debian's hardening flags (they go after ours: -O2 -g then theirs)
opt="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
make --no-print-directory -s B="$b" LUA_VERSION=5.1 OPT="$opt" LDFLAGS="$ldflags" \
	"$b/lua5.1/conduit_bb.so" "$b/conduit-bb"
make --no-print-directory -s B="$b" LUA_VERSION=5.1 OPT="$opt" LDFLAGS="$ldflags" install \
	DESTDIR="$root" PREFIX=/usr LUA_CMOD_DIR="/usr/lib/$multiarch/lua/5.1" \
	SLURM_CONFDIR=/etc/slurm >/dev/null

doc=$root/usr/share/doc/conduit-bb
# the example goes with the docs; /etc/slurm gets an all-commented template
mkdir -p "$doc/examples"
mv "$root/etc/slurm/conduit_bb.conf.example" "$doc/examples/conduit_bb.conf.example"
install -m 0644 conf/conduit_bb.conf.example "$root/etc/slurm/conduit_bb.conf"
install -d "$root/etc/logrotate.d"
install -m 0644 conf/conduit-bb.logrotate "$root/etc/logrotate.d/conduit-bb"
rm -f "$doc/LICENSE"
install -m 0644 deb/copyright "$doc/copyright"
sed "s/@VERSION@/$version/" deb/changelog | gzip -9n > "$doc/changelog.Debian.gz"
gzip -9n "$root"/usr/share/man/man*/*
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/lib/$multiarch/lua/5.1/conduit_bb.so"
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/conduit-bb"
find "$root" -type d -exec chmod 0755 {} +

# Depends: what the binaries link, as dpkg-shlibdeps names it
mkdir -p "$out/shlibs/debian"
printf 'Source: conduit-bb\n\nPackage: conduit-bb\nArchitecture: any\n' \
	> "$out/shlibs/debian/control"
depends=$(cd "$out/shlibs" && dpkg-shlibdeps -O \
	"$root/usr/lib/$multiarch/lua/5.1/conduit_bb.so" "$root/usr/bin/conduit-bb" |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb/build.sh: dpkg-shlibdeps found no Depends" >&2; exit 1; }
# conduit_bb.so and conduit-bb dlopen() libcurl on first need (src/core/
# curl_dl.c), so dpkg-shlibdeps cannot see it: the package that ships
# libcurl.so.4 here (libcurl4, libcurl4t64) is named outright
curl_pkg=$(dpkg -S "/usr/lib/$multiarch/libcurl.so.4" 2>/dev/null | sed -n '1s/:.*//p')
[ -n "$curl_pkg" ] || { echo "deb/build.sh: no package ships /usr/lib/$multiarch/libcurl.so.4" >&2; exit 1; }
depends="$depends, $curl_pkg (>= 7.66.0)"
case $depends in
*libssl3*) ;;
*) echo "deb/build.sh: Depends lacks libssl3: $depends" >&2; exit 1 ;;
esac
size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version-1/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
	-e "s/@DEPENDS@/$depends/" deb/control.in > "$root/DEBIAN/control"
(cd "$root" && find etc -type f | sed 's,^,/,' | sort) > "$root/DEBIAN/conffiles"
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k 2) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
deb=$out/conduit-bb_${version}-1_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"

#!/bin/sh
# packages.sh - the Debian package (make deb) and the RPM's new files:
#   - lintian reports no error;
#   - the module lies in /usr/lib/<multiarch>/lua/5.1, which is on the
#     default package.cpath of Debian's lua5.1, and is built for Lua 5.1;
#   - the /etc/slurm templates and the logrotate file are its conffiles,
#     the man pages are compressed;
#   - installed with dpkg into a scratch root (its own dpkg database): the
#     module loads in lua5.1 from there, conduit-bb runs, man reads the
#     pages; an edited conduit_bb.conf survives a reinstall and a remove,
#     and goes with a purge;
#   - the logrotate file rotates a real AuditLog (logrotate -f), keeping
#     its owner and mode;
#   - the RPM ships the same logrotate file as %config(noreplace), and the
#     man pages (CBB_RPM: an RPM make rpm built from this tree already,
#     rather than a build of its own).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
[ "$(id -u)" -eq 0 ] || { echo "needs root (dpkg --root, logrotate)"; exit 77; }
for p in dpkg-deb dpkg-shlibdeps lintian logrotate rpmbuild rpm2cpio cpio; do
	command -v "$p" >/dev/null || { echo "$p is missing (tests/deps.sh)"; exit 1; }
done
t=$(mktemp -d /tmp/cbb-pkg.XXXXXX)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
mod=usr/lib/$multiarch/lua/5.1/conduit_bb.so

make --no-print-directory -s deb >"$t/deb.log" 2>&1 || { tail -20 "$t/deb.log"; fail "make deb"; }
deb=$(tail -n 1 "$t/deb.log")
[ -f "$deb" ] || fail "no .deb: $deb"

lintian --fail-on error "$deb" >"$t/lintian" 2>&1 || { cat "$t/lintian"; fail "lintian errors"; }
echo "lintian (no errors):"
sed 's/^/  /' "$t/lintian"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's,^\./,/,' > "$t/files"
for f in "/$mod" /usr/bin/conduit-bb /usr/share/man/man1/conduit-bb.1.gz \
	/usr/share/man/man5/conduit_bb.conf.5.gz /etc/logrotate.d/conduit-bb \
	/usr/share/doc/conduit-bb/copyright /usr/share/doc/conduit-bb/changelog.Debian.gz \
	/usr/share/doc/conduit-bb/examples/conduit_bb.conf.example; do
	grep -qx "$f" "$t/files" || fail "the .deb has no $f"
done
lua5.1 -e 'print(package.cpath)' | tr ';' '\n' | grep -qx "/usr/lib/$multiarch/lua/5.1/?.so" ||
	fail "/usr/lib/$multiarch/lua/5.1 is not on lua5.1's package.cpath"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | sort > "$t/conffiles"
printf '%s\n' /etc/logrotate.d/conduit-bb /etc/slurm/burst_buffer.lua \
	/etc/slurm/conduit_bb.conf /etc/slurm/switch.lua > "$t/want"
diff -u "$t/want" "$t/conffiles" || fail "conffiles"
dpkg-deb -f "$deb" Depends | grep -q 'libcurl4' || fail "Depends: $(dpkg-deb -f "$deb" Depends)"

# installed for real, into a scratch root with its own dpkg database
r=$t/root
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates"
: > "$r/var/lib/dpkg/status"
: > "$r/var/lib/dpkg/available"
dpkgr() { dpkg --root="$r" --force-depends --force-script-chrootless --log=/dev/null "$@"; }
dpkgr -i "$deb" >"$t/dpkg.log" 2>&1 || { cat "$t/dpkg.log"; fail "dpkg -i"; }
[ "$(cat "$r/etc/slurm/burst_buffer.lua")" = 'require("conduit_bb")' ] || fail "burst_buffer.lua"
readelf -p .conduit_bb.lua "$r/$mod" | grep -q 'Lua 5\.1' || fail "the module is not built for Lua 5.1"
v=$(cd / && LUA_CPATH="$r/usr/lib/$multiarch/lua/5.1/?.so" lua5.1 -e \
	'print(require("conduit_bb")._VERSION)') || fail "lua5.1 cannot load the installed module"
[ "$v" = "$(sed -n 's/^VERSION *:= *//p' Makefile)" ] || fail "module version $v"
"$r/usr/bin/conduit-bb" version | grep -q '^conduit-bb ' || fail "the installed conduit-bb"
MANWIDTH=80 man --warnings -l "$r/usr/share/man/man5/conduit_bb.conf.5.gz" 2>"$t/man.err" |
	grep -q 'ConduitServer=' || fail "man cannot read the installed page"
[ -s "$t/man.err" ] && { cat "$t/man.err"; fail "man warnings"; }
# a site's edit survives a reinstall and a remove, not a purge
echo 'ConduitServer=conduit.site:23456' > "$r/etc/slurm/conduit_bb.conf"
dpkgr --force-confold -i "$deb" >"$t/dpkg.log" 2>&1 || { cat "$t/dpkg.log"; fail "reinstall"; }
grep -q conduit.site "$r/etc/slurm/conduit_bb.conf" || fail "reinstall replaced the edited conffile"
dpkgr -r conduit-bb >"$t/dpkg.log" 2>&1 || { cat "$t/dpkg.log"; fail "remove"; }
[ ! -e "$r/$mod" ] || fail "remove left the module"
grep -q conduit.site "$r/etc/slurm/conduit_bb.conf" || fail "remove took the conffile"
dpkgr -P conduit-bb >"$t/dpkg.log" 2>&1 || { cat "$t/dpkg.log"; fail "purge"; }
[ ! -e "$r/etc/slurm/conduit_bb.conf" ] || fail "purge left the conffile"

# the logrotate file on a real AuditLog, owned by nobody, mode 0640
mkdir -p "$t/log"
sed "s,/var/log/slurm/,$t/log/," conf/conduit-bb.logrotate > "$t/logrotate.conf"
chmod 0644 "$t/logrotate.conf"
echo '{"job":1}' > "$t/log/conduit_bb-audit.log"
chown nobody "$t/log/conduit_bb-audit.log"
chmod 0640 "$t/log/conduit_bb-audit.log"
logrotate -f -s "$t/logrotate.state" "$t/logrotate.conf" || fail "logrotate"
[ "$(cat "$t/log/conduit_bb-audit.log.1")" = '{"job":1}' ] || fail "no rotated AuditLog"
[ "$(stat -c '%U %a %s' "$t/log/conduit_bb-audit.log")" = "nobody 640 0" ] ||
	fail "the new AuditLog is $(stat -c '%U %a %s' "$t/log/conduit_bb-audit.log")"
echo '{"job":2}' > "$t/log/conduit_bb-audit.log"
logrotate -f -s "$t/logrotate.state" "$t/logrotate.conf" || fail "logrotate again"
[ -f "$t/log/conduit_bb-audit.log.2.gz" ] && [ "$(cat "$t/log/conduit_bb-audit.log.1")" = '{"job":2}' ] ||
	fail "the second rotation: $(ls "$t/log")"

# the RPM: the same logrotate file, as %config(noreplace), and the man pages
p=${CBB_RPM:-}
if [ ! -f "$p" ]; then
	make --no-print-directory -s rpm RPM_LUA_VERSION=5.3 >"$t/rpm.log" 2>&1 ||
		{ tail -20 "$t/rpm.log"; fail "make rpm"; }
	p=$here/$(ls build/rpm/RPMS/*/conduit-bb-*.rpm)
fi
rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$p" > "$t/rpmfiles"
grep -qx 'cn /etc/logrotate.d/conduit-bb' "$t/rpmfiles" ||
	{ cat "$t/rpmfiles"; fail "the RPM's logrotate file is not %config(noreplace)"; }
for f in /usr/share/man/man1/conduit-bb.1 /usr/share/man/man5/conduit_bb.conf.5; do
	grep -q " $f" "$t/rpmfiles" || fail "the RPM has no $f"
done
mkdir "$t/rpmx"
(cd "$t/rpmx" && rpm2cpio "$p" | cpio -idm --quiet ./etc/logrotate.d/conduit-bb) ||
	fail "rpm2cpio"
cmp "$t/rpmx/etc/logrotate.d/conduit-bb" conf/conduit-bb.logrotate || fail "the RPM's logrotate file differs"
echo "ok: $deb"

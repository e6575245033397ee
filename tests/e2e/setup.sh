#!/bin/sh
# setup.sh - create (once, cached) the root of the Slurm that lib.sh's
# profile names, then build conduit_bb.so in it against the Lua that Slurm
# uses (Debian's Slurm: as the Debian package, `make deb` and dpkg -i; a
# Slurm built from source: `make install`), and write the configs.  Safe to rerun, and
# after a crash: an unfinished root is rebuilt.
#
#   24.11  debootstrap trixie, Debian's Slurm 24.11 packages (Lua 5.1)
#   26.05  debootstrap forky, Debian's Slurm 26.05 packages (Lua 5.1)
#   24.11-lua5.4  debootstrap trixie, Slurm 24.11.5 built from source
#          against Lua 5.4 (tests/e2e/build-slurm.sh)
#   26.05-switch  debootstrap trixie, Slurm 26.05.3 built from
#          ../shared/vendor against Lua 5.4 with --enable-multiple-slurmd,
#          and the switch/lua plugin (make switch-plugin) built against it
#   25.05-lua5.3, 25.11-lua5.4  debootstrap trixie, Slurm 25.05.8 (Lua 5.3)
#          or 25.11.7 (Lua 5.4) built from ../shared/vendor
# (every from-source root the same way: lib.sh's from_source names it,
# build-slurm.sh builds it)
set -eu
. "$(dirname "$0")/lib.sh"

PKGS="slurmctld slurmd slurm-client munge lua$LUA liblua$LUA-dev gcc make
libc6-dev pkg-config libcurl4-openssl-dev libssl-dev libjansson-dev
libprotobuf-c-dev protobuf-c-compiler protobuf-compiler protobuf-compiler-grpc
python3-grpcio python3-protobuf openssl procps rsync"
# Debian names Lua 5.1's headers liblua5.1-0-dev
PKGS=$(echo "$PKGS" | sed 's/liblua5\.1-dev/liblua5.1-0-dev/')
# accounting as sites run it: slurmdbd over MariaDB
DB_PKGS="mariadb-server slurmdbd"
# a Slurm built from source: its build needs instead of its packages
# (MariaDB's client library for slurmdbd's accounting_storage/mysql)
if [ -n "$SLURM_SOURCE" ]; then
	PKGS=$(echo "$PKGS" | sed 's/slurmctld slurmd slurm-client/libmunge-dev libjson-c-dev libmariadb-dev python3 perl/')
	DB_PKGS="mariadb-server libmariadb-dev"
fi

if [ ! -f "$R/.conduit-bb-root" ]; then
	if [ -d "$R" ]; then
		log "e2e: removing an unfinished root at $R"
		sh "$HERE/tests/e2e/cluster.sh" stop || true
		for p in proc sys dev/pts dev run dev/shm; do
			if mounted "$R/$p"; then
				log "e2e: $R/$p is still mounted; not removing"
				exit 1
			fi
		done
		rm -rf --one-file-system "$R"
	fi
	command -v debootstrap >/dev/null ||
		apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
	mirror=$(debian_mirror) || exit 1
	log "e2e: debootstrap $SUITE into $R from $mirror (about 30 s)"
	debootstrap --variant=minbase \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$SUITE" "$R" "$mirror" "/usr/share/debootstrap/scripts/$BOOTSTRAP_SCRIPT" \
		>"$R.debootstrap.log" 2>&1 || {
		tail -20 "$R.debootstrap.log" >&2
		exit 1
	}
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	# testing suites' Release files may be past Valid-Until on a frozen mirror
	echo 'Acquire::Check-Valid-Until "false";' > "$R/etc/apt/apt.conf.d/99conduit-bb"
	mount_root
	log "e2e: installing Slurm, munge, Lua $LUA and build tools in the root"
	in_root apt-get update -qq
	# shellcheck disable=SC2086
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $PKGS >/dev/null
	in_root apt-get clean
	umount_root
	[ -z "$SLURM_SOURCE" ] || sh "$HERE/tests/e2e/build-slurm.sh"
	touch "$R/.conduit-bb-root"
fi

# slurmdbd and MariaDB (a root cached before the suite ran accounting gets
# them here, once; a Slurm built without MariaDB's library is rebuilt)
if [ ! -f "$R/.conduit-bb-accounting" ]; then
	log "e2e: installing MariaDB and slurmdbd in the root"
	t_db=$(date +%s)
	mount_root
	in_root apt-get update -qq
	# shellcheck disable=SC2086
	in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $DB_PKGS >/dev/null
	in_root apt-get clean
	umount_root
	# Debian's plugins are in slurm-wlm/, a source build's in slurm/
	mysql_plugin() { ls "$R"/usr/lib/x86_64-linux-gnu/slurm*/accounting_storage_mysql.so >/dev/null 2>&1; }
	if [ -n "$SLURM_SOURCE" ] && ! mysql_plugin; then
		sh "$HERE/tests/e2e/build-slurm.sh"
	fi
	[ -x "$R/usr/sbin/slurmdbd" ] && mysql_plugin || {
		log "e2e: no slurmdbd with accounting_storage/mysql in $R"
		exit 1
	}
	touch "$R/.conduit-bb-accounting"
	log "e2e: MariaDB and slurmdbd ready in $(( $(date +%s) - t_db )) s"
fi

# The module and the command, built in the root for the Lua its Slurm
# links.  With Debian's Slurm (no SLURM_SOURCE) the e2e proves the package:
# `make deb` in the root, installed with dpkg (the root gets dpkg-dev once;
# a cached root's /usr/local copies of an earlier `make install` go, so
# nothing stale can be what Slurm loads).  A Slurm built from source gets
# `make install` into /usr/local.
install_module() {
	if [ -n "$SLURM_SOURCE" ]; then
		in_root make -s -C "$E2E_SRC" LUA_VERSION=$LUA >/dev/null
		in_root make -s -C "$E2E_SRC" install LUA_VERSION=$LUA PREFIX=/usr/local >/dev/null
		return
	fi
	if ! in_root sh -c 'command -v dpkg-shlibdeps && command -v dpkg-buildflags' >/dev/null; then
		log "e2e: installing dpkg-dev in the root (make deb)"
		in_root apt-get update -qq
		in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends dpkg-dev binutils >/dev/null
		in_root apt-get clean
	fi
	rm -f "$R/usr/local/lib/lua/$LUA/conduit_bb.so" "$R/usr/local/bin/conduit-bb" \
		"$R/usr/local/share/man/man1/conduit-bb.1" "$R/usr/local/share/man/man5/conduit_bb.conf.5" \
		"$R/etc/slurm/conduit_bb.conf.example" "$R/etc/slurm/burst_buffer.lua.conduit-bb" \
		"$R/etc/slurm/switch.lua.conduit-bb"
	rm -rf "$R/usr/local/share/doc/conduit-bb"
	in_root make -s -C "$E2E_SRC" deb >"$R/tmp/make-deb.log" 2>&1 || {
		cat "$R/tmp/make-deb.log" >&2
		log "e2e: make deb failed in the root"
		return 1
	}
	deb=$(tail -1 "$R/tmp/make-deb.log")
	in_root env DEBIAN_FRONTEND=noninteractive dpkg -i --force-confnew "$deb" \
		>"$R/tmp/dpkg-i.log" 2>&1 || {
		cat "$R/tmp/dpkg-i.log" >&2
		log "e2e: dpkg -i $deb failed in the root"
		return 1
	}
	log "e2e: installed ${deb##*/} in the root"
}

# ---- every run: users, the module, configs (cheap) ----------------------
sh "$HERE/tests/e2e/cluster.sh" stop # nothing may run while we rebuild
printf '127.0.0.1 localhost\n127.0.0.1 %s\n' "$HOSTNAME_S" > "$R/etc/hosts"
for u in alice:2001 bob:2002; do
	name=${u%:*}
	uid=${u#*:}
	in_root id "$name" >/dev/null 2>&1 ||
		in_root useradd -u "$uid" -U -m -d "/home/$name" -s /bin/bash "$name"
done

# the project, fresh, built inside the root for the Lua that Slurm uses
rm -rf "$R$E2E_SRC"
mkdir -p "$R$E2E_SRC"
(cd "$HERE" && tar cf - --exclude=./build --exclude=./.git . ) | tar xf - -C "$R$E2E_SRC"
mount_root
install_module
if [ -n "$SWITCH_PLUGIN" ]; then
	# the plugin against the configured tree of the Slurm it runs in
	tree=/usr/src/slurm-$SLURM_SOURCE
	in_root make -s -C "$E2E_SRC" install-switch-plugin SLURM_SRC=$tree \
		LUA_VERSION=$LUA >"$R/tmp/switch-plugin.log" 2>&1 || {
		cat "$R/tmp/switch-plugin.log" >&2
		log "e2e: make switch-plugin SLURM_SRC=$tree failed"
		exit 1
	}
fi
in_root sh -c "mkdir -p $E2E_SRC/build/gen/py && protoc -I$E2E_SRC/src/bb/wire/proto \
	--python_out=$E2E_SRC/build/gen/py --grpc_out=$E2E_SRC/build/gen/py \
	--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin $E2E_SRC/src/bb/wire/proto/conduit.proto"
umount_root

# configs
mkdir -p "$R/etc/slurm"
for f in slurm slurmdbd; do
	in=$f
	[ "$f" = slurm ] && [ -n "$SWITCH_PLUGIN" ] && in=slurm-switch
	sed -e "s/@HOST@/$HOSTNAME_S/g" -e "s/@CTLD_PORT@/$CTLD_PORT/" \
		-e "s/@SLURMD_PORT@/$SLURMD_PORT/" -e "s/@DBD_PORT@/$DBD_PORT/" \
		-e "s/@SLURMD2_PORT@/$SLURMD2_PORT/" \
		"$HERE/tests/e2e/etc/$in.conf.in" > "$R/etc/slurm/$f.conf"
done
chmod 0600 "$R/etc/slurm/slurmdbd.conf" # slurmdbd insists
cp "$HERE/tests/e2e/etc/mariadb.cnf" "$R/etc/mysql/mariadb.conf.d/99-conduit-bb.cnf"
cp "$HERE/tests/e2e/etc/burst_buffer.conf" "$HERE/tests/e2e/etc/cgroup.conf" "$R/etc/slurm/"
cp "$HERE/lua/burst_buffer.lua" "$R/etc/slurm/burst_buffer.lua"
sh "$HERE/tests/conduit/make-certs.sh" "$R$PKI"
chmod 0600 "$R$PKI"/*.key
cat > "$R/etc/slurm/conduit_bb.conf" <<CONF
# written by tests/e2e/setup.sh
ConduitServer=127.0.0.1:$CONDUIT_PORT
ServerName=localhost
CACert=$PKI/ca.crt
ClientCert=$PKI/service.crt
ClientKey=$PKI/service.key
RequestTimeout=5
ServerDownGrace=10
StageOutDownGrace=120
StartVisibleGrace=10
StageInSources=/home,/data
StageInDestinations=/home,/scratch
StageOutSources=/home,/scratch
StageOutDestinations=/home,/data
AuditLog=/var/log/slurm/conduit_bb-audit.log
CONF
if [ -n "$SWITCH_PLUGIN" ]; then
	# the switch half: switch.lua, the key that signs each job's jobinfo,
	# and the test session controller (started by cluster.sh)
	cp "$HERE/lua/switch.lua" "$R/etc/slurm/switch.lua"
	[ -s "$R/etc/slurm/conduit_bb.key" ] ||
		head -c 48 /dev/urandom > "$R/etc/slurm/conduit_bb.key"
	chmod 0600 "$R/etc/slurm/conduit_bb.key"
	cat >> "$R/etc/slurm/conduit_bb.conf" <<CONF
SwitchController=http
SwitchControllerURL=https://localhost:$SESSION_PORT
SwitchCACert=$SESSIONS/pki/ca.crt
SwitchClientCert=$SESSIONS/pki/service.crt
SwitchClientKey=$SESSIONS/pki/service.key
SwitchTimeout=5
SessionKeyFile=/etc/slurm/conduit_bb.key
SessionDelivery=file
SessionDir=/run/conduit_bb
SwitchBlockJobComplete=yes
CONF
fi
mkdir -p "$R/var/spool/slurmctld" "$R/var/spool/slurmd" "$R/var/log/slurm" \
	"$R$SRV" "$R/data" "$R/scratch"
chmod 1777 "$R/data" "$R/scratch"
log "e2e: root ready at $R"

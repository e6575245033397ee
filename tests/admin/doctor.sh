#!/bin/sh
# doctor.sh CASE - `conduit-bb doctor` against an installation laid out
# for real in a temporary directory: slurm.conf (SlurmUser=nobody), the
# one-line burst_buffer.lua, burst_buffer.conf, a burst_buffer_lua.so
# plugin linked against liblua5.1 (as Debian's Slurm is), conduit_bb.conf,
# certificates made here with openssl and owned by nobody, a StateDir, and
# the Conduit test server answering the real Query.  Each CASE breaks one
# thing for real and asserts doctor's line and its exit status:
#
#   healthy       every line ok, exit 0; --json says failed 0
#   expiring      a certificate with 10 days left: warn, exit 0
#   expired       an expired client certificate: FAIL
#   other-ca      a client certificate from another CA: FAIL (chain)
#   key-0644      the client key mode 0644: FAIL
#   key-mismatch  a key that is not the certificate's: FAIL
#   server-down   the Conduit server stopped: FAIL
#   state-ro      StateDir on a read-only bind mount: FAIL
#   state-owner   StateDir owned by another user: FAIL
#   state-mode    StateDir mode 0770: FAIL; mode 0755: warn
#   state-full    StateDir on a full file system: FAIL
#   lua-mismatch  a module built for Lua 5.3, slurmctld linking 5.1: FAIL
#   no-bb-lua     slurm.conf with BurstBufferType=burst_buffer/datawarp,
#                 then none: FAIL
#   shim          a burst_buffer.lua that is not the one line: FAIL
#   config-errors two bad lines in conduit_bb.conf: a FAIL for each, with
#                 its line, and the other checks still run
#   switch        the switch half: a real test controller answering (ok),
#                 then SessionKeyFile mode 0644 and the controller stopped
#   configless    SwitchType=switch/lua: switch.lua beside slurm.conf (ok);
#                 then slurm.conf in a configless node's conf-cache,
#                 without switch.lua and conduit_bb.conf: FAIL each, saying
#                 slurmd does not fetch them; then both installed on the
#                 node and named (switch_lua_script=, CONDUIT_BB_CONF): ok
#   programs      squeue missing, scontrol that SlurmUser may not run (mode
#                 0700, root's), squeue that never answers: FAIL each
#   audit-log     AuditLog as the hooks open it, as SlurmUser: ok; owned by
#                 root, in a directory others may write, a symbolic link,
#                 a FIFO (never waited on): warn each
# Needs root (files owned by nobody, checks made as nobody, mounts).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
B=$here/build
CBB=$B/conduit-bb
case=${1:?usage: doctor.sh CASE}
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }

t=$(mktemp -d /tmp/cbb-doctor.XXXXXX)
chmod 0755 "$t"
mounts=
cleanup() {
	for m in $mounts; do umount "$m" 2>/dev/null; done
	sh "$here/tests/conduit/server-ctl.sh" stop "$t/server" 2>/dev/null
	sh "$here/tests/switch/controller-ctl.sh" stop "$t/controller" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAILED: $*"; echo "--- doctor said:"; cat "$t/out"; exit 1; }

# ---- the installation -------------------------------------------------
sh "$here/tests/conduit/server-ctl.sh" start "$t/server" >/dev/null || exit 1
port=$(cat "$t/server/port")
ca=$t/server/pki
tls=$t/tls
mkdir -p "$tls" "$t/etc" "$t/plugins" "$t/bin" "$t/state"
chmod 0755 "$tls" "$t/etc" "$t/plugins" "$t/bin"

# newcert NAME CN [CA-DIR-PREFIX] [DAYS]: a key and a certificate made
# here with openssl, signed by the server's CA unless told otherwise
newcert() {
	openssl ecparam -name prime256v1 -genkey -noout -out "$tls/$1.key" 2>/dev/null
	openssl req -new -key "$tls/$1.key" -subj "/CN=$2" -out "$tls/$1.csr"
	printf 'extendedKeyUsage=clientAuth\n' > "$tls/$1.ext"
	openssl x509 -req -in "$tls/$1.csr" -CA "${3:-$ca/ca}.crt" -CAkey "${3:-$ca/ca}.key" \
		-CAcreateserial -days "${4:-365}" -extfile "$tls/$1.ext" -out "$tls/$1.crt" 2>/dev/null
	rm -f "$tls/$1.csr" "$tls/$1.ext"
	chown nobody "$tls/$1.key" "$tls/$1.crt"
	chmod 0600 "$tls/$1.key"
	chmod 0644 "$tls/$1.crt"
}
# an expired one needs explicit dates: openssl ca
expired_cert() {
	db=$t/ca-db
	mkdir -p "$db"
	: > "$db/index.txt"
	echo 01 > "$db/serial"
	cat > "$db/ca.cnf" <<CNF
[ca]
default_ca = test
[test]
database = $db/index.txt
serial = $db/serial
new_certs_dir = $db
default_md = sha256
policy = any
[any]
commonName = supplied
[ext]
extendedKeyUsage = clientAuth
CNF
	openssl ecparam -name prime256v1 -genkey -noout -out "$tls/$1.key" 2>/dev/null
	openssl req -new -key "$tls/$1.key" -subj "/CN=conduit-service" -out "$tls/$1.csr"
	openssl ca -batch -config "$db/ca.cnf" -cert "$ca/ca.crt" -keyfile "$ca/ca.key" \
		-in "$tls/$1.csr" -startdate 20240101000000Z -enddate 20250101000000Z \
		-extensions ext -out "$tls/$1.crt" >/dev/null 2>&1 || return 1
	chown nobody "$tls/$1.key" "$tls/$1.crt"
	chmod 0600 "$tls/$1.key"
}
cp "$ca/ca.crt" "$tls/ca.crt"
chmod 0644 "$tls/ca.crt"
newcert client conduit-service

# the Slurm side: slurmctld's burst_buffer/lua plugin links liblua5.1
cat > "$t/plugins/bb.c" <<'EOF'
#include <lua.h>
int plugin_lua_version(void) { return LUA_VERSION_NUM; }
void *plugin_lua_open(void) { return (void *)lua_pushnil; }
EOF
cc -shared -fPIC -o "$t/plugins/burst_buffer_lua.so" "$t/plugins/bb.c" \
	$(pkg-config --cflags lua5.1) -Wl,--no-as-needed $(pkg-config --libs lua5.1) ||
	{ echo "cannot build the stand-in plugin"; exit 1; }
readelf -d "$t/plugins/burst_buffer_lua.so" | grep -q 'NEEDED.*liblua5\.1' ||
	{ echo "stand-in plugin does not need liblua5.1"; exit 1; }
for p in squeue scontrol; do
	printf '#!/bin/sh\n[ "$1" = --version ] && echo "slurm 24.11.5"\n' > "$t/bin/$p"
	chmod 0755 "$t/bin/$p"
done
cat > "$t/etc/slurm.conf" <<EOF
ClusterName=doctor
SlurmUser=nobody
BurstBufferType=burst_buffer/lua
PluginDir=$t/plugins
EOF
printf 'require("conduit_bb")\n' > "$t/etc/burst_buffer.lua"
printf 'Directive=CONDUIT\nFlags=TeardownFailure\n' > "$t/etc/burst_buffer.conf"
conf() { # conf [CERT [KEY]]
	cat > "$t/etc/conduit_bb.conf" <<EOF
ConduitServer=127.0.0.1:$port
CACert=$tls/ca.crt
ClientCert=$tls/${1:-client}.crt
ClientKey=$tls/${2:-${1:-client}}.key
StateDir=$t/state
Squeue=$t/bin/squeue
Scontrol=$t/bin/scontrol
EOF
}
conf
chown nobody "$t/state"
chmod 0700 "$t/state"
module=$B/lua5.1/conduit_bb.so

doctor() { # doctor [ARGS...]: run it; $rc, output in $t/out
	SLURM_CONF=$t/etc/slurm.conf CONDUIT_BB_CONF= "$CBB" doctor --module "$module" "$@" \
		>"$t/out" 2>&1
	rc=$?
}
# expect STATUS 'check: text'  a line "STATUS check: ...text..." exists
expect() {
	grep -F -- "$2" "$t/out" | grep -q "^$1 " || fail "no '$1' line with: $2"
}
exits() { [ "$rc" -eq "$1" ] || fail "exit status $rc, not $1"; }
only_failure() { # only_failure CHECK: the one FAIL is CHECK's
	n=$(grep -c '^FAIL ' "$t/out")
	others=$(grep '^FAIL ' "$t/out" | grep -v "^FAIL  $1: ")
	[ -z "$others" ] || fail "other checks failed too ($n): $others"
}

case $case in
healthy)
	doctor
	exits 0
	grep -v '^doctor: ' "$t/out" | grep -v '^ok ' && fail "a line that is not ok"
	for c in config slurm.conf SlurmUser burst_buffer.lua burst_buffer.conf "slurm Lua" \
		module CACert ClientCert chain ClientKey server StateDir squeue scontrol; do
		grep -q "^ok    $c: " "$t/out" || fail "no ok line for $c"
	done
	expect ok "server: 127.0.0.1:$port answered a Query"
	expect ok "ClientCert's CN=conduit-service"
	expect ok "slurm Lua: $t/plugins/burst_buffer_lua.so links liblua5.1.so.0"
	expect ok "module: $module was built for Lua 5.1"
	# the real Query reached the server, as conduit-service, matching nothing
	grep '"method": "Query"' "$t/server/rpc.log" | grep -q '"cn": "conduit-service".*"matched": 0' ||
		fail "the server logged no Query from conduit-service: $(cat "$t/server/rpc.log")"
	doctor --json
	exits 0
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
assert d["failed"] == 0 and d["warnings"] == 0, d
assert all(c["status"] == "ok" for c in d["checks"]), d
assert any(c["check"] == "server" for c in d["checks"])' "$t/out" || fail "--json"
	;;
expiring)
	newcert soon conduit-service "" 10
	conf soon
	doctor
	exits 0
	# 10 days from the second it was signed: 10 days, or 9 and some hours
	expect warn "ClientCert: $tls/soon.crt (CN=conduit-service) expires in "
	grep -Eq "^warn  ClientCert: .* expires in (9|10) days \(" "$t/out" || fail "not 9 or 10 days"
	expect ok "server: 127.0.0.1:$port answered"
	;;
expired)
	expired_cert old || fail "openssl ca could not make the expired certificate"
	conf old
	doctor
	exits 1
	expect FAIL "ClientCert: $tls/old.crt (CN=conduit-service) expired on 2025-01-01 00:00 UTC"
	expect FAIL "make a new certificate on the Conduit server"
	expect FAIL "which is how a TLS 1.3 server refuses a client certificate"
	# the server refuses it too: the real Query fails
	expect FAIL "server: 127.0.0.1:$port did not answer a Query with ClientCert CN=conduit-service"
	expect ok "chain: $tls/old.crt verifies against CACert"
	;;
other-ca)
	openssl ecparam -name prime256v1 -genkey -noout -out "$t/other.key" 2>/dev/null
	openssl req -x509 -new -key "$t/other.key" -subj "/CN=rotated-ca" -days 30 \
		-out "$t/other.crt" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign"
	newcert rogue conduit-service "$t/other"
	conf rogue
	doctor
	exits 1
	expect FAIL "chain: $tls/rogue.crt (issued by CN=rotated-ca) does not verify against CACert $tls/ca.crt (unable to get local issuer certificate)"
	expect FAIL "server: 127.0.0.1:$port did not answer a Query"
	expect ok "ClientCert: $tls/rogue.crt: CN=conduit-service, issued by CN=rotated-ca"
	;;
key-0644)
	chmod 0644 "$tls/client.key"
	doctor
	exits 1
	expect FAIL "ClientKey: $tls/client.key is mode 0644: readable by every user; chmod 0600 $tls/client.key"
	only_failure ClientKey
	;;
key-mismatch)
	newcert spare conduit-service
	conf client spare
	doctor
	exits 1
	expect FAIL "ClientKey: $tls/spare.key does not match ClientCert $tls/client.crt"
	expect FAIL "server: 127.0.0.1:$port did not answer a Query"
	;;
server-down)
	sh "$here/tests/conduit/server-ctl.sh" stop "$t/server"
	doctor
	exits 1
	expect FAIL "server: 127.0.0.1:$port did not answer a Query with ClientCert CN=conduit-service (no answer)"
	expect FAIL "is the Conduit server running and reachable at ConduitServer?"
	only_failure server
	;;
state-ro)
	mount --bind "$t/state" "$t/state" 2>/dev/null || { echo "cannot bind-mount here"; exit 77; }
	mounts="$t/state"
	mount -o remount,bind,ro "$t/state" || exit 1
	touch "$t/state/x" 2>/dev/null && fail "the mount is not read-only"
	doctor
	exits 1
	expect FAIL "StateDir: $t/state is not writable by SlurmUser nobody (Read-only file system)"
	only_failure StateDir
	;;
state-owner)
	chown 4242 "$t/state"
	doctor
	exits 1
	expect FAIL "StateDir: $t/state belongs to uid 4242 (no user), not SlurmUser nobody: every staging hook refuses it; chown nobody $t/state"
	only_failure StateDir
	# owned by root, 0700: the hooks accept root, but SlurmUser cannot write
	chown root "$t/state"
	doctor
	exits 1
	expect FAIL "StateDir: $t/state is not writable by SlurmUser nobody (Permission denied)"
	;;
state-mode)
	chmod 0770 "$t/state"
	doctor
	exits 1
	expect FAIL "StateDir: $t/state is mode 0770: writable by group or others, so every staging hook refuses it; chmod 0700 $t/state"
	chmod 0755 "$t/state"
	doctor
	exits 0
	expect warn "StateDir: $t/state is mode 0755: other users can read the jobs' records"
	;;
state-full)
	mount -t tmpfs -o size=4m,mode=0700,uid=65534 cbb-doctor "$t/state" 2>/dev/null ||
		{ echo "cannot mount a tmpfs here"; exit 77; }
	mounts="$t/state"
	dd if=/dev/zero of="$t/state/filler" bs=64k 2>/dev/null
	doctor
	exits 1
	expect FAIL "StateDir: $t/state has 0 KiB and"
	only_failure StateDir
	;;
lua-mismatch)
	module=$B/lua5.3/conduit_bb.so
	[ -f "$module" ] || { echo "no $module (make lua-all)"; exit 1; }
	doctor
	exits 1
	expect ok "slurm Lua: $t/plugins/burst_buffer_lua.so links liblua5.1.so.0: slurmctld runs Lua 5.1"
	expect FAIL "module: $module was built for Lua 5.3, but slurmctld links Lua 5.1: every hook would fail to load; rebuild and install it with make install LUA_VERSION=5.1"
	only_failure module
	;;
no-bb-lua)
	sed -i 's,^BurstBufferType=.*,BurstBufferType=burst_buffer/datawarp,' "$t/etc/slurm.conf"
	doctor
	exits 1
	expect FAIL "slurm.conf: $t/etc/slurm.conf has BurstBufferType=burst_buffer/datawarp; set BurstBufferType=burst_buffer/lua"
	only_failure slurm.conf
	sed -i '/^BurstBufferType=/d' "$t/etc/slurm.conf"
	doctor
	exits 1
	expect FAIL "slurm.conf: $t/etc/slurm.conf has no BurstBufferType; add BurstBufferType=burst_buffer/lua"
	;;
shim)
	printf 'require("conduit_bb")\nfunction slurm_bb_pools() return 0 end\n' > "$t/etc/burst_buffer.lua"
	doctor
	exits 1
	expect FAIL "burst_buffer.lua: $t/etc/burst_buffer.lua is not the one line require(\"conduit_bb\")"
	only_failure burst_buffer.lua
	rm "$t/etc/burst_buffer.lua"
	doctor
	exits 1
	expect FAIL "burst_buffer.lua: $t/etc/burst_buffer.lua: missing"
	;;
config-errors)
	sed -i '2a RequestTimeout=forever' "$t/etc/conduit_bb.conf"
	echo 'StageDir=/tmp' >> "$t/etc/conduit_bb.conf"
	doctor
	exits 1
	expect FAIL "config: $t/etc/conduit_bb.conf line 3: RequestTimeout"
	expect FAIL "config: $t/etc/conduit_bb.conf line 9: unknown key 'StageDir'"
	[ "$(grep -c '^FAIL  config: ' "$t/out")" -eq 2 ] || fail "not two config errors"
	only_failure config
	expect ok "server: 127.0.0.1:$port answered"
	;;
configless)
	echo 'SwitchType=switch/lua' >> "$t/etc/slurm.conf"
	printf 'require("conduit_bb")\n' > "$t/etc/switch.lua"
	doctor
	exits 0
	expect ok "switch.lua: $t/etc/switch.lua is the one line require(\"conduit_bb\")"
	grep -q 'configless' "$t/out" && fail "a node with its own slurm.conf called configless"
	# slurmd's copy, fetched from slurmctld: Slurm's own files only
	cache=$t/spool/conf-cache
	mkdir -p "$cache"
	cp "$t/etc/slurm.conf" "$t/etc/burst_buffer.lua" "$t/etc/burst_buffer.conf" "$cache/"
	chmod -R a+rX "$t/spool"
	SLURM_CONF=$cache/slurm.conf CONDUIT_BB_CONF= "$CBB" doctor --module "$module" >"$t/out" 2>&1
	rc=$?
	exits 1
	expect ok "configless: $cache/slurm.conf is slurmd's copy of the controller's"
	expect FAIL "switch.lua: $cache/switch.lua: missing: every step of a --network job on this node runs without its session; slurmd fetches only Slurm's own files into its conf-cache on a configless node: install switch.lua on this node and set SwitchParameters=switch_lua_script=/etc/slurm/switch.lua"
	expect FAIL "configless: $cache/conduit_bb.conf: missing: slurmd fetches only Slurm's own files"
	# installed on the node, and named where slurmd's steps will look
	echo "SwitchParameters=switch_lua_script=$t/etc/switch.lua" >> "$cache/slurm.conf"
	SLURM_CONF=$cache/slurm.conf CONDUIT_BB_CONF=$t/etc/conduit_bb.conf "$CBB" doctor \
		--module "$module" >"$t/out" 2>&1
	rc=$?
	exits 0
	expect ok "switch.lua: $t/etc/switch.lua is the one line"
	grep -q '^FAIL ' "$t/out" && fail "a FAIL with both files installed"
	;;
switch)
	sh "$here/tests/switch/controller-ctl.sh" start "$t/controller" >/dev/null || exit 1
	cp "$t/controller/pki/ca.crt" "$tls/broker-ca.crt"
	cp "$t/controller/pki/service.crt" "$tls/broker.crt"
	cp "$t/controller/pki/service.key" "$tls/broker.key"
	chown nobody "$tls/broker.crt" "$tls/broker.key"
	openssl rand 64 > "$tls/session.key"
	chown nobody "$tls/session.key"
	chmod 0600 "$tls/session.key"
	cat >> "$t/etc/conduit_bb.conf" <<EOF2
SwitchController=http
SwitchControllerURL=https://localhost:$(cat "$t/controller/port")
SwitchCACert=$tls/broker-ca.crt
SwitchClientCert=$tls/broker.crt
SwitchClientKey=$tls/broker.key
SessionKeyFile=$tls/session.key
EOF2
	doctor
	exits 0
	expect ok "SessionKeyFile: $tls/session.key: private, readable by nobody"
	expect ok "SwitchController: https://localhost:$(cat "$t/controller/port") answered"
	chmod 0644 "$tls/session.key"
	sh "$here/tests/switch/controller-ctl.sh" stop "$t/controller"
	doctor
	exits 1
	expect FAIL "SessionKeyFile: $tls/session.key is mode 0644: readable by every user; chmod 0600"
	expect FAIL "SwitchController: https://localhost:"
	# a controller key SlurmUser cannot read
	chmod 0644 "$tls/session.key"
	chown root "$tls/broker.key"
	doctor
	expect FAIL "SwitchClientKey: $tls/broker.key cannot be read by SlurmUser nobody (Permission denied)"
	;;
programs)
	sed -i "s,^Squeue=.*,Squeue=$t/bin/no-such-squeue," "$t/etc/conduit_bb.conf"
	chmod 0700 "$t/bin/scontrol" # root's: SlurmUser nobody may not run it
	doctor
	exits 1
	expect FAIL "squeue: cannot run $t/bin/no-such-squeue --version as SlurmUser nobody (not found"
	expect FAIL "set Squeue= in conduit_bb.conf"
	expect FAIL "scontrol: cannot run $t/bin/scontrol --version as SlurmUser nobody (not found, not executable"
	[ "$(grep -c '^FAIL ' "$t/out")" -eq 2 ] || fail "not two failures"
	# one that never answers costs 5 s, not more
	printf '#!/bin/sh
exec sleep 60
' > "$t/bin/slow-squeue"
	chmod 0755 "$t/bin/slow-squeue" "$t/bin/scontrol"
	sed -i "s,^Squeue=.*,Squeue=$t/bin/slow-squeue," "$t/etc/conduit_bb.conf"
	t0=$(date +%s)
	doctor
	exits 1
	[ $(( $(date +%s) - t0 )) -lt 15 ] || fail "doctor waited $(( $(date +%s) - t0 )) s for squeue"
	expect FAIL "squeue: cannot run $t/bin/slow-squeue --version as SlurmUser nobody (not found, not executable, or no answer in 5 s)"
	only_failure squeue
	expect ok "scontrol: $t/bin/scontrol: slurm 24.11.5"
	;;
audit-log)
	mkdir -p "$t/log"
	chown nobody "$t/log"
	chmod 0755 "$t/log"
	echo "AuditLog=$t/log/audit.log" >> "$t/etc/conduit_bb.conf"
	doctor
	exits 0
	expect ok "AuditLog: $t/log/audit.log: can be created by nobody"
	[ ! -e "$t/log/audit.log" ] || fail "doctor created the AuditLog"
	install -o nobody -m 0640 /dev/null "$t/log/audit.log"
	doctor
	exits 0
	expect ok "AuditLog: $t/log/audit.log: appendable by nobody"
	# SlurmUser can append to it (0666), but the hooks refuse a file of another uid
	chown root "$t/log/audit.log"
	chmod 0666 "$t/log/audit.log"
	doctor
	exits 0
	expect warn "AuditLog: $t/log/audit.log: it belongs to uid 0, not uid 65534 (who runs the hooks): the hooks write no audit line and no hook record"
	chown nobody "$t/log/audit.log"
	chmod 0640 "$t/log/audit.log"
	chmod 0777 "$t/log"
	doctor
	expect warn "AuditLog: $t/log/audit.log: its directory $t/log has mode 0777: it must not be writable by group or others"
	rm "$t/log/audit.log"
	doctor
	expect warn "AuditLog: $t/log/audit.log: its directory $t/log has mode 0777"
	chmod 0755 "$t/log"
	install -o nobody -m 0640 /dev/null "$t/log/real.log"
	ln -s real.log "$t/log/audit.log"
	doctor
	expect warn "AuditLog: $t/log/audit.log: it is a symbolic link"
	rm "$t/log/audit.log"
	mkfifo -m 0640 "$t/log/audit.log"
	chown nobody "$t/log/audit.log"
	t0=$(date +%s)
	doctor
	exits 0
	[ $(( $(date +%s) - t0 )) -lt 15 ] || fail "doctor waited on the FIFO"
	expect warn "AuditLog: $t/log/audit.log: it is not a regular file (a FIFO)"
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
cat "$t/out"

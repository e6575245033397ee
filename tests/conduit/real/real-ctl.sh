#!/bin/sh
# real-ctl.sh start|stop|restart|stop-rqlite|start-rqlite DIR [PORT]
# Run the REAL Conduit for tests (tests/conduit/server-ctl.sh runs the
# Python stand-in): etcd, the rqlite stand-in (rqlite-standin.py),
# conduit-server and conduit-runner, all on 127.0.0.1; the runner execs
# conduit-fta (rsync plugin) per job step as the transfer's user.
#
# DIR holds everything: pki/ (ca.crt = the external CA that signs the
# server certificate, which the server makes anew at every start with SANs
# localhost and 127.0.0.1; service.crt/.key = CN conduit-service,
# alice.crt/.key = an ordinary user, admin.crt/.key = CN conduit-admin;
# the client certificates are made with `conduit-server
# external-client-cert --expiration 36500`), conf/ (the three YAML
# configs), port (Conduit's port), ports (every port), etcd/ (etcd's
# data), rqlite.db, *.log, *.pid.  PORT: Conduit's port (default: DIR/port,
# else a free one); the others are free ports picked once (DIR/ports).
# `start` returns once a Query as conduit-service is answered (it goes
# through the server, etcd and the rqlite stand-in).  `restart` keeps
# etcd's data and the archive: transfers survive it.  `stop-rqlite` and
# `start-rqlite` stop and start only the rqlite stand-in ("the archive
# store is down": Query then fails).
#
# Environment:
#   CBB_CONDUIT_BIN    the binaries: conduit-server, conduit-runner,
#                      conduit-fta, etcd (default: build.sh --print-bin,
#                      which builds them if needed and exits 77 without
#                      ../shared/vendor; inside another root, where they
#                      were copied: build.sh --install ROOT puts them in
#                      ROOT/opt/conduit-real/bin)
#   CBB_CONDUIT_USERS  "name:uid ..." made local users if missing (default
#                      "cbbuser:61001 otheruser:61002", the busted specs'
#                      uids; "none": make none).  The server resolves a
#                      numeric user with a getpwuid-style lookup and the
#                      runner setuid()s the FTA to that name, both in the
#                      local /etc/passwd: on the host this adds those users
#                      to the host (idempotent); an e2e root has alice/bob.
#   CBB_PYTHON         default /usr/bin/python3 (Debian's grpcio)
#   CONDUIT_PB_DIR     the Python stubs of src/bb/proto/conduit.proto
#                      (default build/gen/py, else made in DIR/py)
# Inside a chroot: run it there with the project's tree and the binaries
# inside the root, e.g.
#   build.sh --install ROOT
#   chroot ROOT env CBB_CONDUIT_BIN=/opt/conduit-real/bin CBB_CONDUIT_USERS=none \
#     sh /opt/conduit-bb/tests/conduit/real/real-ctl.sh start /var/lib/conduit-real 24600
# (the root needs rsync, python3-grpcio, python3-protobuf, protoc and
# grpc_python_plugin, /proc and /dev mounted; the same command with `stop`
# ends it).  etcd's peer URL is plain http on 127.0.0.1 (one member).
set -eu
real=$(cd "$(dirname "$0")" && pwd)
here=$(cd "$real/../../.." && pwd)
[ $# -ge 2 ] || { echo "usage: real-ctl.sh start|stop|restart|stop-rqlite|start-rqlite DIR [PORT]" >&2; exit 2; }
cmd=$1
dir=$2
port=${3:-}
py=${CBB_PYTHON:-/usr/bin/python3}
bin=${CBB_CONDUIT_BIN:-}
users=${CBB_CONDUIT_USERS:-cbbuser:61001 otheruser:61002}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pki=$dir/pki
conf=$dir/conf

say() { echo "real-ctl: $*" >&2; }

free_port() {
	"$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# stop_one NAME: TERM its process group (setsid made one: the runner's FTAs
# and their rsync go with it), KILL what is left after 10 s
stop_one() {
	f=$dir/$1.pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$f"
}

# run_bg NAME command...: in its own session, output to DIR/NAME.log
run_bg() {
	name=$1
	shift
	: > "$dir/$name.log"
	setsid "$@" >>"$dir/$name.log" 2>&1 </dev/null &
	echo $! > "$dir/$name.pid"
}

alive() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

died() { # died NAME: it is not running: show its log, fail
	tail -30 "$dir/$1.log" >&2 || true
	say "$1 did not start (log: $dir/$1.log)"
	exit 1
}

port_open() {
	"$py" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null
}

wait_port() { # wait_port NAME PORT SECONDS
	i=0
	until port_open "$2"; do
		alive "$1" || died "$1"
		i=$((i + 1))
		[ $i -lt $(($3 * 5)) ] || { say "$1: port $2 not open after $3 s"; died "$1"; }
		sleep 0.2
	done
}

make_users() {
	[ "$users" = none ] && return 0
	for u in $users; do
		name=${u%:*}
		uid=${u#*:}
		id "$name" >/dev/null 2>&1 && continue
		getent passwd "$uid" >/dev/null 2>&1 && { say "uid $uid exists under another name; not adding $name"; continue; }
		# test users for the real Conduit: the server maps the uid the
		# module sends to this name and the runner runs the FTA as it
		useradd -u "$uid" -U -M -d /nonexistent -s /usr/sbin/nologin "$name"
	done
}

# Certificates, made once with Conduit's own subcommands
make_pki() {
	[ -s "$pki/ca.crt" ] && [ -s "$pki/service.key" ] && return 0
	mkdir -p "$pki"
	cas="--internal-ca-cert $pki/internal-ca.pem --internal-ca-key $pki/internal-ca.key
	     --external-ca-cert $pki/external-ca.pem --external-ca-key $pki/external-ca.key
	     --config $conf/conduit-server-config.yaml"
	# shellcheck disable=SC2086
	{
		"$bin/conduit-server" internal-ca $cas
		"$bin/conduit-server" external-ca $cas
		for s in etcd rqlite; do
			"$bin/conduit-server" internal-server-cert $cas --separate-cert-key \
				--cert-name $s-server.crt --key-name $s-server.key --output "$pki/" \
				--server-ip 127.0.0.1 --server-hostname localhost
		done
		for c in service:conduit-service admin:conduit-admin alice:alice; do
			"$bin/conduit-server" external-client-cert $cas --separate-cert-key \
				--cert-name "${c%%:*}.crt" --key-name "${c%%:*}.key" --output "$pki/" \
				--client-commonname "${c#*:}" --expiration 36500
		done
	} >"$dir/pki.log" 2>&1 || { cat "$dir/pki.log" >&2; say "making certificates failed"; exit 1; }
	cp "$pki/external-ca.pem" "$pki/ca.crt"
	chmod 0600 "$pki"/*.key
	chmod 0644 "$pki"/*.crt "$pki"/*.pem
	chmod 0755 "$pki"
}

make_conf() {
	# shellcheck disable=SC2086
	set -- $(cat "$dir/ports")
	cport=$1 eport=$2 epeer=$3 rport=$4 runport=$5 wsport=$6
	mkdir -p "$conf"
	chmod 0755 "$conf"
	etcd_list="etcd:
  - hostname: localhost
    ip: 127.0.0.1
    port: $eport"
	cat > "$conf/conduit-server-config.yaml" <<EOF
# written by tests/conduit/real/real-ctl.sh
auth:
  internal-ca-cert: $pki/internal-ca.pem
  internal-ca-key: $pki/internal-ca.key
  external-ca-cert: $pki/external-ca.pem
  external-ca-key: $pki/external-ca.key
  keytab: $dir/no-keytab
errant-lock: 336h
$etcd_list
rqlite:
  - hostname: localhost
    ip: 127.0.0.1
    port: $rport
node-allocations:
  validation: {nodes: 1, memory: 1MB}
  setup: {nodes: 1, memory: 1MB}
  transfer: {nodes: 1, memory: 1MB}
  teardown: {nodes: 1, memory: 1MB}
nodes:
  node1:
    address: 127.0.0.1
    port: $runport
    min-memory: 1MB
    max-jobs: 16
server:
  hostname: [localhost]
  ip: [127.0.0.1]
  port: $cport
  ws-port: $wsport
  concurrency: {schedulers: 2, watchdogs: 2, transfer-workers: 2}
test: false
transfer:
  expiry-advance: 60s
  max-source-bytes: 4000
EOF
	# server.ip is read as one string by the runner (a list would make it
	# listen on every interface)
	cat > "$conf/conduit-runner-config.yaml" <<EOF
# written by tests/conduit/real/real-ctl.sh
auth:
  internal-ca-cert: $pki/internal-ca.pem
  internal-ca-key: $pki/internal-ca.key
server:
  ip: 127.0.0.1
  hostname: [localhost]
  port: $runport
fta:
  path: $bin/conduit-fta
  options: ["--config", "$conf/conduit-fta-config.yaml"]
$etcd_list
EOF
	# one filesystem: every absolute path, as itself; the rsync plugin
	# copies, posix validates, sets up and tears down (no trash)
	cat > "$conf/conduit-fta-config.yaml" <<EOF
# written by tests/conduit/real/real-ctl.sh
auth:
  internal-ca-cert: $pki/internal-ca.pem
transfer:
  expiry-interval: 10s
  expiry-advance: 60s
$etcd_list
filesystems:
  default:
    user-path: /.*
    fta-root-fs-path: /
    fta-path: \$0
    plugin-stages:
      validation: posix
      setup-src: posix
      setup-dst: posix
      transfer-src: [rsync]
      transfer-dst: [rsync]
      teardown-src: posix
      teardown-dst: posix
    custom-plugin-config:
      posix-src-trash: ""
fta:
  verify-retry-count: 20
  verify-sleep-duration: 5s
plugins:
  rsync:
    rsync-path: $(command -v rsync || echo /usr/bin/rsync)
EOF
	chmod 0644 "$conf"/*.yaml
}

pb_dir() {
	d=${CONDUIT_PB_DIR:-$here/build/gen/py}
	if [ ! -f "$d/conduit_pb2_grpc.py" ]; then
		d=$dir/py
		if [ ! -f "$d/conduit_pb2_grpc.py" ]; then
			mkdir -p "$d"
			protoc -I"$here/src/bb/proto" --python_out="$d" --grpc_out="$d" \
				--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin \
				"$here/src/bb/proto/conduit.proto"
		fi
	fi
	echo "$d"
}

start_rqlite() {
	alive rqlite && return 0
	# shellcheck disable=SC2086
	set -- $(cat "$dir/ports")
	run_bg rqlite "$py" "$real/rqlite-standin.py" --port "$4" --db "$dir/rqlite.db" \
		--cert "$pki/rqlite-server.crt" --key "$pki/rqlite-server.key" --ca "$pki/internal-ca.pem"
	i=0
	until grep -q '^ready' "$dir/rqlite.log" 2>/dev/null; do
		alive rqlite || died rqlite
		i=$((i + 1))
		[ $i -lt 100 ] || died rqlite
		sleep 0.1
	done
}

start() {
	if [ -z "$bin" ]; then
		# on the host: the cached build (made now if its inputs changed;
		# exit 77 with build.sh's line when ../shared/vendor is missing)
		bin=$(sh "$real/build.sh" --print-bin) || {
			rc=$?
			[ $rc -eq 77 ] && echo "$bin"
			exit $rc
		}
	fi
	for b in conduit-server conduit-runner conduit-fta etcd; do
		[ -x "$bin/$b" ] || {
			say "no $bin/$b: build it with tests/conduit/real/build.sh (or set CBB_CONDUIT_BIN)"
			exit 1
		}
	done
	command -v rsync >/dev/null || { say "rsync is not installed (the FTA's rsync plugin runs it)"; exit 1; }
	make_users
	if [ ! -s "$dir/ports" ]; then
		[ -n "$port" ] || port=$(cat "$dir/port" 2>/dev/null || free_port)
		echo "$port $(free_port) $(free_port) $(free_port) $(free_port) $(free_port)" > "$dir/ports"
	elif [ -n "$port" ]; then
		sed -i "s/^[0-9]*/$port/" "$dir/ports"
	fi
	# shellcheck disable=SC2086
	set -- $(cat "$dir/ports")
	cport=$1 eport=$2 epeer=$3 runport=$5
	echo "$cport" > "$dir/port"
	if ! alive server && port_open "$cport"; then
		say "port $cport (Conduit's) is in use by another program"
		exit 1
	fi
	# the FTA runs as the transfer's user: it reads conf/ and the CA
	chmod 0755 "$dir"
	make_conf
	make_pki
	pb=$(pb_dir)

	mkdir -p "$dir/etcd"
	chmod 0700 "$dir/etcd"
	alive etcd || run_bg etcd "$bin/etcd" --name conduit-etcd --data-dir "$dir/etcd" \
		--listen-client-urls "https://127.0.0.1:$eport" \
		--advertise-client-urls "https://127.0.0.1:$eport" \
		--listen-peer-urls "http://127.0.0.1:$epeer" \
		--initial-advertise-peer-urls "http://127.0.0.1:$epeer" \
		--initial-cluster "conduit-etcd=http://127.0.0.1:$epeer" \
		--cert-file "$pki/etcd-server.crt" --key-file "$pki/etcd-server.key" \
		--client-cert-auth --trusted-ca-file "$pki/internal-ca.pem" \
		--log-level warn
	wait_port etcd "$eport" 30
	start_rqlite
	alive runner || run_bg runner "$bin/conduit-runner" -d --config "$conf/conduit-runner-config.yaml"
	wait_port runner "$runport" 30
	alive server || run_bg server "$bin/conduit-server" --config "$conf/conduit-server-config.yaml"
	i=0
	until CONDUIT_PB_DIR=$pb "$py" "$real/client.py" "$dir" ready 2 2>"$dir/ready.err"; do
		alive server || died server
		i=$((i + 1))
		[ $i -lt 30 ] || { cat "$dir/ready.err" >&2; died server; }
	done
}

stop() {
	for s in server runner rqlite etcd; do
		stop_one $s
	done
}

case $cmd in
start) start ;;
stop) stop ;;
restart) stop; start ;;
stop-rqlite) stop_one rqlite ;;
start-rqlite) start_rqlite ;;
*) echo "usage: real-ctl.sh start|stop|restart|stop-rqlite|start-rqlite DIR [PORT]" >&2; exit 2 ;;
esac

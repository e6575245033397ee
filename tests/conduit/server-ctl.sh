#!/bin/sh
# server-ctl.sh start|stop|restart|wipe DIR [PORT]
# Run the Conduit test server for tests: certificates in DIR/pki (made
# once), state DIR/state.json, RPC log DIR/rpc.log, fault knobs
# DIR/faults.json, uid map DIR/users.json, pid DIR/server.pid, port
# DIR/port.  Listens on 127.0.0.1 only.  `start` waits until it answers.
# `wipe` restarts it with its database gone (every transfer forgotten).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
cmd=$1
dir=$2
port=${3:-}
mkdir -p "$dir"
pb=$here/build/gen/py

stop() {
	[ -f "$dir/server.pid" ] || return 0
	pid=$(cat "$dir/server.pid")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$dir/server.pid"
}

start() {
	sh "$here/tests/conduit/make-certs.sh" "$dir/pki"
	[ -f "$dir/users.json" ] || echo '{"61001": "cbbuser", "61002": "otheruser"}' > "$dir/users.json"
	[ -f "$dir/faults.json" ] || echo '{}' > "$dir/faults.json"
	if [ -z "$port" ]; then
		port=$(cat "$dir/port" 2>/dev/null || /usr/bin/python3 -c \
			'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	fi
	echo "$port" > "$dir/port"
	: > "$dir/server.out"
	CONDUIT_PB_DIR=$pb setsid /usr/bin/python3 "$here/tests/conduit/server.py" \
		--port "$port" --pki "$dir/pki" --state "$dir/state.json" \
		--log "$dir/rpc.log" --faults "$dir/faults.json" \
		--users "$dir/users.json" >"$dir/server.out" 2>&1 </dev/null &
	echo $! > "$dir/server.pid"
	i=0
	until grep -q ready "$dir/server.out" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$(cat "$dir/server.pid")" 2>/dev/null; then
			cat "$dir/server.out" >&2
			echo "server-ctl: the test server did not start" >&2
			exit 1
		fi
	done
}

case $cmd in
start) start ;;
stop) stop ;;
restart) stop; start ;;
wipe) stop; rm -f "$dir/state.json"; start ;;
*) echo "usage: server-ctl.sh start|stop|restart|wipe DIR [PORT]" >&2; exit 2 ;;
esac

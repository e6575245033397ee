#!/bin/sh
# controller-ctl.sh start|stop DIR [PORT] - the test session controller on
# 127.0.0.1: certificates DIR/pki, state DIR/state.json (kept across
# restarts), log DIR/log, faults DIR/faults.json, port DIR/port.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=$2
mkdir -p "$dir"
case $1 in
start)
	sh "$here/tests/conduit/make-certs.sh" "$dir/pki"
	port=${3:-$(cat "$dir/port" 2>/dev/null || /usr/bin/python3 -c \
		'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
	echo "$port" > "$dir/port"
	[ -f "$dir/faults.json" ] || echo '{}' > "$dir/faults.json"
	: > "$dir/out"
	setsid /usr/bin/python3 "$here/tests/switch/controller.py" --port "$port" \
		--pki "$dir/pki" --state "$dir/state.json" --log "$dir/log" \
		--faults "$dir/faults.json" </dev/null >"$dir/out" 2>&1 &
	echo $! > "$dir/pid"
	i=0
	until grep -q ready "$dir/out"; do
		sleep 0.1
		i=$((i + 1))
		[ $i -lt 100 ] || { cat "$dir/out" >&2; exit 1; }
	done ;;
stop)
	[ -f "$dir/pid" ] || exit 0
	kill "$(cat "$dir/pid")" 2>/dev/null || true
	sleep 0.2
	kill -9 "$(cat "$dir/pid")" 2>/dev/null || true
	rm -f "$dir/pid" ;;
esac

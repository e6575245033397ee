#!/bin/sh
# cluster.sh start|stop|restart-slurmctld|stop-conduit|start-conduit|wipe-conduit
# Start or stop munged, the Conduit test server, MariaDB, slurmdbd,
# slurmctld and slurmd in the root (with the switch/lua plugin, profile
# 26.05-switch: also the test session controller, and two slurmd, nodes
# cbb1 and cbb2).  Stopping goes by pid file, then any process left whose root is
# the chroot, then unmounts: safe to run at any time, any number of times.
set -u
. "$(dirname "$0")/lib.sh"
# run.sh's lock on the root (fd 9) stays with run.sh: a daemon that
# outlived a killed suite must not keep the root locked
exec 9>&- 8>&- # the suite's root lock and wave lock stay with the suite

pid_of() { cat "$R/$1" 2>/dev/null; }

stop_pidfile() { # stop_pidfile relative-pid-file [seconds before SIGKILL]
	p=$(pid_of "$1")
	[ -n "$p" ] || return 0
	# a stale pid file's number may be another process's by now (pids
	# wrap, on a busy machine within minutes): only a process of this
	# root is ours to stop
	ours() { [ "$(readlink "/proc/$p/root" 2>/dev/null)" = "$R" ]; }
	ours && kill "$p" 2>/dev/null
	i=0
	# slurmctld saves its state (burst buffers too) on the way out: a busy
	# one needs time, and killing it loses the buffers of staging jobs
	while ours && [ $i -lt $(( ${2:-10} * 10 )) ]; do sleep 0.1; i=$((i + 1)); done
	ours && kill -9 "$p" 2>/dev/null
	rm -f "$R/$1"
}

start_conduit() {
	echo '{}' > "$R$SRV/faults.json.new" && [ -f "$R$SRV/faults.json" ] ||
		mv "$R$SRV/faults.json.new" "$R$SRV/faults.json"
	rm -f "$R$SRV/faults.json.new"
	: > "$R$SRV/server.out"
	chroot "$R" env CONDUIT_PB_DIR=$E2E_SRC/build/gen/py setsid /usr/bin/python3 \
		$E2E_SRC/tests/conduit/server.py --port $CONDUIT_PORT --pki $PKI \
		--state $SRV/state.json --log $SRV/rpc.log --faults $SRV/faults.json \
		</dev/null >"$R$SRV/server.out" 2>&1 &
	echo $! > "$R/run/conduit-test.pid"
	wait_for 15 grep -q ready "$R$SRV/server.out" || {
		cat "$R$SRV/server.out" >&2
		return 1
	}
}

# The Conduit test server: by its pid file, then any test server of this
# root left on its port (one a stop missed would serve half the
# connections from a store of its own; server.py also refuses to start
# on a port in use)
stop_conduit() {
	stop_pidfile run/conduit-test.pid
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/root" 2>/dev/null)" = "$R" ] || continue
		tr '\0' ' ' < "$d/cmdline" 2>/dev/null |
			grep -q "tests/conduit/server.py --port $CONDUIT_PORT " || continue
		kill -9 "${d#/proc/}" 2>/dev/null
	done
	return 0
}

node_idle() { [ "$(in_root sinfo -h -o %t | sort -u)" = idle ]; } # every node
# the nodes of this profile, each a slurmd (-N NAME with multiple-slurmd)
slurmd_nodes() { [ -n "$SWITCH_PLUGIN" ] && echo cbb1 cbb2; }

# The test session controller (tests/switch/controller.py), in the root.
start_sessions() {
	mkdir -p "$R$SESSIONS" "$R/run/conduit_bb"
	chmod 0755 "$R/run/conduit_bb"
	chroot "$R" sh $E2E_SRC/tests/switch/controller-ctl.sh start $SESSIONS $SESSION_PORT
}
db_up() { in_root mariadb -e "select 1"; }
dbd_up() { in_root sacctmgr -n show cluster format=cluster; }

# MariaDB, then slurmdbd.  A cluster whose slurmctld state was wiped
# (run.sh wipes it for every run) gets an empty accounting database too,
# since Slurm hands out job ids from 1 again.  The database is made here:
# slurmdbd 24.11 and 26.05 die on a first start against MariaDB 11.8 when
# they create it themselves (docs/admin.md, Troubleshooting).
start_db() {
	mkdir -p "$R/run/mysqld"
	in_root chown mysql:mysql /run/mysqld
	chroot "$R" setsid /usr/sbin/mariadbd --user=mysql \
		--pid-file=/run/mysqld/mysqld.pid </dev/null >"$R/var/log/slurm/mariadb.log" 2>&1 &
	wait_for 60 db_up || {
		tail -20 "$R/var/log/slurm/mariadb.log" >&2
		return 1
	}
	fresh=
	[ -n "$(ls -A "$R/var/spool/slurmctld" 2>/dev/null)" ] ||
		fresh="DROP DATABASE IF EXISTS slurm_acct_db;"
	in_root mariadb -e "$fresh CREATE DATABASE IF NOT EXISTS slurm_acct_db" || return 1
	in_root /usr/sbin/slurmdbd || return 1
	wait_for 30 dbd_up || {
		log "e2e: slurmdbd does not answer"
		tail -20 "$R/var/log/slurm/slurmdbd.log" >&2
		return 1
	}
	in_root sacctmgr -n show cluster format=cluster | grep -qw conduit ||
		in_root sacctmgr -i add cluster conduit >/dev/null
}

start() {
	mount_root
	in_root chown munge:munge /run/munge
	chroot --userspec=munge:munge "$R" /usr/sbin/munged || return 1
	start_conduit || return 1
	start_db || return 1
	if [ -n "$SWITCH_PLUGIN" ]; then
		start_sessions || return 1
	fi
	wiped=
	[ -n "$(ls -A "$R/var/spool/slurmctld" 2>/dev/null)" ] || wiped=1
	in_root /usr/sbin/slurmctld || return 1
	if [ -n "$SWITCH_PLUGIN" ]; then
		for n in $(slurmd_nodes); do
			mkdir -p "$R/var/spool/slurmd/$n"
			in_root /usr/sbin/slurmd -N "$n" || return 1
		done
	else
		in_root /usr/sbin/slurmd || return 1
	fi
	wait_for 30 node_idle || {
		log "e2e: the node did not become idle"
		tail -20 "$R/var/log/slurm/slurmctld.log" >&2
		return 1
	}
	# A wiped state has nothing saved until slurmctld's first way out or
	# its five-minute checkpoint, and a slurmctld that cannot save on its
	# way out (26.05 under load: "Locks left set ... Can not save state",
	# the scheduler holding the job lock) then cannot start again ("No
	# Assoc usage file").  The restart checks stop it mid-stage: so it
	# saves once now, idle.
	if [ -n "$wiped" ]; then
		stop_pidfile run/slurmctld.pid 60
		[ -f "$R/var/spool/slurmctld/assoc_usage" ] || {
			log "e2e: slurmctld saved no state on its way out"
			return 1
		}
		in_root /usr/sbin/slurmctld || return 1
		wait_for 30 node_idle || {
			log "e2e: the node did not become idle after slurmctld's restart"
			tail -20 "$R/var/log/slurm/slurmctld.log" >&2
			return 1
		}
	fi
}

stop() {
	[ -d "$R/proc" ] || return 0
	stop_pidfile run/slurmd.pid
	for n in $(slurmd_nodes); do stop_pidfile "run/slurmd-$n.pid"; done
	stop_pidfile "$SESSIONS/pid"
	stop_pidfile run/slurmctld.pid 60
	stop_pidfile run/slurmdbd.pid 30
	stop_pidfile run/mysqld/mysqld.pid 60
	stop_pidfile run/conduit-test.pid
	stop_pidfile run/munge/munged.pid
	for p in $(root_pids); do kill "$p" 2>/dev/null; done
	no_root_pids() { [ -z "$(root_pids)" ]; }
	wait_for 3 no_root_pids
	for p in $(root_pids); do kill -9 "$p" 2>/dev/null; done
	umount_root
}

case ${1:-} in
start) start ;;
stop) stop ;;
restart-slurmctld)
	stop_pidfile run/slurmctld.pid 60
	in_root /usr/sbin/slurmctld ;;
stop-conduit) stop_conduit ;;
start-conduit) start_conduit ;;
wipe-conduit) # restarted without its database: every transfer forgotten
	stop_conduit
	rm -f "$R$SRV/state.json"
	start_conduit ;;
*) echo "usage: cluster.sh start|stop|restart-slurmctld|stop-conduit|start-conduit|wipe-conduit" >&2; exit 2 ;;
esac

# jobs.sh - sourced by status.sh and metrics.sh: a Conduit test server,
# and the jobs the real hooks leave in every state (tests/admin/jobs.lua)
# in a fresh directory $t, removed on exit with the server.
#   jobs_setup NAME JOB_BASE   sets $t, $work (jobs.lua's WORK) and the
#                              variables of $t/ids
#   jobs_as_slurmuser          StateDir, client key and cert: nobody's
jobs_setup() {
	t=$(mktemp -d "/tmp/cbb-$1.XXXXXX")
	chmod 0755 "$t"
	work=
	trap jobs_cleanup EXIT
	trap 'exit 130' INT TERM
	sh tests/conduit/server-ctl.sh start "$t/server" >/dev/null || exit 1
	mkdir -p "$t/jobstates"
	CBB_MODULE_DIR=build/lua5.4 CBB_SERVER_DIR=$t/server \
		CONDUIT_BB_CONF=$t/conduit_bb.conf FAKE_SQUEUE_DIR=$t/jobstates \
		CBB_JOB_BASE=$2 lua5.4 tests/admin/jobs.lua "$t/ids" ||
		{ echo "the hooks could not set the jobs up"; exit 1; }
	. "$t/ids"
	work=$WORK
}

# StateDir and the client certificate and key owned by nobody, as
# SlurmUser's would be (the admin commands, run as root, become it)
jobs_as_slurmuser() {
	chown -R nobody "$work/state" "$t/server/pki/service.key" "$t/server/pki/service.crt"
}

jobs_cleanup() {
	sh tests/conduit/server-ctl.sh stop "$t/server" 2>/dev/null
	[ -n "$work" ] && rm -rf "$work"
	rm -rf "$t"
}

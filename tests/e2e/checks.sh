# checks.sh - what the end-to-end scenarios share (sourced by run.sh after
# lib.sh): counting checks, submitting as alice, and reading what Slurm,
# the Conduit test server and StateDir say.  Every check line names the
# Slurm it ran on: "ok - [24.11] ...".
pass=${pass:-0}
fail=${fail:-0}
LABEL=${LABEL:-?}

ok() { pass=$((pass + 1)); echo "ok - [$LABEL] $*"; }
bad() { fail=$((fail + 1)); echo "not ok - [$LABEL] $*"; }
expect() { # expect "what" command... : a check
	what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
note() { echo "# [$LABEL] $*"; }
# the installed command: the Debian package's (/usr/bin) or make install's
CBB_CLI=$(chroot "$R" sh -c 'command -v conduit-bb' 2>/dev/null)
CBB_CLI=${CBB_CLI:-/usr/bin/conduit-bb}

submit() { # submit SCRIPT-NAME [sbatch options...] -> job id (as alice)
	script=$1
	shift
	as_user alice sbatch --parsable --chdir=$JOBS "$@" "$JOBS/$script" 2>"$R/tmp/sbatch.err"
}
# A job's field from `scontrol show job`, for fields after any user text
# this suite sets (never JobName-dependent).
field() { in_root scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | tail -1; }
# The state word of one job (its own row: `-j` of an array lists tasks).
state_of() { in_root squeue -h -t all -j "$1" -o '%A %T' 2>/dev/null | awk -v j="$1" '$1 == j { print $2 }'; }
state_is() { [ "$(state_of "$1")" = "$2" ]; }
# Slurm is done with the job's burst buffer (torn down; no hook follows)
torn_down() { in_root scontrol show job "$1" 2>/dev/null | grep -q 'BurstBufferState=complete'; }
reason_has() { in_root squeue -h -t all -j "$1" -o '%A|%r' 2>/dev/null | grep "^$1|" | grep -qF -- "$2"; }
# written whole, then renamed: the server never reads half a file
faults() { printf '%s\n' "$1" > "$R$SRV/faults.json.new" && mv "$R$SRV/faults.json.new" "$R$SRV/faults.json"; }
# The server's RPC log ("" before its first RPC: the counts are then 0,
# whichever scenario ran first)
rpcs() { cat "$R$SRV/rpc.log" 2>/dev/null; }
starts_for() { rpcs | grep '"method": "StartTransfer"' | grep -c "SLURMJOB:$1,"; }
starts_of() { rpcs | grep '"method": "StartTransfer"' | grep -c -- "$1"; }
stops() { rpcs | grep -c '"method": "StopTransfer"'; }
rpc_has() { rpcs | grep -q -- "$1"; }
transfers_of() { # state:active:type of a job's transfers, from the server's state
	# (state "aborted": Conduit's ERROR_ABORTED, whatever state the abort
	# ended in: TRANSFER_ERROR as a rule, TRANSFER_ABORTED at times)
	in_root /usr/bin/python3 -c "
import json,sys
st=json.load(open('$SRV/state.json'))
print(' '.join(sorted('%s:%s:%s' % ('aborted' if t['error'] == 18 else t['state'], int(t['active']), t['comment'].split(',')[-2]) for t in st.values() if t['comment'].startswith('SLURMJOB:$1,') and not t['validationOnly'])))"
}
aside_of() { # aside_of PATH K: the one aside attempt K's output at PATH went to
	set -- $(ls -d "$R$1.conduit-attempt-$2-"* 2>/dev/null)
	[ $# -eq 1 ] && echo "${1#"$R"}"
}
none_active() { ! transfers_of "$1" | grep -q ':1:'; }
file_is() { [ -f "$R$1" ] && [ "$(cat "$R$1")" = "$2" ]; }
owned_by_alice() { [ "$(stat -c %u "$R$1")" = 2001 ]; }
gone() { [ ! -e "$R$1" ]; }
# The hook processes: the children of this root's slurmscriptd
# ("slurmctld: burst_buffer.lua", one per call)
hook_pids() {
	for sd in $(pgrep -f '^slurmctld: slurmscriptd'); do
		[ "$(readlink "/proc/$sd/root" 2>/dev/null)" = "$R" ] || continue
		pgrep -P "$sd"
	done
}
write_job() { # write_job NAME < script
	cat > "$R$JOBS/$1"
	chown 2001:2001 "$R$JOBS/$1"
}
# StateDir files of a job (conduit_bb keeps a few while the job lives).
state_files() { ls "$R/var/spool/conduit_bb" 2>/dev/null | grep -E "^conduit\\.$1\\." ; }
# A teardown leaves two files on purpose, both swept when old:
# conduit.<job>.skipped (skipped stage-outs for bbstat, the job's user,
# and the records of what it started, which a requeue after the teardown
# reads) and, after a hurried teardown of a job that is over,
# conduit.<job>.over (it stops a stage hook Slurm runs after the
# teardown); and a stage-out `conduit-bb recover` finished leaves
# conduit.<job>.outdone: no_state_files does not count them.
no_state_files() { [ -z "$(state_files "$1" | grep -Ev '\.(over|skipped|outdone)$')" ]; }
# Wait until the server has seen N StartTransfer for a job.
wait_starts() { # wait_starts JOB N SECONDS
	wait_for "$3" sh -c "[ \$(cat $R$SRV/rpc.log 2>/dev/null | grep '\"method\": \"StartTransfer\"' | grep -c SLURMJOB:$1,) -ge $2 ]"
}
# StartTransfers in flight, as "JOB INDEX" lines, of stage-in (TYPE 0,
# CONDUIT_PRE) or stage-out (TYPE 1, CONDUIT_POST) directives: the server
# has the request (its RPC log; with start_then_stall_ms it logs it, then
# waits before answering) and the hook has not had the answer (conduit_bb's
# StateDir record of that directive is still U: sent, outcome unknown).
# JOBS (optional) limits the search to those jobs.
in_flight() { # in_flight TYPE [JOBS]
	word=$( [ "$1" = 0 ] && echo CONDUIT_PRE || echo CONDUIT_POST )
	# (a record of a call in flight is seconds old: recent files only)
	files=$(find "$R/var/spool/conduit_bb" -maxdepth 1 -name 'conduit.*.started' \
		-newermt '60 seconds ago' 2>/dev/null)
	[ -n "$files" ] || return 0
	starts=$(rpcs | grep '"method": "StartTransfer"' | grep "SLURMTYPE:$word,")
	# (a file a teardown removes after the find is skipped: awk goes on)
	# shellcheck disable=SC2086
	awk -v t="$1" 'FNR == 1 { j = FILENAME; sub(/.*\/conduit\./, "", j); sub(/\.started$/, "", j) }
		$4 == t { k[j " " $6] = $8 } END { for (x in k) if (k[x] == "U") print x }' $files 2>/dev/null |
		while read -r j ix; do
			[ -z "${2:-}" ] || printf '%s\n' $2 | grep -qx "$j" || continue
			printf '%s\n' "$starts" | grep -q "SLURMJOB:$j,.*SLURMINDEX:$ix,SLURMTYPE:$word," &&
				echo "$j $ix"
		done
}
outs_in_flight() { in_flight 1 "$@"; }
# Whether directive INDEX of JOB (stage TYPE) is still unanswered (its
# record still U).
still_unsure() { # still_unsure JOB INDEX [TYPE]
	awk -v ix="$2" -v t="${3:-1}" '$4 == t && $6 == ix { k = $8 } END { exit k != "U" }' \
		"$R/var/spool/conduit_bb/conduit.$1.started" 2>/dev/null
}
# slurmctld's log has conduit_bb saying the server has been down for more
# than N seconds at a poll of JOB's STAGE (stage-in, stage-out; any job: "")
down_longer_than() { # down_longer_than N STAGE [JOB]
	grep -oE "conduit_bb: job ${3:-[0-9]+}: $2: .* \(server down for [0-9]+ s" \
		"$R/var/log/slurm/slurmctld.log" 2>/dev/null |
		sed 's/.*server down for \([0-9]*\) s$/\1/' | awk -v n="$1" '$1 > n { f = 1 } END { exit !f }'
}
# A held job's reason: Slurm's words around a hook's message differ by
# version ("slurm_bb_test_data_in: MSG" in 24.11, "JobHeldAdmin:
# slurm_bb_test_data_in failed: MSG" from 25.05); conduit_bb's are exact.
hook_reason() { # hook_reason JOB HOOK MSG
	in_root squeue -h -t all -j "$1" -o '%A|%r' 2>/dev/null | grep "^$1|" |
		grep -qF -e "$2: $3" -e "$2 failed: $3"
}
# The same in `scontrol show job`, whose Reason= has '_' for ' '.
hook_reason_ctl() { # hook_reason_ctl JOB HOOK MSG
	r=$(printf '%s' "$3" | tr ' ' _)
	in_root scontrol show job -o "$1" 2>/dev/null |
		grep -qF -e "$2:_$r" -e "$2_failed:_$r"
}
# Whether the Slurm under test is release MAJOR.MINOR or later (LABEL is
# "24.11" or "24.11/lua5.4"), for the checks on what Slurm itself says,
# which changed between releases (docs/admin.md, "What differs between
# the releases")
slurm_at_least() { # slurm_at_least 25.05
	echo "${LABEL%%/*} $1" | awk '{ split($1, a, "."); split($2, b, ".");
		exit !(a[1] + 0 > b[1] + 0 || (a[1] + 0 == b[1] + 0 && a[2] + 0 >= b[2] + 0)) }'
}
all_tasks() { # all_tasks ARRAY N WHAT: WHAT holds for each task index 0..N-1
	i=0
	while [ $i -lt "$2" ]; do
		eval "$3" || return 1
		i=$((i + 1))
	done
}

#!/bin/sh
# run.sh - `make bench`: measure the hooks against a Conduit test server
# the way Slurm runs them, one new process per call (tests/bench/fork.sh,
# fork and fork+exec), then in one long-lived process
# (tests/bench/hooks.sh) on this machine and inside the Slurm 24.11 root
# (tests/bench/root.sh), count job_process instructions with callgrind,
# and time job_process beside Conduit's own plugin.  Prints a Markdown
# report; docs/performance.md keeps a dated copy.  Measures, asserts
# nothing.
set -eu
cd "$(dirname "$0")/../.."
B=build
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/work" "$dir/state"
# job_process reads nothing of the server: any address does
cat > "$dir/conduit_bb.conf" <<CONF
ConduitServer=127.0.0.1:1
ServerName=localhost
CACert=/dev/null
ClientCert=/dev/null
ClientKey=/dev/null
MaxDirectives=1000
StateDir=$dir/state
CONF
echo "## Hooks the way Slurm runs them: a new process per call"
echo
echo "Each call: fork (and, in the second table, exec) a process, a fresh"
echo "Lua state, require(\"conduit_bb\"), the one hook, lua_close, exit."
echo "Wall from fork to reaped; CPU is the child's user+sys.  \"floor\" is"
echo "the same process without the hook.  Polls run while all N transfers"
echo "are running.  Set CBB_BENCH_BASE to another build's module directory"
echo "to run the two call by call (A = this build, B = that one)."
echo
sh tests/bench/fork.sh $B/test/fork_bench-5.4 fork "${CBB_BENCH_REPS:-21}" $B/lua5.4 ${CBB_BENCH_BASE:-}
echo
sh tests/bench/fork.sh $B/test/fork_bench-5.4 exec "${CBB_BENCH_REPS:-21}" $B/lua5.4 ${CBB_BENCH_BASE:-}
echo
echo "## Hooks in one long-lived process (in-process: the module stays loaded)"
echo
echo "Not how Slurm runs them: every call gets a fresh Lua state, but the"
echo "module is mapped once for the whole run, so require costs nothing."
echo
sh tests/bench/hooks.sh $B/test/bench-5.4 $B/lua5.4
echo
echo "## Hooks inside the Slurm 24.11 root (in-process)"
echo
sh tests/bench/root.sh
echo
echo "## job_process parser instructions (callgrind)"
echo
echo "cbb_parse_script inclusive, divided by its own call count; the"
echo "marginal cost is (per call at N - per call at 1) / (N - 1)."
echo
echo "| directives | parser instructions per call | per directive | marginal per directive |"
echo "|---|---|---|---|"
one=0
for n in 1 10 100; do
	s=$dir/work/bench-$n.sh
	[ -f "$s" ] || {
		printf '#!/bin/bash\n#SBATCH -N 1\n'
		i=0
		while [ $i -lt $n ]; do
			printf "#CONDUIT_PRE cp -r '%s/src/data set' %s/dst/%d-%%j/\n" \
				"$dir/work" "$dir/work" $i
			i=$((i + 1))
		done
		echo "srun ./app"
	} > "$s"
	CONDUIT_BB_CONF=$dir/conduit_bb.conf valgrind --tool=callgrind \
		--callgrind-out-file="$dir/cg.$n" $B/test/hook_loop-5.4 $B/lua5.4 \
		lua/burst_buffer.lua "$s" "$s" 300 1 >/dev/null 2>&1 || true
	per_call=$(callgrind_annotate --tree=calling "$dir/cg.$n" 2>/dev/null |
		awk '/> .*cbb_parse_script \(/ { gsub(",", "", $1); c = $0
			sub(/.*\(/, "", c); sub(/x\).*/, "", c); print int($1 / c); exit }')
	[ "$n" = 1 ] && one=$per_call
	marginal=-
	[ "$n" = 1 ] || marginal=$(( (per_call - one) / (n - 1) ))
	echo "| $n | $per_call | $((per_call / n)) | $marginal |"
done
echo
echo "## job_process against Conduit's own plugin (side by side)"
echo
echo "Median wall time of one hook process's part (load the plugin into a"
echo "fresh Lua state, call slurm_bb_job_process) on the same script of N"
echo "#CONDUIT_POST lines; reference: ${CBB_REFERENCE:-not given}."
echo
CONDUIT_BB_CONF=$dir/conduit_bb.conf $B/test/vs_reference-5.4 $B/lua5.4 \
	"${CBB_REFERENCE:-/nonexistent}" "$dir/work"

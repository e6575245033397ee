#!/bin/sh
# run.sh - `make bench`: start the Conduit test server, measure the hooks
# (tests/bench/bench.c), count job_process instructions with callgrind.
# Prints a Markdown report; docs/performance.md keeps a dated copy.
set -eu
cd "$(dirname "$0")/../.."
B=build
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'sh tests/conduit/server-ctl.sh stop "$dir/server"; rm -rf "$dir"' EXIT
mkdir -p "$dir/work/src/data set" "$dir/work/dst" "$dir/state"
head -c 65536 /dev/urandom > "$dir/work/src/data set/blob"
chmod -R a+rwX "$dir/work"
sh tests/conduit/server-ctl.sh start "$dir/server"
echo '{"step_ms": 5}' > "$dir/server/faults.json"
pki=$dir/server/pki
cat > "$dir/conduit_bb.conf" <<CONF
ConduitServer=127.0.0.1:$(cat "$dir/server/port")
ServerName=localhost
CACert=$pki/ca.crt
ClientCert=$pki/service.crt
ClientKey=$pki/service.key
MaxDirectives=1000
StateDir=$dir/state
CONF
echo "## Hooks against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
CONDUIT_BB_CONF=$dir/conduit_bb.conf $B/test/bench-5.4 $B/lua5.4 "$dir/server" "$dir/work"
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

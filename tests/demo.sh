#!/bin/sh
# demo.sh - what a user sees: `conduit-bb check` plans the transfers of the
# example job exactly as slurm_bb_job_process will at sbatch time, then
# shows the one-line rejection of a bad directive.
set -u
cd "$(dirname "$0")/.." || exit 2
cli=build/conduit-bb
echo "\$ cat docs/examples/stage-in-out.sh"
cat docs/examples/stage-in-out.sh
echo
echo "\$ conduit-bb check docs/examples/stage-in-out.sh --job-id 4242 --workdir /home/alice"
$cli check docs/examples/stage-in-out.sh --job-id 4242 --workdir /home/alice || exit 1
echo
echo "\$ conduit-bb check docs/examples/bad-directive.sh"
if $cli check docs/examples/bad-directive.sh; then
	echo "demo: the bad directive was accepted" >&2
	exit 1
fi
echo
echo "(sbatch would print: sbatch: error: burst_buffer/lua: <the same message>)"

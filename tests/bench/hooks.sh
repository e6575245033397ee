#!/bin/sh
# hooks.sh BENCH MODULE_DIR - start a Conduit test server of our own and
# run the hook benchmark (tests/bench/bench.c, built as BENCH for the Lua
# of the conduit_bb.so in MODULE_DIR) against it; prints a Markdown
# table.  Used by run.sh on this machine and, inside the Slurm 24.11 root
# (Debian 13: its libcurl, OpenSSL and Lua 5.1), by root.sh.
set -eu
cd "$(dirname "$0")/../.."
bench=$1
mods=$2
BLOB_BYTES=65536
. tests/bench/setup.sh
echo '{"step_ms": 5}' > "$dir/server/faults.json"
echo "Against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores, libcurl $curl_v, OpenSSL $ssl_v, $(basename "$mods")):"
echo
CONDUIT_BB_CONF=$dir/conduit_bb.conf "$bench" "$mods" "$dir/server" "$dir/work"

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
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'sh tests/conduit/server-ctl.sh stop "$dir/server"; rm -rf "$dir"' EXIT
mkdir -p "$dir/work/src/data set" "$dir/work/dst" "$dir/state"
head -c 65536 /dev/urandom > "$dir/work/src/data set/blob"
chmod -R a+rwX "$dir/work"
sh tests/conduit/server-ctl.sh start "$dir/server" >/dev/null
echo '{"step_ms": 5}' > "$dir/server/faults.json"
pki=$dir/server/pki
# what squeue says of a staging job (pending): the polls ask it now and
# then; a real squeue with no slurmctld to answer would time out instead
printf '#!/bin/sh\necho "$5 $5 N/A PENDING"\n' > "$dir/squeue"
chmod 0755 "$dir/squeue"
cat > "$dir/conduit_bb.conf" <<CONF
ConduitServer=127.0.0.1:$(cat "$dir/server/port")
ServerName=localhost
CACert=$pki/ca.crt
ClientCert=$pki/service.crt
ClientKey=$pki/service.key
MaxDirectives=1000
StateDir=$dir/state
Squeue=$dir/squeue
CONF
curl_v=$(pkg-config --modversion libcurl 2>/dev/null || echo "?")
ssl_v=$(openssl version 2>/dev/null | awk '{ print $2 }')
echo "Against the local Conduit test server ($(date -u +%Y-%m-%d), $(nproc) cores, libcurl $curl_v, OpenSSL $ssl_v, $(basename "$mods")):"
echo
CONDUIT_BB_CONF=$dir/conduit_bb.conf "$bench" "$mods" "$dir/server" "$dir/work"

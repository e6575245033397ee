# setup.sh - sourced by fork.sh and hooks.sh from the project's top: a
# temporary directory $dir (removed at exit) with a workspace whose
# directives copy "src/data set/blob" (BLOB_BYTES, default 4096), a
# Conduit test server of our own ($dir/server, stopped at exit), a
# stand-in squeue that says the job is pending and counts its runs in
# $dir/squeue.log (a real squeue with no slurmctld would time out), and
# the conduit_bb.conf for them ($dir/conduit_bb.conf).  Sets pki, and
# curl_v and ssl_v for a report's heading.
dir=$(mktemp -d)
chmod 0755 "$dir"
trap 'sh tests/conduit/server-ctl.sh stop "$dir/server"; rm -rf "$dir"' EXIT
mkdir -p "$dir/work/src/data set" "$dir/work/dst" "$dir/state"
head -c "${BLOB_BYTES:-4096}" /dev/urandom > "$dir/work/src/data set/blob"
chmod -R a+rwX "$dir/work"
sh tests/conduit/server-ctl.sh start "$dir/server" >/dev/null
pki=$dir/server/pki
printf '#!/bin/sh\necho x >> %s/squeue.log\necho "$5 $5 N/A PENDING"\n' "$dir" > "$dir/squeue"
chmod 0755 "$dir/squeue"
: > "$dir/squeue.log"
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

#!/usr/bin/python3
"""smoke.py DIR - the real-Conduit smoke checks (run by smoke.sh on a stack
that real-ctl.sh started in DIR).  Prints one line per check and what it
measured; exits 1 at the first failed check.

  1. StartTransfer as conduit-service for user "61001" (SMOKE_UID; a decimal string,
     as conduit_bb sends it), with a comment, action COPY, of a small file:
     TRANSFER_FINALIZED, the copy identical and owned by uid 61001;
     the states seen and the validation latency are printed
  2. Query by Comment regex for user "61001" finds it
  3. dataTransferred / bandwidth / filesTransferred as the server wrote them
  4. StopTransfer of a running big copy (a sparse file): the states after
  5. Query while the rqlite stand-in is stopped: UNKNOWN "failed to get
     user transfers from rqlite: ... connection refused"; then back
  6. TLS: 1.2 refused, 1.3 with ALPN h2; alice.crt's Query sees only
     alice's transfers; Version
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import time

import grpc

sys.dont_write_bytecode = True  # no __pycache__ in the project's tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client import Client, as_dict, pb  # noqa: E402

UID = int(os.environ.get("SMOKE_UID", "61001"))
TERMINAL = {"TRANSFER_FINALIZED", "TRANSFER_ERROR", "TRANSFER_ABORT", "TRANSFER_ABORTED"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def watch(c, tid, until, timeout):
    """Poll by id every 0.2 s until until(d) holds; return (d, [(t, state)])."""
    t0 = time.time()
    seen = []
    d = None
    while time.time() - t0 < timeout:
        try:
            td = c.by_id(str(UID), tid)
        except grpc.RpcError as e:
            seen.append((round(time.time() - t0, 1), "RPC %s" % e.details()))
            td = None
        if td is not None:
            d = as_dict(td)
            if not seen or seen[-1][1] != d["state"]:
                seen.append((round(time.time() - t0, 1), d["state"]))
            if until(d):
                return d, seen
        time.sleep(0.2)
    fail("transfer %s: condition not reached in %d s; states %s; last %s" % (tid, timeout, seen, d))


def main():
    sdir = sys.argv[1]
    ctl = os.environ["REAL_CTL"]
    work = os.path.join(sdir, "data")
    os.makedirs(work + "/in", exist_ok=True)
    os.makedirs(work + "/out", exist_ok=True)
    os.chmod(work, 0o755)
    os.chmod(work + "/in", 0o755)
    os.chown(work + "/out", UID, UID)
    src = work + "/in/small.dat"
    with open(src, "wb") as f:
        f.write(os.urandom(3 * 1024 * 1024 + 5))
    os.chmod(src, 0o644)
    dst = work + "/out/small.dat"
    c = Client(sdir)

    # 1 ---------------------------------------------------------------
    comment = "SLURMJOB:4242,SLURMINDEX:0,SLURMTYPE:STAGE_IN"
    t0 = time.time()
    td = c.start(str(UID), comment, "COPY", [src], dst)
    tid = td.transferID
    print("start: id %s state %s user %r comment %r (%.2f s)" % (
        tid, pb.TransferState.Name(td.state), td.user, td.comment, time.time() - t0))
    d, seen = watch(c, tid, lambda d: d["state"] in TERMINAL or d.get("error", "ERROR_NONE") != "ERROR_NONE", 180)
    print("states (s after start): %s" % seen)
    if d["state"] != "TRANSFER_FINALIZED":
        fail("expected TRANSFER_FINALIZED, got %s" % d)
    val = [t for t, s in seen if s not in ("TRANSFER_INIT", "TRANSFER_INIT_COMPLETE",
                                           "TRANSFER_VALIDATION_READY", "TRANSFER_VALIDATION_SUBMITTED",
                                           "TRANSFER_VALIDATING")]
    print("validation done after <= %.1f s; finalized after %.1f s" % (val[0] if val else -1, seen[-1][0]))
    st = os.stat(dst)
    if open(dst, "rb").read() != open(src, "rb").read():
        fail("the copy differs from the source")
    if st.st_uid != UID:
        fail("the copy is owned by uid %d, not %d" % (st.st_uid, UID))
    print("ok 1 - COPY for user \"%d\" finalized, copy identical, owned by uid %d (%s)" % (UID, st.st_uid, d["user"]))

    # 2 ---------------------------------------------------------------
    found = c.query(str(UID), "Comment", "^SLURMJOB:4242,")
    if tid not in found:
        fail("Query by Comment did not find %s: %s" % (tid, list(found)))
    print("ok 2 - Query Comment ^SLURMJOB:4242, for user \"%d\" finds it (%d found, active=%s)" % (UID,
        len(found), found[tid].active))

    # 3 ---------------------------------------------------------------
    size = os.path.getsize(src)
    print("ok 3 - sizes: dataTransferred=%r bandwidth=%r filesTransferred=%r (source %d bytes)" % (
        d.get("dataTransferred"), d.get("bandwidth"), d.get("filesTransferred"), size))
    if not re.match(r"^[0-9.]+[KMGTP]?B$", d.get("dataTransferred", "")):
        fail("dataTransferred %r is not a size with a unit" % d.get("dataTransferred"))

    # 4 ---------------------------------------------------------------
    big = work + "/in/big.dat"
    with open(big, "wb") as f:
        f.truncate(int(os.environ.get("SMOKE_BIG_GIB", "4")) << 30)
    os.chmod(big, 0o644)
    bdst = work + "/out/big.dat"
    bt = c.start(str(UID), "SLURMJOB:4243,SLURMINDEX:0,SLURMTYPE:STAGE_IN", "COPY", [big], bdst).transferID
    d, seen = watch(c, bt, lambda d: d["state"] == "TRANSFER_DATA_TRANSFERRING" or d["state"] in TERMINAL, 180)
    if d["state"] != "TRANSFER_DATA_TRANSFERRING":
        fail("the big copy ended before it could be stopped: %s" % d)
    # the rsync plugin's progress lines (sizes and rates while running)
    samples = []
    for _ in range(20):
        time.sleep(0.5)
        r = as_dict(c.by_id(str(UID), bt))
        if r["state"] != "TRANSFER_DATA_TRANSFERRING":
            break
        if r.get("dataTransferred"):
            samples.append((r.get("dataTransferred"), r.get("bandwidth")))
        if len(samples) >= 3:
            break
    print("big copy running: (dataTransferred, bandwidth) samples %s; pluginStatus %r" % (
        samples, r.get("pluginStatus")))
    if r["state"] != "TRANSFER_DATA_TRANSFERRING":
        fail("the big copy ended before it could be stopped: %s" % r)
    t0 = time.time()
    r = c.stop([bt])
    print("StopTransfer answered in %.2f s with the snapshot state %s" % (
        time.time() - t0, pb.TransferState.Name(r.details[bt].state)))
    d, seen = watch(c, bt, lambda d: d["state"] in TERMINAL and d["state"] != "TRANSFER_ABORT", 120)
    print("after stop: %s; state %s error %s %r active %s" % (seen, d["state"], d["error"], d.get("errorMessage"), d.get("active", False)))
    if d["error"] != "ERROR_ABORTED":
        fail("the stopped transfer has error %s" % d["error"])
    time.sleep(3)
    # Conduit's FTA leaves its rsync running after an abort (docs/testing.md)
    ps = subprocess.run(["pgrep", "-f", "-u", str(UID), "rsync " + big], capture_output=True, text=True).stdout.split()
    print("rsync processes of the stopped copy still running 3 s later: %d" % len(ps))
    print("ok 4 - StopTransfer of a running copy: %s / %s" % (d["state"], d["error"]))
    subprocess.run(["pkill", "-f", "-u", str(UID), "rsync " + big])

    # 5 ---------------------------------------------------------------
    subprocess.run(["sh", ctl, "stop-rqlite", sdir], check=True)
    try:
        c.query(str(UID), "Comment", "^SLURMJOB:4242,")
        fail("Query answered with the rqlite stand-in down")
    except grpc.RpcError as e:
        msg = e.details()
        print("rqlite down: %s %r" % (e.code(), msg))
        if e.code() != grpc.StatusCode.UNKNOWN or "failed to get user transfers from rqlite" not in msg \
                or "connection refused" not in msg:
            fail("unexpected error with rqlite down")
    subprocess.run(["sh", ctl, "start-rqlite", sdir], check=True)
    if tid not in c.query(str(UID), "Comment", "^SLURMJOB:4242,"):
        fail("Query after the stand-in came back did not find the transfer")
    print("ok 5 - Query with the rqlite stand-in down: UNKNOWN ...connection refused; back after start-rqlite")

    # 6 ---------------------------------------------------------------
    port = int(open(os.path.join(sdir, "port")).read())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(sdir, "pki", "ca.crt"))
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    try:
        with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost"):
            fail("a TLS 1.2 handshake succeeded")
    except ssl.SSLError as e:
        tls12 = str(e)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(sdir, "pki", "ca.crt"))
    ctx.set_alpn_protocols(["h2"])
    with ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost") as s:
        got = (s.version(), s.selected_alpn_protocol(), s.getpeercert()["subject"])
    # alice.crt: an ordinary user; Query is scoped to her own transfers
    # (none on the host; in an e2e root SMOKE_UID=2001 is alice)
    mine = Client(sdir, "alice").query("", "Comment", ".*")
    if any(t.user != "alice" for t in mine.values()):
        fail("alice sees transfers that are not hers: %s" % [(k, t.user) for k, t in mine.items()])
    v = c.version()
    print("Version: version=%r modified=%r time=%r" % (v.version, v.modified, v.time))
    print("ok 6 - TLS: 1.2 refused (%s); %s, ALPN %s, server %s; alice sees %d transfers, all hers" % (
        tls12, got[0], got[1], got[2], len(mine)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

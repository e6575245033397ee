#!/usr/bin/python3
"""A faithful Conduit test server (grpcio, Conduit's conduitapi.ConduitApi).

What it reproduces (see docs/testing.md): mTLS with the client
certificate's CN as identity (conduit-service/conduit-admin may act for a
user given as uid or name, never root); the transfer state progression
INIT ... VALIDATION_COMPLETE ... DATA_TRANSFERRING ... FINALIZED with
progress fields, sizes and rates as strings with units ("1073741824B",
"49.95MB/s"); validation done as the user with Conduit's wording, its
destInfo kept when it fails; copies and moves performed as that user the
way Conduit's rsync mover does them (a tree lands under its own name in
the destination, a directory without -r is skipped); the 4000-byte source
cap on StartTransfer; identical-path refusal; regex Query on any field
(OR/AND) scoped to the caller; StopTransfer (ABORT, then TRANSFER_ERROR
with ERROR_ABORTED, as the real server ends it); archiving; destInfo
(what validation found at the destination); the real server's words for
an unknown uid and for its archive store down; state that survives a
restart.  Where it still differs from the real server (TLS 1.2 accepted,
a client certificate required at the handshake, seconds of validation)
is in docs/testing.md.

Fault knobs, re-read from --faults (JSON) on every RPC and worker tick:
  step_ms            delay between states (default 20)
  delay_ms           {"DATA_TRANSFERRING": 2000, ...} per state
  hold_at            [{"state": "DATA_TRANSFERRING", "ms": 600000,
                       "comment": "<regex>"}]  delay_ms for the matching
                     transfers only (the longest delay that matches wins)
  fail_at            [{"state": "VALIDATING", "error": "ERROR_VALIDATION",
                       "message": "...", "comment": "<regex>"}]
  stall_ms           {"Query": 5000, ...} sleep before answering (a caller
                     that gave up meanwhile does not cut the sleep short:
                     the work is still done, as late as the knob says)
  unavailable        ["StartTransfer", ...] answer UNAVAILABLE
  query_lag_ms       new transfers stay invisible to Query this long
  start_then_stall_ms  StartTransfer stores the transfer, then waits this
                     long before answering (an answer the client may never
                     see: the transfer exists, the client cannot know)
  start_then_stall_comment  a regex: only starts whose comment matches it
                     are held so (default: every start)
  huge_reply_bytes   Query answers carry one extra entry this large
  max_source_bytes   default 4000
  mover              "rsync" (default: Conduit's rsync plugin) or "pftool"
                     (pfcp -R, as cp -r): how new transfers place a tree
  created_offset_ms  new transfers' createdTime this far from now (negative:
                     transfers that look as old as an earlier job's)
  archive_down       Query fails as the real server's does while its
                     archive store (rqlite) is down
  id_suffix          appended to every transfer id in replies (a server
                     that sends ids no record may hold)
  inject             [{"method": "StartTransfer", "code": "CANCELLED",
                       "message": "...", "after": false, "count": 1,
                       "comment": "<regex>", "tag": "..."}]
                     answer the method's first `count` matching calls
                     (comment: searched in the request's comment, Query's
                     Comment regex, or the stopped transfers' comments)
                     with that gRPC status and message, before doing the
                     work or (after: true) once it is done.  Counts are
                     kept per entry (tag tells equal entries apart) for
                     the life of the server process.
  gate               [{"method": "Query", "comment": "<regex>", "file": "/path",
                       "count": 1}]
                     hold the method's first `count` matching calls until
                     the file exists (at most 120 s), logged at arrival
                     with status "gated": a test waits for that line,
                     does what must happen while the caller is held, then
                     creates the file
Every RPC is appended to --log as one JSON line (with the client's
address and port: one port per connection, its receive time t0 and the
client's conduit-bb-request-id, the same for every retry of one call).
"""
import argparse
import json
import os
import pwd
import re
import shutil
import signal
import stat
import sys
import threading
import time
import traceback
import uuid
from concurrent import futures

# grpc is imported only in main(), after the file helper (below) has been
# forked: grpcio hooks fork() and can block it while its threads run.
grpc = pb = pbg = None

PRIVILEGED = ("conduit-service", "conduit-admin")
JOB_PREFIX = re.compile(r"SLURMJOB:\d+,")
JOB_QUERY = re.compile(r"\^(SLURMJOB:\d+,)")
ORDER = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
         26, 27, 28, 29, 100]
QUERY_KEYS = ["TransferID", "Action", "Source", "Destination", "Leases", "User",
              "StartTime", "EndTime", "CreatedTime", "State", "Error",
              "ErrorMessage", "DataTransferred", "FilesTransferred",
              "FilesChunks", "Bandwidth", "DirectoriesTransferred",
              "SchedulerNodes.Validation", "SchedulerNodes.Setup",
              "SchedulerNodes.Transfer", "SchedulerNodes.Teardown", "Active",
              "Comment", "PausedState", "Expiry", "ArchiveState", "Warnings",
              "DestInfo", "ValidationOnly", "PluginData", "PluginStatus",
              "Priority"]


class Fail(Exception):
    """An application error: gRPC status UNKNOWN with this text."""


def state_name(v):
    return pb.TransferState.Name(v)


def knob(table, st, default=None):
    """A per-state knob, keyed "DATA_TRANSFERRING" or "TRANSFER_DATA_TRANSFERRING"."""
    full = state_name(st)
    short = full[len("TRANSFER_"):]
    return table.get(full, table.get(short, default))


def at_state(rules, st, comment):
    """The rules of a per-state knob (hold_at, fail_at) for a transfer in
    state st whose comment their regex finds."""
    return [r for r in rules if r.get("state") in (state_name(st), state_name(st)[9:])
            and re.search(r.get("comment", ""), comment)]


def now():
    return time.time()


# set by SIGTERM/SIGINT: every wait below ends on it, so a stalled or
# gated call never keeps the server from exiting
STOPPING = threading.Event()


def pause(seconds, context, until=None):
    """Wait up to seconds, or until until() holds; a server told to stop
    answers the call UNAVAILABLE at once, its work not done."""
    end = now() + seconds
    while now() < end and not (until and until()):
        if STOPPING.wait(min(0.02, max(0.0, end - now()))):
            context.abort(grpc.StatusCode.UNAVAILABLE, "server stopping")


class Faults:
    """The knobs, re-read on every use.  A file caught half-written (a
    writer that does not rename into place) reads as the last knobs that
    parsed, never as none: a held transfer must not run on by accident."""

    def __init__(self, path):
        self.path = path
        self.last = {}

    def get(self):
        if not self.path or not os.path.exists(self.path):
            return {}
        try:
            with open(self.path) as f:
                self.last = json.load(f)
        except (OSError, ValueError):
            pass
        return self.last


class Store:
    """Transfers by id, persisted as JSON so a restart keeps them.

    save() only marks the store dirty; a thread writes it every 50 ms and
    flush() writes it at shutdown (SIGTERM), so creating many transfers
    costs no more than creating one.
    """

    def __init__(self, path):
        self.path = path
        self.lock = threading.RLock()
        self.flush_lock = threading.Lock()  # one writer of the file at a time
        self.t = {}
        self.by_job = {}  # "SLURMJOB:<n>," -> ids: Query's common case, fast
        self.live = set()  # ids not yet archived: what the worker drives
        # set when a transfer goes live / the store changes: an idle
        # server's threads sleep on them rather than tick
        self.woken = threading.Event()
        self.changed = threading.Event()
        self.dirty = False
        if path and os.path.exists(path):
            with open(path) as f:
                self.t = json.load(f)
        for t in self.t.values():
            self.index(t)
        threading.Thread(target=self._saver, daemon=True).start()

    def index(self, t):
        if not t["archived"]:
            self.live.add(t["id"])
            self.woken.set()
        m = JOB_PREFIX.match(t["comment"])
        if m:
            self.by_job.setdefault(m.group(0), set()).add(t["id"])

    def candidates(self, qmap):
        """The transfers a query can match: a Comment query anchored on
        one job's prefix (and nothing else) only looks at that job's."""
        if list(qmap) == ["Comment"]:
            m = JOB_QUERY.match(qmap["Comment"])
            if m:
                return [self.t[i] for i in self.by_job.get(m.group(1), ())]
        return list(self.t.values())

    def save(self):
        self.dirty = True
        self.changed.set()

    def _saver(self):
        while True:
            self.changed.wait()
            self.changed.clear()
            time.sleep(0.05)  # what changes meanwhile goes in the same write
            self.flush()

    def flush(self):
        if not self.path:
            return
        with self.flush_lock:
            with self.lock:
                if not self.dirty:
                    return
                data = json.dumps(self.t)
                self.dirty = False
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                f.write(data)
            os.replace(tmp, self.path)


def run_as(uid, fn):
    """In a fresh child process: become uid, run fn(); -> (ok, message)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code, msg = 0, ""
        try:
            if os.getuid() == 0 and uid != 0:
                try:
                    gid = pwd.getpwuid(uid).pw_gid
                except KeyError:
                    gid = uid
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
            msg = fn() or ""
        except Fail as e:
            code, msg = 1, str(e)
        except Exception as e:  # noqa: BLE001 - report anything as a failure
            code, msg = 1, "%s: %s" % (type(e).__name__, e)
        os.write(w, json.dumps({"code": code, "msg": msg[:3000]}).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        res = json.loads(data.decode())
    except ValueError:
        return False, "transfer process died"
    return res["code"] == 0, res["msg"]


OPS = {}  # name -> function(transfer): filled in below


class FileHelper:
    """A process forked before grpc is loaded that runs file operations
    as the user, one child each, so the gRPC process never forks."""

    def __init__(self):
        req_r, self.req_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.req_w)
            os.close(self.res_r)
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
            self._serve(os.fdopen(req_r, "r"), res_w)
            os._exit(0)
        os.close(req_r)
        os.close(res_w)
        self.lock = threading.Lock()
        self.waiting = {}
        self.seq = 0
        threading.Thread(target=self._collect, daemon=True).start()

    @staticmethod
    def _serve(requests, res_w):
        for line in requests:
            req = json.loads(line)
            if os.fork() == 0:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                ok, msg = run_as(req["uid"], lambda: OPS[req["op"]](req["t"]))
                out = json.dumps({"id": req["id"], "ok": ok, "msg": msg}) + "\n"
                os.write(res_w, out.encode())  # < PIPE_BUF: one atomic write
                os._exit(0)

    def _collect(self):
        for line in os.fdopen(self.res_r, "r"):
            res = json.loads(line)
            with self.lock:
                slot = self.waiting.pop(res["id"], None)
            if slot:
                slot[1] = (res["ok"], res["msg"])
                slot[0].set()

    def call(self, op, uid, t):
        with self.lock:
            self.seq += 1
            rid = self.seq
            slot = [threading.Event(), (False, "file helper gone")]
            self.waiting[rid] = slot
            os.write(self.req_w, (json.dumps({"id": rid, "op": op, "uid": uid, "t": t}) +
                                  "\n").encode())
        slot[0].wait()
        return slot[1]


HELPER = None


def as_user(uid, op, t):
    return HELPER.call(op, uid, t)


def lstat_chain(kind, path):
    """Conduit's nested message for a path that cannot be walked."""
    parts = path.split("/")
    cur = ""
    for p in parts[1:]:
        cur += "/" + p
        try:
            os.lstat(cur)
        except OSError as e:
            reason = "no such file or directory" if e.errno == 2 else "permission denied"
            raise Fail("failed to get %s[%s] plugin: failed to get fs result for path[%s]: "
                       "failed to walk path for symlinks: failed to lstat path[%s]: lstat %s: %s"
                       % (kind, path, path, cur, cur, reason))


def dest_info(dst):
    """Conduit's destInfo as its posix plugin finds it (an lstat of the
    cleaned destination): DEST_IS_DIR (3), DEST_NOT_DIR (2) for anything
    else there, DEST_NOT_EXIST (1) when only the last name is missing,
    DEST_NONE (0) when the path cannot be walked to its parent."""
    d = dst.rstrip("/") or "/"
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return 1 if os.path.isdir(os.path.dirname(d) or "/") else 0
    except OSError:
        return 0
    return 3 if stat.S_ISDIR(st.st_mode) else 2


def validate(t, uname):
    """Checks the posix validation plugin makes, done as the user.  Like
    the real FTA, the destination's destInfo is settled first and kept
    when a check fails (ErrorPluginETCD stores it with the error)."""
    dest = dest_info(t["destination"])
    try:
        check(t, uname)
    except Fail as e:
        return json.dumps({"into": dest == 3, "dest": dest, "error": str(e)})
    return json.dumps({"into": dest == 3, "dest": dest})


def check(t, uname):
    srcs, dst = t["source"], t["destination"]
    move = t["action"] in (1, 3)
    for s in srcs:
        if s == dst:
            raise Fail("no source can match the destination: %s" % dst)
    for s in srcs:
        lstat_chain("source", s)
        st = os.lstat(s)
        need = os.R_OK | (os.X_OK if stat.S_ISDIR(st.st_mode) else 0)
        if not os.access(s, need):
            raise Fail("user[%s] does not have read permissions for source path[%s](%s): "
                       "permission denied" % (uname, s, s))
        if move:
            parent = os.path.dirname(s.rstrip("/")) or "/"
            if not os.access(parent, os.W_OK | os.X_OK):
                raise Fail("user[%s] does not have write/search permissions for source parent "
                           "path[%s] for source[%s](%s): permission denied"
                           % (uname, parent, s, s))
    d = dst.rstrip("/") or "/"
    if os.path.isdir(d):
        target_dir = d
    else:
        if len(srcs) > 1:
            raise Fail("destination must exist and be a directory if multiple sources are "
                       "specified")
        target_dir = os.path.dirname(d) or "/"
        lstat_chain("destination", target_dir)
    if not os.access(target_dir, os.W_OK | os.X_OK):
        raise Fail("user[%s] does not have write permissions for dest parent path[%s]: "
                   "permission denied" % (uname, target_dir))


def tree_size(p):
    files = dirs = size = 0
    if os.path.isdir(p) and not os.path.islink(p):
        for root, ds, fs in os.walk(p):
            dirs += 1
            for f in fs:
                files += 1
                size += os.lstat(os.path.join(root, f)).st_size
    else:
        files, size = 1, os.lstat(p).st_size
    return files, dirs, size


def copy_data(t):
    """The data stage, as Conduit's rsync mover does it (the FTA the
    project tests against): the paths arrive cleaned (no trailing '/'), a
    directory lands under its own name inside the destination, which is
    made when it is missing (rsync -r SRC/tree DST gives DST/tree), a
    file at the destination or inside it when that is a directory, and a
    directory without -r is skipped ("skipping directory"), moving
    nothing.  With the "mover": "pftool" knob, as pfcp -R (POSIX cp -r):
    a new destination is the tree.  A move deletes its sources at
    teardown."""
    d = t["destination"].rstrip("/") or "/"
    recursive = t["action"] in (2, 3)
    pftool = t.get("mover") == "pftool"
    files = dirs = size = 0
    for s in t["source"]:
        if os.path.isdir(s) and not os.path.islink(s):
            if not recursive:
                continue
            if pftool and not os.path.isdir(d):
                target = d  # pfcp -R, like cp -r: a new DST is the tree
            else:
                os.makedirs(d, exist_ok=True)
                target = os.path.join(d, os.path.basename(s.rstrip("/")))
            shutil.copytree(s, target, symlinks=True, dirs_exist_ok=True)
        else:
            into = os.path.isdir(d) and not os.path.islink(d)
            shutil.copy2(s, os.path.join(d, os.path.basename(s)) if into else d,
                         follow_symlinks=False)
        f, dd, z = tree_size(s) if recursive or not os.path.isdir(s) else (0, 0, 0)
        files, dirs, size = files + f, dirs + dd, size + z
    return json.dumps({"files": files, "dirs": dirs, "bytes": size})


def remove_sources(t):
    for s in t["source"]:
        if t.get("again") and not os.path.lexists(s):
            continue  # removed before a restart (see step())
        if os.path.isdir(s) and not os.path.islink(s):
            shutil.rmtree(s)
        else:
            os.unlink(s)
    return ""


OPS.update({"validate": lambda t: validate(t, t["user"]), "copy": copy_data,
            "remove": remove_sources})


def size_text(n):
    """dataTransferred as Conduit's rsync mover writes it: "<bytes>B"
    ("" before any data moved)."""
    return "%dB" % n if n else ""


def rate_text(t):
    """bandwidth as the rsync mover writes it: "49.95MB/s" while data
    moves (rsync's progress line), "<bytes/s>B" once done (its stats)."""
    b = t["bandwidth"]
    if not b:
        return ""
    if t["state"] == 24:
        for unit, div in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
            if b >= div:
                return "%.2f%s" % (b / div, unit)
        return "%.2fB/s" % b
    return "%.2fB" % b


def make_server_class():
    """The servicer, defined once grpc and the messages are loaded."""
    return type("Server", (ServerBase, pbg.ConduitApiServicer), {})


class ServerBase:
    def __init__(self, store, faults, log_path, users):
        self.store = store
        self.faults = faults
        self.log_path = log_path
        self.users = users
        self.log_lock = threading.Lock()
        self.local = threading.local()
        self.inject_lock = threading.Lock()
        self.injected = {}

    # ---- bookkeeping ----------------------------------------------------
    def log(self, method, cn, **kw):
        t0 = getattr(self.local, "t0", now())
        rec = {"t": round(now(), 3), "method": method, "cn": cn,
               "ms": round((now() - t0) * 1000, 2), "t0": round(t0, 3),
               "rid": getattr(self.local, "rid", ""),
               "peer": getattr(self.local, "peer", ""),
               "tls_reused": getattr(self.local, "reused", "")}
        rec.update(kw)
        with self.log_lock, open(self.log_path, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def identity(self, context):
        names = context.auth_context().get("x509_common_name") or []
        if not names:
            raise Fail("neither TLS client certs nor kerberos creds were provided in the request")
        cn = names[0].decode()
        if cn == "root":
            raise Fail("user root is not allowed to use conduit")
        return cn

    def resolve_user(self, cn, requested, need):
        """-> (name, uid, privileged_all)."""
        if cn not in PRIVILEGED:
            return cn, self.uid_of(cn), False
        if requested == "":
            if need:
                raise Fail("no user provided in request")
            return "", None, True
        if requested in ("root", "0"):
            raise Fail("user root is not allowed to use conduit")
        if requested.isdigit():
            uid = int(requested)
            name = self.users.get(requested)
            if name is None:
                try:
                    name = pwd.getpwuid(uid).pw_name
                except KeyError:
                    raise Fail("error getting user from request: conduit-service provided a "
                               "uid %s in request, but couldn't find user: user: unknown "
                               "userid %s" % (requested, requested))
            return name, uid, False
        return requested, self.uid_of(requested), False

    def uid_of(self, name):
        for k, v in self.users.items():
            if v == name:
                return int(k)
        try:
            return pwd.getpwnam(name).pw_uid
        except KeyError:
            return None

    def first_calls(self, knob, method, texts, match=lambda e: True):
        """The entries of a per-call knob (inject, gate) that take this
        call: same method, comment regex found in one of `texts`, and
        fewer than the entry's `count` calls taken so far (counted per
        entry, for the life of the process)."""
        for e in self.faults.get().get(knob, []):
            if e.get("method") != method or not match(e):
                continue
            rx = e.get("comment")
            if rx and not any(re.search(rx, t or "") for t in texts):
                continue
            key = knob + " " + json.dumps(e, sort_keys=True)
            with self.inject_lock:
                used = self.injected.get(key, 0)
                if used >= e.get("count", 1):
                    continue
                self.injected[key] = used + 1
            yield e

    def inject(self, method, context, after, texts):
        """The inject knob: abort with a chosen status (see the top)."""
        for e in self.first_calls("inject", method, texts,
                                  lambda e: bool(e.get("after", False)) == after):
            code = getattr(grpc.StatusCode, e.get("code", "UNAVAILABLE"))
            self.log(method, "?", status="injected %s %s" % (e.get("code"),
                                                            "after" if after else "before"))
            context.abort(code, e.get("message", ""))

    def gate(self, method, context, texts):
        """The gate knob: hold a call until a file exists (see the top)."""
        for e in self.first_calls("gate", method, texts):
            self.log(method, "?", status="gated", comment=" ".join(texts)[:300])
            pause(120, context, until=lambda f=e["file"]: os.path.exists(f))

    def faulted(self, method, context, texts=()):
        self.local.t0 = now()
        self.local.peer = context.peer()  # "ipv4:127.0.0.1:PORT": one per connection
        self.local.rid = dict(context.invocation_metadata()).get("conduit-bb-request-id", "")
        # whether the connection resumed a TLS session (a ticket)
        self.local.reused = (context.auth_context().get("ssl_session_reused") or [b"?"])[0].decode()
        self.inject(method, context, False, texts)
        self.gate(method, context, texts)
        f = self.faults.get()
        stall = f.get("stall_ms", {}).get(method, 0)
        if stall:
            pause(stall / 1000.0, context)
        if method in f.get("unavailable", []):
            context.abort(grpc.StatusCode.UNAVAILABLE, "injected: server unavailable")

    # ---- conversion -----------------------------------------------------
    def details(self, t):
        d = pb.TransferDetails(
            transferID=t["id"] + self.faults.get().get("id_suffix", ""),
            action=t["action"], source=t["source"],
            destination=t["destination"], user=t["user"], state=t["state"],
            error=t["error"], errorMessage=t["errorMessage"],
            dataTransferred=size_text(t["bytes"]), filesTransferred=t["files"],
            bandwidth=rate_text(t), directoriesTransferred=t["dirs"],
            active=t["active"], comment=t["comment"],
            validationOnly=t["validationOnly"], pluginStatus=t["pluginStatus"],
            destInfo=t.get("dest_info", 0))
        d.createdTime.seconds = int(t["created"])
        d.createdTime.nanos = int((t["created"] % 1) * 1e9)
        d.startTime.seconds = int(t["start"])
        d.endTime.seconds = int(t["end"])
        d.expiry.seconds = int(now() + 60)
        return d

    # ---- RPCs -----------------------------------------------------------
    def _create(self, request, context, validate_only):
        method = "ValidateTransfer" if validate_only else "StartTransfer"
        cn = "?"
        try:
            self.faulted(method, context, (request.comment,))
            cn = self.identity(context)
            name, uid, _ = self.resolve_user(cn, request.user, True)
            comment = request.comment
            if cn not in PRIVILEGED and not validate_only:
                comment = ""  # Conduit keeps comments of privileged certs only
            limit = self.faults.get().get("max_source_bytes", 4000)
            total = sum(len(s.encode()) for s in request.source)
            if not validate_only and total > limit:
                raise Fail("request contains too many sources. byte limit: %d, received: %d. "
                           "Please use a directory instead of a wildcard or list of files"
                           % (limit, total))
            t = {"id": str(uuid.uuid4()), "action": request.action,
                 "mover": self.faults.get().get("mover", "rsync"),
                 "source": list(request.source), "destination": request.destination,
                 "user": name, "uid": uid, "comment": comment, "state": 10, "error": 0,
                 "errorMessage": "", "bytes": 0, "files": 0, "dirs": 0, "bandwidth": 0,
                 "active": True, "validationOnly": validate_only, "pluginStatus": "",
                 "created": now() + self.faults.get().get("created_offset_ms", 0) / 1000.0,
                 "start": 0, "end": 0, "changed": now(),
                 "archived": False}
            with self.store.lock:
                self.store.t[t["id"]] = t
                self.store.index(t)
                self.store.save()
            self.log(method, cn, user=request.user, comment=request.comment,
                     id=t["id"], status="OK")
            fl = self.faults.get()
            stall = fl.get("start_then_stall_ms", 0)
            only = fl.get("start_then_stall_comment")
            if only and not re.search(only, request.comment or ""):
                stall = 0
            if stall and not validate_only:
                pause(stall / 1000.0, context)
            self.inject(method, context, True, (request.comment,))
            return self.details(t)
        except Fail as e:
            self.log(method, cn, user=request.user, comment=request.comment, status=str(e))
            context.abort(grpc.StatusCode.UNKNOWN, str(e))

    def StartTransfer(self, request, context):
        return self._create(request, context, False)

    def ValidateTransfer(self, request, context):
        return self._create(request, context, True)

    def Query(self, request, context):
        cn = "?"
        qmap = dict(request.queryMap)
        try:
            self.faulted("Query", context, (qmap.get("Comment", ""),))
            cn = self.identity(context)
            name, _, everyone = self.resolve_user(cn, request.user, False)
            if self.faults.get().get("archive_down"):
                # Conduit reads its archive (rqlite) on every Query
                raise Fail("failed to get user transfers from rqlite: Post "
                           "\"http://127.0.0.1:4001/db/query?level=strong\": dial tcp "
                           "127.0.0.1:4001: connect: connection refused")
            lag = self.faults.get().get("query_lag_ms", 0) / 1000.0
            checks = []
            for k, v in qmap.items():
                if k == "":
                    continue
                if k not in QUERY_KEYS:
                    raise Fail("provided query contains an invalid key: failed to find key: "
                               "[%s]\npossible keys: %s" % (k, ", ".join(QUERY_KEYS)))
                try:
                    checks.append((k, re.compile(v)))
                except re.error as e:
                    raise Fail("failed to filter transfers: failed to compile regex for key[%s]: %s"
                               % (k, e))
            out = pb.MultiTransferDetails()
            with self.store.lock:
                for t in self.store.candidates(qmap):
                    if not everyone and t["user"] != name:
                        continue
                    if lag and now() - t["created"] < lag:
                        continue
                    hits = [bool(rx.search(self.field(t, k))) for k, rx in checks]
                    if request.queryOperation == pb.OR:
                        keep = any(hits) if checks else True
                    else:
                        keep = all(hits)
                    if keep:
                        out.details[t["id"]].CopyFrom(self.details(t))
            huge = self.faults.get().get("huge_reply_bytes", 0)
            if huge:
                pad = out.details["padding"]
                pad.transferID = "padding"
                pad.errorMessage = "x" * huge
            self.log("Query", cn, user=request.user, query=qmap,
                     op=request.queryOperation, matched=len(out.details), status="OK")
            self.inject("Query", context, True, (qmap.get("Comment", ""),))
            return out
        except Fail as e:
            self.log("Query", cn, user=request.user, query=qmap, status=str(e))
            context.abort(grpc.StatusCode.UNKNOWN, str(e))

    def field(self, t, k):
        simple = {"TransferID": t["id"], "Comment": t["comment"], "User": t["user"],
                  "Destination": t["destination"], "Source": " ".join(t["source"]),
                  "ErrorMessage": t["errorMessage"], "State": state_name(t["state"]),
                  "Error": pb.Error.Name(t["error"]), "Action": pb.Action.Name(t["action"]),
                  "DataTransferred": size_text(t["bytes"]), "PluginStatus": t["pluginStatus"],
                  "FilesTransferred": str(t["files"]), "Bandwidth": rate_text(t),
                  "DestInfo": pb.DestInfo.Name(t.get("dest_info", 0))}
        if k in simple:
            return simple[k]
        if k in ("Active", "ValidationOnly", "PluginData"):
            raise Fail("failed to filter transfers: valueToString failed for key[%s]" % k)
        return ""

    def StopTransfer(self, request, context):
        cn = "?"
        ids = list(request.value)
        try:
            with self.store.lock:
                texts = tuple(self.store.t[i]["comment"] for i in ids if i in self.store.t)
            self.faulted("StopTransfer", context, texts)
            cn = self.identity(context)
            out = pb.MultiTransferDetails()
            errors = []
            with self.store.lock:
                for i in ids:
                    try:
                        uuid.UUID(i)
                    except ValueError:
                        raise Fail("failed to parse transferid[%s]" % i)
                    t = self.store.t.get(i)
                    if t is None or t["archived"] or (cn not in PRIVILEGED and t["user"] != cn):
                        errors.append("transfer[%s] not found in conduit" % i)
                        continue
                    out.details[i].CopyFrom(self.details(t))  # snapshot before the abort
                    if t["state"] in (1, 2, 3):
                        t["active"] = False
                        errors.append("failed to set abort state for transfer[%s], has it "
                                      "already completed?: state is %s" % (i, state_name(t["state"])))
                        continue
                    t.update(state=2, error=18, errorMessage="user aborted", changed=now())
                self.store.save()
            if errors:
                raise Fail("; ".join(errors))
            self.log("StopTransfer", cn, ids=ids, status="OK")
            self.inject("StopTransfer", context, True, texts)
            return out
        except Fail as e:
            self.log("StopTransfer", cn, ids=ids, status=str(e))
            context.abort(grpc.StatusCode.UNKNOWN, str(e))

    def Version(self, request, context):
        self.faulted("Version", context)
        self.log("Version", "?", status="OK")
        return pb.VersionInfo(version="conduit-test-1.0", modified=False, time="2026-11-29")


class Worker(threading.Thread):
    """Drives every live transfer through Conduit's states."""

    def __init__(self, store, faults):
        super().__init__(daemon=True)
        self.store = store
        self.faults = faults

    def run(self):
        while True:
            time.sleep(0.01)
            self.store.woken.clear()
            with self.store.lock:
                live = [self.store.t[i] for i in self.store.live]
            if not live:  # nothing to drive: sleep until a transfer goes live
                self.store.woken.wait()
                continue
            f = self.faults.get()
            for t in live:
                try:
                    self.step(t, f)
                except Exception:  # noqa: BLE001 - one bad step must not stop the rest
                    traceback.print_exc()

    def fail(self, t, error, message):
        t.update(state=1, error=error, errorMessage=message, active=False, changed=now())
        if t["start"]:
            t["end"] = now()

    def step(self, t, f):
        with self.store.lock:
            st = t["state"]
            if st in (1, 3, 100) or (t["validationOnly"] and st == 15):
                if not t["active"] and now() - t["changed"] > f.get("archive_ms", 2000) / 1000.0:
                    t["archived"] = True
                    self.store.live.discard(t["id"])
                    self.store.save()
                return
            if st == 2:  # ABORT -> ERROR (ERROR_ABORTED kept), as Conduit's
                # error handler wins that race on the real server
                t.update(state=1, active=False, changed=now())
                if t["start"]:
                    t["end"] = now()
                self.store.save()
                return
            delay = knob(f.get("delay_ms", {}), st, f.get("step_ms", 20))
            for rule in at_state(f.get("hold_at", []), st, t["comment"]):
                delay = max(delay, rule.get("ms", 0))
            if now() - t["changed"] < delay / 1000.0:
                return
            for rule in at_state(f.get("fail_at", []), st, t["comment"]):
                self.fail(t, pb.Error.Value(rule.get("error", "ERROR_PFTOOL_FAILED")),
                          rule.get("message", "injected failure"))
                self.store.save()
                return
            nxt = ORDER[ORDER.index(st) + 1]
            uid = t["uid"] if t["uid"] is not None else os.getuid()
            snapshot = dict(t)
            if st == 28 and t["action"] in (1, 3):
                # journaled before the sources go: a server stopped after
                # removing them and before saving the next state runs this
                # step again on restart, and must not fail on sources it
                # removed itself
                snapshot["again"] = bool(t.get("remove_begun"))
                t["remove_begun"] = True
                self.store.save()
        if "again" in snapshot:
            self.store.flush()  # on disk before any source goes
        # work that touches files runs without the lock
        ok, msg = True, ""
        if st == 14:
            ok, msg = as_user(uid, "validate", snapshot)
        elif st == 24:
            begin = now()
            ok, msg = as_user(uid, "copy", snapshot)
        elif st == 28 and snapshot["action"] in (1, 3):
            ok, msg = as_user(uid, "remove", snapshot)
        with self.store.lock:
            if t["state"] != st:  # aborted meanwhile
                return
            res = json.loads(msg) if ok and st == 14 else {}
            if res.get("error"):
                t["dest_info"] = res["dest"]
                self.fail(t, 22, res["error"])
            elif not ok:
                code = {14: 22, 24: 4, 28: 19}[st]
                self.fail(t, code, msg)
            elif st == 14:
                t["into"], t["dest_info"] = res["into"], res["dest"]
                t.update(state=nxt, changed=now())
                if t["validationOnly"]:
                    # a validation ends here: VALIDATION_COMPLETE, inactive
                    t.update(active=False, end=now())
            else:
                if st == 24:
                    res = json.loads(msg)
                    took = max(now() - begin, 1e-3)
                    t.update(files=res["files"], dirs=res["dirs"], bytes=res["bytes"],
                             bandwidth=int(res["bytes"] / took), pluginStatus="pftool complete")
                if nxt == 19:
                    t["start"] = now()
                t.update(state=nxt, changed=now())
                if nxt == 100:
                    t.update(active=False, end=now())
            self.store.save()


def main():
    global HELPER, grpc, pb, pbg
    HELPER = FileHelper()  # before grpc exists in this process
    import grpc as grpc_mod
    grpc = grpc_mod
    sys.path.insert(0, os.environ.get("CONDUIT_PB_DIR", "."))
    import conduit_pb2
    import conduit_pb2_grpc
    pb, pbg = conduit_pb2, conduit_pb2_grpc
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pki", required=True, help="directory from make-certs.sh")
    ap.add_argument("--state", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--faults")
    ap.add_argument("--users", help="JSON {uid: name} for users without passwd entries")
    a = ap.parse_args()
    users = {}
    if a.users:
        with open(a.users) as f:
            users = json.load(f)
    rd = lambda n: open(os.path.join(a.pki, n), "rb").read()  # noqa: E731
    creds = grpc.ssl_server_credentials([(rd("server.key"), rd("server.crt"))],
                                        root_certificates=rd("ca.crt"),
                                        require_client_auth=True)
    store = Store(a.state)
    faults = Faults(a.faults)
    pool = futures.ThreadPoolExecutor(max_workers=32)
    # no SO_REUSEPORT (gRPC's default): a second server on this port, one
    # a stop missed, must fail to start, not take half the connections
    # with a store of its own
    server = grpc.server(pool, options=[("grpc.so_reuseport", 0)])
    pbg.add_ConduitApiServicer_to_server(make_server_class()(store, faults, a.log, users),
                                         server)
    try:
        bound = server.add_secure_port("%s:%d" % (a.host, a.port), creds)
    except RuntimeError:  # newer grpcio raises where older ones return 0
        bound = 0
    if not bound:
        print("port %d is in use: another server is running there" % a.port, flush=True)
        os.kill(HELPER.pid, signal.SIGTERM)
        sys.exit(1)
    Worker(store, faults).start()
    server.start()
    signal.signal(signal.SIGTERM, lambda *_: STOPPING.set())
    signal.signal(signal.SIGINT, lambda *_: STOPPING.set())
    print("ready", flush=True)
    STOPPING.wait()
    server.stop(0).wait(10)
    # the calls still in their handlers end (their waits end on STOPPING)
    # before the last flush: a transfer one of them stored is kept
    pool.shutdown(wait=True)
    store.flush()
    os.kill(HELPER.pid, signal.SIGTERM)


if __name__ == "__main__":
    main()

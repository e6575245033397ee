#!/usr/bin/python3
"""A session controller for tests (docs/controller-api.md).

HTTPS with client certificates required; sessions per (cluster, job) in
capacity pools; state saved to --state on every change, so it survives
a restart; every request logged to --log as a JSON line (with the token
never in it).  Fault knobs in --faults (JSON, re-read per request):
  {"fail_next": N, "status": 503}  the next N requests answer `status`
  {"delay_ms": X}                  take X ms before doing anything (a
                                   controller that hangs: the request is
                                   acted on X ms late, if ever)
  {"answer_delay_ms": X}           do the request at once, answer X ms late
                                   (the answer is what is slow)
  {"session_extra": {...}}         fields merged into a reserve's answer
                                   (values a controller should not send)
"""
import argparse
import json
import os
import secrets
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


class State:
    def __init__(self, path, pools):
        self.path = path
        self.pools = pools
        self.sessions = {}
        self.seq = 0
        if os.path.exists(path):
            with open(path) as f:
                d = json.load(f)
            self.sessions, self.seq = d["sessions"], d["seq"]

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"sessions": self.sessions, "seq": self.seq}, f)
        os.replace(tmp, self.path)

    def used(self, pool):
        return sum(s["gpus"] for s in self.sessions.values() if s["pool"] == pool)


def make_handler(state, log_path, faults_path):
    last_faults = [{}]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def faults(self):
            # a file caught half-written reads as the last knobs that parsed
            if not faults_path or not os.path.exists(faults_path):
                return {}
            try:
                with open(faults_path) as f:
                    last_faults[0] = json.load(f)
            except (OSError, ValueError):
                pass
            return last_faults[0]

        def fault(self):
            fl = self.faults()
            if fl.get("delay_ms"):
                time.sleep(fl["delay_ms"] / 1000.0)
            if fl.get("fail_next", 0) > 0:
                fl["fail_next"] -= 1
                with open(faults_path, "w") as f:
                    json.dump(fl, f)
                return fl.get("status", 503)
            return None

        def reply(self, code, body, what):
            data = json.dumps(body).encode() if body is not None else b""
            # logged first: a request whose client gave up (a killed
            # hook) still did what it did
            rec = {"t": round(time.time(), 3), "method": self.command,
                   "path": self.path, "status": code, "what": what}
            if isinstance(body, dict) and "uid" in body:
                rec["uid"] = body["uid"]
            with open(log_path, "a") as f:
                f.write(json.dumps(rec) + "\n")
            self.answer = (code, data)  # sent by handle_any, out of LOCK

        def handle_any(self):
            self.act()
            late = self.faults().get("answer_delay_ms")
            if late:
                time.sleep(late / 1000.0)
            code, data = self.answer
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def key(self):
            parts = self.path.split("/")
            if len(parts) != 5 or parts[1] != "v1" or parts[2] != "sessions":
                return None
            return parts[3] + "/" + parts[4]

        def act(self):
            k = self.key()
            code = self.fault()
            if code:
                return self.reply(code, {"error": "injected"}, "fault")
            if k is None:
                return self.reply(404, {"error": "not_found"}, "bad path")
            with LOCK:
                if self.command == "GET":
                    s = state.sessions.get(k)
                    return self.reply(200 if s else 404, s or {"error": "not_found"},
                                      "get")
                if self.command == "DELETE":
                    s = state.sessions.pop(k, None)
                    state.save()
                    return self.reply(200 if s else 404, {"released": bool(s)},
                                      "released" if s else "gone")
                if self.command == "PUT":
                    n = int(self.headers.get("Content-Length", "0"))
                    try:
                        body = json.loads(self.rfile.read(n) or b"{}")
                        req = body["request"]
                    except (ValueError, KeyError):
                        return self.reply(400, {"error": "bad_request",
                                                "message": "no request"}, "bad")
                    extra = self.faults().get("session_extra", {})
                    if k in state.sessions:
                        return self.reply(200, dict(state.sessions[k], **extra), "existing")
                    pool, need = req.get("pool", ""), int(req.get("gpus") or 0)
                    if pool not in state.pools:
                        return self.reply(400, {"error": "bad_request",
                                                "message": "unknown pool " + pool}, "bad")
                    free = state.pools[pool] - state.used(pool)
                    if need > free:
                        return self.reply(409, {"error": "no_capacity", "pool": pool,
                                                "need": need, "free": free}, "no capacity")
                    state.seq += 1
                    job = int(k.split("/")[1])
                    s = {"session_id": "sess-%d" % state.seq, "pool": pool, "gpus": need,
                         "vram_mib": int(req.get("vram_mib") or 0),
                         "endpoint": "broker-1.example.invalid:7443",
                         "token": "tok-" + secrets.token_hex(16),
                         "vlans": [100 + job % 50, 200 + job % 50],
                         "env": {"CONDUIT_REGION": "test-1", "SLURM_BAD": "x",
                                 "BAD NAME": "y", "LD_PRELOAD": "/tmp/evil.so",
                                 "PATH": "/tmp/evil", "BROKER_REGION": "test-1"},
                         "user": body.get("user"), "uid": body.get("uid")}
                    state.sessions[k] = s
                    state.save()
                    return self.reply(201, dict(s, **extra), "created")
            return self.reply(405, {"error": "method"}, "method")

        do_GET = do_PUT = do_DELETE = handle_any
    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pki", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--faults")
    ap.add_argument("--pools", default='{"a100": 4, "t4": 8}')
    a = ap.parse_args()
    state = State(a.state, json.loads(a.pools))
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(state, a.log, a.faults))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(a.pki, "server.crt"), os.path.join(a.pki, "server.key"))
    ctx.load_verify_locations(os.path.join(a.pki, "ca.crt"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()

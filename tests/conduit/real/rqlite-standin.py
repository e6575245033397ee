#!/usr/bin/python3
"""rqlite-standin.py - a STAND-IN for rqlite, not rqlite.

Conduit's server archives finished transfers in rqlite and reads them back
on every Query (internal/server/rqlite/ in Conduit's source).  rqlite is
not packaged by Debian, so the real-Conduit test fixture runs this instead:
an HTTPS server over one SQLite file that speaks exactly the part of
rqlite's HTTP API that Conduit uses, and nothing more:

  POST /db/execute   body: a JSON array of SQL strings
  POST /db/query     body: a JSON array of SQL strings
  answer (HTTP 200): {"results": [{"columns": [...], "values": [[...]]},
                                  {"error": "..."}, ...]}

Conduit sends goqu-built SQL (double-quoted identifiers, single-quoted
strings), which SQLite runs as it is; a CREATE TABLE that exists gives
SQLite's "table conduit already exists", the text Conduit tolerates.
Values come back as strings (Conduit decodes them as [][]string).  TLS as
Conduit's docker example runs rqlite: a server certificate signed by
Conduit's internal CA, client certificates required and checked against
that CA (-http-verify-client).  Stop the process to simulate "the archive
store is down" (Query then fails with "connection refused").

usage: rqlite-standin.py --port N --db FILE --cert C --key K --ca CA
Prints "ready" on stdout once it listens.  Standard library only.
"""
import argparse
import http.server
import json
import socketserver
import sqlite3
import ssl
import sys
import threading

lock = threading.Lock()


def run(db, sql, query):
    try:
        cur = db.execute(sql)
        if query:
            cols = [d[0] for d in cur.description or []]
            rows = [["" if v is None else str(v) for v in r] for r in cur.fetchall()]
            return {"columns": cols, "values": rows} if rows else {"columns": cols}
        db.commit()
        return {"last_insert_id": cur.lastrowid or 0, "rows_affected": cur.rowcount}
    except sqlite3.Error as e:
        db.rollback()
        return {"error": str(e)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("rqlite-standin: " + (fmt % args) + "\n")

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if path not in ("/db/execute", "/db/query"):
            self.reply(404, {"error": "not supported by the stand-in: " + path})
            return
        try:
            stmts = json.loads(raw)
            if isinstance(stmts, str):
                stmts = [stmts]
            stmts = [s if isinstance(s, str) else s[0] for s in stmts]
        except (ValueError, TypeError, IndexError) as e:
            self.reply(400, {"error": "bad request body: %s" % e})
            return
        with lock:
            results = [run(self.server.db, s, path == "/db/query") for s in stmts]
        self.reply(200, {"results": results})

    def do_GET(self):
        # /status, for a human; Conduit does not call it
        if self.path.split("?", 1)[0] == "/status":
            self.reply(200, {"standin": "rqlite-standin.py"})
        else:
            self.reply(404, {"error": "not supported by the stand-in"})


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--ca", required=True)
    a = ap.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.load_verify_locations(a.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.db = sqlite3.connect(a.db, check_same_thread=False)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()

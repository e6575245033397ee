#!/usr/bin/python3
"""A server that never answers, for deadline tests.

  silent-server.py PORTFILE [read]

Listens on 127.0.0.1 (a free port, written to PORTFILE), accepts every
connection and never writes a byte.  With "read" it reads (and drops)
whatever arrives, so the client's TLS hello and request are taken in;
without, it never reads either.  Runs until killed, or for two minutes.
"""
import select
import socket
import sys
import time

portfile = sys.argv[1]
reads = len(sys.argv) > 2 and sys.argv[2] == "read"
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.getsockname()[1])
import os  # noqa: E402
os.replace(portfile + ".tmp", portfile)
conns = []
end = time.time() + 120
while time.time() < end:
    r, _, _ = select.select([srv] + (conns if reads else []), [], [], 1.0)
    for s in r:
        if s is srv:
            c, _ = srv.accept()
            conns.append(c)
        elif not s.recv(65536):
            conns.remove(s)
            s.close()

#!/usr/bin/python3
"""client.py - a small gRPC client of Conduit's API for the real-Conduit
fixture (real-ctl.sh's readiness probe, smoke.py's checks).

It speaks the project's own src/bb/proto/conduit.proto (stubs made with
protoc into CONDUIT_PB_DIR, as tests/conduit/server.py uses them), over
TLS 1.3 with ALPN h2, trusting DIR/pki/ca.crt and checking the name
"localhost", with a client certificate from DIR/pki (service by default).

usage: client.py DIR ready [SECONDS]      a Query as conduit-service answers
       client.py DIR start USER COMMENT ACTION SRC... DST   prints the id
       client.py DIR query USER KEY REGEX  prints the transfers as JSON
       client.py DIR stop ID...
       client.py DIR version
Runs under /usr/bin/python3 (Debian's python3-grpcio, python3-protobuf).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.environ.get("CONDUIT_PB_DIR", "."))
import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402
import conduit_pb2 as pb  # noqa: E402
import conduit_pb2_grpc as pbg  # noqa: E402


class Client:
    def __init__(self, sdir, who="service", timeout=10):
        pki = os.path.join(sdir, "pki")
        port = open(os.path.join(sdir, "port")).read().strip()

        def rd(name):
            with open(os.path.join(pki, name), "rb") as f:
                return f.read()

        creds = grpc.ssl_channel_credentials(
            root_certificates=rd("ca.crt"),
            private_key=rd(who + ".key"),
            certificate_chain=rd(who + ".crt"))
        self.channel = grpc.secure_channel(
            "127.0.0.1:" + port, creds,
            options=[("grpc.ssl_target_name_override", "localhost"),
                     ("grpc.max_receive_message_length", 100000000)])
        self.stub = pbg.ConduitApiStub(self.channel)
        self.timeout = timeout

    def version(self):
        return self.stub.Version(pb.Empty(), timeout=self.timeout)

    def start(self, user, comment, action, sources, dest):
        req = pb.TransferRequest(user=user, comment=comment,
                                 action=pb.Action.Value(action),
                                 source=sources, destination=dest)
        return self.stub.StartTransfer(req, timeout=self.timeout)

    def query(self, user, key, regex, op="OR"):
        q = pb.QueryOptions(queryMap={key: regex},
                            queryOperation=pb.QueryOperation.Value(op),
                            user=user)
        return dict(self.stub.Query(q, timeout=self.timeout).details)

    def by_id(self, user, tid):
        return self.query(user, "TransferID", "^%s$" % tid).get(tid)

    def stop(self, ids):
        return self.stub.StopTransfer(pb.TransferIds(value=ids),
                                      timeout=self.timeout)


def as_dict(td):
    d = json_format.MessageToDict(td, preserving_proto_field_name=True)
    d["state"] = pb.TransferState.Name(td.state)
    d["error"] = pb.Error.Name(td.error)
    return d


def main(argv):
    sdir, cmd, args = argv[1], argv[2], argv[3:]
    c = Client(sdir)
    if cmd == "ready":
        # Query for every user: goes through the server, etcd's cache and
        # the rqlite stand-in, so an answer means the stack is serving
        end = time.time() + float(args[0] if args else 60)
        err = None
        while time.time() < end:
            try:
                c.query("", "TransferID", "^$")
                return 0
            except grpc.RpcError as e:
                err = "%s: %s" % (e.code(), e.details())
            time.sleep(0.3)
        print("client.py: no answer to Query: %s" % err, file=sys.stderr)
        return 1
    if cmd == "version":
        print(json_format.MessageToJson(c.version()))
        return 0
    if cmd == "start":
        user, comment, action = args[0], args[1], args[2]
        td = c.start(user, comment, action, args[3:-1], args[-1])
        print(td.transferID)
        return 0
    if cmd == "query":
        res = c.query(args[0], args[1], args[2])
        print(json.dumps({k: as_dict(v) for k, v in res.items()}, indent=1))
        return 0
    if cmd == "stop":
        c.stop(args)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except grpc.RpcError as e:
        print("client.py: %s: %s" % (e.code(), e.details()), file=sys.stderr)
        sys.exit(1)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rapi: the Runtime API detector against requests written in pieces and long request ids.

A tiny Runtime API server runs in the test (a thread: one keep-alive connection, Lambda's
"next", ".../ID/response" and 202s) and logs what it served and what it was told; peaktrace
launches tests/workloads/wl_rapi (a runtime in C) against it. Truth: the server's log (the
request ids it handed out, in order, and the POSTs that answered them) and the MiB each event
asked for (the handler mallocs exactly that once: the invocation's alloc_bytes).

  rapi/bytewise     every request written one byte per write(2), UUID ids: each invocation found,
                    with the server's id, outcome "response" and alloc_bytes = its MiB exactly;
                    runtime_api_unparsed 0.
  rapi/long ids     ids of 200 characters, requests written at once: the same, the ids whole (BPF
                    keeps 64 bytes of the POST's id, its length and hash; the whole one comes from
                    the answer to "next").
  rapi/long ids in pieces  the same written 3 bytes per write.
  rapi/too long     ids of 600 characters (past PT_RAPI_ID_MAX): no POST line parsed, each
                    counted: report.json errors.runtime_api_unparsed = the invocations, and
                    report.txt's data-loss lines name runtime_api_unparsed.
"""

import json
import os
import socket
import threading
import uuid

from harness import TIMEOUT, Proc, free_ports

MiB = 1 << 20
N = 5


class Server:
    """A Runtime API serving events [(id, mb)] on one connection; log: ("next", id) and
    ("response", id) in order."""

    def __init__(self, port, events):
        self.events = list(events)
        self.log = []
        self.err = None
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(1)
        self.sock.settimeout(TIMEOUT)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            conn, _ = self.sock.accept()
            conn.settimeout(TIMEOUT)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    got = conn.recv(65536)
                    if not got:
                        return
                    buf += got
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                length = 0
                for h in lines[1:]:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v)
                while len(buf) < length:
                    buf += conn.recv(65536)
                buf = buf[length:]
                if method == "GET" and path == "/2018-06-01/runtime/invocation/next":
                    rid, mb = self.events.pop(0)
                    self.log.append(("next", rid))
                    body = str(mb).encode()
                    conn.sendall(b"HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: " + rid.encode() +
                                 b"\r\nLambda-Runtime-Deadline-Ms: 0\r\nContent-Length: %d\r\n\r\n" % len(body)
                                 + body)
                elif method == "POST" and path.startswith("/2018-06-01/runtime/invocation/") and \
                        path.endswith("/response"):
                    self.log.append(("response", path[len("/2018-06-01/runtime/invocation/"):-len("/response")]))
                    conn.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                else:
                    self.log.append(("other", path))
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        except Exception as e:   # the test reports it
            self.err = repr(e)
        finally:
            self.sock.close()


def long_id(i, n):
    base = "%d-%s-" % (i, uuid.uuid4())
    return (base * (n // len(base) + 1))[:n]


def run_case(ctx, name, ids, step, port):
    res = ctx.res
    events = [(rid, i + 1) for i, rid in enumerate(ids)]
    srv = Server(port, events)
    outdir = os.path.join(ctx.tmp, name.replace("/", "-").replace(" ", "-"))
    pr = Proc([ctx.pt, "-q", "-o", outdir, "--", ctx.built["wl_rapi"]["fp"], "127.0.0.1:%d" % port,
               str(len(ids)), str(step)])
    rc = pr.wait(TIMEOUT)
    srv.thread.join(5)
    res.eq("%s: peaktrace exit status" % name, rc, 0)
    res.true("%s: the server served every event" % name, srv.err is None and
             [k for k, _ in srv.log] == ["next", "response"] * len(ids), (srv.err, srv.log[:4]))
    res.eq("%s: the runtime answered with the ids it was given" % name,
           [r for k, r in srv.log if k == "response"], list(ids))
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % name, str(e))
        return None, None, None
    invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
    return rep, txt, invs


def check_found(res, name, rep, invs, ids):
    res.eq("%s: one invocation per event" % name, len(invs), len(ids))
    res.eq("%s: each with the server's request id" % name, [i.get("request_id") for i in invs], list(ids))
    res.eq("%s: each ended by its POST .../response" % name, [i.get("outcome") for i in invs],
           ["response"] * len(ids))
    res.eq("%s: each allocated exactly its event's MiB" % name, [i.get("alloc_bytes") for i in invs],
           [(k + 1) * MiB for k in range(len(ids))])
    res.eq("%s: runtime_api_unparsed 0" % name, rep.get("errors", {}).get("runtime_api_unparsed"), 0)


def run_section(ctx):
    res = ctx.res
    cases = ["rapi/bytewise", "rapi/long ids", "rapi/long ids in pieces", "rapi/too long"]
    if not any(res.wanted(n) for n in cases):
        return
    if not ctx.built.get("wl_rapi", {}).get("fp"):
        res.fail("rapi", "wl_rapi not built")
        return
    port = free_ports(4)
    name = "rapi/bytewise"
    if res.wanted(name):
        ids = [str(uuid.uuid4()) for _ in range(N)]
        rep, txt, invs = run_case(ctx, name, ids, 1, port)
        if rep:
            check_found(res, name, rep, invs, ids)
    name = "rapi/long ids"
    if res.wanted(name):
        ids = [long_id(i, 200) for i in range(N)]
        rep, txt, invs = run_case(ctx, name, ids, 4096, port + 1)
        if rep:
            check_found(res, name, rep, invs, ids)
    name = "rapi/long ids in pieces"
    if res.wanted(name):
        ids = [long_id(i, 200) for i in range(N)]
        rep, txt, invs = run_case(ctx, name, ids, 3, port + 2)
        if rep:
            check_found(res, name, rep, invs, ids)
    name = "rapi/too long"
    if res.wanted(name):
        ids = [long_id(i, 600) for i in range(N)]
        rep, txt, invs = run_case(ctx, name, ids, 4096, port + 3)
        if rep:
            res.eq("%s: every POST line counted as not parsed" % name,
                   rep.get("errors", {}).get("runtime_api_unparsed"), N)
            res.true("%s: report.txt names runtime_api_unparsed" % name,
                     "runtime_api_unparsed" in txt, [l for l in txt.splitlines() if "runtime_api" in l])
            res.eq("%s: the invocations are still found (ended by the next start)" % name, len(invs), N)

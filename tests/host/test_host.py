#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/host/test_host.py -- tests for tools/lambda-host and the sample functions (python3 stdlib).

    python3 tests/host/test_host.py [--build build] [--filter REGEX] [-v]

Starts lambda-host (BUILD/tools/lambda-host, built with `make lambda-host` if missing) around each
sample function and checks what a Lambda user would: one unique request id and its own response
per invoke, the Runtime API's status codes (202, 400 unknown id, 403, 404, 405, 413 over
6291556 bytes) with the test itself acting as the runtime, the REPORT line format (tab-separated,
Init Duration on cold starts only, billed = ceil(duration)), Max Memory Used monotonic and at least
each function's known footprint, the OOM kill answered and reported as Lambda does followed by a
cold start, timeouts, init errors, --events, the runtime's environment and cgroup, and a clean
exit on SIGTERM.

All traffic is on 127.0.0.1, on ports 19001/18080 plus a random offset (never the defaults, so a
running demo is not disturbed). Every wait has a timeout and every lambda-host started here is
killed by its process group before exit. Output: "PASS name", "FAIL name: why" or
"SKIP name: why" per test, then "N passed, N failed, N skipped"; exit status 1 if any failed.
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import port_free  # noqa: E402  (tests/harness.py: bindable on 127.0.0.1 now)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_BOOTSTRAP = os.path.join(ROOT, "tools", "functions", "python", "bootstrap.py")
MIB = 1 << 20
MAX_RESPONSE = 6291556          # Lambda's response limit, as its error message states it
MAX_EVENT = 6291456
START_TIMEOUT = 15.0            # lambda-host up and ready file written
CALL_TIMEOUT = 30.0             # any single HTTP exchange
RUNTIME = "/2018-06-01/runtime"
INVOKE_PATH = "/2015-03-31/functions/function/invocations"

REPORT_RE = re.compile(
    r"^REPORT RequestId: (?P<id>[0-9a-f-]{36})\t"
    r"Duration: (?P<dur>\d+\.\d\d) ms\t"
    r"Billed Duration: (?P<billed>\d+) ms\t"
    r"Memory Size: (?P<mem>\d+) MB\t"
    r"Max Memory Used: (?P<used>\d+) MB\t"
    r"(?:Init Duration: (?P<init>\d+\.\d\d) ms\t)?"
    r"(?:Status: (?P<status>[a-z]+)\t)?"
    r"(?:Error Type: (?P<etype>[A-Za-z.]+)\t)?$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

VERBOSE = False
_port_base = random.randint(0, 400) * 2
# How each lambda-host stopped by a test ended; checked after the test (exit 0, no sanitizer).
EXITS = []
# Hosts started by the running test: their stderr (lambda-host's notices) goes into a FAIL line.
HOSTS = []
SANITIZER_RE = re.compile(r"AddressSanitizer|LeakSanitizer|\.c:\d+:\d+: runtime error:")


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, why):
    if not cond:
        raise Fail(why)


def next_ports():
    """A fresh (runtime, invoke) port pair per host: 19001/18080 + random offset + step."""
    global _port_base
    for _ in range(50):
        _port_base += 2
        rport, iport = 19001 + _port_base, 18080 + _port_base
        if all(port_free(p) for p in (rport, iport)):
            return rport, iport
    raise Fail("no free port pair near 19001/18080")


class Host:
    """One lambda-host process, its stdout/stderr collected by reader threads."""

    def __init__(self, build, cmd, args=(), ready=True, tmp=None):
        self.rport, self.iport = next_ports()
        self.tmp = tmp
        self.ready_file = os.path.join(tmp, "ready.%d" % self.rport)
        # No -q: lambda-host's notices (e.g. who signalled it) land in failure messages. A
        # generous --timeout first (a test's own comes later and wins) keeps a loaded machine
        # from turning slow invocations into timeouts.
        self.argv = [os.path.join(build, "tools", "lambda-host"),
                     "--runtime-port", str(self.rport), "--invoke-port", str(self.iport),
                     "--ready-file", self.ready_file, "--timeout", "60"] + list(args) + \
            ["--"] + list(cmd)
        self.out, self.err = [], []
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.out),
                                         daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, self.err),
                                         daemon=True)]
        for t in self.readers:
            t.start()
        self.info = {}
        HOSTS.append(self)
        if ready:
            self.wait_ready()

    def _read(self, stream, sink):
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            if VERBOSE:
                print("    | " + line, file=sys.stderr)
            with self.lock:
                sink.append(line)

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if os.path.exists(self.ready_file):
                with open(self.ready_file) as f:
                    self.info = dict(l.split("=", 1) for l in f.read().split("\n") if "=" in l)
                return
            if self.proc.poll() is not None:
                raise Fail("lambda-host exited %s before ready: %s" % (self.proc.returncode,
                                                                        self.stderr_text()))
            time.sleep(0.02)
        raise Fail("lambda-host not ready after %.0f s" % START_TIMEOUT)

    def stdout_lines(self):
        with self.lock:
            return list(self.out)

    def stderr_text(self):
        with self.lock:
            return " | ".join(self.err)[-600:]

    def invoke(self, event, headers=None, timeout=CALL_TIMEOUT):
        body = event if isinstance(event, (bytes, str)) else json.dumps(event)
        conn = http.client.HTTPConnection("127.0.0.1", self.iport, timeout=timeout)
        try:
            conn.request("POST", INVOKE_PATH, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def reports(self):
        out = []
        for line in self.stdout_lines():
            if line.startswith("REPORT"):
                m = REPORT_RE.match(line)
                if not m:
                    raise Fail("malformed REPORT line: %r" % line)
                out.append(m.groupdict())
        return out

    def wait_reports(self, n, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reps = self.reports()
            if len(reps) >= n:
                return reps
            time.sleep(0.02)
        raise Fail("expected %d REPORT lines, got %d" % (n, len(self.reports())))

    def stop(self, timeout=10.0):
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        for t in self.readers:
            t.join(5)
        with self.lock:
            EXITS.append((self.proc.returncode, "\n".join(self.err)))
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(5)


def run_events(build, cmd, events, args=(), timeout=60.0):
    """lambda-host --events: returns (returncode, stdout lines, stderr)."""
    rport, iport = next_ports()
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for ev in events:
            f.write((ev if isinstance(ev, str) else json.dumps(ev)) + "\n")
        path = f.name
    try:
        p = subprocess.run([os.path.join(build, "tools", "lambda-host"), "--timeout", "60",
                            "--runtime-port", str(rport), "--invoke-port", str(iport),
                            "--events", path] + list(args) + ["--"] + list(cmd),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        os.unlink(path)
    err = p.stderr.decode(errors="replace")
    EXITS.append((p.returncode, err))
    return p.returncode, p.stdout.decode(errors="replace").splitlines(), err


def parse_reports(lines):
    reps = []
    for line in lines:
        if line.startswith("REPORT"):
            m = REPORT_RE.match(line)
            check(m, "malformed REPORT line: %r" % line)
            reps.append(m.groupdict())
    return reps


def json_lines(lines):
    out = []
    for line in lines:
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def check_report_invariants(reps, memory_mb):
    """Format-level facts every REPORT sequence of one sandbox must satisfy."""
    for i, r in enumerate(reps):
        dur = float(r["dur"])
        check(int(r["billed"]) == max(1, math.ceil(dur - 1e-9)),
              "billed %s ms for duration %s ms" % (r["billed"], r["dur"]))
        check(int(r["mem"]) == memory_mb, "Memory Size %s, want %d" % (r["mem"], memory_mb))
        check((r["init"] is not None) == (i == 0),
              "Init Duration on REPORT #%d: %s (only the cold start has it)" % (i, r["init"]))
    used = [int(r["used"]) for r in reps]
    check(used == sorted(used), "Max Memory Used went down: %s" % used)


# ---- the tests ----

def test_help(build, tmp):
    p = subprocess.run([os.path.join(build, "tools", "lambda-host"), "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    text = p.stdout.decode()
    check(p.returncode == 0, "--help exit %d" % p.returncode)
    for word in ("USAGE:", "EXAMPLES:", "--memory", "--events", "--timeout", "--ready-file"):
        check(word in text, "--help lacks %s" % word)


def test_help_matches_readme(build, tmp):
    """tools/lambda-host/README.md shows the real --help between its help markers."""
    p = subprocess.run([os.path.join(build, "tools", "lambda-host"), "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    with open(os.path.join(ROOT, "tools", "lambda-host", "README.md")) as f:
        readme = f.read()
    m = re.search(r"<!-- help:begin -->\n```\n(.*?)```\n<!-- help:end -->", readme, re.S)
    check(m, "README.md has no help:begin/help:end block")
    check(m.group(1) == p.stdout.decode(), "README.md's --help block is stale (paste the output "
          "of lambda-host --help)")


def test_logfmt_unit(build, tmp):
    """The C unit test of the pure formatting functions (BUILD/tests/host/test_logfmt)."""
    p = subprocess.run([os.path.join(build, "tests", "host", "test_logfmt")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    lines = p.stdout.decode(errors="replace").splitlines()
    bad = [l for l in lines if l.startswith("not ok")]
    check(p.returncode == 0 and not bad and any(l.startswith("ok - ") for l in lines),
          "exit %d: %s" % (p.returncode, "; ".join(bad) or lines[-3:]))


def test_usage_errors(build, tmp):
    lh = os.path.join(build, "tools", "lambda-host")
    for argv, code in (([lh], 2), ([lh, "--memory", "abc", "--", "true"], 2),
                       ([lh, "--timeout", "-1", "--", "true"], 2),
                       ([lh, "--runtime-port", "70000", "--", "true"], 2)):
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        err = p.stderr.decode().strip().splitlines()
        check(p.returncode == code, "%s: exit %d, want %d" % (argv[1:], p.returncode, code))
        check(len(err) == 1 and err[0].startswith("lambda-host: "),
              "%s: want one 'lambda-host:' line, got %r" % (argv[1:], err))


def test_bad_command(build, tmp):
    rport, iport = next_ports()
    p = subprocess.run([os.path.join(build, "tools", "lambda-host"), "--runtime-port", str(rport),
                        "--invoke-port", str(iport), "--", "/nonexistent/runtime"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=15)
    err = p.stderr.decode()
    check(p.returncode == 1, "exit %d, want 1" % p.returncode)
    check("cannot execute /nonexistent/runtime" in err, "stderr: %r" % err)


def test_port_in_use(build, tmp):
    rport, iport = next_ports()
    with socket.socket() as s:
        s.bind(("127.0.0.1", rport))
        s.listen(1)
        p = subprocess.run([os.path.join(build, "tools", "lambda-host"), "--runtime-port",
                            str(rport), "--invoke-port", str(iport), "--", "true"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=15)
    err = p.stderr.decode()
    check(p.returncode == 1, "exit %d, want 1" % p.returncode)
    check("cannot listen on 127.0.0.1:%d" % rport in err and "in use" in err, "stderr: %r" % err)


def test_unique_ids(build, tmp):
    """Concurrent invokes: each gets a distinct id and its own response, each logged once."""
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")],
             ["--timeout", "20"], tmp=tmp)
    try:
        results, errors = [], []

        def one(i):
            try:
                st, hdr, body = h.invoke({"mb": 1 + i % 3, "sleep_ms": 20})
                results.append((i, st, hdr, json.loads(body)))
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(CALL_TIMEOUT)
        check(not errors, "invoke failed: %s" % errors)
        check(len(results) == 8, "%d of 8 invokes answered" % len(results))
        ids = set()
        for i, st, hdr, body in results:
            check(st == 200 and "x-amz-function-error" not in hdr, "invoke %d: HTTP %d %r" %
                  (i, st, body))
            rid = hdr.get("x-amzn-requestid", "")
            check(UUID_RE.match(rid), "request id %r is not a UUID v4" % rid)
            check(body["request_id"] == rid, "response for %s carries %s" % (rid,
                                                                              body["request_id"]))
            check(body["mb"] == 1 + i % 3, "invoke %d got the response of another event" % i)
            ids.add(rid)
        check(len(ids) == 8, "request ids not unique: %s" % sorted(ids))
        reps = h.wait_reports(8)
        lines = h.stdout_lines()
        for rid in ids:
            for kind in ("START RequestId: %s Version: $LATEST" % rid, "END RequestId: %s" % rid):
                check(lines.count(kind) == 1, "%r logged %d times" % (kind, lines.count(kind)))
        check(sorted(r["id"] for r in reps) == sorted(ids), "REPORT ids differ from invoke ids")
        check_report_invariants(reps, 128)
    finally:
        h.stop()


def test_runtime_api_status(build, tmp):
    """The test is the runtime: 202, 400, 403, 404, 405, 413, headers, streaming, keep-alive."""
    h = Host(build, ["sleep", "120"], ["--timeout", "60", "--function-name", "apitest"], tmp=tmp)
    rt = http.client.HTTPConnection("127.0.0.1", h.rport, timeout=CALL_TIMEOUT)
    pending = {}

    def invoke_bg(key, event):
        def run():
            try:
                pending[key] = h.invoke(event)
            except Exception as e:  # noqa: BLE001
                pending[key] = e
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def call(method, path, body=None, headers=None):
        rt.request(method, RUNTIME + path, body=body, headers=headers or {})
        r = rt.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()

    def next_event():
        st, hdr, body = call("GET", "/invocation/next")
        check(st == 200, "GET next: HTTP %d" % st)
        return hdr, body

    try:
        st, _, body = call("POST", "/invocation/00000000-0000-4000-8000-000000000000/response",
                           b"{}")
        check(st == 400 and json.loads(body)["errorType"] == "InvalidRequestID",
              "unknown id: HTTP %d %s" % (st, body))
        st, _, _ = call("POST", "/invocation/not*an*id/response", b"{}")
        check(st == 400, "malformed id: HTTP %d" % st)
        st, _, _ = call("GET", "/invocation/abc/response")
        check(st == 405, "GET on /response: HTTP %d, want 405" % st)
        st, _, _ = call("GET", "/no/such/path")
        check(st == 404, "unknown path: HTTP %d, want 404" % st)

        # 1: headers and body of /next; a response over the limit is 413 + ResponseSizeTooLarge.
        t = invoke_bg(1, {"n": 1})
        hdr, body = next_event()
        rid = hdr.get("lambda-runtime-aws-request-id", "")
        check(UUID_RE.match(rid), "Lambda-Runtime-Aws-Request-Id %r" % rid)
        check(json.loads(body) == {"n": 1}, "event body %r" % body)
        dl = int(hdr.get("lambda-runtime-deadline-ms", "0"))
        now_ms = time.time() * 1000
        check(now_ms + 50000 < dl < now_ms + 70000, "deadline %d not ~60 s ahead" % dl)
        check(hdr.get("lambda-runtime-invoked-function-arn", "").startswith("arn:aws:lambda:")
              and hdr["lambda-runtime-invoked-function-arn"].endswith(":function:apitest"),
              "function arn %r" % hdr.get("lambda-runtime-invoked-function-arn"))
        check(hdr.get("lambda-runtime-trace-id", "").startswith("Root=1-"),
              "trace id %r" % hdr.get("lambda-runtime-trace-id"))
        st, _, _ = call("POST", "/invocation/%s/response" % "11111111-1111-4111-8111-111111111111",
                        b"{}")
        check(st == 400, "other id while one runs: HTTP %d" % st)
        st, _, body = call("POST", "/invocation/%s/response" % rid, b"x" * (MAX_RESPONSE + 1))
        check(st == 413 and json.loads(body)["errorType"] == "RequestEntityTooLarge",
              "oversized response: HTTP %d %s" % (st, body[:200]))
        t.join(CALL_TIMEOUT)
        st, ihdr, ibody = pending[1]
        check(st == 200 and ihdr.get("x-amz-function-error") == "Unhandled" and
              json.loads(ibody)["errorType"] == "Function.ResponseSizeTooLarge",
              "invoker after 413: %d %s %s" % (st, ihdr, ibody[:200]))
        st, _, _ = call("POST", "/invocation/%s/response" % rid, b"{}")
        check(st == 400, "response after 413: HTTP %d, want 400" % st)

        # 2: a response of exactly the limit is accepted (202) and delivered whole.
        t = invoke_bg(2, {"n": 2})
        hdr, _ = next_event()
        rid = hdr["lambda-runtime-aws-request-id"]
        big = b"\"" + b"y" * (MAX_RESPONSE - 2) + b"\""
        st, _, body = call("POST", "/invocation/%s/response" % rid, big)
        check(st == 202 and json.loads(body) == {"status": "OK"}, "response at the limit: %d" % st)
        t.join(CALL_TIMEOUT)
        st, ihdr, ibody = pending[2]
        check(st == 200 and ibody == big and "x-amz-function-error" not in ihdr,
              "invoker got %d, %d bytes" % (st, len(ibody)))
        check(ihdr.get("x-amzn-requestid") == rid, "X-Amzn-RequestId %r" % ihdr.get(
            "x-amzn-requestid"))
        st, _, _ = call("POST", "/invocation/%s/response" % rid, b"{}")
        check(st == 400, "second response for one id: HTTP %d, want 400" % st)

        # 3: /error -> 202, the invoker gets 200 + X-Amz-Function-Error: Unhandled + the body.
        t = invoke_bg(3, {"n": 3})
        hdr, _ = next_event()
        rid = hdr["lambda-runtime-aws-request-id"]
        err = json.dumps({"errorMessage": "boom", "errorType": "ValueError"}).encode()
        st, _, _ = call("POST", "/invocation/%s/error" % rid, err,
                        {"Lambda-Runtime-Function-Error-Type": "Unhandled"})
        check(st == 202, "/error: HTTP %d" % st)
        t.join(CALL_TIMEOUT)
        st, ihdr, ibody = pending[3]
        check(st == 200 and ihdr.get("x-amz-function-error") == "Unhandled" and ibody == err,
              "invoker after /error: %d %s %r" % (st, ihdr, ibody))

        # 4: a streamed (chunked) response, finished by the 0-length chunk.
        t = invoke_bg(4, {"n": 4})
        hdr, _ = next_event()
        rid = hdr["lambda-runtime-aws-request-id"]
        rt.putrequest("POST", RUNTIME + "/invocation/%s/response" % rid)
        rt.putheader("Transfer-Encoding", "chunked")
        rt.putheader("Lambda-Runtime-Function-Response-Mode", "streaming")
        rt.endheaders()
        for piece in (b"hello ", b"streaming ", b"world"):
            rt.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.02)
        rt.send(b"0\r\n\r\n")
        r = rt.getresponse()
        r.read()
        check(r.status == 202, "streamed response: HTTP %d" % r.status)
        t.join(CALL_TIMEOUT)
        st, ihdr, ibody = pending[4]
        check(st == 200 and ibody == b"hello streaming world", "invoker got %d %r" % (st, ibody))

        # init/error after init is a state error.
        st, _, _ = call("POST", "/init/error", b"{}")
        check(st == 403, "init/error after init: HTTP %d, want 403" % st)

        # Garbage on a raw socket must not hurt the server.
        with socket.create_connection(("127.0.0.1", h.rport), timeout=5) as s:
            s.sendall(b"\x00\x01GARBAGE \xff\r\nX: " + b"a" * 70000 + b"\r\n\r\n")
            try:
                s.recv(100)
            except OSError:
                pass
        # An oversized invoke is refused before it reaches the runtime.
        st, _, body = h.invoke(b"x" * (MAX_EVENT + 1))
        check(st == 413, "invoke over 6 MiB: HTTP %d" % st)
        # Still serving on the same keep-alive connection after all of the above.
        t = invoke_bg(5, {"n": 5})
        hdr, body = next_event()
        st, _, _ = call("POST", "/invocation/%s/response" % hdr["lambda-runtime-aws-request-id"],
                        b"\"done\"")
        t.join(CALL_TIMEOUT)
        check(st == 202 and pending[5][2] == b"\"done\"", "after garbage: %d %r" % (st, pending[5]))
        check(h.proc.poll() is None, "lambda-host died")
    finally:
        rt.close()
        h.stop()


def test_report_and_monotonic(build, tmp):
    """oom function, 256 MB: Max Memory Used never goes down and covers each footprint."""
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")], ["--memory", "256"],
             tmp=tmp)
    try:
        sizes = [8, 64, 16, 128, 32, 64]
        floor = 0
        for i, mb in enumerate(sizes):
            st, hdr, body = h.invoke({"mb": mb})
            check(st == 200 and json.loads(body).get("touched") == mb * MIB, "mb=%d: %d %r" %
                  (mb, st, body[:300]))
            rep = h.wait_reports(i + 1)[i]
            floor = max(floor, mb)
            check(int(rep["used"]) >= floor, "after mb=%d Max Memory Used %s MB < %d" %
                  (mb, rep["used"], floor))
            check(rep["status"] is None, "unexpected Status: %s" % rep["status"])
        check_report_invariants(h.reports(), 256)
    finally:
        h.stop()


def test_own_footprint_after_bigger(build, tmp):
    """{"mb":64} after {"mb":128}: RSS mid-invocation is ~64 MiB; the high-water mark says 128+."""
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")], ["--memory", "256"],
             tmp=tmp)
    try:
        pid = int(h.info["runtime_pid"])
        st, _, _ = h.invoke({"mb": 128})
        check(st == 200, "mb=128: HTTP %d" % st)
        box = {}
        t = threading.Thread(target=lambda: box.update(r=h.invoke({"mb": 64, "sleep_ms": 600})))
        t.start()
        rss = 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and t.is_alive():
            with open("/proc/%d/status" % pid) as f:
                kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
            rss = max(rss, kb << 10)
            time.sleep(0.02)
        t.join(CALL_TIMEOUT)
        check(box.get("r", (0,))[0] == 200, "mb=64: %r" % (box.get("r"),))
        check(64 * MIB <= rss < 80 * MIB, "RSS during mb=64 was %.1f MiB, want 64..80" %
              (rss / MIB))
        reps = h.wait_reports(2)
        check(int(reps[1]["used"]) >= 128, "Max Memory Used %s MB after a 128 MiB invocation" %
              reps[1]["used"])
    finally:
        h.stop()


def test_oom_kill(build, tmp):
    """Over the limit: kernel OOM kill, Lambda's answer and REPORT, then a cold start."""
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")], ["--memory", "128"],
             tmp=tmp)
    try:
        if h.info.get("cgroup", "none") == "none":
            raise Skip("no memory cgroup on this host (not root?)")
        st, _, _ = h.invoke({"mb": 16})
        check(st == 200, "mb=16: HTTP %d" % st)
        st, hdr, body = h.invoke({"mb": 200})
        rid = hdr.get("x-amzn-requestid", "")
        check(st == 200 and hdr.get("x-amz-function-error") == "Unhandled",
              "mb=200: HTTP %d %s" % (st, hdr))
        want = {"errorType": "Runtime.ExitError",
                "errorMessage": "RequestId: %s Error: Runtime exited with error: signal: killed"
                                % rid}
        check(json.loads(body) == want, "mb=200 answered %r, want %r" % (body, want))
        reps = h.wait_reports(2)
        check(reps[1]["id"] == rid and reps[1]["status"] == "error" and
              reps[1]["etype"] == "Runtime.OutOfMemory",
              "REPORT after OOM: %r" % reps[1])
        check(int(reps[1]["used"]) >= 127, "Max Memory Used %s MB at the OOM kill" %
              reps[1]["used"])
        lines = h.stdout_lines()
        check("RequestId: %s Error: Runtime exited with error: signal: killed" % rid in lines and
              "Runtime.ExitError" in lines, "runtime exit not logged")
        st, hdr, body = h.invoke({"mb": 8})
        check(st == 200 and "x-amz-function-error" not in hdr, "after OOM: HTTP %d %r" %
              (st, body))
        rep = h.wait_reports(3)[2]
        check(rep["init"] is not None, "invocation after the OOM kill is not a cold start: %r" %
              rep)
        check(int(rep["used"]) < 100, "new sandbox inherited the old high-water mark: %s MB" %
              rep["used"])
        check(h.proc.poll() is None, "lambda-host died")
    finally:
        h.stop()


def test_timeout(build, tmp):
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")], ["--timeout", "1"],
             tmp=tmp)
    try:
        st, hdr, body = h.invoke({"sleep_ms": 5000})
        rid = hdr.get("x-amzn-requestid", "")
        check(st == 200 and hdr.get("x-amz-function-error") == "Unhandled", "HTTP %d %s" %
              (st, hdr))
        err = json.loads(body)
        check(err.get("errorType") == "Sandbox.Timedout" and
              err.get("errorMessage") ==
              "RequestId: %s Error: Task timed out after 1.00 seconds" % rid,
              "timeout answered %r" % body)
        rep = h.wait_reports(1)[0]
        check(rep["status"] == "timeout" and 1000 <= float(rep["dur"]) < 2500,
              "REPORT after timeout: %r" % rep)
        check(any(l.endswith(" %s Task timed out after 1.00 seconds" % rid)
                  for l in h.stdout_lines()), "no 'Task timed out' log line")
        st, _, _ = h.invoke({})
        check(st == 200, "after timeout: HTTP %d" % st)
        check(h.wait_reports(2)[1]["init"] is not None, "no cold start after the timeout")
    finally:
        h.stop()


def test_events_leaky(build, tmp):
    """--events with the leaky function: N responses in order, leak visible in Max Memory Used."""
    n = 12
    rc, lines, err = run_events(build, [os.path.join(build, "tools", "functions", "leaky")],
                                [{}] * n)
    check(rc == 0, "exit %d: %s" % (rc, err))
    resp = json_lines(lines)
    check([r["entries"] for r in resp] == list(range(1, n + 1)), "responses %r" % resp)
    check(resp[-1]["leaked_total"] == n * 256 * 1024, "leaked_total %r" % resp[-1])
    check(len({r["request_id"] for r in resp}) == n, "request ids not unique")
    reps = parse_reports(lines)
    check([r["id"] for r in reps] == [r["request_id"] for r in resp], "REPORT/response ids differ")
    check_report_invariants(reps, 128)
    check(int(reps[-1]["used"]) >= 3, "Max Memory Used %s MB < 3 MB leaked" % reps[-1]["used"])


def test_events_python(build, tmp):
    """Python stdlib runtime: buffered responses, context copies, function errors, 413."""
    if not shutil.which("python3"):
        raise Skip("no python3")
    events = [{"mb": 8}, {"mb": 16}, {"fail": True}, {"mb": 7, "return_body": True}, {"mb": 1},
              "not json"]
    rc, lines, err = run_events(build, ["python3", PY_BOOTSTRAP], events, ["--memory", "256"])
    check(rc == 0, "exit %d: %s" % (rc, err))
    resp = json_lines(lines)
    check(len(resp) == 6, "%d responses for 6 events" % len(resp))
    check(resp[0]["bytes"] == 8 * MIB and resp[1]["bytes"] == 16 * MIB, "sizes %r" % resp[:2])
    check(resp[2]["errorType"] == "RuntimeError", "fail event: %r" % resp[2])
    check(resp[3]["errorType"] == "Function.ResponseSizeTooLarge", "7 MiB body: %r" % resp[3])
    check(resp[4]["bytes"] == MIB, "mb=1: %r" % resp[4])
    check(resp[5]["errorType"] == "JSONDecodeError", "non-JSON event: %r" % resp[5])
    reps = parse_reports(lines)
    check_report_invariants(reps, 256)
    # 16 MiB event: chunk list + joined str = 32 MiB, plus the 2 MiB context copy.
    check(int(reps[1]["used"]) >= 34, "Max Memory Used %s MB < 34 after mb=16" % reps[1]["used"])


def test_events_arena(build, tmp):
    rc, lines, err = run_events(build, [os.path.join(build, "tools", "functions", "arena")],
                                [{}, {}, {"blocks": 32}, {}])
    check(rc == 0, "exit %d: %s" % (rc, err))
    resp = json_lines(lines)
    check([r["bytes"] for r in resp] == [40 * MIB, 40 * MIB, 20 * MIB, 40 * MIB],
          "bytes %r" % [r.get("bytes") for r in resp])
    reps = parse_reports(lines)
    check_report_invariants(reps, 128)
    check(int(reps[0]["used"]) >= 40 and int(reps[2]["used"]) >= 40,
          "Max Memory Used %r below 40 MB" % [r["used"] for r in reps])


def test_arena_retention(build, tmp):
    """The arena function's point: RSS stays high after its frees."""
    h = Host(build, [os.path.join(build, "tools", "functions", "arena")], tmp=tmp)
    try:
        pid = int(h.info["runtime_pid"])
        for _ in range(3):
            st, _, _ = h.invoke({})
            check(st == 200, "HTTP %d" % st)
        with open("/proc/%d/status" % pid) as f:
            rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) << 10
        check(rss >= 10 * MIB, "RSS after the frees is %.1f MiB; expected glibc to retain >= 10"
              % (rss / MIB))
    finally:
        h.stop()


def test_init_error(build, tmp):
    h = Host(build, ["python3", PY_BOOTSTRAP], ["--handler", "nosuch.handler"], tmp=tmp)
    try:
        for i in range(2):
            st, hdr, body = h.invoke({})
            check(st == 200 and hdr.get("x-amz-function-error") == "Unhandled", "HTTP %d %s" %
                  (st, hdr))
            check(json.loads(body)["errorType"] == "Runtime.ImportModuleError", "body %r" % body)
            rep = h.wait_reports(i + 1)[i]
            check(rep["status"] == "error" and rep["etype"] == "Runtime.ImportModuleError" and
                  rep["init"] is not None, "REPORT %r" % rep)
    finally:
        h.stop()


def test_environment_and_cgroup(build, tmp):
    envfile = os.path.join(tmp, "env.txt")
    h = Host(build, ["sh", "-c", "env > %s; exec sleep 120" % envfile],
             ["--memory", "192", "--handler", "app.main", "--function-name", "envtest",
              "-e", "MY_SETTING=42"], tmp=tmp)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (os.path.exists(envfile) and
                                                   os.path.getsize(envfile) > 0):
            time.sleep(0.02)
        time.sleep(0.1)     # let sh finish writing
        with open(envfile) as f:
            env = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
        want = {"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:%d" % h.rport, "_HANDLER": "app.main",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "192", "AWS_LAMBDA_FUNCTION_NAME": "envtest",
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/envtest", "TZ": ":UTC",
                "MY_SETTING": "42", "LAMBDA_TASK_ROOT": os.getcwd()}
        for k, v in want.items():
            check(env.get(k) == v, "%s=%r, want %r" % (k, env.get(k), v))
        for k in ("AWS_REGION", "AWS_LAMBDA_LOG_STREAM_NAME"):
            check(env.get(k), "%s not set" % k)
        check(re.match(r"^\d{4}/\d\d/\d\d/\[\$LATEST\][0-9a-f]{32}$",
                       env["AWS_LAMBDA_LOG_STREAM_NAME"]), "log stream %r" %
              env["AWS_LAMBDA_LOG_STREAM_NAME"])
        cg = h.info.get("cgroup", "none")
        if cg == "none":
            return
        limit = None
        for name in ("memory.max", "memory.limit_in_bytes"):
            if os.path.exists(os.path.join(cg, name)):
                with open(os.path.join(cg, name)) as f:
                    limit = int(f.read())
                break
        check(limit == 192 * MIB, "cgroup limit %r, want %d" % (limit, 192 * MIB))
        with open(os.path.join(cg, "cgroup.procs")) as f:
            procs = f.read().split()
        check(h.info["runtime_pid"] in procs, "runtime %s not in %s" % (h.info["runtime_pid"], cg))
    finally:
        h.stop()


def test_no_cgroup(build, tmp):
    """--no-cgroup: no limit, Max Memory Used from the process group's VmHWM, still monotonic."""
    rc, lines, err = run_events(build, [os.path.join(build, "tools", "functions", "oom")],
                                [{"mb": 32}, {"mb": 8}, {"mb": 160}], ["--no-cgroup"])
    check(rc == 0, "exit %d: %s" % (rc, err))
    check("cgroup none" in err, "no 'cgroup none' notice: %r" % err[-300:])
    resp = json_lines(lines)
    check([r.get("mb") for r in resp] == [32, 8, 160], "responses %r (160 MB must pass the "
                                                       "128 MB size: nothing enforces it)" % resp)
    reps = parse_reports(lines)
    check_report_invariants(reps, 128)
    check(int(reps[0]["used"]) >= 32 and int(reps[2]["used"]) >= 160,
          "Max Memory Used %r below the footprints 32/160" % [r["used"] for r in reps])


def test_sigterm_cleanup(build, tmp):
    """SIGTERM mid-invocation: the invoker is answered, the runtime killed, the cgroup removed."""
    h = Host(build, [os.path.join(build, "tools", "functions", "oom")], ["--timeout", "30"],
             tmp=tmp)
    box = {}

    def pending_invoke():
        try:
            box["r"] = h.invoke({"mb": 4, "sleep_ms": 20000})
        except Exception as e:  # noqa: BLE001
            box["error"] = repr(e)

    t = threading.Thread(target=pending_invoke, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(l.startswith("START")
                                                      for l in h.stdout_lines()):
            time.sleep(0.02)
        pid, cg = int(h.info["runtime_pid"]), h.info.get("cgroup", "none")
        t0 = time.monotonic()
        rc = h.stop(timeout=10)
        check(rc == 0, "exit status %s after SIGTERM" % rc)
        check(time.monotonic() - t0 < 5, "took %.1f s to stop" % (time.monotonic() - t0))
        t.join(5)
        check("r" in box, "the pending invoke was never answered: %s" % box.get("error"))
        st, hdr, body = box["r"]
        check(st == 200 and hdr.get("x-amz-function-error") == "Unhandled" and
              json.loads(body)["errorType"] == "Runtime.ExitError",
              "pending invoke answered %d %r" % (st, body))
        check(not os.path.exists("/proc/%d" % pid) or
              open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "Z",
              "runtime %d still running" % pid)
        check(cg == "none" or not os.path.exists(cg), "cgroup %s left behind" % cg)
        check(not os.path.exists(h.ready_file), "ready file left behind")
    finally:
        h.kill()


def test_node_ric(build, tmp):
    """The real Node.js runtime interface client (npm aws-lambda-ric: aws-lambda-cpp + libcurl)."""
    node_dir = os.path.join(ROOT, "tools", "functions", "node")
    ric = os.path.join(node_dir, "node_modules", ".bin", "aws-lambda-ric")
    if not (shutil.which("node") and os.path.exists(ric)):
        raise Skip("aws-lambda-ric not installed (cd tools/functions/node && "
                   "npm_config_nodedir=/usr npm install)")
    rc, lines, err = run_events(build, [ric, "index.handler"],
                                [{"mb": 4}, {"mb": 2}, {"mb": -1}, {"mb": 8}],
                                ["--task-root", node_dir, "--memory", "256"])
    check(rc == 0, "exit %d: %s" % (rc, err))
    resp = json_lines(lines)
    check([r.get("bytes") for r in resp] == [4 * MIB, 2 * MIB, None, 8 * MIB],
          "responses %r" % [r.get("bytes", r.get("errorType")) for r in resp])
    check(resp[2].get("errorType") == "RangeError", "mb=-1 answered %r" % resp[2])
    reps = parse_reports(lines)
    check([r["id"] for r in reps] == [r.get("request_id", reps[2]["id"]) for r in resp],
          "REPORT ids differ from the responses' ids")
    check_report_invariants(reps, 256)


TESTS = [test_help, test_help_matches_readme, test_logfmt_unit, test_usage_errors,
         test_bad_command, test_port_in_use, test_unique_ids, test_runtime_api_status,
         test_report_and_monotonic, test_own_footprint_after_bigger, test_oom_kill, test_timeout,
         test_events_leaky, test_events_python, test_events_arena, test_arena_retention,
         test_init_error, test_environment_and_cgroup, test_no_cgroup, test_sigterm_cleanup,
         test_node_ric]


def ensure_built(build):
    bins = [os.path.join(build, "tools", n) for n in
            ("lambda-host", "invoke", "functions/oom", "functions/leaky", "functions/arena",
             "../tests/host/test_logfmt")]
    if all(os.access(b, os.X_OK) for b in bins):
        return None
    try:
        p = subprocess.run(["make", "-s", "lambda-host", "OUT=" + build], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "make lambda-host: %s" % e
    if p.returncode != 0:
        return "make lambda-host failed: %s" % p.stdout.decode(errors="replace")[-400:]
    return None


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory (default build)")
    ap.add_argument("--filter", default="", help="run tests whose name matches REGEX")
    ap.add_argument("-v", "--verbose", action="store_true", help="echo lambda-host's output")
    args = ap.parse_args()
    VERBOSE = args.verbose
    build = os.path.abspath(args.build if os.path.isabs(args.build)
                            else os.path.join(ROOT, args.build))
    passed = failed = skipped = 0
    why = ensure_built(build)
    tmp = tempfile.mkdtemp(prefix="lambda-host-test.")
    try:
        for fn in TESTS:
            name = fn.__name__[len("test_"):]
            if args.filter and not re.search(args.filter, name):
                continue
            if why:
                print("FAIL %s: %s" % (name, why), flush=True)
                failed += 1
                continue
            t0 = time.monotonic()
            del EXITS[:]
            del HOSTS[:]
            try:
                fn(build, tmp)
                for rc, err in EXITS:
                    check(rc == 0, "lambda-host exited %s: %s" % (rc, err[-300:]))
                    check(not SANITIZER_RE.search(err), "sanitizer: %s" % err[-600:])
                print("PASS %s (%.1f s)" % (name, time.monotonic() - t0), flush=True)
                passed += 1
            except Skip as e:
                print("SKIP %s: %s" % (name, e), flush=True)
                skipped += 1
            except Fail as e:
                notes = " ".join("[lambda-host stderr: %s]" % h.stderr_text()[-300:]
                                 for h in HOSTS if h.stderr_text())
                print("FAIL %s: %s %s" % (name, e, notes), flush=True)
                failed += 1
            except Exception as e:  # noqa: BLE001 -- a crash in a test is a failure, not an abort
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
                if VERBOSE:
                    traceback.print_exc()
                failed += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/coldstart.py BUILD_DIR — what launch mode adds to a Lambda runtime's cold start.

`make bench-coldstart` (also run by `make bench`). The bundled Lambda-like host
(tools/lambda-host) starts each runtime as Lambda would and times its init phase itself: its
REPORT line's `Init Duration` runs from starting the runtime command to the runtime's first
`GET .../invocation/next`. Each runtime is run:

  untraced     lambda-host -- RUNTIME
  cold         lambda-host -- peaktrace --cache-dir C -o DIR -- RUNTIME, C emptied first: every
               unwind table built while the command waits (then written to C)
  warm         the same with C as the cold run left it: every table read from the cache
  fast cold    --fast-start, C emptied: the command is not held for the tables; they are built
               while it runs (stacks taken before them: 'not covered')
  light        --light, warm: no allocator probes at all

With peaktrace in the host's command, peaktrace's own start-up (BPF programs verified and
loaded, unwind tables, probes attached; the command held before its exec and at each exec stop)
is inside the host's init figure, as it is inside RIE's when peaktrace is put into RIE's
command. The table says how much: report.json's `startup` (before_exec_ns + held_ns). The
light row has the same start-up and no allocator probe: the difference between it and the warm
row is what tracing every allocation of the init phase costs (each allocation and each free is
a uprobe trap, several microseconds here), not start-up work.

Runtimes: Python (the bundled stdlib runtime, tools/functions/python/bootstrap.py) under
Debian's /usr/bin/python3, the same through `python3` on PATH when that is another program (a
pyenv shim: a bash script that execs the real interpreter), and Node with the real runtime
interface client (tools/functions/node/node_modules/.bin/aws-lambda-ric, when installed:
`make lambda-node-ric`). Configurations run interleaved, ROUNDS times (default 5), so machine
drift hits all of them alike; the table shows median, min and max of the host's Init Duration,
the median's ratio to the untraced median and its difference. The machine's load average is
printed with the figures (this machine is shared).

Environment: ROUNDS, RUNTIMES (comma-separated subset of python,pyenv,node), BASE_PEAKTRACE (another
peaktrace binary, e.g. an older build, run as the warm row is, as a "base" row in the same rounds).
"""

import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def free_port_pair():
    """Two consecutive free loopback ports (Runtime API, invoke)."""
    for _ in range(50):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port >= 65535:
            continue
        t = socket.socket()
        try:
            t.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        finally:
            t.close()
        return port
    raise RuntimeError("no free port pair")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def wait_gone(pid, timeout):
    """Until pid is gone or a zombie (the host reaps it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.05)


def one_run(build, runtime, tracer, outdir, tmp):
    """One cold start under the host: (init ms, report.json or None). The runtime is invoked
    once (the host prints Init Duration on that first REPORT), then peaktrace is stopped with
    SIGINT and left to write its report before the host goes."""
    host = os.path.join(build, "tools", "lambda-host")
    invoke = os.path.join(build, "tools", "invoke")
    port = free_port_pair()
    pidfile = os.path.join(tmp, "rt.pid")
    ready = os.path.join(tmp, "ready")
    for p in (pidfile, ready):
        if os.path.exists(p):
            os.unlink(p)
    cmd = [host, "-q", "-m", "1024", "--runtime-port", str(port), "--invoke-port", str(port + 1),
           "--init-timeout", "120", "-t", "60", "--pid-file", pidfile,
           "--ready-file", ready, "--task-root", runtime["task_root"], "--"] + tracer + runtime["argv"]
    h = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=runtime.get("env"))
    deadline = time.monotonic() + 30
    while not os.path.exists(ready) and h.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    rc = subprocess.run([invoke, "--port", str(port + 1), '{"mb": 1}'], capture_output=True,
                        timeout=180).returncode
    rep = None
    if tracer:
        try:
            with open(pidfile) as f:
                ptpid = int(f.read().split()[0])
            os.kill(ptpid, signal.SIGINT)
            wait_gone(ptpid, 120)
        except (OSError, ValueError, IndexError):
            pass
    h.send_signal(signal.SIGTERM)
    out, err = h.communicate(timeout=60)
    m = re.search(r"^REPORT RequestId: \S+\t.*Init Duration: ([0-9.]+) ms", out, re.M)
    if tracer:
        try:
            with open(os.path.join(outdir, "report.json")) as f:
                rep = json.load(f)
        except (OSError, ValueError):
            rep = None
    if rc != 0 or not m:
        sys.stderr.write("coldstart: %s %s: no Init Duration (invoke rc %d)\n%s\n" %
                         (runtime["name"], " ".join(tracer[1:3]) or "untraced", rc, (out + err)[-600:]))
        return None, rep
    return float(m.group(1)), rep


def shim(name):
    """The first NAME on PATH that is a script (a pyenv shim: bash that execs the interpreter)."""
    for d in os.environ.get("PATH", "").split(":"):
        p = os.path.join(d or ".", name)
        try:
            with open(p, "rb") as f:
                if os.access(p, os.X_OK) and f.read(2) == b"#!":
                    return p
        except OSError:
            continue
    return None


def runtimes(build):
    py_dir = os.path.join(ROOT, "tools", "functions", "python")
    boot = os.path.join(py_dir, "bootstrap.py")
    out = []
    out.append({"name": "python /usr/bin/python3", "key": "python", "task_root": py_dir,
                "argv": ["/usr/bin/python3", boot]})
    on_path = shim("python3")
    if on_path:
        out.append({"name": "python (pyenv shim)", "key": "pyenv", "task_root": py_dir,
                    "argv": [on_path, boot]})
    node_dir = os.path.join(ROOT, "tools", "functions", "node")
    ric = os.path.join(node_dir, "node_modules", ".bin", "aws-lambda-ric")
    if os.path.exists(ric):
        out.append({"name": "node (aws-lambda-ric)", "key": "node", "task_root": node_dir,
                    "argv": [ric, "index.handler"]})
    else:
        print("coldstart: node skipped: aws-lambda-ric not installed (make lambda-node-ric)")
    want = os.environ.get("RUNTIMES")
    if want:
        out = [r for r in out if r["key"] in want.split(",")]
    return out


def startup_ms(rep):
    st = (rep or {}).get("startup") or {}
    if "before_exec_ns" not in st:
        return None
    return (st["before_exec_ns"] + st.get("held_ns", 0)) / 1e6


def not_covered(rep):
    return ((rep or {}).get("errors") or {}).get("unwind_not_yet_covered")


def init_allocs(rep):
    for inv in (rep or {}).get("invocations", []):
        if inv.get("seq") == 0:
            return inv.get("alloc_count")
    return None


def fmt(v, spec="%.0f"):
    return "-" if v is None else spec % v


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(os.environ.get("ROUNDS", "5"))
    pt = os.path.join(build, "peaktrace")
    for p in (pt, os.path.join(build, "tools", "lambda-host"), os.path.join(build, "tools", "invoke")):
        if not os.access(p, os.X_OK):
            sys.exit("coldstart: %s not found (make all lambda-host)" % p)
    tmp = tempfile.mkdtemp(prefix="pt-coldstart-")
    outdir = os.path.join(tmp, "out")
    cache = os.path.join(tmp, "cache")
    # --supervised=no: under the host peaktrace would otherwise stay the runtime's parent after
    # the SIGINT that ends each run (README "Under a supervisor"), and one_run waits for it to go.
    base = [pt, "-q", "--supervised=no", "--cache-dir", cache, "-o", outdir]
    # (name, tracer command, empty the cache first)
    configs = [("untraced", [], False), ("cold", base + ["--"], True), ("warm", base + ["--"], False),
               ("fast cold", base + ["--fast-start", "--"], True), ("light", base + ["--light", "--"], False)]
    if os.environ.get("BASE_PEAKTRACE"):
        # Run as the warm row is (same cache, not supervised), so the two compare the binaries.
        configs.append(("base", [os.path.abspath(os.environ["BASE_PEAKTRACE"])] + base[1:] + ["--"],
                        False))
    rts = runtimes(build)
    res = {(r["key"], c[0]): [] for r in rts for c in configs}
    os.makedirs(cache, mode=0o700, exist_ok=True)
    print("coldstart: %d rounds, configurations interleaved; load average at start %s" %
          (rounds, loadavg()))
    loads = [loadavg()]
    for k in range(rounds):
        for r in rts:
            for name, tracer, empty in configs:
                shutil.rmtree(outdir, ignore_errors=True)
                if empty:
                    shutil.rmtree(cache, ignore_errors=True)
                ms, rep = one_run(build, r, tracer, outdir, tmp)
                if ms is not None:
                    res[(r["key"], name)].append((ms, startup_ms(rep), init_allocs(rep),
                                                  not_covered(rep)))
        loads.append(loadavg())
        print("coldstart: round %d/%d done, load %s" % (k + 1, rounds, loads[-1]), flush=True)
    print()
    print("Init Duration (lambda-host's REPORT) per runtime, ms; %d interleaved rounds" % rounds)
    print("peaktrace's start-up is INSIDE the traced figures (peaktrace is the host's runtime command):")
    print("'start-up' = time the command waited for peaktrace (before its exec + held at exec stops),")
    print("median, from report.json's startup; 'init allocs' = allocations traced in the init phase;")
    print("'not covered' = stacks taken before their unwind tables were in (unwind_not_yet_covered)")
    print()
    hdr = "%-24s %-10s %7s %7s %7s %7s %7s %8s %11s %11s" % (
        "runtime", "config", "median", "min", "max", "x untr", "+ms", "start-up", "init allocs",
        "not covered")
    print(hdr)
    print("-" * len(hdr))
    for r in rts:
        base = [x[0] for x in res[(r["key"], "untraced")]]
        bmed = statistics.median(base) if base else None
        for name, _, _ in configs:
            xs = res[(r["key"], name)]
            if not xs:
                print("%-24s %-10s %7s" % (r["name"][:24], name, "failed"))
                continue
            ms = [x[0] for x in xs]
            med = statistics.median(ms)
            col = [[x[i] for x in xs if x[i] is not None] for i in (1, 2, 3)]
            print("%-24s %-10s %7.0f %7.0f %7.0f %7s %7s %8s %11s %11s" % (
                r["name"][:24], name, med, min(ms), max(ms),
                fmt(med / bmed if bmed else None, "%.2f"),
                fmt(med - bmed if bmed is not None and name != "untraced" else None, "%+.0f"),
                *(fmt(statistics.median(c) if c else None) for c in col)))
    print()
    print("load average (1, 5, 15 min) at start and after each round: " + "; ".join(loads))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

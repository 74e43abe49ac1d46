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
  floor        --probe-floor, warm: every probe attached with an empty program (its start-up
               is short: the verifier drops the programs' bodies): what the uprobe traps on
               the init phase's allocations cost by themselves, which no BPF work can go under
               (not for the pyenv shim: through its execs the floor run, whose exec program is
               empty too, measured slower than full tracing; not investigated)
  follow       peaktrace --follow --cache-dir C -o DIR -- lambda-host ... -- RUNTIME (C warm):
               peaktrace starts BEFORE the host, which starts the runtime at once; every image
               of the runtime (and the host) is held at its exec until a session traces it,
               taken by a spare session loaded before (docs/lambda.md "The whole sandbox")
  follow light the same with --light

With peaktrace in the host's command (cold, warm, fast cold, light), peaktrace's own start-up (BPF programs verified and
loaded, unwind tables, probes attached; the command held before its exec and at each exec stop)
is inside the host's init figure, as it is inside RIE's when peaktrace is put into RIE's
command. The table says how much: report.json's `startup` (before_exec_ns + held_ns). The
light row has the same start-up and no allocator probe: the difference between it and the warm
row is what tracing every allocation of the init phase costs (each allocation and each free is
a uprobe trap, several microseconds here), not start-up work. With --follow around the host
(follow, follow light) peaktrace's own start-up (the coordinator, its first spare sessions'
BPF loads, the host's session) is over before the host starts the runtime: NOT in the init
figure; what is in it is each runtime image's hold at its exec (sandbox.json `held_ms`, summed
over the runtime's images: a bootstrap that execs is two) and tracing itself, with replacement
spares loading (at a lower priority) beside the runtime's init.

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


def children(pid):
    kids = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def follow_report(outdir, rt_pid):
    """--follow: the runtime's images (its pid's) in sandbox.json; a report.json-like dict with
    its holds summed as the start-up and the last image's init allocations."""
    try:
        with open(os.path.join(outdir, "sandbox.json")) as f:
            sb = json.load(f)
    except (OSError, ValueError):
        return None
    imgs = [i for i in sb.get("images", []) if i["pid"] == rt_pid]
    if not imgs:
        return None
    try:
        with open(os.path.join(outdir, imgs[-1]["dir"], "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        rep = {}
    rep["follow_held_ms"] = sum(i["held_ms"] for i in imgs)
    rep["follow_spares"] = [i.get("spare") for i in imgs]
    return rep


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
    follow = "--follow" in tracer
    cmd = [host, "-q", "-m", "1024", "--runtime-port", str(port), "--invoke-port", str(port + 1),
           "--init-timeout", "120", "-t", "60", "--pid-file", pidfile,
           "--ready-file", ready, "--task-root", runtime["task_root"], "--"]
    cmd = (tracer + cmd + runtime["argv"]) if follow else (cmd + tracer + runtime["argv"])
    h = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=runtime.get("env"))
    deadline = time.monotonic() + (90 if follow else 30)
    while not os.path.exists(ready) and h.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    rc = subprocess.run([invoke, "--port", str(port + 1), '{"mb": 1}'], capture_output=True,
                        timeout=180).returncode
    rep = None
    if follow:
        # The host ends (SIGTERM: it stops the runtime), then the coordinator, every report
        # written, as its command exited.
        try:
            with open(pidfile) as f:
                rt_pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            rt_pid = None
        for k in children(h.pid):   # the host; not the sessions (a signal stops them)
            try:
                if os.path.realpath("/proc/%d/exe" % k) == os.path.realpath(host):
                    os.kill(k, signal.SIGTERM)
            except OSError:
                pass
        out, err = h.communicate(timeout=180)
        m = re.search(r"^REPORT RequestId: \S+\t.*Init Duration: ([0-9.]+) ms", out, re.M)
        rep = follow_report(outdir, rt_pid) if rt_pid else None
        if rc != 0 or not m:
            sys.stderr.write("coldstart: %s follow: no Init Duration (invoke rc %d)\n%s\n" %
                             (runtime["name"], rc, (out + err)[-600:]))
            return None, rep
        return float(m.group(1)), rep
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
    if rep and "follow_held_ms" in rep:
        return rep["follow_held_ms"]
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


def skipped(runtime, config):
    """Through a shim that execs, the floor (its exec program empty too) measured slower than
    full tracing (+1463 ms against +546, not investigated): it is no floor there, not run."""
    return config == "floor" and runtime["key"] == "pyenv"


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
    # the SIGINT that ends each run (docs/lambda.md "Under a supervisor"), and one_run waits for
    # it to go.
    base = [pt, "-q", "--supervised=no", "--cache-dir", cache, "-o", outdir]
    # (name, tracer command, empty the cache first)
    configs = [("untraced", [], False), ("cold", base + ["--"], True), ("warm", base + ["--"], False),
               ("fast cold", base + ["--fast-start", "--"], True), ("light", base + ["--light", "--"], False),
               ("floor", base + ["--probe-floor", "--"], False)]
    # --follow around the host: peaktrace starts first (--supervised=no: stopped by the host's
    # exit, it does not stay anyone's parent).
    follow = [pt, "-q", "--follow", "--supervised=no", "--cache-dir", cache, "-o", outdir]
    configs += [("follow", follow + ["--"], False), ("follow light", follow + ["--light", "--"], False)]
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
                if skipped(r, name):
                    continue
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
    print("'pt start in init': yes = peaktrace's own start-up is INSIDE the figure (peaktrace is the")
    print("host's runtime command; 'start-up' = the time the command waited for it, before its exec +")
    print("held at exec stops, report.json's startup); no = --follow around the host: peaktrace had")
    print("started before the runtime ('start-up' = the runtime's images' holds at their execs,")
    print("sandbox.json held_ms summed); medians; 'init allocs' = allocations traced in the init phase;")
    print("'not covered' = stacks taken before their unwind tables were in (unwind_not_yet_covered)")
    print()
    hdr = "%-24s %-12s %7s %7s %7s %7s %7s %9s %8s %11s %11s" % (
        "runtime", "config", "median", "min", "max", "x untr", "+ms", "pt start", "start-up",
        "init allocs", "not covered")
    print(hdr)
    print("-" * len(hdr))
    for r in rts:
        base = [x[0] for x in res[(r["key"], "untraced")]]
        bmed = statistics.median(base) if base else None
        for name, _, _ in configs:
            xs = res[(r["key"], name)]
            if not xs:
                print("%-24s %-12s %7s" % (r["name"][:24], name,
                                           "not run" if skipped(r, name) else "failed"))
                continue
            ms = [x[0] for x in xs]
            med = statistics.median(ms)
            col = [[x[i] for x in xs if x[i] is not None] for i in (1, 2, 3)]
            print("%-24s %-12s %7.0f %7.0f %7.0f %7s %7s %9s %8s %11s %11s" % (
                r["name"][:24], name, med, min(ms), max(ms),
                fmt(med / bmed if bmed else None, "%.2f"),
                fmt(med - bmed if bmed is not None and name != "untraced" else None, "%+.0f"),
                "-" if name == "untraced" else "no" if name.startswith("follow") else "yes",
                *(fmt(statistics.median(c) if c else None) for c in col)))
    print()
    print("load average (1, 5, 15 min) at start and after each round: " + "; ".join(loads))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

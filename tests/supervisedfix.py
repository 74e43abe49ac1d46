# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A runtime under a supervisor, shared by the supervisor and follow sections: Supervised runs
lambda-host -> tests/workloads/supervise.py -> peaktrace -> python3 bootstrap.py (ct_handler), and
reads back the supervisor's log (wait_log), the host's request ids (wait_ids), the process groups
(pgid, parent_of, tracer_pid) and the invocations flushed to invocations.jsonl (flushed);
runtime_kept checks the runtime outlived tracing. What the supervisor section checks:
tests/sections/supervisor.py."""

import json
import os
import re
import signal
import time

from harness import ROOT, TIMEOUT, WORKLOAD_SRC, Proc, pid_alive, run
from lambdafix import report_ids, tool

SUPERVISE = os.path.join(WORKLOAD_SRC, "supervise.py")
PY = "/usr/bin/python3"      # Debian's: a pyenv shim on PATH would add an exec


def read_log(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def runtime_kept(res, name, s, pids, after):
    """After tracing stopped under the supervisor (`after`: what stopped it): two more invokes
    answered by the same runtime (pid in pids), no Runtime.ExitError and no runtime exit at the
    host, a REPORT per invoke, and no exit in the supervisor's log."""
    for mb in (32, 8):
        rc, rss, pid = s.invoke(mb)
        res.true("%s: invoke %d MiB after %s answered by the same runtime" % (name, mb, after),
                 rc == 0 and rss is not None and pid in pids,
                 "rc %r, reading %r, pid %r (before: %s)" % (rc, rss, pid, sorted(pids, key=str)))
    alltext = s.h.out + s.h.err
    res.true(name + ": no Runtime.ExitError, the host saw no runtime exit",
             "Runtime.ExitError" not in alltext and "exited:" not in s.h.err, alltext[-400:])
    res.eq(name + ": the host printed a REPORT per invoke", len(s.ids(4)), 4)
    res.true(name + ": the supervisor saw no exit", "exited" not in read_log(s.log), read_log(s.log))


def wait_log(path, regex, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(regex, read_log(path), re.M)
        if m:
            return m
        time.sleep(0.05)
    return None


def flushed(outdir, n, timeout=10):
    """Wait until DIR/invocations.jsonl holds n invocations: user space has read each one's
    kernel record before the next invoke (two slots; an unread one is overwritten, counted in
    invocations_overwritten, when peaktrace's loop is held up, e.g. by the refresh of the
    symbols and unwind tables after the runtime's imports)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(os.path.join(outdir, "invocations.jsonl")) as f:
                if sum(1 for l in f if l.strip() and json.loads(l).get("seq", 0) >= 1) >= n:
                    return True
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    return False


def wait_ids(h, n, timeout=10):
    deadline = time.monotonic() + timeout
    while len(report_ids(h.out)) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return report_ids(h.out)


def pgid(pid):
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def tracer_pid(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return None


class Supervised:
    """lambda-host -> supervise.py -> peaktrace -> python3 bootstrap.py (ct_handler)."""

    def __init__(self, ctx, name, tag, port, pt_args, runtime=None):
        self.ctx, self.res, self.name, self.port = ctx, ctx.res, name, port
        self.log = os.path.join(ctx.tmp, tag + ".supervise.log")
        self.outdir = os.path.join(ctx.tmp, tag)
        self.pt = self.rt = None
        if os.path.exists(self.log):
            os.unlink(self.log)
        argv = [tool(ctx.build_arg, "lambda-host"), "-m", "1024", "-t", "60",
                "--runtime-port", str(port), "--invoke-port", str(port + 1),
                "--handler", "ct_handler.handler", "--task-root", WORKLOAD_SRC, "--",
                PY, SUPERVISE, self.log, "--", ctx.pt, "-q"] + list(pt_args) + \
               ["-o", self.outdir, "--"] + (runtime or [PY, os.path.join(ROOT, "tools/functions/python/bootstrap.py")])
        self.h = Proc(argv)

    def start(self):
        """peaktrace's and the runtime's pids once it traces; False after saying why."""
        m = wait_log(self.log, r"^child (\d+) (\d+)$")
        t = self.h.wait_for("err", r"^peaktrace: tracing PID (\d+)")
        if not m or not t:
            self.res.fail(self.name, "peaktrace did not start under the supervisor: " + self.h.err[-400:])
            self.stop()
            return False
        self.pt, self.rt = int(m.group(1)), int(t.group(1))
        self.sup = parent_of(self.pt)
        return True

    def check_groups(self):
        """peaktrace left the group the supervisor made for it; the runtime is in it."""
        n, res = self.name, self.res
        res.true(n + ": peaktrace said it is under a supervisor",
                 self.h.wait_for("err", r"^peaktrace: under a supervisor", 10), self.h.err[-300:])
        res.true(n + ": peaktrace left the process group the supervisor made for it",
                 pgid(self.pt) not in (None, self.pt), "peaktrace %d in group %s" % (self.pt, pgid(self.pt)))
        res.eq(n + ": the runtime is in that group", pgid(self.rt), self.pt)

    def invoke(self, mb):
        """(rc, the handler's statm reading or None, the handler's pid or None)."""
        rc, out, _ = run([tool(self.ctx.build_arg, "invoke"), "--port", str(self.port + 1),
                          "-t", "60", json.dumps({"mb": mb})], timeout=90)
        try:
            got = json.loads(out)
            return rc, int(got["rss_bytes"]), int(got["pid"])
        except (ValueError, KeyError, TypeError):
            return rc, None, None

    def ids(self, n=0):
        """The request ids of the host's REPORT lines, once there are n (it prints each just
        after answering the invoke)."""
        return wait_ids(self.h, n)

    def stop(self):
        self.h.signal(signal.SIGTERM)
        if self.h.wait(TIMEOUT) is None:
            self.h.kill()
        for pid in (self.pt, self.rt):
            if pid and pid_alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""node: a node --perf-basic-prof script, launched and attached: its JS function by name."""

import os
import re
import shutil
import signal

from harness import TIMEOUT, WORKLOAD_SRC, Proc, short
from tracing import TRACING_RX


# Node JIT frames (--perf-basic-prof): the JavaScript function that allocates, by name

NODE_JS = os.path.join(WORKLOAD_SRC, "js_alloc.js")
NODE_FUNC = "peaktraceJsAllocator"
NODE_BYTES = 64 << 20       # js_alloc.js: 8 x 8 Buffers of 1 MiB after the warm-up


def folded_bytes(path, rx):
    """Sum of the folded lines (root first, frames ';'-joined, then bytes) with a frame matching rx."""
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if any(re.search(rx, fr) for fr in stack.split(";")):
                total += int(n)
    return total


def run_section(ctx):
    """A launched short-lived node script and an attached one: the JS function must appear by
    name (from /tmp/perf-PID.map) in the folded stacks with most of its 64 MiB."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    node = shutil.which("node")
    for mode in ("launch", "attach"):
        prefix = "node/jit frames/%s" % mode
        if not res.wanted(prefix):
            continue
        if not node:
            res.skip(prefix, "node not on PATH")
            continue
        outdir = os.path.join(tmp, "node-" + mode)
        argv = [node, "--perf-basic-prof", NODE_JS]
        target = None
        if mode == "launch":
            # node --perf-basic-prof also writes isolate-*-v8.log into its working directory.
            pr = Proc([pt, "-q", "-o", outdir, "--"] + argv, cwd=tmp)
            m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b")
            target = int(m.group(1)) if m else None
            rc = pr.wait(TIMEOUT)
            pr.kill()
            if not m:
                res.fail(prefix, "no 'peaktrace: tracing' line: %s" % short(pr.err))
                continue
        else:
            js = Proc(argv + ["--wait"], cwd=tmp)
            target = js.pid
            if not js.wait_for("out", r"^js: waiting"):
                js.kill()
                res.fail(prefix, "node script never became ready: %s" % short(js.err))
                continue
            pr = Proc([pt, "-q", "-p", js.pid, "-o", outdir])
            if not pr.wait_for("err", TRACING_RX % js.pid):
                js.kill()
                rc = pr.wait(TIMEOUT)
                res.fail(prefix, "no 'peaktrace: tracing' line (exit %s): %s" % (rc, short(pr.err)))
                continue
            js.signal(signal.SIGUSR2)
            res.eq("%s: node exit status" % prefix, js.wait(TIMEOUT), 0)
            rc = pr.wait(TIMEOUT)
            js.kill()
        try:
            if target:
                os.unlink("/tmp/perf-%d.map" % target)
        except OSError:
            pass
        if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
            print("  stderr: " + short(pr.err, 1000))
            continue
        path = os.path.join(outdir, "alloc.folded")
        if not os.path.exists(path):
            res.fail(prefix, "no alloc.folded")
            continue
        got = folded_bytes(path, r"^JS:\S?%s\b" % NODE_FUNC)
        # Calls made before V8 compiled the function run in the interpreter and show as
        # Builtins_InterpreterEntryTrampoline (no perf-map name without
        # --interpreted-frames-native-stack): at least half must be named, none invented.
        res.true("%s: JS function %s allocated %d bytes by name (want %d..%d)"
                 % (prefix, NODE_FUNC, got, NODE_BYTES // 2, NODE_BYTES + (4 << 20)),
                 NODE_BYTES // 2 <= got <= NODE_BYTES + (4 << 20), "got %d bytes" % got)
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
        res.true("%s: JS function named in report.txt" % prefix, NODE_FUNC in txt,
                 "%s not in the text report" % NODE_FUNC)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""node: a node --perf-basic-prof script, launched and attached: its JS function by name.

node/jit newest names: js_reuse.js compiles and drops thousands of functions (V8 reuses their code
space), then allocates 64 MiB from peaktraceAfterReuse(), launched. Every JIT frame of
report.json's frame table is named by the newest line of /tmp/perf-PID.map covering its call
(the return address less one), as perf takes it, computed here from the file; at least one of
them is an address where the line with the greatest start (the rule before) is another line;
WHO HELD IT's #1 on report.txt's first screen names peaktraceAfterReuse."""

import bisect
import json
import os
import re
import shutil
import signal

from harness import TIMEOUT, WORKLOAD_SRC, Proc, short
from nodefix import NODE_GC_FLAGS, NODE_OBJ_FUNC, NODE_OBJ_JS, NODE_PERF_FLAGS, node_run
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
    run_rss(ctx, node)
    run_flag_warning(ctx, node)
    run_newest(ctx, node)


# RSS by page: a million JS objects in V8's heap (tests/nodefix.py)

NODE_WARN_RX = r"^peaktrace: warning: node \(PID \d+\) was started without (.*?): "


def run_rss(ctx, node):
    """rss.folded at the RSS peak: the JS frame of fillObjects holds at least 60% of the RSS the
    script grew by in it (process.memoryUsage().rss before/after, its own figure), launched and
    attached, with the perf-map flags: and no flags warning."""
    res = ctx.res
    for mode in ("launch", "attach"):
        prefix = "node/rss by page/%s" % mode
        if not res.wanted(prefix):
            continue
        if not node:
            res.skip(prefix, "node not on PATH")
            continue
        outdir = os.path.join(ctx.tmp, "node-rss-" + mode)
        rc, err, out = node_run(ctx, node, mode, [node] + NODE_PERF_FLAGS + NODE_GC_FLAGS
                                + [NODE_OBJ_JS], outdir)
        if rc is None:
            res.fail(prefix, err)
            continue
        if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
            print("  stderr: " + short(err, 1000))
            continue
        res.true("%s: no node flags warning" % prefix, not re.search(NODE_WARN_RX, err, re.M),
                 short(err, 400))
        before = re.search(r"^js: rss_before (\d+)$", out, re.M)
        after = re.search(r"^js: rss_after (\d+)$", out, re.M)
        path = os.path.join(outdir, "rss.folded")
        if not (before and after and os.path.exists(path)):
            res.fail(prefix, "no rss_before/rss_after from the script (%s) or no rss.folded"
                     % short(out, 200))
            continue
        grew = int(after.group(1)) - int(before.group(1))
        got = folded_bytes(path, r"^JS:\S?%s\b" % NODE_OBJ_FUNC)
        res.true("%s: JS function %s holds %d of the %d bytes the script grew by (%.0f%%, want >= 60%%)"
                 % (prefix, NODE_OBJ_FUNC, got, grew, 100.0 * got / max(grew, 1)),
                 grew > (32 << 20) and got >= 0.6 * grew and got <= grew + (16 << 20),
                 "got %d of %d" % (got, grew))


def run_flag_warning(ctx, node):
    """A node target without --perf-basic-prof / --interpreted-frames-native-stack gets one
    warning naming the missing ones, node_perf_flags_missing 1 and its caveat; with them (on the
    command line or in NODE_OPTIONS) none. Flags after the script are the script's, not node's."""
    res = ctx.res
    js = os.path.join(WORKLOAD_SRC, "js_alloc.js")
    both = "--perf-basic-prof and --interpreted-frames-native-stack"
    env_opts = dict(os.environ, NODE_OPTIONS=" ".join(NODE_PERF_FLAGS))
    cases = [
        ("launch, no flags", "launch", [node, js], None, both),
        ("launch, flags after the script", "launch", [node, js] + NODE_PERF_FLAGS, None, both),
        ("launch, --perf-basic-prof only", "launch", [node, "--perf-basic-prof", js], None,
         "--interpreted-frames-native-stack"),
        ("launch, NODE_OPTIONS", "launch", [node, js], env_opts, None),
        ("attach, no flags", "attach", [node, js], None, both),
        ("attach, NODE_OPTIONS", "attach", [node, js], env_opts, None),
    ]
    for i, (name, mode, argv, env, want) in enumerate(cases):
        prefix = "node/flags warning/%s" % name
        if not res.wanted(prefix):
            continue
        if not node:
            res.skip(prefix, "node not on PATH")
            continue
        outdir = os.path.join(ctx.tmp, "node-warn-%d" % i)
        rc, err, _ = node_run(ctx, node, mode, argv, outdir, env)
        if rc is None:
            res.fail(prefix, err)
            continue
        if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
            continue
        warns = re.findall(NODE_WARN_RX, err, re.M)
        try:
            with open(os.path.join(outdir, "report.json")) as f:
                rep = json.load(f)
            with open(os.path.join(outdir, "report.txt")) as f:
                txt = f.read()
        except (OSError, ValueError) as e:
            res.fail(prefix, "report unreadable: %s" % e)
            continue
        count = rep.get("errors", {}).get("node_perf_flags_missing")
        caveat = [c for c in rep.get("caveats", []) if c.get("counter") == "node_perf_flags_missing"]
        if want is None:
            res.true("%s: no warning" % prefix, not warns, short(err, 400))
            res.eq("%s: node_perf_flags_missing" % prefix, count, 0)
            res.true("%s: no caveat" % prefix, not caveat and "node_perf_flags_missing" not in txt,
                     str(caveat))
            continue
        res.true("%s: one warning naming %s" % (prefix, want), warns == [want], short(err, 400))
        res.eq("%s: node_perf_flags_missing" % prefix, count, 1)
        res.true("%s: caveat on stacks naming %s" % (prefix, want),
                 len(caveat) == 1 and "stacks" in caveat[0].get("affects", [])
                 and ("without %s:" % want) in caveat[0].get("cause", ""), str(caveat))
        res.true("%s: caveat in report.txt" % prefix,
                 "caveat: node_perf_flags_missing 1: node started without %s:" % want in txt,
                 [l for l in txt.splitlines() if "node_perf" in l][:3])


# JIT names from the newest perf-map line covering the address (V8 reuses code space)

NODE_REUSE_JS = os.path.join(WORKLOAD_SRC, "js_reuse.js")
NODE_REUSE_FUNC = "peaktraceAfterReuse"


class PerfMap:
    """/tmp/perf-PID.map's lines ("START SIZE name", hex), in file order."""

    def __init__(self, path):
        self.lines = []
        with open(path, errors="replace") as f:
            for ln in f:
                p = ln.rstrip("\n").split(" ", 2)
                try:
                    start, size = int(p[0], 16), int(p[1], 16)
                except (ValueError, IndexError):
                    continue
                if size and len(p) == 3:
                    self.lines.append((start, start + size, len(self.lines), p[2]))
        self.by_start = sorted(self.lines, key=lambda t: (t[0], t[2]))
        self.starts = [t[0] for t in self.by_start]
        self.longest = max((t[1] - t[0] for t in self.lines), default=0)

    def newest(self, a):
        """perf's rule: the last line in the file covering a."""
        lo = bisect.bisect_left(self.starts, a - self.longest)
        hi = bisect.bisect_right(self.starts, a)
        cov = [t for t in self.by_start[lo:hi] if t[1] > a]
        return max(cov, key=lambda t: t[2]) if cov else None

    def greatest_start(self, a):
        """The rule before: the covering line with the greatest start (the later of equal ones)."""
        lo = bisect.bisect_left(self.starts, a - self.longest)
        hi = bisect.bisect_right(self.starts, a)
        cov = [t for t in self.by_start[lo:hi] if t[1] > a]
        return max(cov, key=lambda t: (t[0], t[2])) if cov else None


def run_newest(ctx, node):
    res = ctx.res
    prefix = "node/jit newest names/launch"
    if not res.wanted(prefix):
        return
    if not node:
        res.skip(prefix, "node not on PATH")
        return
    outdir = os.path.join(ctx.tmp, "node-reuse")
    argv = [node] + NODE_PERF_FLAGS + ["--expose-gc", NODE_REUSE_JS]
    pr = Proc([ctx.pt, "-q", "-o", outdir, "--"] + argv, cwd=ctx.tmp)
    m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b")
    rc = pr.wait(TIMEOUT * 2)
    pr.kill()
    if not m:
        res.fail(prefix, "no 'peaktrace: tracing' line: %s" % short(pr.err))
        return
    path = "/tmp/perf-%s.map" % m.group(1)
    try:
        pm = PerfMap(path)
    except OSError as e:
        res.fail(prefix + ": node wrote its perf map", str(e))
        return
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if not res.eq(prefix + ": peaktrace exit status", rc, 0):
        print("  stderr: " + short(pr.err, 1000))
        return
    res.true(prefix + ": the script ran", "js: done 8" in pr.out, short(pr.out, 200))
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except (OSError, ValueError) as e:
        res.fail(prefix + ": report.json and report.txt", str(e))
        return
    checked, wrong, reused = 0, [], 0
    for fr in rep.get("frame_table", []):
        mod = fr.get("module") or ""
        if mod and not mod.startswith("[anon"):
            continue   # a file's code is named from its ELF symbols
        a = int(fr.get("addr", "0"), 16) - 1    # a return address: the call is before it
        t = pm.newest(a)
        if t is None:
            continue
        checked += 1
        if fr.get("func") != t[3]:
            wrong.append("%s: %r, newest line %r" % (fr.get("addr"), fr.get("func"), t[3]))
        reused += pm.greatest_start(a)[2] != t[2]
    print("INFO %s: %d perf-map lines; %d JIT frames checked, %d of them where the greatest-start "
          "rule names an older line" % (prefix, len(pm.lines), checked, reused), flush=True)
    res.true(prefix + ": JIT frames in report.json's frame table (at least 20)", checked >= 20, "%d" % checked)
    res.true(prefix + ": every JIT frame named by the newest perf-map line covering its call",
             checked and not wrong, "; ".join(wrong[:5]))
    res.true(prefix + ": V8 reused code space under some of them (the greatest-start rule differs)",
             reused > 0, "none of %d" % checked)
    first = txt.split("\nTOP STACKS LIVE AT THE HEAP PEAK")[0]
    who = re.search(r"^WHO HELD IT .*\n  #1 .*\n((?:        .*\n)+)", first, re.M)
    res.true(prefix + ": WHO HELD IT's #1 names %s on the first screen" % NODE_REUSE_FUNC,
             who is not None and re.search(r"^        JS:\S?%s " % NODE_REUSE_FUNC, who.group(1), re.M) is not None,
             who.group(0) if who else first[-800:])

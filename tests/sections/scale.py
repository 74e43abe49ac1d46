# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scale: wl_fanout, exactly 2^17 distinct allocation stacks (a recursion; path p allocates
24 + p % 1000 bytes once and the odd paths are freed at the end), launch mode:

  scale/fanout   every path's stack in alloc.folded and peak.folded with its exact bytes (the
                 path read back from the stack's fan_0/fan_1 frames), live.folded the even paths
                 only; report.json under 20 MB, its kept stacks plus stacks_left_out equal to the
                 workload's own totals in every figure, its frame indexes valid; nothing dropped
                 (no error counter). Speed and the tracer's memory are measured in `make bench`
                 (tools/bench/scale.py), not here.
"""
import json
import os
import re

from harness import expand_report
from tracing import trace_launch

DEPTH = 17
PATHS = 1 << DEPTH
JSON_MAX = 20 * 2**20
FIGS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
        "peak_count", "peak_bytes"]


def size(p):
    return 24 + p % 1000


def fanout_truth():
    """The workload's own figures (wl_fanout.c's header), per figure."""
    alloc = sum(size(p) for p in range(PATHS))
    freed = sum(size(p) for p in range(1, PATHS, 2))
    return {"alloc_count": PATHS, "alloc_bytes": alloc, "free_count": PATHS // 2, "free_bytes": freed,
            "live_count": PATHS // 2, "live_bytes": alloc - freed, "peak_count": PATHS, "peak_bytes": alloc}


def read_folded(path):
    """{path p: bytes} from the fan_0/fan_1 frames of each scn_fan_leaf line; bad: other lines."""
    got, bad, dup = {}, [], 0
    with open(path) as f:
        for line in f:
            stack, _, val = line.rstrip("\n").rpartition(" ")
            fr = stack.split(";")
            if not fr or fr[-1] != "scn_fan_leaf":
                bad.append(line[:200])
                continue
            bits = [x for x in fr if x in ("fan_0", "fan_1")]
            if len(bits) != DEPTH:
                bad.append(line[:200])
                continue
            p = int("".join(b[-1] for b in bits), 2)
            dup += p in got
            got[p] = got.get(p, 0) + int(val)
    return got, bad, dup


def check_folded(res, name, path, want):
    got, bad, dup = read_folded(path)
    base = os.path.basename(path)
    res.eq("%s: %s has one line per path" % (name, base), (len(got), dup), (len(want), 0))
    wrong = [(p, got.get(p), v) for p, v in want.items() if got.get(p) != v]
    res.true("%s: %s every path's exact bytes" % (name, base), not wrong and not bad,
             "%d paths wrong (first %r), %d other lines (first %r)" % (len(wrong), wrong[:3], len(bad), bad[:1]))


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    name = "scale/fanout"
    if not res.wanted(name):
        return
    wl = built.get("wl_fanout", {}).get("nofp")
    if not wl:
        res.fail(name, "wl_fanout was not built")
        return
    out = os.path.join(tmp, "scale-fanout")
    r = trace_launch(pt, wl, [], out, extra=["-q", "--max-stacks", "262144"])
    if r.why:
        res.fail(name, r.why)
        return
    res.eq("%s: exit status" % name, r.rc, 0)
    truth = fanout_truth()
    check_folded(res, name, os.path.join(out, "alloc.folded"), {p: size(p) for p in range(PATHS)})
    check_folded(res, name, os.path.join(out, "peak.folded"), {p: size(p) for p in range(PATHS)})
    check_folded(res, name, os.path.join(out, "live.folded"), {p: size(p) for p in range(0, PATHS, 2)})

    # The text report's lists are cut at --top (10): each says how many stacks it left out.
    try:
        with open(os.path.join(out, "report.txt")) as f:
            txt = f.read()
    except OSError as e:
        txt = ""
        res.fail("%s: report.txt" % name, str(e))
    more = [int(x) for x in re.findall(r"^  \.\.\. (\d+) more stacks holding \S+ \S+ ", txt, re.M)]
    res.eq("%s: report.txt's TOP STACKS say how many stacks they left out (peak, live, alloc)" % name,
           more, [PATHS - 10, PATHS // 2 - 10, PATHS - 10])

    path = os.path.join(out, "report.json")
    jsize = os.path.getsize(path) if os.path.exists(path) else -1
    res.true("%s: report.json under 20 MB" % name, 0 < jsize < JSON_MAX, "%d bytes" % jsize)
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % name, str(e))
        return
    errs = {k: v for k, v in rep.get("errors", {}).items() if v}
    res.eq("%s: no error counter" % name, errs, {})
    res.eq("%s: totals are the workload's" % name,
           {k: rep["totals"].get(k) for k in FIGS[:6]}, {k: truth[k] for k in FIGS[:6]})
    res.eq("%s: peak is the workload's" % name,
           (rep["totals"].get("peak_live_count"), rep["totals"].get("peak_live_bytes")),
           (truth["peak_count"], truth["peak_bytes"]))
    left = rep.get("stacks_left_out")
    if not res.true("%s: report.json has stacks_left_out" % name, isinstance(left, dict), "missing"):
        return
    kept = rep.get("stacks", [])
    res.true("%s: report.json keeps some stacks, not all" % name, 0 < len(kept) < PATHS, "%d kept" % len(kept))
    res.eq("%s: kept + left out stacks == 2^17" % name, len(kept) + left.get("stacks", 0), PATHS)
    res.eq("%s: kept + left out == the workload's figures" % name,
           {k: sum(s.get(k, 0) for s in kept) + left.get(k, 0) for k in FIGS}, truth)
    # The kept stacks are the top ones: the largest blocks (p % 1000 == 999) rank first by peak.
    top = max((s.get("peak_bytes", 0) for s in kept), default=0)
    res.eq("%s: the largest block is kept" % name, top, 24 + 999)
    ntab = len(rep.get("frame_table", []))
    badref = [s for s in kept if not all(isinstance(i, int) and 0 <= i < ntab for i in s.get("frames", []))]
    res.true("%s: frame indexes within frame_table" % name, ntab > 0 and not badref,
             "%d frames, %d stacks with bad indexes" % (ntab, len(badref)))
    expand_report(rep)
    leafs = [s for s in kept if s["frames"] and s["frames"][0].get("func") == "scn_fan_leaf"]
    res.eq("%s: every kept stack is a path's" % name, len(leafs), len(kept))

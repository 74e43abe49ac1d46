# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scale: wl_fanout, exactly 2^17 distinct allocation stacks (a recursion; path p allocates
24 + p % 1000 bytes once and the odd paths are freed at the end), launch mode:

  scale/fanout   every path's stack in alloc.folded and peak.folded with its exact bytes (the
                 path read back from the stack's fan_0/fan_1 frames), live.folded the even paths
                 only; report.json under 20 MB, its kept stacks plus stacks_left_out equal to the
                 workload's own totals in every figure, its frame indexes valid; nothing dropped
                 (no error counter). Speed and the tracer's memory are measured in `make bench`
                 (tools/bench/scale.py), not here.
  scale/cut      the same with --max-stacks 16384, 8x fewer slots than paths: the whole-stack
                 part (14335 slots) fills, then the innermost tier (its 1792 slots; stacks cut to
                 12 frames: 2^11 distinct), then one leaf stack takes the rest. Checked: no
                 allocation lost or under [unknown stack] (alloc.folded's bytes are the workload's),
                 every whole path's exact bytes, every cut stack ends in its marker frame with 11
                 or no fan frames, each innermost-cut stack's bytes exactly the workload's for the
                 paths sharing its 11 innermost bits (those not kept whole or in the leaf stack),
                 and report.json's stack_table and counters say so.
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


CUT_SLOTS = 16384
CUT_INNER = 12           # PT_TIER_INNER_FRAMES: scn_fan_leaf and 11 fan frames
INNER_MARK = "[stack table full: outer frames cut]"
LEAF_MARK = "[stack table full: cut to the leaf]"


def check_cut(res, name, pt, wl, tmp):
    out = os.path.join(tmp, "scale-cut")
    r = trace_launch(pt, wl, [], out, extra=["-q", "--max-stacks", str(CUT_SLOTS)])
    if r.why:
        res.fail(name, r.why)
        return
    res.eq("%s: exit status" % name, r.rc, 0)
    whole, inner, leaf, other = {}, {}, 0, []
    try:
        with open(os.path.join(out, "alloc.folded")) as f:
            lines = f.read().splitlines()
    except OSError as e:
        res.fail("%s: alloc.folded" % name, str(e))
        return
    for line in lines:
        stack, _, val = line.rpartition(" ")
        fr = stack.split(";")
        if fr[-1] != "scn_fan_leaf":
            other.append(line[:200])
            continue
        bits = "".join(x[-1] for x in fr if x in ("fan_0", "fan_1"))
        if fr[0] == INNER_MARK and len(bits) == CUT_INNER - 1:
            inner[int(bits, 2)] = inner.get(int(bits, 2), 0) + int(val)
        elif fr[0] == LEAF_MARK and not bits:
            leaf += int(val)
        elif len(bits) == DEPTH and fr[0] not in (INNER_MARK, LEAF_MARK):
            p = int(bits, 2)
            whole[p] = whole.get(p, 0) + int(val)
        else:
            other.append(line[:200])
    res.eq("%s: every scn_fan_leaf line is a whole path, an innermost cut or the leaf" % name,
           [o for o in other if "scn_fan_leaf" in o][:3], [])
    res.eq("%s: no allocation lost or unknown (alloc.folded's bytes, workload's)" % name,
           sum(whole.values()) + sum(inner.values()) + leaf, sum(size(p) for p in range(PATHS)))
    res.eq("%s: whole paths' exact bytes" % name,
           [p for p, v in whole.items() if v != size(p)][:5], [])
    # A cut stack holds the paths ending in its 11 bits that were not kept whole; the leaf stack
    # took, of those, the ones after the innermost part filled, so check the cut stacks only
    # when the leaf took nothing of their paths: each cut stack's bytes are at most its paths'.
    low = (1 << (CUT_INNER - 1)) - 1
    left = {}
    for p in range(PATHS):
        if p not in whole:
            left[p & low] = left.get(p & low, 0) + size(p)
    res.eq("%s: each innermost cut stack's bytes within its paths' (not kept whole)" % name,
           [b for b, v in inner.items() if v > left.get(b, 0)][:5], [])
    res.eq("%s: the cut stacks and the leaf stack hold every path not kept whole" % name,
           sum(inner.values()) + leaf, sum(left.values()))
    try:
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % name, str(e))
        return
    tab = rep.get("stack_table", {})
    errs = {k: v for k, v in rep.get("errors", {}).items() if v}
    full = CUT_SLOTS // 8 - CUT_SLOTS // 64
    res.eq("%s: the innermost part full (1792 stacks), one leaf stack" % name,
           (tab.get("size"), tab.get("cut_inner"), tab.get("cut_leaf"), leaf > 0),
           (CUT_SLOTS, full, 1, True))
    # The few others there: the workload's exit path (stacks not through fan_*).
    res.true("%s: the innermost part is the fan paths' but a few" % name, full - 16 <= len(inner) <= full,
             "%d of %d" % (len(inner), full))
    res.eq("%s: counters: stack_table_cut only" % name, sorted(errs), ["stack_table_cut"])
    res.true("%s: the stack table's kernel memory stated" % name,
             0 < tab.get("kernel_bytes", 0) <= rep.get("tracer", {}).get("bpf_maps_bytes", 0),
             "%r, %r" % (tab, rep.get("tracer")))


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    name = "scale/fanout"
    if res.wanted("scale/cut"):
        wl = built.get("wl_fanout", {}).get("nofp")
        if wl:
            check_cut(res, "scale/cut", pt, wl, tmp)
        else:
            res.fail("scale/cut", "wl_fanout was not built")
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

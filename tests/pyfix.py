# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/workloads/wl_python.py, the Python workload of the python, exec and pprof sections: its
sites' lines (sites(), from its "# SITE name" comments), each site's expected Python frames and
bytes (expected()), and the check of a run's alloc.folded and report.json against them
(check_outputs). What the python section checks: tests/sections/python.py."""

import json
import os
import re

from harness import WORKLOAD_SRC, expand_report

WL = os.path.join(WORKLOAD_SRC, "wl_python.py")
N = 100000
TRUNC = "[python frames truncated]"


def sites():
    lines = {}
    with open(WL) as f:
        for no, text in enumerate(f, 1):
            m = re.search(r"# SITE (\w+)", text)
            if m:
                lines[m.group(1)] = no
    return lines


def expected(L):
    """name -> (Python frames root first, bytes), the deepest frame last."""
    def f(fn, site):
        return "wl_python:%s:%d" % (fn, L[site])
    top = [f("<module>", "module")]
    rec40 = top + [f("main", "main_rec40")] + [f("recurse", "rec")] * 40 + [f("recurse", "deep")]
    return {
        "alloc_a": (top + [f("main", "main_a"), f("alloc_a", "a")], 3 * (N + 1)),
        "alloc_b": (top + [f("main", "main_b"), f("Holder.alloc_b", "b")], 2 * (2 * N + 1)),
        "nested": (top + [f("main", "main_outer"), f("nested_outer", "outer"),
                          f("nested_inner", "inner")], 3 * N + 1),
        "recurse40": (rec40, 4 * N + 1),
    }


def is_py(frame):
    return frame.startswith("wl_python:") or frame == TRUNC


def check_stack(frames):
    """frames root first: '' if the Python frames sit well among native ones, else why."""
    idx = [i for i, fr in enumerate(frames) if is_py(fr)]
    if not idx:
        return "no Python frames"
    if idx != list(range(idx[0], idx[-1] + 1)):
        return "Python frames not contiguous"
    if idx[0] == 0 or idx[-1] == len(frames) - 1:
        return "Python frames not between native frames"
    if any(fr.startswith("_PyEval_EvalFrameDefault") for fr in frames):
        return "an interpreter frame was left in the stack"
    return ""


def check_outputs(res, name, out, want):
    folded = []
    with open(os.path.join(out, "alloc.folded")) as f:
        for line in f:
            stack, _, val = line.rstrip("\n").rpartition(" ")
            folded.append((stack.split(";"), int(val)))
    with open(os.path.join(out, "report.json")) as f:
        rep = expand_report(json.load(f))
    jstacks = [([fr["func"] for fr in reversed(s["frames"])], s["alloc_bytes"]) for s in rep["stacks"]]
    for site, (pyframes, nbytes) in sorted(want.items()):
        for fmt, stacks in (("folded", folded), ("json", jstacks)):
            got, bad = 0, ""
            for frames, val in stacks:
                if [fr for fr in frames if is_py(fr)] == pyframes:
                    got += val
                    bad = bad or check_stack(frames)
            t = "%s: %s %s" % (name, site, fmt)
            if bad:
                res.fail(t, bad)
            else:
                res.eq(t + " bytes", got, nbytes)
    # The 202-deep recursion: cut, marked at its root end, counted.
    deep = [(fr, v) for fr, v in folded if TRUNC in fr and v == 5 * N + 1]
    res.true("%s: deep recursion marked truncated" % name,
             len(deep) == 1 and [f for f in deep[0][0] if is_py(f)][0] == TRUNC and
             not check_stack(deep[0][0]),
             "no single 5N+1 stack starting with %r: %r" % (TRUNC, [f[:3] for f, _ in deep]))
    res.true("%s: truncation counted" % name, rep["errors"].get("python_too_deep", 0) >= 1,
             "python_too_deep = %r" % rep["errors"].get("python_too_deep"))

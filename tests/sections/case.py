# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""case: tests/cases/*.json under peaktrace, launch and attach, each build flavor.

case/stripped: the first screen past a stripped library. wl_stripped (fp) calls deep_entry() of
libdeep.so (lib_deep.c, stripped by the build section), which allocates STRIPPED_BLOCKS blocks
of STRIPPED_BYTES STRIPPED_FRAMES unnamed frames below it (the figures are read from
wl_stripped.c). WHO HELD IT's #1 (report.txt, before TOP STACKS) holds exactly those bytes and
blocks and reads "... 12 unnamed frames (libdeep.so)", then deep_entry (libdeep.so), then
load_model (wl_stripped_fp); TOP STACKS still has the 12 address frames; report.html's summary
data (holders) has the same lines."""

import json
import os
import re

from casefile import (case_expect, case_flavors, case_modes, check_errors, check_figures, check_first_screen,
                      check_invariants, check_outputs)
from harness import WORKLOAD_SRC, short
from tracing import load_report, trace_attach, trace_launch


def run_section(ctx):
    run_cases(ctx)
    run_stripped(ctx)


def run_cases(ctx):
    res, built, pt, tmp, keep_dirs = ctx.res, ctx.built, ctx.pt, ctx.tmp, ctx.keep_dirs
    for case in ctx.cases:
        wl, args = case["command"][0], case["command"][1:]
        for flavor in case_flavors(case):
            for mode in case_modes(case):
                prefix = "case/%s/%s/%s" % (case["name"], flavor, mode)
                if not res.wanted(prefix):
                    continue
                if wl not in built or flavor not in built[wl]:
                    res.fail(prefix, "workload %s_%s not built" % (wl, flavor))
                    continue
                outdir = os.path.join(tmp, "%s-%s-%s" % (case["name"], flavor, mode))
                trace = trace_launch if mode == "launch" else trace_attach
                r = trace(pt, built[wl][flavor], args, outdir, extra=tuple(case.get("peaktrace_args", ())),
                          stop=case.get("stop"))
                if r.why:
                    res.fail(prefix, r.why)
                    continue
                if not res.eq("%s: peaktrace exit status" % prefix, r.rc, 0):
                    print("  stderr: " + short(r.err, 1000))
                if mode == "attach":
                    res.eq("%s: workload exit status" % prefix, r.wl_rc, 0)
                rep = load_report(res, prefix, outdir)
                if rep is None:
                    continue
                keep_dirs[(case["name"], flavor, mode)] = outdir
                expect = case_expect(case, mode)
                tgt = rep.get("target", {})
                res.eq("%s: target.mode" % prefix, tgt.get("mode"), mode)
                res.eq("%s: target.pid" % prefix, tgt.get("pid"), r.target)
                res.eq("%s: target.exited" % prefix, tgt.get("exited"), True)
                res.eq("%s: target.exit_status" % prefix, tgt.get("exit_status"),
                       expect.get("exit_status", 0))
                res.eq("%s: unwind" % prefix, rep.get("unwind"), expect.get("unwind", "dwarf"))
                check_figures(res, prefix, rep, expect, mode, flavor)
                check_errors(res, prefix, rep, expect, mode)
                check_invariants(res, prefix, rep)
                check_outputs(res, prefix, outdir, r.out)
                check_first_screen(res, prefix, outdir, rep, expect)


def stripped_truth():
    """{"STRIPPED_FRAMES": 12, ...} from wl_stripped.c's header comment."""
    with open(os.path.join(WORKLOAD_SRC, "wl_stripped.c")) as f:
        return {k: int(v) for k, v in re.findall(r"^ \*   (STRIPPED_\w+) (\d+)$", f.read(), re.M)}


def fmt_mib(b):
    """pt_fmt_bytes for whole MiB figures of 10 MiB or more ("24.00 MiB")."""
    return "%.2f MiB" % (b / (1 << 20))


def html_data(path):
    with open(path) as f:
        m = re.search(r'<script type="application/json" id="pt-data">\n(.*?)</script>', f.read(), re.S)
    return json.loads(m.group(1)) if m else None


def run_stripped(ctx):
    res, built = ctx.res, ctx.built
    prefix = "case/stripped/fp/launch"
    if not res.wanted(prefix):
        return
    wl, lib = built.get("wl_stripped", {}).get("fp"), built.get("libdeep.so", {}).get("fp")
    if not wl or not lib:
        res.fail(prefix, "wl_stripped_fp or libdeep.so not built")
        return
    t = stripped_truth()
    if not res.eq(prefix + ": the workload's figures read", sorted(t), ["STRIPPED_BLOCKS", "STRIPPED_BYTES", "STRIPPED_FRAMES"]):
        return
    nfr, nbl, size = t["STRIPPED_FRAMES"], t["STRIPPED_BLOCKS"], t["STRIPPED_BYTES"]
    outdir = os.path.join(ctx.tmp, "stripped-fp-launch")
    r = trace_launch(ctx.pt, wl, [lib], outdir)
    if r.why:
        res.fail(prefix, r.why)
        return
    res.eq(prefix + ": peaktrace exit status", r.rc, 0)
    res.true(prefix + ": the workload ran", "wl: done" in r.out, short(r.out + r.err, 400))
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError as e:
        res.fail(prefix + ": report.txt", str(e))
        return
    first = txt.split("\nTOP STACKS LIVE AT THE HEAP PEAK")[0]
    m = re.search(r"^WHO HELD IT .*\n  #1  (.*)\n((?:        .*\n)+)", first, re.M)
    if not res.true(prefix + ": WHO HELD IT's #1 on the first screen", m is not None, first[-1200:]):
        return
    head, lines = m.group(1), m.group(2).splitlines()
    res.true(prefix + ": #1 holds the workload's %d x %d bytes (%s) in %d blocks" % (nbl, size, fmt_mib(nbl * size), nbl),
             head.startswith(fmt_mib(nbl * size) + " (") and head.endswith(" in %d blocks" % nbl), head)
    want = ["... %d unnamed frames (libdeep.so)" % nfr, r"deep_entry\+0x[0-9a-f]+  \(libdeep\.so\)",
            r"load_model\+0x[0-9a-f]+  \(wl_stripped_fp\)"]
    got = [l.strip() for l in lines[:3]]
    res.true(prefix + ": the stripped run in one line, then the library's named entry and the program's load_model",
             len(got) == 3 and got[0] == want[0] and all(re.match(w, g) for w, g in zip(want[1:], got[1:])),
             "\n".join(lines))
    top = txt.split("\nTOP STACKS LIVE AT THE HEAP PEAK")[1].split("\n  #2")[0] if "\nTOP STACKS LIVE AT THE HEAP PEAK" in txt else ""
    res.eq(prefix + ": TOP STACKS keeps the %d address frames" % nfr, len(re.findall(r"\(libdeep\.so\+0x", top)), nfr)
    d = html_data(os.path.join(outdir, "report.html"))
    if not res.true(prefix + ": report.html's data", d is not None and d.get("holders"), "no holders"):
        return
    h = d["holders"][0]
    labels = [x if isinstance(x, str) else d["frames"][x][0] for x in h[2]]
    res.true(prefix + ": report.html's summary: %d x %d bytes, the same lines" % (nbl, size),
             h[0] == nbl * size and h[1] == nbl and labels[:3] == [want[0], "deep_entry", "load_model"], str(h[:2] + [labels]))

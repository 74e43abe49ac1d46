# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pprof: `go tool pprof` reads a case run's profile.pb.gz (skipped without go).

  -top                  exits 0 and names the workload's functions (also -sample_index=alloc_space);
                        the default sample type is peak_space and its total the case's
                        expected peak_live_bytes, exactly (-unit=B);
  -lines                a C file:line: scn_peak at the line of its malloc in wl_basic.c
                        (DWARF: the workloads are built with -g), 9130000 B flat;
  build id              the workload's mapping carries its ELF NT_GNU_BUILD_ID (readelf -n),
                        read with tests/pprofread.py's protobuf reader;
  python                wl_python.py under /usr/bin/python3.11, launch mode: -lines shows
                        `wl_python:alloc_a .../wl_python.py:LINE` (file and line as fields, not in
                        the name), -top one row per function (no "alloc_a:LINE" names) and
                        `wl_python:<module>` whole."""

import os
import re
import shutil

from harness import TIMEOUT, WORKLOAD_SRC, Proc, run, short
from pprofread import Pprof, mappings
from pyfix import WL, sites

# The case run (name, flavor, mode) whose profile.pb.gz the pprof section reads.
PPROF_SOURCE = ("basic", "fp", "launch")
PYTHON = "/usr/bin/python3.11"


def elf_build_id(path):
    rc, out, _ = run(["readelf", "-n", path], timeout=30)
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if rc == 0 and m else None


def malloc_line(src, func):
    """The line of the first malloc( in func's body in src."""
    with open(src) as f:
        lines = f.readlines()
    start = next(i for i, t in enumerate(lines) if re.search(r"\b%s\(" % func, t) and "void" in t)
    return next(i + 1 for i in range(start, len(lines)) if "malloc(" in lines[i])


def run_section(ctx):
    res, keep_dirs, tmp = ctx.res, ctx.keep_dirs, ctx.tmp
    name = "pprof/go tool pprof -top"
    if not res.wanted(name) and not res.wanted("pprof/python"):
        return
    go = shutil.which("go")
    if not go:
        res.skip(name, "go not on PATH")
        return
    pprof = Pprof(go, tmp)
    if res.wanted("pprof/python"):
        python_lines(ctx, pprof)
    if not res.wanted(name):
        return
    if not res.wanted("case/%s/%s/%s" % PPROF_SOURCE):
        res.skip(name, "case %s filtered out" % "/".join(PPROF_SOURCE))
        return
    outdir = keep_dirs.get(PPROF_SOURCE)
    prof = os.path.join(outdir, "profile.pb.gz") if outdir else None
    if not prof or not os.path.isfile(prof):
        res.fail(name, "no profile.pb.gz from case %s" % "/".join(PPROF_SOURCE))
        return
    for idx in [None, "alloc_space"]:
        argv = ["-sample_index=" + idx] if idx else []
        rc, out, err = pprof(prof, *argv)
        label = "%s%s" % (name, " -sample_index=" + idx if idx else "")
        if res.eq("%s: exit status" % label, rc, 0):
            res.true("%s: mentions a workload function" % label, "scn_" in out,
                     "output: %s" % short(out + err, 600))
        else:
            print("  " + short(err, 800))

    # The default sample type is the at-peak one, with the case's exact peak.
    case = next(c for c in ctx.cases if c["name"] == PPROF_SOURCE[0])
    peak = case["expect"]["peak_live_bytes"]
    rc, out, err = pprof(prof, "-unit=B")
    res.true("pprof/default sample type: peak_space", "\nType: peak_space\n" in out,
             "output: %s" % short(out + err, 400))
    res.true("pprof/default sample type: its total is the case's peak, %d B" % peak,
             " of %dB total" % peak in out,
             "output: %s" % short(out + err, 400))

    # A C file:line from DWARF.
    line = malloc_line(os.path.join(WORKLOAD_SRC, "wl_basic.c"), "scn_peak")
    rc, out, err = pprof(prof, "-lines", "-unit=B", "-sample_index=peak_space")
    res.true("pprof/-lines C: scn_peak at wl_basic.c:%d, 9130000 B flat" % line,
             bool(re.search(r"^\s*9130000B .* scn_peak \S*wl_basic\.c:%d$" % line, out, re.M)),
             "output: %s" % short(out + err, 800))

    # The workload's build id in its mapping.
    exe = (ctx.built.get(case["command"][0]) or {}).get(PPROF_SOURCE[1])
    want = elf_build_id(exe) if exe else None
    got = [b for f, b in mappings(prof) if exe and os.path.basename(f) == os.path.basename(exe)]
    res.true("pprof/build id: the workload's mapping has its ELF build id %s" % want,
             bool(want) and got == [want], "mappings: %r" % mappings(prof))


def python_lines(ctx, pprof):
    res, name = ctx.res, "pprof/python"
    if not os.access(PYTHON, os.X_OK):
        res.skip(name, "no %s" % PYTHON)
        return
    out = os.path.join(ctx.tmp, "pprof-python")
    pr = Proc([ctx.pt, "-q", "-o", out, "--", PYTHON, WL, "--linger"])
    rc = pr.wait(TIMEOUT)
    if not res.eq("%s: peaktrace exit status" % name, rc, 0):
        print("  " + short(pr.err, 600))
        return
    prof = os.path.join(out, "profile.pb.gz")
    L = sites()
    # Every node: the interpreter's own allocations outnumber the workload's.
    rc, lines, err = pprof(prof, "-lines", "-sample_index=alloc_space", "-nodecount=100000")
    res.true("%s: -lines shows wl_python:alloc_a at wl_python.py:%d" % (name, L["a"]),
             bool(re.search(r" wl_python:alloc_a \S*wl_python\.py:%d$" % L["a"], lines, re.M)),
             "output: %s" % short(lines + err, 800))
    rc, top, err = pprof(prof, "-sample_index=alloc_space", "-nodecount=100000")
    # flat flat% sum% cum cum% NAME (names may hold spaces: "<frozen importlib._bootstrap>:...")
    rows = re.findall(r"^\s*\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.+)$", top, re.M)
    res.true("%s: -top has one row for wl_python:alloc_a, no line in names" % name,
             rows.count("wl_python:alloc_a") == 1 and
             not any(re.match(r"wl_python:.*:\d+$", r) for r in rows),
             "rows: %s" % short(" ".join(rows), 800))
    res.true("%s: -top keeps wl_python:<module> whole" % name, "wl_python:<module>" in rows,
             "rows: %s" % short(" ".join(rows), 800))

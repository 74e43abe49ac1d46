#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/run.py -- the `make test` driver (python3, standard library only).

    python3 tests/run.py --build build [--filter REGEX] [--keep] [--print-ref] [-v]
    python3 tests/run.py --list [--filter REGEX]

Runs the sections (tests/sections/*.py, one per area, none importing another; shared code in
tests/harness.py, tests/tracing.py, tests/casefile.py and the fixtures beside them, e.g.
tests/lambdafix.py: tests/README.md "Files") in the order below. What each section checks, how
checks group into test cases and the case file format: tests/README.md.

Output: every failing check and every skip with its reason, one line per test case
("PASS case/basic/fp/launch (41 checks)"), every check with -v; then the number of checks
("checks: N ok, N failing, N skipped") and last exactly one line
"N passed, N failed, N skipped" counting test cases. Exit status 1 if any check failed."""

import argparse
import os
import re
import shutil
import signal
import sys
import tempfile

import casefile
import caselist
from harness import Context, Results, bpf_available, cleanup_procs
from sections import (allocators, arenas, aws_lambda, bounded, browser, build, case, cli, coldstart, container, diff,
                      docs, fault, flood, follow, host, hostile, layout, leaks, light, node, onnx, outdir, pprof, pyobjects,
                      python, rapi, ref, rss, rsskinds, sample, scale, security, supervisor, timeline, unit)
from sections import exec as exec_section
from sections import poison

# Need neither root nor BPF.
SECTIONS = [unit, layout, build, ref]
# Need root, /sys/kernel/btf/vmlinux and BUILD/peaktrace; the names in BPF_SKIPS are counted
# as skipped without them (docs, host and lambda then do not run at all).
BPF_SECTIONS = [case, cli, fault, hostile, diff, pprof, sample, node, arenas, allocators, python, docs, host,
                aws_lambda, security, outdir, timeline, browser, container, leaks, scale, exec_section, rss, light,
                supervisor, follow, pyobjects, coldstart, rsskinds, onnx, flood, poison, bounded, rapi]
BPF_SKIPS = ["cli/*", "fault/*", "hostile/*", "diff/*", "pprof/*", "sample/*", "node/*", "arenas/*", "allocators/*",
             "python/*", "security/*", "outdir/*", "timeline/*", "browser/*", "container/*", "leaks/*", "scale/*", "exec/*",
             "rss/*", "light/*", "supervisor/*", "follow/*", "pyobjects/*", "coldstart/*", "rsskinds/*", "onnx/*",
             "flood/*", "poison/*", "bounded/*", "rapi/*"]


def main():
    ap = argparse.ArgumentParser(description="peaktrace test driver")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--filter", help="only run tests whose name matches this regex")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--print-ref", action="store_true",
                    help="print the reference model's figures for every case (for writing cases)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every check, passing ones too")
    ap.add_argument("--list", action="store_true",
                    help="print the test case names the sources spell (tests/caselist.py) and run nothing")
    args = ap.parse_args()
    if args.list:
        for name in caselist.case_names():
            if not args.filter or re.search(args.filter, name):
                print(name)
        return 0

    build = os.path.abspath(args.build)
    res = Results(args.filter, verbose=args.verbose)
    tmp = tempfile.mkdtemp(prefix="peaktrace-test-")
    os.chmod(tmp, 0o755)   # the not-root tests write below it
    pt = os.path.join(build, "peaktrace")
    # A build folder with only the static binary (make static ARCH=arm64: build-arm64/, which the
    # arm64 VM runs, tools/vm/README.md) is tested with that one.
    if not os.path.exists(pt) and os.path.exists(pt + "-static"):
        pt += "-static"
    ctx = Context(res, build, args.build, pt, tmp, print_ref=args.print_ref)

    def on_signal(sig, frame):
        cleanup_procs()
        sys.exit(130)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        ctx.cases = casefile.load_cases()
        for section in SECTIONS:
            section.run_section(ctx)
            res.flush()
        no_bpf = bpf_available()
        if no_bpf is None and not os.access(ctx.pt, os.X_OK):
            res.fail("cli/peaktrace binary", "%s missing (run make first)" % ctx.pt)
            no_bpf = "no peaktrace binary"
        if no_bpf:
            for c in ctx.cases:
                for flavor in casefile.case_flavors(c):
                    for mode in casefile.case_modes(c):
                        res.skip("case/%s/%s/%s" % (c["name"], flavor, mode), no_bpf)
            for name in BPF_SKIPS:
                res.skip(name, no_bpf)
        else:
            for section in BPF_SECTIONS:
                section.run_section(ctx)
                res.flush()
    finally:
        cleanup_procs()
        res.flush()
        if args.keep or res.any_failed:
            print("outputs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    for line in res.closing_lines():
        print(line)
    return 1 if res.any_failed else 0


if __name__ == "__main__":
    sys.exit(main())

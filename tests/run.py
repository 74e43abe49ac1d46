#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/run.py -- the `make test` driver (python3, standard library only).

    python3 tests/run.py --build build [--filter REGEX] [--keep] [--print-ref]

Runs the sections (tests/sections/*.py, one per area; shared code in tests/harness.py,
tests/tracing.py, tests/casefile.py) in the order below. What each section checks and the
case file format: tests/README.md.

Output: one line per test, "PASS name", "FAIL name: got X want Y" or "SKIP name: why",
and last exactly one line "N passed, N failed, N skipped". Exit status 1 if any failed."""

import argparse
import os
import shutil
import signal
import sys
import tempfile

import casefile
from harness import Context, Results, bpf_available, cleanup_procs
from sections import (allocators, arenas, aws_lambda, build, case, cli, docs, host, node, pprof,
                      python, ref, sample, unit)

# Need neither root nor BPF.
SECTIONS = [unit, build, ref]
# Need root, /sys/kernel/btf/vmlinux and BUILD/peaktrace; the names in BPF_SKIPS are counted
# as skipped without them (docs, host and lambda then do not run at all).
BPF_SECTIONS = [case, cli, pprof, sample, node, arenas, allocators, python, docs, host, aws_lambda]
BPF_SKIPS = ["cli/*", "pprof/*", "sample/*", "node/*", "arenas/*", "allocators/*", "python/*"]


def main():
    ap = argparse.ArgumentParser(description="peaktrace test driver")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--filter", help="only run tests whose name matches this regex")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--print-ref", action="store_true",
                    help="print the reference model's figures for every case (for writing cases)")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    res = Results(args.filter)
    tmp = tempfile.mkdtemp(prefix="peaktrace-test-")
    os.chmod(tmp, 0o755)   # the not-root tests write below it
    ctx = Context(res, build, args.build, os.path.join(build, "peaktrace"), tmp, print_ref=args.print_ref)

    def on_signal(sig, frame):
        cleanup_procs()
        sys.exit(130)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        ctx.cases = casefile.load_cases()
        for section in SECTIONS:
            section.run_section(ctx)
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
    finally:
        cleanup_procs()
        if args.keep or res.failed:
            print("outputs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    print("%d passed, %d failed, %d skipped" % (res.passed, res.failed, res.skipped))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())

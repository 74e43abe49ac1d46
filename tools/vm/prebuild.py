#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/vm/prebuild.py [--cross PREFIX] [BUILD]: the test workloads (the build section of
tests/run.py) built on the host before a VM run, so that the guest's build section finds them up
to date instead of compiling ~60 programs under TCG. With --cross aarch64-linux-gnu- they are
cross-built for the arm64 guest (into build-arm64/: its root is bookworm's, the cross gcc's
glibc; the guest has no compiler). Quiet unless a build fails (exit 1)."""

import argparse
import contextlib
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from harness import Context, Results  # noqa: E402
from sections import build  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cross", default="",
                    help="the cross compiler's prefix, e.g. aarch64-linux-gnu-")
    ap.add_argument("build", nargs="?", default="build")
    args = ap.parse_args()
    arg = args.build
    bdir = os.path.abspath(arg)
    out = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="peaktrace-prebuild-") as tmp, contextlib.redirect_stdout(out):
        res = Results(None)
        ctx = Context(res, bdir, arg, os.path.join(bdir, "peaktrace"), tmp)
        ctx.cross = args.cross
        build.run_section(ctx)
        res.flush()
    if res.any_failed:
        sys.stdout.write(out.getvalue())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

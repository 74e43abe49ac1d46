# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""unit: every BUILD/tests/unit/test_* binary; each "ok - " / "not ok - " line it prints is a
check of the case "unit/test_NAME" (harness.run_tap(), which the layout section uses too)."""

import glob
import os

from harness import ROOT, run_tap


def run_section(ctx):
    # One case per tests/unit/test_*.c: a source whose binary was not built (`make unit`) is a
    # failure, not a test that silently did not run.
    for src in sorted(glob.glob(os.path.join(ROOT, "tests", "unit", "test_*.c"))):
        base = os.path.basename(src)[:-2]
        b = os.path.join(ctx.build, "tests", "unit", base)
        name = "unit/" + base
        if not ctx.res.wanted(name):
            continue
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ctx.res.fail(name, "not built: %s is missing (make unit)" % b)
            continue
        run_tap(ctx.res, name, [b])

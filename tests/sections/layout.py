# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""layout: `python3 tools/check-layout.py` from the repo root (the source tree's layout rules);
its "ok - WHAT" / "not ok - WHAT: DETAIL" lines are checks of the case "layout/check-layout".
Needs neither root nor a build. A missing tool is a failure, not a skip."""

import os
import sys

from harness import ROOT
from sections.unit import run_tap

NAME = "layout/check-layout"
TOOL = os.path.join("tools", "check-layout.py")


def run_section(ctx):
    if not ctx.res.wanted(NAME):
        return
    if not os.path.isfile(os.path.join(ROOT, TOOL)):
        ctx.res.fail(NAME, "%s is missing" % TOOL)
        return
    run_tap(ctx.res, NAME, [sys.executable, TOOL], split_detail=True, require_checks=True)

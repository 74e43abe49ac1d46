# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""unit: every BUILD/tests/unit/test_* binary; each "ok - " / "not ok - " line it prints is a
check of the case "unit/test_NAME"."""

import glob
import os

from harness import ROOT, TIMEOUT, run, short


def run_section(ctx):
    res, build = ctx.res, ctx.build
    bins = sorted(b for b in glob.glob(os.path.join(build, "tests", "unit", "test_*"))
                  if os.path.isfile(b) and os.access(b, os.X_OK))
    for b in bins:
        name = "unit/" + os.path.basename(b)
        if not res.wanted(name):
            continue
        rc, out, err = run([b], timeout=TIMEOUT, cwd=ROOT)
        bad = 0
        for line in out.splitlines():
            if line.startswith("ok - "):
                res.ok("%s: %s" % (name, line[5:]))
            elif line.startswith("not ok - "):
                bad += 1
                res.fail("%s: %s" % (name, line[9:]), "reported by the test")
        if rc is None:
            res.fail(name, "timed out after %ds" % TIMEOUT)
        elif rc < 0:
            res.fail(name, "killed by signal %d %s" % (-rc, short(err)))
        elif rc != 0 and bad == 0:
            res.fail(name, "exit status %d without a 'not ok' line %s" % (rc, short(err)))

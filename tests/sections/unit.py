# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""unit: every BUILD/tests/unit/test_* binary; each "ok - " / "not ok - " line it prints is a
check of the case "unit/test_NAME". run_tap() is shared with the layout section."""

import glob
import os

from harness import ROOT, TIMEOUT, run, short


def run_tap(res, name, argv, split_detail=False, require_checks=False, timeout=TIMEOUT):
    """Runs argv from the repo root and counts its TAP-like lines as checks of case `name`:
    "ok - WHAT" passes "NAME: WHAT", "not ok - WHAT" fails it ("not ok - WHAT: DETAIL" fails
    "NAME: WHAT" with DETAIL as the reason if split_detail). A program that times out, is
    killed, or exits non-zero without a "not ok" line is one more failure (so is one that
    ran no check at all, if require_checks)."""
    rc, out, err = run(argv, timeout=timeout, cwd=ROOT)
    bad = seen = 0
    for line in out.splitlines():
        if line.startswith("ok - "):
            seen += 1
            res.ok("%s: %s" % (name, line[5:]))
        elif line.startswith("not ok - "):
            seen += 1
            bad += 1
            what, sep, detail = line[9:].partition(": ") if split_detail else (line[9:], "", "")
            res.fail("%s: %s" % (name, what), detail if sep else "reported by the test")
    if rc is None:
        res.fail(name, "timed out after %ds" % timeout)
    elif rc < 0:
        res.fail(name, "killed by signal %d %s" % (-rc, short(err)))
    elif rc != 0 and bad == 0:
        res.fail(name, "exit status %d without a 'not ok' line %s" % (rc, short(err)))
    elif require_checks and seen == 0:
        res.fail(name, "printed no 'ok - ' or 'not ok - ' line (exit %d) %s" % (rc, short(out + err)))


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

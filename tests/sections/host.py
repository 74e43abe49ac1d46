# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""host: the Lambda-like host's own tests (tests/host/test_host.py), counted line by line."""

import os
import re
import sys

from harness import ROOT, run, short


def run_section(ctx):
    """The Lambda-like host's own tests (tests/host/test_host.py), counted here line by line."""
    res, build = ctx.res, ctx.build_arg
    # Its test names are only known once it ran: with a filter, it runs when the filter names it.
    if res.filter is not None and not (res.filter.search("host/") or "host" in res.filter.pattern):
        return
    rc, out, err = run([sys.executable, os.path.join(ROOT, "tests", "host", "test_host.py"),
                        "--build", build], timeout=600)
    seen = 0
    for line in out.splitlines():
        m = re.match(r"^(PASS|FAIL|SKIP) (\S+)(.*)$", line)
        if not m:
            continue
        seen += 1
        name = "host/" + m.group(2).rstrip(":")   # "SKIP NAME: why" names NAME, as "PASS NAME (1.2 s)"
        if m.group(1) == "PASS":
            res.ok(name)
        elif m.group(1) == "SKIP":
            res.skip(name, m.group(3).strip(": "))
        else:
            res.fail(name, m.group(3).strip(": "))
    if rc != 0 and not any(l.startswith("FAIL ") for l in out.splitlines()):
        res.fail("host/test_host.py", "exit %r: %s" % (rc, short(err, 500)))
    elif seen == 0:
        res.fail("host/test_host.py", "no test ran: %s" % short(out + err, 500))

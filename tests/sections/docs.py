# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""docs: the README's help block is `peaktrace --help` verbatim."""

import os
import re

from harness import ROOT, run


def run_section(ctx):
    """The README shows `peaktrace --help` verbatim between its help markers (make readme-help)."""
    res, pt = ctx.res, ctx.pt
    name = "docs/README help block matches peaktrace --help"
    if not res.wanted(name):
        return
    rc, out, err = run([pt, "--help"])
    try:
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
    except OSError as e:
        res.fail(name, str(e))
        return
    m = re.search(r"<!-- help:begin -->\n```\n(.*?)\n```\n<!-- help:end -->", readme, re.S)
    if not m:
        res.fail(name, "no help block in README.md")
        return
    if m.group(1).rstrip() == out.rstrip():
        res.ok(name)
    else:
        res.fail(name, "README.md is stale: run `make readme-help`")

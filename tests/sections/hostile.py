# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""hostile: a target that names its code with terminal escapes, and lost data.

  hostile/names-launch, hostile/names-attach: wl_hostile's allocating function is named
      "evil" ESC "[31mRED" BEL ESC "[2J" (its comm has an ESC too); no raw control byte
      (ESC, BEL) in peaktrace's stdout, stderr, report.txt, report.json, report.html or the
      folded files, and the name is there escaped ("evil\\x1b[31mRED\\x07\\x1b[2J"). Its
      caller is named "</script><svg onload=alert(1)>&amp;": report.html holds no "</script"
      but its own two and no "<svg", and its embedded JSON has that name as a frame.
  hostile/max-live: --max-live 1000 with 100,000 blocks live at once (launch mode): the
      HEAP section carries a caveat naming live_table_full beside its figures, report.json
      a "caveats" entry for it, and unknown_free is not explained as "before tracing".
"""

import glob
import json
import os
import re

from harness import expand_report
from tracing import trace_attach, trace_launch

ESCAPED = "evil\\x1b[31mRED\\x07\\x1b[2J"
RAW = (b"\x1b", b"\x07")


def check_no_raw(res, name, r):
    outs = {"stdout": r.out.encode(), "stderr": r.err.encode()}
    for path in [os.path.join(r.outdir, "report.txt"), os.path.join(r.outdir, "report.json"),
                 os.path.join(r.outdir, "report.html")] + \
            sorted(glob.glob(os.path.join(r.outdir, "*.folded"))):
        try:
            with open(path, "rb") as f:
                outs[os.path.basename(path)] = f.read()
        except OSError as e:
            res.fail("%s: %s readable" % (name, path), str(e))
    for what, data in sorted(outs.items()):
        res.true("%s: no raw ESC/BEL in %s" % (name, what), not any(b in data for b in RAW),
                 "raw control byte at %s" % [data.find(b) for b in RAW])
    res.true("%s: the name, escaped, in report.txt" % name,
             ESCAPED.encode() in outs.get("report.txt", b""), "not found")
    res.true("%s: the name, escaped, in stdout" % name, ESCAPED.encode() in outs["stdout"], "not found")
    check_html(res, name, outs.get("report.html", b""))


MARKUP = "</script><svg onload=alert(1)>&amp;"


def check_html(res, name, page):
    low = page.lower()
    res.eq("%s: report.html: no </script but its own two" % name, low.count(b"</script"), 2)
    res.true("%s: report.html: no <svg from the data" % name, b"<svg" not in low, "found")
    m = re.search(rb'<script type="application/json" id="pt-data">\n(.*?)</script>', page, re.S)
    try:
        data = json.loads(m.group(1)) if m else {}
    except ValueError as e:
        res.fail("%s: report.html: its data is JSON" % name, str(e))
        return
    labels = [f[0] for f in data.get("frames", [])]
    res.true("%s: report.html: the markup-named caller is a frame, as text" % name, MARKUP in labels,
             [l for l in labels if "script" in l or "evil" in l][:5])


def heap_section(text):
    m = re.search(r"^HEAP .*?(?=^\S)", text, re.M | re.S)
    return m.group(0) if m else ""


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    wl = built.get("wl_hostile", {}).get("fp")
    if not wl:
        res.fail("hostile/build", "wl_hostile was not built")
        return

    name = "hostile/names-launch"
    if res.wanted(name):
        r = trace_launch(pt, wl, [], os.path.join(tmp, "hostile-launch"))
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            check_no_raw(res, name, r)

    name = "hostile/names-attach"
    if res.wanted(name):
        r = trace_attach(pt, wl, [], os.path.join(tmp, "hostile-attach"))
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            check_no_raw(res, name, r)
            res.true("%s: comm escaped in stderr" % name, "wl\\x1b[2Jhostile" in r.err, r.err[:300])

    name = "hostile/max-live"
    if res.wanted(name):
        r = trace_launch(pt, wl, [], os.path.join(tmp, "hostile-maxlive"), extra=["--max-live", "1000"])
        if r.why:
            res.fail(name, r.why)
            return
        res.eq("%s: exit status" % name, r.rc, 0)
        heap = heap_section(r.out)
        res.true("%s: HEAP section found" % name, "peak live heap" in heap, r.out[:500])
        res.true("%s: HEAP carries a caveat naming live_table_full" % name,
                 re.search(r"^  caveat: live_table_full \d+: .*live table was full", heap, re.M) is not None,
                 heap)
        res.true("%s: unknown_free not explained as 'before tracing' (launch mode)" % name,
                 not re.search(r"unknown_free.*before tracing", r.out), 
                 [l for l in r.out.splitlines() if "unknown_free" in l])
        try:
            with open(os.path.join(r.outdir, "report.json")) as f:
                rep = expand_report(json.load(f))
        except (OSError, ValueError) as e:
            res.fail("%s: report.json" % name, str(e))
            return
        cav = {c.get("counter"): c for c in rep.get("caveats", [])}
        res.true("%s: JSON caveats has live_table_full affecting heap" % name,
                 "heap" in cav.get("live_table_full", {}).get("affects", []), rep.get("caveats"))
        res.eq("%s: JSON caveat count is the counter" % name,
               cav.get("live_table_full", {}).get("count"), rep["errors"]["live_table_full"])
        res.eq("%s: allocations exact" % name, rep["totals"]["alloc_count"], 100000)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""browser: DIR/report.html opened from file:// in Debian's chromium, driven by npm's playwright-core
(tests/browser/; `npm ci` there installs it, never a downloaded browser).

  browser/lambda: the bundled Python function (tools/functions/python) under tools/lambda-host,
      five invocations ({"mb": 4, 48, 8, 16, 8}; the second one peaks near 2 x 48 MiB), peaktrace
      attached without --per-invocation. In the page: no console or page error, no request that is
      not file: or data:, every request id the host's REPORT lines name is a row, sorting by RSS
      peak puts the 48 MiB one first, its row shows a flame graph with the handler's Python
      functions (render, handler: the workload's own code), searching "render" highlights frames
      and prints a matched share above half of its peak (render's list and join hold 2 x 48 MiB
      of its ~98 MiB), clicking the handler's frame zooms it to full width, the Python-only toggle leaves no native frame but the allocating one per
      stack, and the diff of the 4 MiB and 48 MiB invocations renders with render's stack grown.
      Screenshots: browser-lambda/report.png, report-diff.png.
  browser/chart: the page test_html (tests/unit) writes from a hand-made timeline.jsonl: three
      invocation bands, the RSS, heap and Lambda lines, the Lambda line ending at the RSS maximum.

Without /usr/bin/chromium, node or tests/browser/node_modules/playwright-core the section is
counted as skipped with the reason."""

import json
import os
import shutil
import signal
import time

from harness import ROOT, TIMEOUT, free_ports, run
from lambdafix import host_attached, need_host, report_ids, tool

BROWSER_DIR = os.path.join(ROOT, "tests", "browser")
MiB = 1 << 20


def missing_tools():
    if not os.access("/usr/bin/chromium", os.X_OK):
        return "no /usr/bin/chromium (apt-get install chromium)"
    if not shutil.which("node"):
        return "no node (apt-get install nodejs)"
    if not os.path.isdir(os.path.join(BROWSER_DIR, "node_modules", "playwright-core")):
        return "no playwright-core (cd tests/browser && npm ci)"
    return None


def drive(res, name, page, png, spec, tmp):
    spec_path = os.path.join(tmp, os.path.basename(png) + ".spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    rc, out, err = run(["node", os.path.join(BROWSER_DIR, "check-report.js"), page, png, spec_path],
                       timeout=max(TIMEOUT, 120), cwd=BROWSER_DIR)
    try:
        o = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res.fail(name + ": the browser driver ran", "rc %s: %s %s" % (rc, out[-300:], err[-500:]))
        return None
    if "fatal" in o:
        res.fail(name + ": the browser driver ran", o["fatal"][:800])
        return None
    res.eq(name + ": no console errors", o["console_errors"], [])
    res.eq(name + ": no page errors", o["page_errors"], [])
    res.eq(name + ": no network request (anything not file: or data:)", o["requests"], [])
    res.true(name + ": screenshot written", os.path.getsize(png) > 10000 if os.path.exists(png) else False, png)
    return o


def run_lambda(ctx, tmp):
    res, build = ctx.res, ctx.build_arg
    name = "browser/lambda"
    fdir = os.path.join(ROOT, "tools", "functions", "python")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    invoke = tool(build, "invoke")
    if not need_host(res, name, build):
        return
    port = free_ports(2)
    got = host_attached(res, name, build, tmp, ctx.pt, "browser", 256, port, [py, os.path.join(fdir, "bootstrap.py")],
                        ("--handler", "function.handler", "--task-root", fdir))
    if not got:
        return
    h, _, p, outdir = got
    sizes = [4, 48, 8, 16, 8]
    for mb in sizes:
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=TIMEOUT)
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(TIMEOUT), 0)
    ids = report_ids(h.out + h.err)
    h.signal(signal.SIGTERM)
    h.wait(TIMEOUT)
    if len(ids) != len(sizes):
        res.fail(name + ": the host printed one REPORT per invoke", "%d REPORT lines" % len(ids))
        return
    page = os.path.join(outdir, "report.html")
    if not os.path.exists(page):
        res.fail(name + ": report.html written", "missing")
        return
    with open(page, "rb") as f:
        html = f.read()
    # The SVG namespace is a name, not a request.
    html = html.replace(b"http://www.w3.org/2000/svg", b"")
    res.true(name + ": report.html is self-contained (no http:, https:, //host or @import in it)",
             not any(s in html for s in (b"http://", b"https://", b"src=\"//", b"@import")), "found")
    with open(os.path.join(outdir, "invocations.jsonl")) as f:
        jsonl_ids = [json.loads(l).get("request_id") for l in f if l.strip()]
    big = ids[1]
    o = drive(res, name, page, os.path.join(outdir, "report.png"),
              {"mode": "lambda", "big_id": big, "diff_ids": [ids[0], ids[1]], "search": "render"}, tmp)
    if o is None:
        return
    res.true(name + ": every invocation of invocations.jsonl is a row (by request id)",
             all(i in o["table_ids"] for i in jsonl_ids if i), "rows %s, jsonl %s" % (o["table_ids"], jsonl_ids))
    res.true(name + ": every request id the host reported is a row", all(i in o["table_ids"] for i in ids),
             "rows %s, host %s" % (o["table_ids"], ids))
    res.eq(name + ": sorted by RSS peak, the 48 MiB invocation comes first", o["sorted_first"], big)
    res.true(name + ": the summary names the 48 MiB invocation as the biggest", big in o["summary"], o["summary"][:400])
    res.true(name + ": its row shows its own flame graph", big in o["flame_title"], o["flame_title"])
    labels = " ".join(o["inv_frames"])
    for fn in ("render", "handler"):
        res.true("%s: its flame graph holds the handler's Python function %s" % (name, fn),
                 any(fn in l for l in o["inv_frames"]), labels[:600])
    res.true(name + ": searching highlights frames", o["search_hits"] > 0, o["search_status"])
    # render() holds the 48 x 16 chunks of 64 KiB and their join (2 x 48 MiB) at the peak.
    res.true(name + ": the search's matched share is at least the 2 x 48 MiB render() holds",
             o["search_matched"] >= 2 * 48 * MiB * 0.95, o["search_status"])
    res.true(name + ": clicking the handler's frame zooms to it (full width)",
             "zoomed to function:handler" in o["zoom_status"] and o["zoom_width"] > 0.98,
             "%s; width %.3f" % (o["zoom_status"], o["zoom_width"]))
    kinds = o["py_kinds"]
    native = [l for l in o["py_frames"] if l != "all" and not any(k in ("Python", "JS/JIT") for k in kinds.get(l, []))]
    res.true(name + ": the Python-only toggle keeps the Python frames", any("render" in l for l in o["py_frames"]),
             " ".join(o["py_frames"])[:400])
    res.true(name + ": the Python-only toggle removes native frames (fewer frames drawn)",
             len(o["py_frames"]) < len(o["inv_frames"]) and len(set(native)) <= len(set(o["py_frames"])),
             "%d -> %d frames, native left %s" % (len(o["inv_frames"]), len(o["py_frames"]), sorted(set(native))[:10]))
    res.true(name + ": the Python-only view keeps no interpreter-internal native frame",
             not any(l.startswith("_PyEval") or l.startswith("PyObject_Call") for l in o["py_frames"]),
             sorted(set(native))[:10])
    res.true(name + ": the diff renders", o["diff_bars"] > 3 and ids[1] in o["diff_note"], o["diff_note"][:300])
    res.true(name + ": the diff shows grown stacks in red (4 MiB -> 48 MiB)",
             any(c == "grew" for c, _ in o["diff_rows"]) and any("240," in c and c.startswith("rgb(240") for c in o["diff_colours"]),
             str(o["diff_rows"][:5]))


def run_chart(ctx, tmp):
    res = ctx.res
    name = "browser/chart"
    unit = os.path.join(ctx.build, "tests", "unit", "test_html")
    if not os.access(unit, os.X_OK):
        res.fail(name, "%s not built (make unit)" % unit)
        return
    d = os.path.join(tmp, "browser-chart")
    os.makedirs(d, exist_ok=True)
    rc, out, err = run([unit], timeout=TIMEOUT, env=dict(os.environ, PT_HTML_TEST_DIR=d))
    page = os.path.join(d, "report.html")
    if not os.path.exists(page):
        res.fail(name + ": test_html wrote a page", "rc %s: %s" % (rc, (out + err)[-300:]))
        return
    o = drive(res, name, page, os.path.join(d, "chart.png"), {"mode": "chart"}, tmp)
    if o is None:
        return
    # The hand-made file (tests/unit/test_html.c): three invocations, RSS up to 300 MiB.
    res.eq(name + ": one band per invocation of timeline.jsonl", o["chart_bands"], 3)
    res.eq(name + ": the heap, RSS and Lambda lines", sorted(o["chart_paths"]), ["l-heap", "l-hwm", "l-rss"])
    res.true(name + ": the Lambda line ends at the highest RSS", abs(o["hwm_last_y"] - o["rss_min_y"]) < 0.2,
             "%s vs %s" % (o["hwm_last_y"], o["rss_min_y"]))
    res.true(name + ": the page says what the sampler lost", "dropped 2, missed ticks 1" in o["chart_note"], o["chart_note"])


def run_section(ctx):
    if not (ctx.res.wanted("browser/chart") or ctx.res.wanted("browser/lambda")):
        return   # a --filter that names no browser case: no skip to count either
    why = missing_tools()
    if why:
        ctx.res.skip("browser/*", why)
        return
    tmp = ctx.tmp
    if ctx.res.wanted("browser/chart"):
        run_chart(ctx, tmp)
    if ctx.res.wanted("browser/lambda"):
        run_lambda(ctx, tmp)

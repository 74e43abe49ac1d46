# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""diff: `peaktrace diff` over real runs and hand-made directories.

  diff/runs: wl_diff traced twice (launch mode), without and with "extra" (one more site,
      scn_diff_extra, 123,456 bytes live at the peak; tests/workloads/wl_diff.c).
  diff/report: `peaktrace diff A B`: the peak live heap's change is exactly +123456 bytes (and
      report.json's figures), at the peak exactly one stack grew, scn_diff_extra's, by +123456
      bytes and nothing shrank; nothing changed live at the end; in total allocated only
      scn_diff_extra grew; diff.peak.folded is that one line; diff.txt is stdout.
  diff/svg: diff.peak.svg is well-formed XML, scn_diff_extra's frame red, scn_diff_base's grey.
  diff/max-growth: --max-growth 100000 exits 9 with one "peaktrace: " line naming the growth and
      scn_diff_extra; 200000 (and 120.56K's neighbour 121K) exits 0.
  diff/self: A against A: no change anywhere, an empty diff.peak.folded.
  diff/invocations: hand-made report.json files (other request ids, seqs in another order):
      peaks matched by seq, with the exact changes.
  diff/bad input: a missing directory, a file, an empty directory, invalid JSON, JSON not
      written by peaktrace, a broken folded file, one directory only: exit 2, one stderr line.
"""

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET

from harness import expand_report, run, short
from tracing import trace_launch

EXTRA = 123456
SITE = "scn_diff_extra"
CASES = ["diff/runs", "diff/report", "diff/svg", "diff/max-growth", "diff/self", "diff/invocations",
         "diff/bad input"]


def one_error_line(res, name, err):
    lines = [l for l in err.splitlines() if l.strip()]
    res.true("%s: exactly one stderr line starting 'peaktrace: '" % name,
             len(lines) == 1 and lines[0].startswith("peaktrace: "), "stderr was %r" % short(err, 500))


def block(text, title):
    """The lines of the report section whose heading starts with title."""
    m = re.search(r"^%s.*?(?=\n\n|\Z)" % re.escape(title), text, re.M | re.S)
    return m.group(0) if m else ""


def stack_lines(blk):
    """(delta, a, b, short stack) of each listed stack line."""
    return [(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)) for m in
            re.finditer(r"^    ([+-]?\d+) bytes.*?\((\d+) -> (\d+)\)  (.*)$", blk, re.M)]


def counts(blk):
    m = re.search(r": (\d+) stacks? grew, (\d+) shrank, (\d+) unchanged \(of (\d+)\)", blk)
    return tuple(int(x) for x in m.groups()) if m else None


def total_delta(text, what):
    m = re.search(r"^  %s\s+(\d+)\s+(\d+)\s+([+-]?\d+) bytes" % re.escape(what), text, re.M)
    return tuple(int(x) for x in m.groups()) if m else None


def rgb(fill):
    m = re.match(r"rgb\((\d+),(\d+),(\d+)\)", fill or "")
    return tuple(int(x) for x in m.groups()) if m else None


def check_report(res, name, out, ra, rb, outdir):
    pa, pb = ra["totals"]["peak_live_bytes"], rb["totals"]["peak_live_bytes"]
    res.eq("%s: the runs' peaks differ by the extra block" % name, pb - pa, EXTRA)
    res.eq("%s: peak live heap line (A, B, change)" % name, total_delta(out, "peak live heap"),
           (pa, pb, EXTRA))
    res.eq("%s: live at end unchanged" % name, total_delta(out, "live at end"),
           (ra["totals"]["live_bytes"], rb["totals"]["live_bytes"], 0))
    res.eq("%s: allocated in total" % name, total_delta(out, "allocated"),
           (ra["totals"]["alloc_bytes"], rb["totals"]["alloc_bytes"], EXTRA))
    peak = block(out, "AT PEAK")
    c = counts(peak)
    res.true("%s: at peak, one stack grew, none shrank" % name, c and c[:2] == (1, 0), "got %r" % (c,))
    lines = stack_lines(peak)
    res.true("%s: at peak, the grown stack is %s by +%d bytes (0 -> %d)" % (name, SITE, EXTRA, EXTRA),
             len(lines) == 1 and lines[0][:3] == (EXTRA, 0, EXTRA) and lines[0][3].startswith(SITE + " < main"),
             "got %r" % lines)
    live = block(out, "LIVE AT END")
    res.true("%s: live at end, no stack changed" % name, counts(live) and counts(live)[:2] == (0, 0),
             "got %r" % (counts(live),))
    alloc = stack_lines(block(out, "ALLOCATED"))
    res.true("%s: allocated, only %s grew, by +%d" % (name, SITE, EXTRA),
             len(alloc) == 1 and alloc[0][0] == EXTRA and alloc[0][3].startswith(SITE), "got %r" % alloc)
    try:
        with open(os.path.join(outdir, "diff.peak.folded")) as f:
            folded = f.read().splitlines()
        with open(os.path.join(outdir, "diff.txt")) as f:
            txt = f.read()
    except OSError as e:
        res.fail("%s: output files" % name, str(e))
        return
    res.true("%s: diff.peak.folded is the one changed stack, +%d" % (name, EXTRA),
             len(folded) == 1 and folded[0].endswith(";main;%s %d" % (SITE, EXTRA)), "got %r" % folded)
    res.eq("%s: diff.txt is the report on stdout" % name, txt, out)


def check_svg(res, name, path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        res.fail("%s: diff.peak.svg is well-formed XML" % name, str(e))
        return
    res.ok("%s: diff.peak.svg is well-formed XML" % name)
    fills = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        t, r = g.find("{http://www.w3.org/2000/svg}title"), g.find("{http://www.w3.org/2000/svg}rect")
        if t is not None and r is not None:
            fills[t.text.split(" (")[0]] = (rgb(r.get("fill")), t.text)
    c = fills.get(SITE, (None, ""))[0]
    res.true("%s: %s's frame is red" % (name, SITE), c and c[0] >= 200 and c[1] < 100 and c[2] < 100,
             "fill %r" % (c,))
    res.true("%s: its tooltip says +%d bytes since A" % (name, EXTRA),
             ("+%d bytes since A" % EXTRA) in fills.get(SITE, (None, ""))[1], "got %r" % (fills.get(SITE),))
    c = fills.get("scn_diff_base", (None, ""))[0]
    res.true("%s: scn_diff_base's frame (unchanged) is grey" % name, c and c[0] == c[1] == c[2],
             "fill %r" % (c,))


def fake_run(src, dst, invocations, peak):
    """A copy of run src's folded files with a hand-made report.json."""
    os.makedirs(dst, exist_ok=True)
    for f in ("peak.folded", "live.folded", "alloc.folded"):
        shutil.copy(os.path.join(src, f), dst)
    rep = {"version": 1, "tool": "peaktrace 0.1.0",
           "totals": {"peak_live_bytes": peak, "live_bytes": 0, "alloc_bytes": peak},
           "rss": {"peak_bytes": 4096, "vmhwm_bytes": 4096}, "invocations": invocations}
    with open(os.path.join(dst, "report.json"), "w") as f:
        json.dump(rep, f)


def inv(seq, rid, heap, rss, phase="invocation"):
    return {"seq": seq, "phase": phase, "request_id": rid, "heap_peak_bytes": heap, "rss_peak_bytes": rss}


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    wl = built.get("wl_diff", {}).get("fp")
    if not any(res.wanted(n) for n in CASES):
        return
    if not wl:
        res.fail("diff/runs", "wl_diff was not built")
        return
    da, db = os.path.join(tmp, "diff-a"), os.path.join(tmp, "diff-b")
    reps = []
    for d, args in ((da, []), (db, ["extra"])):
        r = trace_launch(pt, wl, args, d, extra=["-q"])
        if r.why or r.rc != 0:
            res.fail("diff/runs", r.why or "peaktrace exit %s: %s" % (r.rc, short(r.err)))
            return
        with open(os.path.join(d, "report.json")) as f:
            reps.append(expand_report(json.load(f)))
    res.ok("diff/runs: two runs of wl_diff")

    name = "diff/report"
    out_ab = os.path.join(tmp, "diff-out-ab")
    rc, out, err = run([pt, "diff", "-o", out_ab, da, db])
    if res.eq("%s: exit status" % name, rc, 0):
        check_report(res, name, out, reps[0], reps[1], out_ab)
        check_svg(res, "diff/svg", os.path.join(out_ab, "diff.peak.svg"))

    name = "diff/max-growth"
    for limit, want in (("100000", 9), ("120K", 9), ("121K", 0), ("200000", 0)):
        rc, out, err = run([pt, "diff", "-q", "--max-growth", limit, "-o", out_ab, da, db])
        res.eq("%s: --max-growth %s: exit status" % (name, limit), rc, want)
        if want == 9:
            one_error_line(res, "%s: --max-growth %s" % (name, limit), err)
            res.true("%s: --max-growth %s: the line names +%d bytes and %s" % (name, limit, EXTRA, SITE),
                     ("+%d bytes" % EXTRA) in err and SITE in err, "stderr %r" % short(err))
        else:
            res.eq("%s: --max-growth %s: stderr" % (name, limit), err, "")
    rc, out, err = run([pt, "diff", "-q", "--max-growth", "0", "-o", out_ab, db, da])
    res.eq("%s: a shrink passes --max-growth 0" % name, rc, 0)

    name = "diff/self"
    out_aa = os.path.join(tmp, "diff-out-aa")
    rc, out, err = run([pt, "diff", "--max-growth", "0", "-o", out_aa, da, da])
    if res.eq("%s: exit status" % name, rc, 0):
        pa = reps[0]["totals"]["peak_live_bytes"]
        res.eq("%s: peak live heap unchanged" % name, total_delta(out, "peak live heap"), (pa, pa, 0))
        for title in ("AT PEAK", "LIVE AT END", "ALLOCATED"):
            c = counts(block(out, title))
            res.true("%s: %s: no stack changed" % (name, title), c and c[:2] == (0, 0) and c[2] == c[3],
                     "got %r" % (c,))
        with open(os.path.join(out_aa, "diff.peak.folded")) as f:
            res.eq("%s: diff.peak.folded is empty" % name, f.read(), "")

    name = "diff/invocations"
    fa, fb = os.path.join(tmp, "diff-inv-a"), os.path.join(tmp, "diff-inv-b")
    fake_run(da, fa, [inv(0, None, 100, 1000, "init"), inv(1, "aaaa-1", 5000, 70000),
                      inv(2, "aaaa-2", 6000, 80000)], 6000)
    fake_run(da, fb, [inv(2, "bbbb-2", 6500, 79000), inv(0, None, 100, 1000, "init"),
                      inv(1, "bbbb-1", 5000, 71000), inv(3, "bbbb-3", 9000, 90000)], 9000)
    rc, out, err = run([pt, "diff", "-o", os.path.join(tmp, "diff-inv-out"), fa, fb])
    if res.eq("%s: exit status" % name, rc, 0):
        blk = block(out, "INVOCATIONS")
        for seq, heap, rss in ((0, (100, 100, 0), (1000, 1000, 0)), (1, (5000, 5000, 0), (70000, 71000, 1000)),
                               (2, (6000, 6500, 500), (80000, 79000, -1000))):
            m = re.search(r"^ seq %d .*\n(.*)\n(.*)" % seq, blk, re.M)
            res.true("%s: seq %d: heap peak %r, RSS peak %r" % (name, seq, heap, rss),
                     m and total_delta(m.group(1) + "\n", "heap peak") == heap and
                     total_delta(m.group(2) + "\n", "RSS peak") == rss, "block %r" % short(blk, 600))
        res.true("%s: seq 3, only in B" % name,
                 re.search(r"^ seq 3 invocation\n  heap peak\s+-\s+9000\s+-$", blk, re.M), "block %r" % short(blk, 600))

    name = "diff/bad input"
    bad = os.path.join(tmp, "diff-bad")
    os.makedirs(os.path.join(bad, "empty"), exist_ok=True)
    for sub, content in (("badjson", "{\"tool\": \"peaktrace 0.1.0\", "), ("notours", "{\"tool\": \"other\", \"version\": 1}"),
                         ("badfolded", None)):
        d = os.path.join(bad, sub)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(da, d)
        if content is not None:
            with open(os.path.join(d, "report.json"), "w") as f:
                f.write(content)
        else:
            with open(os.path.join(d, "live.folded"), "wb") as f:
                f.write(b"main;f 12\n\x00\xff binary\n")
    cases = [("missing directory", [os.path.join(bad, "nope"), da]),
             ("a file", [da, os.path.join(da, "report.json")]),
             ("empty directory", [da, os.path.join(bad, "empty")]),
             ("invalid JSON", [os.path.join(bad, "badjson"), da]),
             ("not peaktrace's JSON", [da, os.path.join(bad, "notours")]),
             ("broken folded file", [da, os.path.join(bad, "badfolded")]),
             ("one directory", [da]),
             ("bad --max-growth", ["--max-growth", "lots", da, db])]
    for what, argv in cases:
        rc, out, err = run([pt, "diff", "-o", os.path.join(bad, "out")] + argv)
        res.eq("%s: %s: exit status" % (name, what), rc, 2)
        one_error_line(res, "%s: %s" % (name, what), err)

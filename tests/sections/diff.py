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
  diff/symlink: B's peak.folded a symbolic link to a root-only (0600, in a 0700 directory) file
      whose one line is a secret stack: exit 2, one line saying the link is not followed, and
      the secret nowhere (stdout, stderr, any file under OUTDIR). (Before: exit 0, the secret
      line copied into diff.peak.folded.)
  diff/max-input: --max-input 1K against the two runs: exit 2, one line naming --max-input,
      OUTDIR not created; a 600 MiB sparse peak.folded against the default (512M): the same,
      at once, without reading it (under 50 MB RSS: /usr/bin/time).
  diff/frame cap: a B stack of 2000 frames: diff.peak.folded has it as "[outer frames cut]"
      and its innermost 511 frames, the report counts it (A 0, B 1).
  diff/rss: A's peak.folded 256 MiB of 24-frame stacks whose every frame name is distinct (the
      shape that cost most: 16.9x before), B one line: exit 0 under --max-input 1G, every A
      stack in diff.peak.folded, peaktrace's peak RSS (/usr/bin/time) under 2x the input.
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
         "diff/bad input", "diff/symlink", "diff/max-input", "diff/frame cap", "diff/rss"]
SECRET = "secret_root_only;do_not_copy 4242424242"
TIME = "/usr/bin/time"


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

    if res.wanted("diff/symlink"):
        symlink_case(res, pt, tmp, da)
    if res.wanted("diff/max-input"):
        max_input_case(res, pt, tmp, da, db)
    if res.wanted("diff/frame cap"):
        frame_cap_case(res, pt, tmp, da)
    if res.wanted("diff/rss"):
        rss_case(res, pt, tmp, da)


def all_output(out, err, outdir):
    """stdout, stderr and every file under outdir, as one string."""
    text = out + err
    for root, _, files in os.walk(outdir) if os.path.isdir(outdir) else ():
        for fn in files:
            with open(os.path.join(root, fn), "rb") as f:
                text += f.read().decode("utf-8", "replace")
    return text


def timed(argv):
    """(rc, stdout, stderr, max RSS in bytes or None) under /usr/bin/time."""
    rc, out, err = run([TIME, "-f", "maxrss_kb=%M"] + argv, timeout=600)
    m = re.search(r"^maxrss_kb=(\d+)$", err, re.M)
    err = re.sub(r"^maxrss_kb=\d+\n?", "", err, flags=re.M)
    err = re.sub(r"^Command exited with non-zero status \d+\n?", "", err, flags=re.M)
    return rc, out, err, int(m.group(1)) * 1024 if m else None


def symlink_case(res, pt, tmp, da):
    name = "diff/symlink"
    secret_dir = os.path.join(tmp, "diff-secret")
    os.makedirs(secret_dir, mode=0o700)
    secret = os.path.join(secret_dir, "shadow")
    with open(secret, "w") as f:
        f.write(SECRET + "\n")
    os.chmod(secret, 0o600)
    d = os.path.join(tmp, "diff-symlink")
    shutil.copytree(da, d)
    os.unlink(os.path.join(d, "peak.folded"))
    os.symlink(secret, os.path.join(d, "peak.folded"))
    out_dir = os.path.join(tmp, "diff-symlink-out")
    rc, out, err = run([pt, "diff", "-o", out_dir, da, d])
    res.eq("%s: exit status" % name, rc, 2)
    one_error_line(res, name, err)
    res.true("%s: the line says the link is not followed" % name, "symbolic link" in err and "not followed" in err,
             short(err))
    res.true("%s: the secret line nowhere (stdout, stderr, OUTDIR)" % name,
             "secret_root_only" not in all_output(out, err, out_dir), "found it")


def max_input_case(res, pt, tmp, da, db):
    name = "diff/max-input"
    out_dir = os.path.join(tmp, "diff-maxin-out")
    rc, out, err = run([pt, "diff", "--max-input", "1K", "-o", out_dir, da, db])
    res.eq("%s: --max-input 1K: exit status" % name, rc, 2)
    one_error_line(res, "%s: --max-input 1K" % name, err)
    res.true("%s: --max-input 1K: the line names the limit and the sizes" % name,
             "more than --max-input 1024" in err and "refused" in err, short(err))
    res.true("%s: --max-input 1K: OUTDIR not created" % name, not os.path.exists(out_dir), out_dir)
    big = os.path.join(tmp, "diff-sparse")
    shutil.copytree(da, big)
    with open(os.path.join(big, "peak.folded"), "r+b") as f:
        f.truncate(600 << 20)
    if not os.access(TIME, os.X_OK):
        res.skip("%s: default" % name, "no %s" % TIME)
        return
    rc, out, err, rss = timed([pt, "diff", "-o", out_dir, da, big])
    res.eq("%s: a 600 MiB input against the default 512M: exit status" % name, rc, 2)
    one_error_line(res, "%s: default" % name, err)
    res.true("%s: default: nothing read (peak RSS %s bytes < 50 MB)" % (name, rss), rss is not None and rss < 50e6,
             "rss %s" % rss)


def frame_cap_case(res, pt, tmp, da):
    name = "diff/frame cap"
    d = os.path.join(tmp, "diff-deep")
    shutil.copytree(da, d)
    frames = ["deep_%d" % i for i in range(2000)]
    with open(os.path.join(d, "peak.folded"), "a") as f:
        f.write(";".join(frames) + " 777\n")
    out_dir = os.path.join(tmp, "diff-deep-out")
    rc, out, err = run([pt, "diff", "-o", out_dir, da, d])
    if not res.eq("%s: exit status" % name, rc, 0):
        return
    with open(os.path.join(out_dir, "diff.peak.folded")) as f:
        lines = [l for l in f.read().splitlines() if "deep_" in l]
    want = "[outer frames cut];" + ";".join(frames[-511:]) + " 777"
    res.true("%s: diff.peak.folded: [outer frames cut] and the innermost 511 frames" % name, lines == [want],
             short(repr(lines), 300))
    res.true("%s: the report counts it (A 0, B 1)" % name,
             re.search(r"cut to their innermost 511 under \"\[outer frames cut\]\": A 0, B 1\)", out), short(out, 2000))


def gen_unique(path, size):
    """size bytes of 24-frame stacks, every frame name distinct: n lines."""
    n, k, total = 0, 0, 0
    with open(path, "w") as f:
        while total < size:
            buf = []
            for _ in range(4096):
                buf.append(";".join("f%012x" % (k + j) for j in range(24)) + " %d\n" % (n + 1))
                k += 24
                n += 1
            chunk = "".join(buf)
            f.write(chunk)
            total += len(chunk)
    return n, total


def rss_case(res, pt, tmp, da):
    name = "diff/rss"
    if not os.access(TIME, os.X_OK):
        res.skip(name, "no %s" % TIME)
        return
    a, b = os.path.join(tmp, "diff-rss-a"), os.path.join(tmp, "diff-rss-b")
    for d in (a, b):
        os.makedirs(d)
        shutil.copy(os.path.join(da, "report.json"), d)
        for fn in ("live.folded", "alloc.folded"):
            with open(os.path.join(d, fn), "w") as f:
                f.write("main;x 1\n")
    n, size = gen_unique(os.path.join(a, "peak.folded"), 256 << 20)
    with open(os.path.join(b, "peak.folded"), "w") as f:
        f.write("main;x 1\n")
    out_dir = os.path.join(tmp, "diff-rss-out")
    rc, out, err, rss = timed([pt, "diff", "-q", "--max-input", "1G", "-o", out_dir, a, b])
    if not res.eq("%s: exit status" % name, rc, 0):
        print("  stderr: " + short(err))
        return
    with open(os.path.join(out_dir, "diff.peak.folded"), "rb") as f:
        got = sum(1 for _ in f)
    res.eq("%s: every stack of A (and B's) in diff.peak.folded" % name, got, n + 1)
    res.true("%s: peak RSS %.2fx the %d-byte input (< 2x)" % (name, (rss or 0) / size, size),
             rss is not None and rss < 2 * size, "rss %s" % rss)
    shutil.rmtree(a, ignore_errors=True)
    shutil.rmtree(out_dir, ignore_errors=True)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""hostile: a target that names its code with terminal escapes, and lost data.

  hostile/names-launch, hostile/names-attach: wl_hostile's allocating function is named
      "evil" ESC "[31mRED" BEL ESC "[2J" (its comm has an ESC too); no raw control byte
      (ESC, BEL) in peaktrace's stdout, stderr, report.txt, report.json, report.html or the
      folded files, and the name is there escaped ("evil\\x1b[31mRED\\x07\\x1b[2J"). Its
      caller is named "</script><svg onload=alert(1)>&amp;": report.html holds no "</script"
      but its own two and no "<svg", and its embedded JSON has that name as a frame.
  hostile/bidi: Trojan-Source names: CPython 3.12 (pyenv's, copied to an executable path
      holding U+202E and U+2066, so exe and comm carry them) runs -X perf (its perf map names
      each Python function "py::QUALNAME:FILE") a script in a directory holding U+202E, named
      with U+2067 and U+200B, whose allocating function's co_name/co_qualname is
      "alloc" U+202E "evil" U+2069 U+200B. None of those code points raw (as UTF-8 bytes) in
      stdout, stderr, report.txt, report.json (which parses), report.html, every .svg, .folded,
      .jsonl, speedscope file or the decompressed profile.pb.gz; the function is in report.txt
      as "alloc\\u202eevil\\u2069\\u200b" and report.json's python frames hold the same text.
  hostile/max-live: --max-live 1000 with 100,000 blocks live at once (launch mode): the
      HEAP section carries a caveat naming live_table_full beside its figures, report.json
      a "caveats" entry for it, and unknown_free is not explained as "before tracing".
"""

import glob
import gzip
import json
import os
import re
import shutil

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


BIDI = ("\u202e", "\u2066", "\u2067", "\u2069", "\u200b")
BIDI_FUNC = "alloc\u202eevil\u2069\u200b"
BIDI_SCRIPT = """import time
def f(n):
    return [bytearray(1 << 20) for _ in range(n)]
bad = %r
f.__code__ = f.__code__.replace(co_name=bad, co_qualname=bad)
keep = f(24)
time.sleep(0.3)
""" % BIDI_FUNC


def bidi_escaped(s):
    return "".join("\\u%04x" % ord(c) if c in BIDI else c for c in s)


def bidi_case(res, pt, tmp, name):
    found = sorted(glob.glob("/root/.pyenv/versions/3.12.*/bin/python3.12"))
    if not found:
        res.skip(name, "no pyenv CPython 3.12 (its -X perf writes the perf map)")
        return
    home = os.path.dirname(os.path.dirname(found[-1]))
    d = os.path.join(tmp, "bidi\u202edir")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "py\u202eth\u2066")
    shutil.copy2(found[-1], exe)
    script = os.path.join(d, "m\u2067od\u200b.py")
    with open(script, "w") as f:
        f.write(BIDI_SCRIPT)
    # The copy finds its standard library by PYTHONHOME (no longer beside it).
    os.environ["PYTHONHOME"] = home
    try:
        r = trace_launch(pt, exe, ["-X", "perf", script], os.path.join(tmp, "hostile-bidi"))
    finally:
        del os.environ["PYTHONHOME"]
    if r.why:
        res.fail(name, r.why)
        return
    res.eq("%s: exit status" % name, r.rc, 0)
    outs = {"stdout": r.out.encode(), "stderr": r.err.encode()}
    files = [p for p in sorted(glob.glob(os.path.join(r.outdir, "*"))) if os.path.isfile(p)]
    for path in files:
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
            outs[os.path.basename(path)] = f.read()
    for need in ("report.txt", "report.json", "report.html", "peak.svg", "profile.pb.gz"):
        res.true("%s: %s written" % (name, need), need in outs, sorted(outs))
    for what, data in sorted(outs.items()):
        raw = [hex(ord(c)) for c in BIDI if c.encode() in data]
        res.true("%s: no raw bidi/format code point in %s" % (name, what), not raw, raw)
    want = bidi_escaped(BIDI_FUNC)
    res.true("%s: the function, escaped, in report.txt" % name, want.encode() in outs.get("report.txt", b""),
             "not found")
    try:
        rep = json.loads(outs.get("report.json", b"").decode("utf-8"))
    except ValueError as e:
        res.fail("%s: report.json parses" % name, str(e))
        return
    strings = []

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            strings.append(v)
    walk(rep)
    res.true("%s: report.json holds the function as escaped text (decoded)" % name,
             any(want in x for x in strings), [x for x in strings if "alloc" in x][:3])
    res.true("%s: no decoded report.json string holds a bidi code point" % name,
             not any(c in x for x in strings for c in BIDI), "found")
    res.true("%s: the script's path, escaped, in report.txt" % name,
             bidi_escaped(script).encode() in outs.get("report.txt", b""), "not found")


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

    name = "hostile/bidi"
    if res.wanted(name):
        bidi_case(res, pt, tmp, name)

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

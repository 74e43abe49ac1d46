# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RSS attribution against the workloads' own readings, shared by the rss, light and rsskinds
sections: the workloads' logs of their own RssAnon deltas (read_log, read_truth, traced_truth),
rss.folded and report.txt read back (folded, read_folded, through, read_text), the checks of a
run against them (check_thp_truth, check_functions, check_identity, check_pprof), and the Python
scenario (wl_rss.py under Debian's python3, run_python: the rss section's, and with --light the
light section's). What the scenarios are and why the tolerances: tests/sections/rss.py."""

import json
import os
import re

from harness import WORKLOAD_SRC, short
from pprofread import Pprof, pprof_rss
from tracing import load_report, trace_attach, trace_launch


PAGE = 4096


# Tolerance for the figures that are not one function's own: the buckets (MAP_POPULATE's bucket
# also holds what the kernel populated at exec; the pages resident before attaching are counted
# a few pages before the workload's log line) and the Lambda runtime's per-invocation pages.
PAGES = 8


# Each function's own pages, and the anonymous RSS at the peak and at the end: exact.
EXACT = 0


MiB = 1 << 20


THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"


# function -> (log name at the peak, log names added for the end)
SCENARIOS = {
    "scn_malloc_memset": ("malloc_memset", []),
    "scn_mmap_touch": ("mmap_touch", ["dontneed"]),
    "scn_stack_deep": ("stack_deep", ["thread_exit"]),
    "scn_mremap_touch": ("mremap_touch", []),
    "scn_mremap_grow": ("mremap_grow", []),
    "scn_read_into": ("read_into", []),
    "scn_munmap_touch": ("munmap_touch", ["munmap"]),
    "scn_heap_small": ("heap_small", []),
    "scn_arena_small": ("arena_small", []),
    "scn_thp_on": ("thp_on", []),
    "scn_thp_off": ("thp_off", []),
}


def thp_available():
    """(True, mode) when this kernel gives transparent huge pages to a region madvised
    MADV_HUGEPAGE (mode "always" or "madvise"), else (False, why)."""
    try:
        with open(THP_ENABLED) as f:
            sel = re.search(r"\[(\w+)\]", f.read())
    except OSError as e:
        return False, "%s: %s (kernel without THP)" % (THP_ENABLED, e.strerror)
    mode = sel.group(1) if sel else "?"
    if mode in ("always", "madvise"):
        return True, mode
    return False, "THP is [%s] in %s" % (mode, THP_ENABLED)


def read_log(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, v = line.split()
                out[k] = int(v)
    except (OSError, ValueError):
        pass
    return out


def folded(path):
    """[(frames root first, value)] of a folded file."""
    out = []
    with open(path) as f:
        for line in f:
            stack, _, v = line.rstrip("\n").rpartition(" ")
            out.append((stack.split(";"), int(v)))
    return out


def read_folded(res, prefix, outdir, name="rss.folded"):
    """folded() of outdir/name, or None once the failure is said."""
    try:
        return folded(os.path.join(outdir, name))
    except OSError as e:
        res.fail("%s: %s" % (prefix, name), str(e))
        return None


def read_truth(res, prefix, log, key):
    """The workload's log (read_log), or None once "workload log" failed for lacking key (its
    last line)."""
    truth = read_log(log)
    if not res.true("%s: workload log" % prefix, key in truth, "incomplete: %r" % truth):
        return None
    return truth


def traced_truth(res, prefix, r, log, key):
    """After a traced run r: its failure said, or peaktrace's exit status checked and the
    workload's log read (read_truth); None once a failure is said."""
    if r.why:
        res.fail(prefix, r.why)
        return None
    res.eq("%s: peaktrace exit status" % prefix, r.rc, 0)
    return read_truth(res, prefix, log, key)


def read_text(path):
    """A text file's content ("" when unreadable), bytes that are not UTF-8 replaced."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def through(lines, rx):
    r = re.compile(rx)
    return sum(v for frames, v in lines if any(r.fullmatch(fr) for fr in frames))


def near(res, name, got, want, pages=PAGES, note=""):
    return res.true(name, got is not None and want is not None and abs(got - want) <= pages * PAGE,
                    "got %r want %r (+- %d pages)%s" % (got, want, pages, note))


def check_thp_truth(res, prefix, thp, truth):
    """What the workload's own smaps say about THP, so the exact checks mean what they say:
    with "thp" where the kernel has THP, each 2 MiB page of scn_thp_on is one fault making 2 MiB
    resident (4 MiB from two writes) and scn_thp_off's two writes make 8 KiB; with "nothp"
    (PR_SET_THP_DISABLE) no huge page at all. Without THP in this kernel the huge-page checks
    are skipped with the reason (the exact attribution checks still run)."""
    ok, why = thp_available()
    if thp == "thp":
        # The workload asks for THP only where it madvised (PR_THP_DISABLE_EXCEPT_ADVISED,
        # 6.18+; before, its heaps have no top pad): under "always" khugepaged would otherwise
        # fill the unwritten pages of the brk heap's last 2 MiB range while a window is
        # measured, pages no function faulted (then named in a failing exact check).
        guard = truth.get("thp_except_advised")
        print("INFO %s: THP %s, the workload's THP only where madvised: %s" % (
            prefix, why, {1: "yes", 0: "no (kernel before 6.18): its heaps without a top pad "
                          "instead (M_TOP_PAD 0)"}.get(guard, "not logged")), flush=True)
    if thp == "thp":
        # After the peak THP is off for it (khugepaged too): no collapse inside the release
        # windows, whose deltas are the truth of the "at the end" checks.
        res.eq("%s: THP turned off after the peak (its prctl)" % prefix, truth.get("thp_off_after_peak"), 1)
    if thp == "thp" and not ok:
        res.skip("%s: THP really used" % prefix, why)
        return
    if thp == "thp":
        res.true("%s: THP really used (AnonHugePages at the peak, THP %s)" % (prefix, why),
                 truth.get("huge", 0) >= 32 * MiB, "only %r bytes" % truth.get("huge"))
        res.eq("%s: scn_thp_on: two writes, two 2 MiB huge pages (its AnonHugePages)" % prefix,
               truth.get("thp_on_huge"), 4 * MiB)
        res.eq("%s: scn_thp_on: two writes, 4 MiB resident (its RssAnon)" % prefix,
               truth.get("thp_on"), 4 * MiB)
    else:
        res.eq("%s: no THP (AnonHugePages at the peak)" % prefix, truth.get("huge"), 0)
        res.eq("%s: scn_thp_on under PR_SET_THP_DISABLE: two 4 KiB pages" % prefix,
               truth.get("thp_on"), 2 * PAGE)
    res.eq("%s: scn_thp_off (MADV_NOHUGEPAGE): two 4 KiB pages, no huge page" % prefix,
           (truth.get("thp_off"), truth.get("thp_off_huge")), (2 * PAGE, 0))


def check_functions(res, prefix, lines, ra, truth):
    """Each workload function's anonymous bytes at the RSS peak (rss.folded) and at the end
    (report.json top_stacks), and the anonymous RSS then: exactly the workload's own RssAnon
    deltas. scn_stack_deep is the thread's own pages; the pages glibc's pthread_create writes
    from the parent (the new thread's descriptor and TLS at its stack's top) are the parent's,
    under main;pthread_create, and are not in the thread's delta (faulted before it ran)."""
    ends = {}
    for st in ra.get("top_stacks", []):
        for fn in SCENARIOS:
            if any(fr.get("func") == fn for fr in st.get("frames", [])):
                ends[fn] = ends.get(fn, 0) + st.get("rss_bytes", 0)
    pk, end = ra.get("at_peak", {}), ra.get("at_end", {})
    # On a failure, what another task (khugepaged) added to the target's RSS, which no function
    # faulted and which the workload's RssAnon deltas include when it came inside a window.
    note = "; peaktrace's [added by another task]: %r B at the peak, %r B at the end" % (
        pk.get("other_task_bytes"), end.get("other_task_bytes"))
    for fn, (name, rel) in SCENARIOS.items():
        near(res, "%s: %s at the peak" % (prefix, fn), through(lines, re.escape(fn)),
             truth.get(name), EXACT, note)
        near(res, "%s: %s at the end" % (prefix, fn), ends.get(fn, 0),
             truth.get(name, 0) + sum(truth.get(k, 0) for k in rel), EXACT, note)
    near(res, "%s: anon RSS at the peak == the workload's RssAnon then" % prefix,
         pk.get("anon_bytes"), truth.get("peak_anon"), EXACT, note)
    near(res, "%s: anon RSS at the end == the workload's RssAnon then" % prefix,
         end.get("anon_bytes"), truth.get("end_anon"), EXACT, note)
    par = through(lines, r"pthread_create")
    res.true("%s: the new thread's descriptor page is the parent's (main;pthread_create)" % prefix,
             par >= PAGE and through([(f, v) for f, v in lines if "main" in f], r"pthread_create") == par,
             "pthread_create holds %d" % par)


def check_identity(res, prefix, ra, moment):
    s = ra.get(moment) or {}
    res.eq("%s: %s: unexplained_bytes" % (prefix, moment), s.get("unexplained_bytes"), 0)
    res.eq("%s: %s: attributed + unattributed == anon" % (prefix, moment),
           s.get("attributed_bytes", 0) + s.get("unattributed_bytes", 0), s.get("anon_bytes"))


FULL_TYPES = ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "peak_objects",
              "peak_space", "rss_peak_space"]


def pprof_top(ctx, prefix, outdir, types, go_what):
    """outdir/profile.pb.gz with its sample types checked against types, and `go tool pprof
    -top` of it by rss_peak_space in bytes, every node (its exit status checked as go_what's;
    skipped without go): (path, go, its stdout, its stderr), or None once the file is missing."""
    import shutil
    res, prof = ctx.res, os.path.join(outdir, "profile.pb.gz")
    if not os.path.isfile(prof):
        res.fail("%s: pprof: profile.pb.gz" % prefix, "missing")
        return None
    got_types, _ = pprof_rss(prof, "")
    res.eq("%s: pprof: sample types" % prefix, got_types, types)
    go, out, err = shutil.which("go"), "", ""
    if go:
        rc, out, err = Pprof(go, ctx.tmp)(prof, "-sample_index=rss_peak_space", "-unit=B",
                                           "-nodefraction=0", "-nodecount=100000")
        res.eq("%s: pprof: %s exit status" % (prefix, go_what), rc, 0)
    else:
        res.skip("%s: pprof: go tool pprof" % prefix, "go not on PATH")
    return prof, go, out, err


def pprof_cum(out, name):
    """The cum column (bytes, -unit=B) of function name's line in `go tool pprof -top`'s
    output (flat flat% sum% cum cum% NAME), or None."""
    m = re.search(r"^\s*\S+\s+\S+%\s+\S+%\s+(\d+)B\s+\S+%\s+" + re.escape(name) + r"$", out, re.M)
    return int(m.group(1)) if m else None


def check_pprof(ctx, prefix, outdir, lines, truth, types=FULL_TYPES, funcs=None):
    """profile.pb.gz's rss_peak_space: the seventh sample type, after the six heap ones (the
    only one with --light: types); per
    workload function the same bytes as rss.folded's and the workload's own figure, read by
    `go tool pprof` (when go is there) and by tests/pprofread.py's protobuf reader."""
    res = ctx.res
    opened = pprof_top(ctx, prefix, outdir, types, "go tool pprof -sample_index=rss_peak_space")
    if opened is None:
        return
    prof, go, out, err = opened
    if go:
        res.true("%s: pprof: go tool pprof Type: rss_peak_space" % prefix,
                 "\nType: rss_peak_space\n" in out, short(out + err, 600))
    for fn, name in (funcs or {f: n for f, (n, _) in SCENARIOS.items()}).items():
        want = through(lines, re.escape(fn))
        _, got = pprof_rss(prof, fn)
        res.eq("%s: pprof: %s rss_peak_space (decoder) == rss.folded's" % (prefix, fn), got, want)
        near(res, "%s: pprof: %s rss_peak_space (decoder) == the workload's own" % (prefix, fn),
             got, truth.get(name), EXACT)
        if go:
            res.eq("%s: pprof: go tool pprof -top: %s cum == rss.folded's" % (prefix, fn),
                   pprof_cum(out, fn), want)


PY_FUNCS = ("build_dict", "build_buffer")


def run_python(ctx, mode, light=False):
    """Debian's python3 running wl_rss.py: at the RSS peak the Python frames build_dict and
    build_buffer hold what each grew (the workload's own RssAnon deltas) within the unattributed
    bytes at the peak (at least a page: the measurement's own), counting the stacks where the
    function is called from wl_rss:main. Launch mode: build_buffer exact,
    build_dict one page under (rss_anon()'s read of /proc/self/status, after the kernel took the
    counter). Attach mode: build_dict holds 17-19 pages more than RssAnon grew, exactly the pages
    resident before attaching that were released by the peak (RssAnon when tracing began less
    resident_before_bytes at the peak): released and faulted again while it ran, they count for
    it but not in RssAnon's growth; checked as such, with a page of slack. In rss.folded, report.json's top_stacks (peak figures), rss.svg and profile.pb.gz
    (the pprof reader and go tool pprof). light: the same with --light (section light)."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    tag = "light-" if light else ""
    prefix = "%s/python/%s" % ("light" if light else "rss", mode)
    if not res.wanted(prefix):
        return
    py = debian_python(res, prefix)
    if py is None:
        return
    outdir = os.path.join(tmp, "rss-py-%s%s" % (tag, mode))
    log = os.path.join(tmp, "rss-py-%s%s.log" % (tag, mode))
    script = os.path.join(WORKLOAD_SRC, "wl_rss.py")
    extra = ("--top", "1000") + (("--light",) if light else ())
    attached = {}

    def at_attach(pr, w):
        # The workload waits for SIGUSR1: its RssAnon now is what was resident when tracing began.
        attached["anon"] = proc_rss_anon(w.pid)

    if mode == "launch":
        r = trace_launch(pt, py, [script, log], outdir, extra=extra)
    else:
        # trace_attach runs WORKLOAD --wait ARGS: the interpreter and the script as one argv.
        r = trace_attach_py(pt, py, script, [log], outdir, extra=extra, before_go=at_attach)
    truth = traced_truth(res, prefix, r, log, "peak_anon")
    if truth is None:
        return
    res.true("%s: the dict grew RSS by ~50 MiB" % prefix, truth["build_dict"] >= 40 * MiB,
             "only %d bytes" % truth["build_dict"])
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ra = rep.get("rss_attribution") or {}
    if light:
        res.eq("%s: report.json mode" % prefix, rep.get("mode"), "light")
    check_identity(res, prefix, ra, "at_peak")
    unattr = (ra.get("at_peak") or {}).get("unattributed_bytes", 0)
    # Pages resident when tracing began that were gone by the peak (attach mode; 0 launched).
    left = 0
    if mode == "attach":
        before = (ra.get("at_peak") or {}).get("resident_before_bytes", 0)
        if res.true("%s: RssAnon read when tracing began" % prefix, attached.get("anon") is not None,
                    "not read"):
            left = max(0, attached["anon"] - before)
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    peaks = {}
    for st in ra.get("top_stacks", []):
        # report.json frames are leaf first: main's frame comes after the function's.
        names = [fr.get("func", "") for fr in st.get("frames", [])][::-1]
        for fn in PY_FUNCS:
            if called_from_main(names, fn):
                peaks[fn] = peaks.get(fn, 0) + (st.get("rss_peak_bytes") or 0)
    for fn in PY_FUNCS:
        want = truth[fn]
        stray = through(lines, r"wl_rss:%s:\d+" % fn) - through_main(lines, fn)
        if stray:
            # Seen once in a few runs: interpreter start-up stacks (importlib, compile) named
            # with this function's frame alone, not under main: a Python frame naming fault
            # outside this test's scope, said here rather than counted.
            print("INFO %s: %d bytes on stacks naming %s without wl_rss:main (start-up stacks "
                  "misnamed)" % (prefix, stray, fn), flush=True)
        for what, got in (("rss.folded", through_main(lines, fn)),
                          ("report.json top_stacks rss_peak_bytes", peaks.get(fn, 0))):
            print("INFO %s: %s %s holds %d, grew %d, unattributed at the peak %d, resident "
                  "before tracing that left by the peak %d"
                  % (prefix, what, fn, got, want, unattr, left), flush=True)
            res.true("%s: %s: %s holds what it grew (within the unattributed bytes)"
                     % (prefix, what, fn),
                     abs(got - want) <= max(unattr, PAGE),
                     "got %d want %d, unattributed %d" % (got, want, unattr))
            # Tighter: a page resident before tracing that is released and faulted again
            # while the function runs adds to what it holds, not to RssAnon's growth.
            res.true("%s: %s: %s holds what it grew plus the pre-tracing pages that left "
                     "(one page of slack)" % (prefix, what, fn),
                     want - PAGE <= got <= want + left + PAGE,
                     "got %d want %d, left %d" % (got, want, left))
    check_pprof_python(ctx, prefix, outdir, lines, ["rss_peak_space"] if light else FULL_TYPES)
    check_svg_python(res, prefix, outdir, lines)
    if not light:
        check_first_screen_python(res, prefix, outdir, rep, truth)


def holders(block):
    """The holders of a WHO HELD ... block of report.txt: [(head line, [frame lines])]."""
    out = []
    for m in re.finditer(r"^  #\d+\s+(.*)\n((?:        .*\n)*)", block, re.M):
        out.append((m.group(1), [l.strip() for l in m.group(2).splitlines()]))
    return out


def mib_of(head):
    m = re.match(r"([\d.]+) MiB ", head)
    return float(m.group(1)) * MiB if m else None


def check_first_screen_python(res, prefix, outdir, rep, truth):
    """report.txt's first screen (before TOP STACKS LIVE AT THE HEAP PEAK): the pymalloc arenas
    make the RSS more than twice the live heap, so WHO HELD THE RSS is there beside WHO HELD IT;
    in both, the holder that ran build_buffer shows that Python frame (deeper than the four
    innermost frames shown before: the interpreter's) with what it grew (its own RssAnon delta,
    to the 0.01 MiB printed), the RSS block has build_dict's stacks under [CPython pymalloc
    arenas], and report.html's summary data says the same."""
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError as e:
        res.fail("%s: first screen" % prefix, str(e))
        return
    first = txt.split("\nTOP STACKS LIVE AT THE HEAP PEAK")[0]
    heap = (rep.get("totals") or {}).get("peak_live_bytes", 0)
    rss = (rep.get("rss") or {}).get("peak_bytes", 0)
    res.true("%s: first screen: the live heap peak (%d) is under half the peak RSS (%d) here" % (prefix, heap, rss),
             0 < heap < rss / 2, "heap %d rss %d" % (heap, rss))
    parts = first.split("\nWHO HELD THE RSS ")
    if not res.true("%s: first screen: WHO HELD THE RSS beside WHO HELD IT" % prefix,
                    len(parts) == 2 and "\nWHO HELD IT " in parts[0], first[-1500:]):
        return
    heap_h, rss_h = holders(parts[0].split("\nWHO HELD IT ")[1]), holders(parts[1])
    res.eq("%s: first screen: three RSS holders" % prefix, len(rss_h), 3)
    for what, hs, tol in (("WHO HELD IT", heap_h, 0), ("WHO HELD THE RSS", rss_h, PAGE)):
        buf = [h for h in hs if any(l.startswith("wl_rss:build_buffer:") for l in h[1])]
        got = mib_of(buf[0][0]) if buf else None
        # The bytearray: 32 MiB + 1 byte of heap, its RssAnon delta of pages.
        want = truth["build_buffer"] if what != "WHO HELD IT" else 32 * MiB + 1
        res.true("%s: first screen: %s names wl_rss:build_buffer, with what it holds (%d, 0.01 MiB printed)"
                 % (prefix, what, want), got is not None and abs(got - want) <= 0.005 * MiB + tol,
                 "\n".join(h[0] + " | " + " / ".join(h[1]) for h in hs))
    dict_h = [h for h in rss_h if any(l.startswith("wl_rss:build_dict:") for l in h[1])]
    res.true("%s: first screen: WHO HELD THE RSS names wl_rss:build_dict in CPython's pymalloc arenas" % prefix,
             any("[CPython pymalloc arenas]" in h[0] for h in dict_h) if "launch" in prefix else bool(dict_h),
             "\n".join(h[0] + " | " + " / ".join(h[1]) for h in rss_h))
    try:
        with open(os.path.join(outdir, "report.html")) as f:
            m = re.search(r'<script type="application/json" id="pt-data">\n(.*?)</script>', f.read(), re.S)
        d = json.loads(m.group(1))
    except (OSError, AttributeError, ValueError) as e:
        res.fail("%s: report.html's data" % prefix, str(e))
        return
    fr = d.get("frames", [])
    rh = (d.get("rss_holders") or {}).get("stacks", [])
    html_lines = [[x if isinstance(x, str) else fr[x][0] for x in h[2]] for h in rh]
    res.true("%s: report.html's summary has the RSS holders, build_dict's among them" % prefix,
             len(rh) == 3 and any(any(l.startswith("wl_rss:build_dict:") for l in ls) for ls in html_lines),
             str(html_lines))


def check_svg_python(res, prefix, outdir, lines):
    """rss.svg: the bytes in the titles of every node of each Python function (it does not
    recurse, so each stack passes one node) add up to rss.folded's bytes through it, less the
    nodes the graph leaves out for being under 0.1 px of its 1180 (flamegraph.c MIN_W): at most
    total/11800 bytes for each stack through the function."""
    total = sum(v for _, v in lines)
    import html
    try:
        with open(os.path.join(outdir, "rss.svg")) as f:
            titles = [html.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", f.read())]
    except OSError as e:
        res.fail("%s: rss.svg" % prefix, str(e))
        return
    for fn in PY_FUNCS:
        got = sum(int(m.group(1)) for t in titles
                  for m in [re.fullmatch(r"wl_rss:%s:\d+ \([^,]*, (\d+) bytes, .*\)" % fn, t)] if m)
        want = through(lines, r"wl_rss:%s:\d+" % fn)
        n = sum(1 for frames, _ in lines if any(re.fullmatch(r"wl_rss:%s:\d+" % fn, x) for x in frames))
        tol = n * total * 0.1 / 1180
        res.true("%s: rss.svg: wl_rss:%s's nodes hold rss.folded's bytes through it" % (prefix, fn),
                 want - tol <= got <= want, "svg %d, folded %d, tolerance %d" % (got, want, tol))


def called_from_main(names, fn):
    """names root first: the workload's frame fn called from wl_rss:main."""
    m = [i for i, n in enumerate(names) if re.fullmatch(r"wl_rss:main(:\d+)?", n)]
    return bool(m) and any(re.fullmatch(r"wl_rss:%s(:\d+)?" % fn, n) for n in names[m[0] + 1:])


def through_main(lines, fn):
    """rss.folded bytes on stacks where fn is called from wl_rss:main."""
    return sum(v for frames, v in lines if called_from_main(frames, fn))


def check_pprof_python(ctx, prefix, outdir, lines, types):
    """profile.pb.gz: each Python function's rss_peak_space (the pprof reader, and go tool
    pprof's cum column) equals rss.folded's bytes through that function's frames."""
    res = ctx.res
    opened = pprof_top(ctx, prefix, outdir, types, "go tool pprof")
    if opened is None:
        return
    prof, go, out, _ = opened
    for fn in PY_FUNCS:
        want = through(lines, r"wl_rss:%s:\d+" % fn)
        _, got = pprof_rss(prof, "wl_rss:" + fn)
        res.eq("%s: pprof: wl_rss:%s rss_peak_space (decoder) == rss.folded's" % (prefix, fn),
               got, want)
        if go:
            res.eq("%s: pprof: go tool pprof -top: wl_rss:%s cum == rss.folded's" % (prefix, fn),
                   pprof_cum(out, "wl_rss:" + fn), want)


def proc_rss_anon(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def trace_attach_py(pt, py, script, args, outdir, **kw):
    """trace_attach (keywords kw) with `py script --wait ARGS` as the target: trace_attach runs
    one WORKLOAD, so a wrapper named after the script (wl_rss.py: wl_rss_py) execs both."""
    import tempfile
    d = tempfile.mkdtemp(prefix="rss-py-", dir=os.path.dirname(outdir))
    wrapper = os.path.join(d, os.path.basename(script).replace(".", "_"))
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s %s \"$@\"\n" % (py, script))
    os.chmod(wrapper, 0o755)
    return trace_attach(pt, wrapper, list(args), outdir, **kw)


def debian_python(res, prefix):
    """Debian's python3 (the workloads' frames are checked against its build), or None once
    the case is skipped without it."""
    py = "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        res.skip(prefix, "no %s" % py)
        return None
    return py

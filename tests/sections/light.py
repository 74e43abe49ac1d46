# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""light: --light, no allocator probes, a section of tests/run.py.

Memo case first: tests/workloads/wl_memo.c (fp and nofp) and wl_memo.py, launched with --light:
two callers (fill_a, fill_b) fault alternately from the same instruction with the same rsp and
rbp under the same native frames (touch; for the Python pair the interpreter's frames and the
Python function touch, the same code at the same instruction and frame address under either),
so only the stack words above (a return address, the caller's Python frame) tell them apart; each holds exactly the
bytes it wrote (the workload's own count, whose sum is its RssAnon growth) in rss.folded, and
unexplained_bytes is 0. A memo keyed on the registers alone gives one's pages to the other.

tests/workloads/wl_rss.c (see rss.py) with --light, THP as this machine has it, launch and
attach: each function's anonymous bytes at the RSS peak (rss.folded) and at the end
(report.json rss_attribution) equal the workload's own RssAnon deltas exactly, as without
--light (THP checked as in rss.py); report.json says "mode": "light", lists no probes, has no heap figures
(totals, stacks and leaked null: absent, not zero) and the heap files are not written;
timeline.jsonl has RSS samples whose maximum holds the workload's RssAnon peak, heap null.
No allocator probe: while peaktrace is attached, the target's libc text in its own memory
(/proc/PID/mem) is byte-for-byte the file's; the same comparison without --light finds the
breakpoints (so the check can fail).
Per invocation: tools/functions/oom under tools/lambda-host with --light, attached, invoked with
16/128/64/8 MiB: every invocation found with the host's request ids, each one's true RSS peak
within 1 MiB of the runtime's VmHWM reset (clear_refs 5) before it, its heap figures null. With a 96 MB limit, 8 MiB then
256 MiB: the second invocation killed, named by the host's request id, its RSS trajectory up
to the limit, its top RSS stack at the peak the memset's, the text's KILLED block saying so.
"""
import json
import os
import re
import signal
import time

from harness import TIMEOUT, WORKLOAD_SRC, free_ports, run
from tracing import load_report, trace_attach, trace_launch
from lambdafix import (NOT_BUILT, TOLERANCE, attach_traced, clear_hwm, host_attached, host_runtime, invocations,
                       invoke_events, need_host, report_ids, stop_attached, stop_host, vmhwm)
from rsscheck import (check_functions, check_identity, check_pprof, check_thp_truth, read_folded, read_text, read_truth,
                      run_python)

MIB = 1 << 20
# The runtime's own pages between the handler's RssAnon reads and the reading after the end (its
# JSON and HTTP work): 1-2 pages measured; 64 is far below the 20-25 MiB the checks are about.
SLACK_PAGES = 64
HEAP_FILES = ("peak.folded", "live.folded", "alloc.folded", "peak.svg", "live.svg", "alloc.svg",
              "peak.speedscope.json", "live.speedscope.json", "alloc.speedscope.json",
              "leaked.folded", "leaked.svg")


def libc_text_diff(pid):
    """Bytes of the target's mapped libc text (r-xp) that differ from the file: a uprobe's
    breakpoint is written into the process's copy. None when libc is not found."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            maps = f.read().splitlines()
    except OSError:
        return None
    for line in maps:
        parts = line.split()
        if len(parts) < 6 or parts[1] != "r-xp" or not re.search(r"/libc\.so\.6$", parts[5]):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        off = int(parts[2], 16)
        with open("/proc/%d/map_files/%s" % (pid, parts[0]), "rb") as f:
            f.seek(off)
            want = f.read(hi - lo)
        with open("/proc/%d/mem" % pid, "rb") as m:
            m.seek(lo)
            got = m.read(len(want))
        return sum(1 for a, b in zip(got, want) if a != b) + abs(len(got) - len(want))
    return None


def run_wl(ctx, wl, mode, light):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    tag = "light" if light else "full"
    prefix = "light/wl_rss/%s/%s" % (mode, tag)
    if not res.wanted(prefix):
        return
    if not wl:
        res.fail(prefix, "wl_rss not built")
        return
    outdir = os.path.join(tmp, "light-%s-%s" % (mode, tag))
    log = os.path.join(tmp, "light-%s-%s.log" % (mode, tag))
    seen = {}

    def on_tracing(pr, w):
        seen["diff"] = libc_text_diff(w.pid)

    extra = ("--top", "1000") + (("--light",) if light else ())
    if mode == "launch":
        r = trace_launch(pt, wl, [log, "thp"], outdir, extra=extra)
    else:
        r = trace_attach(pt, wl, [log, "thp"], outdir, extra=extra, on_tracing=on_tracing)
    if r.why:
        res.fail(prefix, r.why)
        return
    res.eq("%s: peaktrace exit status" % prefix, r.rc, 0)
    if mode == "attach":
        d = seen.get("diff")
        if light:
            res.eq("%s: target's libc text unmodified while attached (no uprobe)" % prefix, d, 0)
        else:
            res.true("%s: control: the allocator's breakpoints are in the target's libc text" % prefix,
                     d is not None and d > 0, "differing bytes %r" % d)
    if not light:
        return
    truth = read_truth(res, prefix, log, "end_anon")
    if truth is None:
        return
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    res.eq("%s: report.json mode" % prefix, rep.get("mode"), "light")
    res.eq("%s: no probes listed" % prefix, rep.get("probes"), [])
    res.eq("%s: heap figures absent (totals, stacks, leaked null)" % prefix,
           [rep.get(k, "missing") for k in ("totals", "stacks", "leaked")], [None, None, None])
    res.eq("%s: heap files not written" % prefix,
           [f for f in HEAP_FILES if os.path.exists(os.path.join(outdir, f))], [])
    txt = read_text(os.path.join(outdir, "report.txt"))
    first = "\n".join(txt.splitlines()[:8])
    res.true("%s: the text's first screen says light mode and what it lacks" % prefix,
             "LIGHT MODE" in first and "absent, not zero" in first and "per-allocation" in first
             and "profile.pb.gz has rss_peak_space only" in first, first)
    lm = rep.get("light_mode") or {}
    res.true("%s: report.json light_mode says what is not measured" % prefix,
             {"heap_totals", "heap_peak", "heap_stacks", "leaked"} <= set(lm.get("not_measured", []))
             and "rss_attribution" in lm.get("measured", []), repr(lm)[:300])
    html = read_text(os.path.join(outdir, "report.html"))
    res.true("%s: report.html is in light mode and says what it lacks" % prefix,
             re.search(r'"light":\s*true', html) is not None
             and "no heap figures or heap stacks (per-allocation views; absent, not zero)" in html,
             "%d bytes" % len(html))
    ra = rep.get("rss_attribution")
    if not res.true("%s: report.json rss_attribution" % prefix, isinstance(ra, dict), "missing"):
        return
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    check_thp_truth(res, prefix, "thp", truth)
    check_functions(res, prefix, lines, ra, truth)
    check_pprof(ctx, prefix, outdir, lines, truth, types=["rss_peak_space"])
    check_identity(res, prefix, ra, "at_peak")
    try:
        with open(os.path.join(outdir, "timeline.jsonl")) as f:
            tl = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        res.fail("%s: timeline.jsonl" % prefix, str(e))
        tl = []
    samples = [x for x in tl if "rss" in x]
    res.true("%s: timeline: RSS samples, heap null in every one" % prefix,
             len(samples) >= 3 and all(x.get("heap", 0) is None and x.get("heap_max", 0) is None
                                        for x in samples), "%d samples" % len(samples))
    res.true("%s: timeline: its RSS maximum holds the workload's RssAnon peak" % prefix,
             max([x.get("rss_max") or 0 for x in samples] + [0]) >= truth.get("peak_anon", 1 << 62),
             "max %r, RssAnon peak %r" % (max([x.get("rss_max") or 0 for x in samples] + [0]),
                                         truth.get("peak_anon")))
    res.true("%s: memory syscalls counted" % prefix,
             (rep.get("syscalls") or {}).get("mmap_count", 0) >= 3, rep.get("syscalls"))


def run_lambda(ctx):
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    name = "light/lambda invocations"
    if not res.wanted(name):
        return
    tools = need_host(res, name, build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    port = free_ports(2)
    started = host_runtime(res, name, build, tmp, "light-lambda", 512, port, [fn])
    if not started:
        return
    h, rt = started
    outdir = os.path.join(tmp, "light-lambda")
    p = attach_traced(res, name, pt, rt, ["--light", "-o", outdir], h)
    if not p:
        return
    res.eq("%s: target's libc text unmodified while attached" % name, libc_text_diff(rt), 0)
    sizes = [16, 128, 64, 8]
    truth = []
    for mb in sizes:
        clear_hwm(rt)
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=TIMEOUT)
        truth.append(vmhwm(rt))
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq("%s: peaktrace exit status" % name, p.wait(TIMEOUT), 0)
    time.sleep(0.2)
    ids = stop_host(h, TIMEOUT)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    res.eq("%s: report.json mode" % name, rep.get("mode"), "light")
    invs = invocations(rep)
    res.eq("%s: host printed one REPORT per invoke" % name, len(ids), len(sizes))
    res.eq("%s: every invocation found, with the host's request ids, in order" % name,
           [i.get("request_id") for i in invs], ids)
    for k, inv in enumerate(invs[:len(sizes)]):
        what = "%s: invocation %d (%d MiB)" % (name, k + 1, sizes[k])
        print("INFO %s: peak RSS %d, VmHWM reset at start %d, diff %+d bytes"
              % (what, inv["rss_peak_bytes"], truth[k], inv["rss_peak_bytes"] - truth[k]), flush=True)
        res.eq(what + ": heap figures absent (null), not zero",
               [inv.get(k, "missing") for k in ("heap_peak_bytes", "alloc_count", "top_stacks_at_peak")],
               [None, None, None])
        res.true(what + ": true peak RSS agrees with VmHWM reset at its start (within 1 MiB)",
                 abs(inv["rss_peak_bytes"] - truth[k]) <= TOLERANCE,
                 "peaktrace %d, VmHWM %d" % (inv["rss_peak_bytes"], truth[k]))


def run_oom(ctx):
    """The OOM post-mortem without allocator probes: an invocation killed at the 96 MB limit."""
    from harness import expand_report
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    name = "light/lambda oom kill"
    if not res.wanted(name):
        return
    tools = need_host(res, name, build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    port = free_ports(2)
    started = host_runtime(res, name, build, tmp, "light-oom", 96, port, [fn])
    if not started:
        return
    h, rt = started
    outdir = os.path.join(tmp, "light-oom")
    p = attach_traced(res, name, pt, rt, ["--light", "-o", outdir], h)
    if not p:
        return
    run([invoke, "--port", str(port + 1), json.dumps({"mb": 8})], timeout=TIMEOUT)
    run([invoke, "--port", str(port + 1), json.dumps({"mb": 256})], timeout=TIMEOUT)
    rc = p.wait(TIMEOUT)
    ids = report_ids(h.out + h.err)
    h.signal(signal.SIGTERM)
    h.wait(TIMEOUT)
    res.eq(name + ": peaktrace ends with its target", rc, 0)
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = expand_report(json.load(f))
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except (OSError, ValueError) as e:
        res.fail(name, "no report: %s" % e)
        return
    res.eq(name + ": target killed by SIGKILL", rep["target"].get("exit_signal"), 9)
    invs = invocations(rep)
    if not res.eq(name + ": two invocations", len(invs), 2):
        return
    res.eq(name + ": outcomes", [i["outcome"] for i in invs], ["response", "killed"])
    res.eq(name + ": the killed one is named by the host's request id", invs[1]["request_id"],
           ids[1] if len(ids) > 1 else None)
    traj = invs[1].get("rss_trajectory") or []
    res.true(name + ": RSS trajectory climbs to the 96 MB limit",
             len(traj) >= 10 and traj[-1][1] >= 80 * 1048576 and traj[-1][1] > traj[0][1],
             "trajectory %s" % traj[-3:])
    top = (invs[1].get("rss_top_stacks_at_peak") or [{}])[0]
    funcs = [fr.get("func", "") for fr in top.get("frames", [])]
    res.true(name + ": its top RSS stack at the peak is the memset's, holding >= 64 MiB",
             any("memset" in f for f in funcs) and top.get("rss_bytes", 0) >= 64 * 1048576,
             "%r %r" % (top.get("rss_bytes"), funcs[:4]))
    res.true(name + ": the text's KILLED block says the heap was not traced and shows RSS stacks",
             re.search(r"^KILLED during invocation 2 .*peak heap not traced \(--light\)$", txt, re.M) is not None
             and "resident pages, by the stack whose fault made them resident" in txt,
             [l for l in txt.splitlines() if l.startswith("KILLED")])


def resident_host(ctx, name, tag):
    """The bundled host running tools/functions/python/resident.py under Debian's python3:
    (the invoke tool, the host's port, (host, runtime)), or None (skipped or failed: said)."""
    res, build, tmp = ctx.res, ctx.build_arg, ctx.tmp
    py = "/usr/bin/python3"
    fdir = os.path.normpath(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                         "..", "tools", "functions", "python"))
    tools = need_host(res, name, build, "invoke", py, why="%s or no %s" % (NOT_BUILT, py))
    if not tools:
        return None
    invoke = tools[1]
    port = free_ports(2)
    started = host_runtime(res, name, build, tmp, tag, 1024, port, [py, os.path.join(fdir, "bootstrap.py")],
                           ["--handler", "resident.keep", "--task-root", fdir])
    return (invoke, port, started) if started else None


def run_resident(ctx, light=True):
    """Resident memory by allocator at each invocation's end, --light: tools/functions/python/
    resident.py under the bundled host, attached with --light, invoked with nothing, 400,000
    kept short strings (pymalloc only), then 20,000 kept bytearray(1000) (glibc's main arena,
    plus their small objects in pymalloc), 0.3 s apart (the reading is taken 50 ms after an end).
    Truth: the handler's own RssAnon change while it ran and CPython's own count of its
    arenas (sys._debugmallocstats). light False: the same without --light (the reading is
    made in both modes)."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    name = "light/lambda resident at end" + ("" if light else "/full mode")
    if not res.wanted(name):
        return
    started = resident_host(ctx, name, "light-resident" + ("" if light else "-full"))
    if not started:
        return
    invoke, port, started = started
    h, rt = started
    time.sleep(1.0)   # the runtime is waiting in its first GET .../next
    outdir = os.path.join(tmp, "light-resident" + ("" if light else "-full"))
    p = attach_traced(res, name, pt, rt, (["--light"] if light else []) + ["-o", outdir], h)
    if not p:
        return
    events = [{}, {"strings": 400000}, {"buffers": 20000}]
    answers = invoke_events(res, name, invoke, port, events, pause=0.3, bad={})
    got = stop_attached(res, name, p, h, outdir, len(events))
    if got is None:
        return
    _, invs = got
    ra = [i.get("resident_at_end") for i in invs]
    if not res.true("%s: resident_at_end in every invocation" % name,
                    all(isinstance(x, dict) for x in ra), repr(ra)[:300]):
        return
    for k, (x, a) in enumerate(zip(ra, answers)):
        print("INFO %s: invocation %d: malloc heap %d (main %d, thread arenas %d), pymalloc arenas "
              "%d in %d pools; the handler's RssAnon change %r, CPython's arenas %r"
              % (name, k + 1, x["malloc_heap_bytes"], x["malloc_heap_main_arena_bytes"],
                 x["malloc_heap_thread_arenas_bytes"], x["pymalloc_arenas_bytes"], x["pymalloc_pools"],
                 a.get("rss_anon_delta"), a.get("pymalloc_arenas")), flush=True)
        arenas = (a.get("pymalloc_arenas") or 0) * (a.get("arena_bytes") or 0)
        res.true("%s: invocation %d: pymalloc arenas resident <= CPython's arenas x their size" % (name, k + 1),
                 0 < x["pymalloc_arenas_bytes"] <= arenas, "%d > %d" % (x["pymalloc_arenas_bytes"], arenas))
        res.eq("%s: invocation %d: malloc heap = main + thread arenas" % (name, k + 1),
               x["malloc_heap_bytes"], x["malloc_heap_main_arena_bytes"] + x["malloc_heap_thread_arenas_bytes"])
        res.eq("%s: invocation %d: nothing past the scan budget" % (name, k + 1), x["unscanned_bytes"], 0)
        if not light:
            # The arena tables name each arena by the malloc_state address the kernel saw in
            # chunk headers; resident.c finds heaps from the mappings alone: the same bytes.
            res.eq("%s: invocation %d: malloc heap == the arena accounting's resident bytes"
                   % (name, k + 1), x["malloc_heap_bytes"],
                   (invs[k].get("arenas") or {}).get("resident_bytes"))
    dpy = ra[1]["pymalloc_arenas_bytes"] - ra[0]["pymalloc_arenas_bytes"]
    dheap = ra[1]["malloc_heap_bytes"] - ra[0]["malloc_heap_bytes"]
    grew = answers[1].get("rss_anon_delta") or 0
    res.true("%s: strings: pymalloc arenas grew by the handler's RssAnon growth (within %d pages)"
             % (name, SLACK_PAGES), abs(dpy - grew) <= SLACK_PAGES * 4096, "pymalloc +%d, RssAnon +%d" % (dpy, grew))
    res.true("%s: strings: the malloc heap did not grow (within 1 MiB)" % name,
             abs(dheap) <= MIB, "malloc heap %+d" % dheap)
    arenas = answers[1].get("pymalloc_arenas", 0) * answers[1].get("arena_bytes", 0)
    res.true("%s: strings: pymalloc arenas resident >= 90%% of CPython's arenas x size" % name,
             ra[1]["pymalloc_arenas_bytes"] >= 0.9 * arenas, "%d of %d" % (ra[1]["pymalloc_arenas_bytes"], arenas))
    dpy = ra[2]["pymalloc_arenas_bytes"] - ra[1]["pymalloc_arenas_bytes"]
    dheap = ra[2]["malloc_heap_bytes"] - ra[1]["malloc_heap_bytes"]
    grew = answers[2].get("rss_anon_delta") or 0
    res.true("%s: buffers: malloc heap + pymalloc growth == the handler's RssAnon growth (within %d pages)"
             % (name, SLACK_PAGES), abs(dpy + dheap - grew) <= SLACK_PAGES * 4096, "heap %+d, pymalloc %+d, RssAnon %+d" % (dheap, dpy, grew))
    res.true("%s: buffers: the malloc heap grew by at least 20,000 x 1008-byte chunks" % name,
             dheap >= 20000 * 1008, "malloc heap %+d" % dheap)
    txt = read_text(os.path.join(outdir, "report.txt"))
    res.eq("%s: the text's INVOCATIONS has a resident line per invocation" % name,
           len(re.findall(r"^\s+\d+\s+malloc heap .* pymalloc arenas .* pools\)$", txt, re.M)), len(events))
    try:
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            jl = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError):
        jl = []
    res.eq("%s: invocations.jsonl has resident_at_end" % name,
           [bool(x.get("resident_at_end")) for x in jl if x.get("seq")], [True] * len(events))


def run_resident_burst(ctx):
    """Back-to-back invocations, --light: the reading of resident memory at an invocation's end
    is due 50 ms after it; when the next invocation starts first, nothing is read (reading the
    mappings beside that invocation would slow it) and the record says so with the gap. Eight
    invocations fired one after the other (each the `invoke` tool's own round trip, a few ms
    apart), then a pause: the last one is read. Truth: the gaps the records give (each skip
    must have one under 50 ms) and the fact that a burst of eight has at least one such gap."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    name = "light/lambda resident at end/back to back"
    if not res.wanted(name):
        return
    started = resident_host(ctx, name, "light-burst")
    if not started:
        return
    invoke, port, started = started
    h, rt = started
    time.sleep(1.0)   # the runtime is waiting in its first GET .../next
    outdir = os.path.join(tmp, "light-burst")
    p = attach_traced(res, name, pt, rt, ["--light", "-o", outdir], h)
    if not p:
        return
    events = [{}] * 8
    invoke_events(res, name, invoke, port, events, bad={})
    time.sleep(0.3)   # past the last one's reading
    got = stop_attached(res, name, p, h, outdir, len(events))
    if got is None:
        return
    rep, invs = got
    # The text counts every row (the attached phase's too: its reading is due as an
    # invocation's); the checks below are on the invocations.
    all_skipped = sum(1 for i in rep.get("invocations", []) if i.get("end_reading_skipped_gap_ns") is not None)
    invs = [i for i in invs if i.get("seq")]
    read = [isinstance(i.get("resident_at_end"), dict) for i in invs]
    gaps = [i.get("end_reading_skipped_gap_ns") for i in invs]
    print("INFO %s: read %r, skipped with gaps (ns) %r" % (name, read, gaps), flush=True)
    res.eq("%s: each invocation either read or skipped with its gap" % name,
           [r != (g is not None) for r, g in zip(read, gaps)], [True] * len(invs))
    skipped = [g for g in gaps if g is not None]
    res.true("%s: every skip had the next invocation start within 50 ms" % name,
             all(0 <= g < 50000000 for g in skipped), repr(skipped))
    res.true("%s: a burst of %d has skips (none read beside the next invocation)" % (name, len(events)),
             len(skipped) >= 1, repr(gaps))
    res.true("%s: the last one (followed by a pause) is read" % name, bool(read) and read[-1], repr(read))
    txt = read_text(os.path.join(outdir, "report.txt"))
    m = re.search(r"resident at the end not read after (\d+) invocations?: the next began", txt)
    res.eq("%s: the text counts the skipped readings" % name, int(m.group(1)) if m else 0, all_skipped)


def run_resident_paced(ctx):
    """The reading at an invocation's end is not held up by the poll loop: tools/functions/arena
    (threads, each faulting its own thread arena's heap) under the bundled host, attached in
    full mode, eight invocations 0.2 s apart. Each one's reading is due 50 ms after its end,
    long before the next: every one must be read (resident_at_end), none skipped, none of the
    invocations overwritten in the kernel's two-slot buffer, every outcome the response the host
    answered. Before, the look at each new RSS stack's memory kind scanned a thread arena's
    64 MiB heap for glibc chunk headers page by page (a million reads of /proc/PID/mem for
    these eight): readings were skipped with gaps of ~205 ms and one invocation overwritten."""
    res, pt, tmp, build = ctx.res, ctx.pt, ctx.tmp, ctx.build_arg
    name = "light/lambda resident at end/paced arena function"
    if not res.wanted(name):
        return
    tools = need_host(res, name, build, "functions/arena", "invoke")
    if not tools:
        return
    _, fn, invoke = tools
    port = free_ports(2)
    got = host_attached(res, name, build, tmp, pt, "arena-paced", 256, port, [fn])
    if not got:
        return
    h, _, p, outdir = got
    events = [{}] * 8
    invoke_events(res, name, invoke, port, events, pause=0.2, bad={})
    time.sleep(0.2)
    got = stop_attached(res, name, p, h, outdir, len(events))
    if got is None:
        return
    rep, invs = got
    res.eq("%s: no invocation overwritten" % name, (rep.get("errors") or {}).get("invocations_overwritten", 0), 0)
    res.eq("%s: every outcome a response" % name, [i.get("outcome") for i in invs], ["response"] * len(events))
    res.eq("%s: every end read, none skipped (0.2 s apart)" % name,
           [(isinstance(i.get("resident_at_end"), dict), i.get("end_reading_skipped_gap_ns")) for i in invs],
           [(True, None)] * len(events))


def memo_split(lines, fn_rx, main_rx):
    """Bytes of rss.folded's stacks through a frame matching fn_rx called from one matching
    main_rx (the workload's own call, not a start-up stack), and those stacks' frames below
    that frame (the faulting native frames)."""
    held, below = 0, set()
    for frames, v in lines:
        idx = [i for i, f in enumerate(frames) if re.fullmatch(fn_rx, f)]
        if idx and any(re.fullmatch(main_rx, f) for f in frames[:idx[0]]):
            held += v
            below.add(tuple(frames[idx[0] + 1:]))
    return held, below


def run_memo(ctx, flavor):
    """Two call paths that fault from the same native frame at the same instruction, rsp and
    rbp (wl_memo.c's fill_a/fill_b over touch; wl_memo.py's two Python functions over the same
    interpreter frames and the same Python function touch), alternating fault by fault: each holds exactly the bytes it wrote
    (the workload's own count; their sum is RssAnon's growth). A stack memo keyed on what does
    not tell the paths apart would give one path's pages to the other."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    prefix = "light/memo/%s" % flavor
    if not res.wanted(prefix):
        return
    log = os.path.join(tmp, "light-memo-%s.log" % flavor)
    outdir = os.path.join(tmp, "light-memo-%s" % flavor)
    if flavor == "python":
        py = "/usr/bin/python3"
        if not os.access(py, os.X_OK):
            res.skip(prefix, "no %s" % py)
            return
        r = trace_launch(pt, py, [os.path.join(WORKLOAD_SRC, "wl_memo.py"), log], outdir,
                         extra=("--light", "--top", "1000"))
        fns = {"fill_a": r"wl_memo:fill_a:\d+", "fill_b": r"wl_memo:fill_b:\d+"}
        main_rx = r"wl_memo:main:\d+"
    else:
        wl = ctx.built.get("wl_memo", {}).get(flavor)
        if not wl:
            res.fail(prefix, "wl_memo not built")
            return
        r = trace_launch(pt, wl, [log], outdir, extra=("--light", "--top", "1000"))
        fns = {"fill_a": "fill_a", "fill_b": "fill_b"}
        main_rx = "main"
    if r.why:
        res.fail(prefix, r.why)
        return
    res.eq("%s: peaktrace exit status" % prefix, r.rc, 0)
    truth = read_truth(res, prefix, log, "fill_b")
    if truth is None:
        return
    res.eq("%s: the workload's pages all became resident (RssAnon grew by their sum)" % prefix,
           truth.get("grew"), truth.get("fill_a", 0) + truth.get("fill_b", 0))
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    leaves = {}
    for fn, rx in fns.items():
        held, leaves[fn] = memo_split(lines, rx, main_rx)
        res.eq("%s: %s holds exactly the bytes it wrote" % (prefix, fn), held, truth.get(fn))
    res.true("%s: both fault from the same native frames below them" % prefix,
             len(leaves["fill_a"]) == 1 and leaves["fill_a"] == leaves["fill_b"],
             "below fill_a %r, below fill_b %r" % (leaves["fill_a"], leaves["fill_b"]))
    if flavor != "python":
        # The faulting instruction is frame 0: named by itself, not by the byte before it (at
        # touch's first instruction, nofp, that byte is the previous function's).
        res.eq("%s: the faulting frame is touch, by its own address" % prefix,
               sorted(leaves["fill_a"] | leaves["fill_b"]), [("touch",)])
    rep = load_report(res, prefix, outdir)
    if rep is not None:
        check_identity(res, prefix, rep.get("rss_attribution") or {}, "at_peak")


def run_section(ctx):
    for flavor in ("fp", "nofp", "python"):
        run_memo(ctx, flavor)
    run_lambda(ctx)
    run_oom(ctx)
    run_resident(ctx)
    run_resident(ctx, light=False)
    run_resident_burst(ctx)
    run_resident_paced(ctx)
    wl = ctx.built.get("wl_rss", {}).get("fp")
    for mode in ("launch", "attach"):
        run_wl(ctx, wl, mode, True)
    run_wl(ctx, wl, "attach", False)
    for mode in ("launch", "attach"):
        run_python(ctx, mode, light=True)

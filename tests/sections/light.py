# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""light: --light, no allocator probes, a section of tests/run.py.

tests/workloads/wl_rss.c (see rss.py) with --light, THP as this machine has it, launch and
attach: each function's anonymous bytes at the RSS peak (rss.folded) and at the end
(report.json rss_attribution) match the workload's own RssAnon deltas within 8 pages, as
without --light; report.json says "mode": "light", lists no probes, has no heap figures
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
import random
import re
import signal
import time

from harness import TIMEOUT, run
from tracing import load_report, trace_attach, trace_launch
from sections.rss import SCENARIOS, check_identity, folded, near, read_log, through
from sections.aws_lambda import (TOLERANCE, attach_traced, clear_hwm, host_runtime, invocations, stop_host,
                                 vmhwm)

HEAP_FILES = ("peak.folded", "live.folded", "alloc.folded", "peak.svg", "live.svg", "alloc.svg",
              "peak.speedscope.json", "live.speedscope.json", "alloc.speedscope.json",
              "leaked.folded", "leaked.svg", "profile.pb.gz")


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

    extra = ("--top", "100") + (("--light",) if light else ())
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
    truth = read_log(log)
    if not res.true("%s: workload log" % prefix, "end_anon" in truth, "incomplete: %r" % truth):
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
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError:
        txt = ""
    first = "\n".join(txt.splitlines()[:8])
    res.true("%s: the text's first screen says light mode and what it lacks" % prefix,
             "LIGHT MODE" in first and "absent, not zero" in first, first)
    ra = rep.get("rss_attribution")
    if not res.true("%s: report.json rss_attribution" % prefix, isinstance(ra, dict), "missing"):
        return
    try:
        lines = folded(os.path.join(outdir, "rss.folded"))
    except OSError as e:
        res.fail("%s: rss.folded" % prefix, str(e))
        return
    ends = {}
    for st in ra.get("top_stacks", []):
        for fn in SCENARIOS:
            if any(fr.get("func") == fn for fr in st.get("frames", [])):
                ends[fn] = ends.get(fn, 0) + st.get("rss_bytes", 0)
    for fn, (name, rel) in SCENARIOS.items():
        near(res, "%s: %s at the peak" % (prefix, fn), through(lines, re.escape(fn)), truth.get(name))
        near(res, "%s: %s at the end" % (prefix, fn), ends.get(fn, 0),
             truth.get(name, 0) + sum(truth.get(k, 0) for k in rel))
    pk, end = ra.get("at_peak", {}), ra.get("at_end", {})
    near(res, "%s: anon RSS at the peak == the workload's RssAnon then" % prefix,
         pk.get("anon_bytes"), truth.get("peak_anon"))
    near(res, "%s: anon RSS at the end == the workload's RssAnon then" % prefix,
         end.get("anon_bytes"), truth.get("end_anon"))
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
    host = os.path.join(build, "tools", "lambda-host")
    fn = os.path.join(build, "tools", "functions", "oom")
    invoke = os.path.join(build, "tools", "invoke")
    if not all(os.access(p, os.X_OK) for p in (host, fn, invoke)):
        res.skip(name, "lambda-host not built (make lambda-host)")
        return
    port = 27100 + random.randint(0, 1500) * 2
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
    from sections.aws_lambda import report_ids
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    name = "light/lambda oom kill"
    if not res.wanted(name):
        return
    host = os.path.join(build, "tools", "lambda-host")
    fn = os.path.join(build, "tools", "functions", "oom")
    invoke = os.path.join(build, "tools", "invoke")
    if not all(os.access(p, os.X_OK) for p in (host, fn, invoke)):
        res.skip(name, "lambda-host not built (make lambda-host)")
        return
    port = 30200 + random.randint(0, 1500) * 2
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
             and "stacks holding anonymous RSS at its peak" in txt,
             [l for l in txt.splitlines() if l.startswith("KILLED")])


def run_section(ctx):
    run_lambda(ctx)
    run_oom(ctx)
    wl = ctx.built.get("wl_rss", {}).get("fp")
    for mode in ("launch", "attach"):
        run_wl(ctx, wl, mode, True)
    run_wl(ctx, wl, "attach", False)

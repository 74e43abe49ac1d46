# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rss: RSS attribution by page (bpf/rss.bpf.h), a section of tests/run.py.

tests/workloads/wl_rss.c makes anonymous pages resident from known functions (malloc + memset,
8 MiB of 1 KiB mallocs on the main thread and on another (main arena, thread arena), mmap + touch, a thread's stack, mremap grow/move, read() into a fresh buffer, MAP_POPULATE),
then releases some (madvise DONTNEED of half a region, munmap, the thread's exit), and logs
its own RssAnon deltas (/proc/self/status) for each: the truth. For THP on (madvise(
MADV_HUGEPAGE), this machine's mode) and off (PR_SET_THP_DISABLE), launch and attach:
  - each function's anonymous bytes at the RSS peak (rss.folded, lines through that frame)
    and at the end (report.json rss_attribution.top_stacks[].rss_bytes) match its own
    figures within PAGES pages;
  - the anonymous RSS peaktrace reports at the peak and at the end matches the workload's own
    RssAnon then; the MAP_POPULATE bytes are in the "populated without a fault" bucket, the
    pages resident before attaching in "resident before tracing";
  - the buckets explain the figure: attributed + buckets - still-attributed-released == anon
    (unexplained_bytes 0), and rss.folded's total is the whole RSS at the peak (anonymous
    stacks and buckets, file and shmem objects and theirs: the rsskinds section);
  - profile.pb.gz's rss_peak_space per function equals rss.folded's and the workload's figure
    (go tool pprof and tests/pprofread.py's reader);
  - memory kinds (launch mode): each function's pages under its kind's root frame (KINDS).
Per invocation: the bundled C function tools/functions/oom (malloc(N MiB) + memset, then free)
under tools/lambda-host, peaktrace attached, invoked with N = 16, 128, 64, 8: each invocation's
rss_top_stacks_at_peak[0] is the memset's stack, holding N MiB (within PAGES pages) at that
invocation's own RSS peak although the previous invocations' pages are gone by then, and so is
its invocation-N.rss.folded (--per-invocation).
Then Debian's python3 (tests/workloads/wl_rss.py): a ~50 MiB dict of short strings built in
build_dict (pymalloc arenas, never malloc) and a 32 MiB bytearray in build_buffer: at the peak
the Python frames by those names hold at least 90% of what each grew (its own RssAnon delta).
Its first screen (the live heap is under half the RSS): WHO HELD THE RSS beside WHO HELD IT, both
naming build_buffer (a Python frame past the interpreter's) with what it holds, the RSS block
build_dict under [CPython pymalloc arenas]; report.html's summary data the same.
"""
import json
import os
import re

from harness import free_ports
from lambdafix import attach_traced, host_runtime, need_host, stop_attached
from rsscheck import (SCENARIOS, MiB, check_functions, check_identity, check_pprof, check_thp_truth, folded, near,
                      read_folded, read_text, run_python, through, traced_truth)
from tracing import load_report, trace_attach, trace_launch


def run_c(ctx, wl, thp, mode):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    prefix = "rss/wl_rss/%s/%s" % (thp, mode)
    if not res.wanted(prefix):
        return
    if not wl:
        res.fail(prefix, "wl_rss not built")
        return
    outdir = os.path.join(tmp, "rss-%s-%s" % (thp, mode))
    log = os.path.join(tmp, "rss-%s-%s.log" % (thp, mode))
    trace = trace_launch if mode == "launch" else trace_attach
    # --top 1000: every stack in top_stacks (the thread's 64 recursion stacks and the small
    # ones), so the per-function sums at the end are whole.
    r = trace(pt, wl, [log, thp], outdir, extra=("--top", "1000"))
    truth = traced_truth(res, prefix, r, log, "end_anon")
    if truth is None:
        return
    check_thp_truth(res, prefix, thp, truth)
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ra = rep.get("rss_attribution")
    if not res.true("%s: report.json rss_attribution" % prefix, isinstance(ra, dict), "missing"):
        return
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    check_functions(res, prefix, lines, ra, truth)
    pk = ra.get("at_peak", {})
    near(res, "%s: MAP_POPULATE in populated_without_fault_bytes" % prefix,
         pk.get("populated_without_fault_bytes"), truth.get("populate"))
    if mode == "attach":
        near(res, "%s: resident_before_bytes == RssAnon when attached" % prefix,
             pk.get("resident_before_bytes"), truth.get("start_anon"))
    check_identity(res, prefix, ra, "at_peak")
    check_identity(res, prefix, ra, "at_end")
    # file and shmem objects are root frames too (rsskinds section): the whole RSS at the peak
    res.eq("%s: rss.folded total == the whole RSS at the peak" % prefix,
           sum(v for _, v in lines), ra.get("rss_at_peak_bytes"))
    check_pprof(ctx, prefix, outdir, lines, truth)
    check_kinds(res, prefix, mode, outdir, lines, truth, ra)


# function -> the memory kind its pages are in (rss.folded's root frame "[kind: ...]")
KINDS = {
    "scn_malloc_memset": "malloc heap: mmapped chunk",
    "scn_mmap_touch": "anonymous mmap",
    "scn_stack_deep": "thread stack",
    "scn_munmap_touch": "unmapped by the end",
    "scn_heap_small": "malloc heap: main arena",
    "scn_arena_small": "malloc heap: thread arena",
}


def check_kinds(res, prefix, mode, outdir, lines, truth, ra):
    """Memory kinds (launch mode: the maps read at the exit stop): each function's bytes at the
    peak under its kind's root frame in rss.folded (the workload's own figure), the JSON by-kind
    sum equal to the attributed bytes at the peak, and the by-kind line in the text report.
    Attach mode: wl_rss has exited when tracing ends, its maps gone: the kinds are told against
    the maps kept while it ran (kinds_from), and what they cannot tell is "not known", never
    another kind: each function's pages are under its own kind or "not known"."""
    text = read_text(os.path.join(outdir, "report.txt"))
    if mode == "attach":
        res.eq("%s: kinds: report.json kinds_from (the target exited: the maps kept while it ran)" % prefix,
               (ra.get("kinds_read"), ra.get("kinds_from")), (True, "maps_kept_while_running"))
        res.true("%s: kinds: the text report says so" % prefix,
                 "told against its maps as last read while it ran" in text, "no such line")
        for fn, kind in KINDS.items():
            # munmap_touch unmaps its pages just before the end: maps kept before that show
            # them where they were held, in an anonymous mmap.
            ok = ("[kind: %s]" % kind, "[kind: not known]") + \
                (("[kind: anonymous mmap]",) if fn == "scn_munmap_touch" else ())
            wrong = sorted({f[0] for f, v in lines if fn in f and f[0] not in ok})
            res.eq("%s: kinds: %s's pages are %s or not known" % (prefix, fn, kind), wrong, [])
        return
    for fn, kind in KINDS.items():
        got = sum(v for frames, v in lines
                  if frames[0] == "[kind: %s]" % kind and fn in frames)
        near(res, "%s: kinds: %s's pages at the peak are %s" % (prefix, fn, kind), got,
             truth.get(KIND_LOG[fn]))
    res.eq("%s: kinds: every attributed stack has a kind root frame" % prefix,
           [f for f, _ in lines if not f[0].startswith("[")], [])
    res.eq("%s: kinds: report.json kinds_read" % prefix, ra.get("kinds_read"), True)
    byk = ra.get("by_kind_at_peak") or {}
    res.eq("%s: kinds: by_kind_at_peak sums to attributed_bytes" % prefix, sum(byk.values()),
           (ra.get("at_peak") or {}).get("attributed_bytes"))
    near(res, "%s: kinds: by_kind_at_peak thread_stack_bytes >= the thread's own" % prefix,
         min(byk.get("thread_stack_bytes", 0), truth.get("stack_deep", 0)), truth.get("stack_deep"))
    res.true("%s: kinds: the text report's by-kind line" % prefix,
             re.search(r"by memory kind at the RSS peak .*malloc heap: mmapped chunk 6[34]\.\d+ MiB",
                       text) is not None, "no by-kind line")


KIND_LOG = {fn: SCENARIOS[fn][0] for fn in KINDS}


def run_lambda(ctx):
    import time
    from harness import TIMEOUT, run
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    name = "rss/lambda oom per invocation"
    if not res.wanted(name):
        return
    tools = need_host(res, name, build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    port = free_ports(2)
    started = host_runtime(res, name, build, tmp, "rss-lambda", 512, port, [fn])
    if not started:
        return
    h, rt = started
    outdir = os.path.join(tmp, "rss-lambda")
    p = attach_traced(res, name, pt, rt, ["-o", outdir, "--per-invocation"], h)
    if not p:
        return
    sizes = [16, 128, 64, 8]
    for mb in sizes:
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=TIMEOUT)
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    time.sleep(0.3)
    got = stop_attached(res, name, p, h, outdir, len(sizes))
    if got is None:
        return
    _, invs = got
    for mb, inv in zip(sizes, invs):
        top = inv.get("rss_top_stacks_at_peak") or [{}]
        funcs = [fr.get("func", "") for fr in top[0].get("frames", [])]
        res.true("%s: %d MiB: the top stack is the memset's" % (name, mb),
                 any("memset" in f for f in funcs), "frames %r" % funcs[:4])
        near(res, "%s: %d MiB: held at the invocation's RSS peak" % (name, mb),
             top[0].get("rss_bytes"), mb * MiB)
        try:
            lines = folded(os.path.join(outdir, "invocation-%d.rss.folded" % inv.get("seq", -1)))
        except OSError as e:
            res.fail("%s: %d MiB: invocation-N.rss.folded" % (name, mb), str(e))
            continue
        near(res, "%s: %d MiB: invocation-N.rss.folded through memset" % (name, mb),
             through(lines, r".*memset.*"), mb * MiB)


# "faults counted once": wl_pagefaults makes N new one-page regions, each written once. Against a run
# with no region, the report's "page faults seen" grows by the workload's own count of those
# faults (getrusage: the kernel's, once per completed fault), within FAULTS_TOL of it, and so does
# "made anonymous pages resident". Where faults are traced at handle_mm_fault's entry (arm64),
# a fault retried there (bpf/fault.h) would count twice otherwise; Debian's arm64 6.12 and 7.3
# retried none of these (2 calls of 39,030 in a whole wl_rss run), x86 counts exceptions:
# x86 6.18 gave +996 for 1,000, the startup's own faults varying by a few.
FAULTS_N = 2000
FAULTS_TOL = 0.02


def run_faults(ctx):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    name = "rss/faults counted once"
    if not res.wanted(name):
        return
    wl = ctx.built.get("wl_pagefaults", {}).get("fp")
    if not wl:
        res.fail(name, "wl_pagefaults not built")
        return
    got = {}
    for n in (0, FAULTS_N):
        outdir = os.path.join(tmp, "rss-faults-%d" % n)
        log = os.path.join(tmp, "rss-faults-%d.log" % n)
        truth = traced_truth(res, "%s: %d regions" % (name, n), trace_launch(pt, wl, [log, str(n)], outdir),
                             log, "own_faults")
        rep = load_report(res, "%s: %d regions" % (name, n), outdir) if truth else None
        ra = (rep or {}).get("rss_attribution") or {}
        if truth is None or not res.true("%s: %d regions: faults in report.json" % (name, n),
                                         isinstance(ra.get("faults"), int), "missing: %r" % ra):
            return
        got[n] = (ra["faults"], ra.get("faults_resident", 0), truth["own_faults"])
    own = got[FAULTS_N][2] - got[0][2]
    res.true("%s: the workload's own count is its regions" % name, abs(own - FAULTS_N) <= FAULTS_N * FAULTS_TOL,
             "getrusage says %d faults for %d regions" % (own, FAULTS_N))
    for i, what in ((0, "page faults seen"), (1, "faults that made anonymous pages resident")):
        d = got[FAULTS_N][i] - got[0][i]
        res.true("%s: %s grow by the workload's own count" % (name, what), abs(d - own) <= own * FAULTS_TOL,
                 "%d more with %d regions (%d against %d), its own count %d" %
                 (d, FAULTS_N, got[FAULTS_N][i], got[0][i], own))


def run_section(ctx):
    why = ctx.rss_counters_batched()
    if why:
        for name in ["rss/lambda oom per invocation", "rss/faults counted once"] + ["rss/wl_rss/%s/%s" % (t, m) for t in ("thp", "nothp")
                                      for m in ("launch", "attach")] + \
                ["rss/python/%s" % m for m in ("launch", "attach")]:
            if ctx.res.wanted(name):
                ctx.res.skip(name, why)
        return
    run_lambda(ctx)
    run_faults(ctx)
    wl = ctx.built.get("wl_rss", {}).get("fp")
    for thp in ("thp", "nothp"):
        for mode in ("launch", "attach"):
            run_c(ctx, wl, thp, mode)
    for mode in ("launch", "attach"):
        run_python(ctx, mode)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# coldstart: the unwind table cache and --fast-start, a section of tests/run.py.
#
# The workload is wl_unwind (-fomit-frame-pointer: only the .eh_frame tables give its stacks),
# whose call chains and figures tests/cases/unwind.json states (main -> level1 -> level2 ->
# site_* -> glibc/libstdc++, down to _start). The truths: that case's expected stacks, and the
# stacks of the run that built every table itself.
#   coldstart/cache/launch       a cold cache (an empty --cache-dir): tables built and written;
#                                warm: every table read from the cache, the same stacks as the
#                                run that built them, the case's stacks exact; every cache file
#                                corrupted: each one rejected, counted, rebuilt, the same
#                                stacks; --no-cache: the same stacks, no cache in the report
#   coldstart/fast-start/launch  --fast-start on a cold cache: the command is not held for the
#                                tables, the stacks taken before them are counted
#                                (unwind_not_yet_covered) and shown in DATA LOSS AND DISTORTION;
#                                warm (after a run that cached every table), none, and the
#                                case's stacks exact
import os
import re
import signal
import time

import casefile
from harness import READY_MARK, TIMEOUT, short
from tracing import load_report, trace_launch


def stack_set(rep):
    """Every stack as (frames, figures): what the unwinder made of each allocation."""
    out = set()
    for s in rep.get("stacks", []):
        out.add((tuple(f.get("func", "") for f in s.get("frames", [])),
                 s.get("alloc_count"), s.get("alloc_bytes"), s.get("free_count"), s.get("live_bytes")))
    return out


def unwind_case(ctx):
    for c in ctx.cases:
        if c["name"] == "unwind":
            return c
    return None


def traced(res, ctx, name, wl, outdir, extra, args=(), on_tracing=None):
    r = trace_launch(ctx.pt, wl, list(args), outdir, extra=extra, on_tracing=on_tracing)
    if r.why:
        res.fail(name, r.why)
        return None
    if not res.eq(name + ": peaktrace exit status", r.rc, 0):
        print("  stderr: " + short(r.err, 1000))
    rep = load_report(res, name, outdir)
    if rep is not None:
        with open(os.path.join(outdir, "report.txt")) as f:
            rep["_text"] = f.read()
    return rep


def cache_of(rep):
    return ((rep or {}).get("startup") or {}).get("unwind_cache")


def check_case(res, name, rep, case):
    expect = casefile.case_expect(case, "launch")
    casefile.check_figures(res, name, rep, expect, "launch", "nofp")
    res.eq(name + ": no stack taken before its tables (unwind_not_yet_covered)",
           rep["errors"].get("unwind_not_yet_covered"), 0)


def cache_launch(res, ctx, wl, case):
    name = "coldstart/cache/launch"
    cdir = os.path.join(ctx.tmp, "uwcache")
    os.makedirs(cdir, mode=0o700)
    runs = {}
    for tag, extra in [("cold", ("--cache-dir", cdir)), ("warm", ("--cache-dir", cdir))]:
        runs[tag] = traced(res, ctx, "%s: %s run" % (name, tag), wl, os.path.join(ctx.tmp, "cs-" + tag), extra)
        if runs[tag] is None:
            return
    cold, warm = cache_of(runs["cold"]), cache_of(runs["warm"])
    files = sorted(f for f in os.listdir(cdir) if f.endswith(".uwt"))
    res.true(name + ": cold: every table built, none read", cold and cold["hits"] == 0 and cold["misses"] > 0,
             "cache %s" % cold)
    res.eq(name + ": cold: each built table written, one file each", (cold or {}).get("written"), len(files))
    res.true(name + ": warm: every table read from the cache, none built",
             warm and warm["hits"] == len(files) and warm["misses"] == 0 and warm["rejected"] == 0,
             "cache %s, %d files" % (warm, len(files)))
    res.true(name + ": the report says so", "unwind table cache: %d tables read, 0 built" % len(files)
             in runs["warm"]["_text"], short(runs["warm"]["_text"][:600]))
    res.eq(name + ": warm: the same stacks as the run that built the tables",
           sorted(stack_set(runs["warm"]) ^ stack_set(runs["cold"])), [])
    check_case(res, name + ": warm run", runs["warm"], case)
    # Every file corrupted (a row's byte flipped): rejected one by one, rebuilt, same stacks.
    for f in files:
        p = os.path.join(cdir, f)
        with open(p, "r+b") as fh:
            fh.seek(-3, os.SEEK_END)
            b = fh.read(1)
            fh.seek(-3, os.SEEK_END)
            fh.write(bytes([b[0] ^ 0x41]))
    bad = traced(res, ctx, name + ": corrupt run", wl, os.path.join(ctx.tmp, "cs-corrupt"), ("--cache-dir", cdir))
    if bad is None:
        return
    c = cache_of(bad) or {}
    res.true(name + ": corrupt files: each rejected and counted, rebuilt and written again",
             c.get("rejected") == len(files) and c.get("hits") == 0 and c.get("written") == len(files),
             "cache %s, %d files" % (c, len(files)))
    res.true(name + ": ... said in the report", "%d rejected as corrupt or foreign" % len(files) in bad["_text"],
             short(bad["_text"][:600]))
    res.eq(name + ": corrupt files: the same stacks", sorted(stack_set(bad) ^ stack_set(runs["cold"])), [])
    off = traced(res, ctx, name + ": --no-cache run", wl, os.path.join(ctx.tmp, "cs-off"), ("--no-cache",))
    if off is None:
        return
    res.eq(name + ": --no-cache: no cache in report.json", ((off.get("startup") or {}).get("unwind_cache", "missing")),
           None)
    res.eq(name + ": --no-cache: the same stacks", sorted(stack_set(off) ^ stack_set(runs["cold"])), [])


def fast_start(res, ctx, wl, case):
    name = "coldstart/fast-start/launch"
    cdir = os.path.join(ctx.tmp, "uwcache-fast")
    os.makedirs(cdir, mode=0o700)
    def release_when_cached(pr, target):
        # wl_unwind --wait: libstdc++'s initializer has allocated, main waits for SIGUSR1. Let
        # it go once a table built after the exec is in the cache (it would otherwise exit
        # before the poll loop gets to build anything).
        pr.wait_for("out", re.escape(READY_MARK))
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and not any(f.endswith(".uwt") for f in os.listdir(cdir)):
            time.sleep(0.05)
        os.kill(target, signal.SIGUSR1)

    cold = traced(res, ctx, name + ": cold run", wl, os.path.join(ctx.tmp, "fs-cold"),
                  ("--fast-start", "--cache-dir", cdir), ["--wait"], release_when_cached)
    if cold is None:
        return
    n = cold["errors"].get("unwind_not_yet_covered", 0)
    # wl_unwind allocates in libstdc++'s initializer, before main: its tables cannot be in yet.
    res.true(name + ": cold: stacks taken before their tables are counted", n > 0,
             "unwind_not_yet_covered = %r" % n)
    res.true(name + ": ... and shown in DATA LOSS AND DISTORTION", "unwind_not_yet_covered" in cold["_text"],
             short(cold["_text"][-800:]))
    st = cold.get("startup") or {}
    res.true(name + ": cold: the tables were built after the exec",
             st.get("unwind_later_ns", 0) > 0 and (cache_of(cold) or {}).get("written", 0) > 0, "startup %s" % st)
    # A short program can exit before a refresh got to every library it mapped: those tables
    # are not in the cache yet. A run without --fast-start builds them all (held) and caches them.
    fill = traced(res, ctx, name + ": filling run", wl, os.path.join(ctx.tmp, "fs-fill"), ("--cache-dir", cdir))
    if fill is None:
        return
    warm = traced(res, ctx, name + ": warm run", wl, os.path.join(ctx.tmp, "fs-warm"),
                  ("--fast-start", "--cache-dir", cdir))
    if warm is None:
        return
    c = cache_of(warm) or {}
    res.true(name + ": warm run: every table from the cache", c.get("hits", 0) > 0 and c.get("misses") == 0,
             "cache %s" % c)
    check_case(res, name + ": warm run", warm, case)


def run_section(ctx):
    res = ctx.res
    names = ["coldstart/cache/launch", "coldstart/fast-start/launch"]
    if not any(res.wanted(n) for n in names):
        return
    case = unwind_case(ctx)
    wl = (ctx.built.get("wl_unwind") or {}).get("nofp")
    if not case or not wl:
        for n in names:
            res.fail(n, "wl_unwind (nofp) not built or tests/cases/unwind.json missing")
        return
    if res.wanted(names[0]):
        cache_launch(res, ctx, wl, case)
    if res.wanted(names[1]):
        fast_start(res, ctx, wl, case)

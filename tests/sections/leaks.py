# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""leaks: leaks across invocations (a section of tests/run.py). Real runtimes under the project's
Lambda-like host (tools/lambda-host), peaktrace attached, real invocations; the truth is each
function's own knowledge of what it keeps, never peaktrace's output:

- leaks/python keep: tools/functions/python/keeper.py `keep` appends one bytearray(1 << 20) to a
  module-level list in keep_cache per invocation: one malloc of 1 << 20 bytes plus what CPython
  adds to a bytearray's buffer (at most sys.getsizeof(bytearray(0)) bytes, computed here with the
  same /usr/bin/python3; 3.11 adds 1); its response counts the buffers kept. Of N invocations,
  1..N-1 are followed by a finished one: each must show exactly one such block on a stack
  naming keep_cache, the last one pending.
- leaks/python churn: keeper.py `churn` makes and drops the same bytearray: no stack through
  churn_once may leak, though it allocated N MiB (seen in alloc_bytes, so the check can fail).
- leaks/c exact: tools/functions/leaky keeps exactly one malloc(kb << 10) per invocation and
  answers the cache's total: the leaked bytes per invocation and per stack are exact, and the
  total is that plus the runtime's reused buffers (runtime.c), which leak once, in invocation 1.
- leaks/cxx loader init: tests/workloads/wl_cxx launched: its own header states the blocks it
  leaves live (scn_cxx_malloc's 2345 bytes, scn_new_array's 1717, scn_new's 136) and that
  libstdc++'s emergency pool is malloc'd by a static constructor before main (under _dl_init).
  The leak candidates are exactly those three; the pool is not among them but counted on its
  own line, and marked loader_init in report.json.
"""

import json
import os
import re
import subprocess

from harness import ROOT, TIMEOUT, expand_report
from tracing import trace_launch
from lambdafix import need_host, traced_run

MiB = 1 << 20


def names(stack):
    return [fr.get("func", "") for fr in stack.get("frames", [])]


def leaked_stacks(rep):
    """(leaked entry, its stack in "stacks") for every leaking stack."""
    lk = rep.get("leaked") or {}
    return [(e, rep["stacks"][e["stack"]]) for e in lk.get("stacks", [])]


def python_keep(ctx, py, fdir, n):
    res = ctx.res
    name = "leaks/python keep"
    got = traced_run(ctx, name, "pykeep", [py, os.path.join(fdir, "bootstrap.py")],
                     ["--handler", "keeper.keep", "--task-root", fdir], [{}] * n)
    if not got:
        return
    rep, answers, outdir = got
    res.eq(name + ": the function kept one buffer per invocation (its own count)",
           [a.get("kept") if a else None for a in answers], list(range(1, n + 1)))
    # What CPython adds to a bytearray's buffer is below its empty object's size.
    extra = int(subprocess.run([py, "-c", "import sys; print(sys.getsizeof(bytearray(0)))"],
                               capture_output=True, text=True, timeout=TIMEOUT).stdout)
    lk = rep.get("leaked")
    res.true(name + ": report.json has leaked", isinstance(lk, dict), repr(lk)[:200])
    if not isinstance(lk, dict):
        return
    keep = [(e, s) for e, s in leaked_stacks(rep) if any("keep_cache" in f for f in names(s))]
    res.true(name + ": a leaking stack names keep_cache", len(keep) >= 1,
             [names(s)[:6] for e, s in leaked_stacks(rep)][:3])
    if not keep:
        return
    e, s = keep[0]
    per = e["per_invocation_bytes"]
    res.true(name + ": ~1 MiB per invocation (1 MiB .. 1 MiB + %d bytes of CPython's buffer)" % extra,
             MiB <= per <= MiB + extra, "per_invocation_bytes %d" % per)
    res.eq(name + ": allocated in invocations 1..%d (the last one is pending)" % (n - 1),
           [o["seq"] for o in e["invocations"]], list(range(1, n)))
    res.eq(name + ": one block of the same size from each", sorted({(o["count"], o["bytes"]) for o in e["invocations"]}),
           [(1, per)])
    res.eq(name + ": the stack's leaked_bytes", s.get("leaked_bytes"), per * (n - 1))
    res.eq(name + ": invocations judged", lk.get("invocations_judged"), n - 1)
    res.true(name + ": the last invocation's buffer is pending, not leaked", lk.get("pending_bytes", 0) >= per,
             "pending_bytes %s" % lk.get("pending_bytes"))
    with open(os.path.join(outdir, "report.txt")) as f:
        text = f.read()
    sec = text[text.find("LEAKED ACROSS INVOCATIONS"):] if "LEAKED ACROSS INVOCATIONS" in text else ""
    res.true(name + ": text section names keep_cache and invocations 1-%d" % (n - 1),
             "keep_cache" in sec[:3000] and ("invocations 1-%d" % (n - 1)) in sec[:3000], sec[:600])
    folded = open(os.path.join(outdir, "leaked.folded")).read().splitlines()
    kept = [l for l in folded if "keep_cache" in l]
    res.eq(name + ": leaked.folded: keep_cache's bytes", sum(int(l.rsplit(" ", 1)[1]) for l in kept), per * (n - 1))
    svg = open(os.path.join(outdir, "leaked.svg")).read()
    res.true(name + ": leaked.svg shows keep_cache", "keep_cache" in svg, "not in leaked.svg")


def python_churn(ctx, py, fdir, n):
    res = ctx.res
    name = "leaks/python churn"
    got = traced_run(ctx, name, "pychurn", [py, os.path.join(fdir, "bootstrap.py")],
                     ["--handler", "keeper.churn", "--task-root", fdir], [{}] * n)
    if not got:
        return
    rep, answers, outdir = got
    lk = rep.get("leaked")
    res.true(name + ": report.json has leaked", isinstance(lk, dict), repr(lk)[:200])
    if not isinstance(lk, dict):
        return
    churn = [s for s in rep["stacks"] if any("churn_once" in f for f in names(s))]
    res.true(name + ": churn_once's buffers were traced (%d x 1 MiB)" % n,
             sum(s["alloc_bytes"] for s in churn) >= n * MiB, [s["alloc_bytes"] for s in churn])
    res.eq(name + ": no stack through churn_once leaks", sum(s.get("leaked_bytes", -1) for s in churn), 0)
    res.eq(name + ": no leaking stack names churn_once",
           [names(s)[:6] for e, s in leaked_stacks(rep) if any("churn_once" in f for f in names(s))], [])
    res.true(name + ": nothing near 1 MiB leaked at all", lk.get("bytes", 0) < MiB // 2,
             "leaked bytes %s" % lk.get("bytes"))


def c_exact(ctx, n_kb):
    res, build = ctx.res, ctx.build_arg
    name = "leaks/c exact"
    fn = os.path.join(build, "tools", "functions", "leaky")
    got = traced_run(ctx, name, "cleaky", [fn], [], [{"kb": k} for k in n_kb])
    if not got:
        return
    rep, answers, outdir = got
    totals = [a.get("leaked_total") if a else None for a in answers]
    # The function's own knowledge: what its cache grew by in each invocation.
    grew = [t - (totals[i - 1] if i else 0) for i, t in enumerate(totals)] if None not in totals else []
    res.eq(name + ": the function kept kb << 10 each time", grew, [k << 10 for k in n_kb])
    lk = rep.get("leaked")
    res.true(name + ": report.json has leaked", isinstance(lk, dict), repr(lk)[:200])
    if not isinstance(lk, dict) or not grew:
        return
    rem = [(e, s) for e, s in leaked_stacks(rep) if "remember" in names(s)]
    res.eq(name + ": one leaking stack through remember", len(rem), 1)
    if rem:
        e, s = rem[0]
        res.eq(name + ": bytes left by each invocation", [(o["seq"], o["bytes"], o["count"]) for o in e["invocations"]],
               [(i + 1, g, 1) for i, g in enumerate(grew[:-1])])
        res.eq(name + ": per_invocation_bytes", e["per_invocation_bytes"], sum(grew[:-1]) // (len(grew) - 1))
    # The runtime's receive and body buffers (runtime.c: grown to the largest message, then
    # reused) first reach their size in invocation 1 when peaktrace attaches while it waits in
    # GET .../next: kept, but once, never per invocation.
    other = [(e, s) for e, s in leaked_stacks(rep) if "remember" not in names(s)]
    res.eq(name + ": every other leaking stack is a runtime buffer grown once, in invocation 1",
           [(names(s)[0], [o["seq"] for o in e["invocations"]]) for e, s in other],
           [("rt_buf_reserve", [1])] * len(other))
    res.eq(name + ": total leaked: remember's and those buffers only", (lk["bytes"], lk["count"]),
           (sum(grew[:-1]) + sum(e["bytes"] for e, s in other), len(grew) - 1 + sum(e["count"] for e, s in other)))
    res.eq(name + ": the last invocation's block is pending", (lk["pending_bytes"], lk["pending_count"]), (grew[-1], 1))


def cxx_loader_init(ctx):
    res = ctx.res
    name = "leaks/cxx loader init"
    wl = os.path.join(ctx.build_arg, "tests", "workloads", "wl_cxx_fp")
    if not os.access(wl, os.X_OK):
        res.fail(name, "wl_cxx_fp not built (build section)")
        return
    outdir = os.path.join(ctx.tmp, "leaks-cxx")
    r = trace_launch(ctx.pt, wl, [], outdir, extra=["-q"])
    if r.why:
        res.fail(name, r.why)
        return
    res.eq(name + ": peaktrace exit status", r.rc, 0)
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            text = f.read()
        with open(os.path.join(outdir, "report.json")) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail(name, "no report: %s" % e)
        return
    start = text.find("TOP STACKS LIVE AT END (leak candidates)")
    end = text.find("\nTOP STACKS BY TOTAL ALLOCATED", start)
    sec = text[start:end] if start >= 0 else ""
    blocks = sec.split("\n  #")[1:]
    # The workload's own live blocks, in size order, by their scenario frames.
    want = [("2345", "scn_cxx_malloc"), ("1717", "scn_new_array"), ("136", "scn_new")]
    def scenario(body):
        """The workload's scenario function a candidate's frames name, else its first line."""
        for w in ("scn_cxx_malloc", "scn_new_array", "scn_new"):
            if re.search(r"\b%s\b" % w, body):
                return w
        return body.split("\n")[0]
    got = [scenario(b.split("\n  not listed:")[0]) for b in blocks]
    res.eq(name + ": the leak candidates are the workload's three live blocks", got, [w for _, w in want])
    res.true(name + ": no leak candidate was allocated under _dl_init", "_dl_init" not in "".join(b.split("\n  not listed:")[0] for b in blocks), sec[:800])
    res.true(name + ": the loader's initializers are counted on their own line", "not listed:" in sec and "_dl_init" in sec and "in 1 block from 1 stack" in sec, sec[-400:])
    ld = [s for s in rep["stacks"] if s.get("loader_init")]
    res.true(name + ": report.json marks the pool's stack loader_init, with a _dl_init frame",
             len(ld) == 1 and ld[0]["live_bytes"] > 0 and "_dl_init" in names(ld[0]),
             [(s["live_bytes"], names(s)[:4]) for s in ld])
    res.eq(name + ": no stack of the workload is marked loader_init",
           [names(s)[:3] for s in rep["stacks"] if s.get("loader_init") and "main" in names(s)], [])


def run_section(ctx):
    res, build = ctx.res, ctx.build_arg
    if not need_host(res, ("leaks/python keep", "leaks/python churn", "leaks/c exact"), build, "invoke"):
        if res.wanted("leaks/cxx loader init"):
            cxx_loader_init(ctx)
        return
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    fdir = os.path.join(ROOT, "tools", "functions", "python")
    if res.wanted("leaks/python keep"):
        python_keep(ctx, py, fdir, 6)
    if res.wanted("leaks/python churn"):
        python_churn(ctx, py, fdir, 6)
    if res.wanted("leaks/c exact"):
        c_exact(ctx, [100, 300, 200, 50, 400])
    if res.wanted("leaks/cxx loader init"):
        cxx_loader_init(ctx)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""arenas: wl_arenas under peaktrace: report.json's "arenas" against glibc's own books."""

import json
import os

from harness import TIMEOUT, Proc, clean_env, short
from tracing import load_report

# wl_arenas.c: in_use(main) = L(main) + 656 (the main thread's tcache_perthread_struct chunk);
# in_use(thread arena) = L + 2256 (heap_info + malloc_state at the start of its heap).
TCACHE_STRUCT_CHUNK = 656
THREAD_ARENA_HEADER = 2256


def workload_json(text, key):
    for line in text.splitlines():
        if line.startswith('{"%s"' % key):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def addr_eq(a, b):
    """Arena names: "main" or hex addresses ("0x7f..."), compared by value."""
    if a is None or b is None:
        return False
    if str(a) == "main" or str(b) == "main":
        return str(a) == str(b)
    try:
        return int(str(a), 16) == int(str(b), 16)
    except ValueError:
        return False


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    prefix = "arenas/glibc/launch"
    if not res.wanted(prefix):
        return
    wl = built.get("wl_arenas", {}).get("fp")
    if not wl:
        res.fail(prefix, "wl_arenas not built")
        return
    outdir = os.path.join(tmp, "arenas-glibc-launch")
    pr = Proc([pt, "-o", outdir, "--", wl], env=clean_env())
    rc = pr.wait(TIMEOUT)
    if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
        print("  stderr: " + short(pr.err, 1000))
    w = workload_json(pr.out, "wl_arenas")
    if not res.true("%s: workload printed its JSON line" % prefix, w, short(pr.out, 500)):
        return
    res.true("%s: workload self_check (formula on its own blocks)" % prefix,
             w["self_check"]["ok"], w["self_check"]["why"])
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ar = rep.get("arenas")
    if not res.true("%s: report has arenas{}" % prefix, isinstance(ar, dict),
                    "no \"arenas\" object in report.json (keys: %s)" % ", ".join(rep)):
        return
    res.eq("%s: arenas.allocator" % prefix, ar.get("allocator"), "glibc")
    res.eq("%s: arenas.covered" % prefix, ar.get("covered"), True)
    lst = ar.get("list") or []
    res.eq("%s: arenas.count" % prefix, ar.get("count"), len(w["heaps"]))
    res.eq("%s: len(arenas.list)" % prefix, len(lst), len(w["heaps"]))
    wthreads = {t["tid"]: t for t in w["threads"]}

    for h in w["heaps"]:
        main = h["arena"] == "main"
        name = "%s: arena %s" % (prefix, "main" if main else h["arena"])
        got = [a for a in lst if (a.get("kind") == "main") == main and
               (main or addr_eq(a.get("address"), h["arena"]))]
        if not res.true("%s listed" % name, len(got) == 1,
                        "%d entries match in %s" % (len(got), short(json.dumps(lst), 400))):
            continue
        a = got[0]
        want = h["in_use"] - (TCACHE_STRUCT_CHUNK if main else THREAD_ARENA_HEADER)
        res.eq("%s live_chunk_bytes == malloc_info in_use - %d (in_use %d)" %
               (name, TCACHE_STRUCT_CHUNK if main else THREAD_ARENA_HEADER, h["in_use"]),
               a.get("live_chunk_bytes"), want)
        if not main:
            res.eq("%s kind" % name, a.get("kind"), "thread")
            res.eq("%s heaps" % name, a.get("heaps"), h["subheaps"])
        users = sorted(t["tid"] for t in w["threads"] if addr_eq(t["arena"], h["arena"]))
        if main:
            res.true("%s threads include main's tid %d" % (name, w["pid"]),
                     w["pid"] in (a.get("threads") or []), "threads %r" % a.get("threads"))
        else:
            res.eq("%s threads" % name, sorted(a.get("threads") or []), users)
            # The worker's blocks are all there is in its arena, minus those glibc mmapped.
            t = wthreads[users[0]] if len(users) == 1 else None
            if t:
                res.eq("%s live_count" % name, a.get("live_count"),
                       t["live_count"] - t["mmapped_live_count"])

    mm = ar.get("mmapped") or {}
    res.eq("%s: mmapped.live_chunk_bytes == mallinfo2 hblkhd" % prefix,
           mm.get("live_chunk_bytes"), w["mallinfo2"]["hblkhd"])
    res.eq("%s: mmapped.live_count == mallinfo2 hblks" % prefix,
           mm.get("live_count"), w["mallinfo2"]["hblks"])
    tot = ar.get("totals") or {}
    # totals cover the arenas (uordblks); mmapped chunks (hblkhd) are checked above.
    res.eq("%s: totals.live_chunk_bytes == uordblks - 656 - %d x 2256" % (prefix, len(w["heaps"]) - 1),
           tot.get("live_chunk_bytes"),
           w["mallinfo2"]["uordblks"] - TCACHE_STRUCT_CHUNK - THREAD_ARENA_HEADER * (len(w["heaps"]) - 1))

    pthreads = {t.get("tid"): t for t in (ar.get("threads") or [])}
    for t in w["threads"]:
        name = "%s: thread %s (tid %d)" % (prefix, "main" if t["index"] < 0 else t["index"], t["tid"])
        pt_t = pthreads.get(t["tid"])
        if not res.true("%s listed" % name, pt_t is not None, "tids: %s" % sorted(pthreads)):
            continue
        res.true("%s arena %s" % (name, t["arena"]), addr_eq(pt_t.get("arena"), t["arena"]),
                 "got %r" % pt_t.get("arena"))
        if t["index"] < 0:
            continue   # main also made glibc's own calls (DTVs, the FILE): not the workload's figures
        for k in ("alloc_count", "free_count", "live_bytes", "live_chunk_bytes"):
            res.eq("%s %s" % (name, k), pt_t.get(k), t[k])

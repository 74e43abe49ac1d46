# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""arenas: wl_arenas under peaktrace: report.json's "arenas" against glibc's own books."""

import json
import math
import os
import re
import statistics
import time

from harness import TIMEOUT, Proc, clean_env, free_ports, short
from lambdafix import need_host
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
    run_glibc(ctx)
    run_compare_env(ctx)


def run_glibc(ctx):
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


MiB = 1 << 20
COMPARE_EVENTS = 4
COMPARE_UNTRACED = 2
THRESHOLD = "MALLOC_MMAP_THRESHOLD_=32768"


def host_reports(path):
    """The host's own REPORT lines in an untraced run's log: [(Duration ms, Max Memory Used MB)]."""
    with open(path) as f:
        return [(float(m.group(1)), int(m.group(2))) for m in
                re.finditer(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms\t.*?Max Memory Used: (\d+) MB",
                            f.read(), re.M)]


def table_cells(text, row):
    """The cells of a COMPARISON row (columns 31 characters wide after a 32-character name)."""
    for line in text.splitlines():
        if line.startswith("  " + row) and len(line) > 32:
            return [line[32 + 31 * k: 32 + 31 * (k + 1)].strip() for k in range(2)]
    return None


def run_compare_env(ctx):
    """--compare-env on the arena function under the Lambda host (tools/functions/arena: 8 threads
    each freeing 40 MiB but a record on top of its heap; 25 MiB retained with glibc's defaults):
    the traced runs trace the runtime under the host, the untraced ones run the host command
    alone. The untraced rows are checked against the host's own REPORT lines (Duration, and Max
    Memory Used: without a cgroup, the runtime's VmHWM rounded up to MiB, as ru_maxrss is its
    VmHWM) in each run's log, and against the setting's known effect."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    name = "arenas/compare-env"
    if not res.wanted(name):
        return
    tools = need_host(res, name, ctx.build_arg, "functions/arena")
    if not tools:
        return
    host, fn = tools
    events = os.path.join(tmp, "compare-events.jsonl")
    with open(events, "w") as f:
        f.write('{"blocks": 64}\n' * COMPARE_EVENTS)
    out = os.path.join(tmp, "compare-env")
    port = free_ports(2)
    t0 = time.monotonic()
    pr = Proc([pt, "-o", out, "--compare-untraced", str(COMPARE_UNTRACED), "--compare-env", THRESHOLD, "--",
               host, "--no-cgroup", "-q", "--runtime-port", str(port), "--invoke-port", str(port + 1),
               "-E", events, "--", fn], env=clean_env())
    rc = pr.wait(TIMEOUT)
    wall = time.monotonic() - t0
    print("  %s: %.1f s for %d traced + %d untraced runs" % (name, wall, 2, 2 * COMPARE_UNTRACED))
    if not res.eq(name + ": exit status", rc, 0):
        print("  stderr: " + short(pr.err, 1500))
    try:
        with open(os.path.join(out, "compare.txt")) as f:
            text = f.read()
    except OSError as e:
        res.fail(name + ": compare.txt", str(e))
        return
    res.true(name + ": the untraced rows are labelled",
             "  untraced: the command alone, %d runs per setting" % COMPARE_UNTRACED in text, short(text, 800))
    res.true(name + ": the traced times are labelled distorted",
             "  traced (distorted by tracing: do not use for time)\n  invocation duration p50" in text,
             short(text, 800))

    medians = []
    for k, run in enumerate(("run-0-baseline", "run-1-setting")):
        label = "%s: %s" % (name, "baseline" if k == 0 else THRESHOLD)
        d = os.path.join(out, run)
        # The traced run traced the runtime, under the host: its 4 invocations and arenas.
        rep = load_report(res, label, d)
        if rep is not None:
            invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
            res.eq(label + ": traced run saw the host's invocations in the runtime", len(invs), COMPARE_EVENTS)
        try:
            with open(os.path.join(d, "untraced.tsv")) as f:
                rows = [l.rstrip("\n").split("\t") for l in f]
        except OSError as e:
            res.fail(label + ": untraced.tsv", str(e))
            continue
        runs = [r for r in rows if r[0] == "run"]
        invs_ms = [float(r[1]) for r in rows if r[0] == "invocation_ms"]
        res.eq(label + ": untraced runs", len(runs), COMPARE_UNTRACED)
        durations, mems = [], []
        for j, r in enumerate(runs):
            reports = host_reports(os.path.join(d, "untraced-%d.log" % (j + 1)))
            res.eq("%s: untraced run %d: the host's REPORT lines" % (label, j + 1), len(reports), COMPARE_EVENTS)
            durations += [ms for ms, _ in reports]
            maxrss = int(r[7])
            mem = max(mb for _, mb in reports) if reports else 0
            mems.append(mem)
            # The host rounds the runtime's VmHWM up to whole MiB; ru_maxrss is the largest process's.
            res.true("%s: untraced run %d: peak RSS %.2f MiB within the host's Max Memory Used %d MB"
                     % (label, j + 1, maxrss / MiB, mem), mem - 1 <= maxrss / MiB <= mem,
                     "ru_maxrss %d" % maxrss)
            res.true("%s: untraced run %d: wall time covers the invocations" % (label, j + 1),
                     float(r[3]) / 1e6 >= sum(ms for ms, _ in reports), "wall %s ns" % r[3])
        res.eq(label + ": each invocation's Duration as the host logged it",
               [round(x, 2) for x in invs_ms], [round(x, 2) for x in durations])
        cells = table_cells(text, "invocation Duration (REPORT)")
        want = statistics.median(durations) if durations else None
        # The cell prints 3 decimals below 10 ms, 1 above ("8.230 ms [...]", "36.0 ms [...]"):
        # compared as a number, within half of the coarser step.
        m = re.match(r"([0-9.]+) ms", cells[k]) if cells is not None else None
        res.true(label + ": the untraced row's median is the host's (%s ms)"
                 % ("%.3f" % want if want is not None else None),
                 m is not None and want is not None and abs(float(m.group(1)) - want) <= 0.05,
                 "row %r" % cells)
        cells = table_cells(text, "Max Memory Used (REPORT)")
        res.true(label + ": the untraced Max Memory Used row is the host's",
                 cells is not None and mems and cells[k] == "%d MB (max)" % max(mems), "row %r" % cells)
        medians.append(statistics.median(durations) if durations else 0)
    # The setting's price on this function: every 32 KiB+ block an mmap, fresh pages each time
    # (~4x per invocation here); the advice line says it, measured untraced.
    if len(medians) == 2:
        res.true(name + ": untraced, the threshold makes each invocation slower (%.1f -> %.1f ms)" % tuple(medians),
                 medians[1] > medians[0], "")
    # An A/B of the test's own, untraced, outside peaktrace: the slowdown it measures agrees with
    # the comparison's within the noise of a loaded 2-core machine (a factor of 2).
    if len(medians) == 2 and medians[0] > 0:
        ab = []
        for setting in (None, THRESHOLD):
            env = clean_env()
            if setting:
                env[setting.split("=")[0]] = setting.split("=")[1]
            h = Proc([host, "--no-cgroup", "-q", "--runtime-port", str(port), "--invoke-port", str(port + 1),
                      "-E", events, "--", fn], env=env)
            h.wait(TIMEOUT)
            ds = [float(x) for x in re.findall(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms", h.out, re.M)]
            ab.append(statistics.median(ds) if ds else 0)
        ours, theirs = medians[1] / medians[0], (ab[1] / ab[0] if ab[0] else 0)
        res.true(name + ": the measured slowdown (x%.2f) agrees with an untraced A/B outside peaktrace (x%.2f)"
                 % (ours, theirs), theirs > 0 and 0.5 <= ours / theirs <= 2.0, "A/B medians %s" % ab)
    m = re.search(r"^ADVICE: %s, its cost as measured: time per invocation ([0-9.]+) ms .*? -> ([0-9.]+) ms"
                  % re.escape(THRESHOLD), text, re.M)
    res.true(name + ": the baseline's advice states its measured cost",
             m is not None and len(medians) == 2 and abs(float(m.group(1)) - medians[0]) < 0.051 and
             abs(float(m.group(2)) - medians[1]) < 0.051, short(text[-1500:], 1500))
    # -d bounds the untraced runs as it bounds the traced ones (a host without -E never exits).
    outd = os.path.join(tmp, "compare-env-d")
    pr = Proc([pt, "-q", "-o", outd, "-d", "1", "--compare-untraced", "1", "--compare-env", "A=1", "--",
               "sleep", "30"], env=clean_env())
    rc = pr.wait(TIMEOUT)
    walls = []
    for run in ("run-0-baseline", "run-1-setting"):
        try:
            with open(os.path.join(outd, run, "untraced.tsv")) as f:
                walls += [int(l.split("\t")[3]) / 1e9 for l in f if l.startswith("run\t")]
        except (OSError, ValueError, IndexError):
            pass
    res.true(name + ": -d 1 ends each untraced run of sleep 30 after 1 s",
             rc == 0 and len(walls) == 2 and all(1.0 <= w < 3.0 for w in walls),
             "exit %s, walls %s: %s" % (rc, walls, short(pr.err, 300)))
    try:
        with open(os.path.join(outd, "compare.txt")) as f:
            res.true(name + ": -d: the runs it ended are said", "1 of 1 untraced runs ended by -d" in f.read(), "")
    except OSError as e:
        res.fail(name + ": -d: compare.txt", str(e))
    try:
        with open(os.path.join(out, "run-0-baseline", "report.txt")) as f:
            base = f.read()
    except OSError:
        base = ""
    res.true(name + ": the traced run's ADVICE line prices nothing itself",
             re.search(r"^ADVICE: %s .*\n  its cost: not measured by this traced run" % re.escape(THRESHOLD),
                       base, re.M) is not None, short(base, 600))
    res.true(name + ": the ARENAS advice's cost says not measured and how to measure it",
             re.search(r"Cost: not measured: each allocation of 32 KiB or more .*--compare-env %s"
                       % re.escape(THRESHOLD), base) is not None, "")

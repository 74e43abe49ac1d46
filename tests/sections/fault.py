# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""fault: peaktrace on real targets under stress and failure, exact figures where the test can
know them (workloads: wl_storm.c, wl_churn.c, wl_faults.c; each scenario is one test case):

  fault/fork-exec storm     a parent forking children that allocate and exec /bin/true or exit,
                            launch and attach: peaktrace exits 0, the parent's figures exact,
                            nothing of the children in the report, every error counter 0.
  fault/thread churn        20,000 short-lived threads (100 waves of 200), launch and attach:
                            totals exact (the truth from the reference tracer, which must agree
                            with wl_churn.c's formulas), thread rows beyond 4094 counted under
                            "other threads" and in arena_table_full, no missed return.
  fault/peaktrace SIGKILL   kill -9 peaktrace attached to an allocation loop: the target keeps
                            running, no breakpoint left in its libc text (read through
                            /proc/PID/mem against the file), its loop back to untraced speed.
  fault/two instances       two peaktraces on one PID with overlapping windows: each report
                            exact for the phases it saw, the target unharmed.
  fault/target killed       SIGKILL of the target mid-trace, attach and launch: report written
                            with exit_signal 9, peaktrace exits 0, bounded time.
"""

import os
import re
import signal
import subprocess
import time

from harness import TIMEOUT, Proc, pid_alive, short
from refmodel import Symbols, ref_model, run_reference
from tracing import TRACING_RX, find_stack, load_report

PT_MAX_THREAD_ROWS = 4094        # bpf/peaktrace.h PT_MAX_THREAD_SLOTS - 2 (row 0 unused, last = other)
WAIT = 30.0                      # every wait below is bounded by this (or less)


# --------------------------------------------------------------------------------------
# helpers

def errors_nonzero(rep, allowed=()):
    return {k: v for k, v in (rep.get("errors") or {}).items() if v and k not in allowed}


def check_totals(res, name, rep, want):
    tot = rep.get("totals", {})
    for k, v in want.items():
        res.eq("%s: totals.%s" % (name, k), tot.get(k), v)


def start_peaktrace(pt, pid, outdir, extra=()):
    """peaktrace -p PID; returns (Proc, True once its tracing line came)."""
    pr = Proc([pt, "-p", pid, "-o", outdir, "-q"] + list(extra))
    return pr, pr.wait_for("err", TRACING_RX % pid, timeout=WAIT) is not None


def launch_peaktrace(pt, outdir, argv):
    """peaktrace -- argv; returns (Proc, target pid or None)."""
    pr = Proc([pt, "-o", outdir, "-q", "--"] + list(argv))
    m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b", timeout=WAIT)
    return pr, int(m.group(1)) if m else None


def ops_lines(text):
    """wl_faults spin's "ops N T" lines: [(ops, t_ns)]."""
    return [(int(a), int(b)) for a, b in re.findall(r"^ops (\d+) (\d+)$", text, re.M)]


def loop_rate(wl, seconds, windows=2):
    """The best ops/s of `windows` windows of `seconds` each, from the workload's own lines
    (best of several: other tests share the 2 CPUs). None if it printed too little."""
    best = None
    for _ in range(windows):
        n0 = len(ops_lines(wl.out))
        time.sleep(seconds)
        lines = ops_lines(wl.out)[n0:]
        if len(lines) >= 2:
            (o0, t0), (o1, t1) = lines[0], lines[-1]
            if t1 > t0:
                r = (o1 - o0) * 1e9 / (t1 - t0)
                best = r if best is None or r > best else best
    return best


# ---- the target's libc text against the file: a uprobe is an int3 in the target's copy

def libc_text(pid):
    """(path, [(start, end, pgoff)] of its executable mappings) of the libc the target maps."""
    maps = []
    path = None
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and re.search(r"/libc\.so\.6$|/libc-[0-9.]+\.so$", p[5]) and "x" in p[1]:
                path = p[5]
                a, b = (int(x, 16) for x in p[0].split("-"))
                maps.append((a, b, int(p[2], 16)))
    return path, maps


def elf_file_offsets(path, names):
    """{name: file offset of its code} for dynamic symbols of path (nm -D, readelf -l)."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         timeout=30).stdout
    vaddr = {}
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) [TtWi] (\S+?)(@.*)?$", line)
        if m and m.group(2) in names and m.group(2) not in vaddr:
            vaddr[m.group(2)] = int(m.group(1), 16)
    loads = []
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, timeout=30).stdout
    for line in out.splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            loads.append((int(p[1], 16), int(p[2], 16), int(p[4], 16)))   # offset, vaddr, filesz
    offs = {}
    for n, v in vaddr.items():
        for off, va, sz in loads:
            if va <= v < va + sz:
                offs[n] = v - va + off
    return offs


TEXT_FUNCS = ["malloc", "free", "calloc", "realloc"]
TEXT_LEN = 16      # bytes compared at each function's start (free's probe is at free+3)


def text_diff(pid, path, maps, offs):
    """{func: (file bytes, target bytes)} for each function whose first TEXT_LEN bytes differ
    in the target's memory; None if memory could not be read."""
    diff = {}
    try:
        with open(path, "rb") as f, open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
            for n in TEXT_FUNCS:
                off = offs.get(n)
                if off is None:
                    continue
                addr = next((a + off - pg for a, b, pg in maps if pg <= off < pg + (b - a)), None)
                if addr is None:
                    return None
                f.seek(off)
                want = f.read(TEXT_LEN)
                mem.seek(addr)
                got = mem.read(TEXT_LEN)
                if got != want:
                    diff[n] = (want.hex(), got.hex())
    except OSError:
        return None
    return diff


# --------------------------------------------------------------------------------------
# 1. fork/exec storm

STORM_ROUNDS, STORM_CHILDREN = 20, 8


def storm_expect(r):
    """wl_storm.c's parent figures for r rounds."""
    keep, busy, ops = 2048, 4000, 40
    return {"alloc_count": r * (1 + ops), "alloc_bytes": r * (keep + ops * busy),
            "free_count": ops * r + r // 2, "free_bytes": ops * busy * r + (r // 2) * keep,
            "live_count": r - r // 2, "live_bytes": (r - r // 2) * keep,
            "peak_live_count": r + 1, "peak_live_bytes": r * keep + busy}


def storm(ctx, exe, name):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    args = [str(STORM_ROUNDS), str(STORM_CHILDREN)]
    want = storm_expect(STORM_ROUNDS)
    for mode in ("launch", "attach"):
        sub = "%s: %s" % (name, mode)
        outdir = os.path.join(tmp, "fault-storm-" + mode)
        t0 = time.monotonic()
        if mode == "launch":
            pr, target = launch_peaktrace(pt, outdir, [exe] + args)
            if target is None:
                res.fail(sub + " peaktrace tracing", "no tracing line: %s" % short(pr.err))
                pr.kill()
                continue
            rc = pr.wait(WAIT)
            out = pr.out
            wl_rc = None
        else:
            wl = Proc([exe, "--wait"] + args)
            if not wl.wait_for("out", "^wl: waiting for SIGUSR1", timeout=WAIT):
                res.fail(sub + " workload ready", "never ready: %s" % short(wl.err))
                wl.kill()
                continue
            target = wl.pid
            pr, ok = start_peaktrace(pt, wl.pid, outdir)
            if not ok:
                res.fail(sub + " peaktrace tracing", "no tracing line: %s" % short(pr.err))
                pr.kill()
                wl.kill()
                continue
            wl.signal(signal.SIGUSR1)
            wl_rc = wl.wait(WAIT)
            rc = pr.wait(WAIT)
            out = wl.out
        el = time.monotonic() - t0
        res.eq("%s peaktrace exit status" % sub, rc, 0)
        if rc != 0:
            print("  stderr: " + short(pr.err, 1000))
        res.true("%s target finished its storm" % sub, "wl: storm done" in out,
                 "no 'wl: storm done' (children failing make it exit 3): %s" % short(out))
        if mode == "attach":
            res.eq("%s workload exit status" % sub, wl_rc, 0)
        rep = load_report(res, sub, outdir)
        if not rep:
            continue
        tgt = rep.get("target", {})
        res.eq("%s target.pid" % sub, tgt.get("pid"), target)
        res.eq("%s target.exited" % sub, tgt.get("exited"), True)
        res.eq("%s target.exit_status" % sub, tgt.get("exit_status"), 0)
        check_totals(res, sub, rep, want)
        # The parent's own sites, exact; the children's site is not in the parent's report.
        for frame0, k, v in [("^scn_storm_keep$", "alloc_count", STORM_ROUNDS),
                             ("^scn_storm_busy$", "free_count", 40 * STORM_ROUNDS),
                             ("^scn_storm_release$", "free_count", 0)]:
            res.eq("%s stack %s %s" % (sub, frame0, k), find_stack(rep, frame0)[k], v)
        res.eq("%s children's allocations (scn_storm_child) not in the report" % sub,
               find_stack(rep, "^scn_storm_child$")["alloc_count"], 0)
        # Every counter 0, unknown_free too (the parent frees only its own blocks, all
        # allocated after SIGUSR1 in attach mode; the children's frees are other processes).
        res.eq("%s error counters all 0" % sub, errors_nonzero(rep), {})
        print("  %s: %.1f s, totals %s" % (sub, el, rep.get("totals")))


# --------------------------------------------------------------------------------------
# 2. 20,000-thread churn

CHURN_WAVES, CHURN_PER_WAVE = 100, 200
DTV_BYTES = 272     # wl_churn.c: calloc(17, 16) per thread by ld.so, freed at its join


def churn_formula(threads):
    per = 6600 + DTV_BYTES
    return {"alloc_count": 4 * threads, "alloc_bytes": per * threads,
            "free_count": 4 * threads, "free_bytes": per * threads,
            "live_count": 0, "live_bytes": 0}


def churn(ctx, exe, name):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    threads = CHURN_WAVES * CHURN_PER_WAVE
    args = [str(CHURN_WAVES), str(CHURN_PER_WAVE)]
    want = churn_formula(threads)

    # The truth: the reference tracer (every outermost allocator call, ld.so's DTV callocs
    # and glibc's frees included) through ref_model, the accounting rules of
    # docs/json-report.md. It must agree with the workload's formula: then the formula's
    # account of glibc's own allocations (one DTV per thread, freed at its join, nothing else)
    # is verified, not assumed.
    if ctx.ref_so:
        lines, rc, why = run_reference(exe, args, "launch", None, ctx.ref_so, tmp)
        if why or rc != 0:
            res.fail("%s: reference run" % name, "%s (exit %s)" % (why, rc))
        else:
            model = ref_model(lines, False, exe, Symbols())
            got = {k: model["totals"][k] for k in want}
            res.eq("%s: reference tracer totals == wl_churn.c's formula" % name, got, want)
    else:
        res.fail("%s: reference run" % name, "ref_preload.so not built")

    for mode in ("launch", "attach"):
        sub = "%s: %s" % (name, mode)
        outdir = os.path.join(tmp, "fault-churn-" + mode)
        t0 = time.monotonic()
        if mode == "launch":
            pr, target = launch_peaktrace(pt, outdir, [exe] + args)
            if target is None:
                res.fail(sub + " peaktrace tracing", "no tracing line: %s" % short(pr.err))
                pr.kill()
                continue
            rc = pr.wait(WAIT)
        else:
            wl = Proc([exe, "--wait"] + args)
            if not wl.wait_for("out", "^wl: waiting for SIGUSR1", timeout=WAIT):
                res.fail(sub + " workload ready", "never ready: %s" % short(wl.err))
                wl.kill()
                continue
            target = wl.pid
            pr, ok = start_peaktrace(pt, wl.pid, outdir)
            if not ok:
                res.fail(sub + " peaktrace tracing", "no tracing line: %s" % short(pr.err))
                pr.kill()
                wl.kill()
                continue
            wl.signal(signal.SIGUSR1)
            res.eq("%s workload exit status" % sub, wl.wait(WAIT), 0)
            rc = pr.wait(WAIT)
        el = time.monotonic() - t0
        res.eq("%s peaktrace exit status" % sub, rc, 0)
        rep = load_report(res, sub, outdir)
        if not rep:
            continue
        res.eq("%s target.exit_status" % sub, rep.get("target", {}).get("exit_status"), 0)
        check_totals(res, sub, rep, want)
        st = find_stack(rep, "^scn_churn_thread$")
        res.eq("%s stack scn_churn_thread alloc_count/bytes" % sub,
               (st["alloc_count"], st["alloc_bytes"]), (3 * threads, 6600 * threads))
        err = rep.get("errors", {})
        res.eq("%s errors.missed_return" % sub, err.get("missed_return"), 0)
        # One tcache struct per worker, freed by glibc itself at thread exit (wl_churn.c).
        res.eq("%s errors.unknown_free (one tcache per thread)" % sub, err.get("unknown_free"), threads)

        # Thread rows: the main thread allocates first (the first DTV), then the workers in
        # turn; 4094 rows, every later thread in the one "other threads" row (tid 0).
        rows = rep.get("arenas", {}).get("threads", [])
        real = [t for t in rows if t.get("tid")]
        other = [t for t in rows if not t.get("tid")]
        beyond = threads + 1 - PT_MAX_THREAD_ROWS
        res.eq("%s thread rows: 4094 threads of their own" % sub, len({t["tid"] for t in real}),
               PT_MAX_THREAD_ROWS)
        res.eq("%s thread rows: one 'other threads' row (tid 0)" % sub, len(other), 1)
        res.eq("%s thread rows: sum(alloc_count) == totals.alloc_count (nothing dropped)" % sub,
               sum(int(t.get("alloc_count", 0)) for t in rows), want["alloc_count"])
        res.eq("%s thread rows: sum(free_bytes) == totals.free_bytes" % sub,
               sum(int(t.get("free_bytes", 0)) for t in rows), want["free_bytes"])
        main = [t for t in real if t["tid"] == target]
        res.eq("%s thread rows: main thread's row (the DTVs)" % sub,
               [(t["alloc_count"], t["alloc_bytes"]) for t in main], [(threads, threads * DTV_BYTES)])
        odd = [t for t in real if t["tid"] != target and (t["alloc_count"], t["alloc_bytes"]) != (3, 6600)]
        res.true("%s thread rows: every worker row is a3/6600" % sub, not odd,
                 "%d rows differ, first %s" % (len(odd), short(str(odd[:1]))))
        other_alloc = sum(int(t.get("alloc_count", 0)) for t in other)
        res.eq("%s thread rows: 'other threads' row holds the later workers' 3 each" % sub,
               other_alloc, 3 * beyond)
        # arena_table_full counts each thread beyond the rows once, plus (bpf/arenas.bpf.h
        # thread_sub) every allocation the shared row had to put in its second arena sub-row
        # because it came from a third arena: the row is shared by threads on up to 16 arenas.
        # That part depends on which arena glibc gave each thread, so: at least one per thread
        # beyond, at most that plus the row's allocations.
        full = err.get("arena_table_full", 0)
        res.true("%s errors.arena_table_full counts the threads beyond the rows" % sub,
                 beyond <= full <= beyond + other_alloc,
                 "got %s, want %d..%d" % (full, beyond, beyond + other_alloc))
        # The allocations from a third arena or more are counted with the row's second arena:
        # its by_arena entry says how many (other_arenas_alloc_count), which is exactly the part
        # of arena_table_full that is not one per thread beyond the rows.
        mixed = sum(int(b.get("other_arenas_alloc_count", -1)) for t in other for b in t.get("by_arena", []))
        res.eq("%s 'other threads' by_arena: other_arenas_alloc_count == arena_table_full - threads beyond"
               % sub, mixed, full - beyond)
        res.eq("%s other error counters 0" % sub,
               errors_nonzero(rep, ("unknown_free", "arena_table_full")), {})
        print("  %s: %.1f s, totals %s, arena_table_full %s (%d threads beyond the rows)"
              % (sub, el, rep.get("totals"), full, beyond))


# --------------------------------------------------------------------------------------
# 3. SIGKILL of peaktrace

def sigkill_peaktrace(ctx, exe, name):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    wl = Proc([exe, "spin"])
    if not wl.wait_for("out", r"^ops \d+", timeout=WAIT):
        res.fail(name, "the loop never reported: %s" % short(wl.err))
        wl.kill()
        return
    path, maps = libc_text(wl.pid)
    offs = elf_file_offsets(path, TEXT_FUNCS) if path else {}
    if not res.true("%s: target's libc and its allocator symbols found" % name,
                    path and maps and all(n in offs for n in TEXT_FUNCS), "libc %s, symbols %s" % (path, offs)):
        wl.kill()
        return
    res.eq("%s: before attach, libc text in the target == the file" % name,
           text_diff(wl.pid, path, maps, offs), {})
    before = loop_rate(wl, 0.5, windows=3)

    pr, ok = start_peaktrace(pt, wl.pid, os.path.join(tmp, "fault-sigkill"))
    if not res.true("%s: peaktrace attached" % name, ok, "no tracing line: %s" % short(pr.err)):
        pr.kill()
        wl.kill()
        return
    time.sleep(0.3)
    during = loop_rate(wl, 0.5, windows=1)
    d = text_diff(wl.pid, path, maps, offs)
    # Attached: malloc's entry byte is int3 in the target's copy (which proves the check can
    # see a probe at all).
    res.true("%s: while traced, malloc's first byte in the target is int3" % name,
             d is not None and "malloc" in d and d["malloc"][1].startswith("cc"),
             "diff %s" % d)

    os.kill(pr.pid, signal.SIGKILL)
    prc = pr.wait(10)
    res.eq("%s: peaktrace killed by SIGKILL" % name, prc, -signal.SIGKILL)
    t_kill = time.monotonic()
    # Its links die with its file descriptors: every breakpoint must be gone (bounded wait:
    # a uprobe-multi link is released after an RCU-tasks grace period).
    d = None
    while time.monotonic() - t_kill < 10:
        d = text_diff(wl.pid, path, maps, offs)
        if d == {}:
            break
        time.sleep(0.05)
    t_gone = time.monotonic() - t_kill
    res.eq("%s: after the kill, libc text in the target == the file (no uprobe left)" % name, d, {})
    res.true("%s: target still running" % name, pid_alive(wl.pid), "target is gone")
    after = loop_rate(wl, 0.5, windows=3)
    print("  %s: loop ops/s before %s, traced %s, after the kill %s; breakpoints gone %.2f s after"
          % (name, fmt_rate(before), fmt_rate(during), fmt_rate(after), t_gone))
    if before and during and after:
        res.true("%s: traced loop much slower (< 1/5 of untraced)" % name, during < before / 5,
                 "before %.0f/s, traced %.0f/s" % (before, during))
        # 2x, not 1.5x: other tests share the 2 CPUs (best-of windows still varied by 1.3x);
        # traced is ~150x slower, so 2x still tells the two apart by far.
        res.true("%s: loop back to untraced speed (within 2x)" % name, after > before / 2,
                 "before %.0f/s, after %.0f/s" % (before, after))
    else:
        res.fail("%s: loop rates measured" % name, "before %s traced %s after %s" % (before, during, after))
    wl.signal(signal.SIGTERM)
    res.eq("%s: target exits 0 when told (SIGTERM)" % name, wl.wait(WAIT), 0)
    res.true("%s: target says it finished" % name, "wl: spin done" in wl.out, short(wl.out[-200:]))


def fmt_rate(r):
    return "%.2fM" % (r / 1e6) if r else "?"


# --------------------------------------------------------------------------------------
# 4. two peaktrace instances on one PID

def phase_expect(phases):
    """Totals seen by a tracer attached for `phases` of wl_faults phases (wl_faults.c)."""
    size = {1: 1500, 2: 2500, 3: 3500}
    known = set()
    a_c = a_b = f_c = f_b = unknown = 0
    live = {}
    peak = 0
    for k in sorted(phases):
        a_c += 10
        a_b += 10 * size[k]
        known.add(k)
        live[k] = 10
        peak = max(peak, sum(n * size[j] for j, n in live.items()))
        frees = [(k, 5)] + ([(1, 5), (2, 5)] if k == 3 else [])
        for j, n in frees:
            if j in known:
                f_c += n
                f_b += n * size[j]
                live[j] -= n
            else:
                unknown += n
    lc = sum(live.values())
    lb = sum(n * size[j] for j, n in live.items())
    return {"alloc_count": a_c, "alloc_bytes": a_b, "free_count": f_c, "free_bytes": f_b,
            "live_count": lc, "live_bytes": lb, "peak_live_bytes": peak}, unknown


def two_instances(ctx, exe, name):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    wl = Proc([exe, "phases"])
    A = B = None
    try:
        if not wl.wait_for("out", "^wl: phase 1 ready", timeout=WAIT):
            res.fail(name, "workload never ready: %s" % short(wl.err))
            return
        dA, dB = os.path.join(tmp, "fault-two-A"), os.path.join(tmp, "fault-two-B")
        A, ok = start_peaktrace(pt, wl.pid, dA)
        if not res.true("%s: first peaktrace attached" % name, ok, short(A.err)):
            return
        wl.signal(signal.SIGUSR1)
        if not wl.wait_for("out", "^wl: phase 2 ready", timeout=WAIT):
            res.fail(name + ": phase 1", "not done: %s" % short(wl.out))
            return
        B, okB = start_peaktrace(pt, wl.pid, dB)
        if not okB:
            rcB = B.wait(WAIT)
            res.fail("%s: second peaktrace attached" % name,
                     "exit %s, stderr %r" % (rcB, short(B.err)))
        else:
            res.ok("%s: second peaktrace attached" % name)
        wl.signal(signal.SIGUSR1)
        if not wl.wait_for("out", "^wl: phase 3 ready", timeout=WAIT):
            res.fail(name + ": phase 2", "not done: %s" % short(wl.out))
            return
        A.signal(signal.SIGINT)
        res.eq("%s: first peaktrace (SIGINT after phase 2) exit status" % name, A.wait(WAIT), 0)
        res.true("%s: target still running after the first detached" % name, pid_alive(wl.pid), "gone")
        wl.signal(signal.SIGUSR1)
        res.eq("%s: target exit status" % name, wl.wait(WAIT), 0)
        res.true("%s: target ran all three phases" % name, "wl: phase 3 done" in wl.out, short(wl.out))
        for label, pr, outdir, phases, exited in [("first (phases 1-2)", A, dA, (1, 2), False),
                                                  ("second (phases 2-3)", B, dB, (2, 3), True)]:
            if pr is B and not okB:
                continue
            sub = "%s: %s" % (name, label)
            if pr is B:
                res.eq("%s exit status (ends with the target)" % sub, pr.wait(WAIT), 0)
            rep = load_report(res, sub, outdir)
            if not rep:
                continue
            want, unknown = phase_expect(phases)
            check_totals(res, sub, rep, want)
            res.eq("%s target.exited" % sub, rep.get("target", {}).get("exited"), exited)
            for k in (1, 2, 3):
                got = find_stack(rep, "^scn_phase%d$" % k)["alloc_count"]
                res.eq("%s stack scn_phase%d alloc_count" % (sub, k), got, 10 if k in phases else 0)
            res.eq("%s errors.unknown_free (phase 1's blocks freed in phase 3)" % sub,
                   rep.get("errors", {}).get("unknown_free"), unknown)
            res.eq("%s other error counters 0" % sub, errors_nonzero(rep, ("unknown_free",)), {})
            print("  %s: totals %s" % (sub, rep.get("totals")))
    finally:
        for p in (A, B, wl):
            if p:
                p.kill()


# --------------------------------------------------------------------------------------
# 5. the target killed mid-trace

def target_killed(ctx, exe, name):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    for mode in ("attach", "launch"):
        sub = "%s: %s" % (name, mode)
        outdir = os.path.join(tmp, "fault-killed-" + mode)
        if mode == "attach":
            wl = Proc([exe, "spin"])
            if not wl.wait_for("out", r"^ops \d+", timeout=WAIT):
                res.fail(sub, "loop never reported")
                wl.kill()
                continue
            target, src = wl.pid, wl
            pr, ok = start_peaktrace(pt, wl.pid, outdir)
            if not ok:
                res.fail(sub + " peaktrace attached", short(pr.err))
                pr.kill()
                wl.kill()
                continue
        else:
            pr, target = launch_peaktrace(pt, outdir, [exe, "spin"])
            src = pr     # the launched target's stdout is peaktrace's
            if target is None:
                res.fail(sub + " peaktrace tracing", short(pr.err))
                pr.kill()
                continue
        n0 = len(ops_lines(src.out))
        deadline = time.monotonic() + 10
        while len(ops_lines(src.out)) < n0 + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        res.true("%s target looping under the trace" % sub, len(ops_lines(src.out)) >= n0 + 3,
                 "no progress lines")
        os.kill(target, signal.SIGKILL)
        t0 = time.monotonic()
        rc = pr.wait(WAIT)
        el = time.monotonic() - t0
        if mode == "attach":
            res.eq("%s target killed by SIGKILL" % sub, wl.wait(5), -signal.SIGKILL)
        res.eq("%s peaktrace exit status" % sub, rc, 0)
        res.true("%s peaktrace ends soon after the kill (< 15 s)" % sub, el < 15, "took %.1f s" % el)
        rep = load_report(res, sub, outdir)
        if not rep:
            pr.kill()
            continue
        tgt = rep.get("target", {})
        res.eq("%s target (pid, exited, exit_status, exit_signal)" % sub,
               (tgt.get("pid"), tgt.get("exited"), tgt.get("exit_status"), tgt.get("exit_signal")),
               (target, True, None, signal.SIGKILL))
        try:
            with open(os.path.join(outdir, "report.txt")) as f:
                txt = f.read()
        except OSError:
            txt = ""
        res.true("%s report.txt says killed by signal 9" % sub, "killed by signal 9" in txt,
                 short(txt[:300]))
        tot = rep.get("totals", {})
        ac, fc = tot.get("alloc_count", 0), tot.get("free_count", 0)
        # The loop holds at most one 64-byte block; it may die holding it.
        res.true("%s totals of the loop consistent" % sub,
                 ac > 0 and tot.get("alloc_bytes") == 64 * ac and ac - fc in (0, 1)
                 and tot.get("live_count") == ac - fc and tot.get("free_bytes") == 64 * fc,
                 "totals %s" % tot)
        # Launch: every block is seen from the first malloc, so no unknown free. Attach: free
        # is probed before the entry probes (docs/design.md "Attach order"), so the loop's
        # frees in between are of blocks allocated untraced (~50 here): not an error there,
        # as in the case section; bounded by what the loop freed.
        unknown = (rep.get("errors") or {}).get("unknown_free", 0)
        if mode == "launch":
            res.eq("%s errors.unknown_free" % sub, unknown, 0)
        else:
            res.true("%s errors.unknown_free bounded" % sub, 0 <= unknown <= fc + 1,
                     "got %s with %s frees" % (unknown, fc))
        res.eq("%s other error counters 0" % sub, errors_nonzero(rep, ("unknown_free",)), {})
        print("  %s: peaktrace done %.2f s after the kill, totals %s, unknown_free %s"
              % (sub, el, tot, unknown))
        pr.kill()


# --------------------------------------------------------------------------------------

SCENARIOS = [
    ("fault/fork-exec storm", "wl_storm", storm),
    ("fault/thread churn", "wl_churn", churn),
    ("fault/peaktrace SIGKILL", "wl_faults", sigkill_peaktrace),
    ("fault/two instances", "wl_faults", two_instances),
    ("fault/target killed", "wl_faults", target_killed),
]


def run_section(ctx):
    res = ctx.res
    for name, wl, fn in SCENARIOS:
        if not res.wanted(name):
            continue
        exe = ctx.built.get(wl, {}).get("fp")
        if not exe:
            res.fail(name, "%s not built" % wl)
            continue
        t0 = time.monotonic()
        fn(ctx, exe, name)
        print("  %s: %.1f s" % (name, time.monotonic() - t0))
        res.flush()

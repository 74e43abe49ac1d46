# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The reference tracer and model: a workload run under LD_PRELOAD=ref_preload.so
(tests/workloads/ref_preload.c), which logs every outermost allocator call (run_reference), and
ref_model(), which applies docs/json-report.md's accounting rules to that log, naming stacks
through nm (Symbols). Used by the ref section (every case's figures re-derived without peaktrace
or BPF) and the fault section."""

import os
import re
import signal
import time

from harness import READY_MARK, SLEEP_MARK, STACK_FIELDS, TIMEOUT, TOTAL_FIELDS, Proc, run


class Symbols:
    """Address -> function name for ELF files, through `nm` (binutils)."""

    def __init__(self):
        self.cache = {}

    def table(self, path):
        if path in self.cache:
            return self.cache[path]
        syms = []
        for dyn in ([], ["-D"]):
            rc, out, _ = run(["nm", "-C", "-S", "--defined-only"] + dyn + [path], timeout=30)
            for line in out.splitlines():
                # "addr [size] type name" (name may contain spaces after demangling)
                m = re.match(r"^([0-9a-f]+) (?:([0-9a-f]+) )?([TtWwi]) (.+)$", line)
                if m:
                    name = re.sub(r"@.*$", "", m.group(4))   # "free@@GLIBC_2.2.5" -> "free"
                    syms.append((int(m.group(1), 16), int(m.group(2) or "0", 16), name))
            if syms:
                break
        syms.sort()
        self.cache[path] = syms
        return syms

    def lookup(self, path, offset):
        best = None
        for addr, size, name in self.table(path):
            if addr > offset:
                break
            if size == 0 or offset < addr + size:
                # prefer the last symbol starting at or below offset; for aliases at one
                # address keep the first name nm printed after sorting (deterministic)
                if best is None or addr > best[0]:
                    best = (addr, name)
        return best[1] if best else "[unknown %s+0x%x]" % (os.path.basename(path), offset)


def ref_model(log_lines, attach, exe, syms):
    """Applies docs/json-report.md's accounting rules to a ref_preload log.
    Returns a report.json-shaped dict (stacks keyed by frames[0] only) plus "ties":
    how often the live total came back to the peak with a different distribution
    (a case relying on per-stack peak figures must have none)."""
    started = not attach
    live = {}                  # ptr -> (site, size)
    st = {}                    # site -> counters
    tot = dict.fromkeys(TOTAL_FIELDS, 0)
    state = {"peak": 0, "snap": {}, "peak_count": 0, "ties": 0, "unknown_free": 0}

    def counters(site):
        return st.setdefault(site, dict.fromkeys(STACK_FIELDS[:6], 0))

    def alloc(site, ptr, size):
        c = counters(site)
        c["alloc_count"] += 1
        c["alloc_bytes"] += size
        c["live_count"] += 1
        c["live_bytes"] += size
        tot["alloc_count"] += 1
        tot["alloc_bytes"] += size
        tot["live_count"] += 1
        tot["live_bytes"] += size
        live[ptr] = (site, size)
        if tot["live_bytes"] >= state["peak"]:
            snap = {s: (v["live_count"], v["live_bytes"]) for s, v in st.items() if v["live_bytes"] or v["live_count"]}
            if tot["live_bytes"] == state["peak"] and snap != state["snap"]:
                state["ties"] += 1
            state["peak"] = tot["live_bytes"]
            state["peak_count"] = tot["live_count"]
            state["snap"] = snap

    def free(ptr):
        if ptr == 0:
            return
        if ptr not in live:
            state["unknown_free"] += 1
            return
        site, size = live.pop(ptr)
        c = counters(site)
        c["free_count"] += 1
        c["free_bytes"] += size
        c["live_count"] -= 1
        c["live_bytes"] -= size
        tot["free_count"] += 1
        tot["free_bytes"] += size
        tot["live_count"] -= 1
        tot["live_bytes"] -= size

    def resize(site, old, size, new):
        # realloc/reallocarray: success = free(old) + alloc(new); realloc(p, 0) frees p
        # and returns NULL; any other NULL result is a failure that changes nothing.
        if size >= 1 << 64:
            return
        if new:
            free(old)
            alloc(site, new, size)
        elif old and size == 0:
            free(old)

    for line in log_lines:
        f = line.split(" ")
        if len(f) < 8:
            continue
        fn = f[0]
        a0, a1, a2, r = (int(x, 16) for x in f[2:6])
        if fn == "mark":
            started = True
            continue
        if not started:
            continue
        module = f[6]
        if module in ("-", "") or os.path.basename(module) == os.path.basename(exe):
            module = exe
        site = syms.lookup(module, int(f[7], 16))
        if fn in ("malloc", "valloc", "pvalloc"):
            if r:
                alloc(site, r, a0)
        elif fn == "calloc":
            if r and a0 * a1 < 1 << 64:
                alloc(site, r, a0 * a1)
        elif fn in ("memalign", "aligned_alloc"):
            if r:
                alloc(site, r, a1)
        elif fn == "posix_memalign":
            if a2 == 0:
                alloc(site, r, a1)
        elif fn == "realloc":
            resize(site, a0, a1, r)
        elif fn == "reallocarray":
            resize(site, a0, a1 * a2, r)
        elif fn == "free":
            free(a0)

    tot["peak_live_bytes"] = state["peak"]
    tot["peak_live_count"] = state["peak_count"]
    stacks = []
    for site, c in sorted(st.items()):
        pc, pb = state["snap"].get(site, (0, 0))
        d = dict(c)
        d["peak_count"], d["peak_bytes"] = pc, pb
        d["frames"] = [{"func": site}]
        stacks.append(d)
    return {"totals": tot, "stacks": stacks, "errors": {"unknown_free": state["unknown_free"]},
            "ties": state["ties"]}


def run_reference(workload, args, mode, stop, ref_so, tmp):
    """Runs the workload under ref_preload.so like peaktrace would see it; returns
    (log lines, exit status, why-failed)."""
    log = os.path.join(tmp, "ref-%d.log" % int(time.monotonic() * 1e6))
    env = dict(os.environ, LD_PRELOAD=ref_so, REF_PRELOAD_OUT=log)
    argv = [workload] + (["--wait"] if mode == "attach" else []) + list(args)
    pr = Proc(argv, env=env)
    if mode == "attach":
        if not pr.wait_for("out", re.escape(READY_MARK), timeout=TIMEOUT):
            pr.kill()
            return None, None, "no ready mark"
        pr.signal(signal.SIGUSR1)
    if stop == "sigterm":
        if not pr.wait_for("out", re.escape(SLEEP_MARK), timeout=TIMEOUT):
            pr.kill()
            return None, None, "no sleep mark"
        pr.signal(signal.SIGTERM)
    rc = pr.wait(TIMEOUT)
    try:
        with open(log) as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    return lines, rc, None

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Running peaktrace over a workload (launch and attach), reading its report and timeline.jsonl,
and what it leaves in a target (breakpoints_left): shared by most sections."""

import json
import os
import re
import signal
import time

from harness import expand_report
from harness import READY_MARK, SLEEP_MARK, STACK_FIELDS, TIMEOUT, Proc, children_of, short

TRACING_RX = r"^peaktrace: tracing (?:PID )?%d\b"


class TraceRun:
    """One peaktrace run over a workload. Fields: rc, wl_rc, out (peaktrace stdout),
    err, outdir, why (setup failure), elapsed (tracing line -> exit)."""
    rc = wl_rc = why = elapsed = None
    out = err = ""


def trace_launch(pt, workload, args, outdir, extra=(), stop=None, on_tracing=None):
    r = TraceRun()
    r.outdir = outdir
    pr = Proc([pt, "-o", outdir] + list(extra) + ["--", workload] + list(args))
    m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b")
    t0 = time.monotonic()
    target = int(m.group(1)) if m else None
    if m and on_tracing:
        on_tracing(pr, target)
    if m and stop == "sigterm":
        if pr.wait_for("out", re.escape(SLEEP_MARK)):
            kids = [k for k in children_of(pr.pid) if k == target] or children_of(pr.pid)
            for k in kids:
                os.kill(k, signal.SIGTERM)
    r.rc = pr.wait(TIMEOUT)
    r.elapsed = time.monotonic() - t0
    r.out, r.err, r.target = pr.out, pr.err, target
    if not m:
        r.why = "no 'peaktrace: tracing' line on stderr (exit %s): %s" % (r.rc, short(r.err))
    pr.kill()   # a launched target left running
    return r


def trace_attach(pt, workload, args, outdir, extra=(), stop=None, on_tracing=None, leave_running=False,
                 before_go=None):
    r = TraceRun()
    r.outdir = outdir
    wl = Proc([workload, "--wait"] + list(args))
    r.target = wl.pid
    if not wl.wait_for("out", re.escape(READY_MARK)):
        wl.kill()
        r.why = "workload never became ready: %s" % short(wl.err)
        return r
    pr = Proc([pt, "-p", wl.pid, "-o", outdir] + list(extra))
    m = pr.wait_for("err", TRACING_RX % wl.pid)
    t0 = time.monotonic()
    if not m:
        r.rc = pr.wait(TIMEOUT)
        r.out, r.err = pr.out, pr.err
        r.why = "no 'peaktrace: tracing %d' line on stderr (exit %s): %s" % (wl.pid, r.rc, short(r.err))
        wl.kill()
        return r
    if before_go:
        before_go(pr, wl)   # tracing, the workload still waiting for SIGUSR1
    wl.signal(signal.SIGUSR1)
    if on_tracing:
        on_tracing(pr, wl)
    if stop == "sigterm" and not leave_running:
        if wl.wait_for("out", re.escape(SLEEP_MARK)):
            wl.signal(signal.SIGTERM)
    if not leave_running:
        r.wl_rc = wl.wait(TIMEOUT)
    r.rc = pr.wait(TIMEOUT)
    r.elapsed = time.monotonic() - t0
    r.out, r.err = pr.out, pr.err
    r.wl = wl
    if not leave_running:
        wl.kill()
    return r


def load_report(res, prefix, outdir):
    path = os.path.join(outdir, "report.json")
    try:
        with open(path) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % prefix, "unreadable: %s" % e)
        return None
    res.ok("%s: report.json" % prefix)
    return rep


def find_stack(rep, frame0):
    rx = re.compile(frame0)
    sel = [s for s in rep.get("stacks", []) if s.get("frames") and rx.search(str(s["frames"][0].get("func", "")))]
    return {k: sum(int(s.get(k, 0)) for s in sel) for k in STACK_FIELDS}


def breakpoints_left(pid):
    """Bytes of the target's executable libc mapping that differ from the file: a uprobe
    still installed is an int3 there. None if they could not be compared."""
    diff = 0
    try:
        with open("/proc/%d/maps" % pid) as f:
            maps = [l.split() for l in f]
        for m in maps:
            if len(m) < 6 or "x" not in m[1] or "libc.so" not in m[5]:
                continue
            lo, hi = (int(x, 16) for x in m[0].split("-"))
            with open("/proc/%d/mem" % pid, "rb") as mem, open(m[5], "rb") as lib:
                mem.seek(lo)
                lib.seek(int(m[2], 16))
                a, b = mem.read(hi - lo), lib.read(hi - lo)
            diff += sum(1 for x, y in zip(a, b) if x != y)
        return diff
    except OSError:
        return None


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def load_timeline(res, name, outdir):
    """(header, samples, events, end) of DIR/timeline.jsonl, or None after a failed check."""
    path = os.path.join(outdir, "timeline.jsonl")
    try:
        lines = read_jsonl(path)
    except (OSError, ValueError) as e:
        res.fail(name + ": timeline.jsonl readable, one JSON object per line", str(e))
        return None
    res.ok(name + ": timeline.jsonl readable, one JSON object per line")
    if not res.true(name + ": header first, end line last", len(lines) >= 2 and
                    lines[0].get("timeline") == 1 and lines[-1].get("end") is True,
                    short(json.dumps(lines[:1] + lines[-1:]), 300)):
        return None
    samples = [l for l in lines[1:-1] if "rss" in l]
    events = [l for l in lines[1:-1] if "event" in l]
    res.eq(name + ": every line a sample or an event", len(samples) + len(events), len(lines) - 2)
    keys = {"t", "rss", "anon", "file", "shmem", "heap", "rss_max", "heap_max"}
    res.true(name + ": samples have the fixed fields, integers, rss = anon + file + shmem, "
             "maxima >= levels",
             samples and all(keys <= set(s) and all(isinstance(s[k], int) for k in keys - {"t"}) and
                             s["rss"] == s["anon"] + s["file"] + s["shmem"] and
                             s["rss_max"] >= s["rss"] and s["heap_max"] >= s["heap"] for s in samples),
             short(json.dumps(samples[:3]), 300))
    ts = [l["t"] for l in lines[1:-1]]
    res.true(name + ": lines in time order", ts == sorted(ts), short(str(ts[:20]), 200))
    end = lines[-1]
    res.eq(name + ": end line's samples = sample lines", end.get("samples"), len(samples))
    res.true(name + ": end line counts dropped and missed_ticks",
             isinstance(end.get("dropped"), int) and isinstance(end.get("missed_ticks"), int), end)
    return lines[0], samples, events, end

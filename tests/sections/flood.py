# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""flood: fake Runtime API exchanges as fast as a process can make them (issue 23, finding 4).

wl_flood N makes N exchanges on a socketpair of its own (GET .../next, its answer, POST
.../fld-K/response), every 5000th holding 4 MiB at its peak; it says "wl: flood N big M".

  flood/memory: launch mode, N = 50,000 then 200,000: peaktrace's own VmHWM (polled from
      /proc/PID/status while it runs) is under 1,000 runs' plus 24 MiB both times, and the
      200k run's is within 16 MiB of the 50k run's (not linear: main grew ~1 KiB per recorded
      invocation); report.json keeps at most --max-invocations-kept (1000) invocations and says
      how many it did not keep (records - kept), the kernel saw exactly N starts (the workload's
      count), report.txt says "not kept in memory", and every big invocation that was recorded
      (in invocations.jsonl by its request id) is kept (the highest peaks are).
  flood/ringbuf: in those runs, a ring buffer loss names its kinds: ringbuf_lost equals the sum
      of ringbuf_lost_by_kind, report.txt's ringbuf_lost line names each kind lost, and no exit
      or code mapping was lost (invocation records are refused once the ring is three quarters full): the
      target's exit and its status 0 are in the report.
  flood/max-output: N = 50,000 with --max-output 1M: invocations.jsonl stays under 1 MiB plus one
      line, the lines written plus jsonl_lines_not_written equal the records, and report.txt says
      "--max-output 1.00 MiB reached".
  flood/usage: --max-invocations-kept 5: exit 2 with one "peaktrace: " line.
"""

import json
import os
import re
import threading
import time

from harness import Proc, run

SMALL, MID, BIG = 1000, 50000, 200000
BIG_EVERY = 5000
MIB = 1 << 20


def traced(pt, wl, n, outdir, extra=()):
    """peaktrace -o outdir [extra] -- wl n; returns (rc, VmHWM bytes, stdout, stderr)."""
    p = Proc([pt, "-q", "-o", outdir] + list(extra) + ["--", wl, str(n)])
    hwm = [0]

    def poll():
        while p.running():
            try:
                with open("/proc/%d/status" % p.pid) as f:
                    m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
                if m:
                    hwm[0] = max(hwm[0], int(m.group(1)) * 1024)
            except OSError:
                pass
            time.sleep(0.05)
    t = threading.Thread(target=poll, daemon=True)
    t.start()
    rc = p.wait(timeout=240)
    t.join(timeout=2)
    return rc, hwm[0], p.out, p.err


def load(outdir):
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        return rep, txt, lines
    except (OSError, ValueError) as e:
        return None, str(e), []


def check_run(res, name, n, rc, rep, txt, lines):
    res.eq("%s: exit code" % name, rc, 0)
    if rep is None:
        res.fail("%s: outputs readable" % name, txt)
        return
    b = rep.get("invocation_bounds", {})
    invs = rep.get("invocations", [])
    res.eq("%s: the kernel saw the workload's %d starts" % (name, n), b.get("seen_by_kernel"), n)
    res.true("%s: report.json keeps at most 1000 invocations" % name, len(invs) <= 1000, len(invs))
    res.eq("%s: kept = report.json's invocations" % name, b.get("kept"), len(invs))
    res.eq("%s: not_kept = records - kept" % name, b.get("not_kept"), b.get("records", 0) - len(invs))
    res.eq("%s: every record in invocations.jsonl" % name, len(lines), b.get("records"))
    if b.get("not_kept"):
        res.true("%s: report.txt says how many were not kept" % name,
                 re.search(r"%d of %d records not kept in memory" % (b["not_kept"], b["records"]), txt),
                 "no 'not kept in memory' line")
    if b.get("seen_by_kernel", 0) > b.get("recorded", 0):
        res.true("%s: report.txt says how many the kernel saw but were not recorded" % name,
                 "of the %d invocations the kernel saw start not recorded" % n in txt, "no such line")
    # The big ones (RSS peak 4 MiB above the rest) that were recorded are kept.
    big_ids = {"fld-%d" % k for k in range(BIG_EVERY // 2, n + 1, BIG_EVERY)}
    recorded_big = {x.get("request_id") for x in lines} & big_ids
    kept_ids = {x.get("request_id") for x in invs}
    res.true("%s: every big invocation recorded (%d) is kept" % (name, len(recorded_big)),
             recorded_big and recorded_big <= kept_ids, sorted(recorded_big - kept_ids)[:5])


def check_ringbuf(res, name, rep, txt):
    errs, kinds = rep.get("errors", {}), rep.get("ringbuf_lost_by_kind", {})
    lost = errs.get("ringbuf_lost", 0)
    res.eq("%s: ringbuf_lost = sum by kind" % name,
           sum(v for k, v in kinds.items() if k != "invocations_refused_ring_full"), lost)
    res.eq("%s: no exit lost" % name, kinds.get("exit"), 0)
    res.eq("%s: no code mapping lost" % name, kinds.get("code_mapping"), 0)
    tg = rep.get("target", {})
    res.true("%s: the target's exit seen (status 0)" % name,
             tg.get("exited") is True and tg.get("exit_status") == 0, (tg.get("exited"), tg.get("exit_status")))
    m = re.search(r"^\s+ringbuf_lost\s+\d+\s+(.*)$", txt, re.M)
    if lost:
        named = [k for k, v in kinds.items() if v and k != "invocations_refused_ring_full"]
        res.true("%s: the loss line names each kind lost (%s)" % (name, ", ".join(named)),
                 m and all("%s %d (" % (k, kinds[k]) in m.group(1) for k in named), m and m.group(1)[:300])
    else:
        res.true("%s: no loss, no loss line" % name, m is None, "ringbuf_lost line without a loss")


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    wl = built.get("wl_flood", {}).get("fp")
    names = ["flood/memory", "flood/ringbuf", "flood/max-output", "flood/usage"]
    if not any(res.wanted(n) for n in names):
        return
    if not wl:
        res.fail("flood/build", "wl_flood was not built")
        return

    if res.wanted("flood/usage"):
        rc, out, err = run([pt, "--max-invocations-kept", "5", "-o", os.path.join(tmp, "flood-usage"),
                            "--", wl, "10"])
        res.eq("flood/usage: exit 2", rc, 2)
        lines = [l for l in err.splitlines() if l.strip()]
        res.true("flood/usage: one peaktrace: line", len(lines) == 1 and lines[0].startswith("peaktrace: ")
                 and "max-invocations-kept" in lines[0], lines)

    if res.wanted("flood/memory") or res.wanted("flood/ringbuf"):
        runs = {}
        for n in (SMALL, MID, BIG):
            outdir = os.path.join(tmp, "flood-%d" % n)
            rc, hwm, out, err = traced(pt, wl, n, outdir)
            rep, txt, lines = load(outdir)
            runs[n] = (rc, hwm, rep, txt, lines)
            print("  flood: %d exchanges: peaktrace VmHWM %.1f MiB, %s recorded, %s kept, ringbuf_lost %s"
                  % (n, hwm / MIB, rep and rep["invocation_bounds"]["records"],
                     rep and rep["invocation_bounds"]["kept"], rep and rep["errors"]["ringbuf_lost"]))
        hwms = {n: runs[n][1] for n in runs}
        if res.wanted("flood/memory"):
            res.eq("flood/memory: %d: exit code" % SMALL, runs[SMALL][0], 0)
            for n in (MID, BIG):
                rc, hwm, rep, txt, lines = runs[n]
                check_run(res, "flood/memory: %d" % n, n, rc, rep, txt, lines)
                res.true("flood/memory: %d: VmHWM %.1f MiB under %d exchanges' %.1f + 24 MiB"
                         % (n, hwm / MIB, SMALL, hwms[SMALL] / MIB),
                         hwm and hwm < hwms[SMALL] + 24 * MIB, "grew")
            res.true("flood/memory: 4x the exchanges, VmHWM within 16 MiB (%.1f -> %.1f MiB)"
                     % (hwms[MID] / MIB, hwms[BIG] / MIB),
                     hwms[MID] and hwms[BIG] < hwms[MID] + 16 * MIB, "grew with the count")
        if res.wanted("flood/ringbuf"):
            for n in (MID, BIG):
                rc, hwm, rep, txt, lines = runs[n]
                if rep is None:
                    res.fail("flood/ringbuf: %d: outputs readable" % n, txt)
                else:
                    check_ringbuf(res, "flood/ringbuf: %d" % n, rep, txt)

    if res.wanted("flood/max-output"):
        outdir = os.path.join(tmp, "flood-cap")
        rc, hwm, out, err = traced(pt, wl, MID, outdir, ["--max-output", "1M"])
        res.eq("flood/max-output: exit code", rc, 0)
        rep, txt, lines = load(outdir)
        if rep is None:
            res.fail("flood/max-output: outputs readable", txt)
            return
        b = rep["invocation_bounds"]
        size = os.path.getsize(os.path.join(outdir, "invocations.jsonl"))
        res.true("flood/max-output: invocations.jsonl %d bytes, under 1 MiB + one line" % size,
                 size < MIB + 16384, size)
        res.true("flood/max-output: lines were cut", b.get("jsonl_lines_not_written", 0) > 0, b)
        res.eq("flood/max-output: lines written + not written = records",
               len(lines) + b.get("jsonl_lines_not_written", 0), b.get("records"))
        res.true("flood/max-output: report.txt says so", "--max-output 1.00 MiB reached" in txt,
                 [l for l in txt.splitlines() if "max-output" in l][:2])

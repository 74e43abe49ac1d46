#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/onnx-ab.py [--build BUILD] [--rounds N] [--setting NAME=VALUE] — what a piece of
advice costs, measured untraced (issue 21, item 5): the ONNX function (tools/functions/onnx, `make
lambda-onnx`) under tools/lambda-host with no tracer, run with and without the setting
(default MALLOC_MMAP_THRESHOLD_=32768, what peaktrace's ARENAS advice suggests), alternating A and B
in each round so that the machine's drift hits both alike.

Each run is a fresh sandbox (`lambda-host --events`: a cold start, then the 20 invocations of
tests/sections/onnx.py, 12 misses, 4 hits, 4 more misses with evictions). Figures, from the host's
log and the handler's own answers (tools/functions/onnx/index.js):
  per invocation  the host's REPORT Duration (ms), misses (a session loaded) and hits apart,
                  and the CPU time the handler measured (process.cpuUsage: every thread's user +
                  system; steadier than the wall time on a loaded machine);
  per run         the sum of the Durations, the process's peak RSS (the largest VmHWM the handler
                  read: it resets VmHWM at each invocation's start), its RSS at the end (VmRSS
                  after the last invocation) and the host's Max Memory Used (the cgroup's peak).
Printed: the median, min and max of each figure per setting, B's median over A's, and the
median [min..max] of each round's own B/A of a run's total.
--json FILE also writes every sample.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ONNX_DIR = os.path.join(ROOT, "tools", "functions", "onnx")
RIC = os.path.join(ONNX_DIR, "node_modules", ".bin", "aws-lambda-ric")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from sections.onnx import EVENTS  # noqa: E402  (the test's sequence, so the figures compare)

MiB = 1 << 20


def one_run(build, models, events_file, setting):
    """One sandbox through every event: {"misses": [ms], "hits": [ms], "total_ms", "peak_rss",
    "end_rss", "max_memory_used"} (bytes)."""
    argv = [os.path.join(build, "tools", "lambda-host"), "-q", "-m", "2048", "-t", "60",
            "--init-timeout", "60", "--runtime-port", "0", "--invoke-port", "0",
            "--task-root", ONNX_DIR, "-e", "ONNX_MODEL_DIR=" + models]
    if setting:
        argv += ["-e", setting]
    argv += ["-E", events_file, "--", RIC, "index.handler"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit("onnx-ab: lambda-host failed (%d): %s" % (p.returncode, p.stderr[-400:]))
    durations = [float(x) for x in re.findall(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms",
                                              p.stdout, re.M)]
    mmu = [int(x) for x in re.findall(r"Max Memory Used: (\d+) MB", p.stdout)]
    answers = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"request_id"')]
    if len(durations) != len(EVENTS) or len(answers) != len(EVENTS):
        sys.exit("onnx-ab: %d REPORT lines and %d answers for %d events: %s"
                 % (len(durations), len(answers), len(EVENTS), p.stdout[-400:]))
    return {"misses": [d for d, a in zip(durations, answers) if not a["hit"]],
            "hits": [d for d, a in zip(durations, answers) if a["hit"]],
            "miss_cpu": [a["cpu_ms"] for a in answers if not a["hit"]],
            "hits_cpu": [a["cpu_ms"] for a in answers if a["hit"]],
            "total_ms": sum(durations),
            "peak_rss": max(a["vmhwm_bytes"] or 0 for a in answers),
            "end_rss": answers[-1]["rss_end_bytes"],
            "max_memory_used": max(mmu) * MiB}


def spread(xs):
    return statistics.median(xs), min(xs), max(xs)


def row(label, a, b, unit, scale=1.0):
    ma, la, ha = spread([x / scale for x in a])
    mb, lb, hb = spread([x / scale for x in b])
    print("%-34s %9.1f [%7.1f..%7.1f] %9.1f [%7.1f..%7.1f]  %5.2fx"
          % (label + " (" + unit + ")", ma, la, ha, mb, lb, hb, mb / ma if ma else float("nan")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--setting", default="MALLOC_MMAP_THRESHOLD_=32768")
    ap.add_argument("--json", help="write every sample to this file")
    args = ap.parse_args()
    if not os.path.exists(RIC) or not os.path.exists(os.path.join(ONNX_DIR, "node_modules", "onnxruntime-node")):
        sys.exit("onnx-ab: run `make lambda-onnx` first")
    build = os.path.abspath(args.build)
    models = os.path.join(build, "onnx-models")
    subprocess.run(["node", os.path.join(ONNX_DIR, "gen-models.js"), models], check=True,
                   stdout=subprocess.DEVNULL)
    runs = {"A": [], "B": []}
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps({"model": m}) + "\n" for m in EVENTS))
        events_file = f.name
    try:
        for r in range(args.rounds):
            # Alternate which goes first, so neither always runs on a cooler page cache.
            order = ("A", "B") if r % 2 == 0 else ("B", "A")
            for k in order:
                runs[k].append(one_run(build, models, events_file, args.setting if k == "B" else None))
                print("round %d %s: total %.0f ms, peak RSS %.1f MiB" % (
                    r + 1, k, runs[k][-1]["total_ms"], runs[k][-1]["peak_rss"] / MiB), file=sys.stderr)
    finally:
        os.unlink(events_file)
    a, b = runs["A"], runs["B"]
    print("onnx-ab: %d rounds, %d invocations a run (%s); A = as is, B = %s; median [min..max]"
          % (args.rounds, len(EVENTS), "%d misses, %d hits" % (len(a[0]["misses"]), len(a[0]["hits"])),
             args.setting))
    print("%-34s %30s %30s %6s" % ("", "A", "B", "B/A"))
    row("miss: session loaded + run", [x for r in a for x in r["misses"]],
        [x for r in b for x in r["misses"]], "ms")
    row("hit: cached session run", [x for r in a for x in r["hits"]], [x for r in b for x in r["hits"]], "ms")
    row("miss: CPU time, all threads", [x for r in a for x in r["miss_cpu"]],
        [x for r in b for x in r["miss_cpu"]], "ms")
    row("hit: CPU time, all threads", [x for r in a for x in r["hits_cpu"]],
        [x for r in b for x in r["hits_cpu"]], "ms")
    row("a run's 20 invocations", [r["total_ms"] for r in a], [r["total_ms"] for r in b], "ms")
    # Paired: each round's B over its A (the two ran back to back, under the same load).
    ratios = [rb["total_ms"] / ra["total_ms"] for ra, rb in zip(a, b)]
    med, lo, hi = spread(ratios)
    print("%-34s %30s %30s  %5.2fx [%.2f..%.2f]" % ("a run's total, B/A in each round", "", "", med, lo, hi))
    row("peak RSS (handler's VmHWM)", [r["peak_rss"] for r in a], [r["peak_rss"] for r in b], "MiB", MiB)
    row("RSS at the end", [r["end_rss"] for r in a], [r["end_rss"] for r in b], "MiB", MiB)
    row("Max Memory Used (cgroup)", [r["max_memory_used"] for r in a], [r["max_memory_used"] for r in b],
        "MiB", MiB)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"setting": args.setting, "events": EVENTS, "A": a, "B": b}, f, indent=1)


if __name__ == "__main__":
    main()

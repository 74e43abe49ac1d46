#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/pyobjects.py BUILD_DIR — what --python-objects costs a pure-Python workload.

tests/workloads/wl_pyobjects.py (a dict of N strings, N tuples, N/2 instances, a grow-and-free
phase) times its own work ("wl: work seconds S": time.perf_counter around it, so peaktrace's
start-up, symbolizing and report writing are not in it). Per interpreter, interleaved ROUNDS
times in this one run (machine drift hits every configuration alike), medians shown:
  untraced                    the interpreter alone
  untraced PYTHONMALLOC=malloc   what the allocator switch alone costs (Debian's builds run so
                                 under --python-objects)
  peaktrace                   default mode: malloc probed, pymalloc's objects not traced
  --python-objects            every object traced
Ratios are against the untraced run. The load average is printed with the figures: this machine
is shared. Environment: ROUNDS (default 3), N (default 40000).
"""
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WL = os.path.join(ROOT, "tests", "workloads", "wl_pyobjects.py")


def work_seconds(argv, env):
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600)
    m = re.search(r"^wl: work seconds ([0-9.]+)", cp.stdout, re.M)
    if cp.returncode != 0 or not m:
        sys.exit("bench: %s failed (exit %s): %s" % (" ".join(argv), cp.returncode, cp.stderr[-300:]))
    return float(m.group(1))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    pt = os.path.join(build, "peaktrace")
    rounds = int(os.environ.get("ROUNDS", "3"))
    n = os.environ.get("N", "40000")
    pys = [p for p in ["/usr/bin/python3.11"] + sorted(glob.glob("/root/.pyenv/versions/3.11.*/bin/python3.11"))[-1:]
           if os.access(p, os.X_OK)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    out = tempfile.mkdtemp(prefix="pt-bench-pyobj-")
    configs = [
        ("untraced", [], {}),
        ("untraced PYTHONMALLOC=malloc", [], {"PYTHONMALLOC": "malloc"}),
        ("peaktrace", [pt, "-q", "-o", out, "--max-live", "4194304", "--"], {}),
        ("--python-objects", [pt, "-q", "-o", out, "--max-live", "4194304", "--python-objects", "--"], {}),
    ]
    print("load before: %s" % open("/proc/loadavg").read().strip())
    for py in pys:
        times = {c[0]: [] for c in configs}
        for _ in range(rounds):
            for name, pre, extra in configs:
                times[name].append(work_seconds(pre + [py, WL, n], dict(env, **extra)))
        base = statistics.median(times["untraced"])
        print("\n%s, N=%s, %d rounds (median, min-max of the work's own seconds)" % (py, n, rounds))
        print("  %-30s %9s %17s %8s" % ("configuration", "median s", "range", "ratio"))
        for name, _, _ in configs:
            t = times[name]
            print("  %-30s %9.3f %8.3f-%-8.3f %7.1fx" % (name, statistics.median(t), min(t), max(t),
                                                      statistics.median(t) / base))
    print("\nload after: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()

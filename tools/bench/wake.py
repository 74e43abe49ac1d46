#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/wake.py BUILD_DIR — how fast peaktrace notices a launched command's stops and exit.

Runs `peaktrace -o DIR -- /usr/bin/python3 -c pass` (full, and with the hidden --probe-floor:
no BPF event at all) under `perf trace -a -e exit_group,wait4,ptrace,execve` (perf's tracepoints,
not ptrace: peaktrace must be able to PTRACE_SEIZE its command) and reads, from the kernel's own
record of the system calls:

  exec stop   the command's execve to peaktrace's wait4 that reaps its exec stop: how long the
              new image is held (the probes of the new image go in meanwhile)
  exit        the command's exit_group to peaktrace's wait4 that reaps its exit stop
  after exit  the command's exit_group to peaktrace's own exit_group (collection, the report,
              the detach)

ROUNDS (default 5) rounds, configurations interleaved; BASE_PEAKTRACE=PATH adds another build's
binary as "base" rows in the same rounds. Medians, min and max in ms, with the load average
(this machine is shared). Needs perf (Debian: linux-perf). Not part of `make test`.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

RX = re.compile(r"^\s*([\d.]+) \(\s*[\d. ]*(?:ms)?\s*\): (\S+)/(\d+) (\w+)\((.*)")


def one(pt, extra, tmp):
    rec = os.path.join(tmp, "perf.txt")
    subprocess.run(["perf", "trace", "-a", "-e", "exit_group,wait4,ptrace,execve", "-o", rec, "--",
                    pt] + extra + ["-o", os.path.join(tmp, "out"), "--", "/usr/bin/python3", "-c", "pass"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    ptpid = tgt = None
    ev = {}
    with open(rec) as f:
        for line in f:
            m = RX.match(line)
            if not m:
                continue
            t, comm, pid, sc, rest = float(m.group(1)), m.group(2), int(m.group(3)), m.group(4), m.group(5)
            if ptpid is None and comm == "peaktrace":
                ptpid = pid
            # PTRACE_SEIZE (0x4206 = 16902): the command's pid.
            if pid == ptpid and sc == "ptrace" and "request: 16902" in rest and tgt is None:
                tgt = int(re.search(r"pid: (\d+)", rest).group(1))
            if tgt and pid == tgt and sc == "execve":
                ev.setdefault("exec", t)
            if tgt and pid == tgt and sc == "exit_group":
                ev["exit"] = t
            if pid == ptpid and sc == "wait4" and tgt and re.search(r"= %d\b" % tgt, rest):
                if "exit" in ev:
                    ev.setdefault("exit_reaped", t)
                elif "exec" in ev:
                    ev.setdefault("exec_reaped", t)
            if pid == ptpid and sc == "exit_group":
                ev["pt_exit"] = t
    r = {}
    if "exec_reaped" in ev:
        r["exec stop"] = ev["exec_reaped"] - ev["exec"]
    if "exit_reaped" in ev:
        r["exit"] = ev["exit_reaped"] - ev["exit"]
    if "pt_exit" in ev and "exit" in ev:
        r["after exit"] = ev["pt_exit"] - ev["exit"]
    return r


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    if not shutil.which("perf"):
        sys.exit("wake: perf not found (Debian: apt-get install linux-perf)")
    rounds = int(os.environ.get("ROUNDS", "5"))
    bins = [("", os.path.join(build, "peaktrace"))]
    if os.environ.get("BASE_PEAKTRACE"):
        bins.append(("base ", os.environ["BASE_PEAKTRACE"]))
    configs = [(label + mode, pt, extra) for label, pt in bins
               for mode, extra in (("full", []), ("floor", ["--probe-floor"]))]
    got = {c[0]: {} for c in configs}
    loads = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for name, pt, extra in configs:
                for k, v in one(pt, extra, tmp).items():
                    got[name].setdefault(k, []).append(v)
            loads.append(os.getloadavg())
    print("ms, %d interleaved rounds: median (min-max)" % rounds)
    print("%-12s %22s %22s %22s" % ("config", "exec stop", "exit", "after exit"))
    for name, _, _ in configs:
        cells = []
        for k in ("exec stop", "exit", "after exit"):
            v = got[name].get(k, [])
            cells.append("%.1f (%.1f-%.1f)" % (statistics.median(v), min(v), max(v)) if v else "-")
        print("%-12s %22s %22s %22s" % (name, *cells))
    print("load average (1 min) at start and after each round: " +
          " ".join("%.2f" % l[0] for l in loads))


if __name__ == "__main__":
    main()

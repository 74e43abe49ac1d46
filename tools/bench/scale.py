#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/scale.py BUILD_DIR — peaktrace on 2^17 distinct allocation stacks (wl_fanout).

One row per configuration and round: stacks (report.json stack_table.used), seconds from the
target's exit to peaktrace's exit with every report written, the tracer's CPU time over the same
span (the figure to compare on a loaded machine: waiting for a CPU does not count), its VmHWM and
the size of each output file. Part of `make bench`, not of `make test`: figures, never pass/fail.

Attach mode on purpose: wl_fanout --wait is this script's child, so its exit is seen exactly
(waitpid), and peaktrace is not the target's parent; peaktrace's high-water mark is read from
own high-water mark, not the target's (read from /proc/PID/status VmHWM until it exits). Configurations run interleaved, ROUNDS (default 3) times;
the table shows medians. Environment: ROUNDS, SCALE_VARIANTS (';'-separated extra option sets,
default "--json-stacks all"), SCALE_OTHER (another build's peaktrace, e.g. an older commit's,
run in the same interleaved rounds with its default options, for before/after ratios).
"""
import json, os, signal, statistics, subprocess, sys, tempfile, time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rounds = int(os.environ.get("ROUNDS", "3"))
variants = [""] + [v.strip() for v in os.environ.get("SCALE_VARIANTS", "--json-stacks all").split(";") if v.strip()]
pt = os.path.join(build, "peaktrace")
wl = os.path.join(build, "bench", "wl_fanout")
os.makedirs(os.path.dirname(wl), exist_ok=True)
subprocess.check_call(["gcc", "-O2", "-g", "-Wall", "-I", os.path.join(root, "tests", "workloads"),
                       "-o", wl, os.path.join(root, "tests", "workloads", "wl_fanout.c")])
FILES = ["report.json", "report.txt", "alloc.folded", "peak.folded", "live.folded", "alloc.svg",
         "alloc.speedscope.json", "profile.pb.gz"]


def cpu_of(pid):
    """A process's user+sys CPU seconds so far (/proc/PID/stat), None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def one(opts, tmp, ptbin=pt):
    out = tempfile.mkdtemp(dir=tmp)
    w = subprocess.Popen([wl, "--wait"], stdout=subprocess.PIPE)
    w.stdout.readline()                       # WL_READY_MARK: SIGUSR1 is blocked, it waits
    err = os.path.join(out, "stderr")
    with open(err, "w") as ef:
        p = subprocess.Popen([ptbin, "-q", "-p", str(w.pid), "--max-stacks", "262144", "-o", out] +
                             opts.split(), stdout=subprocess.DEVNULL, stderr=ef)
    deadline = time.monotonic() + 120
    while "peaktrace: tracing" not in open(err).read():
        if p.poll() is not None or time.monotonic() > deadline:
            w.kill()
            raise RuntimeError("peaktrace did not attach: " + open(err).read()[-300:])
        time.sleep(0.05)
    os.kill(w.pid, signal.SIGUSR1)
    w.wait()
    t_exit = time.monotonic()
    cpu_exit = cpu_of(p.pid)
    # VmHWM is the high-water mark of the mm since exec and never decreases, so its last
    # reading before peaktrace exits misses at most the last 2 ms. (wait4's ru_maxrss would not
    # do: a process forked from this script inherits this script's high-water mark at exec.)
    hwm, t_written, cpu_written = 0, None, None
    while True:
        cpu = cpu_of(p.pid)
        pid, status = os.waitpid(p.pid, os.WNOHANG)
        if pid:
            break
        if t_written is None and "peaktrace: reports written" in open(err).read():
            t_written = time.monotonic()
            cpu_written = cpu_of(p.pid)
        try:
            with open("/proc/%d/status" % p.pid) as f:
                hwm = max([hwm] + [int(l.split()[1]) for l in f if l.startswith("VmHWM:")])
        except (OSError, ValueError):
            pass
        time.sleep(0.002)
    t_done = time.monotonic()
    p.returncode = status
    with open(os.path.join(out, "report.json")) as f:
        rep = json.load(f)
    if t_written is None and "peaktrace: reports written" in open(err).read():
        t_written, cpu_written = t_done, cpu
    row = {"stacks": rep["stack_table"]["used"], "seconds": t_done - t_exit,
           "written_s": (t_written or float("nan")) - t_exit,
           "cpu_s": (cpu_written if cpu_written is not None else float("nan")) - cpu_exit,
           "vmhwm_mib": hwm / 1024.0,
           "vmhwm_collect_mib": rep["tracer"]["vmhwm_bytes"] / 2**20,
           "kept": len(rep["stacks"]), "left_out": (rep.get("stacks_left_out") or {}).get("stacks", 0)}
    for f in FILES:
        path = os.path.join(out, f)
        row[f] = os.path.getsize(path) / 2**20 if os.path.exists(path) else float("nan")
    subprocess.call(["rm", "-rf", out])
    return row


with tempfile.TemporaryDirectory() as tmp:
    other = os.environ.get("SCALE_OTHER")
    runs = [(v, v, pt) for v in variants] + ([("other: " + os.path.basename(os.path.dirname(os.path.abspath(other))), "", other)] if other else [])
    rows = {label: [] for label, _, _ in runs}
    for _ in range(rounds):
        for label, v, ptbin in runs:
            rows[label].append(one(v, tmp, ptbin))
    variants = [label for label, _, _ in runs]
print("\nSCALE: wl_fanout, 2^17 distinct allocation stacks, attach mode, median of %d rounds" % rounds)
cols = ["stacks", "kept", "left_out", "written_s", "cpu_s", "seconds", "vmhwm_mib", "vmhwm_collect_mib"] + FILES
print("  %-22s " % "options" + " ".join("%12s" % c[:12] for c in cols))
base = None
for v in variants:
    med = {c: statistics.median(r[c] for r in rows[v]) for c in cols}
    base = base or med
    print("  %-22s " % (v or "(default)") + " ".join(
        ("%12d" % med[c]) if c in ("stacks", "kept", "left_out") else "%12.2f" % med[c] for c in cols))
print("  written_s: target exit (waitpid) to peaktrace's \"reports written\" line (2 ms polls); cpu_s: peaktrace's")
print("  CPU time (user+sys, 10 ms ticks) over the same span, which other jobs on the machine disturb far less; seconds: to its")
print("  exit (detaching and freeing included); vmhwm_mib: peaktrace's")
print("  VmHWM, its last reading before it exited; vmhwm_collect_mib: its VmHWM once the profile was built (report.json tracer);")
print("  file columns in MiB.")

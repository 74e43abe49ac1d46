#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/bench/bench.sh BUILD_DIR — tracing overhead of peaktrace on allocbench, beside
# bcc's memleak-bpfcc and heaptrack when installed. Not part of `make test` (`make bench`).
#
# Environment: ROUNDS (default 5), OPS (allocbench operations, default 1000000),
# PEAKTRACE_ARGS (extra peaktrace options, e.g. "--unwind fp" to compare unwinders),
# PEAKTRACE_VARIANTS (more peaktrace configurations in the same interleaved rounds, ';'-separated
# option sets, e.g. "--no-arenas;--unwind fp;--sample-bytes 512K"), PEERS=0 (skip memleak-bpfcc
# and heaptrack: the variants against the untraced run only).
#
# What is measured, and why this way:
#  * Configurations run interleaved (untraced, peaktrace, memleak, heaptrack, then again)
#    ROUNDS times, in this one script run, so machine drift hits all of them alike;
#    the table shows medians.
#  * "loop s": allocbench's own timing of its allocation loop (CLOCK_MONOTONIC,
#    allocbench --time). This is the per-operation overhead the tracer imposes, and the
#    only number comparable across tools: memleak-bpfcc -c starts the command *before*
#    compiling its BPF program (seconds), so most of the loop would run untraced; it is
#    therefore run as `memleak-bpfcc -p PID` against `allocbench --wait`, released with
#    SIGUSR1 once memleak's probes are in place. Ratios are computed on this column.
#  * "wall s": the whole command as a user runs it — `peaktrace -o DIR -- allocbench`
#    (includes attaching, symbolizing and writing every report), `heaptrack allocbench`
#    (includes its trace post-processing). Not shown for memleak (it never exits on
#    its own; its wall time would be our choice of when to stop it).
#  * peaktrace's memory: max RSS of the peaktrace process alone. With `-- CMD` the
#    traced program is peaktrace's child and /usr/bin/time's figure could be the
#    child's, so this is one separate attach-mode run (`peaktrace -p` against
#    allocbench --wait: not its child) under /usr/bin/time -f %M. BPF maps live in
#    kernel memory, not in RSS: their size (bpftool's bytes_memlock of the maps held by
#    peaktrace) is printed beside it when bpftool can tell which process holds a map.
#    memleak-bpfcc's RSS is measured the same way for comparison.
#  * The error counters of peaktrace's last traced run are printed: overhead numbers
#    only mean something if nothing was dropped.
#  * Every run's checksum must equal the untraced one (tracing must not change the
#    program's behaviour); a mismatch is reported.
set -euo pipefail

BUILD=${1:-build}
ROUNDS=${ROUNDS:-5}
OPS=${OPS:-1000000}
HERE=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$BUILD/peaktrace" ]; then
	echo "bench: $BUILD/peaktrace not found (run make first)" >&2
	exit 1
fi
mkdir -p "$BUILD/bench"
# Built like a typical distribution binary: -O2, no frame pointers.
gcc -O2 -g -Wall -o "$BUILD/bench/allocbench" "$HERE/allocbench.c"

# memleak-bpfcc compiles its BPF C at start-up and needs kernel headers. When the
# running kernel has none (no /lib/modules/$(uname -r)/build, no CONFIG_IKHEADERS),
# give bcc the newest Debian linux-headers tree instead, merged from its -common and
# arch halves into one symlink tree (what /lib/modules/.../build normally is). With
# -p, memleak only attaches uprobes whose programs read pt_regs and call helpers, so
# headers of another kernel version do not change what it measures.
if command -v memleak-bpfcc >/dev/null 2>&1 && [ -z "${BCC_KERNEL_SOURCE:-}" ] &&
   [ ! -e "/lib/modules/$(uname -r)/build" ] && [ ! -e /sys/kernel/kheaders.tar.xz ]; then
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -n 1 || true)
	archdir=""
	if [ -n "$common" ]; then
		archdir=$(ls -d "${common%-common}"-* 2>/dev/null | grep -v -- '-common$' | head -n 1 || true)
	fi
	if [ -n "$common" ] && [ -n "$archdir" ]; then
		kh="$BUILD/bench/kheaders"
		rm -rf "$kh" && mkdir -p "$kh"
		cp -rs "$common/." "$kh/" 2>/dev/null || true
		cp -rsn "$archdir/." "$kh/" 2>/dev/null || true
		export BCC_KERNEL_SOURCE=$(cd "$kh" && pwd)
		echo "bench: no headers for kernel $(uname -r); memleak-bpfcc uses $(basename "$archdir")"
	fi
fi

exec python3 - "$BUILD" "$ROUNDS" "$OPS" <<'PYEOF'
import json, os, re, shlex, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

build, rounds, ops = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
bench = os.path.join(build, "bench", "allocbench")
peaktrace = os.path.join(build, "peaktrace")
peaktrace_args = shlex.split(os.environ.get("PEAKTRACE_ARGS", ""))
memleak = shutil.which("memleak-bpfcc") or ("/usr/sbin/memleak-bpfcc" if os.access("/usr/sbin/memleak-bpfcc", os.X_OK) else None)
heaptrack = shutil.which("heaptrack")
gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
TIMEOUT = 900
tmp = tempfile.mkdtemp(prefix="peaktrace-bench-")
is_root = os.geteuid() == 0
os.environ["PYTHONUNBUFFERED"] = "1"     # memleak-bpfcc is Python: see its lines as printed


class Proc:
    """Popen with both pipes drained in the background and a wait-for-text helper."""
    def __init__(self, argv, stdout=True):
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, start_new_session=True)
        self.buf = {"out": b"", "err": b""}
        self.cv = threading.Condition()
        self.threads = []
        for key, f in (("out", self.p.stdout), ("err", self.p.stderr)):
            if f is not None:
                t = threading.Thread(target=self._read, args=(key, f), daemon=True)
                t.start()
                self.threads.append(t)

    def _read(self, key, f):
        for chunk in iter(lambda: os.read(f.fileno(), 65536), b""):
            with self.cv:
                self.buf[key] += chunk
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()

    def text(self, key):
        with self.cv:
            return self.buf[key].decode("utf-8", "replace")

    def wait_for(self, key, regex, timeout=120):
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                m = re.search(regex, self.buf[key].decode("utf-8", "replace"), re.M)
                if m or time.monotonic() > deadline or self.p.poll() is not None:
                    return m
                self.cv.wait(0.1)

    def wait(self, timeout=TIMEOUT):
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = None
        for t in self.threads:
            t.join(2)
        return rc

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except OSError:
            pass
        self.p.wait()


def parse(out, err):
    m = re.search(r"allocbench: loop_ns=(\d+)", err)
    c = re.search(r"checksum=([0-9a-f]+)", out)
    return (int(m.group(1)) / 1e9 if m else None), (c.group(1) if c else None)


def run_untraced(i):
    t0 = time.monotonic()
    pr = Proc([bench, "--time", ops])
    rc = pr.wait()
    loop, ck = parse(pr.text("out"), pr.text("err"))
    return {"wall": time.monotonic() - t0, "loop": loop, "checksum": ck, "ok": rc == 0}


last_peaktrace_dir = [None]


def run_peaktrace(i, extra=()):
    out = os.path.join(tmp, "peaktrace-%d-%d" % (i, len(extra)))
    t0 = time.monotonic()
    pr = Proc([peaktrace] + peaktrace_args + list(extra) + ["-o", out, "--", bench, "--time", ops])
    rc = pr.wait()
    loop, ck = parse(pr.text("out"), pr.text("err"))
    if not extra:   # the error counters printed at the end are the main configuration's
        last_peaktrace_dir[0] = out
    return {"wall": time.monotonic() - t0, "loop": loop, "checksum": ck, "ok": rc == 0,
            "err": pr.text("err")}


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:[perf_event]":
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


def wait_probes_settled(pid, minimum=2, timeout=120):
    """memleak prints 'Attaching to pid' *before* attaching; its uprobes are perf
    events, so wait until the number of perf-event fds it holds stops growing."""
    deadline = time.monotonic() + timeout
    last, stable_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        n = perf_fds(pid)
        if n != last:
            last, stable_since = n, time.monotonic()
        elif n >= minimum and time.monotonic() - stable_since > 1.0:
            return n
        time.sleep(0.1)
    return last


def run_memleak(i, rss_wrapper=None):
    wl = Proc([bench, "--wait", "--time", ops])
    if not wl.wait_for("out", r"waiting for SIGUSR1"):
        wl.kill()
        return {"ok": False, "why": "allocbench did not start"}
    argv = [memleak, "-p", str(wl.p.pid), "3600"]      # interval 3600: never prints mid-run
    ml = Proc((rss_wrapper or []) + argv)
    if not ml.wait_for("out", r"Attaching to pid"):
        wl.kill(); ml.kill()
        return {"ok": False, "why": "memleak did not attach: " + ml.text("err")[-300:]}
    # the memleak process is the wrapper's child when wrapped by /usr/bin/time
    target = ml.p.pid
    if rss_wrapper:
        kids = open("/proc/%d/task/%d/children" % (ml.p.pid, ml.p.pid)).read().split()
        target = int(kids[0]) if kids else ml.p.pid
    wait_probes_settled(target)
    t0 = time.monotonic()
    os.kill(wl.p.pid, signal.SIGUSR1)
    rc = wl.wait()
    wall = time.monotonic() - t0
    if ml.p.poll() is not None:           # died mid-run: the loop ran (partly) untraced
        wl.kill()
        return {"ok": False, "why": "memleak exited early: " + ml.text("err")[-300:]}
    os.kill(target, signal.SIGINT)       # memleak exits on KeyboardInterrupt
    if ml.wait(60) is None:
        pass
    loop, ck = parse(wl.text("out"), wl.text("err"))
    return {"wall": wall, "loop": loop, "checksum": ck, "ok": rc == 0, "err": ml.text("err")}


def run_heaptrack(i):
    out = os.path.join(tmp, "heaptrack-%d" % i)
    t0 = time.monotonic()
    pr = Proc([heaptrack, "-o", out, bench, "--time", ops])
    rc = pr.wait()
    loop, ck = parse(pr.text("out"), pr.text("err"))
    return {"wall": time.monotonic() - t0, "loop": loop, "checksum": ck, "ok": rc == 0}


configs = [("untraced", run_untraced)]
notes = []
if is_root:
    configs.append(("peaktrace", run_peaktrace))
    for v in os.environ.get("PEAKTRACE_VARIANTS", "").split(";"):
        if v.strip():
            configs.append(("pt " + v.strip(), lambda i, a=shlex.split(v): run_peaktrace(i, a)))
    if os.environ.get("PEERS", "1") == "0":
        memleak = heaptrack = None
        notes.append("PEERS=0: memleak-bpfcc and heaptrack skipped")
    if memleak:
        configs.append(("memleak-bpfcc", run_memleak))
    else:
        notes.append("memleak-bpfcc not installed: skipped")
else:
    notes.append("not root: peaktrace and memleak-bpfcc skipped")
if heaptrack:
    configs.append(("heaptrack", run_heaptrack))
elif os.environ.get("PEERS", "1") != "0":
    notes.append("heaptrack not installed: skipped")

print("allocbench: %s ops, %d interleaved rounds of: %s%s" % (
      ops, rounds, ", ".join(c for c, _ in configs),
      " (peaktrace %s)" % " ".join(peaktrace_args) if peaktrace_args else ""), flush=True)
results = {name: [] for name, _ in configs}
try:
    for i in range(rounds):
        for name, fn in configs:
            r = fn(i)
            results[name].append(r)
            print("  round %d %-26s loop %s  wall %s%s" % (
                i + 1, name,
                "%.3f s" % r["loop"] if r.get("loop") is not None else "?",
                "%.3f s" % r["wall"] if r.get("wall") is not None else "?",
                "" if r.get("ok") else "  FAILED " + r.get("why", "") + r.get("err", "")[-300:]),
                flush=True)

    def med(name, key):
        v = [r[key] for r in results[name] if r.get("ok") and r.get(key) is not None]
        return statistics.median(v) if v else None

    base = med("untraced", "loop")
    ml = med("memleak-bpfcc", "loop") if "memleak-bpfcc" in results else None
    print()
    print("%-26s %10s %12s %12s %10s" % ("tool", "loop s", "x untraced", "x memleak", "wall s"))
    for name, _ in configs:
        loop = med(name, "loop")
        wall = med(name, "wall") if name != "memleak-bpfcc" else None
        print("%-26s %10s %12s %12s %10s" % (
            name,
            "%.3f" % loop if loop else "-",
            "%.2f" % (loop / base) if loop and base else "-",
            "%.2f" % (loop / ml) if loop and ml else "-",
            "%.3f" % wall if wall else "-"))
    print("(median of %d; loop = allocbench's allocation loop alone, ratios on loop; "
          "wall = whole command incl. tool start-up and reports)" % rounds)

    # Behaviour unchanged under tracing
    sums = {r.get("checksum") for rs in results.values() for r in rs if r.get("ok")}
    print("checksums: %s" % ("all equal (%s)" % sums.pop() if len(sums) == 1 else "DIFFER: %s" % sorted(s or "?" for s in sums)))

    # peaktrace's error counters of its last traced run
    if last_peaktrace_dir[0]:
        try:
            rep = json.load(open(os.path.join(last_peaktrace_dir[0], "report.json")))
            errs = rep.get("errors", {})
            tot = rep.get("totals", {})
            print("peaktrace unwinder: %s" % rep.get("unwind", "?"))
            print("peaktrace errors: " + " ".join("%s=%s" % kv for kv in errs.items()))
            print("peaktrace totals: alloc_count=%s free_count=%s" % (tot.get("alloc_count"), tot.get("free_count")))
        except (OSError, ValueError) as e:
            print("peaktrace errors: report.json unreadable: %s" % e)

    # Memory of the tracers themselves (attach mode, see header comment)
    if is_root and gnu_time:
        rss_file = os.path.join(tmp, "rss")
        wl = Proc([bench, "--wait", "--time", ops])
        if wl.wait_for("out", r"waiting for SIGUSR1"):
            pt = Proc([gnu_time, "-f", "%M", "-o", rss_file, peaktrace] + peaktrace_args +
                      ["-p", str(wl.p.pid), "-o", os.path.join(tmp, "peaktrace-rss")])
            memlock = None
            attached = pt.wait_for("err", r"^peaktrace: tracing")
            if not attached:
                wl.kill()
            else:
                # BPF map memory held by peaktrace (needs bpftool with pid support)
                try:
                    kids = open("/proc/%d/task/%d/children" % (pt.p.pid, pt.p.pid)).read().split()
                    ptpid = int(kids[0])
                    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                                     timeout=30).stdout or b"[]")
                    mine = [m for m in maps if any(p.get("pid") == ptpid for p in m.get("pids", []))]
                    if mine:
                        memlock = sum(int(m.get("bytes_memlock", 0)) for m in mine)
                except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                    pass
                os.kill(wl.p.pid, signal.SIGUSR1)
            wl.wait()
            pt.wait(120)
            try:
                if not attached:
                    raise ValueError("peaktrace did not attach: " + pt.text("err").strip()[-300:])
                kib = int(open(rss_file).read().split()[-1])
                print("peaktrace max RSS (attach mode, peaktrace process only): %.1f MiB%s" % (
                    kib / 1024, "; BPF maps (memlock): %.1f MiB" % (memlock / 2**20) if memlock else ""))
            except (OSError, ValueError, IndexError) as e:
                print("peaktrace max RSS: not measured (%s)" % e)
        else:
            wl.kill()
        if memleak:
            if os.path.exists(rss_file):
                os.unlink(rss_file)
            r = run_memleak(0, rss_wrapper=[gnu_time, "-f", "%M", "-o", rss_file])
            try:
                if not r.get("ok"):
                    raise ValueError(r.get("why", "run failed"))
                kib = int(open(rss_file).read().split()[-1])
                print("memleak-bpfcc max RSS (same method): %.1f MiB" % (kib / 1024))
            except (OSError, ValueError, IndexError) as e:
                print("memleak-bpfcc max RSS: not measured (%s)" % e)
    for n in notes:
        print("note: " + n)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
PYEOF

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/bench/bench.py BUILD ROUNDS OPS — what peaktrace costs, measured the way users feel it
(run by tools/bench/bench.sh, `make bench`; its header says why each figure is taken the way it is).

One run, ROUNDS interleaved rounds. In each round every workload runs once in every mode, one
after the other, so the machine's drift (other users' load) hits every mode alike:
  modes      untraced; floor (hidden --probe-floor: exactly the same uprobes, uretprobes and
             tracepoints attached, every program returning at once: the cost of the traps
             alone); full (default options); light (--light); sampled (--sample-bytes 512K);
             PEAKTRACE_VARIANTS adds more (';'-separated option sets). PEAKTRACE_ARGS goes to
             every traced mode. BASE_PEAKTRACE (another peaktrace binary) adds "base MODE" for
             each traced mode but the floor, run with that binary in the same rounds; MODES (a
             regex) keeps only the modes it matches.
  workloads  allocbench-st (one thread, OPS operations, its own loop timing), allocbench-mt
             (THREADS threads, default 2, OPS/THREADS operations each), faults (faultbench: one
             anonymous page fault per 4 KiB page of 128 MiB, THP off, ns per fault), and the
             bundled Lambda-like functions under tools/lambda-host: Python (Debian's python3,
             tools/functions/python) and Node (tools/functions/node, when `make lambda-node-ric`
             has installed aws-lambda-ric). A function's figure is the host's REPORT Duration of
             each invocation ({"mb": FN_MB}, default 8), INVOKES (default 10) per mode and round,
             after one discarded warm-up invocation per attach; the runtime process lives through
             every round and peaktrace attaches to it (-p) for each traced mode.
The table gives each figure's median, min and max over every sample, and the median's ratio to
the untraced one and to the floor. Then (BPF_STATS=1, the default as root) a separate pass with
the sysctl kernel.bpf_stats_enabled on (it adds its own clock reads, so never during the timed
rounds): each BPF program's kernel run time per call (hidden --prog-stats), which the machine's
load disturbs far less than wall time. Finally peers (memleak-bpfcc, heaptrack; PEERS=0 skips
them) on allocbench-st, and peaktrace's own memory.
"""
import json, os, re, shlex, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

build, rounds, ops = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
bench = os.path.join(build, "bench", "allocbench")
faultbench = os.path.join(build, "bench", "faultbench")
threads = int(os.environ.get("THREADS", "2"))
invokes = int(os.environ.get("INVOKES", "10"))
fn_mb = int(os.environ.get("FN_MB", "8"))
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


def parse_faults(out, err):
    m = re.search(r"ns_per_fault ([0-9.]+)", out)
    return (float(m.group(1)) if m else None), None


def cpu_of(regex, scale):
    """A parser of the CPU-time figure the workload prints beside its clock figure."""
    def parse_cpu(out, err):
        m = re.search(regex, out + err)
        return float(m.group(1)) * scale if m else None
    return parse_cpu


def task_cpu_ns(pid):
    """CPU time of every thread of pid so far (schedstat: ns on a CPU, not waiting for one)."""
    total = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                total += int(open("/proc/%d/task/%s/schedstat" % (pid, t)).read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


# Workloads the command runs itself (launched under peaktrace): name -> (argv, parser, unit).
ops_mt = str(max(1, int(ops) // threads))
# Each with its CPU-time twin: the process's own CPU time (traps and BPF programs run in its
# context are in it; waiting for a CPU other users hold is not), far steadier under load.
ALLOC_CPU = cpu_of(r"allocbench: loop_ns=\d+ cpu_ns=(\d+)", 1e-9)
WORKLOADS = [
    ("allocbench-st", [bench, "--time", ops], parse, "s", ALLOC_CPU),
    ("allocbench-mt", [bench, "--time", "--threads", str(threads), ops_mt], parse, "s", ALLOC_CPU),
    ("faults", [faultbench, "128", "9"], parse_faults, "ns/fault", cpu_of(r"cpu_ns_per_fault ([0-9.]+)", 1)),
]
MODES = [("untraced", None), ("floor", ["--probe-floor"]), ("full", []), ("light", ["--light"]),
         ("sampled", ["--sample-bytes", "512K"])]
for v in os.environ.get("PEAKTRACE_VARIANTS", "").split(";"):
    if v.strip():
        MODES.append(("pt " + v.strip(), shlex.split(v)))
# BASE_PEAKTRACE: another peaktrace binary (e.g. the main branch's, copied aside) run in every
# traced mode too, as "base MODE", interleaved with this build's in the same rounds.
base_peaktrace = os.environ.get("BASE_PEAKTRACE")
if base_peaktrace:
    MODES += [("base " + m, a) for m, a in MODES if a is not None and m != "floor"]
# MODES: a regex naming the modes to run (e.g. "untraced|light" for those alone).
MODES = [m for m in MODES if re.search(os.environ.get("MODES", ""), m[0])]


def pt_bin(mode):
    return base_peaktrace if mode.startswith("base ") else peaktrace
last_full_dir = [None]


def run_launched(i, wl, mode, args, extra=()):
    _, argv, parser, _, cpu_parser = wl
    out = os.path.join(tmp, "%s-%s-%d" % (wl[0], mode.replace(" ", "_"), i))
    cmd = list(argv) if args is None else \
        [pt_bin(mode), "-q"] + peaktrace_args + args + list(extra) + ["-o", out, "--"] + list(argv)
    t0 = time.monotonic()
    pr = Proc(cmd)
    rc = pr.wait()
    v, ck = parser(pr.text("out"), pr.text("err"))
    c = cpu_parser(pr.text("out"), pr.text("err"))
    if mode == "full" and not extra:
        last_full_dir[0] = out
    return {"wall": time.monotonic() - t0, "v": [v] if v is not None else [], "checksum": ck,
            "cpu": [c] if c is not None else [], "ok": rc == 0 and v is not None, "err": pr.text("err")}


# ---- the bundled Lambda-like functions -----------------------------------------------------
host = os.path.join(build, "tools", "lambda-host")
invoke = os.path.join(build, "tools", "invoke")
py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else shutil.which("python3")
node_dir = os.path.join(root, "tools", "functions", "node")
ric = os.path.join(node_dir, "node_modules", ".bin", "aws-lambda-ric")
FUNCTIONS = [("fn-python", ["--handler", "function.handler", "--task-root",
                            os.path.join(root, "tools", "functions", "python")],
              [py, os.path.join(root, "tools", "functions", "python", "bootstrap.py")], "python")]
if os.path.exists(ric):
    FUNCTIONS.append(("fn-node", ["--init-timeout", "30", "--task-root", node_dir],
                      [ric, "index.handler"], "node"))
# ONLY: a regex naming the workloads to run (e.g. "fn-" for the functions alone).
only = re.compile(os.environ.get("ONLY", ""))
WORKLOADS = [w for w in WORKLOADS if only.search(w[0])]
FUNCTIONS = [f for f in FUNCTIONS if only.search(f[0])]
REPORT_RE = re.compile(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms", re.M)


class Function:
    """One host and its runtime, alive through every round; peaktrace attaches per mode."""
    def __init__(self, name, host_args, runtime_argv, exe, port):
        self.name, self.port, self.exe = name, port, exe
        pidfile = os.path.join(tmp, name + ".pid")
        self.h = Proc([host, "-m", "512", "--runtime-port", str(port), "--invoke-port", str(port + 1),
                       "--pid-file", pidfile] + host_args + ["--"] + runtime_argv)
        self.rt = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.h.p.poll() is None:
            try:
                self.rt = int(open(pidfile).read().split()[0])
                # A version manager's shim execs the interpreter later: attach to the runtime.
                if exe in os.path.basename(os.readlink("/proc/%d/exe" % self.rt)):
                    break
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.1)
        # The runtime's first answer tells it is up (node's start-up takes a second or two).
        self.ok = self.rt is not None and self.invoke_n(1, timeout=60) is not None

    def invoke_n(self, n, timeout=120):
        before = len(REPORT_RE.findall(self.h.text("out") + self.h.text("err")))
        for _ in range(n):
            r = subprocess.run([invoke, "--port", str(self.port + 1), json.dumps({"mb": fn_mb})],
                               capture_output=True, timeout=timeout)
            if r.returncode != 0:
                return None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            d = [float(x) for x in REPORT_RE.findall(self.h.text("out") + self.h.text("err"))]
            if len(d) >= before + n:
                return d[before:before + n]
            time.sleep(0.05)
        return None

    def run(self, i, mode, args, extra=()):
        pt = None
        if args is not None:
            out = os.path.join(tmp, "%s-%s-%d" % (self.name, mode.replace(" ", "_"), i))
            pt = Proc([pt_bin(mode), "-q"] + peaktrace_args + args + list(extra) +
                      ["-p", str(self.rt), "-o", out])
            if not pt.wait_for("err", r"^peaktrace: tracing PID"):
                pt.kill()
                return {"ok": False, "v": [], "why": "peaktrace did not attach: " + pt.text("err")[-300:]}
        self.invoke_n(1)        # warm-up after the attach (first-use costs), not counted
        c0 = task_cpu_ns(self.rt)
        d = self.invoke_n(invokes)
        c1 = task_cpu_ns(self.rt)
        cpu = [(c1 - c0) / 1e6 / invokes] if d and c0 is not None and c1 is not None else []
        if pt:
            os.kill(pt.p.pid, signal.SIGINT)
            rc = pt.wait(300)
            if rc != 0:
                return {"ok": False, "v": d or [], "why": "peaktrace exit %s: %s" % (rc, pt.text("err")[-300:])}
        return {"ok": d is not None, "v": d or [], "cpu": cpu, "why": "" if d else "an invocation failed"}

    def stop(self):
        try:
            os.killpg(self.h.p.pid, signal.SIGTERM)
        except OSError:
            pass
        if self.h.wait(30) is None:
            self.h.kill()


# ---- BPF stats: per-program kernel time --------------------------------------------------------
def prog_stats_pass(functions):
    """Each traced mode once more with kernel.bpf_stats_enabled=1 and --prog-stats: ns per call
    of every program, and the BPF time per allocbench operation / per fault / per invocation."""
    try:
        old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    except OSError:
        print("BPF stats: not measured (no kernel.bpf_stats_enabled)")
        return
    rows = {}
    try:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
        for mode, args in MODES:
            if args is None:
                continue
            for wl in WORKLOADS:
                f = os.path.join(tmp, "ps-%s-%s" % (wl[0], mode.replace(" ", "_")))
                run_launched(99, wl, mode, args, ["--prog-stats", f])
                rows[(wl[0], mode)] = read_prog_stats(f)
            for fn in functions:
                f = os.path.join(tmp, "ps-%s-%s" % (fn.name, mode.replace(" ", "_")))
                fn.run(99, mode, args, ["--prog-stats", f])
                rows[(fn.name, mode)] = read_prog_stats(f)
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)
    per = {"allocbench-st": int(ops), "allocbench-mt": int(ops_mt) * threads,
           "faults": 9 * 128 * 256}
    print()
    print("BPF programs' kernel time (kernel.bpf_stats_enabled, one run per mode; tracepoints count "
          "every process's events, each ending at the target check):")
    print("%-14s %-10s %14s   %s" % ("workload", "mode", "BPF ns/unit", "ns/call of the busiest programs"))
    for (w, mode), st in rows.items():
        if not st:
            print("%-14s %-10s %14s" % (w, mode, "-"))
            continue
        tot = sum(ns for _, ns in st.values())
        unit = per.get(w, invokes + 1)
        busy = sorted(st.items(), key=lambda kv: -kv[1][1])[:5]
        print("%-14s %-10s %14.0f   %s" % (w, mode, tot / unit, "  ".join(
            "%s %d/%.0f" % (n, c, ns / c) for n, (c, ns) in busy if c)))
    print("(BPF ns/unit: all programs' run time per allocbench operation, per fault, per invocation "
          "(warm-up included); per program: calls/ns per call)")


def read_prog_stats(path):
    st = {}
    try:
        for line in open(path):
            n, c, ns = line.split()
            if int(c):
                st[n] = (int(c), int(ns))
    except (OSError, ValueError):
        pass
    return st


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



def tracer_memory():
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

def fmt(v):
    return "-" if v is None else ("%.4g" % v if v < 1000 else "%.0f" % v)


def ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else ""


def table(results, order):
    """Each figure's median, min and max; its median and its min as ratios to the untraced one
    and to the floor. Under other users' load the min is the least disturbed run of each mode,
    so its ratios are shown beside the medians'."""
    print()
    print("%-18s %-10s %9s %9s %9s %-8s %4s  %-13s %-13s" % (
        "workload", "mode", "median", "min", "max", "unit", "n", "x untraced", "x floor"))
    print("%-18s %-10s %9s %9s %9s %-8s %4s  %-13s %-13s" % ("", "", "", "", "", "", "", "med  (min)", "med  (min)"))
    for w, unit in order:
        base, floor = results.get((w, "untraced")), results.get((w, "floor"))
        for mode, _ in MODES + PEERS:
            v = results.get((w, mode))
            if v is None:
                continue
            if not v:
                print("%-18s %-10s %9s" % (w, mode, "FAILED"))
                continue
            m, lo = statistics.median(v), min(v)
            xu = "%s (%s)" % (ratio(m, statistics.median(base)), ratio(lo, min(base))) \
                if base and mode != "untraced" else ""
            xf = "%s (%s)" % (ratio(m, statistics.median(floor)), ratio(lo, min(floor))) \
                if floor and mode not in ("untraced", "floor") and mode in dict(MODES) else ""
            print("%-18s %-10s %9s %9s %9s %-8s %4d  %-13s %-13s" % (
                w, mode, fmt(m), fmt(lo), fmt(max(v)), unit, len(v), xu, xf))
    for key, what in (("faults", "by the clock"), ("faults cpu", "in CPU time")):
        f = results.get((key, "untraced"))
        if not f:
            continue
        u, ul = statistics.median(f), min(f)
        for mode in ("full", "light", "floor"):
            v = results.get((key, mode))
            if v:
                m, ml = statistics.median(v), min(v)
                print("page fault %s, %s: %.0f ns vs %.0f ns untraced (%.2fx); least disturbed runs: "
                      "%.0f vs %.0f ns (%.2fx)" % (what, mode, m, u, m / u, ml, ul, ml / ul))


PEERS = []
if not is_root:
    print("bench: not root: only untraced runs are possible; run as root")
    sys.exit(1)
notes = []
if os.environ.get("PEERS", "1") == "0":
    memleak = heaptrack = None
    notes.append("PEERS=0: memleak-bpfcc and heaptrack skipped")
if memleak:
    PEERS.append(("memleak-bpfcc", run_memleak))
else:
    notes.append("memleak-bpfcc not installed or skipped")
if heaptrack:
    PEERS.append(("heaptrack", run_heaptrack))
functions = []
if os.access(host, os.X_OK) and os.access(invoke, os.X_OK):
    port = 24000 + (os.getpid() % 2000) * 2
    for k, (name, hargs, rargv, exe) in enumerate(FUNCTIONS):
        fn = Function(name, hargs, rargv, exe, port + 4 * k)
        if fn.ok:
            functions.append(fn)
        else:
            notes.append("%s: the host did not start it: %s" % (name, fn.h.text("err")[-300:]))
            fn.stop()
    if not os.path.exists(ric) and only.search("fn-node"):
        notes.append("fn-node skipped: aws-lambda-ric not installed (make lambda-node-ric)")
else:
    notes.append("functions skipped: lambda-host not built (make lambda-host)")

try:
    load0 = open("/proc/loadavg").read().split()[:3]
    print("peaktrace bench: %d interleaved rounds; modes: %s; allocbench %s ops (mt: %d threads x %s); "
          "faultbench 128 MiB x 9; functions: %s ({\"mb\": %d}, %d invocations per mode and round)%s" % (
              rounds, ", ".join(m for m, _ in MODES), ops, threads, ops_mt,
              ", ".join(f.name for f in functions) or "none", fn_mb, invokes,
              " (peaktrace %s)" % " ".join(peaktrace_args) if peaktrace_args else ""), flush=True)
    print("load average at start: %s" % " ".join(load0), flush=True)
    results, checks = {}, {}
    for i in range(rounds):
        for wl in WORKLOADS:
            for mode, args in MODES:
                r = run_launched(i, wl, mode, args)
                results.setdefault((wl[0], mode), []).extend(r["v"])
                results.setdefault((wl[0] + " cpu", mode), []).extend(r.get("cpu", []))
                if r["ok"] and r["checksum"]:
                    checks.setdefault(wl[0], set()).add(r["checksum"])
                print("  round %d %-14s %-22s %s%s" % (i + 1, wl[0], mode, " ".join(fmt(x) for x in r["v"]),
                      "" if r["ok"] else "  FAILED " + r.get("err", "")[-300:]), flush=True)
        for fn in functions:
            for mode, args in MODES:
                r = fn.run(i, mode, args)
                results.setdefault((fn.name, mode), []).extend(r["v"] if r["ok"] else [])
                results.setdefault((fn.name + " cpu", mode), []).extend(r.get("cpu", []) if r["ok"] else [])
                print("  round %d %-14s %-22s median %s ms%s" % (
                    i + 1, fn.name, mode, fmt(statistics.median(r["v"])) if r["v"] else "?",
                    "" if r["ok"] else "  FAILED " + r.get("why", "")), flush=True)
        for name, run in PEERS:
            r = run(i)
            results.setdefault(("allocbench-st", name), []).extend([r["loop"]] if r.get("ok") and r.get("loop") else [])
            if r.get("ok") and r.get("checksum"):
                checks.setdefault("allocbench-st", set()).add(r["checksum"])
    load1 = open("/proc/loadavg").read().split()[:3]
    order = [row for w in WORKLOADS for row in ((w[0], w[3]), (w[0] + " cpu", w[3]))] + \
        [row for f in functions for row in ((f.name, "ms"), (f.name + " cpu", "ms"))]
    table(results, order)
    print("(median/min/max over every sample of every round: allocbench's loop seconds, faultbench's "
          "ns per fault, each invocation's REPORT Duration; ratios of the medians, and in brackets "
          "of the mins. A \"cpu\" row: the same, in CPU time of the traced process (allocbench's "
          "and faultbench's CLOCK_PROCESS_CPUTIME_ID; the runtime's schedstat per invocation, one "
          "sample per mode and round), which waiting for a CPU held by other users does not inflate)")
    print("load average: %s at start, %s at the end (2 CPUs)" % (" ".join(load0), " ".join(load1)))
    for w, s in checks.items():
        print("checksums %s: %s" % (w, "all equal" if len(s) == 1 else "DIFFER: %s" % sorted(s)))
    if last_full_dir[0]:
        try:
            rep = json.load(open(os.path.join(last_full_dir[0], "report.json")))
            print("peaktrace (full, last run) errors: " + " ".join("%s=%s" % kv for kv in rep.get("errors", {}).items()))
        except (OSError, ValueError) as e:
            print("peaktrace errors: report.json unreadable: %s" % e)
    if os.environ.get("BPF_STATS", "1") != "0":
        prog_stats_pass(functions)
    if any(w[0] == "allocbench-st" for w in WORKLOADS):
        tracer_memory()
    for n in notes:
        print("note: " + n)
finally:
    for fn in functions:
        fn.stop()
    shutil.rmtree(tmp, ignore_errors=True)

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/run.py -- the `make test` driver (python3, standard library only).

    python3 tests/run.py --build build [--filter REGEX] [--keep] [--print-ref]

Sections, in order:
  unit      every BUILD/tests/unit/test_* binary; each "ok - " / "not ok - " line is a
            test. A binary that crashes, times out, or exits non-zero without a
            "not ok" line counts as one failure.
  build     tests/workloads/wl_*.c / wl_*.cpp compiled twice into BUILD/tests/workloads/:
            NAME_fp   (-O2 -g -fno-omit-frame-pointer)
            NAME_nofp (-O2 -g -fomit-frame-pointer)
            plus wl_static (gcc -static -s) and ref_preload.so (the reference tracer).
  ref       each case's expected figures re-derived without peaktrace or BPF: the
            workload runs under LD_PRELOAD=ref_preload.so, which logs every outermost
            allocator call; ref_model() applies docs/json-report.md's accounting rules.
            This keeps tests/cases/*.json honest; it needs neither root nor BPF.
  case      tests/cases/*.json run under peaktrace, launch mode (peaktrace -o DIR --
            WORKLOAD) and attach mode (WORKLOAD --wait; peaktrace -p PID; SIGUSR1 once
            peaktrace prints "peaktrace: tracing"), for each build flavor unless the
            case pins one; every expected figure is checked exactly against
            DIR/report.json, plus error counters, report invariants and output files.
  cli       bad input and lifecycle: exit codes 2/3/4/5/6 with one "peaktrace: " line
            on stderr, the target unharmed after a failed or killed attach, a target
            exiting mid-trace, -d, SIGINT.
  pprof     `go tool pprof -top` reads profile.pb.gz (only if `go` is on PATH).
  sample    --sample-bytes on wl_sample (launch and attach): totals exact, per-stack
            estimates within 5 standard deviations (run_sample_section states them).
  node      a node --perf-basic-prof script (tests/workloads/js_alloc.js), launched and
            attached: its JS function by name in the folded stacks (skipped without node).
  arenas    wl_arenas under peaktrace (launch): report.json's "arenas" agrees with glibc's
            own books, printed by the workload at its final point: per arena
            live_chunk_bytes == malloc_info in-use - 656 (main) / - 2256 (thread arena),
            mmapped live chunk bytes == mallinfo2 hblkhd, each thread's arena as the thread
            named it (the formula and why it is exact: tests/workloads/wl_arenas.c).
  allocators  wl_allocators under LD_PRELOAD=jemalloc / tcmalloc / mimalloc (Debian
            libjemalloc2, libtcmalloc-minimal4, libmimalloc2.0; skipped when absent), and
            wl_allocators_c built with musl-gcc (musl-tools): exact figures of every
            scenario (C API, C++ new/delete incl. sized and aligned, jemalloc *allocx),
            no error counter, launch and attach, and "arenas": {"covered": false}.

BPF sections (case, cli, pprof) count as skipped unless running as root with
/sys/kernel/btf/vmlinux. Every subprocess has a timeout and every process started
here is killed (by its own process group id) before exit.

Output: one line per test, "PASS name", "FAIL name: got X want Y" or "SKIP name: why",
and last exactly one line "N passed, N failed, N skipped". Exit status 1 if any failed.

Case file format (tests/cases/NAME.json):
  {
    "description": "...", "notes": ["..."],
    "command": ["wl_basic", ARGS...],   workload name (built flavors are NAME_fp/_nofp)
    "build": {"fp": true},              optional: pin one flavor
    "mode": "launch" | "attach" | [..], optional: pin mode(s); default both
    "peaktrace_args": ["--perf-uprobes"], optional extra peaktrace options
    "stop": "exit" | "sigterm",         how the workload ends (default: exits by itself;
                                        "sigterm": sent once it prints "wl: sleeping")
    "expect": {                         figures, all exact
      "totals": {"alloc_count": N, ...},          report.totals.*
      "peak_live_bytes": N,                       = report.totals.peak_live_bytes
      "unwind": "fp",                             = report.unwind (default "dwarf")
      "errors": {"unknown_free": N},              unlisted counters must be 0; in attach
                                                  mode unknown_free is free unless listed
      "stacks": [{"name": "...", "frame0": REGEX, stacks whose frames[0].func matches
                  "frame1": REGEX, "fp_only": true,  (narrowing, _fp flavor only)
                  "frame": REGEX,                 some frame's func matches
                  "frames": [REGEX, ...],         each matches a frame's func, in this
                                                  order, leaf first (gaps allowed)
                  "alloc_count": N, "alloc_bytes": N, "free_count": N, "free_bytes": N,
                  "live_count": N, "live_bytes": N, "peak_count": N, "peak_bytes": N}]
    },                                  figures of a selector are sums over its matches
    "expect_launch": {...}, "expect_attach": {...}    merged into "expect" for that mode
  }
"""

import argparse
import copy
import glob
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOAD_SRC = os.path.join(ROOT, "tests", "workloads")
CASES_DIR = os.path.join(ROOT, "tests", "cases")

TIMEOUT = 60.0            # seconds, for any single subprocess
READY_MARK = "wl: waiting for SIGUSR1"     # wl_common.h WL_READY_MARK
SLEEP_MARK = "wl: sleeping"                # wl_sleep.c WL_SLEEP_MARK
FLAVORS = {
    "fp": ["-O2", "-g", "-fno-omit-frame-pointer"],
    "nofp": ["-O2", "-g", "-fomit-frame-pointer"],
}
STACK_FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes",
                "live_count", "live_bytes", "peak_count", "peak_bytes"]
TOTAL_FIELDS = ["alloc_count", "alloc_bytes", "free_count", "free_bytes",
                "live_count", "live_bytes", "peak_live_count", "peak_live_bytes"]
OUTPUT_FILES = ["report.txt", "report.json", "live.folded", "peak.folded", "alloc.folded",
                "live.svg", "peak.svg", "alloc.svg", "profile.pb.gz"]
# The case run (name, flavor, mode) whose profile.pb.gz the pprof section reads.
PPROF_SOURCE = ("basic", "fp", "launch")


# --------------------------------------------------------------------------------------
# Results

class Results:
    """Counts and prints tests. A test name is "section/what: detail"."""

    def __init__(self, filt):
        self.passed = self.failed = self.skipped = 0
        self.filter = re.compile(filt) if filt else None

    def wanted(self, name):
        return self.filter is None or self.filter.search(name) is not None

    def ok(self, name):
        self.passed += 1
        print("PASS " + name, flush=True)

    def fail(self, name, why):
        self.failed += 1
        print("FAIL %s: %s" % (name, why), flush=True)

    def skip(self, name, why):
        self.skipped += 1
        print("SKIP %s: %s" % (name, why), flush=True)

    def eq(self, name, got, want):
        """Exact comparison; True if equal."""
        if got == want:
            self.ok(name)
            return True
        self.fail(name, "got %r want %r" % (got, want))
        return False

    def true(self, name, cond, why):
        if cond:
            self.ok(name)
        else:
            self.fail(name, why)
        return bool(cond)


# --------------------------------------------------------------------------------------
# Processes: every child gets its own session (so its process group id is its pid and
# cleanup kills it and its descendants by that id), pipes drained by reader threads
# (so a chatty child never blocks), and a timeout on every wait.

LIVE_PROCS = []


class Proc:
    def __init__(self, argv, env=None, stdout=True, cwd=None):
        self.argv = [str(a) for a in argv]
        self.buf = {"out": bytearray(), "err": bytearray()}
        self.cv = threading.Condition()
        self.readers = []
        self.p = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=env, start_new_session=True, cwd=cwd)
        self.pid = self.p.pid
        self.start = time.monotonic()
        LIVE_PROCS.append(self)
        for key, f in (("out", self.p.stdout), ("err", self.p.stderr)):
            if f is None:
                continue
            t = threading.Thread(target=self._reader, args=(key, f), daemon=True)
            t.start()
            self.readers.append(t)

    def _reader(self, key, f):
        fd = f.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            with self.cv:
                if not chunk:
                    self.cv.notify_all()
                    break
                self.buf[key] += chunk
                self.cv.notify_all()
        f.close()

    def text(self, key):
        with self.cv:
            return self.buf[key].decode("utf-8", "replace")

    @property
    def out(self):
        return self.text("out")

    @property
    def err(self):
        return self.text("err")

    def wait_for(self, key, regex, timeout=TIMEOUT):
        """Wait until stream `key` matches `regex` (multiline). Returns the match or
        None on timeout or when the process ended without printing it."""
        rx = re.compile(regex, re.M)
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                m = rx.search(self.buf[key].decode("utf-8", "replace"))
                if m:
                    return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                if self.p.poll() is not None and not any(t.is_alive() for t in self.readers):
                    return None
                self.cv.wait(min(left, 0.1))

    def wait(self, timeout=TIMEOUT):
        """Exit status (negative = killed by that signal), or None after killing it on
        timeout. Readers get a moment to drain: a launched grandchild that is still
        running may hold the pipes open, so EOF is not awaited."""
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.p.wait()
            rc = None
        for t in self.readers:
            t.join(timeout=1.0)
        return rc

    def running(self):
        return self.p.poll() is None

    def signal(self, sig):
        if self.running():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self):
        """SIGKILL the process group this process leads (it and what it launched)."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def cleanup_procs():
    for pr in LIVE_PROCS:
        pr.kill()
        try:
            pr.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    LIVE_PROCS.clear()


def run(argv, timeout=TIMEOUT, env=None, cwd=None):
    """Run to completion; returns (rc or None on timeout, stdout, stderr)."""
    try:
        cp = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=timeout, env=env, cwd=cwd, start_new_session=True)
        return cp.returncode, cp.stdout.decode("utf-8", "replace"), cp.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        def s(b):
            return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")
        return None, s(e.stdout), s(e.stderr)


def pid_alive(pid):
    """True if pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def children_of(pid):
    kids = []
    for path in glob.glob("/proc/%d/task/*/children" % pid):
        try:
            with open(path) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def wait_gone(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return False


def short(text, limit=300):
    text = text.strip().replace("\n", " | ")
    return text if len(text) <= limit else text[:limit] + "..."


# --------------------------------------------------------------------------------------
# Unit tests

def run_unit(res, build):
    bins = sorted(b for b in glob.glob(os.path.join(build, "tests", "unit", "test_*"))
                  if os.path.isfile(b) and os.access(b, os.X_OK))
    for b in bins:
        name = "unit/" + os.path.basename(b)
        if not res.wanted(name):
            continue
        rc, out, err = run([b], timeout=TIMEOUT, cwd=ROOT)
        bad = 0
        for line in out.splitlines():
            if line.startswith("ok - "):
                res.ok("%s: %s" % (name, line[5:]))
            elif line.startswith("not ok - "):
                bad += 1
                res.fail("%s: %s" % (name, line[9:]), "reported by the test")
        if rc is None:
            res.fail(name, "timed out after %ds" % TIMEOUT)
        elif rc < 0:
            res.fail(name, "killed by signal %d %s" % (-rc, short(err)))
        elif rc != 0 and bad == 0:
            res.fail(name, "exit status %d without a 'not ok' line %s" % (rc, short(err)))


# --------------------------------------------------------------------------------------
# Workload builds

def newer(target, sources):
    if not os.path.exists(target):
        return False
    t = os.path.getmtime(target)
    return all(os.path.getmtime(s) <= t for s in sources)


def build_workloads(res, build):
    """Returns {"wl_basic": {"fp": path, "nofp": path}, ..., "wl_static": {...}} and
    the path of ref_preload.so (None if a build failed)."""
    outdir = os.path.join(build, "tests", "workloads")
    os.makedirs(outdir, exist_ok=True)
    header = os.path.join(WORKLOAD_SRC, "wl_common.h")
    built = {}

    def compile_one(name, argv, target, sources):
        if newer(target, sources + [header, os.path.abspath(__file__)]):
            res.ok("build/" + name)
            return True
        rc, out, err = run(argv + ["-o", target], timeout=120)
        return res.true("build/" + name, rc == 0 and os.path.exists(target),
                        "compiler failed (%s): %s" % (rc, short(err, 800)))

    srcs = sorted(glob.glob(os.path.join(WORKLOAD_SRC, "wl_*.c")) +
                  glob.glob(os.path.join(WORKLOAD_SRC, "wl_*.cpp")))
    for src in srcs:
        wl, ext = os.path.splitext(os.path.basename(src))
        if wl == "wl_static":
            continue
        cc = "g++" if ext == ".cpp" else "gcc"
        for flavor, flags in FLAVORS.items():
            target = os.path.join(outdir, "%s_%s" % (wl, flavor))
            if compile_one("%s_%s" % (wl, flavor),
                           [cc] + flags + ["-Wall", "-pthread", src], target, [src]):
                built.setdefault(wl, {})[flavor] = target

    src = os.path.join(WORKLOAD_SRC, "wl_static.c")
    target = os.path.join(outdir, "wl_static")
    if os.path.exists(src) and compile_one("wl_static", ["gcc", "-static", "-s", "-O2", src],
                                           target, [src]):
        built["wl_static"] = {"fp": target, "nofp": target}

    # wl_allocators_c linked against musl (dynamically: /lib/ld-musl-x86_64.so.1), if musl-gcc exists.
    src = os.path.join(WORKLOAD_SRC, "wl_allocators_c.c")
    target = os.path.join(outdir, "wl_allocators_c_musl")
    if os.path.exists(src) and shutil.which("musl-gcc") and compile_one(
            "wl_allocators_c_musl", ["musl-gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-Wall", src],
            target, [src, os.path.join(WORKLOAD_SRC, "wl_alloc_c_api.h")]):
        built["wl_allocators_c_musl"] = {"fp": target}

    src = os.path.join(WORKLOAD_SRC, "ref_preload.c")
    target = os.path.join(outdir, "ref_preload.so")
    ref = None
    if compile_one("ref_preload.so", ["gcc", "-O2", "-g", "-Wall", "-shared", "-fPIC", src, "-ldl"],
                   target, [src]):
        ref = target
    return built, ref


# --------------------------------------------------------------------------------------
# Case files

def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(CASES_DIR, "*.json"))):
        with open(path) as f:
            case = json.load(f)
        case.setdefault("name", os.path.splitext(os.path.basename(path))[0])
        cases.append(case)
    return cases


def merge(base, extra):
    """Deep merge for expectations: dicts merge, lists concatenate, scalars replace."""
    out = copy.deepcopy(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        elif isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = out[k] + copy.deepcopy(v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def case_flavors(case):
    fp = case.get("build", {}).get("fp")
    if fp is True:
        return ["fp"]
    if fp is False:
        return ["nofp"]
    return list(FLAVORS)


def case_modes(case):
    m = case.get("mode", ["launch", "attach"])
    return [m] if isinstance(m, str) else list(m)


def case_expect(case, mode):
    return merge(case.get("expect", {}), case.get("expect_" + mode, {}))


def frames_in_order(rxs, funcs):
    """True if every regex matches a function of funcs, in order (leaf first)."""
    i = 0
    for rx in rxs:
        while i < len(funcs) and not rx.search(funcs[i]):
            i += 1
        if i == len(funcs):
            return False
        i += 1
    return True


def select_stacks(stacks, sel, flavor, reference):
    """Stacks matched by a selector. The reference tracer only knows frames[0], so
    its runs ignore the narrowing frame1/frame conditions."""
    rx0 = re.compile(sel["frame0"]) if "frame0" in sel else None
    rx1 = re.compile(sel["frame1"]) if "frame1" in sel and not reference else None
    rxa = re.compile(sel["frame"]) if "frame" in sel and not reference else None
    rxs = [re.compile(r) for r in sel["frames"]] if "frames" in sel and not reference else []
    out = []
    for st in stacks:
        funcs = [str(fr.get("func", "")) for fr in st.get("frames", [])]
        if rx0 and not (funcs and rx0.search(funcs[0])):
            continue
        if rx1 and not (len(funcs) > 1 and rx1.search(funcs[1])):
            continue
        if rxa and not any(rxa.search(f) for f in funcs):
            continue
        if rxs and not frames_in_order(rxs, funcs):
            continue
        out.append(st)
    return out


def check_figures(res, prefix, report, expect, mode, flavor, reference=False):
    """Checks every expected figure of `expect` against a report.json-shaped dict."""
    totals = report.get("totals", {})
    want_totals = dict(expect.get("totals", {}))
    if "peak_live_bytes" in expect:
        want_totals["peak_live_bytes"] = expect["peak_live_bytes"]
    for k in TOTAL_FIELDS:
        if k in want_totals:
            res.eq("%s: totals.%s" % (prefix, k), totals.get(k), want_totals[k])

    stacks = report.get("stacks", [])
    for sel in expect.get("stacks", []):
        name = sel.get("name") or sel.get("frame0") or sel.get("frame") or " ".join(sel.get("frames", []))
        if sel.get("fp_only") and flavor != "fp":
            continue
        if reference and "frame0" not in sel:
            continue
        matched = select_stacks(stacks, sel, flavor, reference)
        for k in STACK_FIELDS:
            if k in sel:
                got = sum(int(st.get(k, 0)) for st in matched)
                res.eq("%s: stack %s %s" % (prefix, name, k), got, sel[k])


def check_invariants(res, prefix, report):
    """Accounting identities docs/json-report.md promises."""
    totals = report.get("totals", {})
    stacks = report.get("stacks", [])
    for k in ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes"]:
        res.eq("%s: sum(stacks.%s) == totals.%s" % (prefix, k, k),
               sum(int(s.get(k, 0)) for s in stacks), totals.get(k))
    res.eq("%s: sum(stacks.peak_bytes) == totals.peak_live_bytes" % prefix,
           sum(int(s.get("peak_bytes", 0)) for s in stacks), totals.get("peak_live_bytes"))
    res.eq("%s: sum(stacks.peak_count) == totals.peak_live_count" % prefix,
           sum(int(s.get("peak_count", 0)) for s in stacks), totals.get("peak_live_count"))
    bad = [s for s in stacks
           if int(s.get("live_count", 0)) != int(s.get("alloc_count", 0)) - int(s.get("free_count", 0))
           or int(s.get("live_bytes", 0)) != int(s.get("alloc_bytes", 0)) - int(s.get("free_bytes", 0))]
    res.true("%s: every stack has live == alloc - free" % prefix, not bad,
             "%d stacks differ, first: %s" % (len(bad), short(json.dumps(bad[:1]))))
    res.true("%s: totals.live_bytes <= totals.peak_live_bytes" % prefix,
             int(totals.get("live_bytes", 0)) <= int(totals.get("peak_live_bytes", -1)),
             "live %s > peak %s" % (totals.get("live_bytes"), totals.get("peak_live_bytes")))


def check_errors(res, prefix, report, expect, mode):
    errors = report.get("errors")
    if not res.true("%s: report has errors{}" % prefix, isinstance(errors, dict), "missing"):
        return
    want = expect.get("errors", {})
    for k in sorted(set(errors) | set(want)):
        if k not in want and k == "unknown_free" and mode == "attach":
            continue   # blocks allocated before the attach may be freed while tracing
        res.eq("%s: errors.%s" % (prefix, k), errors.get(k), want.get(k, 0))


def check_outputs(res, prefix, outdir, stdout):
    missing = [f for f in OUTPUT_FILES
               if not os.path.isfile(os.path.join(outdir, f)) or os.path.getsize(os.path.join(outdir, f)) == 0]
    res.true("%s: output files exist and are non-empty" % prefix, not missing,
             "missing or empty: %s" % " ".join(missing))
    try:
        with gzip.open(os.path.join(outdir, "profile.pb.gz")) as f:
            ok = len(f.read()) > 0
        res.true("%s: profile.pb.gz is gzip" % prefix, ok, "empty profile")
    except (OSError, EOFError) as e:
        res.fail("%s: profile.pb.gz is gzip" % prefix, str(e))
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            first = next((l.strip() for l in f if l.strip()), "")
        # the first line may carry run-specific numbers; compare its first words
        head = " ".join(first.split()[:3])
        res.true("%s: text report on stdout" % prefix, head and head in stdout,
                 "stdout lacks %r" % head)
    except OSError as e:
        res.fail("%s: text report on stdout" % prefix, str(e))


def load_report(res, prefix, outdir):
    path = os.path.join(outdir, "report.json")
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % prefix, "unreadable: %s" % e)
        return None
    res.ok("%s: report.json" % prefix)
    return rep


# --------------------------------------------------------------------------------------
# Reference tracer (ref_preload.so) and model

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


def run_ref_section(res, cases, built, ref_so, tmp, print_ref):
    syms = Symbols()
    for case in cases:
        wl, args = case["command"][0], case["command"][1:]
        for flavor in case_flavors(case):
            for mode in case_modes(case):
                prefix = "ref/%s/%s/%s" % (case["name"], flavor, mode)
                if not res.wanted(prefix):
                    continue
                if ref_so is None or wl not in built or flavor not in built[wl]:
                    res.fail(prefix, "workload or ref_preload.so not built")
                    continue
                exe = built[wl][flavor]
                lines, rc, why = run_reference(exe, args, mode, case.get("stop"), ref_so, tmp)
                if why:
                    res.fail(prefix, why)
                    continue
                res.eq("%s: workload exit status" % prefix, rc, 0)
                model = ref_model(lines, mode == "attach", exe, syms)
                if print_ref:
                    print(json.dumps({"case": case["name"], "flavor": flavor, "mode": mode,
                                      "totals": model["totals"], "errors": model["errors"],
                                      "stacks": [dict(s, frames=s["frames"][0]["func"]) for s in model["stacks"]]},
                                     indent=1))
                res.eq("%s: no tie at the live-heap peak" % prefix, model["ties"], 0)
                check_figures(res, prefix, model, case_expect(case, mode), mode, flavor, reference=True)


# --------------------------------------------------------------------------------------
# peaktrace end-to-end cases

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


def trace_attach(pt, workload, args, outdir, extra=(), stop=None, on_tracing=None, leave_running=False):
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


def run_case_section(res, cases, built, pt, tmp, keep_dirs):
    for case in cases:
        wl, args = case["command"][0], case["command"][1:]
        for flavor in case_flavors(case):
            for mode in case_modes(case):
                prefix = "case/%s/%s/%s" % (case["name"], flavor, mode)
                if not res.wanted(prefix):
                    continue
                if wl not in built or flavor not in built[wl]:
                    res.fail(prefix, "workload %s_%s not built" % (wl, flavor))
                    continue
                outdir = os.path.join(tmp, "%s-%s-%s" % (case["name"], flavor, mode))
                trace = trace_launch if mode == "launch" else trace_attach
                r = trace(pt, built[wl][flavor], args, outdir, extra=tuple(case.get("peaktrace_args", ())),
                          stop=case.get("stop"))
                if r.why:
                    res.fail(prefix, r.why)
                    continue
                if not res.eq("%s: peaktrace exit status" % prefix, r.rc, 0):
                    print("  stderr: " + short(r.err, 1000))
                if mode == "attach":
                    res.eq("%s: workload exit status" % prefix, r.wl_rc, 0)
                rep = load_report(res, prefix, outdir)
                if rep is None:
                    continue
                keep_dirs[(case["name"], flavor, mode)] = outdir
                expect = case_expect(case, mode)
                tgt = rep.get("target", {})
                res.eq("%s: target.mode" % prefix, tgt.get("mode"), mode)
                res.eq("%s: target.pid" % prefix, tgt.get("pid"), r.target)
                res.eq("%s: target.exited" % prefix, tgt.get("exited"), True)
                res.eq("%s: target.exit_status" % prefix, tgt.get("exit_status"),
                       expect.get("exit_status", 0))
                res.eq("%s: unwind" % prefix, rep.get("unwind"), expect.get("unwind", "dwarf"))
                check_figures(res, prefix, rep, expect, mode, flavor)
                check_errors(res, prefix, rep, expect, mode)
                check_invariants(res, prefix, rep)
                check_outputs(res, prefix, outdir, r.out)


# --------------------------------------------------------------------------------------
# CLI: bad input and lifecycle

def one_error_line(res, name, err):
    lines = [l for l in err.splitlines() if l.strip()]
    res.true("%s: exactly one stderr line starting 'peaktrace: '" % name,
             len(lines) == 1 and lines[0].startswith("peaktrace: "),
             "stderr was %r" % short(err, 500))


def unused_pid():
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    return pid


def kernel_thread_pid():
    """kthreadd (pid 2) normally; any PF_KTHREAD (0x00200000) task otherwise."""
    for pid in [2] + sorted(int(d) for d in os.listdir("/proc") if d.isdigit()):
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
        except OSError:
            continue
        flags = int(stat[stat.rindex(")") + 2:].split()[6])
        if flags & 0x00200000:
            return pid
    return None


def start_waiting(workload):
    """A live workload blocked in --wait; None if it never got there."""
    wl = Proc([workload, "--wait"])
    if wl.wait_for("out", re.escape(READY_MARK)):
        return wl
    wl.kill()
    return None


def check_unharmed(res, name, wl):
    """The target survived whatever peaktrace did: wake it, it must finish and exit 0."""
    res.true("%s: target still running" % name, pid_alive(wl.pid), "target is gone")
    wl.signal(signal.SIGUSR1)
    res.eq("%s: target runs to completion, exit status" % name, wl.wait(TIMEOUT), 0)


def find_stack(rep, frame0):
    rx = re.compile(frame0)
    sel = [s for s in rep.get("stacks", []) if s.get("frames") and rx.search(str(s["frames"][0].get("func", "")))]
    return {k: sum(int(s.get(k, 0)) for s in sel) for k in STACK_FIELDS}


def run_cli_section(res, built, pt, tmp, sleep_case):
    wl_basic = built.get("wl_basic", {}).get("fp")
    wl_sleep = built.get("wl_sleep", {}).get("fp")
    wl_static = built.get("wl_static", {}).get("fp")
    sleep_live = next((s for s in sleep_case.get("expect", {}).get("stacks", [])
                       if s.get("frame0", "").startswith("^scn_sleep_live")), None) if sleep_case else None

    def out(name):
        return os.path.join(tmp, "cli-" + re.sub(r"[^A-Za-z0-9]+", "-", name))

    # ---- usage errors (exit 2)
    for name, argv in [("cli/usage: no arguments", []),
                       ("cli/usage: -p not a number", ["-p", "notapid"])]:
        if res.wanted(name):
            rc, _, err = run([pt] + argv)
            res.eq("%s: exit status" % name, rc, 2)
            res.true("%s: stderr starts with 'peaktrace: '" % name,
                     err.startswith("peaktrace: ") or "Usage" in err or "usage" in err,
                     "stderr was %r" % short(err))

    # ---- no such process (exit 3)
    name = "cli/no such pid"
    if res.wanted(name):
        pid = unused_pid()
        rc, _, err = run([pt, "-p", pid, "-o", out(name)])
        res.eq("%s: exit status" % name, rc, 3)
        one_error_line(res, name, err)

    # ---- kernel thread (exit 5)
    name = "cli/kernel thread"
    if res.wanted(name):
        kpid = kernel_thread_pid()
        if kpid is None:
            res.skip(name, "no kernel thread visible")
        else:
            rc, _, err = run([pt, "-p", kpid, "-o", out(name)])
            res.eq("%s: exit status (pid %d)" % (name, kpid), rc, 5)
            one_error_line(res, name, err)

    # ---- static binary without a malloc symbol (exit 5), launch and attach
    name = "cli/static binary launch"
    if res.wanted(name):
        if not wl_static:
            res.fail(name, "wl_static not built")
        else:
            rc, _, err = run([pt, "-o", out(name), "--", wl_static, "3"])
            res.eq("%s: exit status" % name, rc, 5)
            one_error_line(res, name, err)
    name = "cli/static binary attach"
    if res.wanted(name) and wl_static:
        st = Proc([wl_static, "30"])
        time.sleep(0.2)   # past exec: the static program has no startup to speak of
        rc, _, err = run([pt, "-p", st.pid, "-o", out(name)])
        res.eq("%s: exit status" % name, rc, 5)
        one_error_line(res, name, err)
        res.true("%s: target still running" % name, pid_alive(st.pid), "target is gone")
        st.kill()

    # ---- not root (exit 4): attach to a root-owned target, and launch
    for name, mode in [("cli/not root attach", "attach"), ("cli/not root launch", "launch")]:
        if not res.wanted(name):
            continue
        if not wl_basic:
            res.fail(name, "wl_basic not built")
            continue
        setpriv = shutil.which("setpriv")
        runuser = shutil.which("runuser")
        if setpriv:
            drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        elif runuser:
            drop = [runuser, "-u", "nobody", "--"]
        else:
            res.skip(name, "neither setpriv nor runuser found")
            continue
        if not os.access(pt, os.X_OK) or not all(
                os.stat(d).st_mode & 0o001 for d in parents(os.path.abspath(pt))):
            res.skip(name, "%s is not reachable by an unprivileged user" % pt)
            continue
        odir = out(name)
        os.makedirs(odir, exist_ok=True)
        os.chmod(odir, 0o777)   # writable: the only thing wrong must be the privileges
        if mode == "attach":
            wl = start_waiting(wl_basic)
            if not wl:
                res.fail(name, "workload never became ready")
                continue
            rc, _, err = run(drop + [pt, "-p", wl.pid, "-o", odir])
            res.eq("%s: exit status" % name, rc, 4)
            one_error_line(res, name, err)
            check_unharmed(res, name, wl)
        else:
            rc, _, err = run(drop + [pt, "-o", odir, "--", wl_basic])
            res.eq("%s: exit status" % name, rc, 4)
            one_error_line(res, name, err)

    # ---- unwritable output directory (exit 6), attach (target unharmed) and launch
    name = "cli/unwritable output dir attach"
    if res.wanted(name) and wl_basic:
        wl = start_waiting(wl_basic)
        if not wl:
            res.fail(name, "workload never became ready")
        else:
            rc, _, err = run([pt, "-p", wl.pid, "-o", "/proc/foo"])
            res.eq("%s: exit status" % name, rc, 6)
            one_error_line(res, name, err)
            check_unharmed(res, name, wl)
    name = "cli/unwritable output dir launch"
    if res.wanted(name) and wl_basic:
        rc, _, err = run([pt, "-o", "/proc/foo", "--", wl_basic])
        res.eq("%s: exit status" % name, rc, 6)
        one_error_line(res, name, err)

    # ---- peaktrace killed (SIGKILL) while attached: the probes go away with it and
    #      the target, woken afterwards, runs every allocation path unharmed.
    name = "cli/peaktrace killed while attached"
    if res.wanted(name) and wl_basic:
        wl = start_waiting(wl_basic)
        pr = Proc([pt, "-p", wl.pid, "-o", out(name)]) if wl else None
        if not wl or not pr.wait_for("err", TRACING_RX % wl.pid):
            res.fail(name, "attach did not start: %s" % short(pr.err if pr else ""))
            if wl:
                wl.kill()
        else:
            pr.kill()
            pr.wait(10)
            check_unharmed(res, name, wl)

    # ---- a target that exits by itself mid-trace ends tracing with a full report,
    #      even with a long -d.
    name = "cli/target exits mid-trace"
    if res.wanted(name) and wl_basic:
        r = trace_attach(pt, wl_basic, [], out(name), extra=["-d", "50"])
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            res.true("%s: ends with the target, not at -d 50" % name, r.elapsed < 40,
                     "took %.1f s" % r.elapsed)
            rep = load_report(res, name, r.outdir)
            if rep:
                res.eq("%s: target.exited" % name, rep.get("target", {}).get("exited"), True)
                res.true("%s: report has allocations" % name,
                         rep.get("totals", {}).get("alloc_count", 0) > 0, "no allocations")

    # ---- -d 1, launch: ends ~1 s after tracing starts, with a report
    name = "cli/-d 1 launch"
    if res.wanted(name) and wl_sleep:
        r = trace_launch(pt, wl_sleep, [], out(name), extra=["-d", "1"])
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            res.true("%s: ends after ~1 s" % name, 0.9 <= r.elapsed < TIMEOUT,
                     "took %.2f s after the tracing line" % r.elapsed)
            rep = load_report(res, name, r.outdir)
            if rep and sleep_live:
                got = find_stack(rep, sleep_live["frame0"])
                res.eq("%s: scn_sleep_live live_bytes" % name, got["live_bytes"], sleep_live["live_bytes"])
            if r.target:
                try:
                    os.kill(r.target, signal.SIGKILL)
                except OSError:
                    pass

    # ---- -d 1, attach: ends ~1 s later, target left running and still healthy
    name = "cli/-d 1 attach"
    if res.wanted(name) and wl_sleep:
        r = trace_attach(pt, wl_sleep, [], out(name), extra=["-d", "1"], leave_running=True)
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            res.true("%s: ends after ~1 s" % name, 0.9 <= r.elapsed < TIMEOUT,
                     "took %.2f s after the tracing line" % r.elapsed)
            rep = load_report(res, name, r.outdir)
            if rep and sleep_live:
                got = find_stack(rep, sleep_live["frame0"])
                res.eq("%s: scn_sleep_live live_bytes" % name, got["live_bytes"], sleep_live["live_bytes"])
            res.true("%s: target still running" % name, pid_alive(r.wl.pid), "target is gone")
            r.wl.signal(signal.SIGTERM)
            res.eq("%s: target exit status after SIGTERM" % name, r.wl.wait(TIMEOUT), 0)

    # ---- SIGINT to peaktrace: report written, target left running
    name = "cli/SIGINT"
    if res.wanted(name) and wl_sleep:
        def interrupt(pr, wl):
            if wl.wait_for("out", re.escape(SLEEP_MARK)):
                time.sleep(0.2)
                pr.signal(signal.SIGINT)
        r = trace_attach(pt, wl_sleep, [], out(name), on_tracing=interrupt, leave_running=True)
        if r.why:
            res.fail(name, r.why)
        else:
            res.eq("%s: exit status" % name, r.rc, 0)
            rep = load_report(res, name, r.outdir)
            if rep:
                res.eq("%s: target.exited" % name, rep.get("target", {}).get("exited"), False)
                if sleep_live:
                    got = find_stack(rep, sleep_live["frame0"])
                    res.eq("%s: scn_sleep_live live_bytes" % name, got["live_bytes"], sleep_live["live_bytes"])
            res.true("%s: target still running" % name, pid_alive(r.wl.pid), "target is gone")
            r.wl.signal(signal.SIGTERM)
            res.eq("%s: target exit status after SIGTERM" % name, r.wl.wait(TIMEOUT), 0)


def parents(path):
    """The directories an unprivileged user must traverse to reach path."""
    d = os.path.dirname(path)
    out = []
    while True:
        out.append(d)
        nd = os.path.dirname(d)
        if nd == d:
            return out
        d = nd


# --------------------------------------------------------------------------------------
# pprof

def run_pprof_section(res, keep_dirs, tmp):
    name = "pprof/go tool pprof -top"
    if not res.wanted(name):
        return
    go = shutil.which("go")
    if not go:
        res.skip(name, "go not on PATH")
        return
    if not res.wanted("case/%s/%s/%s" % PPROF_SOURCE):
        res.skip(name, "case %s filtered out" % "/".join(PPROF_SOURCE))
        return
    outdir = keep_dirs.get(PPROF_SOURCE)
    prof = os.path.join(outdir, "profile.pb.gz") if outdir else None
    if not prof or not os.path.isfile(prof):
        res.fail(name, "no profile.pb.gz from case %s" % "/".join(PPROF_SOURCE))
        return
    home = os.path.join(tmp, "gohome")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
               GOPATH=os.path.join(home, "gopath"), GOTOOLCHAIN="local", GOPROXY="off",
               GOFLAGS="", PPROF_TMPDIR=home)
    for idx in [None, "alloc_space"]:
        argv = [go, "tool", "pprof", "-top", "-nodecount=200"]
        if idx:
            argv.append("-sample_index=" + idx)
        rc, out, err = run(argv + [prof], timeout=120, env=env)
        label = "%s%s" % (name, " -sample_index=" + idx if idx else "")
        if res.eq("%s: exit status" % label, rc, 0):
            res.true("%s: mentions a workload function" % label, "scn_" in out,
                     "output: %s" % short(out + err, 600))
        else:
            print("  " + short(err, 800))


# --------------------------------------------------------------------------------------
# --sample-bytes: exact totals, unbiased per-stack estimates (tests/workloads/wl_sample.c)

SAMPLE_MEAN = 8192
# wl_sample's three sites: (frames[0] function, allocations, bytes each).
SAMPLE_SITES = [("scn_small", 60000, 48), ("scn_medium", 30000, 512), ("scn_large", 10000, 4096)]


def sample_expectations(mean):
    """Per site: (count, bytes, sd of the byte estimate, sd of the count estimate, p).

    An allocation of s bytes is sampled with p = 1 - exp(-s/N) and then weighs s/p bytes and
    1/p allocations. Over n independent allocations the byte estimate has variance
    n * p * (s/p)^2 - n * s^2 = n s^2 (1 - p) / p, the count estimate n (1 - p) / p."""
    import math
    out = {}
    for name, n, s in SAMPLE_SITES:
        p = -math.expm1(-s / mean)
        out[name] = (n, n * s, math.sqrt(n * s * s * (1 - p) / p), math.sqrt(n * (1 - p) / p), p)
    return out


def run_sample_section(res, built, pt, tmp):
    """100,000 allocations of 48/512/4096 bytes from three sites under --sample-bytes 8K.

    Totals, peaks and live figures must be exact (every block goes through the live table);
    per-stack estimates must be within 5 standard deviations of the truth (for N = 8 KiB:
    scn_small 2.88 MB +- 5.3%% per sd, scn_medium 15.36 MB +- 2.3%%, scn_large 40.96 MB
    +- 1.2%%; a false failure has probability ~6e-7 per check); the number of unwound
    allocations must be within 5 sd of sum(n p) = 6,102 (sd 66)."""
    wl = built.get("wl_sample", {}).get("fp")
    exp = sample_expectations(SAMPLE_MEAN)
    total_bytes = sum(b for _, b, _, _, _ in exp.values())
    total_count = sum(n for n, _, _, _, _ in exp.values())
    want_hits = sum(n * p for n, _, _, _, p in exp.values())
    sd_hits = sum(n * p * (1 - p) for n, _, _, _, p in exp.values()) ** 0.5
    for mode in ("launch", "attach"):
        prefix = "sample/wl_sample/%s" % mode
        if not res.wanted(prefix):
            continue
        if not wl:
            res.fail(prefix, "wl_sample not built")
            continue
        outdir = os.path.join(tmp, "sample-" + mode)
        trace = trace_launch if mode == "launch" else trace_attach
        r = trace(pt, wl, [], outdir, extra=("--sample-bytes", "8K"))
        if r.why:
            res.fail(prefix, r.why)
            continue
        res.eq("%s: peaktrace exit status" % prefix, r.rc, 0)
        rep = load_report(res, prefix, outdir)
        if rep is None:
            continue
        t = rep.get("totals", {})
        want = {"alloc_count": total_count, "alloc_bytes": total_bytes, "free_count": total_count,
                "free_bytes": total_bytes, "live_count": 0, "live_bytes": 0,
                "peak_live_count": total_count, "peak_live_bytes": total_bytes}
        res.eq("%s: totals exact" % prefix, {k: t.get(k) for k in want}, want)
        sm = rep.get("sampling") or {}
        res.eq("%s: sampling.mean_bytes" % prefix, sm.get("mean_bytes"), SAMPLE_MEAN)
        res.eq("%s: sampled + unsampled == totals" % prefix,
               (sm.get("sampled_count", 0) + sm.get("unsampled_count", 0),
                sm.get("sampled_bytes", 0) + sm.get("unsampled_bytes", 0)), (total_count, total_bytes))
        hits = sm.get("sampled_count", -1)
        res.true("%s: unwound allocations %s within 5 sd of %.0f (sd %.0f)" % (prefix, hits, want_hits, sd_hits),
                 abs(hits - want_hits) <= 5 * sd_hits, "got %s" % hits)
        errs = {k: v for k, v in rep.get("errors", {}).items()
                if v and k not in ("unknown_free", "unwind_fp_fallback")}
        res.eq("%s: no data loss" % prefix, errs, {})
        stacks = rep.get("stacks", [])
        res.true("%s: no [unsampled] stack in the per-stack output" % prefix,
                 not any("unsampled" in str(f.get("func", "")) for s in stacks for f in s.get("frames", [])),
                 "an [unsampled] frame is listed")
        for name, (n, b, sd_b, sd_n, p) in exp.items():
            got = find_stack(rep, "^%s$" % name)
            res.true("%s: %s alloc_bytes %d within 5 sd of %d (sd %.0f)" % (prefix, name, got["alloc_bytes"], b, sd_b),
                     abs(got["alloc_bytes"] - b) <= 5 * sd_b, "off by %.1f sd" % ((got["alloc_bytes"] - b) / sd_b))
            res.true("%s: %s alloc_count %d within 5 sd of %d (sd %.0f)" % (prefix, name, got["alloc_count"], n, sd_n),
                     abs(got["alloc_count"] - n) <= 5 * sd_n + 1, "off by %.1f sd" % ((got["alloc_count"] - n) / sd_n))
            # Weights are a function of the size: every free takes back exactly what its
            # allocation added, and at the peak (all live) a stack holds its whole estimate.
            res.eq("%s: %s live at end exactly 0" % (prefix, name), (got["live_count"], got["live_bytes"]), (0, 0))
            res.eq("%s: %s free_bytes == alloc_bytes" % (prefix, name), got["free_bytes"], got["alloc_bytes"])
            res.eq("%s: %s peak_bytes == alloc_bytes (all live at the peak)" % (prefix, name),
                   got["peak_bytes"], got["alloc_bytes"])
        try:
            with open(os.path.join(outdir, "report.txt")) as f:
                txt = f.read()
        except OSError:
            txt = ""
        res.true("%s: text report says stacks are sampled estimates, totals exact" % prefix,
                 re.search(r"SAMPLED: stacks are unbiased estimates .* mean 8\.00 KiB.*totals and peaks above .* exact", txt),
                 "no SAMPLED line in report.txt")
    name = "sample/cli: bad --sample-bytes"
    if res.wanted(name):
        rc, _, err = run([pt, "--sample-bytes", "lots", "--", "true"])
        res.eq("%s: exit status" % name, rc, 2)
        rc, _, err = run([pt, "--sample-bytes", "8G", "--", "true"])
        res.eq("%s: above 4G, exit status" % name, rc, 2)


# --------------------------------------------------------------------------------------
# Node JIT frames (--perf-basic-prof): the JavaScript function that allocates, by name

NODE_JS = os.path.join(WORKLOAD_SRC, "js_alloc.js")
NODE_FUNC = "peaktraceJsAllocator"
NODE_BYTES = 64 << 20       # js_alloc.js: 8 x 8 Buffers of 1 MiB after the warm-up


def folded_bytes(path, rx):
    """Sum of the folded lines (root first, frames ';'-joined, then bytes) with a frame matching rx."""
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if any(re.search(rx, fr) for fr in stack.split(";")):
                total += int(n)
    return total


def run_node_section(res, pt, tmp):
    """A launched short-lived node script and an attached one: the JS function must appear by
    name (from /tmp/perf-PID.map) in the folded stacks with most of its 64 MiB."""
    node = shutil.which("node")
    for mode in ("launch", "attach"):
        prefix = "node/jit frames/%s" % mode
        if not res.wanted(prefix):
            continue
        if not node:
            res.skip(prefix, "node not on PATH")
            continue
        outdir = os.path.join(tmp, "node-" + mode)
        argv = [node, "--perf-basic-prof", NODE_JS]
        target = None
        if mode == "launch":
            # node --perf-basic-prof also writes isolate-*-v8.log into its working directory.
            pr = Proc([pt, "-q", "-o", outdir, "--"] + argv, cwd=tmp)
            m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b")
            target = int(m.group(1)) if m else None
            rc = pr.wait(TIMEOUT)
            pr.kill()
            if not m:
                res.fail(prefix, "no 'peaktrace: tracing' line: %s" % short(pr.err))
                continue
        else:
            js = Proc(argv + ["--wait"], cwd=tmp)
            target = js.pid
            if not js.wait_for("out", r"^js: waiting"):
                js.kill()
                res.fail(prefix, "node script never became ready: %s" % short(js.err))
                continue
            pr = Proc([pt, "-q", "-p", js.pid, "-o", outdir])
            if not pr.wait_for("err", TRACING_RX % js.pid):
                js.kill()
                rc = pr.wait(TIMEOUT)
                res.fail(prefix, "no 'peaktrace: tracing' line (exit %s): %s" % (rc, short(pr.err)))
                continue
            js.signal(signal.SIGUSR2)
            res.eq("%s: node exit status" % prefix, js.wait(TIMEOUT), 0)
            rc = pr.wait(TIMEOUT)
            js.kill()
        try:
            if target:
                os.unlink("/tmp/perf-%d.map" % target)
        except OSError:
            pass
        if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
            print("  stderr: " + short(pr.err, 1000))
            continue
        path = os.path.join(outdir, "alloc.folded")
        if not os.path.exists(path):
            res.fail(prefix, "no alloc.folded")
            continue
        got = folded_bytes(path, r"^JS:\S?%s\b" % NODE_FUNC)
        # Calls made before V8 compiled the function run in the interpreter and show as
        # Builtins_InterpreterEntryTrampoline (no perf-map name without
        # --interpreted-frames-native-stack): at least half must be named, none invented.
        res.true("%s: JS function %s allocated %d bytes by name (want %d..%d)"
                 % (prefix, NODE_FUNC, got, NODE_BYTES // 2, NODE_BYTES + (4 << 20)),
                 NODE_BYTES // 2 <= got <= NODE_BYTES + (4 << 20), "got %d bytes" % got)
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
        res.true("%s: JS function named in report.txt" % prefix, NODE_FUNC in txt,
                 "%s not in the text report" % NODE_FUNC)
# glibc arenas: peaktrace's "arenas" against glibc's own books (malloc_info, mallinfo2)

ARENA_ENV_DROP = ("MALLOC_ARENA_MAX", "MALLOC_ARENA_TEST", "MALLOC_MMAP_THRESHOLD_",
                  "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_MAX_", "GLIBC_TUNABLES",
                  "LD_PRELOAD")
# wl_arenas.c: in_use(main) = L(main) + 656 (the main thread's tcache_perthread_struct chunk);
# in_use(thread arena) = L + 2256 (heap_info + malloc_state at the start of its heap).
TCACHE_STRUCT_CHUNK = 656
THREAD_ARENA_HEADER = 2256


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ARENA_ENV_DROP}
    env.update(extra)
    return env


def workload_json(text, key):
    for line in text.splitlines():
        if line.startswith('{"%s"' % key):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def addr_eq(a, b):
    """Arena names: "main" or hex addresses ("0x7f..."), compared by value."""
    if a is None or b is None:
        return False
    if str(a) == "main" or str(b) == "main":
        return str(a) == str(b)
    try:
        return int(str(a), 16) == int(str(b), 16)
    except ValueError:
        return False


def run_arenas_section(res, built, pt, tmp):
    prefix = "arenas/glibc/launch"
    if not res.wanted(prefix):
        return
    wl = built.get("wl_arenas", {}).get("fp")
    if not wl:
        res.fail(prefix, "wl_arenas not built")
        return
    outdir = os.path.join(tmp, "arenas-glibc-launch")
    pr = Proc([pt, "-o", outdir, "--", wl], env=clean_env())
    rc = pr.wait(TIMEOUT)
    if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
        print("  stderr: " + short(pr.err, 1000))
    w = workload_json(pr.out, "wl_arenas")
    if not res.true("%s: workload printed its JSON line" % prefix, w, short(pr.out, 500)):
        return
    res.true("%s: workload self_check (formula on its own blocks)" % prefix,
             w["self_check"]["ok"], w["self_check"]["why"])
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ar = rep.get("arenas")
    if not res.true("%s: report has arenas{}" % prefix, isinstance(ar, dict),
                    "no \"arenas\" object in report.json (keys: %s)" % ", ".join(rep)):
        return
    res.eq("%s: arenas.allocator" % prefix, ar.get("allocator"), "glibc")
    res.eq("%s: arenas.covered" % prefix, ar.get("covered"), True)
    lst = ar.get("list") or []
    res.eq("%s: arenas.count" % prefix, ar.get("count"), len(w["heaps"]))
    res.eq("%s: len(arenas.list)" % prefix, len(lst), len(w["heaps"]))
    wthreads = {t["tid"]: t for t in w["threads"]}

    for h in w["heaps"]:
        main = h["arena"] == "main"
        name = "%s: arena %s" % (prefix, "main" if main else h["arena"])
        got = [a for a in lst if (a.get("kind") == "main") == main and
               (main or addr_eq(a.get("address"), h["arena"]))]
        if not res.true("%s listed" % name, len(got) == 1,
                        "%d entries match in %s" % (len(got), short(json.dumps(lst), 400))):
            continue
        a = got[0]
        want = h["in_use"] - (TCACHE_STRUCT_CHUNK if main else THREAD_ARENA_HEADER)
        res.eq("%s live_chunk_bytes == malloc_info in_use - %d (in_use %d)" %
               (name, TCACHE_STRUCT_CHUNK if main else THREAD_ARENA_HEADER, h["in_use"]),
               a.get("live_chunk_bytes"), want)
        if not main:
            res.eq("%s kind" % name, a.get("kind"), "thread")
            res.eq("%s heaps" % name, a.get("heaps"), h["subheaps"])
        users = sorted(t["tid"] for t in w["threads"] if addr_eq(t["arena"], h["arena"]))
        if main:
            res.true("%s threads include main's tid %d" % (name, w["pid"]),
                     w["pid"] in (a.get("threads") or []), "threads %r" % a.get("threads"))
        else:
            res.eq("%s threads" % name, sorted(a.get("threads") or []), users)
            # The worker's blocks are all there is in its arena, minus those glibc mmapped.
            t = wthreads[users[0]] if len(users) == 1 else None
            if t:
                res.eq("%s live_count" % name, a.get("live_count"),
                       t["live_count"] - t["mmapped_live_count"])

    mm = ar.get("mmapped") or {}
    res.eq("%s: mmapped.live_chunk_bytes == mallinfo2 hblkhd" % prefix,
           mm.get("live_chunk_bytes"), w["mallinfo2"]["hblkhd"])
    res.eq("%s: mmapped.live_count == mallinfo2 hblks" % prefix,
           mm.get("live_count"), w["mallinfo2"]["hblks"])
    tot = ar.get("totals") or {}
    # totals cover the arenas (uordblks); mmapped chunks (hblkhd) are checked above.
    res.eq("%s: totals.live_chunk_bytes == uordblks - 656 - %d x 2256" % (prefix, len(w["heaps"]) - 1),
           tot.get("live_chunk_bytes"),
           w["mallinfo2"]["uordblks"] - TCACHE_STRUCT_CHUNK - THREAD_ARENA_HEADER * (len(w["heaps"]) - 1))

    pthreads = {t.get("tid"): t for t in (ar.get("threads") or [])}
    for t in w["threads"]:
        name = "%s: thread %s (tid %d)" % (prefix, "main" if t["index"] < 0 else t["index"], t["tid"])
        pt_t = pthreads.get(t["tid"])
        if not res.true("%s listed" % name, pt_t is not None, "tids: %s" % sorted(pthreads)):
            continue
        res.true("%s arena %s" % (name, t["arena"]), addr_eq(pt_t.get("arena"), t["arena"]),
                 "got %r" % pt_t.get("arena"))
        if t["index"] < 0:
            continue   # main also made glibc's own calls (DTVs, the FILE): not the workload's figures
        for k in ("alloc_count", "free_count", "live_bytes", "live_chunk_bytes"):
            res.eq("%s %s" % (name, k), pt_t.get(k), t[k])


# --------------------------------------------------------------------------------------
# Other allocators: the probes see every entry point; the arena section says glibc only.

PRELOADS = [("jemalloc", "libjemalloc.so.2"), ("tcmalloc", "libtcmalloc_minimal.so.4"),
            ("mimalloc", "libmimalloc.so.2")]
LIBDIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"]
# wl_allocators.cpp / wl_alloc_c_api.h: exact figures of every stack containing the scenario.
ALLOC_SCENARIOS = {
    "scn_c_api": {"alloc_count": 8, "alloc_bytes": 8924, "free_count": 4, "free_bytes": 2624,
                  "live_count": 4, "live_bytes": 6300},
    "scn_cxx": {"alloc_count": 6, "alloc_bytes": 3637, "free_count": 4, "free_bytes": 3360,
                "live_count": 2, "live_bytes": 277},
    "scn_jemalloc_x": {"alloc_count": 4, "alloc_bytes": 13500, "free_count": 3, "free_bytes": 12600,
                       "live_count": 1, "live_bytes": 900},
}


def find_lib(name):
    for d in LIBDIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def check_allocator_report(res, prefix, rep, kind, scenarios, mode):
    res.eq("%s: allocator.kind" % prefix, rep.get("allocator", {}).get("kind"), kind)
    errors = rep.get("errors", {})
    bad = {k: v for k, v in errors.items() if v and not (k == "unknown_free" and mode == "attach")
           and not k.startswith("unwind_")}
    res.true("%s: no error counter (unwind_* aside)" % prefix, not bad, "errors %r" % bad)
    for scn in scenarios:
        rx = re.compile("^%s$" % scn)
        sel = [st for st in rep.get("stacks", [])
               if any(rx.search(str(f.get("func", ""))) for f in st.get("frames", []))]
        for k, want in ALLOC_SCENARIOS[scn].items():
            res.eq("%s: %s %s" % (prefix, scn, k), sum(int(st.get(k, 0)) for st in sel), want)
    ar = rep.get("arenas")
    if kind == "glibc":
        res.true("%s: arenas.covered" % prefix, isinstance(ar, dict) and ar.get("covered") is True,
                 "arenas = %s" % short(json.dumps(ar), 200))
        return
    if res.true("%s: report has arenas{}" % prefix, isinstance(ar, dict),
                "no \"arenas\" object in report.json"):
        res.eq("%s: arenas.covered" % prefix, ar.get("covered"), False)
        res.eq("%s: arenas.allocator" % prefix, ar.get("allocator"), kind)
        msg = str(ar.get("message", ""))
        res.true("%s: arenas.message says glibc only and names %s" % (prefix, kind),
                 "glibc" in msg and kind in msg, "message %r" % msg)


def run_allocators_section(res, built, pt, tmp):
    runs = [("glibc", None, "wl_allocators", ["scn_c_api", "scn_cxx"])]
    for kind, so in PRELOADS:
        runs.append((kind, find_lib(so) or so, "wl_allocators",
                     ["scn_c_api", "scn_cxx"] + (["scn_jemalloc_x"] if kind == "jemalloc" else [])))
    runs.append(("musl", None, "wl_allocators_c_musl", ["scn_c_api"]))
    for kind, lib, wl, scenarios in runs:
        for mode in ("launch", "attach"):
            prefix = "allocators/%s/%s" % (kind, mode)
            if not res.wanted(prefix):
                continue
            if lib and not os.path.isabs(lib):
                res.skip(prefix, "%s not installed (make deps)" % lib)
                continue
            exe = built.get(wl, {}).get("fp")
            if not exe:
                if kind == "musl" and not shutil.which("musl-gcc"):
                    res.skip(prefix, "musl-gcc not installed (make deps: musl-tools)")
                else:
                    res.fail(prefix, "%s not built" % wl)
                continue
            env = clean_env(**({"LD_PRELOAD": lib} if lib else {}))
            outdir = os.path.join(tmp, "allocators-%s-%s" % (kind, mode))
            if mode == "launch":
                # As a user would: LD_PRELOAD=... peaktrace -- PROG (peaktrace runs preloaded too).
                pr = Proc([pt, "-o", outdir, "--", exe], env=env)
                rc = pr.wait(TIMEOUT)
                out, err = pr.out, pr.err
            else:
                w = Proc([exe, "--wait"], env=env)
                if not w.wait_for("out", re.escape(READY_MARK)):
                    w.kill()
                    res.fail(prefix, "workload never became ready: %s" % short(w.err))
                    continue
                pr = Proc([pt, "-p", w.pid, "-o", outdir], env=clean_env())
                if not pr.wait_for("err", TRACING_RX % w.pid):
                    pr.wait(TIMEOUT)
                    w.kill()
                    res.fail(prefix, "attach did not start: %s" % short(pr.err))
                    continue
                w.signal(signal.SIGUSR1)
                res.eq("%s: workload exit status" % prefix, w.wait(TIMEOUT), 0)
                rc = pr.wait(TIMEOUT)
                out, err = w.out, pr.err
            if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
                print("  stderr: " + short(err, 1000))
            if kind == "jemalloc":
                res.true("%s: workload found mallocx/rallocx/sdallocx/dallocx" % prefix,
                         "wl: allocx mallocx" in out, "workload said: %s" % short(out, 200))
            rep = load_report(res, prefix, outdir)
            if rep:
                check_allocator_report(res, prefix, rep, kind, scenarios, mode)
                try:
                    with open(os.path.join(outdir, "report.txt")) as f:
                        txt = f.read()
                except OSError:
                    txt = ""
                m = re.search(r"^ARENAS\b.*$", txt, re.M)
                if kind != "glibc" and res.true("%s: report.txt has an ARENAS section" % prefix, m,
                                                "no line starting with ARENAS"):
                    nxt = txt[m.end():].lstrip("\n").split("\n", 1)[0]
                    line = m.group(0) + " " + nxt
                    res.true("%s: ARENAS says glibc only" % prefix,
                             "glibc" in line and kind in line, "ARENAS: %r" % line)


# --------------------------------------------------------------------------------------

def run_docs_section(res, pt):
    """The README shows `peaktrace --help` verbatim between its help markers (make readme-help)."""
    name = "docs/README help block matches peaktrace --help"
    if not res.wanted(name):
        return
    rc, out, err = run([pt, "--help"])
    try:
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
    except OSError as e:
        res.fail(name, str(e))
        return
    m = re.search(r"<!-- help:begin -->\n```\n(.*?)\n```\n<!-- help:end -->", readme, re.S)
    if not m:
        res.fail(name, "no help block in README.md")
        return
    if m.group(1).rstrip() == out.rstrip():
        res.ok(name)
    else:
        res.fail(name, "README.md is stale: run `make readme-help`")


def run_host_section(res, build):
    """The Lambda-like host's own tests (tests/host/test_host.py), counted here line by line."""
    rc, out, err = run([sys.executable, os.path.join(ROOT, "tests", "host", "test_host.py"),
                        "--build", build], timeout=600)
    seen = 0
    for line in out.splitlines():
        m = re.match(r"^(PASS|FAIL|SKIP) (\S+)(.*)$", line)
        if not m:
            continue
        seen += 1
        name = "host/" + m.group(2)
        if m.group(1) == "PASS":
            res.ok(name)
        elif m.group(1) == "SKIP":
            res.skip(name, m.group(3).strip(": "))
        else:
            res.fail(name, m.group(3).strip(": "))
    if rc != 0 and not any(l.startswith("FAIL ") for l in out.splitlines()):
        res.fail("host/test_host.py", "exit %r: %s" % (rc, short(err, 500)))
    elif seen == 0:
        res.fail("host/test_host.py", "no test ran: %s" % short(out + err, 500))


def bpf_available():
    if os.geteuid() != 0:
        return "not running as root"
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no /sys/kernel/btf/vmlinux"
    return None


def main():
    ap = argparse.ArgumentParser(description="peaktrace test driver")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("--filter", help="only run tests whose name matches this regex")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--print-ref", action="store_true",
                    help="print the reference model's figures for every case (for writing cases)")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    pt = os.path.join(build, "peaktrace")
    res = Results(args.filter)
    tmp = tempfile.mkdtemp(prefix="peaktrace-test-")
    os.chmod(tmp, 0o755)   # the not-root tests write below it
    keep_dirs = {}

    def on_signal(sig, frame):
        cleanup_procs()
        sys.exit(130)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    try:
        run_unit(res, build)
        built, ref_so = build_workloads(res, build)
        cases = load_cases()
        run_ref_section(res, cases, built, ref_so, tmp, args.print_ref)

        no_bpf = bpf_available()
        if no_bpf is None and not os.access(pt, os.X_OK):
            res.fail("cli/peaktrace binary", "%s missing (run make first)" % pt)
            no_bpf = "no peaktrace binary"
        if no_bpf:
            for case in cases:
                for flavor in case_flavors(case):
                    for mode in case_modes(case):
                        res.skip("case/%s/%s/%s" % (case["name"], flavor, mode), no_bpf)
            res.skip("cli/*", no_bpf)
            res.skip("pprof/*", no_bpf)
            res.skip("sample/*", no_bpf)
            res.skip("node/*", no_bpf)
            res.skip("arenas/*", no_bpf)
            res.skip("allocators/*", no_bpf)
            res.skip("python/*", no_bpf)
        else:
            run_case_section(res, cases, built, pt, tmp, keep_dirs)
            sleep_case = next((c for c in cases if c["command"][0] == "wl_sleep"), None)
            run_cli_section(res, built, pt, tmp, sleep_case)
            run_pprof_section(res, keep_dirs, tmp)
            run_sample_section(res, built, pt, tmp)
            run_node_section(res, pt, tmp)
            run_arenas_section(res, built, pt, tmp)
            run_allocators_section(res, built, pt, tmp)
            from python_cases import run_python_section
            run_python_section(res, pt, tmp, Proc, TIMEOUT)
            run_docs_section(res, pt)
            run_host_section(res, args.build)
            from lambda_cases import run_lambda_section, run_lambda_launch, run_lambda_node, run_lambda_streaming
            run_lambda_section(res, args.build, pt, tmp, Proc, run, TIMEOUT)
            run_lambda_launch(res, args.build, pt, tmp, Proc, run, TIMEOUT)
            run_lambda_node(res, args.build, pt, tmp, Proc, run, TIMEOUT)
            run_lambda_streaming(res, args.build, pt, tmp, Proc, run, TIMEOUT)
    finally:
        cleanup_procs()
        if args.keep or res.failed:
            print("outputs kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    print("%d passed, %d failed, %d skipped" % (res.passed, res.failed, res.skipped))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Shared by every section of the test driver (tests/run.py; layout: tests/README.md):
constants, Results (checks grouped into test cases), Proc and run() (subprocesses with
timeouts, each in its own process group, killed by cleanup_procs()), /proc helpers, short(),
and Context, the things the sections share."""

import glob
import os
import random
import re
import signal
import socket
import subprocess
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


# --------------------------------------------------------------------------------------
# Ports

# Listening ports for the tests' hosts: below the kernel's ephemeral range (a client socket's
# local port there made a host's bind fail with EADDRINUSE once in CI), from one counter per
# run so no two cases share a port, each checked free before it is handed out.
PORT_LOW, PORT_HIGH = 20000, 32000
_next_port = [PORT_LOW + random.randint(0, 500) * 16]


def port_free(port):
    """True when PORT can be bound on 127.0.0.1 now (without SO_REUSEADDR: not in TIME_WAIT)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_ports(n):
    """The first of N consecutive ports, each free now and not handed out before in this run."""
    for _ in range(200):
        base = _next_port[0]
        if base + n > PORT_HIGH:
            base = PORT_LOW
        _next_port[0] = base + n
        if all(port_free(base + i) for i in range(n)):
            return base
    raise RuntimeError("no %d free consecutive ports in %d-%d" % (n, PORT_LOW, PORT_HIGH))


# --------------------------------------------------------------------------------------
# Results

class Results:
    """Counts and prints checks, grouped into test cases.

    A check's name is "section/what: detail"; its test case is the part before the first
    ": " ("case/basic/fp/launch: totals.alloc_count" belongs to "case/basic/fp/launch"; a
    check without ": ", e.g. a setup failure "case/basic/fp/launch", to the case of that
    name). A case fails if any of its checks fails, is skipped if all of them are skipped,
    and passes otherwise.

    Output: every failing check ("FAIL name: why") and every skip ("SKIP name: why") as it
    happens, passing checks ("PASS name") only when verbose; one line per case when it
    ends ("PASS case (N checks)", "FAIL case (N checks, M failing)", "SKIP case (N checks)"),
    i.e. when a check of another case arrives or at flush(). The checks of a case come
    together: a case name seen again after its line was printed is reported as an error."""

    def __init__(self, filt, verbose=False):
        self.filter = re.compile(filt) if filt else None
        self.verbose = verbose
        self.checks = {"pass": 0, "fail": 0, "skip": 0}
        self.cases = {}            # case name -> {"pass": n, "fail": n, "skip": n}, in order
        self.current = None        # the case whose checks are arriving
        self.reopened = []         # cases whose checks did not come together

    @staticmethod
    def case_of(name):
        return name.split(": ", 1)[0]

    def wanted(self, name):
        return self.filter is None or self.filter.search(name) is not None

    def _count(self, name, status):
        case = self.case_of(name)
        if case != self.current:
            self.flush()
            if case in self.cases and case not in self.reopened:
                self.reopened.append(case)
            self.current = case
        self.checks[status] += 1
        self.cases.setdefault(case, {"pass": 0, "fail": 0, "skip": 0})[status] += 1

    def flush(self):
        """Prints the line of the case in progress (call at the end of a section)."""
        case, self.current = self.current, None
        if case is None:
            return
        c = self.cases[case]
        n = sum(c.values())
        checks = "%d check%s" % (n, "" if n == 1 else "s")
        if c["fail"]:
            print("FAIL %s (%s, %d failing)" % (case, checks, c["fail"]), flush=True)
        elif c["skip"] == n:
            print("SKIP %s (%s)" % (case, checks), flush=True)
        else:
            print("PASS %s (%s)" % (case, checks), flush=True)

    def ok(self, name):
        self._count(name, "pass")
        if self.verbose:
            print("PASS " + name, flush=True)

    def fail(self, name, why):
        self._count(name, "fail")
        print("FAIL %s: %s" % (name, why), flush=True)

    def skip(self, name, why):
        self._count(name, "skip")
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

    @property
    def any_failed(self):
        return self.checks["fail"] > 0

    def case_totals(self):
        """(passed, failed, skipped) test cases."""
        failed = sum(1 for c in self.cases.values() if c["fail"])
        skipped = sum(1 for c in self.cases.values() if not c["fail"] and not c["pass"])
        return len(self.cases) - failed - skipped, failed, skipped

    def closing_lines(self):
        """The checks line (worded so it does not read as "N passed, N failed") and last
        the test-case line "N passed, N failed, N skipped"."""
        self.flush()
        lines = []
        if self.reopened:
            lines.append("NOTE checks of these cases did not come together: " + ", ".join(self.reopened))
        lines.append("checks: %d ok, %d failing, %d skipped" %
                     (self.checks["pass"], self.checks["fail"], self.checks["skip"]))
        lines.append("%d passed, %d failed, %d skipped" % self.case_totals())
        return lines


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



def expand_report(rep):
    """report.json names each stack's frames by index into "frame_table" (docs/json-report.md);
    this replaces the indexes in "stacks" and "mmap_stacks" by the frame objects, in place, so a
    check can read stack["frames"][0]["func"]. Returns rep."""
    table = rep.get("frame_table") if isinstance(rep, dict) else None
    if not isinstance(table, list):
        return rep
    for key in ("stacks", "mmap_stacks"):
        for st in rep.get(key) or []:
            st["frames"] = [table[i] if isinstance(i, int) and 0 <= i < len(table) else
                            {"func": "<bad frame index %r>" % (i,)} for i in st.get("frames", [])]
    return rep

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


def run_tap(res, name, argv, split_detail=False, require_checks=False, timeout=TIMEOUT):
    """Runs argv from the repo root and counts its TAP-like lines as checks of case `name`:
    "ok - WHAT" passes "NAME: WHAT", "not ok - WHAT" fails it ("not ok - WHAT: DETAIL" fails
    "NAME: WHAT" with DETAIL as the reason if split_detail). A program that times out, is
    killed, or exits non-zero without a "not ok" line is one more failure (so is one that
    ran no check at all, if require_checks)."""
    rc, out, err = run(argv, timeout=timeout, cwd=ROOT)
    bad = seen = 0
    for line in out.splitlines():
        if line.startswith("ok - "):
            seen += 1
            res.ok("%s: %s" % (name, line[5:]))
        elif line.startswith("not ok - "):
            seen += 1
            bad += 1
            what, sep, detail = line[9:].partition(": ") if split_detail else (line[9:], "", "")
            res.fail("%s: %s" % (name, what), detail if sep else "reported by the test")
    if rc is None:
        res.fail(name, "timed out after %ds" % timeout)
    elif rc < 0:
        res.fail(name, "killed by signal %d %s" % (-rc, short(err)))
    elif rc != 0 and bad == 0:
        res.fail(name, "exit status %d without a 'not ok' line %s" % (rc, short(err)))
    elif require_checks and seen == 0:
        res.fail(name, "printed no 'ok - ' or 'not ok - ' line (exit %d) %s" % (rc, short(out + err)))


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


ARENA_ENV_DROP = ("MALLOC_ARENA_MAX", "MALLOC_ARENA_TEST", "MALLOC_MMAP_THRESHOLD_",
                  "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_MAX_", "GLIBC_TUNABLES",
                  "LD_PRELOAD")


def clean_env(**extra):
    """os.environ without glibc malloc tunables and LD_PRELOAD, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in ARENA_ENV_DROP}
    env.update(extra)
    return env


def bpf_available():
    """None if the BPF sections can run, else why not."""
    if os.geteuid() != 0:
        return "not running as root"
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no /sys/kernel/btf/vmlinux"
    return None


# --------------------------------------------------------------------------------------

class Context:
    """What the sections share.

    res       Results
    build     the build directory, absolute; build_arg: as given on the command line
    pt        BUILD/peaktrace (run.py: BUILD/peaktrace-static where only that was built, as in
              make static ARCH=arm64's build-arm64/)
    tmp       the scratch directory (removed at the end unless --keep or a failure)
    print_ref --print-ref
    cases     tests/cases/*.json, loaded (casefile.load_cases)
    built     set by the build section: {"wl_basic": {"fp": path, "nofp": path}, ...}
    ref_so    set by the build section: ref_preload.so, None if it did not build
    keep_dirs set by the case section: (case, flavor, mode) -> its output directory
    cross     the cross compiler's prefix the build section puts before gcc, g++ and strip
              ("aarch64-linux-gnu-": tools/vm/prebuild.py --cross); "" builds for this host"""

    def __init__(self, res, build, build_arg, pt, tmp, print_ref=False):
        self.res, self.build, self.build_arg, self.pt, self.tmp = res, build, build_arg, pt, tmp
        self.print_ref = print_ref
        self.cases = []
        self.built = {}
        self.ref_so = None
        self.keep_dirs = {}
        self.cross = ""
        self._kmissing = None

    def kernel_missing(self):
        """The optional kernel features `peaktrace --check-kernel` says are missing here (a set
        of its names, e.g. {"rss_counters"}); empty when it cannot say."""
        if self._kmissing is None:
            self._kmissing = set()
            rc, out, _ = run([self.pt, "--check-kernel"], timeout=60)
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 4 and f[1] == "optional" and "missing" in f[2:5]:
                    self._kmissing.add(f[0])
        return self._kmissing

    def rss_counters_batched(self):
        """Why the RSS figures cannot be exact on this kernel (split RSS counting before 6.2: a
        thread's changes reach /proc and kmem:rss_stat every 64 faults, the workloads' own
        RssAnon truths included), or None."""
        if "rss_counters" in self.kernel_missing():
            return "this kernel batches RSS counters (split RSS counting, before 6.2: " \
                   "--check-kernel's rss_counters): no exact RSS truth here"
        return None

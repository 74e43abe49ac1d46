# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pyobjects: --python-objects against CPython's own accounting, a section of tests/run.py.

tests/workloads/wl_pyobjects.py builds pure-Python objects in named functions (a dict of strings,
a list of tuples, class instances, lists built by two threads at once, a grow-then-free phase). Truth: the same script run separately,
without peaktrace, under `-X tracemalloc` (tracing from the interpreter's start): its
tracemalloc.get_traced_memory() peak, and the bytes build_dict's dict holds. For each interpreter
(a missing one is a counted skip):
  debian-3.11   /usr/bin/python3.11: inlines pymalloc into its callers, so the launched command
                runs with PYTHONMALLOC=malloc (report.json python_objects.traced "malloc",
                pythonmalloc_set_by_peaktrace true);
  pyenv-3.11    pyenv's libpython3.11 (no LTO): PyObject_* / PyMem_* probed, traced "probes";
  trixie-3.13   Debian trixie's python3.13 (build/rootfs/trixie) in a container (unshare --pid
                --mount + chroot) started with PYTHONMALLOC=malloc, attached with -p from the
                host (launching through chroot re-probes the host's libc, not the rootfs's: a
                launch-mode limit of its own), traced "malloc"; the truth there is tracemalloc's
                peak minus what was live when the work started (before the attach).
Checks: peak live heap (report.json totals) within 10% of tracemalloc's peak; allocator_families
lists python_objects; in peak.folded the stacks through build_dict hold its dict within 10%;
errors missed_return, stale_live, live_table_full, thread_state_failed 0, and launched, unknown_free
no more than two threads' tcache teardowns free (glibc's own frees of chunks it cached).
lambda: per invocation, tests/workloads/pyobj_handler.py (a dict of n strings in build_dict)
under the bundled runtime and host with Debian's python3.11 and PYTHONMALLOC=malloc, attached
with --python-objects: each invocation's heap rise (heap_peak_bytes - heap_start_bytes) within
10% of what tracemalloc saw the same handler call add at its peak, run separately.
with --light: both options together are one "peaktrace: " line and exit 2 (usage).
live-table (debian-3.11, launched, PYTHONMALLOC=malloc): with --max-live 8192 on wl_pyobjects.py 5000
the table fills: the start line says 8192 slots and their kernel memory; report.txt's caveat
counts the refused allocations (== errors.live_table_full) and their bytes, and names a
--max-live that would have held them: at least twice the blocks the work holds as tracemalloc
counts them (wl_pyobjects.py --blocks, run separately); run again with that value, nothing is
refused. The cost: the allocator calls probed (more than the blocks held), their BPF time and the
target's system time. Default sizing: launched, the start line and python_objects.live_table say
min(4M, MemTotal/128/32 bytes rounded down to a power of two) slots, at least 32 bytes of kernel
memory each; attached to a python3.11 holding 300000 strings, twice what its RssAnon (read by the
test just before) holds at 32 bytes an object, a power of two, and at least twice the 300000.
debian-3.11/attach: peaktrace attached to a python3.11 running without PYTHONMALLOC says the
tracing is partial: python_objects.traced "partial", inlined_sites equal to the guard compares
objdump finds outside PyObject_Malloc, and the caveat line in report.txt.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess

from harness import ROOT, WORKLOAD_SRC, Proc, children_of, run
from lambdafix import NOT_BUILT, invocations, need_host, traced_run

WL = os.path.join(WORKLOAD_SRC, "wl_pyobjects.py")
ROOTFS = os.path.join(ROOT, "build", "rootfs", "trixie")
TOLERANCE = 0.10
SLOW = 600     # seconds: one probe hit per object is the expensive mode, on a loaded machine


def interpreters():
    """(label, argv prefix to run python, script path as that python sees it, expected mode)."""
    out = [("debian-3.11", ["/usr/bin/python3.11"] if os.access("/usr/bin/python3.11", os.X_OK) else None,
            WL, "malloc")]
    found = sorted(glob.glob("/root/.pyenv/versions/3.11.*/bin/python3.11"))
    out.append(("pyenv-3.11", found[-1:] or None, WL, "probes"))
    py = os.path.join(ROOTFS, "usr", "bin", "python3.13")
    out.append(("trixie-3.13", ["unshare", "--pid", "--mount", "--fork", "--kill-child",
                                "--mount-proc=" + os.path.join(ROOTFS, "proc"), "chroot", ROOTFS,
                                "/usr/bin/python3.13"] if os.access(py, os.X_OK) else None,
                "/tmp/wl_pyobjects.py", "attach"))
    return out


def truth(argv, script, n):
    rc, out, err = run(argv[:1] + argv[1:] + ["-X", "tracemalloc", script, str(n)], timeout=SLOW)
    peak = re.search(r"^wl: tracemalloc peak (\d+)", out, re.M)
    held = re.search(r"^wl: build_dict holds (\d+)", out, re.M)
    before = re.search(r"^wl: traced before (\d+)", out, re.M)
    if rc != 0 or not peak or not held or not before:
        return None, "exit %s: %s %s" % (rc, out[-200:], err[-200:])
    return (int(peak.group(1)), int(held.group(1)), int(before.group(1))), None


def folded_through(path, func):
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if any(fr.split(":")[1:2] == [func] for fr in stack.split(";")):
                total += int(n)
    return total


def within(got, want):
    return want > 0 and abs(got - want) <= TOLERANCE * want


def run_one(ctx, label, argv, script, mode, n):
    res, pt = ctx.res, ctx.pt
    name = "pyobjects/%s" % label
    t, why = truth(argv, script, n)
    if not t:
        res.fail(name + ": tracemalloc truth", why)
        return
    peak_t, held_t, before_t = t
    out = os.path.join(ctx.tmp, "pyobjects-" + label)
    if mode == "attach":
        rc, why = attach_run(pt, argv, script, n, out)
        if why:
            res.fail(name, why)
            return
        peak_t -= before_t
        mode = "malloc"
    else:
        pr = Proc([pt, "-q", "-o", out, "--max-live", "4194304", "--python-objects", "--"] + argv +
                  [script, str(n)])
        rc = pr.wait(SLOW)
        pr.kill()
    if rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, pr.err[-300:]))
        return
    with open(os.path.join(out, "report.json")) as f:
        rep = json.load(f)
    po = rep.get("python_objects") or {}
    res.true(name + ": python_objects.traced", po.get("traced") == mode,
             "want %s, got %s" % (mode, po))
    if mode == "malloc":
        by_us = not label.startswith("trixie")
        res.true(name + ": PYTHONMALLOC", po.get("pythonmalloc_set_by_peaktrace") is by_us
                 and po.get("pythonmalloc") == "malloc", str(po))
    res.true(name + ": allocator_families", rep.get("allocator_families") == ["malloc", "python_objects"],
             str(rep.get("allocator_families")))
    peak = rep["totals"]["peak_live_bytes"]
    res.true(name + ": peak live heap vs tracemalloc", within(peak, peak_t),
             "peaktrace %d B, tracemalloc %d B (%+.1f%%)" % (peak, peak_t, 100.0 * (peak - peak_t) / peak_t))
    # Nothing lost on the way: every free found its block, every entry its return, no block
    # retired as stale, none left out of the live table (attached: blocks from before the attach
    # are freed unknown, and that is all).
    errs = rep.get("errors", {})
    lost = {k: errs.get(k, 0) for k in ("missed_return", "stale_live", "live_table_full", "thread_state_failed")}
    res.true(name + ": no lost or unmatched calls", not any(lost.values()), str(lost))
    # Launched, the only unknown frees are glibc's own: each exiting thread's tcache teardown
    # frees the chunks cached in it (at most 7 in each of 64 bins; two threads).
    if not label.startswith("trixie"):
        res.true(name + ": unknown_free within two tcache teardowns", errs.get("unknown_free", 0) <= 2 * 7 * 64,
                 "unknown_free %d" % errs.get("unknown_free", 0))
    held = folded_through(os.path.join(out, "peak.folded"), "build_dict")
    res.true(name + ": build_dict in peak.folded", within(held, held_t),
             "peak.folded %d B through build_dict, tracemalloc %d B" % (held, held_t))
    if ctx.res.verbose:
        print("  %s: peak %d vs tracemalloc %d (%+.2f%%); build_dict %d vs %d (%+.2f%%)" % (
            name, peak, peak_t, 100.0 * (peak - peak_t) / peak_t, held, held_t,
            100.0 * (held - held_t) / held_t))


def attach_run(pt, argv, script, n, out):
    """The workload in its container with PYTHONMALLOC=malloc, peaktrace attached from the host
    to its host PID before the work starts. (rc, None) or (None, why)."""
    env = dict(os.environ, PYTHONMALLOC="malloc")
    wl = Proc(argv + [script, "--wait", str(n)], env=env)
    if not wl.wait_for("out", r"^wl: waiting for SIGUSR1"):
        wl.kill()
        return None, "workload never became ready: %s" % wl.err[-300:]
    pid = (children_of(wl.pid) or [0])[0]
    pr = Proc([pt, "-q", "-p", pid, "-o", out, "--max-live", "4194304", "--python-objects"])
    if not pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % pid):
        wl.kill()
        pr.kill()
        return None, "peaktrace did not start: %s" % pr.err[-300:]
    os.kill(pid, signal.SIGUSR1)
    done = wl.wait_for("out", r"^wl: done", timeout=SLOW)
    pr.signal(signal.SIGINT)
    rc = pr.wait(SLOW)
    wl.kill()
    if not done:
        return None, "workload not done: %s" % wl.err[-300:]
    if rc != 0:
        return None, "peaktrace exit %s: %s" % (rc, pr.err[-300:])
    return rc, None


def elf_machine(path):
    """e_machine of an ELF file (62 x86-64, 183 AArch64), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    return int.from_bytes(head[18:20], "little") if head[:4] == b"\x7fELF" else None


def guard_sites_a64(exe):
    """guard_sites for A64 code, from objdump's text: registers set by `adrp xN, PAGE` and
    `add xN, xM, #imm` followed down each symbol's listing (forgotten when an instruction
    names them first: its destination), a `cmp xA, xB` naming the address PyObject_Malloc's
    first such compare names; None without an objdump for it or a guard."""
    tool = shutil.which("aarch64-linux-gnu-objdump") or shutil.which("objdump")
    if not tool:
        return None
    dis = subprocess.run([tool, "-d", exe], capture_output=True, text=True).stdout
    sites, fn, reg = [], None, {}
    line = re.compile(r"^\s*([0-9a-f]+):\s+[0-9a-f]{8}\s+(\S+)\s*(.*)$")
    for text in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", text)
        if m:
            fn, reg = m.group(1), {}
            continue
        m = line.match(text)
        if not m:
            continue
        op, ops = m.group(2), [o.strip() for o in re.split(r",\s*(?![^\[]*\])", m.group(3).split("//")[0].strip())]
        if op == "adrp":
            reg[ops[0]] = int(ops[1].split()[0], 16)
        elif op == "add" and len(ops) == 3 and ops[0].startswith("x") and ops[1] in reg and \
                re.match(r"^#0x[0-9a-f]+$|^#\d+$", ops[2]):
            reg[ops[0]] = reg[ops[1]] + int(ops[2][1:], 0)
        elif op == "cmp" and len(ops) == 2 and all(re.match(r"^x\d+$", o) for o in ops):
            named = [reg[o] for o in ops if o in reg]
            if named:
                sites.append((fn, named[0]))
        elif ops and re.match(r"^[xw]\d+$", ops[0]) and not op.startswith(("st", "cmp", "cmn", "tst", "cb", "tb", "prfm")):
            reg.pop("x" + ops[0][1:], None)
            if op.startswith("ldp") and re.match(r"^[xw]\d+$", ops[1]):
                reg.pop("x" + ops[1][1:], None)
    own = [a for f, a in sites if f == "PyObject_Malloc@@Base"]
    if not own:
        return None
    return sum(1 for f, a in sites if a == own[0] and f != "PyObject_Malloc@@Base")


def guard_sites(exe):
    """Compares against the address PyObject_Malloc compares the allocator pointer with,
    outside PyObject_Malloc, as objdump disassembles them; None without objdump."""
    if elf_machine(exe) == 183:
        return guard_sites_a64(exe)
    if not shutil.which("objdump"):
        return None
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe], capture_output=True,
                         text=True).stdout
    m = re.search(r"^[0-9a-f]+ <PyObject_Malloc@@Base>:\n((?:.+\n)+)", dis, re.M)
    if not m:
        return None
    body = m.group(1)
    g = re.search(r"\scmp\s+\$0x([0-9a-f]+),%r", body)
    if not g:
        return None
    pat = re.compile(r"\scmpq?\s+\$0x%s,(?:%%r|0x[0-9a-f]+\(%%rip\))" % g.group(1))
    return len(pat.findall(dis)) - len(pat.findall(body))


def run_attach_partial(ctx):
    res, pt = ctx.res, ctx.pt
    name = "pyobjects/debian-3.11/attach"
    if not res.wanted(name):
        return
    exe = "/usr/bin/python3.11"
    if not os.access(exe, os.X_OK):
        res.skip(name, "no %s" % exe)
        return
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    wl = Proc([exe, "-c", "import sys, time; print('ready', flush=True); sys.stdin.read() if False "
               "else time.sleep(600)"], env=env)
    if not wl.wait_for("out", "ready"):
        wl.kill()
        res.fail(name, "python did not start")
        return
    out = os.path.join(ctx.tmp, "pyobjects-attach")
    pr = Proc([pt, "-q", "-p", wl.pid, "-o", out, "--python-objects"])
    started = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % wl.pid)
    pr.signal(signal.SIGINT)
    rc = pr.wait(SLOW)
    wl.kill()
    if not started or rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, pr.err[-300:]))
        return
    with open(os.path.join(out, "report.json")) as f:
        po = json.load(f).get("python_objects") or {}
    res.true(name + ": python_objects.traced", po.get("traced") == "partial", str(po))
    want = guard_sites(exe)
    if want is None:
        res.skip(name + ": inlined_sites vs objdump", "objdump not available or no guard found")
    else:
        res.true(name + ": inlined_sites vs objdump", po.get("inlined_sites") == want and want > 0,
                 "peaktrace %s, objdump %s" % (po.get("inlined_sites"), want))
    with open(os.path.join(out, "report.txt")) as f:
        text = f.read()
    res.true(name + ": caveat in report.txt", "Python objects PARTLY traced" in text, text[:400])


def run_lambda(ctx):
    """Per invocation: tests/workloads/pyobj_handler.py under the bundled runtime and host,
    Debian's python3.11 started with PYTHONMALLOC=malloc, peaktrace attached with
    --python-objects. Each invocation's heap rise (heap_peak_bytes - heap_start_bytes) against
    what tracemalloc saw the same handler call add at its peak, run separately."""
    res = ctx.res
    name = "pyobjects/lambda"
    if not res.wanted(name):
        return
    exe = "/usr/bin/python3.11"
    if not need_host(res, name, ctx.build_arg, exe, why="no %s or %s" % (exe, NOT_BUILT)):
        return
    ns = [20000, 60000, 10000]
    handler = os.path.join(WORKLOAD_SRC, "pyobj_handler.py")
    rc, out, err = run([exe, "-X", "tracemalloc", handler] + [str(n) for n in ns], timeout=SLOW)
    want = {int(a): int(b) for a, b in re.findall(r"^handler (\d+) peak_rise (\d+)", out, re.M)}
    if rc != 0 or len(want) != len(ns):
        res.fail(name + ": tracemalloc truth", "exit %s: %s" % (rc, err[-300:]))
        return
    got = traced_run(ctx, name, "pyobj-lambda",
                     [exe, os.path.join(ROOT, "tools", "functions", "python", "bootstrap.py")],
                     # The host's 3 s default timeout is a speed test it is not: traced with
                     # --python-objects, n=60000 took 7 s on a slower machine and was killed.
                     ["--timeout", "120", "--handler", "pyobj_handler.handler", "--task-root", WORKLOAD_SRC],
                     [{"n": n} for n in ns], pt_args=["--python-objects", "--max-live", "4194304"],
                     env=dict(os.environ, PYTHONMALLOC="malloc"))
    if not got:
        return
    rep, _, _ = got
    invs = invocations(rep)
    res.true(name + ": invocations", len(invs) == len(ns), "%d invocations" % len(invs))
    for inv, n in zip(invs, ns):
        rise = inv["heap_peak_bytes"] - inv["heap_start_bytes"]
        res.true(name + ": invocation %d (n=%d) heap rise vs tracemalloc" % (inv.get("seq", 0), n),
                 within(rise, want[n]), "peaktrace %d B, tracemalloc %d B" % (rise, want[n]))
        if res.verbose:
            print("  %s: invocation n=%d: heap rise %d vs tracemalloc %d (%+.2f%%)" % (
                name, n, rise, want[n], 100.0 * (rise - want[n]) / want[n]))


def run_section(ctx):
    res = ctx.res
    name = "pyobjects/with --light"
    if res.wanted(name):
        rc, out, err = run([ctx.pt, "--light", "--python-objects", "--", "/bin/true"])
        res.true(name + ": usage error", rc == 2 and err.startswith("peaktrace: ") and
                 len(err.strip().splitlines()) == 1, "exit %s: %s" % (rc, err[-200:]))
    for label, argv, script, mode in interpreters():
        name = "pyobjects/%s" % label
        if not res.wanted(name):
            continue
        if not argv:
            res.skip(name, "interpreter not installed")
            continue
        if label.startswith("trixie"):
            shutil.copy(WL, os.path.join(ROOTFS, "tmp", "wl_pyobjects.py"))
        # The probes mode costs one single-stepped trap per object: a smaller workload.
        run_one(ctx, label, argv, script, mode, 20000 if mode == "probes" else 40000)
    run_attach_partial(ctx)
    run_lambda(ctx)
    run_live_table(ctx)


START_LINE = re.compile(r"^peaktrace: --python-objects: live table of (\d+) slots, ([0-9.]+ [KMG]?i?B) of kernel "
                        r"memory \(([^)]*)\)", re.M)


def pow2_ceil(v):
    p = 1
    while p < v:
        p <<= 1
    return p


def pow2_floor(v):
    p = 1
    while p * 2 <= v:
        p <<= 1
    return p


def mem_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def live_table_run(pt, out, extra, n):
    """wl_pyobjects.py N launched with --python-objects: (rc, stderr, report.json or None)."""
    pr = Proc([pt, "-q", "-o", out, "--python-objects"] + extra + ["--", "/usr/bin/python3.11", WL, str(n)])
    rc = pr.wait(SLOW)
    pr.kill()
    try:
        with open(os.path.join(out, "report.json")) as f:
            return rc, pr.err, json.load(f)
    except (OSError, ValueError):
        return rc, pr.err, None


def run_live_table(ctx):
    res, pt = ctx.res, ctx.pt
    name = "pyobjects/live-table"
    if not res.wanted(name):
        return
    if not os.access("/usr/bin/python3.11", os.X_OK):
        res.skip(name, "no /usr/bin/python3.11")
        return
    n = 5000
    rc, out, err = run(["/usr/bin/python3.11", "-X", "tracemalloc", WL, "--blocks", str(n)], timeout=SLOW)
    m = re.search(r"^wl: blocks held (\d+)", out, re.M)
    if rc != 0 or not m:
        res.fail(name + ": tracemalloc's block count", "exit %s: %s %s" % (rc, out[-200:], err[-200:]))
        return
    held = int(m.group(1))

    # A table far too small: what it refused, and what would have fitted.
    rc, err, rep = live_table_run(pt, os.path.join(ctx.tmp, "pyobj-full"), ["--max-live", "8192"], n)
    if not res.true(name + ": full run", rc == 0 and rep is not None, "exit %s: %s" % (rc, err[-300:])):
        return
    sl = START_LINE.search(err)
    res.true(name + ": full: the start line says the table's size, memory and why",
             sl is not None and sl.group(1) == "8192" and sl.group(3) == "--max-live", err[-400:])
    lt = (rep.get("python_objects") or {}).get("live_table") or {}
    full = rep.get("errors", {}).get("live_table_full", 0)
    res.true(name + ": full: live_table.full_count is the refused allocations",
             full > 0 and lt.get("full_count") == full, "live_table %s, live_table_full %d" % (lt, full))
    res.true(name + ": full: their bytes", (lt.get("untracked_bytes") or 0) > 0, str(lt))
    with open(os.path.join(ctx.tmp, "pyobj-full", "report.txt")) as f:
        text = f.read()
    want = "caveat: the live table was FULL: %d allocations" % full
    fit = lt.get("max_live_to_fit") or 0
    res.true(name + ": full: report.txt says so with the --max-live that fits",
             want in text and ("--max-live %d would have held them" % fit) in text, want)
    res.true(name + ": full: that --max-live holds twice the %d blocks the work holds (tracemalloc)" % held,
             fit >= 2 * held and fit & (fit - 1) == 0, "max_live_to_fit %d" % fit)
    cost = (rep.get("python_objects") or {}).get("cost") or {}
    res.true(name + ": full: the cost measured (calls, BPF time, the target's system time)",
             (cost.get("calls") or 0) > held and (cost.get("bpf_ns") or 0) > 0 and
             (cost.get("target_system_ns") or 0) > 0 and "cost, measured: " in text, str(cost))

    # The figure it named fits: nothing refused.
    rc, err, rep = live_table_run(pt, os.path.join(ctx.tmp, "pyobj-fit"), ["--max-live", str(fit)], n)
    if res.true(name + ": --max-live %d run" % fit, rc == 0 and rep is not None, "exit %s: %s" % (rc, err[-300:])):
        res.eq(name + ": with --max-live %d nothing refused" % fit, rep.get("errors", {}).get("live_table_full"), 0)

    # Launched without --max-live: the documented default, from this machine's memory.
    want_slots = min(4 << 20, max(1 << 20, pow2_floor(mem_total() // 128 // 32)))
    rc, err, rep = live_table_run(pt, os.path.join(ctx.tmp, "pyobj-default"), [], 100)
    if res.true(name + ": default run", rc == 0 and rep is not None, "exit %s: %s" % (rc, err[-300:])):
        sl = START_LINE.search(err)
        lt = (rep.get("python_objects") or {}).get("live_table") or {}
        res.true(name + ": launched: %d slots (the launch default on this machine)" % want_slots,
                 sl is not None and int(sl.group(1)) == want_slots and lt.get("slots") == want_slots and
                 sl.group(3).startswith("the launch default"), "%s / %s" % (sl and sl.group(0), lt))
        res.true(name + ": launched: at least 32 bytes of kernel memory a slot",
                 (lt.get("memory_bytes") or 0) >= 32 * want_slots, str(lt))

    # Attached: sized from what the target holds.
    objs = 300000
    env = dict(os.environ, PYTHONMALLOC="malloc")
    wl = Proc(["/usr/bin/python3.11", "-c", "import time; x = [str(i) * 3 for i in range(%d)]; "
               "print('ready', flush=True); time.sleep(600)" % objs], env=env)
    if not wl.wait_for("out", "ready"):
        wl.kill()
        res.fail(name + ": attach", "python did not start")
        return
    with open("/proc/%d/status" % wl.pid) as f:
        anon = [int(l.split()[1]) * 1024 for l in f if l.startswith("RssAnon:")][0]
    out = os.path.join(ctx.tmp, "pyobj-attach")
    pr = Proc([pt, "-q", "-p", wl.pid, "-o", out, "--python-objects"])
    started = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % wl.pid)
    pr.signal(signal.SIGINT)
    rc = pr.wait(SLOW)
    wl.kill()
    sl = START_LINE.search(pr.err)
    cap = max(1 << 20, pow2_floor(mem_total() // 128 // 32))
    want_slots = min(cap, max(1 << 20, pow2_ceil(2 * (anon // 32))))
    got = int(sl.group(1)) if sl else 0
    # RssAnon may move a page or two between the two reads: the next power of two either side.
    res.true(name + ": attached: twice the objects %.1f MiB of RssAnon holds at 32 B (%d slots)"
             % (anon / 1048576.0, want_slots),
             started and rc == 0 and got in (want_slots, want_slots // 2, want_slots * 2) and
             "RssAnon" not in (sl.group(3) if sl else "x") and
             (sl.group(3) if sl else "").startswith("twice the objects"), pr.err[-400:])
    res.true(name + ": attached: room for twice the %d strings it holds" % objs, got >= 2 * objs, "%d slots" % got)

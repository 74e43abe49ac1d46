# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""cli: bad input and lifecycle (exit codes, one error line, the target unharmed, -d, SIGINT)."""

import os
import re
import shutil
import signal
import subprocess
import time

import json

from harness import READY_MARK, SLEEP_MARK, TIMEOUT, Proc, clean_env, pid_alive, run, short
from tracing import TRACING_RX, breakpoints_left, find_stack, load_report, trace_attach, trace_launch


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




def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    sleep_case = next((c for c in ctx.cases if c["command"][0] == "wl_sleep"), None)
    wl_basic = built.get("wl_basic", {}).get("fp")
    wl_sleep = built.get("wl_sleep", {}).get("fp")
    wl_static = built.get("wl_static", {}).get("fp")
    sleep_live = next((s for s in sleep_case.get("expect", {}).get("stacks", [])
                       if s.get("frame0", "").startswith("^scn_sleep_live")), None) if sleep_case else None

    def out(name):
        return os.path.join(tmp, "cli-" + re.sub(r"[^A-Za-z0-9]+", "-", name))

    # ---- usage errors (exit 2)
    for name, argv in [("cli/usage: no arguments", []),
                       ("cli/usage: -p not a number", ["-p", "notapid"]),
                       ("cli/usage: -p list with a bad PID", ["-p", "1,x"]),
                       ("cli/usage: -p list with an empty PID", ["-p", "1,"]),
                       ("cli/usage: more than 32 PIDs", ["-p", ",".join(str(i) for i in range(1, 34))]),
                       ("cli/usage: --follow with --compare-env", ["--follow", "--compare-env", "A=1", "--", "true"]),
                       ("cli/usage: an unknown option", ["--no-such-option", "-p", "1"]),
                       ("cli/usage: diff with an unknown option", ["diff", "--no-such-option", "a", "b"])]:
        if res.wanted(name):
            rc, _, err = run([pt] + argv)
            res.eq("%s: exit status" % name, rc, 2)
            res.true("%s: stderr starts with 'peaktrace: '" % name,
                     err.startswith("peaktrace: ") or "Usage" in err or "usage" in err,
                     "stderr was %r" % short(err))
            if "unknown" in name:
                res.true("%s: its first line names peaktrace, not a path" % name,
                         err.startswith("peaktrace: ") or err.startswith("peaktrace diff: "),
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
            rep = load_report(res, name, r.outdir)
            # -d counts from when the probes were in (the report's duration_ns), a little before
            # the "tracing" line the harness times from: on a loaded machine that gap is ~0.1 s.
            traced = (rep or {}).get("duration_ns", 0) / 1e9
            res.true("%s: traced ~1 s" % name, 1.0 <= traced < 5.0 and r.elapsed < TIMEOUT,
                     "traced %.2f s, ended %.2f s after the tracing line" % (traced, r.elapsed))
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
            rep = load_report(res, name, r.outdir)
            # -d counts from when the probes were in (the report's duration_ns), a little before
            # the "tracing" line the harness times from: on a loaded machine that gap is ~0.1 s.
            traced = (rep or {}).get("duration_ns", 0) / 1e9
            res.true("%s: traced ~1 s" % name, 1.0 <= traced < 5.0 and r.elapsed < TIMEOUT,
                     "traced %.2f s, ended %.2f s after the tracing line" % (traced, r.elapsed))
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

    # ---- SIGINT twice: peaktrace exits at once without a report, the target keeps running,
    # no breakpoint of ours left in its text. (With --perf-uprobes the exit itself takes the
    # kernel ~100 ms per probe to detach, so the timing is checked on uprobe-multi links.)
    name = "cli/SIGINT twice"
    if res.wanted(name) and wl_sleep:
        timing = {}

        def interrupt_twice(pr, wl):
            if wl.wait_for("out", re.escape(SLEEP_MARK)):
                time.sleep(0.2)
                pr.signal(signal.SIGINT)
                time.sleep(0.05)
                timing["second"] = time.monotonic()
                pr.signal(signal.SIGINT)
        r = trace_attach(pt, wl_sleep, [], out(name),
                         on_tracing=interrupt_twice, leave_running=True)
        if r.why:
            res.fail(name, r.why)
        else:
            took = time.monotonic() - timing.get("second", 0)
            res.true("%s: exits within 2 s of the second signal" % name, "second" in timing and took < 2.0,
                     "took %.2f s; stderr %r" % (took, short(r.err)))
            res.true("%s: exit status nonzero (no report)" % name, r.rc not in (None, 0), "rc %r" % r.rc)
            res.true("%s: says why" % name, "second signal" in r.err, short(r.err))
            res.true("%s: target still running" % name, pid_alive(r.wl.pid), "target is gone")
            # The check is on the reading right after peaktrace was reaped (the promise: nothing
            # left behind by _exit). One byte still differed there in 2 runs on 2026-12-04, both
            # on a loaded machine, cause unknown: on a failure the test looks again for up to 2 s
            # and says whether the kernel removed the breakpoint late or not at all.
            bad = breakpoints_left(r.wl.pid)
            later, t0 = bad, time.monotonic()
            while later and time.monotonic() - t0 < 2.0:
                time.sleep(0.05)
                later = breakpoints_left(r.wl.pid)
            res.true("%s: no uprobe breakpoint left in the target's libc text" % name, bad == 0,
                     "%s bytes differ from the file (%s after %.2f s more)" % (
                         bad, later, time.monotonic() - t0))
            r.wl.signal(signal.SIGTERM)
            res.eq("%s: target exit status after SIGTERM" % name, r.wl.wait(TIMEOUT), 0)


    # ---- the hidden --verifier-stats FILE: the kernel's own verifier statistics (log level 4)
    # of each program the run loads; the programs a run never attaches are not loaded, but for
    # unw_key_probe, which the unwind tables' loader runs (BPF_PROG_TEST_RUN) with the DWARF
    # unwinder on (the default).
    full = ["alloc_enter_prog", "alloc_return", "free_enter", "on_mem_enter", "on_mem_exit",
            "on_write_enter", "on_read_exit", "on_recvfrom_exit", "on_rss_stat",
            "on_page_fault_user", "on_page_fault_kernel", "on_exec", "on_exit", "unw_key_probe"]
    for name, args, want in [
            ("cli/verifier-stats", [], full),
            ("cli/verifier-stats --light", ["--light"], full[3:]),
            ("cli/verifier-stats --boundary none", ["--boundary", "none"],
             full[:5] + full[8:]),
            ("cli/verifier-stats --boundary uprobe", ["--boundary", "uprobe"], full + ["boundary_hit"])]:
        if not res.wanted(name) or not wl_basic:
            continue
        f = out(name) + ".txt"
        # Two copies asked for: by default a loaded machine (no core free) gets one.
        rc, _, err = run([pt, "-q", "--verifier-stats", f, "--load-parts", "2", "-o", out(name)] + args +
                         ["--", wl_basic])
        res.eq("%s: exit status" % name, rc, 0)
        rows = {}
        try:
            with open(f) as fh:
                for line in fh:
                    parts = line.split()
                    rows[parts[0]] = dict(kv.split("=", 1) for kv in parts[1:])
        except (OSError, ValueError, IndexError) as e:
            res.fail(name, "cannot read %s: %s; stderr %r" % (f, e, short(err)))
            continue
        total = rows.pop("total", {})
        res.eq("%s: the programs loaded" % name, sorted(rows), sorted(want))
        res.true("%s: every program verified (instructions processed > 0)" % name,
                 all(int(r.get("insns", 0)) > 0 for r in rows.values()), repr(rows))
        # Each program's deepest call chain (tools/check-stack.py, built in): within the budget
        # that loads without a private BPF stack, and never below a frame the kernel's own
        # verifier measured in it (its "stack depth A+B+...", one figure per function).
        res.true("%s: every chain within 448 stack bytes" % name,
                 all(0 < int(r.get("chain_bytes", -1)) <= 448 for r in rows.values()), repr(rows))
        res.true("%s: no chain below a frame the verifier measured" % name,
                 all(int(r.get("chain_bytes", -1)) >= max(int(x) for x in r.get("stack", "0").split("+") if x)
                     for r in rows.values() if r.get("stack")), repr(rows))
        res.eq("%s: the total is the programs' sum" % name, int(total.get("insns", -1)),
               sum(int(r.get("insns", 0)) for r in rows.values()))
        # Launch mode loads the programs on both cores (user/bpfload.c): two copies of the
        # object, each loading its share; the instruction guard below shows that both saw the
        # frozen settings (a copy verifying against unknown ones takes several times more).
        res.eq("%s: the programs loaded by two copies of the object" % name,
               sorted(set(r.get("part") for r in rows.values())), ["0", "1"])
        res.true("%s: the load's phases timed" % name,
                 float(total.get("maps_ms", 0)) > 0 and float(total.get("progs_ms", 0)) > 0, repr(total))
        # A guard against inlining coming back (docs/design.md "Cold start"): the default
        # object took 517K instructions before global functions and merged programs, ~108K since.
        if not args:
            res.true("%s: under 200K instructions in all" % name, int(total.get("insns", 1 << 30)) < 200000,
                     "total %s" % total)

    check_kernel_section(ctx, out, wl_basic)

    # ---- the command's signal mask is the one peaktrace was started with (peaktrace blocks
    # SIGCHLD in itself for its signalfd: util/wake.c), launched alone and under --follow, with
    # nothing blocked and with SIGUSR2 and SIGCHLD itself blocked.
    for mode in ("launch", "--follow"):
        for blocked in ([], [signal.SIGUSR2, signal.SIGCHLD]):
            name = "cli/signal mask: %s, %s blocked" % (
                mode, "+".join(s.name for s in blocked) or "nothing")
            if res.wanted(name):
                check_sigmask(res, name, pt, out(name), mode, blocked)


def sigblk(path):
    """SigBlk of a /proc/PID/status copy, as an int; None when missing."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("SigBlk:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return None


def check_sigmask(res, name, pt, outdir, mode, blocked):
    """cp copies its own /proc/self/status (no shell between: nothing else touches the mask)."""
    copy = outdir + ".status"
    want = sum(1 << (int(s) - 1) for s in blocked)
    argv = [pt, "-q", "-o", outdir] + (["--follow"] if mode != "launch" else []) + \
        ["--", "/bin/cp", "/proc/self/status", copy]
    try:
        cp = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=TIMEOUT, start_new_session=True,
                            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, blocked))
        rc, err = cp.returncode, cp.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "timed out"
    res.eq("%s: exit status" % name, rc, 0)
    got = sigblk(copy)
    res.true("%s: the command's SigBlk is %#x, the mask peaktrace was started with" % (name, want),
             got == want, "SigBlk %s; stderr %r" % (None if got is None else "%#x" % got, short(err)))


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


# ---- the kernel check (user/kernel/features.c): --check-kernel, the one-line refusal, and what a
# kernel without an optional feature costs, pretended with PEAKTRACE_PRETEND_MISSING (test-only).

def check_kernel_table(out):
    """--check-kernel's rows: {name: state} (the HERE column), and the last line."""
    rows, lines = {}, [l for l in out.splitlines() if l.strip()]
    for l in lines[2:-1]:
        m = re.match(r"^(\S+)\s+(essential|in pidns|optional|info)\s+.*?\s((?:present|missing|unknown)"
                     r"(?: \([a-z ]+\))?)\s", l)
        if m:
            rows[m.group(1)] = m.group(3)
    return rows, lines[-1] if lines else ""


def bpftool_truth():
    """What bpftool says of the helpers and map types, and the kernel's BTF of the kfunc: the
    independent answers to the check's probes. None when bpftool cannot be run."""
    bpftool = shutil.which("bpftool") or "/usr/sbin/bpftool"
    rc, out, _ = run([bpftool, "feature", "probe", "kernel", "-j"])
    if rc != 0:
        return None
    try:
        d = json.loads(out)
    except ValueError:
        return None
    kp = set(d["helpers"].get("kprobe_available_helpers", []))
    tp = set(d["helpers"].get("tracepoint_available_helpers", []))
    truth = {
        "ringbuf": d["map_types"].get("have_ringbuf_map_type"),
        "task_storage": d["map_types"].get("have_task_storage_map_type") and
        "bpf_task_storage_get" in kp and "bpf_task_storage_get" in tp,
    }
    # The program types features.c probes each helper in (where bpf/ calls it).
    for h, types in (("bpf_probe_read_user", (kp, tp)), ("bpf_get_ns_current_pid_tgid", (kp, tp)),
                     ("bpf_get_current_task_btf", (kp, tp)), ("bpf_task_pt_regs", (tp,)),
                     ("bpf_get_attach_cookie", (kp,)), ("bpf_for_each_map_elem", (tp,)),
                     ("bpf_loop", (kp, tp)), ("bpf_find_vma", (kp, tp))):
        truth[h] = all(h in t for t in types)
    rc, out, _ = run([bpftool, "btf", "dump", "file", "/sys/kernel/btf/vmlinux"], timeout=120)
    if rc == 0:
        truth["bpf_rdonly_cast"] = "FUNC 'bpf_rdonly_cast'" in out
        truth["task_iter"] = "FUNC 'bpf_iter_task'" in out
        truth["tp_sched_process"] = "TYPEDEF 'btf_trace_sched_process_exec'" in out and \
            "TYPEDEF 'btf_trace_sched_process_exit'" in out
        truth["tp_page_fault"] = "TYPEDEF 'btf_trace_page_fault_user'" in out and \
            "TYPEDEF 'btf_trace_page_fault_kernel'" in out
        # split RSS counting (before 6.2): task_struct has a member rss_stat
        m = re.search(r"STRUCT 'task_struct' size=\d+ vlen=\d+\n((?:\t.*\n)*)", out)
        if m:
            truth["rss_counters"] = "\t'rss_stat' " not in m.group(1)
    tracefs = next((r for r in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
                    if os.path.isdir(r + "/events")), None)
    if tracefs:
        truth["tp_rss_stat"] = os.path.exists(tracefs + "/events/kmem/rss_stat/id")
        truth["tp_syscalls"] = all(os.path.exists(tracefs + "/events/syscalls/%s/id" % e) for e in (
            "sys_enter_mmap", "sys_exit_mmap", "sys_enter_munmap", "sys_enter_brk", "sys_enter_madvise"))
    truth["btf"] = os.path.exists("/sys/kernel/btf/vmlinux")
    truth["uprobes"] = os.path.exists("/sys/bus/event_source/devices/uprobe/type")
    return truth


def kernel_version():
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_kernel_section(ctx, out, wl_basic):
    res, pt = ctx.res, ctx.pt

    name = "cli/check-kernel"
    if res.wanted(name):
        rc, so, err = run([pt, "--check-kernel"])
        rows, last = check_kernel_table(so)
        res.eq("%s: exit status" % name, rc, 0)
        res.true("%s: the first line names this kernel's release" % name,
                 so.startswith("kernel %s " % os.uname().release), short(so, 200))
        res.true("%s: a row per feature (23)" % name, len(rows) == 23, sorted(rows))
        res.eq("%s: the last line" % name, last, "peaktrace can run here")
        res.eq("%s: nothing on stderr" % name, err, "")
        truth = bpftool_truth()
        if truth is None:
            res.skip(name + ": bpftool agrees", "bpftool feature probe failed")
        else:
            for feat, want in sorted(truth.items()):
                res.eq("%s: %s as bpftool / the BTF / tracefs say" % (name, feat),
                       rows.get(feat, "?").split(" ")[0], "present" if want else "missing")
        # No bpftool probe for these: the kernel's version says (mainline 6.6).
        if kernel_version() >= (6, 6):
            res.eq("%s: uprobe_multi on %s" % (name, os.uname().release), rows.get("uprobe_multi"), "present")

    name = "cli/check-kernel bpf_loop missing"
    if res.wanted(name):
        rc, so, err = run([pt, "--check-kernel"], env=clean_env(PEAKTRACE_PRETEND_MISSING="bpf_loop"))
        rows, last = check_kernel_table(so)
        res.eq("%s: exit status" % name, rc, 7)
        res.eq("%s: bpf_loop's row" % name, rows.get("bpf_loop"), "missing (pretended)")
        res.true("%s: the last line says it cannot run, naming bpf_loop (5.17+)" % name,
                 last.startswith("peaktrace cannot run here: ") and "bpf_loop (5.17+)" in last, last)

    name = "cli/check-kernel with -p"
    if res.wanted(name):
        rc, _, err = run([pt, "--check-kernel", "-p", "1"])
        res.eq("%s: exit status" % name, rc, 2)
        one_error_line(res, name, err)

    name = "cli/check-kernel not root"
    if res.wanted(name):
        setpriv = shutil.which("setpriv")
        if not setpriv:
            res.skip(name, "setpriv not found")
        elif not all(os.stat(d).st_mode & 0o001 for d in parents(os.path.abspath(pt))):
            res.skip(name, "%s is not reachable by an unprivileged user" % pt)
        else:
            rc, so, _ = run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                             pt, "--check-kernel"])
            rows, last = check_kernel_table(so)
            res.eq("%s: exit status" % name, rc, 4)
            res.eq("%s: bpf_loop (a program load) unknown" % name, rows.get("bpf_loop"), "unknown")
            res.eq("%s: btf (a file) still present" % name, rows.get("btf"), "present")
            res.true("%s: the last line says it cannot tell, and why" % name,
                     last.startswith("peaktrace cannot tell") and "root" in last, last)

    name = "cli/kernel unknown pretended feature"
    if res.wanted(name) and wl_basic:
        rc, _, err = run([pt, "-o", out(name), "--", wl_basic],
                         env=clean_env(PEAKTRACE_PRETEND_MISSING="bpf_lop"))
        res.eq("%s: exit status" % name, rc, 2)
        one_error_line(res, name, err)
        res.true("%s: names it" % name, "bpf_lop" in err, short(err))

    # An essential feature missing: one line naming it and its version, exit 7, before anything
    # is started (launch: no report, nothing traced) or probed (attach: the target unharmed).
    for name, mode in (("cli/kernel bpf_loop missing launch", "launch"),
                       ("cli/kernel bpf_loop missing attach", "attach")):
        if not res.wanted(name) or not wl_basic:
            continue
        env = clean_env(PEAKTRACE_PRETEND_MISSING="bpf_loop")
        odir = out(name)
        wl = start_waiting(wl_basic) if mode == "attach" else None
        if mode == "attach" and not wl:
            res.fail(name, "workload never became ready")
            continue
        rc, _, err = run([pt, "-o", odir] + (["-p", wl.pid] if wl else ["--", wl_basic]), env=env)
        res.eq("%s: exit status" % name, rc, 7)
        one_error_line(res, name, err)
        res.true("%s: the line names bpf_loop and 5.17" % name,
                 "lacks bpf_loop (5.17+)" in err and "verifier" not in err, short(err))
        res.eq("%s: no report written" % name, sorted(os.listdir(odir)) if os.path.isdir(odir) else [], [])
        if wl:
            check_unharmed(res, name, wl)

    # An optional feature missing: the run works, on perf-event uprobes, and the report says
    # what that cost: the uprobes attached one by one (counted from the probe plan it lists).
    name = "cli/kernel uprobe_multi missing"
    if res.wanted(name) and wl_basic:
        odir = out(name)
        rc, _, err = run([pt, "-q", "-o", odir, "--", wl_basic],
                         env=clean_env(PEAKTRACE_PRETEND_MISSING="uprobe_multi"))
        res.eq("%s: exit status" % name, rc, 0)
        rep = load_report(res, name, odir)
        if rep:
            k = rep.get("kernel") or {}
            miss = {m.get("feature"): m for m in k.get("missing", [])}
            um = miss.get("uprobe_multi", {})
            plan = [p for p in rep.get("probes", []) if not p.get("shared_with") and not p.get("forwards")]
            want_links = sum(1 if p.get("function") == "free" else 2 for p in plan)
            res.eq("%s: attach" % name, rep.get("attach"), "perf_event")
            res.eq("%s: kernel.missing" % name, sorted(miss), ["uprobe_multi"])
            res.eq("%s: pretended" % name, um.get("pretended"), True)
            res.eq("%s: uprobe links attached one by one = the plan's (free once, the others "
                   "entry and return)" % name, (um.get("measured") or {}).get("uprobe_links"), want_links)
            res.eq("%s: the attach time is the start-up's" % name,
                   (um.get("measured") or {}).get("attach_ns"), rep.get("startup", {}).get("attach_ns"))
            res.true("%s: its cost says the count" % name,
                     "%d allocator uprobes attached one by one" % want_links in um.get("cost", ""),
                     um.get("cost"))
            try:
                with open(os.path.join(odir, "report.txt")) as f:
                    txt = f.read()
            except OSError as e:
                txt = str(e)
            res.true("%s: report.txt's header says it" % name,
                     re.search(r"^kernel: \S+, without 1 optional feature:\n  uprobe-multi links \(6\.6\+\) "
                               r"\[pretended: PEAKTRACE_PRETEND_MISSING\]: %d allocator uprobes" % want_links,
                               txt, re.M) is not None, short(txt, 600))

    name = "cli/kernel nothing missing"
    if res.wanted(name) and wl_basic:
        odir = out(name)
        rc, _, err = run([pt, "-q", "-o", odir, "--", wl_basic], env=clean_env())
        res.eq("%s: exit status" % name, rc, 0)
        rep = load_report(res, name, odir)
        if rep:
            k = rep.get("kernel") or {}
            res.eq("%s: kernel.release" % name, k.get("release"), os.uname().release)
            res.eq("%s: kernel.version" % name, k.get("version"), "%d.%d" % kernel_version())
            res.eq("%s: kernel.missing" % name, k.get("missing"), [])
            res.eq("%s: attach" % name, rep.get("attach"),
                   "uprobe_multi" if kernel_version() >= (6, 6) else "perf_event")

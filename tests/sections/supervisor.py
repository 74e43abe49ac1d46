# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""supervisor: peaktrace put into a supervisor's runtime command (a section of tests/run.py).

AWS's Runtime Interface Emulator (RIE) starts the runtime's command itself, in a new process
group, and stops or resets it with kill(-pgid, SIGKILL); users put `peaktrace -o DIR -- bootstrap`
into that command to trace the cold start. tests/workloads/supervise.py does what RIE does with
its command (a new process group; SIGUSR1: SIGKILL to that group; it logs how its child ended).
It runs as the bundled host's runtime (tools/lambda-host: Runtime API, REPORT lines), and starts
`peaktrace -q [-d S] -o DIR -- python3 tools/functions/python/bootstrap.py` serving
tests/workloads/ct_handler.py, whose handler returns its own RSS (statm) while it holds N MiB.
Truth: the host's REPORT lines (request ids, in order), the handler's readings, /proc (process
groups, the runtime's libc text against the file), the supervisor's log.

  supervisor/usage  --supervised=maybe, and --supervised with -p: exit 2, one line;
  supervisor/group SIGKILL  invocations, then the supervisor SIGKILLs the process group it made:
                peaktrace had left it (the runtime alone is in it), writes report.json and
                report.txt with every invocation (the last one too) under the host's request ids,
                each peak within TOLERANCE of the handler's statm, the target "killed by signal 9";
                then ends by SIGKILL itself, so the supervisor sees what it would see of the
                runtime;
  supervisor/group SIGKILL mid-invocation  the same kill while tools/functions/oom holds 32 MiB in
                grab() (sleep_ms): the report's last invocation is "killed", its largest block at
                the peak the 32 MiB from grab(), its peak RSS within TOLERANCE of the runtime's
                VmRSS just before the kill;
  supervisor/-d  -d under the supervisor: the report is written with the invocations made while
                tracing; later invokes are answered by the same runtime (no Runtime.ExitError, the
                host sees no runtime exit), peaktrace is still its parent, the runtime's libc text
                is byte-identical to the file and it is no longer ptraced; a SIGTERM to peaktrace
                is passed to the runtime, and peaktrace ends by that signal as the runtime did;
  supervisor/SIGTERM  the same with a SIGTERM to peaktrace instead of -d (the second SIGTERM is
                the one passed to the runtime);
  supervisor/SIGTERM twice  two SIGTERMs 50 ms apart: no "second signal" exit; the runtime gets
                the second and ends by it, so does peaktrace, with the report written;
  supervisor/peaktrace SIGKILL  kill -9 of peaktrace alone under the supervisor cannot be
                survived (the supervisor sees its child killed), but the runtime is unharmed: it
                answers the next invoke, its libc text byte-identical to the file;
  supervisor/terminal  interactive use, as a job-control shell runs a command in a terminal
                (a pty: new session, a job's own process group made the foreground group):
                peaktrace stays in its group, and Ctrl-C (^C on the pty) reaches peaktrace and
                the command together: the report is written, exit 0;
  supervisor/container group SIGKILL  the group SIGKILL case inside the Debian trixie
                container (tests/containerfix.py): supervise.py is the container's first
                process and runs peaktrace-static, which launches /var/task/bootstrap (sh execs
                python3.13); the report is written inside the rootfs with every invocation.
"""

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import containerfix
from containerfix import check_invocations
from harness import ROOT, TIMEOUT, Proc, children_of, free_ports, pid_alive, run, wait_gone
from supervisedfix import SUPERVISE, Supervised, flushed, parent_of, pgid, runtime_kept, tracer_pid, wait_ids, wait_log
from tracing import breakpoints_left
from tracing import load_report as load

MiB = 1 << 20
TOLERANCE = containerfix.TOLERANCE
SIZES = [24, 64, 8]
# The container's command: mounts what tracing needs, then is RIE, its first process, leading
# its own session as runc makes it (unshare --fork leaves it in unshare's group, whose id the
# container's PID namespace cannot name).
SUPERVISED = """#!/bin/sh
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
exec setsid python3 /var/task/supervise.py /tmp/supervise.log -- \\
    /usr/local/bin/peaktrace -q -o /tmp/pt-sup -- /var/task/bootstrap
"""


def group_sigkill(ctx, port):
    res, name = ctx.res, "supervisor/group SIGKILL"
    s = Supervised(ctx, name, "sup-kill", port, [])
    if not s.start():
        return
    try:
        s.check_groups()
        readings = []
        for k, mb in enumerate(SIZES):
            flushed(s.outdir, k)     # not after the last one: the kill comes right after it
            rc, rss, _ = s.invoke(mb)
            res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
            readings.append((mb, rss))
        time.sleep(0.3)
        ids = s.ids(len(SIZES))
        t0 = time.monotonic()
        try:
            os.kill(s.sup, signal.SIGUSR1)
        except (OSError, TypeError):
            pass
        m = wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        took = time.monotonic() - t0
        res.eq(name + ": the supervisor sees its child end by SIGKILL, as the runtime did",
               m.group(1) if m else None, "signal 9")
        print("INFO %s: peaktrace ended %.2f s after the group's SIGKILL (report written first)"
              % (name, took), flush=True)
        res.true(name + ": the runtime is gone", wait_gone(s.rt, 10), "runtime %d still there" % s.rt)
        res.true(name + ": report.txt written", os.path.exists(os.path.join(s.outdir, "report.txt")),
                 "no report.txt")
        rep = load(res, name, s.outdir)
        if rep:
            t = rep.get("target", {})
            res.eq(name + ": target killed by signal 9 (report.json)", (t.get("exited"), t.get("exit_signal")),
                   (True, 9))
            check_invocations(res, name, rep, ids, readings)
        try:
            with open(os.path.join(s.outdir, "invocations.jsonl")) as f:
                lines = [json.loads(l) for l in f if l.strip()]
            res.eq(name + ": invocations.jsonl has every invocation",
                   [l.get("request_id") for l in lines if l.get("seq", 0) >= 1], ids)
        except (OSError, ValueError) as e:
            res.fail(name + ": invocations.jsonl", str(e))
    finally:
        s.stop()


def killed_mid_invocation(ctx, port):
    """The group's SIGKILL while tools/functions/oom holds 32 MiB in grab() (sleep_ms)."""
    res, name = ctx.res, "supervisor/group SIGKILL mid-invocation"
    s = Supervised(ctx, name, "sup-kill-mid", port, [], [os.path.join(ctx.build, "tools", "functions", "oom")])
    if not s.start():
        return
    try:
        rc, _, _ = s.invoke(8)
        res.eq(name + ": invoke 8 MiB answered", rc, 0)
        flushed(s.outdir, 1)
        inv = subprocess.Popen([os.path.join(ctx.build_arg, "tools", "invoke"), "--port", str(s.port + 1), "-t", "60",
                                json.dumps({"mb": 32, "sleep_ms": 20000})], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
        # Held: 32 MiB resident in the runtime (VmRSS), then the kill.
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and rss_of(s.rt) < 32 * MiB:
            time.sleep(0.05)
        held = rss_of(s.rt)
        res.true(name + ": the runtime holds the 32 MiB", held >= 32 * MiB, "VmRSS %d" % held)
        try:
            os.kill(s.sup, signal.SIGUSR1)
        except (OSError, TypeError):
            pass
        m = wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": the supervisor sees its child end by SIGKILL", m.group(1) if m else None, "signal 9")
        inv.kill()     # its answer would come at the host's timeout: the runtime is gone
        inv.wait()
        rep = load(res, name, s.outdir)
        if rep:
            invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
            last = invs[-1] if invs else {}
            res.eq(name + ": two invocations, the second killed", [i.get("outcome") for i in invs],
                   ["response", "killed"])
            top = (last.get("top_stacks_at_peak") or [{}])[0]
            res.eq(name + ": ... its largest block at the peak is the 32 MiB", top.get("bytes"), 32 * MiB)
            res.eq(name + ": ... allocated in grab()", (top.get("frames") or [{}])[0].get("func"), "grab")
            try:
                with open(os.path.join(s.outdir, "report.txt")) as f:
                    txt = f.read()
            except OSError:
                txt = ""
            block = txt[txt.find("KILLED during invocation 2 (RequestId %s)" % last.get("request_id")):]
            res.true(name + ": the text's KILLED block names it, grab() holding the memory",
                     block.startswith("KILLED")
                     and re.search(r"^ +grab\+0x[0-9a-f]+  \(oom\)", block[:3000], re.M) is not None,
                     block[:300] or txt[:300])
            res.true(name + ": ... its peak RSS holds it (VmRSS before the kill %d)" % held,
                     held - TOLERANCE <= last.get("rss_peak_bytes", 0) <= held + TOLERANCE,
                     "peak %s" % last.get("rss_peak_bytes"))
    finally:
        s.stop()


def sigterm_twice(ctx, port):
    """A second SIGTERM right after the first: in a terminal peaktrace would exit at once
    without a report; under a supervisor it goes to the runtime and the report is written."""
    res, name = ctx.res, "supervisor/SIGTERM twice"
    s = Supervised(ctx, name, "sup-term2", port, [])
    if not s.start():
        return
    try:
        rc, rss, _ = s.invoke(24)
        res.eq(name + ": invoke 24 MiB answered", rc, 0)
        flushed(s.outdir, 1)
        ids = s.ids(1)
        os.kill(s.pt, signal.SIGTERM)
        time.sleep(0.05)
        os.kill(s.pt, signal.SIGTERM)
        m = wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": the runtime got the second SIGTERM; peaktrace ends as it did",
               m.group(1) if m else None, "signal 15")
        res.true(name + ": no 'second signal' exit", "second signal" not in s.h.err, s.h.err[-300:])
        rep = load(res, name, s.outdir)
        if rep:
            check_invocations(res, name, rep, ids, [(24, rss)])
    finally:
        s.stop()


def rss_of(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1)) * 1024
    except (OSError, AttributeError):
        return 0


def tracing_stops(ctx, port, how):
    """Tracing stops at the end of -d, or at a SIGTERM to peaktrace; the runtime lives on."""
    res, name = ctx.res, "supervisor/" + how
    s = Supervised(ctx, name, "sup" + how, port, ["-d", "10"] if how == "-d" else [])
    if not s.start():
        return
    try:
        s.check_groups()
        readings, pids = [], set()
        for k, mb in enumerate((24, 8)):
            flushed(s.outdir, k)
            rc, rss, pid = s.invoke(mb)
            res.eq("%s: invoke %d MiB while tracing answered" % (name, mb), rc, 0)
            readings.append((mb, rss))
            pids.add(pid)
        if how == "SIGTERM":
            flushed(s.outdir, 2)
            os.kill(s.pt, signal.SIGTERM)
        if not s.h.wait_for("err", r"^peaktrace: reports written to"):
            res.fail(name, "no report at the end of -d: " + s.h.err[-300:])
            return
        ids = s.ids(2)
        rep = load(res, name, s.outdir)
        if rep:
            check_invocations(res, name, rep, ids, readings)
            res.eq(name + ": target still running (report.json)", rep.get("target", {}).get("exited"), False)
        time.sleep(0.5)   # the detach is done before the report; the rest of the stop after it
        runtime_kept(res, name, s, pids, "-d")
        res.true(name + ": peaktrace still the runtime's parent", pid_alive(s.pt) and s.rt in children_of(s.pt),
                 "peaktrace alive %s, its children %s" % (pid_alive(s.pt), children_of(s.pt)))
        res.eq(name + ": the runtime is no longer ptraced", tracer_pid(s.rt), 0)
        bad = breakpoints_left(s.rt)
        res.true(name + ": the runtime's libc text is byte-identical to the file (no probe left)", bad == 0,
                 "%s bytes differ" % bad)
        try:
            os.kill(s.pt, signal.SIGTERM)
        except OSError:
            pass
        m = wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": %s SIGTERM to peaktrace goes to the runtime; peaktrace ends as it did"
               % ("a" if how == "-d" else "a second"),
               m.group(1) if m else None, "signal 15")
        res.true(name + ": the runtime is gone", wait_gone(s.rt, 10), "runtime %d still there" % s.rt)
    finally:
        s.stop()


def peaktrace_sigkill(ctx, port):
    res, name = ctx.res, "supervisor/peaktrace SIGKILL"
    s = Supervised(ctx, name, "sup-pt-kill", port, [])
    if not s.start():
        return
    try:
        rc, _, before = s.invoke(16)
        res.eq(name + ": invoke while tracing answered", rc, 0)
        try:
            os.kill(s.pt, signal.SIGKILL)
        except OSError:
            pass
        m = wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": cannot be survived: the supervisor sees its child killed", m.group(1) if m else None,
               "signal 9")
        rc, rss, after = s.invoke(16)
        res.true(name + ": the runtime is unharmed: it answers the next invoke",
                 rc == 0 and rss is not None and after == before == s.rt,
                 "rc %r, pid %r (runtime %d)" % (rc, after, s.rt))
        time.sleep(0.5)   # the kernel detaches the probes as peaktrace's fds close
        bad = breakpoints_left(s.rt)
        res.true(name + ": its libc text is byte-identical to the file", bad == 0, "%s bytes differ" % bad)
        res.eq(name + ": it is no longer ptraced", tracer_pid(s.rt), 0)
    finally:
        s.stop()


# A job-control shell in a terminal, reduced to what matters here: it leads a session whose
# controlling terminal is the pty (fd argv[1]), runs the command (argv[2:]) as a job in a process
# group of its own made the terminal's foreground group, and exits with the job's status.
JOB_SHELL = r"""
import fcntl, os, signal, sys, termios
tty = int(sys.argv[1])
fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
job = os.fork()
if job == 0:
    os.setpgid(0, 0)
    os.tcsetpgrp(tty, os.getpgrp())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    for fd in (0, 1, 2):
        os.dup2(tty, fd)
    os.execv(sys.argv[2], sys.argv[2:])
os.setpgid(job, job)
_, st = os.waitpid(job, 0)
sys.exit(os.waitstatus_to_exitcode(st) & 0xff)
"""


def terminal(ctx):
    """A job-control shell's way: the job's own group, made the terminal's foreground group."""
    res, name = ctx.res, "supervisor/terminal"
    wl = ctx.built.get("wl_sleep", {}).get("fp")
    if not wl or not os.access(wl, os.X_OK):
        res.skip(name, "wl_sleep not built")
        return
    outdir = os.path.join(ctx.tmp, "sup-terminal")
    master, slave = pty.openpty()
    # The "shell" is a program of its own (a new session), so the test process never forks.
    sh = subprocess.Popen([sys.executable, "-c", JOB_SHELL, str(slave), ctx.pt, "-q", "-o", outdir, "--", wl],
                          pass_fds=(slave,), start_new_session=True, stdin=subprocess.DEVNULL)
    pid = sh.pid
    os.close(slave)
    buf = bytearray()

    def read_until(regex, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(regex, buf.decode("utf-8", "replace"), re.M)
            if m:
                return m
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    buf.extend(os.read(master, 4096))
                except OSError:
                    return None
        return None
    try:
        t = read_until(r"peaktrace: tracing PID (\d+)", TIMEOUT)
        if not t or not read_until(re.escape("wl: sleeping"), TIMEOUT):
            res.fail(name, "peaktrace did not start in the pty: %r" % bytes(buf[-300:]))
            return
        target = int(t.group(1))
        ptpid = parent_of(target)
        res.eq(name + ": peaktrace stays in its (foreground) process group", pgid(ptpid), ptpid)
        res.true(name + ": not under a supervisor", b"under a supervisor" not in buf, bytes(buf[-300:]))
        res.eq(name + ": the command is in the same group", pgid(target), ptpid)
        time.sleep(0.3)
        os.write(master, b"\x03")     # Ctrl-C: SIGINT to the foreground group
        read_until(r"peaktrace: reports written", TIMEOUT)
        try:
            rc = sh.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = None
        res.eq(name + ": Ctrl-C: peaktrace exit status", rc, 0)
        res.true(name + ": report.json written", load(res, name, outdir) is not None, outdir)
        # wl_sleep waits for SIGINT or SIGTERM and then exits 0: gone means it got the Ctrl-C.
        res.true(name + ": the command got the Ctrl-C too (it exits on SIGINT)", wait_gone(target, 10),
                 "the command %d still runs" % target)
    finally:
        os.close(master)
        for k in [pid] + containerfix.descendants(pid):     # the job has a group of its own
            try:
                os.killpg(pgid(k) or k, signal.SIGKILL)
            except OSError:
                pass
        try:
            sh.wait(5)
        except subprocess.TimeoutExpired:
            pass


def in_container(ctx, port):
    res, name = ctx.res, "supervisor/container group SIGKILL"
    rootfs = os.path.join(ctx.build, "rootfs", "trixie")
    if not os.access(os.path.join(ctx.build, "peaktrace-static"), os.X_OK):
        res.skip(name, "no %s/peaktrace-static (make static)" % ctx.build)
        return
    rc, out, err = run([os.path.join(ROOT, "tools", "rootfs.sh"), rootfs], timeout=900)
    if rc != 0:
        res.skip(name, (err.strip().splitlines() or ["rc %r" % rc])[-1])
        return
    containerfix.prepare(ctx, rootfs)
    task = rootfs + containerfix.TASK
    subprocess.run(["cp", SUPERVISE, task], check=False)
    containerfix.write(os.path.join(task, "supervised"), SUPERVISED, 0o755)
    log = os.path.join(rootfs, "tmp/supervise.log")
    outdir = os.path.join(rootfs, "tmp/pt-sup")
    if os.path.exists(log):
        os.unlink(log)
    subprocess.run(["rm", "-rf", outdir], check=False)
    h = Proc(containerfix.host_argv(ctx, rootfs, port, containerfix.TASK + "/supervised"))
    try:
        if not wait_log(log, r"^child \d+ \d+$") or not h.wait_for("err", r"^peaktrace: tracing PID"):
            res.fail(name, "peaktrace-static did not start under the container's supervisor: " + h.err[-400:])
            return
        sup = next((k for k in containerfix.descendants(h.pid) if b"supervise.py" in cmdline(k)), None)
        readings = containerfix.invoke_sizes(res, ctx, name, port, lambda k: flushed(outdir, k))
        time.sleep(0.3)
        ids = wait_ids(h, len(containerfix.SIZES))
        try:
            os.kill(sup, signal.SIGUSR1)
        except (OSError, TypeError):
            pass
        m = wait_log(log, r"^exited \d+ (\w+ \d+)$")
        res.eq(name + ": the supervisor sees its child end by SIGKILL", m.group(1) if m else None, "signal 9")
        rep = load(res, name, outdir)
        if rep is None:
            print("INFO %s: the host's stderr: %s" % (name, h.err[-600:]), flush=True)
        if rep:
            res.eq(name + ": target killed by signal 9", rep.get("target", {}).get("exit_signal"), 9)
            check_invocations(res, name, rep, ids, readings)
    finally:
        h.signal(signal.SIGTERM)
        if h.wait(TIMEOUT) is None:
            h.kill()


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def usage(ctx):
    res, name = ctx.res, "supervisor/usage"
    for args, why in ((["--supervised=maybe", "--", "true"], "invalid --supervised: maybe"),
                      (["--supervised=yes", "-p", "1"], "--supervised is about a launched command")):
        rc, out, err = run([ctx.pt] + args)
        res.true("%s: %s: exit 2, one line" % (name, " ".join(args)),
                 rc == 2 and err.startswith("peaktrace: " + why) and err.count("\n") == 1, "rc %r: %r" % (rc, err))


CASES = ("supervisor/usage", "supervisor/group SIGKILL", "supervisor/-d", "supervisor/SIGTERM",
         "supervisor/peaktrace SIGKILL", "supervisor/terminal", "supervisor/container group SIGKILL",
         "supervisor/group SIGKILL mid-invocation", "supervisor/SIGTERM twice")


def run_section(ctx):
    res = ctx.res
    if not any(res.wanted(n) for n in CASES):
        return
    for p in ("lambda-host", "invoke"):
        if not os.access(os.path.join(ctx.build_arg, "tools", p), os.X_OK):
            for n in CASES:
                res.skip(n, "tools/%s not built (make lambda-host)" % p)
            return
    base = free_ports(14)
    if res.wanted("supervisor/usage"):
        usage(ctx)
    if res.wanted("supervisor/group SIGKILL"):
        group_sigkill(ctx, base)
    if res.wanted("supervisor/-d"):
        tracing_stops(ctx, base + 2, "-d")
    if res.wanted("supervisor/SIGTERM"):
        tracing_stops(ctx, base + 10, "SIGTERM")
    if res.wanted("supervisor/SIGTERM twice"):
        sigterm_twice(ctx, base + 12)
    if res.wanted("supervisor/peaktrace SIGKILL"):
        peaktrace_sigkill(ctx, base + 4)
    if res.wanted("supervisor/terminal"):
        terminal(ctx)
    if res.wanted("supervisor/group SIGKILL mid-invocation"):
        killed_mid_invocation(ctx, base + 8)
    if res.wanted("supervisor/container group SIGKILL"):
        in_container(ctx, base + 6)

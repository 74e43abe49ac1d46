# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The Lambda fixture: the project's Lambda-like host (BUILD/tools/lambda-host, `make lambda-host`)
serving a runtime, peaktrace over it, the host's invoke tool, and the host's own Runtime API log
(its REPORT lines) as the truth of which invocations ran. Used by every section that runs a
function under the host (lambda, leaks, light, rss, onnx, pyobjects, browser, arenas, container,
follow).

The guard: need_host() gives the paths of lambda-host and the other tools a test needs, or skips
the test's cases with NOT_BUILT when one is not built (a skip, not a failure: the host is an
optional build target)."""

import json
import os
import re
import signal
import time

import tracing
from harness import TIMEOUT, Proc, expand_report, free_ports, run

MiB = 1 << 20
# The lambda section's tolerance for an invocation's peak RSS against its VmHWM (aws_lambda.py
# says why 1 MiB).
TOLERANCE = 1 * MiB
NOT_BUILT = "lambda-host not built (make lambda-host)"


def tool(build, name):
    """BUILD/tools/NAME (an absolute name is itself)."""
    return os.path.join(build, "tools", name)


def host_built(build, *tools):
    """lambda-host and each of tools (names under BUILD/tools, e.g. "invoke", "functions/oom", or
    absolute paths) are executables."""
    return all(os.access(tool(build, t), os.X_OK) for t in ("lambda-host",) + tools)


def need_host(res, skip, build, *tools, why=NOT_BUILT):
    """The guard: [lambda-host, *tools] as paths (tool()) when host_built(), else None once each
    case of skip (a name or a sequence of names) is skipped with why."""
    if host_built(build, *tools):
        return [tool(build, t) for t in ("lambda-host",) + tools]
    for name in ([skip] if isinstance(skip, str) else skip):
        res.skip(name, why)
    return None


def status_bytes(pid, key):
    """A "KEY: N kB" line of /proc/PID/status, in bytes (0 if absent)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def vmhwm(pid):
    return status_bytes(pid, "VmHWM")


def clear_hwm(pid):
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


def report_ids(text):
    return re.findall(r"^REPORT RequestId: (\S+)\t", text, re.M)


def invocations(rep):
    """Invocations, including one already running when tracing began (phase "invocation",
    seq 0, started_before_trace)."""
    return [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]


def wait_pidfile(h, pidfile, timeout):
    """The runtime pid the host writes at each (re)start, or None if it never came."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and h.running():
        try:
            with open(pidfile) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.1)
    return None


def stop_host(h, timeout):
    """SIGTERM the host; returns the request ids of its REPORT lines."""
    ids = report_ids(h.out + h.err)
    h.signal(signal.SIGTERM)
    h.wait(timeout)
    return ids


def host_runtime(res, name, build, tmp, tag, memory_mb, port, runtime_argv, host_args=(), env=None):
    """The bundled host (Runtime API on port, invoke on port + 1; environment env, default ours)
    serving runtime_argv: (host, runtime pid), or None once the failure is said under name."""
    pidfile = os.path.join(tmp, tag + ".pid")
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    h = Proc([tool(build, "lambda-host"), "-m", str(memory_mb), "--runtime-port", str(port),
              "--invoke-port", str(port + 1), "--pid-file", pidfile] + list(host_args) + ["--"] +
             list(runtime_argv), env=env)
    rt = wait_pidfile(h, pidfile, TIMEOUT)
    if rt is None:
        res.fail(name, "host did not start the runtime: " + h.err[-300:])
        h.kill()
        return None
    return h, rt


def attach_traced(res, name, pt, rt, pt_args, h=None):
    """peaktrace -q -p rt PT_ARGS, once it says it is tracing; None (the failure said, peaktrace
    and the host h killed) if it never does."""
    p = Proc([pt, "-q", "-p", rt] + list(pt_args))
    if not p.wait_for("err", r"^peaktrace: tracing PID"):
        res.fail(name, "peaktrace did not start: " + p.err[-300:])
        p.kill()
        if h:
            h.kill()
        return None
    return p


def host_attached(res, name, build, tmp, pt, tag, memory_mb, port, runtime_argv, host_args=(), pt_args=(), env=None):
    """host_runtime, a second for the runtime to reach its first GET .../next, then peaktrace
    attached to it (attach_traced) with -o TMP/lambda-TAG and pt_args: (host, runtime pid,
    peaktrace, its output directory), or None once the failure is said under name."""
    got = host_runtime(res, name, build, tmp, tag, memory_mb, port, runtime_argv, host_args, env)
    if not got:
        return None
    h, rt = got
    time.sleep(1.0)
    outdir = os.path.join(tmp, "lambda-" + tag)
    p = attach_traced(res, name, pt, rt, ["-o", outdir] + list(pt_args), h)
    return (h, rt, p, outdir) if p else None


def invoke_events(res, name, invoke, port, events, timeout=TIMEOUT, pause=0.0, bad=None):
    """Each event to the host's invoke port (port + 1) in turn, "invoke EVENT answered" checked,
    pause seconds after each: the answers as parsed JSON, bad for one that is not."""
    answers = []
    for ev in events:
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps(ev)], timeout=timeout)
        res.eq("%s: invoke %s answered" % (name, json.dumps(ev)), rc, 0)
        try:
            answers.append(json.loads(out))
        except ValueError:
            answers.append(bad)
        if pause:
            time.sleep(pause)
    return answers


def stop_attached(res, name, p, h, outdir, count):
    """SIGINT to the attached peaktrace p (its exit status checked), the host h stopped, then
    report.json's invocations: (report, invocations), or None once the report is unreadable or
    the invocations are not count."""
    p.signal(signal.SIGINT)
    res.eq("%s: peaktrace exit status" % name, p.wait(TIMEOUT), 0)
    stop_host(h, TIMEOUT)
    rep = tracing.load_report(res, name, outdir)
    if rep is None:
        return None
    invs = invocations(rep)
    if not res.eq("%s: invocations" % name, len(invs), count):
        return None
    return rep, invs


def traced_run(ctx, name, tag, runtime_argv, host_args, events, pt_args=(), env=None):
    """Host (256 MB) + runtime (environment env, default ours), peaktrace attached with -o and
    pt_args (host_attached); events invoked in order (invoke_events), then peaktrace stopped
    (SIGINT, its exit status checked) and the host. Returns (report.json, the responses, outdir)
    or None after a failed check."""
    res, build, timeout = ctx.res, ctx.build_arg, TIMEOUT
    port = free_ports(2)
    got = host_attached(res, name, build, ctx.tmp, ctx.pt, tag, 256, port, runtime_argv, host_args, pt_args, env)
    if not got:
        return None
    h, _, p, outdir = got
    answers = invoke_events(res, name, tool(build, "invoke"), port, events, timeout)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(timeout), 0)
    h.signal(signal.SIGTERM)
    h.wait(timeout)
    rep = load_report(res, name, outdir)
    return (rep, answers, outdir) if rep is not None else None


def stop_launched(h, ptpid, timeout):
    """SIGINT to peaktrace, the host's runtime command, then wait for its report. The host starts
    its runtime as RIE does (a process group of its own), so peaktrace counts itself supervised
    (docs/lambda.md "Under a supervisor"): the runtime it launched keeps running, peaktrace stays its
    parent, and both go when the host stops."""
    os.kill(ptpid, signal.SIGINT)
    if not h.wait_for("err", r"^peaktrace: reports written", timeout):
        h.wait_for("out", r"^peaktrace: reports written", 1)


def stop_pidfile(h, pidfile, timeout):
    """stop_launched for the peaktrace whose PID the host wrote to pidfile; its PID, or None
    when the file has none (nothing stopped)."""
    ptpid = None
    try:
        with open(pidfile) as f:
            ptpid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    if ptpid:
        stop_launched(h, ptpid, timeout)
    return ptpid


def load_report(res, name, outdir):
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            return expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail(name, "no report.json: %s" % e)
        return None

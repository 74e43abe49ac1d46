# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A function container under the bundled host, shared by the container, supervisor and follow
sections: a Debian trixie root filesystem (BUILD/rootfs/trixie) given peaktrace-static and the
Python function (prepare), the host's runtime command that enters it (host_argv: unshare + chroot),
the invocations of SIZES MiB and the handler's own RSS readings (invoke_sizes, drive), and the
check of a report's invocations against the host's request ids and those readings
(check_invocations, within TOLERANCE). What the container section checks: tests/sections/container.py."""

import json
import os
import shutil
import signal
import time

from harness import ROOT, TIMEOUT, Proc, children_of, run
from lambdafix import report_ids

MiB = 1 << 20
# kmem:rss_stat is per-CPU batched (32 pages x 2 counters x 2 CPUs = 512 KiB here); the handler's
# json reply and the runtime's loop after the reading add a little: 1.5 MiB either way.
TOLERANCE = 3 * MiB // 2
SIZES = [24, 64, 8]
TASK = "/var/task"
BOOTSTRAP = """#!/bin/sh
# A Lambda custom runtime's bootstrap: the shell execs the interpreter.
export LAMBDA_TASK_ROOT=/var/task
exec python3 /var/task/bootstrap.py
"""


# What a user runs inside a function container (docs/lambda.md "Inside a function container").
TRACED = """#!/bin/sh
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
exec /usr/local/bin/peaktrace -o /tmp/pt-out -- /var/task/bootstrap
"""


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        for k in children_of(todo.pop()):
            out.append(k)
            todo.append(k)
    return out


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def find_desc(pid, prefix, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for k in descendants(pid):
            if comm(k).startswith(prefix):
                return k
        time.sleep(0.05)
    return None


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def prepare(ctx, rootfs):
    """Copies peaktrace-static and the function into the rootfs (idempotent)."""
    os.makedirs(os.path.join(rootfs, "usr/local/bin"), exist_ok=True)
    shutil.copy2(os.path.join(ctx.build, "peaktrace-static"), os.path.join(rootfs, "usr/local/bin/peaktrace"))
    task = rootfs + TASK
    os.makedirs(task, exist_ok=True)
    shutil.copy2(os.path.join(ROOT, "tools/functions/python/bootstrap.py"), task)
    shutil.copy2(os.path.join(ROOT, "tests/workloads/ct_handler.py"), task)
    write(os.path.join(task, "bootstrap"), BOOTSTRAP, 0o755)
    write(os.path.join(task, "traced"), TRACED, 0o755)
    shutil.rmtree(os.path.join(rootfs, "tmp/pt-out"), ignore_errors=True)


def container_argv(rootfs, cmd):
    return ["unshare", "--mount", "--pid", "--fork", "--mount-proc=%s/proc" % rootfs, "chroot", rootfs, cmd]


def check_invocations(res, name, rep, ids, readings):
    """Every invocation under the host's request id, in order, each peak vs the handler's statm."""
    invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
    res.eq(name + ": invocations' seq", [i.get("seq") for i in invs], list(range(1, len(ids) + 1)))
    res.eq(name + ": request ids = the host's REPORT lines (the last one too)",
           [i.get("request_id") for i in invs], ids)
    for k, (mb, rss) in enumerate(readings):
        peak = invs[k].get("rss_peak_bytes") if k < len(invs) else None
        if peak is not None and rss is not None:
            print("INFO %s: invocation %d (%d MiB): peaktrace peak RSS %d, handler's statm %d, diff %+d bytes"
                  % (name, k + 1, mb, peak, rss, peak - rss), flush=True)
        res.true("%s: invocation %d (%d MiB) peak RSS vs the handler's statm" % (name, k + 1, mb),
                 peak is not None and rss is not None and abs(peak - rss) <= TOLERANCE,
                 "peaktrace %s, handler %s" % (peak, rss))


def invoke_sizes(res, ctx, name, rtport, before=None):
    """Each of SIZES invoked in turn on the host at rtport (before(k) first, if given): the
    [(mb, handler's own rss_bytes or None)] readings, "invoke N MiB answered" checked."""
    readings = []
    invoke = os.path.join(ctx.build_arg, "tools", "invoke")
    for k, mb in enumerate(SIZES):
        if before:
            before(k)
        rc, out, err = run([invoke, "--port", str(rtport + 1), "-t", "60", json.dumps({"mb": mb})], timeout=90)
        try:
            readings.append((mb, int(json.loads(out)["rss_bytes"])))
        except (ValueError, KeyError, TypeError):
            readings.append((mb, None))
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    return readings


def drive(res, name, ctx, host_argv, rtport, after_start):
    """Host + container; after_start(host) -> (stop, outdir) or None; invokes SIZES; returns
    (host's REPORT ids, [(mb, handler rss)], stop's result)."""
    h = Proc(host_argv)
    started = after_start(h)
    if started is None:
        h.kill()
        return None
    stop = started
    readings = invoke_sizes(res, ctx, name, rtport)
    time.sleep(0.3)
    result = stop()
    ids = report_ids(h.out)
    h.signal(signal.SIGTERM)
    h.wait(TIMEOUT)
    return ids, readings, result


def host_argv(ctx, rootfs, port, cmd):
    return [os.path.join(ctx.build_arg, "tools", "lambda-host"), "-m", "512", "-t", "60",
            "--runtime-port", str(port), "--invoke-port", str(port + 1),
            "--handler", "ct_handler.handler", "--task-root", rootfs + TASK, "--"] + container_argv(rootfs, cmd)

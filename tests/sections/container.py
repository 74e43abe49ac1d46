# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""container: peaktrace and a function container of another userland (a section of tests/run.py).

The container is a Debian trixie root filesystem (glibc 2.41, Debian's own python3.13), made by
`make rootfs` (tools/rootfs.sh, debootstrap, cached under BUILD/rootfs/trixie; the section tries
to build it and says skipped with the reason when it cannot). The bundled host
(tools/lambda-host) runs on the host and starts the container as the function's runtime:

    unshare --mount --pid --fork --mount-proc=ROOTFS/proc chroot ROOTFS CMD

its own mount and PID namespaces, /proc mounted for its PID namespace, loopback shared with the
host's Runtime API. CMD is /var/task/bootstrap, a shell script that execs python3 with the bundled
runtime loop (tools/functions/python/bootstrap.py) and tests/workloads/ct_handler.py, whose
handler holds N MiB with every page written and returns its own RSS read from /proc/self/statm
while it holds it. Truth: the host's REPORT lines (request ids, in order) and the handler's reading.

  static        BUILD/peaktrace-static has no interpreter and no NEEDED (readelf), runs
                (--version) in an empty root holding nothing but itself, and in the rootfs;
  static/launch peaktrace-static copied into the rootfs, started inside the container (it mounts
                sysfs and tracefs, then execs `peaktrace -o /tmp/pt-out -- /var/task/bootstrap`:
                sh execs python3): its report written inside the rootfs, the invocations' seq
                and request ids those of the host's log, each peak RSS within TOLERANCE of the
                handler's reading, Python frames (ct_handler:grow) in the report;
  attach        host BUILD/peaktrace -p the runtime's HOST pid: the same checks;
  host default ports  lambda-host started without port options binds two loopback ports, neither
                RIE's 8080 nor 9001 (read from /proc/net/tcp by the inodes of the host's sockets),
                so it can run beside RIE.
The Python 3.13 frame checks need CPython offsets read from _Py_DebugOffsets and, in launch mode,
re-detection after exec.
"""

import json
import os
import re
import shutil
import signal
import time

from containerfix import TASK, check_invocations, drive, find_desc, host_argv, prepare, write
from harness import ROOT, TIMEOUT, Proc, expand_report, free_ports, run, short, wait_gone
from lambdafix import need_host, tool


def check_static_binary(res, ctx, tmp):
    name = "container/static"
    st = os.path.join(ctx.build, "peaktrace-static")
    if not os.access(st, os.X_OK):
        res.fail(name, "%s missing (make static)" % st)
        return False
    rc, dyn, _ = run(["readelf", "-d", st])
    res.true(name + ": no dynamic section (no NEEDED)", rc == 0 and "NEEDED" not in dyn
             and "no dynamic section" in dyn, dyn[:300])
    rc, prog, _ = run(["readelf", "-l", st])
    res.true(name + ": no program interpreter", rc == 0 and "INTERP" not in prog, prog[:300])
    empty = os.path.join(tmp, "empty-root")
    os.makedirs(empty, exist_ok=True)
    shutil.copy2(st, os.path.join(empty, "peaktrace"))
    rc, out, err = run(["chroot", empty, "/peaktrace", "--version"])
    res.true(name + ": --version in an empty root", rc == 0 and out.startswith("peaktrace "),
             "rc %r: %s %s" % (rc, out[:200], err[:200]))
    return True


def check_run(res, name, rep, ids, readings):
    """Invocations against the host's log, peaks against the handler's readings, Python frames."""
    check_invocations(res, name, rep, ids, readings)
    invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
    frames = [f.get("func", "") for s in rep.get("stacks", []) for f in s.get("frames", [])]
    frames += [f.get("func", "") for i in invs for s in i.get("top_stacks_at_peak", [])
               for f in s.get("frames", [])]
    res.true(name + ": Python 3.13 frames (ct_handler:grow)", any(f.startswith("ct_handler:grow:") for f in frames),
             "no ct_handler:grow frame; python errors %s; frames seen: %s" % (
                 {k: v for k, v in rep.get("errors", {}).items() if k.startswith("python") and v},
                 sorted(set(frames))[:8]))


def static_launch(res, ctx, rootfs, port):
    name = "container/static/launch"
    rc, out, err = run(["chroot", rootfs, "/usr/local/bin/peaktrace", "--version"])
    res.true(name + ": --version inside the rootfs", rc == 0 and out.startswith("peaktrace "),
             "rc %r: %s" % (rc, (out + err)[:200]))

    def after_start(h):
        pt = find_desc(h.pid, "peaktrace", TIMEOUT)
        py = find_desc(h.pid, "python3", TIMEOUT)
        if not pt or not py:
            res.fail(name, "the container did not start peaktrace and python3: " + (h.out + h.err)[-400:])
            return None
        res.ok(name + ": sh exec'd python3 under peaktrace")

        def stop():
            os.kill(pt, signal.SIGINT)
            return wait_gone(pt, TIMEOUT)
        return stop

    got = drive(res, name, ctx, host_argv(ctx, rootfs, port, TASK + "/traced"), port, after_start)
    if got is None:
        return
    ids, readings, gone = got
    res.true(name + ": peaktrace exited on SIGINT", gone, "still running")
    try:
        with open(os.path.join(rootfs, "tmp/pt-out/report.json")) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail(name + ": report.json inside the rootfs", str(e))
        return
    res.ok(name + ": report.json inside the rootfs")
    check_run(res, name, rep, ids, readings)


def host_attach(res, ctx, rootfs, port, tmp):
    name = "container/attach"
    outdir = os.path.join(tmp, "container-attach")
    procs = {}

    def after_start(h):
        py = find_desc(h.pid, "python3", TIMEOUT)
        if not py:
            res.fail(name, "the container did not start python3: " + (h.out + h.err)[-400:])
            return None
        time.sleep(0.5)   # the runtime's imports, up to its first GET .../next
        p = Proc([ctx.pt, "-q", "-p", py, "-o", outdir])
        if not p.wait_for("err", r"^peaktrace: tracing PID"):
            res.fail(name, "peaktrace did not start: " + p.err[-300:])
            p.kill()
            return None
        procs["pt"] = p

        def stop():
            p.signal(signal.SIGINT)
            return p.wait(TIMEOUT)
        return stop

    got = drive(res, name, ctx, host_argv(ctx, rootfs, port, TASK + "/bootstrap"), port, after_start)
    if got is None:
        return
    ids, readings, rc = got
    res.eq(name + ": peaktrace exit status", rc, 0)
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail(name + ": report.json", str(e))
        return
    check_run(res, name, rep, ids, readings)


def listening_ports(pid):
    """The TCP ports pid listens on: its socket inodes matched against /proc/net/tcp{,6}."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            m = re.match(r"socket:\[(\d+)\]", os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                col = line.split()
                if len(col) > 9 and col[3] == "0A" and col[9] in inodes:   # 0A: TCP_LISTEN
                    ports.add(int(col[1].rsplit(":", 1)[1], 16))
    return ports


def host_default_ports(res, ctx):
    name = "container/host default ports"
    fn = os.path.join(ctx.build_arg, "tools", "functions", "oom")
    h = Proc([tool(ctx.build_arg, "lambda-host"), "--", fn])
    ports = set()
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and h.running() and len(ports) < 2:
        ports = listening_ports(h.pid)
        time.sleep(0.05)
    alive = h.running()
    h.signal(signal.SIGTERM)
    h.wait(TIMEOUT)
    if not alive and len(ports) < 2:
        res.fail(name, "lambda-host with default ports did not stay up: " + (h.out + h.err)[-300:])
        return
    res.eq(name + ": two listening ports", len(ports), 2)
    res.true(name + ": neither is RIE's 8080 or 9001", not ports & {8080, 9001}, "bound %s" % sorted(ports))


CHROOT_N, CHROOT_SIZE = 64, 1000000
CHROOT_PY = """import sys
def grow():
    return [bytearray(%d) for _ in range(%d)]   # each a malloc of %d bytes (PYTHONMALLOC=malloc)
keep = grow()
sys.stdout.write("grown %%d\\n" %% len(keep))
""" % (CHROOT_SIZE - 1, CHROOT_N, CHROOT_SIZE)


def chroot_launch(res, ctx, rootfs, tmp):
    """The host's peaktrace launches `chroot ROOTFS python3.13`: the exec lands in another root,
    whose libc the host's loader would not list; the new image's allocator must be the
    rootfs's, found from its maps while the image is held, so grow()'s blocks are all there."""
    name = "container/chroot launch"
    write(os.path.join(rootfs, "tmp/chroot_grow.py"), CHROOT_PY)
    out = os.path.join(tmp, "chroot-launch")
    rc, o, e = run([ctx.pt, "-q", "-o", out, "--", "env", "PYTHONMALLOC=malloc", "chroot", rootfs,
                    "/usr/bin/python3", "/tmp/chroot_grow.py"], timeout=TIMEOUT)
    res.true(name + ": exit status 0", rc == 0, "rc %r %s" % (rc, short(e)))
    res.true(name + ": the script ran", "grown %d" % CHROOT_N in o, short(o + e))
    try:
        with open(os.path.join(out, "report.json")) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as ex:
        res.fail(name + ": report.json", str(ex))
        return
    execs = (rep.get("execs") or {}).get("list") or []
    last = execs[-1] if execs else {}
    res.true(name + ": the last exec held and re-probed (the rootfs's libc)",
             last.get("held") and last.get("reprobed") and not last.get("allocator_missing"), str(last)[:300])
    grow_bytes = sum(st.get("peak_bytes", 0) for st in rep.get("stacks", [])
                     if any(fr.get("func", "").startswith("chroot_grow:grow") for fr in st.get("frames", [])))
    res.true(name + ": grow()'s %d blocks of %d bytes live at the peak" % (CHROOT_N, CHROOT_SIZE),
             grow_bytes >= CHROOT_N * CHROOT_SIZE, "got %d" % grow_bytes)


def run_section(ctx):
    res, tmp = ctx.res, ctx.tmp
    if not any(res.wanted(n) for n in ("container/static", "container/static/launch", "container/attach",
                                        "container/host default ports", "container/chroot launch")):
        return
    if not need_host(res, "container/*", ctx.build_arg):
        return
    if res.wanted("container/host default ports"):
        host_default_ports(res, ctx)
    if not check_static_binary(res, ctx, tmp):
        return
    rootfs = os.path.join(ctx.build, "rootfs", "trixie")
    rc, out, err = run([os.path.join(ROOT, "tools", "rootfs.sh"), rootfs], timeout=900)
    if rc != 0:
        why = (err.strip().splitlines() or ["rc %r" % rc])[-1]
        res.skip("container/static/launch", why)
        res.skip("container/attach", why)
        return
    prepare(ctx, rootfs)
    if res.wanted("container/chroot launch"):
        chroot_launch(res, ctx, rootfs, tmp)
    base = free_ports(4)
    if res.wanted("container/static/launch"):
        static_launch(res, ctx, rootfs, base)
    if res.wanted("container/attach"):
        host_attach(res, ctx, rootfs, base + 2, tmp)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# exec: a traced process that execs keeps being traced, a section of tests/run.py.
#
# The truths are the workloads' own: tests/workloads/wl_exec.c allocates EXEC_ONE_N blocks of
# EXEC_ONE_SIZE in exec_stage_one, execs another build of itself, which allocates EXEC_TWO_N
# of EXEC_TWO_SIZE in exec_stage_two; tests/workloads/wl_python.py's sites (python.py's
# expected()). For each case the report must count both images' allocations exactly, name each
# stack in its own image (the function and the module it was recorded in), name the final
# program as the target, and note each exec (from -> to):
#   exec/c/launch          wl_exec_fp first wl_exec_nofp (same libc: probes stay)
#   exec/c-jemalloc/launch wl_exec_fp first wl_exec_je (linked with jemalloc: new probes,
#                          set while the child is held at its exec stop: nothing missed)
#   exec/c/attach          the same attached (-p) before the exec
#   exec/python-sh/launch  a shell script that execs /usr/bin/python3: the Python sites named
#                          and exact, the target python3.11
#   exec/python-env/launch the same through env (sh -> env -> python3: two execs)
#   exec/python-pyenv/launch  `python3` on PATH when it is a pyenv shim (a skip otherwise)
#   exec/python/attach     attached to a shell that later execs python3 (wl_python --wait)
import os
import re
import signal

import pyfix
from harness import READY_MARK, TIMEOUT, WORKLOAD_SRC, Proc, run, short
from tracing import load_report as load

ONE_N, ONE_SIZE, TWO_N, TWO_SIZE = 5, 300001, 7, 200003
WL_C = os.path.join(WORKLOAD_SRC, "wl_exec.c")


def build(res, tmp):
    """{"fp", "nofp", "je"} -> path, compiled here; None where the compiler failed."""
    flags = {"fp": ["-fno-omit-frame-pointer"], "nofp": ["-fomit-frame-pointer"],
             "je": ["-fno-omit-frame-pointer", "-l:libjemalloc.so.2"]}
    out = {}
    for k, extra in flags.items():
        target = os.path.join(tmp, "wl_exec_" + k)
        argv = ["gcc", "-O2", "-g", "-Wall", WL_C, "-o", target] + extra
        rc, _, err = run(argv, timeout=120)
        out[k] = target if rc == 0 else None
        if rc and k != "je":
            res.fail("exec/build wl_exec_" + k, short(err))
    return out


def site(rep, func):
    """(alloc_bytes, alloc_count, modules of frames[0]) of the stacks whose frames[0] is func."""
    b = c = 0
    mods = set()
    for s in rep["stacks"]:
        if s["frames"] and s["frames"][0]["func"] == func:
            b += s["alloc_bytes"]
            c += s["alloc_count"]
            mods.add(s["frames"][0]["module"])
    return b, c, mods


def check_execs(res, name, rep, chain):
    """chain: the exe paths the target went through, first to last."""
    ex = rep.get("execs") or {}
    got = [(e["from"], e["to"]) for e in ex.get("list", [])]
    want = list(zip(chain, chain[1:]))
    res.eq(name + ": execs noted (from, to)", got, want)
    res.eq(name + ": target.exe is the final program", rep["target"]["exe"], chain[-1])


def check_c(res, name, rep, one, two):
    b, c, mods = site(rep, "exec_stage_one")
    res.eq(name + ": exec_stage_one bytes, calls", (b, c), (ONE_N * ONE_SIZE, ONE_N))
    res.eq(name + ": exec_stage_one named in its own image", mods, {one})
    b, c, mods = site(rep, "exec_stage_two")
    res.eq(name + ": exec_stage_two bytes, calls", (b, c), (TWO_N * TWO_SIZE, TWO_N))
    res.eq(name + ": exec_stage_two named in its own image", mods, {two})
    res.eq(name + ": no unnamed stack of an earlier image", rep.get("execs", {}).get("unnamed_stacks"), 0)


def c_launch(res, pt, tmp, name, first, second, kind):
    out = os.path.join(tmp, name.replace("/", "-"))
    pr = Proc([pt, "-q", "-o", out, "--", first, "first", second])
    rc = pr.wait(TIMEOUT)
    if rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, short(pr.err)))
        return
    rep = load(res, name, out)
    if not rep:
        return
    check_execs(res, name, rep, [first, second])
    check_c(res, name, rep, first, second)
    res.eq(name + ": allocator of the final image", rep["allocator"]["kind"], kind)
    if rep.get("execs", {}).get("list"):
        e = rep["execs"]["list"][0]
        res.true(name + ": held at the exec, new probes iff another allocator",
                 e["held"] and e["reprobed"] == (kind != "glibc") and not e["allocator_missing"], e)


def c_attach(res, pt, tmp, name, first, second):
    out = os.path.join(tmp, name.replace("/", "-"))
    wl = Proc([first, "--wait", "first", second])
    if not wl.wait_for("out", re.escape(READY_MARK)):
        res.fail(name, "workload never became ready")
        return
    pr = Proc([pt, "-q", "-p", wl.pid, "-o", out])
    if not pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % wl.pid):
        wl.kill()
        res.fail(name, "peaktrace did not start: %s" % short(pr.err))
        return
    wl.signal(signal.SIGUSR1)
    # The new image waits too (SIGUSR1 stays blocked across the exec: no signal is lost).
    if wl.wait_for("out", "(?s)%s.*%s" % (re.escape(READY_MARK), re.escape(READY_MARK))):
        wl.signal(signal.SIGUSR1)
    wl.wait(TIMEOUT)
    rc = pr.wait(TIMEOUT)
    if rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, short(pr.err)))
        return
    rep = load(res, name, out)
    if rep:
        check_execs(res, name, rep, [first, second])
        check_c(res, name, rep, first, second)


def shim(tmp, name, body):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def py_launch(res, pt, tmp, name, argv, chain, env=None):
    """argv: the command after --; chain: the exes it goes through (the last: the interpreter)."""
    out = os.path.join(tmp, name.replace("/", "-"))
    pr = Proc([pt, "-q", "-o", out, "--"] + argv + [pyfix.WL, "--linger"], env=env)
    rc = pr.wait(TIMEOUT)
    if rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, short(pr.err)))
        return
    rep = load(res, name, out)
    if not rep:
        return
    check_execs(res, name, rep, chain)
    pyfix.check_outputs(res, name, out, pyfix.expected(pyfix.sites()))


def py_attach(res, pt, tmp, name, py):
    """A shell, attached, that execs py once the test lets it (a file appears)."""
    out = os.path.join(tmp, name.replace("/", "-"))
    go = os.path.join(tmp, "exec-go")
    sh = shim(tmp, "exec-later.sh", "echo '%s'\nwhile [ ! -e %s ]; do sleep 0.05; done\n"
              "exec %s %s --wait" % (READY_MARK, go, py, pyfix.WL))
    wl = Proc(["/bin/sh", sh])
    if not wl.wait_for("out", re.escape(READY_MARK)):
        res.fail(name, "shell never became ready")
        return
    pr = Proc([pt, "-q", "-p", wl.pid, "-o", out])
    if not pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % wl.pid):
        wl.kill()
        res.fail(name, "peaktrace did not start: %s" % short(pr.err))
        return
    open(go, "w").close()
    # The interpreter's own ready mark (a second one on the same stdout).
    ok = wl.wait_for("out", "(?s)%s.*%s" % (re.escape(READY_MARK), re.escape(READY_MARK)))
    # wl_python prints its mark before signal.pause(): a signal sent in between is lost, so it
    # is sent again until the workload says it is done.
    done = None
    for _ in range(30 if ok else 0):
        wl.signal(signal.SIGUSR1)
        done = wl.wait_for("out", r"^wl: done", timeout=0.5)
        if done:
            break
    pr.signal(signal.SIGINT)
    rc = pr.wait(TIMEOUT)
    wl.kill()
    if not done or rc != 0:
        res.fail(name, "workload done %s (out %r, err %r), peaktrace exit %s: %s" % (
            bool(done), short(wl.out), short(wl.err), rc, short(pr.err)))
        return
    rep = load(res, name, out)
    if rep:
        check_execs(res, name, rep, ["/usr/bin/dash", os.path.realpath(py)])
        pyfix.check_outputs(res, name, out, pyfix.expected(pyfix.sites()))


def pyenv_python3():
    """python3 on PATH when it is a pyenv shim: (shim, the interpreter it runs) or None."""
    # The first pyenv shim directory on PATH (this test may itself run under pyenv exec, which
    # puts the interpreter's own bin/ first).
    dirs = [d for d in os.environ.get("PATH", "").split(":") if d.endswith("/.pyenv/shims")]
    p = os.path.join(dirs[0], "python3") if dirs else None
    if not p or not os.access(p, os.X_OK):
        return None
    rc, real, _ = run([p, "-c", "import sys; print(sys.executable)"], timeout=60)
    return (p, os.path.realpath(real.strip())) if rc == 0 else None


def run_section(ctx):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    names = ["exec/c/launch", "exec/c-jemalloc/launch", "exec/c/attach", "exec/python-sh/launch",
             "exec/python-env/launch", "exec/python-pyenv/launch", "exec/python/attach"]
    if not any(res.wanted(n) for n in names):
        return
    wl = build(res, tmp)
    if wl["fp"] and wl["nofp"]:
        if res.wanted("exec/c/launch"):
            c_launch(res, pt, tmp, "exec/c/launch", wl["fp"], wl["nofp"], "glibc")
        if res.wanted("exec/c/attach"):
            c_attach(res, pt, tmp, "exec/c/attach", wl["fp"], wl["nofp"])
        if res.wanted("exec/c-jemalloc/launch"):
            if wl["je"]:
                c_launch(res, pt, tmp, "exec/c-jemalloc/launch", wl["fp"], wl["je"], "jemalloc")
            else:
                res.skip("exec/c-jemalloc/launch", "libjemalloc.so.2 not installed")
    py = "/usr/bin/python3"
    real = os.path.realpath(py)
    sh = shim(tmp, "py-shim.sh", 'exec %s "$@"' % py)
    envsh = shim(tmp, "py-env-shim.sh", 'exec /usr/bin/env python3 "$@"')
    env = dict(os.environ, PATH="/usr/bin:/bin")
    if res.wanted("exec/python-sh/launch"):
        py_launch(res, pt, tmp, "exec/python-sh/launch", [sh], ["/usr/bin/dash", real], env)
    if res.wanted("exec/python-env/launch"):
        py_launch(res, pt, tmp, "exec/python-env/launch", [envsh],
                  ["/usr/bin/dash", "/usr/bin/env", real], env)
    if res.wanted("exec/python-pyenv/launch"):
        pe = pyenv_python3()
        if not pe:
            res.skip("exec/python-pyenv/launch", "python3 on PATH is not a pyenv shim")
        else:
            out = os.path.join(tmp, "exec-python-pyenv-launch")
            pr = Proc([pt, "-q", "-o", out, "--", pe[0], pyfix.WL, "--linger"])
            rc = pr.wait(TIMEOUT)
            rep = load(res, "exec/python-pyenv/launch", out) if rc == 0 else None
            if rc != 0:
                res.fail("exec/python-pyenv/launch", "peaktrace exit %s: %s" % (rc, short(pr.err)))
            elif rep:
                res.eq("exec/python-pyenv/launch: target.exe is the interpreter",
                       rep["target"]["exe"], pe[1])
                res.true("exec/python-pyenv/launch: execs noted", rep.get("execs", {}).get("count", 0) >= 1,
                         rep.get("execs"))
                pyfix.check_outputs(res, "exec/python-pyenv/launch", out,
                                    pyfix.expected(pyfix.sites()))
    if res.wanted("exec/python/attach"):
        py_attach(res, pt, tmp, "exec/python/attach", py)

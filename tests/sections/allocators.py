# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""allocators: wl_allocators under jemalloc / tcmalloc / mimalloc (LD_PRELOAD) and musl."""

import json
import os
import re
import shutil
import signal

from harness import READY_MARK, TIMEOUT, Proc, clean_env, short
from tracing import TRACING_RX, load_report


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


def run_section(ctx):
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
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

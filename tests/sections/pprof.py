# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pprof: `go tool pprof -top` reads a case run's profile.pb.gz (skipped without go)."""

import os
import shutil

from harness import run, short

# The case run (name, flavor, mode) whose profile.pb.gz the pprof section reads.
PPROF_SOURCE = ("basic", "fp", "launch")


# pprof

def run_section(ctx):
    res, keep_dirs, tmp = ctx.res, ctx.keep_dirs, ctx.tmp
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

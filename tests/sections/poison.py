# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""poison: the unwind table cache against a target that controls its files (issue 23, findings
5 and 7), a section of tests/run.py.

  poison/forged-build-id: two builds of tests/workloads/poison_lib.c with the same forged build
      id (-Wl,--build-id=0x5eedf00d...): the liar's CFI marks each of its functions outermost
      (.cfi_undefined rip), its code bytes the honest one's. A program using the liar runs under
      peaktrace with a fresh --cache-dir (its table cached under that build id), then a
      different program using the honest library with the same --cache-dir. The truth is the
      victim's own call chain (poison_main.c: main -> victim_level -> poison_entry ->
      poison_inner -> malloc) and its 3,333,333-byte allocation: that stack must be whole
      (every one of those functions, down to main), the same as a run without the cache;
      report.json's unwind_cache.mismatched is 1, and report.txt says so on the cache line
      and in DATA LOSS AND DISTORTION. (Before: the victim's stack was poison_inner alone.)
  poison/cache-dir: --cache-dir whose parent is owned by an unprivileged user (65534: it could
      swap the directory after the check), or writable by others without the sticky bit, or
      reached through a symlink: the cache is off (one warning line naming why,
      startup.unwind_cache null) and nothing is written into the directory (or through the
      link); under a root-owned sticky parent (as /tmp) the cache is on and files written.
"""

import os
import shutil

from harness import run, short
from tracing import load_report, trace_launch

BID = "0x5eedf00d5eedf00d5eedf00d5eedf00d5eedf00d"
SIZE = 3333333
CHAIN = ["poison_inner", "poison_entry", "victim_level", "main"]
NOBODY = 65534


def build(res, ctx, d):
    """liar/ and honest/ libpoison.so (one build id), attacker and victim: paths or None."""
    wl = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "workloads")
    lib, main = os.path.join(wl, "poison_lib.c"), os.path.join(wl, "poison_main.c")
    cflags = ["-O2", "-g", "-fomit-frame-pointer"]
    steps = []
    for kind, extra in (("liar", ["-DLIAR"]), ("honest", [])):
        os.makedirs(os.path.join(d, kind))
        steps.append(["gcc"] + cflags + extra + ["-shared", "-fPIC", "-Wl,--build-id=" + BID, lib, "-o",
                                                 os.path.join(d, kind, "libpoison.so")])
    for prog, kind in (("attacker", "liar"), ("victim", "honest")):
        ld = os.path.join(d, kind)
        steps.append(["gcc"] + cflags + ["-DLEVEL=%s_level" % prog, main, "-L", ld, "-lpoison",
                                         "-Wl,-rpath," + ld, "-o", os.path.join(d, prog)])
    for argv in steps:
        rc, out, err = run(argv, timeout=120)
        if rc != 0:
            res.fail("poison/build", "%s: %s" % (" ".join(argv), short(err)))
            return None
    rc, a, _ = run(["readelf", "-n", os.path.join(d, "liar", "libpoison.so")])
    rc2, b, _ = run(["readelf", "-n", os.path.join(d, "honest", "libpoison.so")])
    res.true("poison/build: both libraries carry the one forged build id",
             BID[2:] in a and BID[2:] in b, short(a + b))
    return os.path.join(d, "attacker"), os.path.join(d, "victim")


def traced(res, ctx, name, prog, outdir, extra):
    r = trace_launch(ctx.pt, prog, [], outdir, extra=extra)
    if r.why:
        res.fail(name, r.why)
        return None, r
    res.eq(name + ": peaktrace exit status", r.rc, 0)
    rep = load_report(res, name, outdir)
    if rep is not None:
        with open(os.path.join(outdir, "report.txt")) as f:
            rep["_text"] = f.read()
    return rep, r


def size_stack(rep):
    """The frames (leaf first) of the stack holding the SIZE-byte allocation, or None."""
    for s in (rep or {}).get("stacks", []):
        if s.get("alloc_bytes") == SIZE and s.get("alloc_count") == 1:
            return [f.get("func", "") for f in s.get("frames", [])]
    return None


def forged(res, ctx, d, progs):
    name = "poison/forged-build-id"
    attacker, victim = progs
    cdir = os.path.join(d, "cache")
    os.makedirs(cdir, mode=0o700)
    arep, _ = traced(res, ctx, name + ": attacker run", attacker, os.path.join(d, "o-attacker"),
                     ("--cache-dir", cdir))
    vrep, _ = traced(res, ctx, name + ": victim run", victim, os.path.join(d, "o-victim"), ("--cache-dir", cdir))
    nrep, _ = traced(res, ctx, name + ": victim without the cache", victim, os.path.join(d, "o-nocache"),
                     ("--no-cache",))
    if arep is None or vrep is None or nrep is None:
        return
    res.true(name + ": the liar's stack ends in the liar (its own CFI says so)",
             (size_stack(arep) or [""])[-1] in ("poison_inner", "poison_entry"), "stack %s" % size_stack(arep))
    got = size_stack(vrep)
    # The victim's own call chain, in order, leaf first.
    pos = [got.index(f) if got and f in got else -1 for f in CHAIN]
    res.true(name + ": the victim's stack is whole: %s, in that order" % " < ".join(CHAIN),
             got is not None and -1 not in pos and pos == sorted(pos), "stack %s" % got)
    res.eq(name + ": the same stack as a run without the cache", got, size_stack(nrep))
    c = (vrep.get("startup") or {}).get("unwind_cache") or {}
    res.eq(name + ": report.json unwind_cache.mismatched", c.get("mismatched"), 1)
    res.true(name + ": report.txt's cache line says so", "1 built again: their build id's table came from "
             "other unwind sections" in vrep["_text"], short(vrep["_text"][:800]))
    res.true(name + ": ... and DATA LOSS AND DISTORTION", "unwind cache: 1 table under a build id another "
             "file's unwind sections had claimed" in vrep["_text"], short(vrep["_text"][-1500:]))
    # The honest table replaced the lie: a third run reads it, no mismatch.
    again, _ = traced(res, ctx, name + ": victim again", victim, os.path.join(d, "o-again"), ("--cache-dir", cdir))
    if again is not None:
        c2 = (again.get("startup") or {}).get("unwind_cache") or {}
        res.true(name + ": again: every table read from the cache, none mismatched, the stack whole",
                 c2.get("mismatched") == 0 and c2.get("misses") == 0 and size_stack(again) == got,
                 "cache %s, stack %s" % (c2, size_stack(again)))


def cache_dir_case(res, ctx, name, victim, cdir, want_on, why=None, outside=None):
    r = trace_launch(ctx.pt, victim, [], os.path.join(ctx.tmp, "poison-o-" + name.split("/")[-1]),
                     extra=("--cache-dir", cdir))
    if r.why:
        res.fail(name, r.why)
        return
    res.eq(name + ": peaktrace exit status", r.rc, 0)
    rep = load_report(res, name, r.outdir)
    cache = ((rep or {}).get("startup") or {}).get("unwind_cache", "missing")
    warn = [l for l in r.err.splitlines() if "unwind table cache" in l]
    files = os.listdir(cdir) if os.path.isdir(cdir) and not os.path.islink(cdir) else []
    if want_on:
        res.true(name + ": cache on, tables written", isinstance(cache, dict) and cache.get("written", 0) > 0
                 and any(f.endswith(".uwt") for f in files), "cache %s, files %s" % (cache, files))
        return
    res.eq(name + ": cache off in report.json", cache, None)
    res.true(name + ": one warning line naming why (%s)" % why, len(warn) == 1 and why in warn[0]
             and warn[0].startswith("peaktrace: warning:"), short(r.err))
    res.eq(name + ": nothing written into the directory", files, [])
    if outside:
        res.eq(name + ": nothing written through the link", sorted(os.listdir(outside)), ["secret"])


def cache_dir(res, ctx, victim):
    name = "poison/cache-dir"
    base = os.path.join(ctx.tmp, "poison-dirs")
    os.makedirs(base, mode=0o755)
    # A user's directory with root's cache directory in it: the user can rename it away.
    user = os.path.join(base, "user")
    os.makedirs(os.path.join(user, "cache"), mode=0o700)
    os.chown(user, NOBODY, NOBODY)
    cache_dir_case(res, ctx, name + "/user-parent", victim, os.path.join(user, "cache"), False,
                   "a parent directory is owned by another user")
    # World-writable, not sticky.
    ww = os.path.join(base, "ww")
    os.makedirs(os.path.join(ww, "cache"), mode=0o700)
    os.chmod(ww, 0o777)
    cache_dir_case(res, ctx, name + "/writable-parent", victim, os.path.join(ww, "cache"), False,
                   "writable by others (and not sticky)")
    # A symlink in the path, to a root-only directory.
    secret = os.path.join(base, "rootonly")
    os.makedirs(secret, mode=0o700)
    with open(os.path.join(secret, "secret"), "w") as f:
        f.write("x\n")
    os.symlink(secret, os.path.join(user, "link"))
    cache_dir_case(res, ctx, name + "/symlink", victim, os.path.join(base, "user", "link"), False,
                   "a parent directory is owned by another user", outside=secret)
    os.symlink(secret, os.path.join(base, "link"))
    cache_dir_case(res, ctx, name + "/symlink-root", victim, os.path.join(base, "link"), False,
                   "a symlink or not a directory in its path", outside=secret)
    # Root's sticky world-writable parent (a /tmp): fine.
    sticky = os.path.join(base, "sticky")
    os.makedirs(sticky)
    os.chmod(sticky, 0o1777)
    cache_dir_case(res, ctx, name + "/sticky-parent", victim, os.path.join(sticky, "cache"), True)


def run_section(ctx):
    res = ctx.res
    names = ["poison/forged-build-id", "poison/cache-dir"]
    if not any(res.wanted(n) for n in names):
        return
    if shutil.which("gcc") is None:
        for n in names:
            res.skip(n, "no gcc")
        return
    d = os.path.join(ctx.tmp, "poison")
    progs = build(res, ctx, d)
    if not progs:
        return
    if res.wanted(names[0]):
        forged(res, ctx, d, progs)
    if res.wanted(names[1]):
        cache_dir(res, ctx, progs[1])

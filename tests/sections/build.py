# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""build: the workloads (tests/workloads), libdeep.so (lib_deep.c, stripped) and ref_preload.so, into
BUILD/tests/workloads."""

import glob
import os
import shutil

import harness
from harness import FLAVORS, WORKLOAD_SRC, run, short


# Workload builds

def newer(target, sources):
    if not os.path.exists(target):
        return False
    t = os.path.getmtime(target)
    return all(os.path.getmtime(s) <= t for s in sources)


def run_section(ctx):
    """Returns {"wl_basic": {"fp": path, "nofp": path}, ..., "wl_static": {...}} and
    the path of ref_preload.so (None if a build failed), and sets ctx.built, ctx.ref_so."""
    res, build = ctx.res, ctx.build
    outdir = os.path.join(build, "tests", "workloads")
    os.makedirs(outdir, exist_ok=True)
    header = os.path.join(WORKLOAD_SRC, "wl_common.h")
    built = {}

    def compile_one(name, argv, target, sources):
        # The driver's compile flags (FLAVORS in harness.py, the commands here) are sources too.
        if newer(target, sources + [header, os.path.abspath(__file__), os.path.abspath(harness.__file__)]):
            res.ok("build/" + name)
            return True
        rc, out, err = run(argv + ["-o", target], timeout=120)
        return res.true("build/" + name, rc == 0 and os.path.exists(target),
                        "compiler failed (%s): %s" % (rc, short(err, 800)))

    # arm64: every workload signs its return addresses (pointer authentication, as trixie's
    # glibc and any -mbranch-protection build do; the guests' CPU has it: pauth-impdef), so the
    # arm64 smoke set's stacks go through PAC-signed frames the unwinders must strip.
    arch_flags = ["-mbranch-protection=standard"] if ctx.cross.startswith("aarch64") else []
    srcs = sorted(glob.glob(os.path.join(WORKLOAD_SRC, "wl_*.c")) +
                  glob.glob(os.path.join(WORKLOAD_SRC, "wl_*.cpp")))
    for src in srcs:
        wl, ext = os.path.splitext(os.path.basename(src))
        if wl == "wl_static":
            continue
        cc = ctx.cross + ("g++" if ext == ".cpp" else "gcc")
        for flavor, flags in FLAVORS.items():
            target = os.path.join(outdir, "%s_%s" % (wl, flavor))
            if compile_one("%s_%s" % (wl, flavor),
                           [cc] + flags + arch_flags + ["-Wall", "-pthread", src], target, [src]):
                built.setdefault(wl, {})[flavor] = target

    src = os.path.join(WORKLOAD_SRC, "wl_static.c")
    target = os.path.join(outdir, "wl_static")
    if os.path.exists(src) and compile_one("wl_static", [ctx.cross + "gcc", "-static", "-s", "-O2",
                                                         src], target, [src]):
        built["wl_static"] = {"fp": target, "nofp": target}

    # wl_allocators_c linked against musl (dynamically: /lib/ld-musl-x86_64.so.1), if musl-gcc
    # exists (Debian's musl-gcc builds for this host only: not in a cross build).
    src = os.path.join(WORKLOAD_SRC, "wl_allocators_c.c")
    target = os.path.join(outdir, "wl_allocators_c_musl")
    if os.path.exists(src) and not ctx.cross and shutil.which("musl-gcc") and compile_one(
            "wl_allocators_c_musl", ["musl-gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-Wall", src],
            target, [src, os.path.join(WORKLOAD_SRC, "wl_alloc_c_api.h")]):
        built["wl_allocators_c_musl"] = {"fp": target}

    # libdeep.so for wl_stripped (case/stripped): built with symbols, then stripped of them all
    # but .dynsym (deep_entry's name); its .eh_frame stays.
    src = os.path.join(WORKLOAD_SRC, "lib_deep.c")
    full = os.path.join(outdir, "libdeep_full.so")
    target = os.path.join(outdir, "libdeep.so")
    if os.path.exists(src) and compile_one("libdeep_full.so", [ctx.cross + "gcc"] + FLAVORS["fp"] + ["-Wall", "-shared", "-fPIC", src],
                                           full, [src]):
        rc, out, err = run([ctx.cross + "strip", "--strip-all", "-o", target, full], timeout=60)
        if res.true("build/libdeep.so (stripped)", rc == 0 and os.path.exists(target), short(err, 400)):
            built["libdeep.so"] = {"fp": target, "nofp": target}

    src = os.path.join(WORKLOAD_SRC, "ref_preload.c")
    target = os.path.join(outdir, "ref_preload.so")
    ref = None
    if compile_one("ref_preload.so", [ctx.cross + "gcc", "-O2", "-g", "-Wall", "-shared", "-fPIC", src, "-ldl"],
                   target, [src]):
        ref = target
    ctx.built, ctx.ref_so = built, ref
    return built, ref

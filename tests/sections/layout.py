# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""layout: the source tree's rules, and the BPF stack budget.

layout/check-layout: `python3 tools/check-layout.py` from the repo root (the source tree's
layout rules); its "ok - WHAT" / "not ok - WHAT: DETAIL" lines are checks. Needs neither root
nor a build. A missing tool is a failure, not a skip.

layout/check-stack: `tools/check-stack.py --tap` over the built BPF objects: every program's
deepest call chain within 448 of the 512 bytes the verifier allows a whole chain on kernels
without a private BPF stack (a check per program), and the tool itself caught on
tests/stack/over.bpf.c, compiled here, whose one program is over (the chain named, exit 1) and
whose other is under. Needs the build (BUILD/*.bpf.o) and clang, not root.

layout/sections import no other section: no tests/sections/*.py imports another section and no
shared module (tests/*.py but run.py) imports a section (read with ast, a check per file): what
two sections share lives in a module beside tracing.py (tests/README.md "Files"). Needs nothing."""

import ast
import glob
import os
import sys

from harness import ROOT, run, run_tap

NAME = "layout/check-layout"
TOOL = os.path.join("tools", "check-layout.py")
STACK = "layout/check-stack"
STACK_TOOL = os.path.join(ROOT, "tools", "check-stack.py")
IMPORTS = "layout/sections import no other section"


def section_imports(path):
    """The lines of path that import a section (the package "sections" or a module in it)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            mods = [node.module or ""]
        else:
            continue
        if any(m == "sections" or m.startswith("sections.") for m in mods):
            found.append("line %d: %s" % (node.lineno, ast.unparse(node)))
    return found


def check_imports(res):
    tests = os.path.join(ROOT, "tests")
    files = sorted(glob.glob(os.path.join(tests, "sections", "*.py")) + glob.glob(os.path.join(tests, "*.py")))
    files = [p for p in files if os.path.basename(p) != "run.py"]   # the driver imports them all
    if not res.true(IMPORTS + ": files found", len(files) > 10, "%d files" % len(files)):
        return
    for path in files:
        found = section_imports(path)
        res.true("%s: %s" % (IMPORTS, os.path.relpath(path, ROOT)), not found, "; ".join(found))


def check_stack(ctx):
    res = ctx.res
    objs = sorted(glob.glob(os.path.join(ctx.build, "*.bpf.o")))
    if not any(o.endswith("/peaktrace.bpf.o") for o in objs):
        res.fail(STACK, "%s/peaktrace.bpf.o is missing (run make first)" % ctx.build)
        return
    run_tap(res, STACK, [sys.executable, STACK_TOOL, "--tap"] + objs, split_detail=True, require_checks=True)
    # The tool must fail a chain over the budget: a fixture compiled as the build compiles BPF.
    over = os.path.join(ctx.tmp, "stack-over.bpf.o")
    arch = {"x86_64": "x86", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    rc, out, err = run(["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_%s" % arch,
                        "-I" + os.path.join(ROOT, "vmlinux", arch), "-c",
                        os.path.join(ROOT, "tests", "stack", "over.bpf.c"), "-o", over])
    if rc != 0:
        res.fail("%s: fixture builds" % STACK, err.strip()[:300])
        return
    rc, out, err = run([sys.executable, STACK_TOOL, "--tap", over])
    lines = out.splitlines()
    res.eq("%s: fixture: exit status" % STACK, rc, 1)
    bad = [l for l in lines if l.startswith("not ok - over_budget: ")]
    res.true("%s: fixture: over_budget refused with its chain" % STACK,
              len(bad) == 1 and "over_budget (" in bad[0] and "-> walk (" in bad[0] and "-> leaf_cb (" in bad[0],
              "lines: %r" % lines)
    if bad:
        nbytes = int(bad[0].split(": ")[1].split(" of ")[0])
        res.true("%s: fixture: over_budget's chain over 512 bytes" % STACK, nbytes > 512, "%d bytes" % nbytes)
    res.true("%s: fixture: under_budget passes" % STACK,
              any(l.startswith("ok - under_budget: ") for l in lines), "lines: %r" % lines)


def run_section(ctx):
    if ctx.res.wanted(NAME):
        if not os.path.isfile(os.path.join(ROOT, TOOL)):
            ctx.res.fail(NAME, "%s is missing" % TOOL)
        else:
            run_tap(ctx.res, NAME, [sys.executable, TOOL], split_detail=True, require_checks=True)
    if ctx.res.wanted(STACK):
        check_stack(ctx)
    if ctx.res.wanted(IMPORTS):
        check_imports(ctx.res)

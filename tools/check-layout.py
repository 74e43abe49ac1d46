#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/check-layout.py -- the source layout's rules, checked (run by `make test`, section layout).

    python3 tools/check-layout.py [--root DIR]

user/ has one folder per capability; a file may include headers of its own folder and of the
folders below it, never above (docs/design.md, "Where things live"):

    util, arch  <-  target, maps (BPF maps read back)  <-  attach, unwind, symbolize, python  <-  profile, kernel  <-  output
          (the format writers)  <-  the capabilities (arenas, invocation, rss, timeline, exec,
          follow, diff, compare)  <-  report (assembles them)  <-  user/*.c (cli, session, main)

bpf/*.h are the kernel/user contract and pure headers (compiled for BPF and for the host): any
layer may include them; they include no user/ header, no BPF-only header (*.bpf.h) and not
vmlinux.h. user/ and tests/unit/ include no *.bpf.h. Every quoted include names its folder
("util/fmt.h", "bpf/peaktrace.h"), except user/'s own top-level headers (cli.h, session.h), the
generated skeleton and the unit tests' check.h, and names a file that exists. No include cycle,
between files, between modules (X.c with X.h) or between folders. No file outside user/report/
and user/*.c names struct pt_report: a report section takes its own view. No function in user/ is longer than 150 lines, but for the
decoders and tables named in LONG_OK.

Prints "ok - ..." / "not ok - ...: detail" lines (the unit tests' form); exits 1 on a failure.
"""
import argparse
import os
import re
import sys

RANK = {"util": 0, "arch": 0, "target": 1, "maps": 1, "attach": 2, "unwind": 2, "symbolize": 2, "python": 2,
        "profile": 3, "kernel": 3, "output": 4,
        "arenas": 5, "invocation": 5, "rss": 5, "timeline": 5, "exec": 5, "follow": 5, "diff": 5,
        "compare": 5, "report": 6, "": 7}
BARE_OK = {"peaktrace.skel.h", "nspid.skel.h", "check.h"}
MAX_FUNC_LINES = 150
# Functions allowed to be longer, and why.
LONG_OK = {
    ("user/attach/probeplace.c", "decode"): "an x86 instruction decoder: one switch over opcodes",
}
# Module cycles known and being undone, and why (an entry goes when its cycle does).
MODULE_CYCLE_OK = {}   # (module, module): why a cycle is accepted; none today
FUNC_START = re.compile(r"^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for top in ("user", "bpf", "tests/unit"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")) and "cfi_fixtures" not in d:
                    yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, src, inc):
    """The repository path an include names, or None (the skeleton, check.h, or missing)."""
    here = os.path.dirname(src)
    for base in (here, "user", "."):          # -iquote order: the includer's folder, user, top
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def folder(path):
    """user/X/... -> X; user/*.c -> ""; bpf/... -> "bpf"; tests -> "tests"."""
    parts = path.split("/")
    if parts[0] == "user":
        return parts[1] if len(parts) > 2 else ""
    return parts[0]


def long_functions(root, files):
    """(file, function, lines) of every user/ function over MAX_FUNC_LINES (kernel style: the
    definition starts in column 0, its body ends at the first "}" in column 0)."""
    out = []
    for src in files:
        if not (src.startswith("user/") and src.endswith(".c")):
            continue
        name, start = None, 0
        for no, line in enumerate(open(os.path.join(root, src), encoding="utf-8", errors="replace"), 1):
            if name is None:
                m = FUNC_START.match(line)
                if m and not line.startswith(("typedef", "struct", "enum", "union", "#")):
                    name, start = m.group(1), no
            elif line.startswith("}"):
                if no - start + 1 > MAX_FUNC_LINES and (src, name) not in LONG_OK:
                    out.append((src, name, no - start + 1))
                name = None
            elif line.startswith(";") or (line[:1].isalpha() and line.rstrip().endswith(";")):
                name = None            # a prototype split over lines, not a definition
    return out


def find_cycle(graph):
    """One cycle of a {node: set(nodes)} graph as a list, or None."""
    color, stack = {}, []

    def visit(n):
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not color.get(m):
                c = visit(m)
                if c:
                    return c
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if not color.get(n):
            c = visit(n)
            if c:
                return c
    return None


def module(path):
    """A module: X.c with its X.h (user/report/html.c and html.h -> user/report/html)."""
    return os.path.splitext(path)[0]


def cycle_modules(graph):
    """The modules that are in an include cycle with another module (Tarjan's strongly connected
    components of more than one node), as a list of sorted components."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    root = os.path.abspath(ap.parse_args().root)
    failed = []

    def check(ok, what, detail=""):
        print(("ok - %s" if ok else "not ok - %s: " + detail.replace("%", "%%")) % what)
        if not ok:
            failed.append(what)

    files = list(sources(root))
    graph, fgraph, mgraph = {}, {}, {}
    bare, missing, upward, bpf_only, pure_bad = [], [], [], [], []
    for src in files:
        text = open(os.path.join(root, src), encoding="utf-8", errors="replace").read()
        graph[src] = set()
        for inc in INCLUDE.findall(text):
            target = resolve(root, src, inc)
            in_bpf = src.startswith("bpf/")
            top_level = target is not None and target.startswith("user/") and target.count("/") == 1
            if not in_bpf and "/" not in inc and inc not in BARE_OK and not top_level:
                bare.append("%s: \"%s\"" % (src, inc))
            if inc in BARE_OK or inc == "vmlinux.h":
                if inc == "vmlinux.h" and in_bpf and not src.endswith(".bpf.c") and not src.endswith(".bpf.h"):
                    pure_bad.append("%s includes vmlinux.h" % src)
                continue
            if target is None:
                missing.append("%s: \"%s\"" % (src, inc))
                continue
            graph[src].add(target)
            if target.endswith(".bpf.h") and not (src.endswith(".bpf.c") or src.endswith(".bpf.h")):
                (pure_bad if in_bpf else bpf_only).append("%s includes %s" % (src, target))
            if in_bpf and target.startswith("user/"):
                pure_bad.append("%s includes %s" % (src, target))
            if src.startswith("user/") and target.startswith("user/") and module(src) != module(target):
                mgraph.setdefault(module(src), set()).add(module(target))
            fs, ft = folder(src), folder(target)
            if src.startswith("user/") and target.startswith("user/"):
                if RANK.get(ft, 99) > RANK.get(fs, -1):
                    upward.append("%s (%s) includes %s (%s)" % (src, fs or "top", target, ft or "top"))
                if ft != fs:
                    fgraph.setdefault(fs or "top", set()).add(ft or "top")
    unknown = sorted({folder(s) for s in files if s.startswith("user/")} - set(RANK))
    check(not unknown, "layout: every user/ folder has a layer", ", ".join(unknown))
    check(not bare, "layout: includes name their folder", "; ".join(bare[:8]))
    check(not missing, "layout: every include names an existing file", "; ".join(missing[:8]))
    check(not upward, "layout: user/ includes only its own layer and those below", "; ".join(upward[:8]))
    check(not bpf_only, "layout: user/ and tests include no BPF-only header", "; ".join(bpf_only[:8]))
    check(not pure_bad, "layout: bpf/*.h pure headers include no BPF-only or user header",
          "; ".join(pure_bad[:8]))
    c = find_cycle(graph)
    check(c is None, "layout: no include cycle between files", " -> ".join(c or []))
    c = find_cycle(fgraph)
    check(c is None, "layout: no include cycle between folders", " -> ".join(c or []))
    comps = [c for c in cycle_modules(mgraph) if tuple(c) not in MODULE_CYCLE_OK]
    check(not comps, "layout: no include cycle between modules (X.c with X.h)",
          "%d modules in %d cycles: %s" % (sum(len(c) for c in comps), len(comps),
                                           "; ".join(" <-> ".join(c) for c in comps[:6])))
    # A section takes its own view (rss/rss.h pt_rss_view, ...): the whole report is report/'s
    # to assemble, and user/*.c's (the session fills it).
    takers = [s for s in files if s.startswith("user/") and s.count("/") > 1 and
              not s.startswith("user/report/") and
              re.search(r"\bstruct\s+pt_report\b", open(os.path.join(root, s), encoding="utf-8",
                                                        errors="replace").read())]
    check(not takers, "layout: a section never takes struct pt_report (only user/report/ and user/*.c)",
          ", ".join(takers[:8]))
    all_comps = cycle_modules(mgraph)
    print("# modules in include cycles: %d (%d cycles; %d known, MODULE_CYCLE_OK)" %
          (sum(len(c) for c in all_comps), len(all_comps), len(all_comps) - len(comps)))
    longf = long_functions(root, files)
    check(not longf, "layout: no function in user/ over %d lines" % MAX_FUNC_LINES,
          "; ".join("%s %s() %d lines" % f for f in longf))
    print("%d files, %d includes" % (len(files), sum(len(v) for v in graph.values())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

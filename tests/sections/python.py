# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# python: CPython frames end to end, a section of tests/run.py.
#
# tests/workloads/wl_python.py allocates known amounts from known functions (bytearray(n)
# mallocs n + 1 bytes); each site's line is read from its "# SITE name" comment (tests/pyfix.py). For each
# CPython found (Debian's 3.11, pyenv's 3.12 and 3.13, else Debian's /usr/bin/python3.12 or 3.13:
# the arm64 vmtest guest's trixie root; a missing one is a counted skip) and
# each mode (launch, attach), peaktrace runs the workload and the test checks, in the folded
# alloc profile and in report.json:
#   - each site's Python frames, root first, as `wl_python:function:line`, contiguous, between
#     native frames (the interpreter below, the allocation path above), with no
#     _PyEval_EvalFrameDefault left in them;
#   - their bytes: exactly what the site allocated;
#   - the 42-deep recursion whole; the 202-deep one cut, marked "[python frames truncated]"
#     and counted in python_too_deep;
#   - peak.svg parses as XML, its legend names the kinds drawn, each frame is shaded from its
#     kind's legend colour: Python frames Python, CPython's allocator API allocator, markers other.
# Another build of 3.13, Debian trixie's own (TRIXIE_ROOTFS, a debootstrap'd root; absent: a
# skip), run under chroot and, as a container, in its own pid and mount namespaces, traced from
# the host with -p: the same sites, frames and bytes, no warning, python_layout_failed 0.
# A CPython whose frames cannot be read (pyenv's 3.10: no Py_Version, no frame layout known):
# the warning line names it, python_layout_failed is 1 in report.json and a caveat in report.txt.
import glob
import json
import os
import re
import signal
import subprocess
import xml.etree.ElementTree as ET

from harness import ROOT, TIMEOUT, Proc, children_of, expand_report
from pyfix import TRUNC, WL, check_outputs, expected, is_py, sites

READY = "wl: waiting for SIGUSR1"
# Debian trixie's root filesystem (debootstrap --variant=minbase --include=python3 trixie).
TRIXIE_ROOTFS = os.path.join(ROOT, "build", "rootfs", "trixie")


def pythons():
    """(label, interpreter or None) for each version the issue names."""
    out = [("3.11", "/usr/bin/python3.11" if os.access("/usr/bin/python3.11", os.X_OK) else None)]
    for minor in ("3.12", "3.13"):
        found = sorted(glob.glob("/root/.pyenv/versions/%s.*/bin/python%s" % (minor, minor)))
        debian = "/usr/bin/python" + minor
        out.append((minor, found[-1] if found else debian if os.access(debian, os.X_OK) else None))
    return out


def run_section(ctx):
    res, pt, tmp, timeout = ctx.res, ctx.pt, ctx.tmp, TIMEOUT
    run_trixie(ctx)
    run_unreadable(ctx)
    if not any(res.wanted("python/%s/%s" % (v, m)) for v, _ in pythons() for m in ("launch", "attach")):
        return
    L = sites()
    want = expected(L)
    for ver, exe in pythons():
        for mode in ("launch", "attach"):
            name = "python/%s/%s" % (ver, mode)
            if not res.wanted(name):
                continue
            if not exe:
                res.skip(name, "no CPython %s installed" % ver)
                continue
            out = os.path.join(tmp, "py-%s-%s" % (ver, mode))
            if mode == "launch":
                pr = Proc([pt, "-q", "-o", out, "--", exe, WL, "--linger"])
                rc = pr.wait(timeout)
            else:
                wl = Proc([exe, WL, "--wait"])
                if not wl.wait_for("out", re.escape(READY)):
                    wl.kill()
                    res.fail(name, "workload never became ready")
                    continue
                pr = Proc([pt, "-q", "-p", wl.pid, "-o", out])
                if not pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % wl.pid):
                    wl.kill()
                    pr.kill()
                    res.fail(name, "peaktrace did not start: %s" % pr.err[-300:])
                    continue
                wl.signal(signal.SIGUSR1)
                # Stopped while the target lives, as an attached tracer is: the names of
                # its code objects are read from its memory (a target that exits at once
                # may take them with it: python_code_unreadable counts that).
                done = wl.wait_for("out", r"^wl: done")
                pr.signal(signal.SIGINT)
                rc = pr.wait(timeout)
                wl.kill()
                if not done:
                    res.fail(name, "workload did not finish: %s" % wl.err[-300:])
                    continue
            if rc != 0:
                res.fail(name, "peaktrace exit %s: %s" % (rc, pr.err[-300:]))
                continue
            check_outputs(res, name, out, want)
            check_no_layout_loss(res, name, out, pr.err)
            check_collapsed(res, name, out, exe)
            check_svg_kinds(res, name, out, mode == "launch")
            if mode == "launch":
                check_frames_python(res, pt, name, tmp, exe, want, timeout)
                check_frames_python(res, pt, name, tmp, exe, want, timeout, pool=POOL_SMALL)


SVG_NS = "{http://www.w3.org/2000/svg}"
# The allocation entry points CPython's allocations are made from (their caller of malloc):
# pt_frame_kind calls them the allocator (user/profile/frames.c).
PY_ALLOC_FNS = {"PyMem_Malloc", "PyMem_Calloc", "PyMem_Realloc", "PyMem_RawMalloc", "PyMem_RawCalloc",
                "PyMem_RawRealloc", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
                "_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", "_PyMem_RawMalloc",
                "_PyMem_RawCalloc", "_PyMem_RawRealloc", "pymalloc_alloc", "pymalloc_realloc"}
# The most a frame's channel strays from its kind's swatch (half the widest spread in flamegraph.c).
SHADE = 23


def rgb(fill):
    m = re.match(r"rgb\((\d+),(\d+),(\d+)\)$", fill or "")
    return tuple(int(x) for x in m.groups()) if m else None


def svg_frames(path):
    """(legend {kind: rgb}, [(name, rgb)]) of a peaktrace flame graph; ET raises if not XML."""
    root = ET.parse(path).getroot()
    legend, frames = {}, []
    for g in root.iter(SVG_NS + "g"):
        if g.get("id") == "legend":
            kids = list(g)
            for r, t in zip(kids[0::2], kids[1::2]):
                legend[t.text] = rgb(r.get("fill"))
        elif g.get("id") == "frames":
            for fr in g.findall(SVG_NS + "g"):
                tip = fr.find(SVG_NS + "title").text
                frames.append((tip[:tip.rfind(" (")], rgb(fr.find(SVG_NS + "rect").get("fill"))))
    return legend, frames


def kind_of(legend, c):
    """The legend kind whose swatch c is a shade of, or None."""
    def dist(k):
        return max(abs(a - b) for a, b in zip(legend[k], c))
    best = min(legend, key=dist) if legend and c else None
    return best if best and dist(best) <= SHADE else None


def check_svg_kinds(res, name, out, need_alloc):
    """Each frame of peak.svg and alloc.svg a shade of its kind, the legend naming the kinds
    drawn; the kinds of the frames by name in alloc.svg (every allocation: each site's Python
    frames whatever the peak holds). need_alloc: an allocator frame must be drawn (launch mode:
    the interpreter's start-up objects are PyMem_Malloc's, named even in Debian's stripped
    python3.11; attached, the bytearrays' allocator frames a stripped interpreter leaves
    unnamed, collapsed into "[python3.11 internals]"). Not peak.svg for the kinds by name: in
    launch mode its peak is at start-up, whose largest blocks depend on the machine (in a VM
    over 9p, opendir's 512 KiB buffer, sized by st_blksize, made the peak one without Python
    frames)."""
    for svg in ("peak.svg", "alloc.svg"):
        t = "%s: %s" % (name, svg)
        try:
            legend, frames = svg_frames(os.path.join(out, svg))
        except (ET.ParseError, OSError, AttributeError) as e:
            res.fail(t + " parses as XML", str(e))
            continue
        res.true(t + " parses as XML", frames, "no frames")
        frames = frames[1:]  # the root, "all", is no frame of any kind
        kinds = {fr: kind_of(legend, c) for fr, c in frames}
        res.true(t + " legend names the kinds drawn, each frame a shade of one",
                 set(legend) == set(kinds.values()) and None not in kinds.values(),
                 "legend %r, kinds drawn %r, unmatched %r" % (sorted(legend), sorted(set(kinds.values()) - {None}),
                                                            [fr for fr, k in kinds.items() if not k][:3]))
        if svg != "alloc.svg":
            continue
        groups = (("Python frames are Python", "Python", lambda fr: fr.startswith("wl_python:")),
                  ("CPython's allocator frames are allocator", "allocator", lambda fr: fr in PY_ALLOC_FNS),
                  ("markers are other", "other", lambda fr: fr == TRUNC or fr.endswith(" internals]")))
        for what, kind, sel in groups:
            got = {fr: k for fr, k in kinds.items() if sel(fr)}
            res.true("%s %s" % (t, what), (got or (kind == "allocator" and not need_alloc)) and
                     all(k == kind for k in got.values()),
                     "none drawn" if not got else {fr: k for fr, k in got.items() if k != kind})


def interp_name(exe):
    """'python3.11' for /usr/bin/python3.11 (what peaktrace names the interpreter's internals)."""
    return os.path.basename(os.path.realpath(exe))


def stripped(exe):
    """True when the interpreter has no .symtab (Debian's python3.11; pyenv builds keep theirs)."""
    out = subprocess.run(["readelf", "-SW", os.path.realpath(exe)], capture_output=True, text=True,
                         timeout=30).stdout
    return ".symtab" not in out


def check_collapsed(res, name, out, exe):
    """By default, runs of unnamed frames in the interpreter are one "[python3.11 internals]"
    frame: no bare "[python3.11+0x...]" frame is left in the folded stacks or report.txt, and
    report.json counts what was collapsed. An interpreter with its symbols (pyenv's) has
    nothing unnamed to collapse: only the absence of bare frames is checked there."""
    interp = interp_name(exe)
    if not stripped(exe):
        with open(os.path.join(out, "alloc.folded")) as f:
            folded = f.read()
        res.true("%s: no bare interpreter frame in the folded stacks" % name,
                 not re.search(r"\[%s\+0x[0-9a-f]+\]" % re.escape(interp), folded), "bare frames")
        return
    bare = re.compile(r"\[%s\+0x[0-9a-f]+\]" % re.escape(interp))
    with open(os.path.join(out, "alloc.folded")) as f:
        folded = f.read()
    with open(os.path.join(out, "report.txt")) as f:
        txt = f.read()
    with open(os.path.join(out, "report.json")) as f:
        rep = expand_report(json.load(f))
    label = "[%s internals]" % interp
    res.true("%s: interpreter internals collapsed in the folded stacks" % name,
             label in folded and not bare.search(folded),
             "label %s: %s, bare frames: %r" % (label, label in folded, bare.findall(folded)[:3]))
    res.true("%s: no bare interpreter address in report.txt" % name,
             label in txt and not re.search(r"0x[0-9a-f]+  \(%s\+0x" % re.escape(interp), txt),
             [l for l in txt.splitlines() if "(%s+0x" % interp in l][:3])
    fr = rep.get("frames", {})
    res.true("%s: report.json counts the collapsed frames" % name,
             fr.get("mode") == "collapsed" and fr.get("collapsed_frames", 0) >= fr.get("collapsed_runs", 0) > 0,
             fr)


# The Python words' pool (bpf/stack.bpf.h py_chunks) cut to this many chunks (the hidden
# --py-chunks): chunk 0 is never handed out and a stack takes one at least, so a run with more
# Python stacks than this has put the words of the later ones in the py_stacks hash map.
POOL_SMALL = 64


def check_frames_python(res, pt, name, tmp, exe, want, timeout, pool=None):
    """--frames python: every folded stack is Python frames plus exactly one native frame, the
    allocating one, at the leaf end; each site's Python frames and bytes as in the full run.
    pool: the same with the Python words' pool that small, so that most stacks' words are in the
    hash map it falls back to: the same frames and names either way."""
    t = name + "/frames-python" + (" pool full" if pool else "")
    if not res.wanted(t):
        return
    out = os.path.join(tmp, "py-frames-" + name.replace("/", "-") + ("-pool" if pool else ""))
    pr = Proc([pt, "-q", "--frames", "python", "-o", out] + (["--py-chunks", str(pool)] if pool else []) +
              ["--", exe, WL, "--linger"])
    rc = pr.wait(timeout)
    if rc != 0:
        res.fail(t, "peaktrace exit %s: %s" % (rc, pr.err[-300:]))
        return
    folded = []
    with open(os.path.join(out, "alloc.folded")) as f:
        for line in f:
            stack, _, val = line.rstrip("\n").rpartition(" ")
            folded.append((stack.split(";"), int(val)))
    # Any Python frame ("module:function:line", <frozen ...> too) or marker, not only the workload's.
    lang = lambda x: is_py(x) or x.startswith("[python ") or re.match(r"^\S.*:.+:\d+$", x)
    bad = [fr for fr, _ in folded if not all(lang(x) for x in fr[:-1]) or lang(fr[-1])]
    res.true("%s: only Python frames above one allocating native frame" % t, folded and not bad, bad[:2])
    for site, (pyframes, nbytes) in sorted(want.items()):
        got = sum(v for fr, v in folded if fr[:-1] == pyframes and not is_py(fr[-1]))
        res.eq("%s: %s is its Python frames plus one native frame, bytes" % (t, site), got, nbytes)
    with open(os.path.join(out, "report.json")) as f:
        fr = json.load(f).get("frames", {})
    res.true("%s: report.json says frames were hidden" % t,
             fr.get("mode") == "python" and fr.get("hidden_frames", 0) > 0, fr)
    if pool:
        with open(os.path.join(out, "report.json")) as f:
            errs = json.load(f).get("errors", {})
        pystacks = sum(1 for fr, _ in folded if any(is_py(x) for x in fr))
        res.true("%s: more stacks with Python frames than the pool has chunks" % t, pystacks > pool,
                 "%d stacks with Python frames, %d chunks" % (pystacks, pool))
        res.eq("%s: python_store_failed" % t, errs.get("python_store_failed"), 0)


def run_trixie(ctx):
    """Debian trixie's python3.13 in a chroot (and a container: own pid and mount namespaces),
    peaktrace on the host attaching with -p to its host PID."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    py = os.path.join(TRIXIE_ROOTFS, "usr", "bin", "python3.13")
    for kind in ("chroot", "container"):
        name = "python/trixie-3.13/%s-attach" % kind
        if not res.wanted(name):
            continue
        if not os.access(py, os.X_OK):
            res.skip(name, "no Debian trixie root filesystem at %s" % TRIXIE_ROOTFS)
            continue
        with open(WL) as f, open(os.path.join(TRIXIE_ROOTFS, "tmp", "wl_python.py"), "w") as g:
            g.write(f.read())
        argv = ["chroot", TRIXIE_ROOTFS, "/usr/bin/python3.13", "/tmp/wl_python.py", "--wait"]
        if kind == "container":
            argv = ["unshare", "--pid", "--fork", "--kill-child",
                    "--mount-proc=" + os.path.join(TRIXIE_ROOTFS, "proc")] + argv
        wl = Proc(argv)
        if not wl.wait_for("out", re.escape(READY)):
            wl.kill()
            res.fail(name, "workload never became ready: %s" % wl.err[-300:])
            continue
        pid = wl.pid if kind == "chroot" else (children_of(wl.pid) or [0])[0]
        out = os.path.join(tmp, "py-trixie-" + kind)
        pr = Proc([pt, "-q", "-p", pid, "-o", out])
        if not pr.wait_for("err", r"^peaktrace: tracing (?:PID )?%d\b" % pid):
            wl.kill()
            pr.kill()
            res.fail(name, "peaktrace did not start: %s" % pr.err[-300:])
            continue
        wl.signal(signal.SIGUSR1) if kind == "chroot" else os.kill(pid, signal.SIGUSR1)
        done = wl.wait_for("out", r"^wl: done")
        pr.signal(signal.SIGINT)
        rc = pr.wait(TIMEOUT)
        wl.kill()
        if not done or rc != 0:
            res.fail(name, "workload done: %s, peaktrace exit %s: %s" % (bool(done), rc, pr.err[-300:]))
            continue
        check_outputs(res, name, out, expected(sites()))
        check_no_layout_loss(res, name, out, pr.err)


def check_no_layout_loss(res, name, out, err):
    """The offsets passed their checks (file and live target): no warning, counter 0."""
    with open(os.path.join(out, "report.json")) as f:
        errors = json.load(f)["errors"]
    res.eq("%s: python_layout_failed" % name, errors.get("python_layout_failed"), 0)
    res.true("%s: no Python warning" % name, "warning: CPython" not in err, err[-300:])


def run_unreadable(ctx):
    """A real CPython whose frames peaktrace cannot read (3.10): said and counted, not silent."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    name = "python/unreadable/3.10"
    if not res.wanted(name):
        return
    found = sorted(glob.glob("/root/.pyenv/versions/3.10.*/bin/python3.10"))
    if not found:
        res.skip(name, "no pyenv CPython 3.10")
        return
    exe = found[-1]
    # The interpreter's own word for its version (the independent truth).
    ver = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=TIMEOUT).stdout.strip()
    out = os.path.join(tmp, "py-unreadable")
    pr = Proc([pt, "-q", "-o", out, "--", exe, "-c", "b = [bytearray(100000) for _ in range(3)]"])
    rc = pr.wait(TIMEOUT)
    if rc != 0:
        res.fail(name, "peaktrace exit %s: %s" % (rc, pr.err[-300:]))
        return
    res.eq("%s: the interpreter says" % name, ver, "3.10")
    warn = [l for l in pr.err.splitlines() if l.startswith("peaktrace: warning: CPython")]
    res.true("%s: one warning naming the interpreter and the reason" % name,
             len(warn) == 1 and "python3.10" in warn[0] and "older than 3.11" in warn[0] and
             "python_layout_failed" in warn[0], pr.err[-400:])
    with open(os.path.join(out, "report.json")) as f:
        rep = json.load(f)
    res.eq("%s: python_layout_failed" % name, rep["errors"].get("python_layout_failed"), 1)
    res.true("%s: a stacks caveat in report.json" % name,
             any(c.get("counter") == "python_layout_failed" and "stacks" in c.get("affects", [])
                 for c in rep.get("caveats", [])), rep.get("caveats"))
    with open(os.path.join(out, "report.txt")) as f:
        txt = f.read()
    res.true("%s: the caveat where the stacks are printed" % name,
             "caveat: python_layout_failed 1" in txt, [l for l in txt.splitlines() if "caveat" in l][:4])

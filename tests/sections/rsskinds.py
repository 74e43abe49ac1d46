# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""rsskinds: file-backed and shared-memory RSS by object, and the runtimes' heaps as memory kinds
(bpf/rss.bpf.h rss_objs, user/rss/rssobj.c, rsskind.c), a section of tests/run.py.

tests/workloads/wl_rssobj.c maps and touches known objects and logs each mapping's own Rss
(/proc/self/smaps) once everything is held (the RSS peak): a file it wrote (name with an ESC
byte in it), read-touched; a memfd "ptcache", a /dev/shm file, a MAP_SHARED|MAP_ANONYMOUS
region and a SysV segment, written. Then it unmaps the file and the memfd. Launch and attach:
  - each object's bytes at the RSS peak (report.json rss_attribution.file_shmem.objects, and
    its "[file: ...]"/"[shmem: ...]" root frame in rss.folded) equal its mapping's own Rss
    (less at most the named "mapping not looked up" bucket: a fault while the mmap lock had a
    writer, seen once in ~20 attached runs);
    the file and memfd hold 0 at the end, the others what they held;
  - the shmem counter at the peak equals the workload's RssShmem then, the file counter its
    RssFile within PAGES pages; file and shmem splits explain their counters
    (unexplained_bytes 0);
  - rss.folded totals the whole RSS at the peak; the ESC in the file's name is escaped
    (\\x1b) in report.txt, rss.folded and report.json, never raw.
Debian's python3 (tests/workloads/wl_pykinds.py; launch, and attached with peaktrace stopped
by SIGINT while the script still holds everything): a ~50 MiB dict of short strings,
then 15 MiB more in a list; truth is CPython's own accounting (sys._debugmallocstats):
  - the "CPython pymalloc arenas" kind at the peak is at least the bytes of the blocks the
    script allocated less the unattributed anonymous bytes, and at most its arenas' size;
  - under "[kind: CPython pymalloc arenas]", build_dict's Python frame holds at least 95% of
    its own blocks' bytes;
  - the text report's first screen and RSS section say "Python objects outside the heap view:
    N of the RSS" with the JSON figure, name rss.svg and --python-objects; report.json
    python_objects_outside_heap.shown is true.
Node (tests/workloads/js_objects.js, launch, perf-map and single-threaded GC flags): the "V8 heap"
kind holds at least 60% of the RSS the script grew by (its own process.memoryUsage()), and so
does fillObjects' JS frame under "[kind: V8 heap]".
"""
import json
import os
import re
import shutil
import signal

from harness import SLEEP_MARK, WORKLOAD_SRC, short
from tracing import load_report, trace_attach, trace_launch
from nodefix import NODE_GC_FLAGS, NODE_OBJ_FUNC, NODE_OBJ_JS, NODE_PERF_FLAGS, node_run
from rsscheck import debian_python, folded, read_folded, read_text, trace_attach_py, traced_truth

PAGE = 4096
PAGES = 8
MiB = 1 << 20

# log name -> (kind, expected label; {dir} and {pid} filled in)
OBJECTS = {
    "file": ("file", "{dir}/wl_rssobj-\\x1b[31m.data"),
    "memfd": ("shmem", "memfd:ptcache"),
    "devshm": ("shmem", "/dev/shm/pt-rssobj-{pid}"),
    "shanon": ("shmem", "anonymous shared mapping"),
    "sysv": ("shmem", "SysV segment key 0x00000000"),
}
UNMAPPED = ("file", "memfd")   # munmap'ed before the end


def run_objects(ctx, wl, mode):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    prefix = "rsskinds/wl_rssobj/%s" % mode
    if not res.wanted(prefix):
        return
    if not wl:
        res.fail(prefix, "wl_rssobj not built")
        return
    outdir = os.path.join(tmp, "rsskinds-obj-" + mode)
    datadir = os.path.join(tmp, "rsskinds-data-" + mode)
    os.makedirs(datadir, exist_ok=True)
    log = os.path.join(tmp, "rsskinds-obj-%s.log" % mode)
    trace = trace_launch if mode == "launch" else trace_attach
    r = trace(pt, wl, [log, datadir], outdir, extra=("--top", "100"))
    truth = traced_truth(res, prefix, r, log, "end_shmem")
    if truth is None:
        return
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ra = rep.get("rss_attribution") or {}
    fs = ra.get("file_shmem")
    if not res.true("%s: report.json rss_attribution.file_shmem" % prefix, isinstance(fs, dict),
                    "missing"):
        return
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    objs = fs.get("objects", [])
    # A fault whose mapping could not be looked up (the mmap lock's trylock failed: a writer,
    # such as a uprobe being placed) is in its own bucket, not on the object: the object is
    # exact within that bucket (the bucket is checked to be what the identity needs below).
    slack = {w: ((fs.get(w) or {}).get("at_peak") or {}).get("mapping_not_looked_up_bytes", 0)
             for w in ("file", "shmem")}
    for name, (kind, label) in OBJECTS.items():
        label = label.format(dir=datadir, pid=truth.get("pid"))
        # The workload unlinks its /dev/shm file before it exits: read after that, the maps
        # show it "(deleted)", which is then its name.
        names = (label, label + " (deleted)") if name == "devshm" else (label,)
        sel = [o for o in objs if o.get("kind") == kind and o.get("name") in names]
        if sel:
            label = sel[0]["name"]
        if not res.eq("%s: %s: one object named %r" % (prefix, name, label), len(sel), 1):
            print("  objects: " + short(json.dumps([(o.get("kind"), o.get("name")) for o in objs]), 800))
            continue
        exact(res, "%s: %s: bytes at the RSS peak == its mapping's Rss" % (prefix, name),
              sel[0].get("rss_peak_bytes"), truth.get(name), slack[kind])
        exact(res, "%s: %s: bytes at the end" % (prefix, name), sel[0].get("rss_bytes"),
              0 if name in UNMAPPED else truth.get(name), 0 if name in UNMAPPED else slack[kind])
        frame = "[%s: %s]" % (kind, label)
        exact(res, "%s: %s: rss.folded root frame %s" % (prefix, name, frame),
              sum(v for f, v in lines if f[0] == frame), truth.get(name), slack[kind])
    pf, ps = (fs.get("file") or {}).get("at_peak") or {}, (fs.get("shmem") or {}).get("at_peak") or {}
    res.eq("%s: shmem at the peak == the workload's RssShmem" % prefix, ps.get("total_bytes"),
           truth.get("peak_shmem"))
    res.true("%s: file at the peak == the workload's RssFile (+- %d pages)" % (prefix, PAGES),
             abs((pf.get("total_bytes") or 0) - truth.get("peak_file", 0)) <= PAGES * PAGE,
             "got %r want %r" % (pf.get("total_bytes"), truth.get("peak_file")))
    for which in ("file", "shmem"):
        for moment in ("at_peak", "at_end"):
            s = (fs.get(which) or {}).get(moment) or {}
            res.eq("%s: %s %s: unexplained_bytes" % (prefix, which, moment), s.get("unexplained_bytes"), 0)
            res.eq("%s: %s %s: objects_bytes == attributed_bytes" % (prefix, which, moment),
                   s.get("objects_bytes"), s.get("attributed_bytes"))
    if mode == "attach":
        res.true("%s: resident before attaching is a bucket" % prefix,
                 pf.get("resident_before_bytes", 0) > 0, "file resident_before_bytes %r" % pf)
    res.eq("%s: rss.folded total == the whole RSS at the peak" % prefix,
           sum(v for _, v in lines), ra.get("rss_at_peak_bytes"))
    res.eq("%s: whole RSS at the peak == anon + file + shmem" % prefix, ra.get("rss_at_peak_bytes"),
           (ra.get("at_peak") or {}).get("anon_bytes", 0) + pf.get("total_bytes", 0) +
           ps.get("total_bytes", 0))
    check_no_raw(res, prefix, outdir)


def exact(res, name, got, want, slack):
    """got == want, or short of it by at most the named not-looked-up bucket (slack)."""
    res.true(name, got is not None and want is not None and want - slack <= got <= want,
             "got %r want %r%s" % (got, want, " (- up to %d not looked up)" % slack if slack else ""))


def check_no_raw(res, prefix, outdir):
    """The ESC in the data file's name: escaped in every output, never the raw byte."""
    for fn in ("report.txt", "rss.folded", "report.json", "rss.svg"):
        text = read_text(os.path.join(outdir, fn))
        res.true("%s: no raw ESC in %s" % (prefix, fn), text and "\x1b" not in text,
                 "raw ESC found" if text else "missing")
    text = read_text(os.path.join(outdir, "report.txt"))
    res.true("%s: report.txt names the file with \\x1b escaped" % prefix,
             "wl_rssobj-\\x1b[31m.data" in text, "not named")


def py_attach(pt, py, script, log, outdir):
    """Attach to `python3 script --wait LOG --hold`; once it has logged and sleeps, stop
    peaktrace with SIGINT while it lives (its maps are read at the end), then end it."""
    def stop_tracer(pr, wl):
        if wl.wait_for("out", re.escape(SLEEP_MARK)):
            pr.signal(signal.SIGINT)
    r = trace_attach_py(pt, py, script, [log, "--hold"], outdir, on_tracing=stop_tracer, leave_running=True)
    if getattr(r, "wl", None):
        r.wl.kill()
    return r


def run_python(ctx, mode):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    prefix = "rsskinds/python/" + mode
    if not res.wanted(prefix):
        return
    py = debian_python(res, prefix)
    if py is None:
        return
    outdir = os.path.join(tmp, "rsskinds-py-" + mode)
    log = os.path.join(tmp, "rsskinds-py-%s.log" % mode)
    script = os.path.join(WORKLOAD_SRC, "wl_pykinds.py")
    if mode == "launch":
        r = trace_launch(pt, py, [script, log], outdir)
    else:
        r = py_attach(pt, py, script, log, outdir)
    truth = traced_truth(res, prefix, r, log, "arenas_bytes")
    if truth is None:
        return
    res.true("%s: the dict's objects are ~50 MiB of pymalloc blocks" % prefix,
             truth["dict_blocks"] >= 40 * MiB, "only %d" % truth["dict_blocks"])
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    ra = rep.get("rss_attribution") or {}
    kind = (ra.get("by_kind_at_peak") or {}).get("pymalloc_arenas_bytes")
    unattr = (ra.get("at_peak") or {}).get("unattributed_bytes", 0)
    res.true("%s: pymalloc kind >= the script's blocks - unattributed (%r >= %d - %d)"
             % (prefix, kind, truth["blocks_growth"], unattr),
             kind is not None and kind >= truth["blocks_growth"] - unattr, "")
    res.true("%s: pymalloc kind <= the script's arenas (%r <= %d)" % (prefix, kind, truth["arenas_bytes"]),
             kind is not None and kind <= truth["arenas_bytes"], "")
    lines = read_folded(res, prefix, outdir)
    if lines is None:
        return
    got = sum(v for f, v in lines if f[0] == "[kind: CPython pymalloc arenas]" and
              any(re.fullmatch(r"wl_pykinds:build_dict:\d+", x) for x in f))
    res.true("%s: build_dict under [kind: CPython pymalloc arenas] holds >= 95%% of its blocks (%d of %d)"
             % (prefix, got, truth["dict_blocks"]), 0.95 * truth["dict_blocks"] <= got <= truth["arenas_bytes"], "")
    note = ra.get("python_objects_outside_heap") or {}
    res.eq("%s: report.json python_objects_outside_heap.shown" % prefix, note.get("shown"), True)
    res.eq("%s: report.json python_objects_outside_heap bytes == the kind's" % prefix,
           note.get("pymalloc_arenas_bytes"), kind)
    text = read_text(os.path.join(outdir, "report.txt"))
    from_mib = "%.2f MiB" % (kind / MiB) if kind else "?"
    lines_txt = [ln for ln in text.splitlines() if "Python objects outside the heap view: " + from_mib in ln]
    res.eq("%s: the text names the figure (%s) twice: first screen and RSS section" % (prefix, from_mib),
           len(lines_txt), 2)
    res.true("%s: the note points to rss.svg and --python-objects" % prefix,
             all("rss.svg" in ln and "--python-objects" in ln for ln in lines_txt) and lines_txt,
             short(" | ".join(lines_txt), 400))
    first = text.find("Python objects outside the heap view")
    res.true("%s: the note is on the first screen (before TOP STACKS)" % prefix,
             0 <= first < text.find("TOP STACKS"), "at %d" % first)


def run_node(ctx):
    res = ctx.res
    prefix = "rsskinds/node/launch"
    if not res.wanted(prefix):
        return
    node = shutil.which("node")
    if not node:
        res.skip(prefix, "node not on PATH")
        return
    outdir = os.path.join(ctx.tmp, "rsskinds-node")
    rc, err, out = node_run(ctx, node, "launch", [node] + NODE_PERF_FLAGS + NODE_GC_FLAGS + [NODE_OBJ_JS],
                            outdir)
    if rc is None:
        res.fail(prefix, err)
        return
    if not res.eq("%s: peaktrace exit status" % prefix, rc, 0):
        return
    before = re.search(r"^js: rss_before (\d+)$", out, re.M)
    after = re.search(r"^js: rss_after (\d+)$", out, re.M)
    if not res.true("%s: the script's own figures" % prefix, before and after, short(out, 200)):
        return
    grew = int(after.group(1)) - int(before.group(1))
    rep = load_report(res, prefix, outdir)
    if rep is None:
        return
    v8 = ((rep.get("rss_attribution") or {}).get("by_kind_at_peak") or {}).get("v8_heap_bytes", 0)
    res.true("%s: V8 heap kind holds >= 60%% of the %d bytes the script grew by (%d, %.0f%%)"
             % (prefix, grew, v8, 100.0 * v8 / max(grew, 1)),
             grew > 32 * MiB and 0.6 * grew <= v8 <= grew + 64 * MiB, "")
    lines = folded(os.path.join(outdir, "rss.folded"))
    got = sum(v for f, v in lines if f[0] == "[kind: V8 heap]" and
              any(re.match(r"^JS:\S?%s\b" % NODE_OBJ_FUNC, x) for x in f))
    res.true("%s: %s under [kind: V8 heap] holds >= 60%% of the growth (%d, %.0f%%)"
             % (prefix, NODE_OBJ_FUNC, got, 100.0 * got / max(grew, 1)), got >= 0.6 * grew, "")


def run_section(ctx):
    wl = ctx.built.get("wl_rssobj", {}).get("fp")
    for mode in ("launch", "attach"):
        run_objects(ctx, wl, mode)
    for mode in ("launch", "attach"):
        run_python(ctx, mode)
    run_node(ctx)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bounded: a target's perf map read within budgets, and a stop request honoured (issue 23,
findings 2 and 3). The target is Debian's python3 sleeping (a real process with a real
allocator, no JIT of its own); the test writes its /tmp/perf-PID.map, so the file's layout is
the truth every figure is checked against.

  bounded/sparse-hole: 20 well-formed lines, a line of 'x' without a newline (2,000 bytes in
      all), then a 20 GiB hole (truncate). main's reader read the hole again at every refresh
      (-d 5 ran 646 s, SIGINT ignored, no report). Here: -d 5 ends in well under 60 s, exit 0,
      the report written, the 20 lines kept (report.json perf_map.used_lines, used_bytes: the
      file's own), every other byte counted cut (errors.perf_map_cut = size - the 20 lines'
      bytes, perf_map.cut.hole_bytes >= 20 GiB - 64 KiB), the cut named in report.txt's DATA
      LOSS section and in "caveats".
  bounded/1gib: a 1 GiB map of real lines (57 bytes each). The unbounded reader took 3.3 GB;
      here peaktrace's VmHWM (polled in /proc while it runs) stays below 300 MiB, the lines kept
      are exactly the budget's (64 MiB / 128 = 524,288 lines, the first ones: used_bytes =
      524,288 x 61), and what was not kept or not read adds up to the file's size.
  bounded/sigint: a 1 GiB map of lines over the 4 KiB line cap (skipped unbuffered), read with
      --perf-map-max 2G, so the reader is still going through it when SIGINT comes 2 s after the
      tracing line:
      peaktrace exits 0 within 5 s of it with a report whose perf map is partly unread
      (cut.unread_bytes > 0, stop or budget said), and no uprobe breakpoint is left in the
      target's libc text (tracing.breakpoints_left).
  bounded/forged-elf: the target maps (PROT_EXEC) a copy of /bin/true whose header claims 50M
      sections (extended numbering) over a sparse 3.2 GB file: libelf built a descriptor for
      each (main: still opening it after 60 s, 4 GB). Here it is refused before libelf reads it:
      -d 5 ends in < 60 s, exit 0, VmHWM < 300 MiB, the file counted in unwind_file_failed.
"""

import json
import os
import re
import signal
import struct
import time

from harness import Proc, short
from tracing import breakpoints_left

GiB = 1 << 30
MiB = 1 << 20
# Debian's python3, not the pyenv shim: a plain process whose /tmp/perf-PID.map is ours to write.
PY = "/usr/bin/python3"
TARGET = "import time\nprint('ready', flush=True)\ntime.sleep(600)\n"


def start_target():
    t = Proc([PY, "-c", TARGET])
    if not t.wait_for("out", r"^ready$"):
        t.kill()
        return None
    return t


def write_lines(f, total, line_fn, per_chunk=100000):
    """Lines line_fn(i) until total bytes are written (a whole line more at most)."""
    n = i = 0
    while n < total:
        chunk = b"".join(line_fn(k) for k in range(i, i + per_chunk))
        f.write(chunk)
        n += len(chunk)
        i += per_chunk
    return n


def run_pt(pt, pid, outdir, extra=(), sigint_after=None):
    """peaktrace -p pid; its VmHWM polled until it exits. Returns (rc, wall s, hwm bytes,
    stderr, seconds from SIGINT to exit or None, breakpoints left at the exit or None)."""
    pr = Proc([pt, "-p", pid, "-o", outdir] + list(extra))
    t0 = time.monotonic()
    # SIGINT once tracing began (before that, peaktrace has no handler yet: loading under load
    # can take seconds), and sigint_after s later.
    if sigint_after is not None:
        pr.wait_for("err", r"^peaktrace: tracing PID %d\b" % pid)
        t1 = time.monotonic()
    hwm, tsig = 0, None
    while pr.running():
        try:
            with open("/proc/%d/status" % pr.pid) as f:
                for l in f:
                    if l.startswith("VmHWM:"):
                        hwm = max(hwm, int(l.split()[1]) * 1024)
        except OSError:
            pass
        if sigint_after is not None and tsig is None and time.monotonic() - t1 >= sigint_after:
            pr.signal(signal.SIGINT)
            tsig = time.monotonic()
        if time.monotonic() - t0 > 120:
            break
        time.sleep(0.05)
    rc = pr.wait(5)
    end = time.monotonic()
    return rc, end - t0, hwm, pr.err, (end - tsig) if tsig else None


def load(res, name, outdir):
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        res.fail("%s: report.json" % name, "unreadable: %s" % e)
        return None


def check_caveat(res, name, outdir, rep, cut):
    cav = [c for c in rep.get("caveats", []) if c.get("counter") == "perf_map_cut"]
    res.true("%s: caveats names perf_map_cut with its count" % name,
             len(cav) == 1 and cav[0].get("count") == cut and "stacks" in cav[0].get("affects", []), cav)
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError as e:
        res.fail("%s: report.txt" % name, str(e))
        return
    loss = txt[txt.find("DATA LOSS AND DISTORTION"):]
    res.true("%s: report.txt's DATA LOSS names perf_map_cut %d" % (name, cut),
             re.search(r"^  perf_map_cut\s+%d\s+bytes of the JIT's perf map" % cut, loss, re.M) is not None,
             short(loss, 600))


def sparse_hole(ctx, name):
    res, pt = ctx.res, ctx.pt
    t = start_target()
    if not t:
        res.fail(name, "python3 target never became ready")
        return
    pm = "/tmp/perf-%d.map" % t.pid
    good = b"".join(b"%x 10 jit_fn_%d\n" % (0x7f0000000000 + i * 16, i) for i in range(20))
    size = 2000 + 20 * GiB
    try:
        with open(pm, "wb") as f:
            f.write(good + b"x" * (2000 - len(good)))
            f.truncate(size)
        outdir = os.path.join(ctx.tmp, "bounded-hole")
        rc, wall, hwm, err, _ = run_pt(pt, t.pid, outdir, ["-d", "5"])
    finally:
        t.kill()
        os.unlink(pm)
    res.true("%s: -d 5 ends in under 60 s (main: 646 s)" % name, wall < 60, "%.1f s" % wall)
    res.eq("%s: exit status" % name, rc, 0)
    rep = load(res, name, outdir)
    if not rep:
        return
    p = rep.get("perf_map") or {}
    res.eq("%s: perf_map.bytes = the file's size" % name, p.get("bytes"), size)
    res.eq("%s: the 20 well-formed lines kept" % name, p.get("used_lines"), 20)
    res.eq("%s: their bytes" % name, p.get("used_bytes"), len(good))
    cut = size - len(good)
    res.eq("%s: errors.perf_map_cut = every other byte" % name, rep["errors"].get("perf_map_cut"), cut)
    res.eq("%s: perf_map.cut_bytes" % name, p.get("cut_bytes"), cut)
    c = p.get("cut", {})
    res.true("%s: the hole passed unread, counted (hole_bytes >= 20 GiB - 64 KiB)" % name,
             c.get("hole_bytes", 0) >= 20 * GiB - 65536, c)
    res.eq("%s: garbage_bytes = the cut (the 'x' line runs into the hole)" % name, c.get("garbage_bytes"), cut)
    res.true("%s: peaktrace's VmHWM below 300 MiB" % name, hwm < 300 * MiB, "%.1f MiB" % (hwm / MiB))
    check_caveat(res, name, outdir, rep, cut)


def one_gib(ctx, name):
    res, pt = ctx.res, ctx.pt
    t = start_target()
    if not t:
        res.fail(name, "python3 target never became ready")
        return
    pm = "/tmp/perf-%d.map" % t.pid
    # 57 bytes a line: "7f00000xxxxx 10 " (16), 32 J, "_", 7 digits, "\n"
    line = lambda i: b"%x 10 %s_%07d\n" % (0x7f0000000000 + i * 16, b"J" * 32, i)
    ll = len(line(0))
    try:
        with open(pm, "wb") as f:
            size = write_lines(f, GiB, line)
        outdir = os.path.join(ctx.tmp, "bounded-1gib")
        rc, wall, hwm, err, _ = run_pt(pt, t.pid, outdir, ["-d", "5"])
    finally:
        t.kill()
        os.unlink(pm)
    res.eq("%s: exit status" % name, rc, 0)
    res.true("%s: peaktrace's VmHWM below 300 MiB (the unbounded reader: 3.3 GB)" % name,
             0 < hwm < 300 * MiB, "%.1f MiB" % (hwm / MiB))
    res.true("%s: ends in under 60 s" % name, wall < 60, "%.1f s" % wall)
    rep = load(res, name, outdir)
    if not rep:
        return
    p = rep.get("perf_map") or {}
    want = 64 * MiB // 128
    res.eq("%s: perf_map.bytes = the file's size" % name, p.get("bytes"), size)
    res.eq("%s: lines kept = the budget's, 64 MiB / 128" % name, p.get("used_lines"), want)
    res.eq("%s: their bytes (%d-byte lines)" % (name, ll), p.get("used_bytes"), want * ll)
    c = p.get("cut", {})
    res.eq("%s: budget_reached" % name, c.get("budget_reached"), True)
    res.eq("%s: nothing kept or cut twice: used + cut = the file" % name,
           (p.get("used_bytes") or 0) + (p.get("cut_bytes") or 0), size)
    res.eq("%s: errors.perf_map_cut" % name, rep["errors"].get("perf_map_cut"), size - want * ll)
    check_caveat(res, name, outdir, rep, size - want * ll)


def sigint(ctx, name):
    res, pt = ctx.res, ctx.pt
    t = start_target()
    if not t:
        res.fail(name, "python3 target never became ready")
        return
    pm = "/tmp/perf-%d.map" % t.pid
    long_line = lambda i: b"%x 10 %s\n" % (0x7f0000000000 + i * 16, b"L" * 8192)
    try:
        with open(pm, "wb") as f:
            size = write_lines(f, GiB, long_line, per_chunk=2000)
        outdir = os.path.join(ctx.tmp, "bounded-sigint")
        rc, wall, hwm, err, took = run_pt(pt, t.pid, outdir, ["--perf-map-max", "2G"], sigint_after=2)
        left = breakpoints_left(t.pid) if t.running() else None
    finally:
        t.kill()
        os.unlink(pm)
    res.eq("%s: exit status 0 after one SIGINT" % name, rc, 0)
    res.true("%s: exits within 5 s of SIGINT" % name, took is not None and took < 5,
             "took %s s; stderr %r" % (took and round(took, 2), short(err)))
    res.eq("%s: no uprobe breakpoint left in the target's libc text" % name, left, 0)
    rep = load(res, name, outdir)
    if not rep:
        return
    p = rep.get("perf_map") or {}
    c = p.get("cut", {})
    res.eq("%s: perf_map.bytes = the file's size" % name, p.get("bytes"), size)
    res.true("%s: the map was not read to its end: unread_bytes > 0" % name, c.get("unread_bytes", 0) > 0, c)
    res.true("%s: what was read was skipped as long lines (over 4 KiB)" % name,
             c.get("long_lines", 0) > 0 and c.get("long_bytes", 0) == size - c.get("unread_bytes", 0), c)
    res.eq("%s: errors.perf_map_cut = the file's size (nothing kept)" % name,
           rep["errors"].get("perf_map_cut"), size)
    res.true("%s: budget_stops or stop_requests counted" % name,
             (p.get("budget_stops") or 0) + (p.get("stop_requests") or 0) > 0, p)


def forged_elf(ctx, name):
    """A copy of /bin/true whose header claims 50M sections (ELF's extended numbering: e_shnum 0,
    section 0's sh_size the count) over a sparse 3.2 GB file, mapped executable by the target."""
    res, pt = ctx.res, ctx.pt
    path = os.path.join(ctx.tmp, "forged-shnum.elf")
    count, shoff = 50000000, 1 << 20
    with open("/bin/true", "rb") as f:
        img = bytearray(f.read())
    struct.pack_into("<Q", img, 0x28, shoff)   # e_shoff
    struct.pack_into("<H", img, 0x3c, 0)       # e_shnum: 0, the count is in section 0
    struct.pack_into("<H", img, 0x3e, 0)       # e_shstrndx
    s0 = bytearray(64)
    struct.pack_into("<Q", s0, 0x20, count)    # section 0's sh_size
    with open(path, "wb") as f:
        f.write(img)
        f.seek(shoff)
        f.write(s0)
        f.truncate(shoff + count * 64)
    code = ("import mmap, os, time\nfd = os.open(%r, os.O_RDONLY)\n"
            "m = mmap.mmap(fd, 1 << 20, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)\n"
            "print('ready', flush=True)\ntime.sleep(600)\n" % path)
    t = Proc([PY, "-c", code])
    try:
        if not t.wait_for("out", r"^ready$"):
            res.fail(name, "python3 target never mapped the file: %s" % short(t.err))
            return
        outdir = os.path.join(ctx.tmp, "bounded-elf")
        rc, wall, hwm, err, _ = run_pt(pt, t.pid, outdir, ["-d", "5"])
    finally:
        t.kill()
        os.unlink(path)
    res.eq("%s: exit status" % name, rc, 0)
    res.true("%s: -d 5 ends in under 60 s (main: still opening it at 60 s)" % name, wall < 60, "%.1f s" % wall)
    res.true("%s: peaktrace's VmHWM below 300 MiB (main: 4 GB at 60 s)" % name, 0 < hwm < 300 * MiB,
             "%.1f MiB" % (hwm / MiB))
    rep = load(res, name, outdir)
    if rep:
        res.true("%s: the refused file counted (unwind_file_failed >= 1)" % name,
                 rep["errors"].get("unwind_file_failed", 0) >= 1, rep.get("errors"))


def run_section(ctx):
    for name, fn in (("bounded/sparse-hole", sparse_hole), ("bounded/1gib", one_gib),
                     ("bounded/sigint", sigint), ("bounded/forged-elf", forged_elf)):
        if ctx.res.wanted(name):
            fn(ctx, name)

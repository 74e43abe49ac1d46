# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""security: what a hostile container controls never reaches the host's files or hangs peaktrace.

A real target in a container (tests/workloads/container_target.c: its own mount namespace whose
root is a directory built here, with the program and the libraries it links copied in) makes
32 x 1 MiB allocations through a JIT-like function in anonymous memory, which only its perf map
(/tmp/perf-PID.map inside the container) can name. peaktrace -p PID is run over it with that
perf map (or what stands in for it) as each case sets it up:

  control    a regular perf map owned by root: its name appears (the cases below test something)
  symlink    an absolute symlink to a host-only file of "hex hex SECRET" lines: SECRET nowhere
  owner      a regular perf map owned by another uid: not used (perf's rule)
  fifo       a FIFO at the perf map and at /etc/ld.so.preload: peaktrace ends, report written
  elffifo    every ELF file the target maps replaced by a FIFO after mapping: peaktrace ends, the
             allocator is still found and probed through map_files
  hosttmp    no perf map in the container, one in the host's /tmp owned by another uid with
             escape bytes: not used
  elfswap    the container's libc swapped for a symlink to a host-only copy once mapped: the host
             copy is never opened (inotify), the allocator still found (map_files), exit 0
"""

import ctypes
import os
import shutil
import signal
import struct

from harness import TIMEOUT, WORKLOAD_SRC, Proc, run, short
from tracing import TRACING_RX

SRC = os.path.join(WORKLOAD_SRC, "container_target.c")
IN_OPEN = 0x20
NOBODY = 65534


def build_root(tmp, exe, name):
    """ROOT/target plus the libraries exe links, at the paths ldd names."""
    root = os.path.join(tmp, "sec-" + name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "tmp"))
    os.makedirs(os.path.join(root, "etc"))
    shutil.copy(exe, os.path.join(root, "target"))
    rc, out, _ = run(["ldd", exe])
    for line in out.splitlines():
        parts = line.split()
        lib = parts[2] if len(parts) > 2 and parts[1] == "=>" else parts[0]
        if lib.startswith("/"):
            dst = root + lib
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.realpath(lib), dst)
    return root


class Inotify:
    """IN_OPEN on one file: did anyone open it."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        self.wd = self.libc.inotify_add_watch(self.fd, path.encode(), IN_OPEN)

    def opened(self):
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return False
        return any(struct.unpack_from("iIII", data, off)[1] & IN_OPEN
                   for off in range(0, len(data), 16) if off + 16 <= len(data))

    def close(self):
        os.close(self.fd)


def outputs_contain(outdir, needle):
    """The output files that contain needle (bytes)."""
    hits = []
    for dirpath, _, files in os.walk(outdir):
        for fn in files:
            with open(os.path.join(dirpath, fn), "rb") as f:
                if needle in f.read():
                    hits.append(fn)
    return hits


def trace(res, prefix, pt, tmp, exe, name, setup):
    """Start the target in its container, let setup(root, pid, addr, size) plant files, trace it
    with peaktrace -p, release it. Returns (peaktrace exit status or None, outdir, stderr)."""
    root = build_root(tmp, exe, name)
    outdir = os.path.join(tmp, "sec-out-" + name)
    shutil.rmtree(outdir, ignore_errors=True)
    tgt = Proc([exe, root])
    m = tgt.wait_for("out", r"^jit ([0-9a-f]+) ([0-9a-f]+)")
    if not m or not tgt.wait_for("out", r"^ready"):
        tgt.kill()
        res.fail(prefix, "the container target never became ready: %s" % short(tgt.err))
        return None, outdir, ""
    cleanup = setup(root, tgt.pid, m.group(1), m.group(2))
    pr = Proc([pt, "-q", "-p", tgt.pid, "-o", outdir])
    try:
        if not pr.wait_for("err", TRACING_RX % tgt.pid):
            rc = pr.wait(TIMEOUT)
            res.fail(prefix, "no 'peaktrace: tracing' line (exit %s): %s" % (rc, short(pr.err)))
            return None, outdir, pr.err
        tgt.signal(signal.SIGUSR1)
        res.eq("%s: target exit status" % prefix, tgt.wait(TIMEOUT), 0)
        rc = pr.wait(TIMEOUT)
        return rc, outdir, pr.err
    finally:
        pr.kill()
        tgt.kill()
        if cleanup:
            cleanup()


def run_section(ctx):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    if not res.wanted("security/"):
        return
    exe = os.path.join(ctx.build, "tests", "workloads", "container_target")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    rc, _, err = run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-Wall", SRC, "-o", exe],
                     timeout=120)
    if not res.true("security/build", rc == 0, "compiler failed: %s" % short(err)):
        return
    hostonly = os.path.join(tmp, "sec-hostonly")
    os.makedirs(hostonly, exist_ok=True)

    def perfmap(root, pid):
        return os.path.join(root, "tmp", "perf-%d.map" % pid)

    def line(addr, size, name):
        return "%s %s %s\n" % (addr, size, name)

    # control: the perf map is read at all, so the cases below mean something.
    def control(root, pid, addr, size):
        with open(perfmap(root, pid), "w") as f:
            f.write(line(addr, size, "peaktraceGoodJit"))
    p = "security/perfmap/control"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "control", control)
        if rc is not None and res.eq(p + ": peaktrace exit status", rc, 0):
            res.true(p + ": the container's perf map names the JIT frame",
                     outputs_contain(out, b"peaktraceGoodJit"), "no output names it")

    # symlink: an absolute symlink resolved against our root would read a host file.
    secret = os.path.join(hostonly, "secret.map")

    def symlink(root, pid, addr, size):
        with open(secret, "w") as f:
            f.write(line(addr, size, "PEAKTRACE_HOST_SECRET"))
        os.symlink(secret, perfmap(root, pid))
    p = "security/perfmap/symlink to a host file"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "symlink", symlink)
        if rc is not None and res.eq(p + ": peaktrace exit status", rc, 0):
            hits = outputs_contain(out, b"PEAKTRACE_HOST_SECRET")
            res.true(p + ": the host file's names in no output", not hits, "in %s" % hits)

    # owner: perf's rule, the target's uid or root.
    def owner(root, pid, addr, size):
        with open(perfmap(root, pid), "w") as f:
            f.write(line(addr, size, "peaktraceForeignJit"))
        os.chown(perfmap(root, pid), NOBODY, NOBODY)
    p = "security/perfmap/owned by another uid"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "owner", owner)
        if rc is not None and res.eq(p + ": peaktrace exit status", rc, 0):
            hits = outputs_contain(out, b"peaktraceForeignJit")
            res.true(p + ": not used", not hits, "in %s" % hits)
            res.true(p + ": ... and peaktrace says so, once",
                     err.count("is not used (owned by uid %d" % NOBODY) == 1, short(err))

    # fifo: a FIFO wherever peaktrace reads a whole file of the target.
    def fifo(root, pid, addr, size):
        os.mkfifo(perfmap(root, pid))
        os.mkfifo(os.path.join(root, "etc", "ld.so.preload"))
    p = "security/fifo at the perf map and ld.so.preload"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "fifo", fifo)
        if rc is not None and res.eq(p + ": peaktrace exit status (it ended)", rc, 0):
            res.true(p + ": report written", os.path.exists(os.path.join(out, "report.json")),
                     "no report.json: %s" % short(err))

    # elffifo: every ELF object the target maps (its executable, libc, ld.so...) replaced by a
    # FIFO after mapping: nothing blocks, and map_files still names the mapped inodes.
    def elffifo(root, pid, addr, size):
        for dirpath, _, files in os.walk(root):
            for f in files:
                path = os.path.join(dirpath, f)
                if os.path.isfile(path) and not os.path.islink(path) and \
                        open(path, "rb").read(4) == b"\x7fELF":
                    os.unlink(path)
                    os.mkfifo(path)
    p = "security/fifo at every mapped ELF file"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "elffifo", elffifo)
        if rc is not None and res.eq(p + ": peaktrace exit status (it ended)", rc, 0):
            res.true(p + ": the allocator still probed and named (through map_files)",
                     os.path.exists(os.path.join(out, "report.json")) and
                     outputs_contain(out, b"malloc"), "no report or no malloc: %s" % short(err))

    # hosttmp: nothing in the container, a planted map in the host's /tmp.
    def hosttmp(root, pid, addr, size):
        path = "/tmp/perf-%d.map" % pid
        with open(path, "w") as f:
            f.write(line(addr, size, "\x1b[31mPEAKTRACE_INJECTED\x1b[0m"))
        os.chown(path, NOBODY, NOBODY)

        def cleanup():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        return cleanup
    p = "security/perfmap/host tmp injection"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "hosttmp", hosttmp)
        if rc is not None and res.eq(p + ": peaktrace exit status", rc, 0):
            hits = outputs_contain(out, b"PEAKTRACE_INJECTED")
            res.true(p + ": the host's /tmp map not used", not hits, "in %s" % hits)

    # elfswap: the mapped libc replaced by a symlink to a host-only file.
    watch = {}

    def elfswap(root, pid, addr, size):
        host_libc = os.path.join(hostonly, "libc-hostonly.so")
        libc = None
        for dirpath, _, files in os.walk(root):
            if "libc.so.6" in files:
                libc = os.path.join(dirpath, "libc.so.6")
        shutil.copy(libc, host_libc)
        os.unlink(libc)
        os.symlink(host_libc, libc)
        watch["w"] = Inotify(host_libc)
    p = "security/elf swapped for a symlink to a host file"
    if res.wanted(p):
        rc, out, err = trace(res, p, pt, tmp, exe, "elfswap", elfswap)
        w = watch.get("w")
        if rc is not None and res.eq(p + ": peaktrace exit status", rc, 0):
            res.true(p + ": the host file never opened", w and not w.opened(),
                     "peaktrace opened the host file the symlink names")
            res.true(p + ": the allocator still probed (allocations seen)",
                     os.path.exists(os.path.join(out, "report.json")) and
                     outputs_contain(out, b"malloc"), "no report or no malloc: %s" % short(err))
        elif rc is not None:
            print("  stderr: " + short(err, 800))
        if w:
            w.close()

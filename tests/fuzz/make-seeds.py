#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/fuzz/make-seeds.py -- (re)make the seed corpora in tests/fuzz/corpus/NAME/.

    python3 tests/fuzz/make-seeds.py [--out tests/fuzz/corpus]

Small real inputs, one file each: .eh_frame / .eh_frame_hdr / .debug_frame sections cut with
objcopy from system libraries and from tiny objects built here with gcc, those tiny objects
themselves (symbols, build id, debuglink, DT_NEEDED), this process's /proc maps, smaps and status
lines, a made-up environment, perf map lines as Node and CPython write them, CPython 3.11+ location
tables and code objects, Runtime API requests and responses. The regression inputs of fixed bugs
(files named regress-*) are not made here: they are kept as found.
Needs gcc, objcopy, readelf (binutils) and python3 >= 3.11 (for co_linetable).
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

TINY_C = r"""
#include <stdlib.h>
#include <string.h>
int counter;
static int helper(int x) { return x * 3 + counter; }
int tiny_add(int a, int b) { return helper(a) + b; }
void *tiny_alloc(size_t n) { void *p = malloc(n); if (p) memset(p, 0, n); return p; }
void *malloc(size_t n);
int _ZN4tiny3fooEv(void) { return 42; }
"""

FRAMES_C = r"""
#include <alloca.h>
#include <string.h>
int leaf(int n) { char *b = alloca(n); memset(b, 1, n); return b[n / 2]; }
int mid(int n) { int r = 0; for (int i = 0; i < n; i++) r += leaf(i + 1); return r; }
int top(int n) { return mid(n) + 1; }
"""


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def section_info(path, name):
    """(vaddr, size) of a section, or None."""
    out = run("readelf", "-SW", path, text=True).stdout
    for line in out.splitlines():
        m = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and m.group(1) == name:
            return int(m.group(2), 16), int(m.group(3), 16)
    return None


def section_bytes(path, name, tmp):
    out = os.path.join(tmp, "sec.bin")
    run("objcopy", "-O", "binary", "--only-section=" + name, "--set-section-flags",
        name + "=alloc", path, out)
    with open(out, "rb") as f:
        return f.read()


def write(out, corpus, name, data):
    d = os.path.join(out, corpus)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def build_tiny(tmp):
    """A few tiny objects: (name, path)."""
    src = os.path.join(tmp, "tiny.c")
    with open(src, "w") as f:
        f.write(TINY_C)
    fr = os.path.join(tmp, "frames.c")
    with open(fr, "w") as f:
        f.write(FRAMES_C)
    small = ["-Os", "-Wl,-z,max-page-size=4096", "-Wl,-z,noseparate-code", "-Wl,--build-id"]
    objs = []
    so = os.path.join(tmp, "libtiny.so")
    run("gcc", "-shared", "-fPIC", *small, "-Wl,-soname,libtiny.so.1", src, "-o", so, "-lm")
    objs.append(("libtiny.so", so))
    stripped = os.path.join(tmp, "libtiny-stripped.so")
    dbg = os.path.join(tmp, "libtiny.debug")
    run("objcopy", "--only-keep-debug", so, dbg)
    run("objcopy", "--strip-all", "--add-gnu-debuglink=" + dbg, so, stripped)
    objs.append(("libtiny-stripped.so", stripped))
    dwarf = os.path.join(tmp, "frames-debug-frame.o")
    run("gcc", "-c", "-O1", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", fr,
        "-o", dwarf)
    objs.append(("frames-debug-frame.o", dwarf))
    frso = os.path.join(tmp, "libframes.so")
    run("gcc", "-shared", "-fPIC", *small, fr, "-o", frso)
    objs.append(("libframes.so", frso))
    return objs


def cfi_seed(mode, vaddr, datarel, data, hdr=b""):
    return struct.pack("<BQQH", mode, vaddr, datarel, len(hdr)) + hdr + data


def make_cfi(out, tmp, objs):
    libs = [("tiny", p) for n, p in objs if n in ("libtiny.so", "libframes.so")]
    for lib in ("/lib/x86_64-linux-gnu/libBrokenLocale.so.1",
                "/lib/x86_64-linux-gnu/libdl.so.2"):
        if os.path.exists(lib):
            libs.append((os.path.basename(lib), lib))
    for i, (name, path) in enumerate(libs):
        eh = section_info(path, ".eh_frame")
        if not eh or eh[1] > 16384:
            continue
        data = section_bytes(path, ".eh_frame", tmp)
        got = section_info(path, ".got")
        datarel = got[0] if got else 0
        write(out, "cfi", "eh_frame-%s" % os.path.basename(path), cfi_seed(0, eh[0], datarel, data))
        hdr = section_info(path, ".eh_frame_hdr")
        if hdr:
            hb = section_bytes(path, ".eh_frame_hdr", tmp)
            # Mode 2 lays the sections out itself (hdr, then eh_frame, after the ELF headers
            # at a page-aligned base): rewrite the header's eh_frame_ptr (pcrel sdata4) for it.
            base = 0x1000 * (i + 1)
            hoff = 64 + 56
            if len(hb) >= 8 and hb[1] == 0x1b:
                ptr = (base + hoff + len(hb)) - (base + hoff + 4)
                hb = hb[:4] + struct.pack("<i", ptr) + hb[8:]
            write(out, "cfi", "eh_frame_hdr-%s" % os.path.basename(path),
                  cfi_seed(2, base, 0, data, hb))
    for name, path in objs:
        if name.endswith(".o"):
            df = section_bytes(path, ".debug_frame", tmp)
            write(out, "cfi", "debug_frame-frames.o", cfi_seed(1, 0, 0, df))


def make_elf(out, objs):
    for name, path in objs:
        with open(path, "rb") as f:
            write(out, "elf", name, f.read())


def proc_text(path, limit_lines):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    return b"\n".join(lines[:limit_lines]) + b"\n"


def make_proc(out):
    write(out, "maps", "self-maps", proc_text("/proc/self/maps", 30))
    write(out, "maps", "odd-paths",
          b"7f0000000000-7f0000001000 r-xp 00001000 08:01 1234   /opt/my app/lib foo.so\n"
          b"7f0000002000-7f0000003000 r-xp 00000000 103:02 999   /tmp/x.so (deleted)\n"
          b"7f0000004000-7f0000005000 rw-s 00000000 00:01 77     /memfd:jit (deleted)\n"
          b"7f0000006000-7f0000007000 rw-p 00000000 00:00 0 \n"
          b"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   [vsyscall]\n")
    smaps = proc_text("/proc/self/smaps", 24 * 6)
    write(out, "smaps", "self-smaps", smaps)
    write(out, "smaps", "heaps",
          b"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
          b"Size:                132 kB\nRss:                 128 kB\n"
          b"7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \nRss:                2048 kB\n"
          b"7f0004000000-7f0008000000 ---p 00000000 00:00 0 \nRss:                   0 kB\n")
    write(out, "proc", "environ",
          b"PATH=/usr/bin:/bin\0HOME=/root\0MALLOC_ARENA_MAX=2\0"
          b"GLIBC_TUNABLES=glibc.malloc.arena_max=4:glibc.malloc.mmap_threshold=65536\0"
          b"LD_PRELOAD=/opt/lib/libjemalloc.so.2\0AWS_LAMBDA_RUNTIME_API=127.0.0.1:9001\0")
    write(out, "proc", "environ-cut", b"A=1\0AB=2\0B=\0A=3\0TRUNC=9")
    write(out, "proc", "comm-newline", b"py\nthon\0")


def make_perfmap(out):
    write(out, "perfmap", "node",
          b"3b1e4a0c2040 9c LazyCompile:~main /var/task/index.js:1\n"
          b"3b1e4a0c2100 1f8 Function:~handler /var/task/index.js:12\n"
          b"7f3a1c000000 20 Builtin:ArgumentsAdaptorTrampoline\n")
    write(out, "perfmap", "python",
          b"7f9e2c6a1000 b py::<module>:/var/task/app.py\n"
          b"7f9e2c6a100b b py::handler:/var/task/app.py\n"
          b"7f9e2c6a1016 0 py::zero:/var/task/app.py\n"
          b"7f9e2c6a1021 b _ZN4node5startEv\n"
          b"7f9e2c6a102c b partial line")


def linetables():
    code = compile("def f(a, b):\n    x = a + b\n    if x > 2:\n        return [i * 2 for i in range(x)]\n"
                   "    return (\n        a,\n        b)\n\nclass C:\n    def m(self):\n        pass\n",
                   "/var/task/app.py", "exec")
    out = []

    def walk(c):
        out.append((c.co_firstlineno, c.co_linetable))
        for k in c.co_consts:
            if hasattr(k, "co_linetable"):
                walk(k)
    walk(code)
    return out


PTR = 0xfffe << 48


def code_image(minor):
    """Memory image of one code object for 3.minor (python.c's offsets), with a type object
    named "code", two compact ASCII strings and a bytes object holding a location table."""
    off = {11: dict(filename=112, name=120, qualname=128, linetable=136, firstlineno=72),
           12: dict(filename=112, name=120, qualname=128, linetable=136, firstlineno=68),
           13: dict(filename=112, name=120, qualname=128, linetable=136, firstlineno=68)}[minor]
    ascii_size = 48 if minor == 11 else 40
    first, table = linetables()[1]
    img = bytearray(1024)
    code, typ, tpname, fname, qname, ltab = 0, 256, 320, 384, 512, 640

    def q(o, v):
        img[o:o + 8] = struct.pack("<Q", v)

    def pystr(o, s):
        q(o + 16, len(s))
        img[o + 32:o + 36] = struct.pack("<I", (1 << 2) | (1 << 5) | (1 << 6))  # kind 1, compact, ascii
        img[o + ascii_size:o + ascii_size + len(s) + 1] = s + b"\0"

    q(code + 8, PTR | typ)
    q(code + off["filename"], PTR | fname)
    q(code + off["qualname"], PTR | qname)
    q(code + off["name"], PTR | qname)
    q(code + off["linetable"], PTR | ltab)
    img[code + off["firstlineno"]:code + off["firstlineno"] + 4] = struct.pack("<i", first)
    q(typ + 24, PTR | tpname)
    img[tpname:tpname + 5] = b"code\0"
    pystr(fname, b"/var/task/app.py")
    pystr(qname, b"f")
    q(ltab + 16, len(table))
    img[ltab + 32:ltab + 32 + len(table)] = table
    return bytes(img)


def make_python(out):
    for i, (first, table) in enumerate(linetables()):
        write(out, "python", "linetable-%d" % i, struct.pack("<BiI", 0, first, 3) + table)
    for minor in (11, 12, 13):
        frames = [(0, 4), (0, 9), (0xffff, 1), (0, 0)]
        hdr = struct.pack("<BBB", 1, minor - 11, len(frames)) + b"".join(
            struct.pack("<HH", o, i) for o, i in frames)
        write(out, "python", "code-3.%d" % minor, hdr + code_image(minor))
    tag, bnd = 1 << 63, 1 << 62
    words = [tag | (5 << 44) | 0x1000, tag | bnd | 1, tag | (2 << 44) | 0x2000, tag | bnd | 2]
    write(out, "python", "splice", bytes([2, 4, 0, 1, 0, 1]) + b"".join(struct.pack("<Q", w) for w in words))


RID = b"8f2c5b1e-3a4d-4e6f-9b0a-1c2d3e4f5a6b"


def make_rapi(out):
    write(out, "rapi", "next", b"GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n")
    write(out, "rapi", "response", b"POST /2018-06-01/runtime/invocation/" + RID +
          b"/response HTTP/1.1\r\nHost: 127.0.0.1:9001\r\nContent-Length: 2\r\n\r\n{}")
    write(out, "rapi", "error", b"POST /2018-06-01/runtime/invocation/" + RID +
          b"/error HTTP/1.1\r\nLambda-Runtime-Function-Error-Type: Unhandled\r\n\r\n")
    write(out, "rapi", "init-error", b"POST /2018-06-01/runtime/init/error HTTP/1.1\r\n\r\n")
    write(out, "rapi", "streaming", b"POST /2018-06-01/runtime/invocation/" + RID +
          b"/response HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
          b"Lambda-Runtime-Function-Response-Mode: streaming\r\n\r\n")
    write(out, "rapi", "chunk-end", b"5\r\nhello\r\n0\r\n\r\n")


def make_host(out):
    def req(flags, method, url, headers=b"", body=b"", trailers=b"", piece=255):
        return bytes([flags, piece]) + method + b" " + url + b"\n" + headers + b"\n" + body + \
            (b"\n\n" + trailers if trailers else b"")
    inv = b"/2018-06-01/runtime/invocation/"
    write(out, "host", "next", req(8 | 4 | 32, b"GET", inv + b"next"))
    write(out, "host", "response", req(2 | 4 | 8, b"POST", inv + RID + b"/response",
                                       b"Content-Type: application/json\n", b'{"ok":true}', piece=3))
    write(out, "host", "error", req(2 | 4 | 8, b"POST", inv + RID + b"/error",
                                    b"Lambda-Runtime-Function-Error-Type: Runtime.Handled\n",
                                    b'{"errorMessage":"boom","errorType":"Error"}'))
    write(out, "host", "stream-error", req(2 | 4 | 8, b"POST", inv + RID + b"/response",
                                           b"Lambda-Runtime-Function-Response-Mode: streaming\n", b"partial",
                                           b"Lambda-Runtime-Function-Error-Type: Stream.Error\n"
                                           b"Lambda-Runtime-Function-Error-Body: eyJlcnJvck1lc3NhZ2UiOiJ4In0=\n"))
    write(out, "host", "init-error", req(8, b"POST", b"/2018-06-01/runtime/init/error",
                                         b"Lambda-Runtime-Function-Error-Type: Runtime.ImportModuleError\n",
                                         b'{"errorMessage":"no module"}'))
    write(out, "host", "bad-id", req(2 | 8, b"POST", inv + b"../../etc/response"))
    write(out, "host", "invoke", req(1, b"POST", b"/2015-03-31/functions/function/invocations",
                                     b"Content-Length: 9\n", b'{"mb":64}'))
    write(out, "host", "invoke-event", req(1, b"POST", b"/2015-03-31/functions/function/invocations",
                                           b"X-Amz-Invocation-Type: Event\nX-Amz-Client-Context: e30=\n", b"{}"))


def make_runtime(out):
    write(out, "runtime", "next", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
          b"Lambda-Runtime-Aws-Request-Id: " + RID + b"\r\nLambda-Runtime-Deadline-Ms: 1700000003000\r\n"
          b"Lambda-Runtime-Invoked-Function-Arn: arn:aws:lambda:us-east-1:012345678912:function:f\r\n"
          b"Lambda-Runtime-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793\r\n"
          b"Content-Length: 20\r\n\r\n{\"mb\": 64, \"fail\":1}")
    write(out, "runtime", "accepted-twice", b"HTTP/1.1 202 Accepted\r\nContent-Length: 16\r\n\r\n{\"status\":\"OK\"}"
          b"HTTP/1.1 202 Accepted\r\nContent-Length: 16\r\n\r\n{\"status\":\"OK\"}")
    write(out, "runtime", "chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
          b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
    write(out, "runtime", "to-eof", b"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nbody until the end")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        objs = build_tiny(tmp)
        make_cfi(a.out, tmp, objs)
        make_elf(a.out, objs)
    make_proc(a.out)
    make_perfmap(a.out)
    make_python(a.out)
    make_rapi(a.out)
    make_host(a.out)
    make_runtime(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

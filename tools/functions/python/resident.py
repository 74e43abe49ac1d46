# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""resident.py -- a Python Lambda handler that keeps memory in glibc's heap or in CPython's
pymalloc arenas on request, and says what its own RssAnon did (stdlib only).

    lambda-host --handler resident.keep -- python3 tools/functions/python/bootstrap.py

Event: {"strings": N, "buffers": M} (both optional, default 0).
  strings: N distinct short str objects ("s%09d", 58 bytes: pymalloc's 64-byte class), kept in
           slots of a list preallocated at import, so only pymalloc allocates while it runs;
  buffers: M bytearray(1000) kept the same way: each a 1001-byte malloc (glibc's main arena
           on the runtime's main thread) plus its 56-byte object in pymalloc.
The response: {"rss_anon_delta": RssAnon after - before (/proc/self/status), "pymalloc_arenas":
CPython's own count of its allocated arenas (sys._debugmallocstats, "# arenas allocated
current"), "arena_bytes": its arena size}.
"""
import re

from selfmem import debugmallocstats, rss_anon

SLOTS = 1 << 21
STRS = [None] * SLOTS
BUFS = [None] * (1 << 17)
USED = {"s": 0, "b": 0}


def mallocstats():
    """(arenas allocated now, arena size) from CPython's own statistics."""
    text = debugmallocstats()
    cur = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    size = re.search(r"(\d[\d,]*) arenas \* (\d[\d,]*) bytes/arena", text)
    num = lambda s: int(s.replace(",", ""))
    return (num(cur.group(1)) if cur else None, num(size.group(2)) if size else None)


def keep_strings(n):
    i = USED["s"]
    for k in range(i, i + n):
        STRS[k] = "s%09d" % k
    USED["s"] = i + n


def keep_buffers(m):
    i = USED["b"]
    for k in range(i, i + m):
        BUFS[k] = bytearray(1000)
    USED["b"] = i + m


def keep(event, context):
    n = int(event.get("strings", 0))
    m = int(event.get("buffers", 0))
    before = rss_anon()
    keep_strings(n)
    keep_buffers(m)
    delta = rss_anon() - before
    arenas, size = mallocstats()
    return {"rss_anon_delta": delta, "pymalloc_arenas": arenas, "arena_bytes": size}

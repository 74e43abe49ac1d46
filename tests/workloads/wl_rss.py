# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""wl_rss.py LOG: RSS that never passes through malloc, for the rss section (tests/sections/rss.py).

build_dict() builds a dict of 400,000 short strings (~50 MiB: CPython keeps them in the
pymalloc arenas it mmaps itself); build_buffer() a 32 MiB bytearray (one glibc-mmapped chunk,
zeroed by memset). Each logs its own effect on RssAnon (/proc/self/status) to LOG as
"NAME BYTES", and "peak_anon BYTES" once both are held. "--wait" first: write the ready line,
wait for SIGUSR1 (attach mode)."""
import os
import sys

# selfmem.py (RssAnon) is the bundled Python function's, shared with it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "functions", "python"))
from attachwait import wait_arg  # noqa: E402
from selfmem import rss_anon  # noqa: E402


def build_dict(n):
    d = {}
    for i in range(n):
        d["k%07d" % i] = "value-%d" % i
    return d


def build_buffer(n):
    return bytearray(n)


def main(argv):
    argv = wait_arg(argv)
    log = open(argv[0], "w")
    b = rss_anon()
    d = build_dict(400000)
    log.write("build_dict %d\n" % (rss_anon() - b))
    b = rss_anon()
    buf = build_buffer(32 << 20)
    log.write("build_buffer %d\n" % (rss_anon() - b))
    log.write("peak_anon %d\n" % rss_anon())
    log.close()
    return len(d) + len(buf) > 0


if __name__ == "__main__":
    main(sys.argv[1:])

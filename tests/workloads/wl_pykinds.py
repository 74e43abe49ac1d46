# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""wl_pykinds.py LOG: Python objects in pymalloc arenas, for the rsskinds section
(tests/sections/rsskinds.py).

build_dict() builds a dict of 400,000 short strings (~50 MiB of RSS: the strings in the
pymalloc arenas CPython mmaps itself, the dict's table from malloc); build_tail() then 240,000
more short strings in a list, so the RSS peak is at the end (the dict's last resize held its
old and new tables at once, 7 MiB more than the final table: the tail is more than that).
CPython's own accounting is the truth, logged to LOG as "NAME BYTES" lines, everything held:
  growth          RssAnon (/proc/self/status) after both less before
  table           sys.getsizeof(d): the dict's own table (malloc'ed, not in the arenas)
  dict_blocks     sys._debugmallocstats' "bytes in allocated blocks" after build_dict less
                  before: its objects' bytes in pymalloc pools (every one in a touched page)
  blocks_growth   the same after build_tail less before both
  arenas_bytes    "arenas allocated current" x 1 MiB at the end: all the arena address space
                  there is (the arenas' resident pages are at most this)
"--wait" first: write the ready line, wait for SIGUSR1 (attach mode). "--hold" after LOG: then
write "wl: sleeping" and sleep (up to 120 s) with everything held, for a tracer that detaches
while the target lives."""
import os
import re
import sys
import time

# selfmem.py (RssAnon, sys._debugmallocstats) is the bundled Python function's, shared with it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "functions", "python"))
from attachwait import wait_arg  # noqa: E402
from selfmem import debugmallocstats, rss_anon  # noqa: E402


def mallocstats():
    """(arenas allocated now, bytes in allocated blocks) from CPython's own statistics."""
    text = debugmallocstats()
    num = lambda rx: int(re.search(rx, text).group(1).replace(",", ""))
    return (num(r"# arenas allocated current\s*=\s*([\d,]+)"),
            num(r"# bytes in allocated blocks\s*=\s*([\d,]+)"))


def build_dict(n):
    d = {}
    for i in range(n):
        d["k%07d" % i] = "value-%d" % i
    return d


def build_tail(n):
    return ["t%07d" % i for i in range(n)]


def main(argv):
    argv = wait_arg(argv)
    log = open(argv[0], "w")
    _, blocks0 = mallocstats()
    b = rss_anon()
    d = build_dict(400000)
    _, blocks1 = mallocstats()
    t = build_tail(240000)
    growth = rss_anon() - b
    arenas, blocks2 = mallocstats()
    log.write("growth %d\ntable %d\ndict_blocks %d\nblocks_growth %d\narenas_bytes %d\n"
              % (growth, sys.getsizeof(d), blocks1 - blocks0, blocks2 - blocks0, arenas << 20))
    log.close()
    if argv[1:] == ["--hold"]:
        sys.stdout.write("wl: sleeping\n")
        sys.stdout.flush()
        time.sleep(120)
    return len(d) + len(t) > 0


if __name__ == "__main__":
    main(sys.argv[1:])

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""ct_handler.py -- the container tests' Lambda handler (tests/sections/container.py), run by
tools/functions/python/bootstrap.py inside the trixie rootfs.

Event {"mb": N}: grow() holds a bytearray of N MiB with every page written, reads its own RSS from
/proc/self/statm while it holds it (the peak of the invocation: nothing bigger is alive before or
after) and returns {"rss_bytes": RSS, "pid": its pid as the container sees it}."""

import os

PAGE = os.sysconf("SC_PAGE_SIZE")


def statm_rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def grow(mb):
    buf = bytearray(mb << 20)
    for off in range(0, len(buf), PAGE):
        buf[off] = 1
    return statm_rss()


def handler(event, context):
    return {"rss_bytes": grow(int(event.get("mb", 1))), "pid": os.getpid()}

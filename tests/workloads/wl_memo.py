# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""wl_memo.py LOG: the Python counterpart of wl_memo.c, for the light section's memo case.

fill_a and fill_b are the same code in two Python functions, called alternately from one loop:
each calls touch(), which writes one byte of a new page of the caller's own private anonymous
mmap (madvised MADV_NOHUGEPAGE: one 4 KiB page per fault). The write runs in the same native
frames for both (the interpreter loop and mmap's item assignment, at the same native rsp), and
touch's Python frame is the same code at the same instruction and data-stack address under
either caller: only the caller's Python frame differs (a memo keyed on the leaf Python frame
would not tell them apart). Logs "fill_a BYTES", "fill_b BYTES" (the pages each wrote, counted here: the truth) and
"grew BYTES" (RssAnon's growth over the loop). "--wait" first: the attach handshake."""
import mmap
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "functions", "python"))
from attachwait import wait_arg  # noqa: E402
from selfmem import rss_anon  # noqa: E402

PAGE = 4096
A_PAGES = 768     # 3 MiB
B_PAGES = 1280    # 5 MiB


def touch(m, k):
    m[k * PAGE] = 1


# The two callers have the same frame size, so touch's frame lands at the same address of the
# data stack under either, with the same code and instruction: only the caller's frame differs.
def fill_a(m, k):
    touch(m, k)


def fill_b(m, k):
    touch(m, k)


def main(argv):
    argv = wait_arg(argv)
    log = open(argv[0], "w")
    # Private: mmap.mmap(-1, n) alone is a shared mapping (shmem pages, not RssAnon).
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    ma, mb = mmap.mmap(-1, A_PAGES * PAGE, flags=flags), mmap.mmap(-1, B_PAGES * PAGE, flags=flags)
    for m in (ma, mb):
        if hasattr(mmap, "MADV_NOHUGEPAGE"):
            m.madvise(mmap.MADV_NOHUGEPAGE)
    na = nb = 0
    rss_anon()
    before = rss_anon()
    for k in range(max(A_PAGES, B_PAGES)):
        if k < A_PAGES:
            fill_a(ma, k)
            na += 1
        if k < B_PAGES:
            fill_b(mb, k)
            nb += 1
    log.write("grew %d\n" % (rss_anon() - before))
    log.write("fill_a %d\nfill_b %d\n" % (na * PAGE, nb * PAGE))
    log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""selfmem.py -- what a Python process reads of its own memory (stdlib only): the truth the
bundled resident.py handler answers with, and the one tests/workloads/wl_rss.py and
wl_pykinds.py log. Imported by the handler from its task root (tools/functions/python, on
sys.path through bootstrap.py), and by the workloads, which are run by path, from this folder
(they put it on sys.path themselves)."""
import os
import sys
import tempfile


def rss_anon():
    """This process's RssAnon (/proc/self/status) in bytes, -1 when not found."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return -1


def debugmallocstats():
    """The text of CPython's own pymalloc statistics: sys._debugmallocstats() writes to the C
    stderr, so fd 2 is caught in a file while it runs."""
    with tempfile.TemporaryFile() as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("ascii", "replace")

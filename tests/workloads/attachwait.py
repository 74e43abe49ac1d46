# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""attachwait.py: the attach handshake of the Python workloads run as `python3 SCRIPT --wait
ARGS` (tests/tracing.py trace_attach): wl_rss.py and wl_pykinds.py import it from their own
folder."""
import signal
import sys


def wait_arg(argv):
    """With "--wait" first: write the ready line, wait for SIGUSR1 (blocked first, so one sent
    before the wait is not lost), and return the arguments after it; else argv as it is."""
    if argv and argv[0] == "--wait":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        sys.stdout.write("wl: waiting for SIGUSR1\n")
        sys.stdout.flush()
        signal.sigwait({signal.SIGUSR1})
        argv = argv[1:]
    return argv

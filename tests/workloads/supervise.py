# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""supervise.py -- a supervisor that runs its runtime's command the way AWS's Runtime Interface
Emulator does (tests/sections/supervisor.py): in a new process group (Go's Setpgid), stopped
or reset with kill(-pgid, SIGKILL).

    supervise.py LOG -- CMD [ARGS...]

Starts CMD in a new process group whose id is CMD's pid. Appends to LOG, one line each:
  "child PID PGID"      at start;
  "killpg PGID"         on SIGUSR1: SIGKILL to CMD's process group (RIE stopping the runtime);
  "exited PID STATUS"   when CMD ends: "exit N" or "signal N" (what RIE would report).
SIGTERM/SIGINT: exit 0 (its host's shutdown; the host kills what is left). It does not exit
when CMD ends: RIE waits for the next invoke, and so the host sees this process as its runtime
throughout."""

import os
import signal
import sys
import time


def log(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write("usage: supervise.py LOG -- CMD [ARGS...]\n")
        return 2
    path, cmd = sys.argv[1], sys.argv[3:]
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, setpgroup=0)
    log(path, "child %d %d" % (pid, os.getpgid(pid)))

    def killpg(sig, frame):
        log(path, "killpg %d" % pid)
        os.killpg(pid, signal.SIGKILL)

    signal.signal(signal.SIGUSR1, killpg)
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))
    signal.signal(signal.SIGINT, lambda s, f: sys.exit(0))
    while True:
        try:
            _, st = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            break
        if os.WIFEXITED(st):
            log(path, "exited %d exit %d" % (pid, os.WEXITSTATUS(st)))
        elif os.WIFSIGNALED(st):
            log(path, "exited %d signal %d" % (pid, os.WTERMSIG(st)))
        else:
            continue
        break
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Pure-Python objects for --python-objects (tests/sections/pyobjects.py): a dict of strings, a
list of tuples, class instances, lists built by two threads at once, then a phase that grows and
frees, each in a named function.
Nothing here calls malloc for itself; every byte is a Python object (pymalloc, or malloc above
512 bytes). Run with -X tracemalloc it prints CPython's own accounting:
  wl: tracemalloc peak N     tracemalloc.get_traced_memory()[1] at the end
  wl: build_dict holds N     traced bytes build_dict's result holds (growth across the call)
  wl: traced before N        traced bytes live when main's work starts (what an attach misses)
and always "wl: work seconds S", the work's own duration (tools/bench: traced against untraced).
With --blocks (under -X tracemalloc) it stops when everything is built and prints
  wl: blocks held N          traced blocks live then less those live when the work started
(a snapshot allocates Python objects itself: never in the same run as the figures above).
With --wait it prints "wl: waiting for SIGUSR1" and starts on that signal (for an attach).
usage: wl_pyobjects.py [--wait] [--blocks] [N]"""
import signal
import sys
import threading
import time
import tracemalloc


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def build_dict(n):
    return {("key-%d" % i): ("value-%d" % (i * 7)) for i in range(n)}


def build_tuples(n):
    return [(i, i * 2.5, str(i)) for i in range(n)]


def build_points(n):
    return [Point(i, -i) for i in range(n)]


def grow_and_free(n):
    tmp = [[j * 1000 for j in range(20)] for i in range(n)]
    del tmp


def build_in_threads(n):
    """Two threads building at once: the interpreter switches between them mid-build, so their
    allocator calls interleave (each thread's nesting state is its own)."""
    out = [None, None]

    def worker(k):
        out[k] = [("t%d-%d" % (k, i), [i]) for i in range(n)]
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def traced():
    return tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0


def main():
    args = [a for a in sys.argv[1:] if a not in ("--wait", "--blocks")]
    n = int(args[0]) if args else 40000
    if "--wait" in sys.argv:
        signal.signal(signal.SIGUSR1, lambda *_: None)
        print("wl: waiting for SIGUSR1", flush=True)
        signal.pause()
    t0 = time.perf_counter()
    start = before = traced()
    blocks0 = len(tracemalloc.take_snapshot().traces) if "--blocks" in sys.argv else 0
    d = build_dict(n)
    held = traced() - before
    t = build_tuples(n)
    p = build_points(n // 2)
    th = build_in_threads(n // 4)
    if "--blocks" in sys.argv:
        print("wl: blocks held %d" % (len(tracemalloc.take_snapshot().traces) - blocks0), flush=True)
        return
    grow_and_free(n // 2)
    del d, t, p, th
    print("wl: work seconds %.4f" % (time.perf_counter() - t0))
    if tracemalloc.is_tracing():
        print("wl: tracemalloc peak %d" % tracemalloc.get_traced_memory()[1])
        print("wl: build_dict holds %d" % held)
        print("wl: traced before %d" % start)
    print("wl: done", flush=True)


main()

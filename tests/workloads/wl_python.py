# wl_python.py — a Python workload whose allocations the tests know exactly.
#
# bytearray(n) mallocs n + 1 bytes through realloc(NULL, n + 1) (PyByteArray_Resize from an
# empty bytearray; pymalloc passes anything above 512 bytes to the C allocator), so each site
# below allocates k * (n + 1) bytes under its own `module:function:line` frame. The lines are
# marked "SITE name": tests/run.py reads them from this file rather than hard-coding them.
#
#   wl_python.py [--wait] [--linger]
#     --wait: print wl_common.h's ready mark, then wait for SIGUSR1 (attach mode, as the C
#             workloads do); when done, print "wl: done" and wait for a signal again
#     --linger: sleep 1 s before exiting (launch mode: see the end of main)
import signal
import time
import sys

N = 100000


def alloc_a(k):
    for _ in range(k):
        b = bytearray(N)  # SITE a
    return k


class Holder:
    def alloc_b(self, k):
        for _ in range(k):
            b = bytearray(2 * N)  # SITE b


def nested_outer():
    return nested_inner()  # SITE outer


def nested_inner():
    b = bytearray(3 * N)  # SITE inner
    return 1


def recurse(d, n):
    if d == 0:
        b = bytearray(n)  # SITE deep
        return 0
    return recurse(d - 1, n) + 1  # SITE rec


def main():
    if "--wait" in sys.argv:
        signal.signal(signal.SIGUSR1, lambda *a: None)
        print("wl: waiting for SIGUSR1", flush=True)
        signal.pause()
    alloc_a(3)  # SITE main_a
    Holder().alloc_b(2)  # SITE main_b
    nested_outer()  # SITE main_outer
    recurse(40, 4 * N)  # SITE main_rec40
    sys.setrecursionlimit(1000)
    recurse(200, 5 * N)  # SITE main_rec200
    if "--wait" in sys.argv:
        # Attached tracers report while their target lives (a Lambda runtime does not exit):
        # stay until the test has stopped peaktrace.
        print("wl: done", flush=True)
        signal.pause()
    if "--linger" in sys.argv:
        # peaktrace names Python frames by reading code objects from the live process soon
        # after a new stack appears; interpreter shutdown frees them, so a program that ends
        # right after allocating can take some names with it (python_code_unreadable). A
        # second of life keeps the test about names, not about that race.
        time.sleep(1.0)


if __name__ == "__main__":
    main()  # SITE module

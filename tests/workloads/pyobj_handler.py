# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A Lambda handler made of Python objects only (tests/sections/pyobjects.py, per invocation):
build_dict builds a dict of event["n"] short strings, held until the handler returns.
Run directly (python3 -X tracemalloc pyobj_handler.py N...), it calls the handler once per N and
prints what tracemalloc saw each call add at its peak: "handler N peak_rise B"."""
import sys
import tracemalloc


def build_dict(n):
    return {("key-%d" % i): ("value-%d" % (i * 7)) for i in range(n)}


def handler(event, context):
    d = build_dict(event.get("n", 1000))
    return {"n": len(d)}


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        n = int(arg)
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        handler({"n": n}, None)
        print("handler %d peak_rise %d" % (n, tracemalloc.get_traced_memory()[1] - start))

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""keeper.py -- two Python Lambda handlers for leaks across invocations (stdlib only).

    lambda-host --handler keeper.keep -- python3 tools/functions/python/bootstrap.py
    lambda-host --handler keeper.churn -- python3 tools/functions/python/bootstrap.py

keep:  each invocation appends one bytearray(1 << 20) to the module-level list CACHE, in the
       function keep_cache: one malloc(1048577) per invocation (CPython 3.11 allocates a
       bytearray's buffer with PyObject_Malloc of size + 1, above pymalloc's 512-byte limit, so
       through malloc), kept forever; the 56-byte object itself lives in a pymalloc arena.
churn: each invocation makes the same bytearray(1 << 20) in churn_once and drops it before the
       handler returns: the same malloc and its free, nothing kept.
The response is {"kept": number of buffers in CACHE}.
"""

CACHE = []
SIZE = 1 << 20


def keep_cache():
    CACHE.append(bytearray(SIZE))


def churn_once():
    buf = bytearray(SIZE)
    buf[0] = 1
    return len(buf)


def keep(event, context):
    keep_cache()
    return {"kept": len(CACHE)}


def churn(event, context):
    churn_once()
    return {"kept": len(CACHE)}

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""function.py -- a Python Lambda handler with the two classic memory mistakes (stdlib only).

Run it with the bundled runtime (bootstrap.py) under lambda-host:

    lambda-host --handler function.handler -- python3 tools/functions/python/bootstrap.py

Event: {"mb": N, "return_body": false, "fail": false, "sleep": S}   (all optional; default N = 1,
at most 1024; "sleep": hold the result S seconds before returning, at most 60)

Per invocation, on top of the interpreter's ~10 MiB baseline:
  * copies its context: copy.deepcopy(CONTEXT), where CONTEXT (built once at import) is 2048
    bytearrays of 1 KiB -- each copy is 2048 malloc'd buffers of 1025 bytes plus the bytearray and
    list objects, about 2.2 MiB, alive until the handler returns;
  * buffers the whole response instead of streaming it: builds a list of N * 16 distinct str
    chunks of 64 KiB (N MiB, each chunk its own malloc of 65536 + 49 bytes), then ''.join()s them
    into one N MiB str while the list is still alive.
  So the handler's own peak is 2 * N MiB + ~2.2 MiB; everything is freed when it returns.
  * "return_body": true returns the document itself: the runtime's json.dumps adds one more
    N MiB str and .encode() one N MiB bytes object (peak ~4 * N MiB + 2.2 MiB), and above 6 MiB
    Lambda's response limit gives Function.ResponseSizeTooLarge.
    Otherwise the response is a summary: {"request_id", "bytes", "chunks", "context_items"}.
  * "fail": true raises RuntimeError (the /error path).
"""

import copy
import time

CHUNK = 64 * 1024
MAX_MB = 1024

# Module-level "context": configuration every request starts from (built during init).
CONTEXT = [bytearray(1024) for _ in range(2048)]


def render(mb):
    chunks = []
    for i in range(mb * (1 << 20) // CHUNK):
        # chr(c) * CHUNK makes a new 64 KiB object each time (no interning of long strings).
        chunks.append(chr(97 + i % 26) * CHUNK)
    return chunks, "".join(chunks)


def handler(event, context):
    mb = event.get("mb", 1) if isinstance(event, dict) else 1
    if not isinstance(mb, int) or isinstance(mb, bool) or not 0 <= mb <= MAX_MB:
        raise ValueError("mb must be an integer between 0 and %d" % MAX_MB)
    if event.get("fail"):
        raise RuntimeError("the event asked to fail")
    ctx = copy.deepcopy(CONTEXT)
    chunks, body = render(mb)
    # Hold what it made for a while (a slow handler: tracing stopped during an invocation).
    if event.get("sleep"):
        time.sleep(min(float(event["sleep"]), 60.0))
    if event.get("return_body"):
        return body
    return {"request_id": context.aws_request_id, "bytes": len(body), "chunks": len(chunks),
            "context_items": len(ctx)}

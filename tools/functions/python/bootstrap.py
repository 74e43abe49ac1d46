#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bootstrap.py -- a minimal Lambda runtime for Python, standard library only.

    lambda-host --handler function.handler -- python3 tools/functions/python/bootstrap.py

An event with "stream": N sends the response with Lambda's response streaming (chunked, N chunks
100 ms apart). Loads the module and function named by _HANDLER (MODULE.FUNCTION) from LAMBDA_TASK_ROOT (or this
file's folder), then loops: GET /runtime/invocation/next -> handler(event, context) -> POST
/runtime/invocation/{id}/response (or /error with the exception as Lambda's error JSON). Like the
official runtime it speaks over ONE keep-alive http.client connection, json.dumps the handler's
return value, and reports an import failure to /runtime/init/error before exiting.
"""

import http.client
import importlib
import json
import os
import sys
import time
import traceback

API_PREFIX = "/2018-06-01/runtime"


class LambdaContext:
    """The subset of the Python runtime's context object that handlers commonly use."""

    def __init__(self, request_id, deadline_ms, arn, trace_id):
        self.aws_request_id = request_id
        self.invoked_function_arn = arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self.trace_id = trace_id
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(0, self._deadline_ms - int(time.time() * 1000))


def error_json(exc):
    return json.dumps({
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }).encode()


def post(conn, path, body, error_type=None):
    headers = {"Content-Type": "application/json"}
    if error_type:
        headers["Lambda-Runtime-Function-Error-Type"] = error_type
    conn.request("POST", API_PREFIX + path, body=body, headers=headers)
    resp = conn.getresponse()
    text = resp.read()
    if resp.status != 202:
        # 413: the host already failed the invocation with Function.ResponseSizeTooLarge.
        print("bootstrap: POST %s: HTTP %d %s" % (path, resp.status, text.decode(errors="replace")),
              file=sys.stderr, flush=True)
    return resp.status


def load_handler(conn):
    spec = os.environ.get("_HANDLER", "function.handler")
    root = os.environ.get("LAMBDA_TASK_ROOT") or os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.dirname(os.path.abspath(__file__)), root):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        module_name, func_name = spec.rsplit(".", 1)
        return getattr(importlib.import_module(module_name), func_name)
    except Exception as exc:  # noqa: BLE001 -- every import failure is an init error
        kind = "Runtime.ImportModuleError" if isinstance(exc, ImportError) else \
            "Runtime.HandlerNotFound" if isinstance(exc, (AttributeError, ValueError)) else \
            "Runtime.UserCodeSyntaxError" if isinstance(exc, SyntaxError) else "Runtime.Unknown"
        msg = "Unable to import module '%s': %s" % (spec, exc)
        print("[ERROR] %s: %s" % (kind, msg), file=sys.stderr, flush=True)
        post(conn, "/init/error", json.dumps({"errorMessage": msg, "errorType": kind}).encode(),
             kind)
        sys.exit(1)


def post_streaming(conn, path, body, chunks, pause_s):
    """Lambda response streaming: the POST line and headers first, then the body as chunks of a
    chunked transfer, the invocation ending with the zero-length chunk."""
    conn.putrequest("POST", API_PREFIX + path)
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Lambda-Runtime-Function-Response-Mode", "streaming")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    step = max(1, (len(body) + chunks - 1) // chunks)
    for i in range(0, len(body), step):
        part = body[i:i + step]
        conn.send(b"%x\r\n%s\r\n" % (len(part), part))
        time.sleep(pause_s)
    conn.send(b"0\r\n\r\n")
    resp = conn.getresponse()
    resp.read()
    return resp.status


def main():
    api = os.environ.get("AWS_LAMBDA_RUNTIME_API")
    if not api or ":" not in api:
        sys.exit("bootstrap: AWS_LAMBDA_RUNTIME_API is not set (start me with lambda-host -- ...)")
    host, port = api.rsplit(":", 1)
    # One connection for the life of the runtime: http.client keeps it alive between requests
    # and reopens it by itself if the server ever closes it.
    conn = http.client.HTTPConnection(host, int(port))
    handler = load_handler(conn)
    while True:
        conn.request("GET", API_PREFIX + "/invocation/next")
        resp = conn.getresponse()
        body = resp.read()
        request_id = resp.getheader("Lambda-Runtime-Aws-Request-Id")
        if resp.status != 200 or not request_id:
            sys.exit("bootstrap: GET /invocation/next: HTTP %d" % resp.status)
        context = LambdaContext(request_id, int(resp.getheader("Lambda-Runtime-Deadline-Ms") or 0),
                                resp.getheader("Lambda-Runtime-Invoked-Function-Arn") or "",
                                resp.getheader("Lambda-Runtime-Trace-Id") or "")
        try:
            event = json.loads(body) if body else {}
            payload = json.dumps(handler(event, context)).encode()
        except Exception as exc:  # noqa: BLE001 -- every handler failure goes to /error
            post(conn, "/invocation/%s/error" % request_id, error_json(exc), "Unhandled")
        else:
            if isinstance(event, dict) and event.get("stream"):
                # {"stream": N}: stream the response in N chunks, 100 ms apart.
                post_streaming(conn, "/invocation/%s/response" % request_id, payload,
                               int(event["stream"]), 0.1)
            else:
                post(conn, "/invocation/%s/response" % request_id, payload)
        event = payload = body = None  # nothing of this invocation outlives it


if __name__ == "__main__":
    main()

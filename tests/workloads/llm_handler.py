# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""An LLM-style Lambda handler (tests/sections/aws_lambda.py, lambda/oom post-mortem), run by
tools/functions/python/bootstrap.py. Per request, as such handlers do:
  - copy_history: a deep copy of the conversation history (HISTORY, built at import: dicts and
    lists of token ids, ~6 MiB of them; the strings and the small ints are shared, deepcopy keeps them);
  - encode_attachments: event["attach_mb"] attachments of 1 MiB each, base64-encoded (1.33 MiB
    bytes objects: glibc mmapped chunks);
  - buffer_completion: a fake streamed completion (fake_llm_stream, event["tokens"] chunks of ~300
    characters, each its own str: ~350-byte objects, CPython's pymalloc) buffered whole into a
    list of strings before anything is sent: the part that grows without bound and, with a big
    "tokens", is killed by the sandbox's memory limit.
Its own view of its memory, logged to event["log"] (appended, one line each, written with
os.write so a SIGKILL loses none): "step NAME rss_anon=B" before each step (RssAnon from
/proc/self/status), and every 4 MiB of buffered strings "buffer held=B strings=N rss_anon=R rss_file=F",
held the sum of sys.getsizeof of the strings buffered so far (what those objects occupy in
pymalloc's pools, less the pools' own rounding and headers). tracemalloc is not used: tracing
every object would add its own allocations (a trace per string) to what is measured.
"""
import base64
import copy
import os
import sys

import selfmem

WORDS = ["the", "model", "streams", "tokens", "while", "the", "handler", "buffers", "every", "one"]


def make_history(messages=1000, tokens=600):
    return [{"role": "user" if i % 2 else "assistant",
             "content": "message %d: %s" % (i, " ".join(WORDS)),
             "token_ids": [(i * 31 + k) % 256 for k in range(tokens)],
             "meta": {"index": i, "scores": [k / 7 for k in range(8)]}} for i in range(messages)]


HISTORY = make_history()


class Log:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else -1

    def write(self, line):
        if self.fd >= 0:
            os.write(self.fd, (line + "\n").encode())

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)


def rss_file():
    """RssFile + RssShmem (/proc/self/status) in bytes: the resident pages a memory cgroup
    mostly does not charge to this process (shared with the page cache)."""
    got = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssFile:", "RssShmem:")):
                got += int(line.split()[1]) * 1024
    return got


def copy_history():
    return copy.deepcopy(HISTORY)


def encode_attachments(n):
    return [base64.b64encode(os.urandom(1 << 20)) for _ in range(n)]


def fake_llm_stream(n):
    for i in range(n):
        word = WORDS[i % len(WORDS)]
        yield 'data: {"id": %d, "delta": "%s"}\n\n' % (i, (word + " ") * (280 // (len(word) + 1)))


def buffer_completion(stream, log):
    parts, held, mark = [], 0, 0
    for chunk in stream:
        parts.append(chunk)
        held += sys.getsizeof(chunk)
        if held - mark >= 4 << 20:
            mark = held
            log.write("buffer held=%d strings=%d rss_anon=%d rss_file=%d" % (held, len(parts), selfmem.rss_anon(),
                                                                              rss_file()))
    return parts


def handler(event, context):
    log = Log(event.get("log"))
    try:
        log.write("step copy_history rss_anon=%d" % selfmem.rss_anon())
        history = copy_history()
        log.write("step encode_attachments rss_anon=%d" % selfmem.rss_anon())
        attachments = encode_attachments(event.get("attach_mb", 4))
        log.write("step buffer_completion rss_anon=%d" % selfmem.rss_anon())
        parts = buffer_completion(fake_llm_stream(event.get("tokens", 1000)), log)
        log.write("step done rss_anon=%d" % selfmem.rss_anon())
        return {"messages": len(history), "attachments": len(attachments), "chunks": len(parts),
                "chars": sum(len(p) for p in parts)}
    finally:
        log.close()

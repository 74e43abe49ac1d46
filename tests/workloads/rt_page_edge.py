# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A Lambda runtime loop whose "GET .../next" request is written from the last bytes of a page
followed by an inaccessible one, so that peaktrace's BPF cannot read its usual 128 bytes of the
write, only the first 39 (what a GET /next needs). Before each such write, on the same CPU, another
write leaves "next" followed by 'X' in the per-CPU scratch buffer the BPF side classifies writes in:
if the classification used the scratch beyond what was read, the 'X' would make "next X" no
GET /next and the invocation would be missed. The regression test of that fix (lambda section).

Debian's python3, standard library only (ctypes for the page layout). Runs under the project's
Lambda-like host (tools/lambda-host), which sets AWS_LAMBDA_RUNTIME_API.
"""

import ctypes
import mmap
import os
import socket

PAGE = mmap.PAGESIZE
REQ = b"GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: rt\r\n\r\n"
PRIME = (b"GET /2018-06-01/runtime/invocation/next" + b"X" * 89)[:128]

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.write.restype = ctypes.c_ssize_t
libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]


def edge_buffer():
    """REQ at the very end of a read-write page whose next page is PROT_NONE."""
    base = libc.mmap(None, 2 * PAGE, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
    if base in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    if libc.mprotect(base + PAGE, PAGE, 0):
        raise OSError(ctypes.get_errno(), "mprotect")
    addr = base + PAGE - len(REQ)
    ctypes.memmove(addr, REQ, len(REQ))
    return addr


def read_response(sock):
    """Headers (dict, lower-case names) and body of one HTTP/1.1 response with Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode()
    n = int(headers.get("content-length", "0"))
    while len(body) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return headers, body[:n]


def main():
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    host, port = os.environ["AWS_LAMBDA_RUNTIME_API"].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    devnull = os.open(os.devnull, os.O_WRONLY)
    addr = edge_buffer()
    while True:
        os.write(devnull, PRIME)
        if libc.write(sock.fileno(), addr, len(REQ)) != len(REQ):
            raise OSError(ctypes.get_errno(), "write")
        headers, body = read_response(sock)
        rid = headers["lambda-runtime-aws-request-id"]
        out = b'{"ok": true}'
        sock.sendall(b"POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\nHost: rt\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (rid.encode(), len(out), out))
        read_response(sock)


if __name__ == "__main__":
    main()

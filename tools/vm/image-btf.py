#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""image-btf.py IMAGE OUT: the kernel's BTF (.BTF, raw) cut out of an uncompressed kernel Image.

Debian's arm64 /boot/vmlinuz-* is the plain arm64 boot Image (no ELF headers, so no section
to name): .BTF is found by its header (struct btf_header, include/uapi/linux/btf.h: magic
0xeB9F, version 1, hdr_len 24) and its length is hdr_len + str_off + str_len. Exactly one
such header with a consistent length must be there; `bpftool btf dump file OUT format c`
then gives vmlinux.h without booting the kernel (make vmlinux-arm64).
"""
import struct
import sys

MAGIC = b"\x9f\xeb\x01\x00\x18\x00\x00\x00"


def btf_blobs(img):
    at = img.find(MAGIC)
    while at >= 0:
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", img, at + 4)
        end = at + hdr_len + str_off + str_len
        # The type section first, the strings after it, both inside the image.
        if type_off == 0 and str_off >= type_len and end <= len(img) and str_len > 0:
            yield img[at:end]
        at = img.find(MAGIC, at + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: image-btf.py IMAGE OUT")
    with open(sys.argv[1], "rb") as f:
        img = f.read()
    blobs = list(btf_blobs(img))
    if len(blobs) != 1:
        sys.exit("image-btf.py: %d BTF headers in %s (expected one)" % (len(blobs), sys.argv[1]))
    with open(sys.argv[2], "wb") as f:
        f.write(blobs[0])
    print("image-btf.py: %d bytes of BTF" % len(blobs[0]), file=sys.stderr)


if __name__ == "__main__":
    main()

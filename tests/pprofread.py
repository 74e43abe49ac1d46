# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Reading profile.pb.gz without peaktrace: a minimal protobuf reader (profile.proto uses varints
and length-delimited fields only), the mappings and per-function sample sums it gives, and
`go tool pprof` run in a home of its own (Pprof). Used by the pprof, rss and light sections."""

import gzip
import os

from harness import run


def varint(buf, i):
    v = shift = 0
    while True:
        c = buf[i]
        i += 1
        v |= (c & 0x7f) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def fields(buf):
    """(field number, int or bytes) for each field of one message."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        if key & 7 == 0:
            v, i = varint(buf, i)
        elif key & 7 == 2:
            n, i = varint(buf, i)
            v, i = bytes(buf[i:i + n]), i + n
        else:
            raise ValueError("wire type %d" % (key & 7))
        out.append((key >> 3, v))
    return out


def mappings(path):
    """[(filename, build_id)] of a profile.pb.gz."""
    with gzip.open(path) as f:
        top = fields(f.read())
    strings = [v.decode() for k, v in top if k == 6]
    out = []
    for k, v in top:
        if k == 3:
            m = dict(fields(v))
            out.append((strings[m.get(5, 0)], strings[m.get(6, 0)]))
    return out


class Pprof:
    def __init__(self, go, tmp):
        home = os.path.join(tmp, "gohome")
        os.makedirs(home, exist_ok=True)
        self.go = go
        self.env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
                        GOPATH=os.path.join(home, "gopath"), GOTOOLCHAIN="local", GOPROXY="off",
                        GOFLAGS="", PPROF_TMPDIR=home)

    def __call__(self, prof, *opts):
        return run([self.go, "tool", "pprof", "-top", "-nodecount=200"] + list(opts) + [prof],
                   timeout=120, env=self.env)


def pprof_rss(path, fn):
    """(sample type names, rss_peak_space bytes of the samples whose stack has function fn),
    read with the protobuf reader above."""
    with gzip.open(path) as f:
        top = fields(f.read())
    strings = [v.decode() for k, v in top if k == 6]
    types = [strings[dict(fields(v)).get(1, 0)] for k, v in top if k == 1]
    funcs = {d.get(1): strings[d.get(2, 0)] for d in (dict(fields(v)) for k, v in top if k == 5)}
    locs = {}
    for k, v in top:
        if k == 4:
            d = fields(v)
            lid = dict(d).get(1)
            locs[lid] = [funcs.get(dict(fields(ln)).get(1)) for kk, ln in d if kk == 4]
    if "rss_peak_space" not in types:
        return types, None
    col, total = types.index("rss_peak_space"), 0
    for k, v in top:
        if k != 2:
            continue
        d = fields(v)
        ids = [x for kk, b in d if kk == 1 for x in packed(b)]
        vals = [x for kk, b in d if kk == 2 for x in packed(b)]
        if any(fn in locs.get(i, []) for i in ids):
            total += vals[col]
    return types, total


def packed(b):
    out, i = [], 0
    while i < len(b):
        v, i = varint(b, i)
        out.append(v)
    return out

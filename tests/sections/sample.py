# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""sample: --sample-bytes on wl_sample: exact totals, per-stack estimates within 5 sd."""

import os
import re

from harness import run
from tracing import find_stack, load_report, trace_attach, trace_launch


# --sample-bytes: exact totals, unbiased per-stack estimates (tests/workloads/wl_sample.c)

SAMPLE_MEAN = 8192
# wl_sample's three sites: (frames[0] function, allocations, bytes each).
SAMPLE_SITES = [("scn_small", 60000, 48), ("scn_medium", 30000, 512), ("scn_large", 10000, 4096)]


def sample_expectations(mean):
    """Per site: (count, bytes, sd of the byte estimate, sd of the count estimate, p).

    An allocation of s bytes is sampled with p = 1 - exp(-s/N) and then weighs s/p bytes and
    1/p allocations. Over n independent allocations the byte estimate has variance
    n * p * (s/p)^2 - n * s^2 = n s^2 (1 - p) / p, the count estimate n (1 - p) / p."""
    import math
    out = {}
    for name, n, s in SAMPLE_SITES:
        p = -math.expm1(-s / mean)
        out[name] = (n, n * s, math.sqrt(n * s * s * (1 - p) / p), math.sqrt(n * (1 - p) / p), p)
    return out


def run_section(ctx):
    """100,000 allocations of 48/512/4096 bytes from three sites under --sample-bytes 8K.

    Totals, peaks and live figures must be exact (every block goes through the live table);
    per-stack estimates must be within 5 standard deviations of the truth (for N = 8 KiB:
    scn_small 2.88 MB +- 5.3%% per sd, scn_medium 15.36 MB +- 2.3%%, scn_large 40.96 MB
    +- 1.2%%; a false failure has probability ~6e-7 per check); the number of unwound
    allocations must be within 5 sd of sum(n p) = 6,102 (sd 66)."""
    res, built, pt, tmp = ctx.res, ctx.built, ctx.pt, ctx.tmp
    wl = built.get("wl_sample", {}).get("fp")
    exp = sample_expectations(SAMPLE_MEAN)
    total_bytes = sum(b for _, b, _, _, _ in exp.values())
    total_count = sum(n for n, _, _, _, _ in exp.values())
    want_hits = sum(n * p for n, _, _, _, p in exp.values())
    sd_hits = sum(n * p * (1 - p) for n, _, _, _, p in exp.values()) ** 0.5
    for mode in ("launch", "attach"):
        prefix = "sample/wl_sample/%s" % mode
        if not res.wanted(prefix):
            continue
        if not wl:
            res.fail(prefix, "wl_sample not built")
            continue
        outdir = os.path.join(tmp, "sample-" + mode)
        trace = trace_launch if mode == "launch" else trace_attach
        r = trace(pt, wl, [], outdir, extra=("--sample-bytes", "8K"))
        if r.why:
            res.fail(prefix, r.why)
            continue
        res.eq("%s: peaktrace exit status" % prefix, r.rc, 0)
        rep = load_report(res, prefix, outdir)
        if rep is None:
            continue
        t = rep.get("totals", {})
        want = {"alloc_count": total_count, "alloc_bytes": total_bytes, "free_count": total_count,
                "free_bytes": total_bytes, "live_count": 0, "live_bytes": 0,
                "peak_live_count": total_count, "peak_live_bytes": total_bytes}
        res.eq("%s: totals exact" % prefix, {k: t.get(k) for k in want}, want)
        sm = rep.get("sampling") or {}
        res.eq("%s: sampling.mean_bytes" % prefix, sm.get("mean_bytes"), SAMPLE_MEAN)
        res.eq("%s: sampled + unsampled == totals" % prefix,
               (sm.get("sampled_count", 0) + sm.get("unsampled_count", 0),
                sm.get("sampled_bytes", 0) + sm.get("unsampled_bytes", 0)), (total_count, total_bytes))
        hits = sm.get("sampled_count", -1)
        res.true("%s: unwound allocations %s within 5 sd of %.0f (sd %.0f)" % (prefix, hits, want_hits, sd_hits),
                 abs(hits - want_hits) <= 5 * sd_hits, "got %s" % hits)
        errs = {k: v for k, v in rep.get("errors", {}).items()
                if v and k not in ("unknown_free", "unwind_fp_fallback")}
        res.eq("%s: no data loss" % prefix, errs, {})
        stacks = rep.get("stacks", [])
        res.true("%s: no [unsampled] stack in the per-stack output" % prefix,
                 not any("unsampled" in str(f.get("func", "")) for s in stacks for f in s.get("frames", [])),
                 "an [unsampled] frame is listed")
        for name, (n, b, sd_b, sd_n, p) in exp.items():
            got = find_stack(rep, "^%s$" % name)
            res.true("%s: %s alloc_bytes %d within 5 sd of %d (sd %.0f)" % (prefix, name, got["alloc_bytes"], b, sd_b),
                     abs(got["alloc_bytes"] - b) <= 5 * sd_b, "off by %.1f sd" % ((got["alloc_bytes"] - b) / sd_b))
            res.true("%s: %s alloc_count %d within 5 sd of %d (sd %.0f)" % (prefix, name, got["alloc_count"], n, sd_n),
                     abs(got["alloc_count"] - n) <= 5 * sd_n + 1, "off by %.1f sd" % ((got["alloc_count"] - n) / sd_n))
            # Weights are a function of the size: every free takes back exactly what its
            # allocation added, and at the peak (all live) a stack holds its whole estimate.
            res.eq("%s: %s live at end exactly 0" % (prefix, name), (got["live_count"], got["live_bytes"]), (0, 0))
            res.eq("%s: %s free_bytes == alloc_bytes" % (prefix, name), got["free_bytes"], got["alloc_bytes"])
            res.eq("%s: %s peak_bytes == alloc_bytes (all live at the peak)" % (prefix, name),
                   got["peak_bytes"], got["alloc_bytes"])
        try:
            with open(os.path.join(outdir, "report.txt")) as f:
                txt = f.read()
        except OSError:
            txt = ""
        res.true("%s: text report says stacks are sampled estimates, totals exact" % prefix,
                 re.search(r"SAMPLED: stacks are unbiased estimates .* mean 8\.00 KiB.*totals and peaks above .* exact", txt),
                 "no SAMPLED line in report.txt")
    name = "sample/cli: bad --sample-bytes"
    if res.wanted(name):
        rc, _, err = run([pt, "--sample-bytes", "lots", "--", "true"])
        res.eq("%s: exit status" % name, rc, 2)
        rc, _, err = run([pt, "--sample-bytes", "8G", "--", "true"])
        res.eq("%s: above 4G, exit status" % name, rc, 2)

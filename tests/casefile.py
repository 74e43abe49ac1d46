# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/cases/*.json (format: tests/README.md): loading, the flavors and modes a case runs
in, its expectations per mode, and the checks of a report.json-shaped dict against them
(used by the ref section on the reference model and by the case section on peaktrace)."""

import copy
import glob
import gzip
import json
import os
import re

from harness import CASES_DIR, FLAVORS, OUTPUT_FILES, STACK_FIELDS, TOTAL_FIELDS, short

def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(CASES_DIR, "*.json"))):
        with open(path) as f:
            case = json.load(f)
        case.setdefault("name", os.path.splitext(os.path.basename(path))[0])
        cases.append(case)
    return cases


def merge(base, extra):
    """Deep merge for expectations: dicts merge, lists concatenate, scalars replace."""
    out = copy.deepcopy(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        elif isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = out[k] + copy.deepcopy(v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def case_flavors(case):
    fp = case.get("build", {}).get("fp")
    if fp is True:
        return ["fp"]
    if fp is False:
        return ["nofp"]
    return list(FLAVORS)


def case_modes(case):
    m = case.get("mode", ["launch", "attach"])
    return [m] if isinstance(m, str) else list(m)


def case_expect(case, mode):
    return merge(case.get("expect", {}), case.get("expect_" + mode, {}))


def frames_in_order(rxs, funcs):
    """True if every regex matches a function of funcs, in order (leaf first)."""
    i = 0
    for rx in rxs:
        while i < len(funcs) and not rx.search(funcs[i]):
            i += 1
        if i == len(funcs):
            return False
        i += 1
    return True


def select_stacks(stacks, sel, flavor, reference):
    """Stacks matched by a selector. The reference tracer only knows frames[0], so
    its runs ignore the narrowing frame1/frame conditions."""
    rx0 = re.compile(sel["frame0"]) if "frame0" in sel else None
    rx1 = re.compile(sel["frame1"]) if "frame1" in sel and not reference else None
    rxa = re.compile(sel["frame"]) if "frame" in sel and not reference else None
    rxs = [re.compile(r) for r in sel["frames"]] if "frames" in sel and not reference else []
    out = []
    for st in stacks:
        funcs = [str(fr.get("func", "")) for fr in st.get("frames", [])]
        if rx0 and not (funcs and rx0.search(funcs[0])):
            continue
        if rx1 and not (len(funcs) > 1 and rx1.search(funcs[1])):
            continue
        if rxa and not any(rxa.search(f) for f in funcs):
            continue
        if rxs and not frames_in_order(rxs, funcs):
            continue
        out.append(st)
    return out


def check_figures(res, prefix, report, expect, mode, flavor, reference=False):
    """Checks every expected figure of `expect` against a report.json-shaped dict."""
    totals = report.get("totals", {})
    want_totals = dict(expect.get("totals", {}))
    if "peak_live_bytes" in expect:
        want_totals["peak_live_bytes"] = expect["peak_live_bytes"]
    for k in TOTAL_FIELDS:
        if k in want_totals:
            res.eq("%s: totals.%s" % (prefix, k), totals.get(k), want_totals[k])

    stacks = report.get("stacks", [])
    for sel in expect.get("stacks", []):
        name = sel.get("name") or sel.get("frame0") or sel.get("frame") or " ".join(sel.get("frames", []))
        if sel.get("fp_only") and flavor != "fp":
            continue
        if reference and "frame0" not in sel:
            continue
        matched = select_stacks(stacks, sel, flavor, reference)
        for k in STACK_FIELDS:
            if k in sel:
                got = sum(int(st.get(k, 0)) for st in matched)
                res.eq("%s: stack %s %s" % (prefix, name, k), got, sel[k])


def check_invariants(res, prefix, report):
    """Accounting identities docs/json-report.md promises."""
    totals = report.get("totals", {})
    stacks = report.get("stacks", [])
    # report.json keeps the top --json-stacks N per figure; the rest is summed in stacks_left_out.
    out = report.get("stacks_left_out") or {}
    for k in ["alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes"]:
        res.eq("%s: sum(stacks.%s) + stacks_left_out == totals.%s" % (prefix, k, k),
               sum(int(s.get(k, 0)) for s in stacks) + int(out.get(k, 0)), totals.get(k))
    res.eq("%s: sum(stacks.peak_bytes) + stacks_left_out == totals.peak_live_bytes" % prefix,
           sum(int(s.get("peak_bytes", 0)) for s in stacks) + int(out.get("peak_bytes", 0)),
           totals.get("peak_live_bytes"))
    res.eq("%s: sum(stacks.peak_count) + stacks_left_out == totals.peak_live_count" % prefix,
           sum(int(s.get("peak_count", 0)) for s in stacks) + int(out.get("peak_count", 0)),
           totals.get("peak_live_count"))
    bad = [s for s in stacks
           if int(s.get("live_count", 0)) != int(s.get("alloc_count", 0)) - int(s.get("free_count", 0))
           or int(s.get("live_bytes", 0)) != int(s.get("alloc_bytes", 0)) - int(s.get("free_bytes", 0))]
    res.true("%s: every stack has live == alloc - free" % prefix, not bad,
             "%d stacks differ, first: %s" % (len(bad), short(json.dumps(bad[:1]))))
    res.true("%s: totals.live_bytes <= totals.peak_live_bytes" % prefix,
             int(totals.get("live_bytes", 0)) <= int(totals.get("peak_live_bytes", -1)),
             "live %s > peak %s" % (totals.get("live_bytes"), totals.get("peak_live_bytes")))


def check_errors(res, prefix, report, expect, mode):
    errors = report.get("errors")
    if not res.true("%s: report has errors{}" % prefix, isinstance(errors, dict), "missing"):
        return
    want = expect.get("errors", {})
    for k in sorted(set(errors) | set(want)):
        if k not in want and k == "unknown_free" and mode == "attach":
            continue   # blocks allocated before the attach may be freed while tracing
        res.eq("%s: errors.%s" % (prefix, k), errors.get(k), want.get(k, 0))


def check_first_screen(res, prefix, outdir, rep, expect):
    """The first 25 lines of report.txt name the peak (its exact byte count, which the case
    knows) and the function that allocated the top stack at the peak."""
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            head = "".join(f.readlines()[:25])
    except OSError as e:
        res.fail("%s: first screen" % prefix, str(e))
        return
    peak = expect.get("peak_live_bytes", expect.get("totals", {}).get("peak_live_bytes"))
    if peak is not None:
        res.true("%s: first screen has the peak (%d bytes)" % (prefix, peak),
                 re.search(r"\b%d bytes\b" % peak, head) is not None, head[:400])
    stacks = [s for s in rep.get("stacks", []) if s.get("peak_bytes") and s.get("frames")]
    if stacks:
        top = max(stacks, key=lambda s: s["peak_bytes"])
        func = top["frames"][0]["func"]
        res.true("%s: first screen has the top peak stack's function %r" % (prefix, func),
                 func in head, head[:600])


def check_outputs(res, prefix, outdir, stdout):
    missing = [f for f in OUTPUT_FILES
               if not os.path.isfile(os.path.join(outdir, f)) or os.path.getsize(os.path.join(outdir, f)) == 0]
    res.true("%s: output files exist and are non-empty" % prefix, not missing,
             "missing or empty: %s" % " ".join(missing))
    try:
        with gzip.open(os.path.join(outdir, "profile.pb.gz")) as f:
            ok = len(f.read()) > 0
        res.true("%s: profile.pb.gz is gzip" % prefix, ok, "empty profile")
    except (OSError, EOFError) as e:
        res.fail("%s: profile.pb.gz is gzip" % prefix, str(e))
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            first = next((l.strip() for l in f if l.strip()), "")
        # the first line may carry run-specific numbers; compare its first words
        head = " ".join(first.split()[:3])
        res.true("%s: text report on stdout" % prefix, head and head in stdout,
                 "stdout lacks %r" % head)
    except OSError as e:
        res.fail("%s: text report on stdout" % prefix, str(e))

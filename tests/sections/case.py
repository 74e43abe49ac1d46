# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""case: tests/cases/*.json under peaktrace, launch and attach, each build flavor."""

import os

from casefile import (case_expect, case_flavors, case_modes, check_errors, check_figures, check_first_screen,
                      check_invariants, check_outputs)
from harness import short
from tracing import load_report, trace_attach, trace_launch


def run_section(ctx):
    res, built, pt, tmp, keep_dirs = ctx.res, ctx.built, ctx.pt, ctx.tmp, ctx.keep_dirs
    for case in ctx.cases:
        wl, args = case["command"][0], case["command"][1:]
        for flavor in case_flavors(case):
            for mode in case_modes(case):
                prefix = "case/%s/%s/%s" % (case["name"], flavor, mode)
                if not res.wanted(prefix):
                    continue
                if wl not in built or flavor not in built[wl]:
                    res.fail(prefix, "workload %s_%s not built" % (wl, flavor))
                    continue
                outdir = os.path.join(tmp, "%s-%s-%s" % (case["name"], flavor, mode))
                trace = trace_launch if mode == "launch" else trace_attach
                r = trace(pt, built[wl][flavor], args, outdir, extra=tuple(case.get("peaktrace_args", ())),
                          stop=case.get("stop"))
                if r.why:
                    res.fail(prefix, r.why)
                    continue
                if not res.eq("%s: peaktrace exit status" % prefix, r.rc, 0):
                    print("  stderr: " + short(r.err, 1000))
                if mode == "attach":
                    res.eq("%s: workload exit status" % prefix, r.wl_rc, 0)
                rep = load_report(res, prefix, outdir)
                if rep is None:
                    continue
                keep_dirs[(case["name"], flavor, mode)] = outdir
                expect = case_expect(case, mode)
                tgt = rep.get("target", {})
                res.eq("%s: target.mode" % prefix, tgt.get("mode"), mode)
                res.eq("%s: target.pid" % prefix, tgt.get("pid"), r.target)
                res.eq("%s: target.exited" % prefix, tgt.get("exited"), True)
                res.eq("%s: target.exit_status" % prefix, tgt.get("exit_status"),
                       expect.get("exit_status", 0))
                res.eq("%s: unwind" % prefix, rep.get("unwind"), expect.get("unwind", "dwarf"))
                check_figures(res, prefix, rep, expect, mode, flavor)
                check_errors(res, prefix, rep, expect, mode)
                check_invariants(res, prefix, rep)
                check_outputs(res, prefix, outdir, r.out)
                check_first_screen(res, prefix, outdir, rep, expect)

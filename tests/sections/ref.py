# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""ref: each case's expected figures re-derived without peaktrace or BPF (ref_preload.so +
ref_model(): tests/refmodel.py)."""

import json

from casefile import case_expect, case_flavors, case_modes, check_figures
from refmodel import Symbols, ref_model, run_reference


def run_section(ctx):
    res, cases, built, ref_so, tmp = ctx.res, ctx.cases, ctx.built, ctx.ref_so, ctx.tmp
    syms = Symbols()
    for case in cases:
        wl, args = case["command"][0], case["command"][1:]
        for flavor in case_flavors(case):
            for mode in case_modes(case):
                prefix = "ref/%s/%s/%s" % (case["name"], flavor, mode)
                if not res.wanted(prefix):
                    continue
                if ref_so is None or wl not in built or flavor not in built[wl]:
                    res.fail(prefix, "workload or ref_preload.so not built")
                    continue
                exe = built[wl][flavor]
                lines, rc, why = run_reference(exe, args, mode, case.get("stop"), ref_so, tmp)
                if why:
                    res.fail(prefix, why)
                    continue
                res.eq("%s: workload exit status" % prefix, rc, 0)
                model = ref_model(lines, mode == "attach", exe, syms)
                if ctx.print_ref:
                    print(json.dumps({"case": case["name"], "flavor": flavor, "mode": mode,
                                      "totals": model["totals"], "errors": model["errors"],
                                      "stacks": [dict(s, frames=s["frames"][0]["func"]) for s in model["stacks"]]},
                                     indent=1))
                res.eq("%s: no tie at the live-heap peak" % prefix, model["ties"], 0)
                check_figures(res, prefix, model, case_expect(case, mode), mode, flavor, reference=True)

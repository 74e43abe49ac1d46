# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""node under peaktrace (node_run: launched, or attached and started by SIGUSR2) and RSS by page's
workload (a million JS objects in V8's heap: mmap'd pages, never malloc, by JS function): shared
by the node and rsskinds sections."""

import os
import signal

from harness import TIMEOUT, WORKLOAD_SRC, Proc, short
from tracing import TRACING_RX

NODE_OBJ_JS = os.path.join(WORKLOAD_SRC, "js_objects.js")
NODE_OBJ_FUNC = "fillObjects"
NODE_PERF_FLAGS = ["--perf-basic-prof", "--interpreted-frames-native-stack"]


# V8's parallel scavenger promotes the surviving objects from worker threads, which fault the
# old-space pages in (their own stacks, not the JS function's: ~35-50% of the growth measured);
# scavenging on the main thread runs it inside the allocation that needed it, under fillObjects.
NODE_GC_FLAGS = ["--single-threaded-gc"]


def node_run(ctx, node, mode, argv, outdir, env=None):
    """node argv under peaktrace (launch, or attached to argv + --wait and started by SIGUSR2):
    (peaktrace exit status, peaktrace's stderr, node's stdout), or (None, why, None)."""
    pt, tmp = ctx.pt, ctx.tmp
    target = None
    if mode == "launch":
        pr = Proc([pt, "-q", "-o", outdir, "--"] + argv, env=env, cwd=tmp)
        m = pr.wait_for("err", r"^peaktrace: tracing (?:PID )?(\d+)\b")
        target = int(m.group(1)) if m else None
        rc = pr.wait(TIMEOUT)
        pr.kill()
        out = pr.out
        if not m:
            return None, "no 'peaktrace: tracing' line: %s" % short(pr.err), None
    else:
        js = Proc(argv + ["--wait"], env=env, cwd=tmp)
        target = js.pid
        if not js.wait_for("out", r"^js: waiting"):
            js.kill()
            return None, "node script never became ready: %s" % short(js.err), None
        pr = Proc([pt, "-q", "-p", js.pid, "-o", outdir])
        if not pr.wait_for("err", TRACING_RX % js.pid):
            js.kill()
            rc = pr.wait(TIMEOUT)
            return None, "no 'peaktrace: tracing' line (exit %s): %s" % (rc, short(pr.err)), None
        js.signal(signal.SIGUSR2)
        js.wait(TIMEOUT)
        rc = pr.wait(TIMEOUT)
        js.kill()
        out = js.out
    try:
        if target:
            os.unlink("/tmp/perf-%d.map" % target)
    except OSError:
        pass
    return rc, pr.err, out

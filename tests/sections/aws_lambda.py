# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""lambda: end-to-end tests (a section of tests/run.py): peaktrace on a real runtime loop served by the
project's Lambda-like host (tools/lambda-host), with the `oom` sample function, which mallocs
and touches exactly the number of MiB each event asks for (tools/functions/oom/oom.c).

Ground truth for each invocation's peak RSS is independent of peaktrace: before each invoke the
test writes 5 to /proc/PID/clear_refs (the kernel resets VmHWM to the current RSS), and after it
reads VmHWM back. The request ids come from the host's own REPORT lines.

Tolerance for peak RSS: the kernel's RSS counters are per-CPU with a batch of 32 pages, so each
kmem:rss_stat value can be off by up to 32 pages per CPU per counter (file, anon): 2 counters x
2 CPUs x 32 x 4 KiB = 512 KiB on this machine; the test allows 1 MiB.
"""

import json
import os
import re
import signal
import time

from harness import ROOT, TIMEOUT, Proc, expand_report, free_ports, run, short
from lambdafix import (MiB, TOLERANCE, attach_traced, clear_hwm, host_attached, host_built, host_runtime,
                       invocations, invoke_events, load_report, need_host, report_ids, status_bytes, stop_host,
                       stop_launched, stop_pidfile, tool, vmhwm, wait_pidfile)
from tracing import load_timeline



def check_timeline(res, name, outdir, ids, lines, truth=None, tol=1 << 20):
    """One start/end pair per invocation in timeline.jsonl, with
    invocations.jsonl's seq and the host's request ids, in order; with truth (each invocation's
    VmHWM, reset at its start), the samples inside each band reach it."""
    got = load_timeline(res, name + ": timeline", outdir)
    if not got:
        return
    header, samples, events, end = got
    want = [(l["seq"], l["request_id"]) for l in lines if l.get("seq", 0) >= 1]
    starts = [(e["seq"], e.get("id")) for e in events if e["event"] == "start"]
    ends = [e for e in events if e["event"] == "end"]
    res.eq(name + ": timeline starts = invocations.jsonl's seq and ids", starts, want)
    res.eq(name + ": ... = the host's request ids", [i for _, i in starts], ids)
    res.eq(name + ": one end per start, same seq, in order", [e["seq"] for e in ends], [s for s, _ in want])
    res.true(name + ": each end after its start, with outcome and peaks",
             all(any(s["seq"] == e["seq"] and s["t"] <= e["t"] for s in events if s["event"] == "start") and
                 e.get("outcome") == "response" and isinstance(e.get("rss_peak"), int) and
                 isinstance(e.get("heap_peak"), int) and "arena_resident" in e for e in ends),
             short(json.dumps(ends), 400))
    if truth is None:
        return
    # A sample line covers (previous line's t, its t]: the ones overlapping the band reach the
    # invocation's VmHWM (they may also hold what the one before still had when it began); the
    # ones wholly inside it do not exceed it.
    for k, e in enumerate(ends[:len(truth)]):
        st = [s for s in events if s["event"] == "start" and s["seq"] == e["seq"]][0]
        pairs = list(zip(samples, samples[1:]))
        over = [b["rss_max"] for a, b in pairs if b["t"] > st["t"] and a["t"] < e["t"]]
        within = [b["rss_max"] for a, b in pairs if a["t"] >= st["t"] and b["t"] <= e["t"]]
        res.true("%s: invocation %d: the samples over its band reach its VmHWM (less 1 MiB)" % (name, k + 1),
                 over and max(over) >= truth[k] - tol,
                 "timeline max %s, VmHWM %d" % (max(over or [0]), truth[k]))
        res.true("%s: invocation %d: the samples inside its band do not exceed it" % (name, k + 1),
                 max(within or [0]) <= truth[k] + tol, "max inside %s, VmHWM %d" % (max(within or [0]), truth[k]))


def run_lambda_section(ctx):
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    tools = need_host(res, "lambda/*", build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    if not any(res.wanted(n) for n in ("lambda/attach", "lambda/uprobe boundary", "lambda/--max-peak 100M",
                                         "lambda/--max-peak 200M", "lambda/oom kill")):
        return
    base = free_ports(40)

    def do_invoke(port, event):
        return run([invoke, "--port", str(port + 1), json.dumps(event)], timeout=timeout)

    def start_traced(name, tag, memory_mb, port, pt_args):
        """Host + runtime + peaktrace attached to it; (host, runtime pid, peaktrace) or None."""
        started = host_runtime(res, name, build, tmp, tag, memory_mb, port, [fn])
        if not started:
            return None
        h, rt = started
        p = attach_traced(res, name, pt, rt, pt_args, h)
        return (h, rt, p) if p else None

    # ---- attach: four invocations, each one's own peak vs the kernel's per-invocation VmHWM
    name = "lambda/attach"
    port = base
    outdir = os.path.join(tmp, "lambda-attach")
    started = start_traced(name, "attach", 512, port, ["-o", outdir])
    if not started:
        return
    h, rt, p = started
    sizes = [16, 128, 64, 8]
    truth = []
    for mb in sizes:
        clear_hwm(rt)
        rc, out, err = do_invoke(port, {"mb": mb})
        truth.append(vmhwm(rt))
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    rc = p.wait(timeout)
    res.eq("%s: peaktrace exit status" % name, rc, 0)
    time.sleep(0.2)
    ids = stop_host(h, timeout)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    invs = invocations(rep)
    res.eq("%s: host printed one REPORT per invoke" % name, len(ids), len(sizes))
    res.eq("%s: every invocation found once, with the host's request ids, in order" % name,
           [i["request_id"] for i in invs], ids)
    lines = []
    try:
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        res.fail(name + ": invocations.jsonl", str(e))
    res.eq("%s: invocations.jsonl has the same invocations" % name,
           [l["request_id"] for l in lines if l["seq"] >= 1], ids)
    check_timeline(res, name, outdir, ids, lines, truth, TOLERANCE)
    # Attaching is not Lambda's init phase: the row before the first invocation says so, in
    # report.json, invocations.jsonl and the text report alike.
    first = [i for i in rep.get("invocations", []) if i.get("seq") == 0]
    # The runtime was already waiting in GET .../next when peaktrace attached: the row ends when
    # that request is answered, with outcome "next" (it said "unfinished" before).
    res.eq("%s: the row since attaching is phase attached, ended by the runtime's next" % name,
           [(i["phase"], i["outcome"]) for i in first], [("attached", "next")])
    res.eq("%s: ... in invocations.jsonl too" % name,
           [(l["phase"], l["outcome"]) for l in lines if l["seq"] == 0], [("attached", "next")])
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError:
        txt = ""
    res.true("%s: ... and in the text report" % name,
             "(attached, before invocation 1)" in txt and "(init phase)" not in txt,
             re.findall(r"^ +- .*$", txt, re.M))
    for k, inv in enumerate(invs[:len(sizes)]):
        mb = sizes[k]
        what = "%s: invocation %d (%d MiB)" % (name, k + 1, mb)
        res.eq(what + ": outcome", inv["outcome"], "response")
        print("INFO %s: peaktrace peak RSS %d, VmHWM reset at start %d, diff %+d bytes"
              % (what, inv["rss_peak_bytes"], truth[k], inv["rss_peak_bytes"] - truth[k]), flush=True)
        res.true(what + ": true peak RSS agrees with VmHWM reset at its start (within 1 MiB)",
                 abs(inv["rss_peak_bytes"] - truth[k]) <= TOLERANCE,
                 "peaktrace %d, VmHWM %d, diff %d" % (inv["rss_peak_bytes"], truth[k],
                                                      inv["rss_peak_bytes"] - truth[k]))
        top = inv["top_stacks_at_peak"][0] if inv["top_stacks_at_peak"] else {}
        res.eq(what + ": largest block at its peak is exactly the event's", top.get("bytes"), mb * MiB)
        res.eq(what + ": ... allocated in grab()",
               (top.get("frames") or [{}])[0].get("func"), "grab")
        res.true(what + ": peak heap holds it", inv["heap_peak_bytes"] >= mb * MiB,
                 "heap peak %d" % inv["heap_peak_bytes"])
        res.eq(what + ": allocations", inv["alloc_count"] >= 1, True)
    if len(invs) >= 3:
        third = invs[2]
        res.true("%s: the 64 MiB invocation after a 128 MiB one is reported at ~64 MiB" % name,
                 64 * MiB <= third["rss_peak_bytes"] < 72 * MiB,
                 "peak %d" % third["rss_peak_bytes"])
        res.true("%s: ... while the high-water mark (Lambda's figure) still says >= 128 MiB" % name,
                 third["vmhwm_bytes"] >= 128 * MiB, "vmhwm %d" % third["vmhwm_bytes"])

    # ---- --boundary start=LIB:SYM,end=LIB:SYM: the runtime's own handler call as the boundary
    name = "lambda/uprobe boundary"
    port = base + 30
    started = host_runtime(res, name, build, tmp, "uprobe", 512, port, [fn])
    h, rt = started if started else (None, None)
    if rt:
        outdir = os.path.join(tmp, "lambda-uprobe")
        p = Proc([pt, "-q", "-p", rt, "-o", outdir, "--boundary", "start=oom:handle:entry,end=oom:handle:return"])
        if p.wait_for("err", r"^peaktrace: tracing PID"):
            for mb in (16, 64, 8):
                do_invoke(port, {"mb": mb})
            time.sleep(0.3)
            p.signal(signal.SIGINT)
            res.eq(name + ": exit status", p.wait(timeout), 0)
            try:
                with open(os.path.join(outdir, "report.json")) as f:
                    rep = expand_report(json.load(f))
                invs = invocations(rep)
                res.eq(name + ": mode in the report", rep.get("boundary"), "uprobe")
                res.eq(name + ": one invocation per handler call", len(invs), 3)
                res.eq(name + ": largest block at each peak",
                       [(i["top_stacks_at_peak"] or [{}])[0].get("bytes") for i in invs], [16 * MiB, 64 * MiB, 8 * MiB])
                res.true(name + ": each peak RSS is its own (64 MiB one between 64 and 72 MiB)",
                         len(invs) == 3 and 64 * MiB <= invs[1]["rss_peak_bytes"] < 72 * MiB and
                         invs[2]["rss_peak_bytes"] < 16 * MiB, [i["rss_peak_bytes"] for i in invs])
            except (OSError, ValueError) as e:
                res.fail(name, "no report.json: %s" % e)
        else:
            res.fail(name, "peaktrace did not start: " + p.err[-300:])
            p.kill()
        h.signal(signal.SIGTERM)
        h.wait(timeout)
    rc, out, err = run([pt, "-p", str(os.getpid()), "--boundary", "start=nosuchlib:f,end=nosuchlib:g"])
    res.eq("lambda/uprobe boundary: unknown library is an error", rc != 0 and "no function f" in err, True)

    # ---- --max-peak: fails on the 128 MiB invocation, names it; passes with a higher limit
    for limit, want_rc in (("100M", 8), ("200M", 0)):
        name = "lambda/--max-peak %s" % limit
        port = base + 10 + (2 if want_rc else 4)
        started = start_traced(name, "maxpeak", 512, port, ["--max-peak", limit])
        if not started:
            continue
        h, rt, p = started
        for mb in (16, 128, 8):
            do_invoke(port, {"mb": mb})
        time.sleep(0.3)
        p.signal(signal.SIGINT)
        rc = p.wait(timeout)
        ids = report_ids(h.out + h.err)
        h.signal(signal.SIGTERM)
        h.wait(timeout)
        res.eq(name + ": exit status", rc, want_rc)
        named = len(ids) == 3 and re.search(r"invocation 2 \(RequestId %s\) peaked" % re.escape(ids[1]), p.err)
        if want_rc:
            res.true(name + ": names the offending invocation and its request id", named, p.err[-400:])
        else:
            res.true(name + ": names no invocation", "over --max-peak" not in p.err, p.err[-400:])

    # ---- OOM: the memory limit kills the runtime; the report names the invocation it died in
    name = "lambda/oom kill"
    port = base + 20
    outdir = os.path.join(tmp, "lambda-oom")
    started = start_traced(name, "oom", 96, port, ["-o", outdir])
    if not started:
        return
    h, rt, p = started
    do_invoke(port, {"mb": 8})
    rc, out, err = do_invoke(port, {"mb": 256})
    rc = p.wait(timeout)
    ids = report_ids(h.out + h.err)
    h.signal(signal.SIGTERM)
    h.wait(timeout)
    res.eq(name + ": peaktrace ends with its target", rc, 0)
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            rep = expand_report(json.load(f))
    except (OSError, ValueError) as e:
        res.fail(name, "no report.json: %s" % e)
        return
    invs = invocations(rep)
    res.eq(name + ": two invocations", len(invs), 2)
    if len(invs) == 2:
        res.eq(name + ": the first one responded", invs[0]["outcome"], "response")
        res.eq(name + ": the second one was killed", invs[1]["outcome"], "killed")
        res.eq(name + ": ... and is named by its request id", invs[1]["request_id"], ids[1] if len(ids) > 1 else None)
        top = invs[1]["top_stacks_at_peak"][0] if invs[1]["top_stacks_at_peak"] else {}
        res.eq(name + ": the killing allocation is at the top of its stacks",
               (top.get("frames") or [{}])[0].get("func"), "grab")
        res.eq(name + ": ... with the bytes it asked for", top.get("bytes"), 256 * MiB)
        traj = invs[1].get("rss_trajectory") or []
        res.true(name + ": RSS trajectory climbs to the 96 MB limit",
                 len(traj) >= 10 and traj[-1][1] >= 80 * MiB and traj[-1][1] > traj[0][1],
                 "trajectory %s" % traj[-3:])
        res.true(name + ": its high-water mark (Lambda's figure) is the limit it died at",
                 invs[1]["vmhwm_bytes"] >= 80 * MiB, "vmhwm %d" % invs[1]["vmhwm_bytes"])
    res.eq(name + ": target killed by SIGKILL", rep["target"].get("exit_signal"), 9)


def run_lambda_launch(ctx):
    """Launch mode under the host: the host starts peaktrace as the runtime command, and
    peaktrace launches the real runtime (inheriting Lambda's environment): the init phase is
    seen from the runtime's first instruction to its first GET .../next."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    tools = need_host(res, "lambda/launch", build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    name = "lambda/launch"
    if not res.wanted(name):
        return
    port = free_ports(2)
    outdir = os.path.join(tmp, "lambda-launch")
    pidfile = os.path.join(tmp, "launch.pid")
    h = Proc([host, "-m", "256", "--runtime-port", str(port), "--invoke-port", str(port + 1),
              "--init-timeout", "30", "--pid-file", pidfile, "--", pt, "-q", "-o", outdir, "--", fn])
    if not h.wait_for("err", r"^peaktrace: tracing PID") and not h.wait_for("out", r"^peaktrace: tracing PID", 1):
        res.fail(name, "peaktrace did not start under the host: " + (h.err + h.out)[-400:])
        h.kill()
        return
    sizes = [8, 32]
    for mb in sizes:
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=timeout)
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    ptpid = stop_pidfile(h, pidfile, timeout)
    res.true(name + ": the host's runtime is peaktrace", ptpid is not None, "no pid file")
    ids = stop_host(h, timeout)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    init = [i for i in rep.get("invocations", []) if i.get("seq") == 0]
    res.eq(name + ": the init phase ends at the first GET next", init[0]["outcome"] if init else None, "init")
    # peaktrace's start-up (the command waiting for it) is inside the host's own Init Duration,
    # which runs from starting peaktrace to the runtime's first GET next: it cannot be longer.
    st = rep.get("startup") or {}
    m = re.search(r"Init Duration: ([0-9.]+) ms", h.out + h.err)
    waited = st.get("before_exec_ns", 0) + st.get("held_ns", 0)
    res.true(name + ": start-up figures present, the steps inside the wait before the exec",
             st.get("bpf_load_ns", 0) > 0 and st.get("exec_stops", 0) >= 1 and
             st["before_exec_ns"] >= st["bpf_load_ns"] + st["unwind_ns"] + st["attach_ns"], "startup %s" % st)
    res.true(name + ": the command's wait for peaktrace is inside the host's Init Duration",
             m is not None and 0 < waited <= float(m.group(1)) * 1e6,
             "waited %.1f ms, host %s" % (waited / 1e6, m.group(1) if m else "no Init Duration"))
    invs = invocations(rep)
    res.eq(name + ": every invocation found once with the host's request ids", [i["request_id"] for i in invs], ids)
    try:
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        res.fail(name + ": invocations.jsonl", str(e))
        lines = []
    check_timeline(res, name, outdir, ids, lines)
    for k, inv in enumerate(invs[:len(sizes)]):
        top = inv["top_stacks_at_peak"][0] if inv["top_stacks_at_peak"] else {}
        res.eq("%s: invocation %d: largest block at its peak" % (name, k + 1), top.get("bytes"), sizes[k] * MiB)


def run_lambda_node(ctx):
    _lambda_node(ctx, [])
    _lambda_node(ctx, ["--boundary", "uprobe"])


def _lambda_node(ctx, extra):
    """The real Node.js runtime interface client (npm aws-lambda-ric: aws-lambda-cpp + libcurl in a
    native addon) under the host: its Runtime API traffic goes through libcurl's own sockets."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    root = ROOT
    node_dir = os.path.join(root, "tools", "functions", "node")
    ric = os.path.join(node_dir, "node_modules", ".bin", "aws-lambda-ric")
    host, invoke = tool(build, "lambda-host"), tool(build, "invoke")
    aws = "uprobe" in extra
    name = "lambda/node aws-lambda-ric" + (" --boundary uprobe" if aws else "")
    if not res.wanted(name):
        return
    if not os.path.exists(ric) or not host_built(build):
        res.skip(name, "aws-lambda-ric not installed (make lambda-node-ric)")
        return
    port = free_ports(2)
    pidfile = os.path.join(tmp, "node.pid")
    h = Proc([host, "-m", "512", "--runtime-port", str(port), "--invoke-port", str(port + 1),
              "--init-timeout", "30", "--pid-file", pidfile, "--task-root", node_dir, "--", ric,
              "index.handler"])
    rt = wait_pidfile(h, pidfile, timeout)
    if rt is None:
        res.fail(name, "host did not start the Node runtime: " + h.err[-300:])
        h.kill()
        return
    # Let the runtime reach its first GET next (node start-up).
    time.sleep(1.5)
    outdir = os.path.join(tmp, "lambda-node" + ("-aws" if aws else ""))
    p = Proc([pt, "-q", "-p", rt, "-o", outdir] + extra)
    if not p.wait_for("err", r"^peaktrace: tracing PID"):
        res.fail(name, "peaktrace did not start: " + p.err[-300:])
        p.kill()
        h.kill()
        return
    for mb in (4, 32, 8):
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=timeout)
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    if aws:
        # A handler error goes through runtime::post_failure.
        run([invoke, "--port", str(port + 1), json.dumps({"mb": 600})], timeout=timeout)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(timeout), 0)
    durations = [float(x) for x in re.findall(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms",
                                              h.out + h.err, re.M)]
    ids = stop_host(h, timeout)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    invs = invocations(rep)
    if aws:
        # The runtime was idle in get_next when we attached (entered before the probes, so no
        # return probe for that call): its first invocation starts with the answer to that
        # "next" on the Runtime API socket found at attach — a whole invocation, numbered 1, its
        # duration the handler's (as the host's REPORT says), not the idle wait before it.
        res.eq(name + ": every invocation found once, ids read from aws-lambda-cpp's arguments",
               [i["request_id"] for i in invs], ids)
        res.eq(name + ": none is marked as started before tracing (the runtime was idle)",
               [i["started_before_trace"] for i in invs], [False, False, False, False])
        res.eq(name + ": numbered 1.. as invocations", [(i["seq"], i["phase"]) for i in invs],
               [(k + 1, "invocation") for k in range(len(invs))])
        if invs and durations:
            ms = invs[0]["duration_ns"] / 1e6
            res.true(name + ": the first one lasts what the host's REPORT says (not the idle wait)",
                     abs(ms - durations[0]) < max(50.0, 0.5 * durations[0]),
                     "peaktrace %.1f ms, host %.1f ms" % (ms, durations[0]))
        res.eq(name + ": outcomes from post_success / post_failure", [i["outcome"] for i in invs],
               ["response", "response", "response", "error"])
        return
    res.eq(name + ": every invocation found once, with the host's request ids", [i["request_id"] for i in invs], ids)
    # 32 MiB of strings live at once against at most 4 + 4 (strings + joined response) in the
    # first: V8 may serve part of the 32 from heap pages it kept since the first invocation (it
    # did: 29.6 MiB above the start once), so the bound is between the two peaks, 32 - 8 MiB.
    res.true(name + ": the 32 MiB one peaks at least 24 MiB above the 4 MiB one (V8 strings: RSS, not malloc)",
             len(invs) == 3 and invs[1]["rss_peak_bytes"] - invs[0]["rss_peak_bytes"] >= 24 * MiB,
             [(i["rss_start_bytes"], i["rss_peak_bytes"]) for i in invs])
    # And above its own start by 32 MiB less at most what the first invocation grew (the pages V8
    # can have kept from it): the original check, allowing for exactly that reuse.
    res.true(name + ": the 32 MiB one peaks 32 MiB above its start, less what the first one grew",
             len(invs) == 3 and invs[1]["rss_peak_bytes"] - invs[1]["rss_start_bytes"] >=
             32 * MiB - (invs[0]["rss_peak_bytes"] - invs[0]["rss_start_bytes"]),
             [(i["rss_start_bytes"], i["rss_peak_bytes"]) for i in invs])


def run_lambda_node_launch_uprobe(ctx):
    """--boundary uprobe in launch mode with the real Node client: the host starts peaktrace as the
    runtime command; aws-lambda-cpp is in the client's native addon, dlopened by node after start,
    so its probes can only be set when it is mapped. Every invocation found with the host's ids,
    numbered from 1, the init phase ending at the first get_next; peaktrace neither fails (it
    exited 7 before) nor leaves the host without a runtime."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    node_dir = os.path.join(ROOT, "tools", "functions", "node")
    ric = os.path.join(node_dir, "node_modules", ".bin", "aws-lambda-ric")
    host, invoke = tool(build, "lambda-host"), tool(build, "invoke")
    name = "lambda/node launch --boundary uprobe"
    if not res.wanted(name):
        return
    if not os.path.exists(ric) or not host_built(build):
        res.skip(name, "aws-lambda-ric not installed (make lambda-node-ric)")
        return
    port = free_ports(2)
    outdir = os.path.join(tmp, "lambda-node-launch-aws")
    pidfile = os.path.join(tmp, "node-launch.pid")
    h = Proc([host, "-m", "512", "--runtime-port", str(port), "--invoke-port", str(port + 1),
              "--init-timeout", "60", "--pid-file", pidfile, "--task-root", node_dir, "--",
              pt, "-o", outdir, "-q", "--boundary", "uprobe", "--", ric, "index.handler"])
    if not h.wait_for("err", r"^peaktrace: tracing PID") and not h.wait_for("out", r"^peaktrace: tracing PID", 1):
        res.fail(name, "peaktrace did not start under the host: " + (h.err + h.out)[-400:])
        h.kill()
        return
    # peaktrace's own start-up work for node's code (symbols, unwind tables) can outlast the
    # runtime's init: the probes come when the addon is mapped and peaktrace gets to it.
    mapped = h.wait_for("err", r"aws-lambda-cpp is mapped now", timeout) or \
        h.wait_for("out", r"aws-lambda-cpp is mapped now", 1)
    res.true(name + ": peaktrace said when aws-lambda-cpp was mapped", mapped, (h.err + h.out)[-400:])
    for mb in (4, 32, 8):
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=timeout)
        res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
    stop_pidfile(h, pidfile, timeout)
    ids = stop_host(h, timeout)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    rows = rep.get("invocations", [])
    res.eq(name + ": the init phase ends when get_next is first called",
           [(r["phase"], r["outcome"]) for r in rows if r.get("seq") == 0], [("init", "init")])
    invs = invocations(rep)
    res.eq(name + ": every invocation found once, with the host's request ids",
           [i["request_id"] for i in invs], ids)
    res.eq(name + ": numbered from 1, none started before tracing",
           [(i["seq"], i["started_before_trace"]) for i in invs], [(k + 1, False) for k in range(len(ids))])


def run_uprobe_no_runtime(ctx):
    """--boundary uprobe on a program with no aws-lambda-cpp in it (yet): not a BPF failure (it
    exited 7 before, and a runtime started that way under RIE got 502s): tracing goes on, the
    probes would come with the library, and the end says once that it never came."""
    res, pt, tmp, timeout = ctx.res, ctx.pt, ctx.tmp, TIMEOUT
    name = "lambda/--boundary uprobe without aws-lambda-cpp"
    if not res.wanted(name):
        return
    outdir = os.path.join(tmp, "uprobe-none")
    rc, out, err = run([pt, "-q", "-o", outdir, "--boundary", "uprobe", "-d", "1", "--", "/bin/sleep", "3"],
                       timeout=timeout)
    res.eq(name + ": peaktrace exit status", rc, 0)
    res.true(name + ": said at start that the probes come when it is mapped",
             "its probes are set when it is mapped" in err, err[-300:])
    res.true(name + ": said at the end that it never was", "aws-lambda-cpp was never mapped" in err, err[-300:])
    res.true(name + ": the report is written", os.path.exists(os.path.join(outdir, "report.json")), outdir)
    try:
        with open(os.path.join(outdir, "report.json")) as f:
            boundary = json.load(f).get("boundary")
    except (OSError, ValueError) as e:
        boundary = str(e)
    res.true(name + ": report.json's boundary says so", "never mapped" in str(boundary), boundary)


def run_lambda_streaming(ctx):
    """Response streaming (Python runtime, {"stream": N}): the POST line goes first and the body
    follows in N chunks 100 ms apart; the invocation must end with the last chunk, as the host's
    own Duration says, not at the POST line."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    invoke = tool(build, "invoke")
    root = ROOT
    fdir = os.path.join(root, "tools", "functions", "python")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    name = "lambda/streaming response"
    if not res.wanted(name):
        return
    if not need_host(res, name, build):
        return
    port = free_ports(2)
    got = host_attached(res, name, build, tmp, pt, "stream", 256, port, [py, os.path.join(fdir, "bootstrap.py")],
                        ("--handler", "function.handler", "--task-root", fdir))
    if not got:
        return
    h, rt, p, outdir = got
    for ev in ({"mb": 1}, {"mb": 2, "stream": 4}, {"mb": 1}):
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps(ev)], timeout=timeout)
        res.eq("%s: invoke %s answered" % (name, json.dumps(ev)), rc, 0)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(timeout), 0)
    text = h.out + h.err
    durations = [float(x) for x in re.findall(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms", text, re.M)]
    ids = stop_host(h, timeout)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    invs = invocations(rep)
    res.eq(name + ": every invocation found once, with the host's request ids", [i["request_id"] for i in invs], ids)
    if len(invs) == 3 and len(durations) == 3:
        ms = invs[1]["duration_ns"] / 1e6
        res.true(name + ": the streamed one ends with its last chunk (>= 4 x 100 ms), as the host's Duration",
                 ms >= 350 and abs(ms - durations[1]) < max(50.0, 0.25 * durations[1]), "peaktrace %.1f ms, host %.1f ms" % (ms, durations[1]))


def run_exit_outcomes(ctx):
    """How the process's end names the phase it ended in: a program that exits by itself is
    "exited" with its status (0 included), one killed by a signal "killed" with the signal; in
    launch mode the row is the init phase (no invocation ever started)."""
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    for tag, script, outcome, status, sig in [("exit 0", "exit 0", "exited", 0, None),
                                              ("exit 3", "exit 3", "exited", 3, None),
                                              ("SIGKILL", "kill -9 $$", "killed", None, 9)]:
        name = "lambda/exit outcome/" + tag
        if not res.wanted(name):
            continue
        outdir = os.path.join(tmp, "exit-outcome-" + tag.replace(" ", "-"))
        rc, out, err = run([pt, "-q", "-o", outdir, "--", "/bin/sh", "-c", script], timeout=TIMEOUT)
        rep = load_report(res, name, outdir)
        if rep is None:
            continue
        lines = []
        try:
            with open(os.path.join(outdir, "invocations.jsonl")) as f:
                lines = [json.loads(l) for l in f if l.strip()]
        except (OSError, ValueError) as e:
            res.fail(name + ": invocations.jsonl", str(e))
        for what, rows in (("report.json", rep.get("invocations", [])), ("invocations.jsonl", lines)):
            res.eq("%s: %s: one row, the init phase, %s" % (name, what, outcome),
                   [(r["phase"], r["outcome"], r.get("exit_status"), r.get("exit_signal")) for r in rows],
                   [("init", outcome, status, sig)])
        res.eq(name + ": report.json target agrees", (rep["target"].get("exit_status"),
                                                      rep["target"].get("exit_signal")),
               (status, sig) if sig else (status, None))


def run_rapi_page_edge(ctx):
    """A GET /next written from the last 61 bytes of a page before an inaccessible one, right after
    another write left "next" + 'X' in the BPF side's per-CPU scratch (tests/workloads/
    rt_page_edge.py): every invocation must still be found, with the host's request ids."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    invoke = tool(build, "invoke")
    rt_py = os.path.join(ROOT, "tests", "workloads", "rt_page_edge.py")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    name = "lambda/GET next at a page's end"
    if not res.wanted(name):
        return
    if not need_host(res, name, build):
        return
    port = free_ports(2)
    got = host_attached(res, name, build, tmp, pt, "edge", 256, port, [py, rt_py])
    if not got:
        return
    h, rt, p, outdir = got
    for _ in range(3):
        rc, out, err = run([invoke, "--port", str(port + 1), "{}"], timeout=timeout)
        res.eq("%s: invoke answered" % name, rc, 0)
    time.sleep(0.3)
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(timeout), 0)
    ids = stop_host(h, timeout)
    res.eq(name + ": the host answered 3 invocations", len(ids), 3)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    res.eq(name + ": every invocation found once, with the host's request ids",
           [i["request_id"] for i in invocations(rep)], ids)


def run_lambda_many(ctx):
    """60 invocations (launch mode under the host; invocation 31 allocates 24 MiB, the others
    1 MiB): the first screen's INVOCATIONS table shows the first and last rows and the largest
    peak, counts the rows it leaves out ("... (N invocations not shown)") so that shown + not
    shown is every row, and names invocations.jsonl, which has all 60 request ids (the host's)."""
    res, build, pt, tmp, timeout = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp, TIMEOUT
    name = "lambda/many invocations"
    if not res.wanted(name):
        return
    tools = need_host(res, name, build, "functions/oom", "invoke")
    if not tools:
        return
    host, fn, invoke = tools
    port = free_ports(2)
    outdir = os.path.join(tmp, "lambda-many")
    pidfile = os.path.join(tmp, "many.pid")
    h = Proc([host, "-m", "256", "--runtime-port", str(port), "--invoke-port", str(port + 1),
              "--init-timeout", "30", "--pid-file", pidfile, "--", pt, "-q", "-o", outdir, "--", fn])
    if not h.wait_for("err", r"^peaktrace: tracing PID") and not h.wait_for("out", r"^peaktrace: tracing PID", 1):
        res.fail(name, "peaktrace did not start under the host: " + (h.err + h.out)[-400:])
        h.kill()
        return
    n, big = 60, 30
    for k in range(n):
        rc, out, err = run([invoke, "--port", str(port + 1), json.dumps({"mb": 24 if k == big else 1})],
                           timeout=timeout)
        if rc:
            res.eq("%s: invoke %d answered" % (name, k + 1), rc, 0)
    ptpid = wait_pidfile(h, pidfile, 5)
    if ptpid:
        stop_launched(h, ptpid, timeout)
    ids = stop_host(h, timeout)
    res.eq(name + ": the host answered every invocation", len(ids), n)
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        res.fail(name, "no report.txt / invocations.jsonl: %s" % e)
        return
    res.eq(name + ": invocations.jsonl has every request id", [l.get("request_id") for l in lines if l.get("seq")], ids)
    m = re.search(r"\nINVOCATIONS .*?\n(.*?)\n\n", txt, re.S)
    table = m.group(1) if m else ""
    first_screen = txt.find("INVOCATIONS") < txt.find("TOP STACKS LIVE AT THE HEAP PEAK")
    res.true(name + ": INVOCATIONS is on the first screen, before TOP STACKS", m is not None and first_screen, txt[:600])
    shown = [i for i in ids if i in table]
    left = sum(int(x) for x in re.findall(r"\(\s*(\d+) invocations? not shown\)", table))
    res.eq(name + ": rows shown + rows not shown == every row (the init phase's too)",
           (len(shown) + 1 + left if "(init phase)" in table else len(shown) + left), n + 1)
    res.true(name + ": fewer rows than invocations on the first screen", 0 < len(shown) < n, "%d shown" % len(shown))
    res.true(name + ": the first, the last and the largest invocation are shown",
             ids[0] in table and ids[-1] in table and ids[big] in table, table[-800:])
    sm = re.search(r"(\d+) of (\d+) rows shown .*invocations\.jsonl", table)
    res.eq(name + ": it says how many rows of how many, and where the rest are",
           (int(sm.group(1)), int(sm.group(2))) if sm else None, (n + 1 - left, n + 1))


def run_stopped_mid_invocation(ctx):
    """Tracing stopped (SIGINT) while an invocation runs: the bundled Python function renders
    16 MiB ({"mb": 16, "sleep": 5}: 16 MiB of 64 KiB strings, then their join) and holds it.
    invocations.jsonl's record of that invocation is "unfinished" and has its RSS top stacks,
    as a finished one has: the stacks under the handler's render() hold at least the 16 MiB of
    strings the event asked for and at most what the runtime's own RssAnon grew by."""
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    invoke = tool(build, "invoke")
    fdir = os.path.join(ROOT, "tools", "functions", "python")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    name = "lambda/stopped mid-invocation"
    if not res.wanted(name):
        return
    if not need_host(res, name, build):
        return
    port = free_ports(2)
    got = host_attached(res, name, build, tmp, pt, "midinv", 512, port, [py, os.path.join(fdir, "bootstrap.py")],
                        ("--handler", "function.handler", "--task-root", fdir))
    if not got:
        return
    h, rt, p, outdir = got
    invoke_events(res, name, invoke, port, [{"mb": 1}])
    before = status_bytes(rt, "RssAnon")
    slow = Proc([invoke, "--port", str(port + 1), json.dumps({"mb": 16, "sleep": 5})])
    deadline = time.monotonic() + TIMEOUT
    grown = 0
    while time.monotonic() < deadline and grown < 32 * MiB:   # the strings and their join
        time.sleep(0.1)
        grown = status_bytes(rt, "RssAnon") - before
    time.sleep(0.3)
    grown = status_bytes(rt, "RssAnon") - before
    p.signal(signal.SIGINT)
    res.eq(name + ": peaktrace exit status", p.wait(TIMEOUT), 0)
    slow.wait(TIMEOUT)
    stop_host(h, TIMEOUT)
    try:
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        res.fail(name, "invocations.jsonl: %s" % e)
        return
    last = rows[-1] if rows else {}
    res.eq(name + ": the last record is the running invocation, unfinished",
           (last.get("phase"), last.get("outcome")), ("invocation", "unfinished"))
    held = sum(t["rss_bytes"] for t in last.get("rss_top_stacks_at_peak") or []
               if any(re.fullmatch(r"function:render:\d+", fr.get("func", "")) for fr in t["frames"]))
    res.true(name + ": its RSS top stacks under render() hold the 16 MiB of strings, at most "
             "the runtime's RssAnon growth (%d B)" % grown, 16 * MiB <= held <= grown + TOLERANCE,
             "held %d B" % held)


# ---- the OOM post-mortem of a Python handler (tests/workloads/llm_handler.py) -------------------

OOM_LIMIT = 128 * MiB


def memory_cgroup(tmp, tag, limit):
    """A memory cgroup of our own (v2 if the unified hierarchy has the memory controller, else
    v1, as tools/lambda-host's sandbox.c chooses) limited to limit bytes, no swap: (path, "v1" |
    "v2"), or (None, why). peaktrace stays outside it: only the runtime moves in."""
    v2 = "/sys/fs/cgroup" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "/sys/fs/cgroup/unified"
    try:
        with open(os.path.join(v2, "cgroup.controllers")) as f:
            has_v2 = "memory" in f.read().split()
    except OSError:
        has_v2 = False
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            n, ctrl, path = line.rstrip("\n").split(":", 2)
            own["v2" if n == "0" else ctrl] = path
    if has_v2:
        path, kind = os.path.join(v2, own.get("v2", "/").lstrip("/"), "pt-oom-%d-%s" % (os.getpid(), tag)), "v2"
        limits = (("memory.max", str(limit)), ("memory.swap.max", "0"))
    elif "memory" in own and os.path.isdir("/sys/fs/cgroup/memory"):
        path, kind = os.path.join("/sys/fs/cgroup/memory", own["memory"].lstrip("/"),
                                  "pt-oom-%d-%s" % (os.getpid(), tag)), "v1"
        limits = (("memory.limit_in_bytes", str(limit)), ("memory.memsw.limit_in_bytes", str(limit)))
    else:
        return None, "no memory cgroup controller"
    try:
        os.mkdir(path)
        for k, v in limits:
            if os.path.exists(os.path.join(path, k)):
                with open(os.path.join(path, k), "w") as f:
                    f.write(v)
    except OSError as e:
        return None, "cannot make %s: %s" % (path, e)
    return path, kind


def cgroup_truth(path, kind):
    """The cgroup's own accounting: (OOM kills, peak bytes): memory.events' oom_kill and
    memory.peak (v2), memory.oom_control's oom_kill and memory.max_usage_in_bytes (v1)."""
    def read(name):
        try:
            with open(os.path.join(path, name)) as f:
                return f.read()
        except OSError:
            return ""
    m = re.search(r"^oom_kill (\d+)", read("memory.events" if kind == "v2" else "memory.oom_control"), re.M)
    peak = read("memory.peak" if kind == "v2" else "memory.max_usage_in_bytes").strip()
    return (int(m.group(1)) if m else None), (int(peak) if peak.isdigit() else None)


def remove_cgroup(path):
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)


def handler_log(path):
    """The handler's own readings (llm_handler.py) in its last request: {"steps": {NAME:
    rss_anon}, "buffer": [(held, strings, rss_anon, rss_file)]}."""
    got = {"steps": {}, "buffer": []}
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"step (\w+) rss_anon=(-?\d+)$", line)
                if m and m.group(1) == "copy_history":   # a new request
                    got = {"steps": {}, "buffer": []}
                if m:
                    got["steps"][m.group(1)] = int(m.group(2))
                m = re.match(r"buffer held=(\d+) strings=(\d+) rss_anon=(-?\d+) rss_file=(\d+)$", line)
                if m:
                    got["buffer"].append(tuple(int(x) for x in m.groups()))
    except OSError:
        pass
    return got


def under(frames, func):
    return any(re.fullmatch(r"llm_handler:%s:\d+" % func, fr.get("func", "")) for fr in frames)


def check_postmortem(res, name, outdir, log, cg, kind):
    """The checks of lambda/oom post-mortem/MODE: the kill against the cgroup's own accounting,
    the post-mortem's RSS holders against the handler's own readings."""
    oom_kills, peak = cgroup_truth(cg, kind)
    res.eq(name + ": the cgroup OOM-killed the runtime once (its own oom_kill count)", oom_kills, 1)
    rep = load_report(res, name, outdir)
    if rep is None:
        return
    invs = invocations(rep)
    res.eq(name + ": two invocations, the second killed by SIGKILL",
           [(i["outcome"], i["exit_signal"]) for i in invs], [("response", None), ("killed", 9)])
    killed = rep.get("killed") or []
    res.eq(name + ": report.json's killed names it", [k.get("seq") for k in killed], [2])
    if not killed or len(invs) != 2:
        return
    k, inv = killed[0], invs[1]
    got = handler_log(log)
    steps, buf = got["steps"], got["buffer"]
    res.true(name + ": the handler logged its steps up to the buffering, and the buffering's progress",
             "buffer_completion" in steps and "done" not in steps and len(buf) >= 5, "%s %d" % (steps, len(buf)))
    if "buffer_completion" not in steps or not buf:
        return
    held = buf[-1][0]
    print("INFO %s: cgroup peak %d, invocation peak RSS %d, the handler's last reading: %d B of strings "
          "held, RssAnon %d" % (name, peak or -1, inv["rss_peak_bytes"], held, buf[-1][2]), flush=True)
    # The cgroup charges the anonymous pages; the file-backed ones in RSS are mostly the page
    # cache's (charged where first read): at most the handler's RssFile on top.
    res.true(name + ": the cgroup's peak is its limit", peak is not None and peak >= OOM_LIMIT - TOLERANCE,
             "memory peak %s" % peak)
    res.true(name + ": its peak RSS is above the handler's last RssAnon reading (%d) and at most the "
             "limit plus its RssFile (%d)" % (buf[-1][2], buf[-1][3]),
             buf[-1][2] <= inv["rss_peak_bytes"] <= OOM_LIMIT + buf[-1][3] + TOLERANCE,
             "peak RSS %d" % inv["rss_peak_bytes"])
    rh, hh = k.get("rss_holders") or {}, k.get("heap_holders") or {}
    stacks = rh.get("stacks") or []
    res.eq(name + ": the RSS holders come first", k.get("first"), "rss_holders")
    res.true(name + ": the first RSS holder is the buffering (fake_llm_stream under buffer_completion)",
             bool(stacks) and under(stacks[0]["frames"], "buffer_completion") and
             under(stacks[0]["frames"], "fake_llm_stream"),
             [[f["func"] for f in s["frames"]][:12] for s in stacks[:2]])
    res.eq(name + ": ... its memory kind is CPython's pymalloc arenas",
           stacks[0].get("kind") if stacks else None, "CPython pymalloc arenas")
    buffered = sum(s["rss_bytes"] for s in stacks if under(s["frames"], "buffer_completion"))
    # Lower bound: the strings' own bytes at the handler's last reading (it went on after it);
    # upper: the runtime's RssAnon growth since the buffering began, at most the cgroup's peak.
    top = (peak or 0) - steps["buffer_completion"]
    res.true(name + ": the buffering's RSS holders hold at least the strings the handler last counted "
             "(%d B) and at most the RSS growth since it began (cgroup peak - RssAnon then: %d B)" % (held, top),
             held <= buffered <= top + TOLERANCE, "held by buffer_completion's stacks: %d B" % buffered)
    res.true(name + ": the RSS holders' share is the listed bytes over its peak RSS",
             abs(rh.get("covered_fraction", -1) - sum(s["rss_bytes"] for s in stacks) / inv["rss_peak_bytes"]) < 1e-3
             and rh.get("covered_fraction", 0) > 0.5, rh.get("covered_fraction"))
    hstacks = hh.get("stacks") or []
    res.true(name + ": the heap holders are beside them, a smaller share (the strings are not heap blocks)",
             bool(hstacks) and hh.get("covered_fraction", 1) < rh.get("covered_fraction", 0),
             (hh.get("covered_fraction"), rh.get("covered_fraction")))
    res.true(name + ": ... and include the history's deep copy or the attachments",
             any(under(s["frames"], "copy_history") or under(s["frames"], "encode_attachments") for s in hstacks),
             [[f["func"] for f in s["frames"]][:10] for s in hstacks[:3]])
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            txt = f.read()
    except OSError:
        txt = ""
    block = txt[txt.find("\nKILLED during invocation 2"):]
    block = block[:block.find("TOP STACKS LIVE AT END below") + 1]
    pages, blocks = block.find("resident pages, by the stack"), block.find("heap blocks live at its heap peak")
    res.true(name + ": report.txt's KILLED section lists the resident pages first, then the heap blocks",
             0 < pages < blocks, block[:600])
    res.true(name + ": ... the first with its kind and the buffering function",
             re.search(r"#1 [0-9.]+ MiB \([0-9.]+%\) \[CPython pymalloc arenas\]", block[pages:blocks]) is not None
             and "buffer_completion" in block[pages:blocks], block[pages:pages + 1500])
    return rep


def run_oom_postmortem(ctx):
    """lambda/oom post-mortem/attach, /launch: tests/workloads/llm_handler.py under the bundled
    Python runtime and host, its runtime in a 128 MiB memory cgroup of the test's own (peaktrace
    outside it): a small request, then one whose buffered completion grows until the cgroup
    OOM-kills the runtime. The post-mortem (report.json's killed, report.txt's KILLED) must put
    the RSS holders first, the first of them the buffering function with its memory kind
    (pymalloc), holding what the handler's own readings say, the kill by the cgroup's own count."""
    res, build, pt, tmp = ctx.res, ctx.build_arg, ctx.pt, ctx.tmp
    invoke = tool(build, "invoke")
    fdir = os.path.join(ROOT, "tools", "functions", "python")
    wdir = os.path.join(ROOT, "tests", "workloads")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    for mode in ("attach", "launch"):
        name = "lambda/oom post-mortem/" + mode
        if not res.wanted(name):
            continue
        if not need_host(res, name, build):
            continue
        cg, kind = memory_cgroup(tmp, mode, OOM_LIMIT)
        if not cg:
            res.skip(name, kind)
            continue
        log = os.path.join(tmp, "llm-%s.log" % mode)
        outdir = os.path.join(tmp, "lambda-llm-" + mode)
        runtime = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$1" "$2"', cg, py,
                   os.path.join(fdir, "bootstrap.py")]
        host_args = ["--no-cgroup", "-t", "120", "--handler", "llm_handler.handler", "--task-root", wdir]
        port = free_ports(2)
        try:
            if mode == "attach":
                got = host_attached(res, name, build, tmp, pt, "llm", 1024, port, runtime, host_args)
                if not got:
                    continue
                h, rt, p, outdir = got
            else:
                got = host_runtime(res, name, build, tmp, "llm-launch", 1024, port,
                                   [pt, "-q", "-o", outdir, "--"] + runtime, host_args)
                if not got:
                    continue
                h, _ = got
                if not h.wait_for("err", r"^peaktrace: tracing PID"):
                    res.fail(name, "peaktrace did not start under the host: " + h.err[-400:])
                    h.kill()
                    continue
            invoke_events(res, name, invoke, port, [{"tokens": 2000, "attach_mb": 4, "log": log}], timeout=120)
            rc, out, err = run([invoke, "--port", str(port + 1), "-t", "120",
                                json.dumps({"tokens": 10 ** 9, "attach_mb": 4, "log": log})], timeout=150)
            res.true(name + ": the big request failed with the runtime's exit",
                     "Runtime.ExitError" in out + err or "signal: killed" in out + err, (out + err)[-300:])
            if mode == "attach":
                res.eq(name + ": peaktrace ends with its target", p.wait(TIMEOUT), 0)
            elif not h.wait_for("err", r"^peaktrace: reports written", TIMEOUT):
                h.wait_for("out", r"^peaktrace: reports written", 1)
            stop_host(h, TIMEOUT)
            check_postmortem(res, name, outdir, log, cg, kind)
        finally:
            remove_cgroup(cg)


def run_section(ctx):
    run_exit_outcomes(ctx)
    run_lambda_section(ctx)
    run_lambda_launch(ctx)
    run_lambda_node(ctx)
    run_lambda_node_launch_uprobe(ctx)
    run_uprobe_no_runtime(ctx)
    run_lambda_streaming(ctx)
    run_stopped_mid_invocation(ctx)
    run_oom_postmortem(ctx)
    run_rapi_page_edge(ctx)
    run_lambda_many(ctx)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""docs: docs/usage.md's help block is `peaktrace --help` verbatim; --help and the README's "Output
files" table name the same files, and every file a run writes; docs/json-report.md names every
field of a real report.json and invocations.jsonl (a demo-like run: the bundled Python function
under tools/lambda-host, peaktrace attached with -o --per-invocation --emf)."""

import json
import os
import re
import signal
import time

from harness import ROOT, TIMEOUT, Proc, free_ports, run


def expand(name):
    """'{peak,live}.svg' -> ['peak.svg', 'live.svg']."""
    m = re.search(r"\{([^}]*)\}", name)
    if not m:
        return [name]
    return [x for alt in m.group(1).split(",") for x in expand(name[:m.start()] + alt + name[m.end():])]


def help_files(text):
    """The file names of --help's "Files written with -o:" paragraph."""
    m = re.search(r"^Files written with -o:(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    if not m:
        return set()
    toks = re.findall(r"[\w{},.-]*\.[\w{},.-]*\w", m.group(1))
    return {f for t in toks for f in expand(t) if not f.startswith("-")}


def readme_files(readme):
    """The backquoted names in the first column of the README's "Output files" table."""
    m = re.search(r"^## Output files.*?\n(.*?)(?:\n## |\Z)", readme, re.S | re.M)
    if not m:
        return set()
    out = set()
    for line in m.group(1).splitlines():
        cells = line.split("|")
        if len(cells) > 2 and "`" in cells[1]:
            out |= set(re.findall(r"`([^`]+)`", cells[1]))
    return out


def key_paths(o, p=""):
    """Every key path of a JSON value: "a.b", lists as "[]"."""
    out = set()
    if isinstance(o, dict):
        for k, v in o.items():
            q = p + "." + k if p else k
            out.add(q)
            out |= key_paths(v, q)
    elif isinstance(o, list):
        for v in o:
            out |= key_paths(v, p + "[]")
    return out


def documented_paths(md):
    """The key paths of docs/json-report.md's example object (its ```json block)."""
    m = re.search(r"```json\n(.*?)\n```", md, re.S)
    return key_paths(json.loads(m.group(1))) if m else set()


def check_help(res, pt, readme, usage):
    """usage: docs/usage.md, which holds the whole --help (the README keeps a short usage block)."""
    rc, out, err = run([pt, "--help"])
    name = "docs/usage.md help block matches peaktrace --help"
    if res.wanted(name):
        m = re.search(r"<!-- help:begin -->\n```\n(.*?)\n```\n<!-- help:end -->", usage, re.S)
        if not m:
            res.fail(name, "no help block in docs/usage.md")
        elif m.group(1).rstrip() == out.rstrip():
            res.ok(name)
        else:
            res.fail(name, "docs/usage.md is stale: run `make readme-help`")
    name = "docs/output files: --help and the README's table name the same files"
    if res.wanted(name):
        hf, rf = help_files(out), readme_files(readme)
        res.true(name + ": --help lists files", len(hf) >= 10, sorted(hf))
        res.eq(name + ": only in --help", sorted(hf - rf), [])
        res.eq(name + ": only in the README", sorted(rf - hf), [])
    return help_files(out)


def demo_run(ctx, outdir):
    """The demo's shape: host + Python function, peaktrace -p RUNTIME -o outdir --per-invocation
    --emf, a few invocations, SIGINT. Returns (peaktrace stderr, error) ."""
    build, pt, timeout = ctx.build_arg, ctx.pt, TIMEOUT
    host = os.path.join(build, "tools", "lambda-host")
    invoke = os.path.join(build, "tools", "invoke")
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    if not all(os.access(p, os.X_OK) for p in (host, invoke)):
        return None, "lambda-host not built (make lambda-host)"
    port = free_ports(2)
    pidfile = os.path.join(ctx.tmp, "docs-demo.pid")
    fdir = os.path.join(ROOT, "tools", "functions", "python")
    h = Proc([host, "-m", "256", "--runtime-port", str(port), "--invoke-port", str(port + 1),
              "--pid-file", pidfile, "--handler", "function.handler", "--task-root", fdir, "--",
              py, os.path.join(fdir, "bootstrap.py")])
    try:
        rt = None
        deadline = time.monotonic() + timeout
        while rt is None and time.monotonic() < deadline and h.running():
            try:
                with open(pidfile) as f:
                    rt = f.read().split()[0]
            except (OSError, IndexError):
                time.sleep(0.1)
        if rt is None:
            return None, "the host did not start the runtime: " + h.err[-300:]
        time.sleep(0.5)
        p = Proc([pt, "-p", rt, "-o", outdir, "--per-invocation", "--emf"])
        if not p.wait_for("err", r"^peaktrace: tracing PID"):
            p.kill()
            return None, "peaktrace did not start: " + p.err[-300:]
        for mb in (4, 16, 8):
            run([invoke, "--port", str(port + 1), json.dumps({"mb": mb})], timeout=timeout)
        time.sleep(0.5)
        p.signal(signal.SIGINT)
        p.wait(timeout)
        return p.err, None
    finally:
        h.signal(signal.SIGTERM)
        h.wait(timeout)


def check_run(ctx, listed):
    res = ctx.res
    name = "docs/json-report.md names every field"
    files = "docs/--help lists every file written"
    if not (res.wanted(name) or res.wanted(files)):
        return
    outdir = os.path.join(ctx.tmp, "docs-demo")
    err, why = demo_run(ctx, outdir)
    if why:
        res.fail(name, why)
        return
    try:
        with open(os.path.join(ROOT, "docs", "json-report.md")) as f:
            doc = documented_paths(f.read())
        with open(os.path.join(outdir, "report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(outdir, "invocations.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        res.fail(name, str(e))
        return
    invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
    res.true(name + ": the run has invocations", len(invs) >= 3, "%d invocations" % len(invs))
    got = key_paths(rep)
    res.eq(name + ": report.json key paths not in docs/json-report.md", sorted(got - doc), [])
    inl = set()
    for o in lines:
        inl |= key_paths(o, "invocations[]")
    res.eq(name + ": invocations.jsonl key paths not in docs/json-report.md", sorted(inl - doc), [])
    # The files of this run, named as --help names them (invocation N -> invocation-N).
    written = {re.sub(r"^invocation-\d+\.", "invocation-N.", f) for f in os.listdir(outdir)}
    res.eq(files + ": written but not in --help", sorted(written - listed), [])
    # The ARENAS table of the same run: the share of RSS is its own column, not "of RSS" read
    # as a second half of "retained".
    try:
        with open(os.path.join(outdir, "report.txt")) as f:
            hdr = re.findall(r"^  arena +address .*$", f.read(), re.M)
    except OSError:
        hdr = []
    res.true("docs/ARENAS header: one heading per column", len(hdr) == 1 and
             "retained of RSS" not in hdr[0] and hdr[0].split()[-1] == "res/RSS", hdr)
    # The INVOCATION lines of the same run: the units the values are in, no negative zero.
    inv_lines = re.findall(r"^peaktrace: INVOCATION .*$", err, re.M)
    name = "docs/INVOCATION lines say MiB"
    res.true(name + ": one per invocation", len(inv_lines) >= 3, err[-300:])
    res.eq(name + ": lines with MB", [l for l in inv_lines if re.search(r"\d MB\b", l)], [])
    res.eq(name + ": lines with -0.0", [l for l in inv_lines if "-0.0 " in l], [])


def run_section(ctx):
    try:
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        with open(os.path.join(ROOT, "docs", "usage.md")) as f:
            usage = f.read()
    except OSError as e:
        ctx.res.fail("docs/usage.md help block matches peaktrace --help", str(e))
        return
    listed = check_help(ctx.res, ctx.pt, readme, usage)
    check_run(ctx, listed)

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""follow: --follow and several -p, the sandbox view (a section of tests/run.py).

Truth: each process's own /proc/self/statm readings (wl_sandbox logs them at each phase while
the others wait on a pipe, so the sum at every phase is known), the host's REPORT lines and the
handler's own statm reading (container).

  follow/launch       peaktrace --follow -- wl_sandbox supervisor: the supervisor, the extension
                      and the runtime it starts (fork + exec) are each traced from their exec
                      (held); each own peak = its statm at its peak; the sandbox peak = the sum of
                      the three readings at phase B (the runtime's peak, the extension after
                      giving most back), and the sum of own peaks is >= 24 MiB more (what adding
                      peaks would wrongly say); every process's report directory has report.json.
  follow/pids         -p A,B on wl_sandbox's extension and runtime, started by the test and let
                      go after peaktrace traces them: the same checks without the supervisor.
  follow/pid --follow --follow -p on a shell that execs the supervisor once traced: its new image
                      held, then the two processes it starts: the same checks.
  follow/untraced child  a child peaktrace cannot trace (stripped static wl_static): followed, let
                      go untraced, counted in session_failed (not in spares.failed: the spare that
                      tried it failed with the process), "traced": false; the command runs on.
  follow/spare        spare sessions (loaded before any process needs one): `peaktrace --follow --
                      sh -c 'read t < /proc/uptime; exec sh -c ...'`: the shell notes the uptime
                      before its exec, the new image its own as its first command (the workload's
                      own clock: 10 ms resolution). Both images taken by a spare already loaded
                      ("spare": "loaded" in sandbox.json), each one's hold shorter than its own
                      session's BPF load (report.json startup.bpf_load_ns, so that load cannot have
                      been in the hold), and the exec-to-first-command time the workload measured
                      too; no report directory but the traced images'; after the run no spare
                      process left, and none of the BPF programs the spares held (read from their
                      /proc/PID/fdinfo while they ran) still loaded (bpftool prog show id).
  follow/spare unfit  an image whose allocator needs other BPF settings (LD_PRELOAD jemalloc): the
                      spare says it cannot take it and exits without a report directory; a session
                      started for it traces it ("spare": "none", spares.unfit 1, traced).
  follow/hostile name a followed program named with ESC and BEL: escaped in sandbox.txt, .json and
                      on stdout, its directory name reduced to [A-Za-z0-9._-].
  follow/50 children  wl_forkexec forks 50 children that exec at the same moment (each notes the
                      clock before its exec, its new image at main: the hold, measured by the
                      children): every child's hold under HOLD_S + EXEC_SLACK_S (the coordinator's 5 s
                      hold limit, PT_FOLLOW_HOLD_S, plus 2.5 s for an exec and loader on a machine
                      busy with the sessions' loads; main's build held them up to 24 s here: one
                      session after another); every process accounted for: traced images +
                      not_traced.hold_limit + session_failed = the images, images +
                      slots_full = 51 (the command too); sandbox.txt says how many were let go.
  follow/--follow-hold  the same with --follow-hold 2: every hold under 2 + 2.5 s, sandbox.txt says
                      "after 2.0 s"; and 12 children with --follow-hold 60: none let go, all 13
                      processes traced.
  follow/container    peaktrace --follow in the bundled host's command, launching the whole trixie
                      container (unshare + chroot, as the container section): its supervisor (sh)
                      starts an extension (python3 that registers with the Extensions API and holds
                      EXT_MB) and later the runtime (bootstrap: sh execs python3). Both traced, the
                      extension named as one, the runtime's invocations = the host's REPORT lines,
                      each sandbox invocation peak = the handler's reading + the extension's and
                      the other container processes' statm (within TOLERANCE), so the sandbox peak
                      covers both.
  follow/container static  the same with peaktrace-static --follow inside the container, as its
                      command (in front of the supervisor; report inside the rootfs).
  follow/supervised group SIGKILL  tests/workloads/supervise.py (as RIE: a new process group,
                      SIGKILL to it) as the bundled host's runtime command starts `peaktrace
                      --follow -o DIR -- sh -c 'wl_sleep & exec python3 bootstrap.py'` (a child
                      process, then the runtime: the Python function serving ct_handler); the
                      coordinator left the group (the runtime and wl_sleep are in it, the sessions
                      are not); invocations through the host, then the supervisor SIGKILLs the
                      group: the runtime and wl_sleep die, sandbox.json/.txt and every image's
                      report.json are written; the runtime's and the sandbox's invocations carry
                      the host's REPORT request ids (the last one too), the runtime's peaks = the
                      handler's statm, the sandbox's = the handler's statm + wl_sleep's; the
                      coordinator then ends by SIGKILL, as the supervisor would see the runtime;
  follow/supervised -d  the same with -d: the reports are written with the invocations made while
                      tracing; later invokes are answered by the same runtime (no
                      Runtime.ExitError, the supervisor saw no exit), no process is ptraced any
                      more, no probe left in the runtime's libc text, the coordinator is still the
                      command's parent; a SIGTERM to it goes to the runtime, and the coordinator
                      ends by that signal as the runtime did;
  follow/supervised SIGTERM  the same with a SIGTERM to the coordinator instead of -d (the second
                      SIGTERM is the one passed on).
  follow/supervised=no  `--supervised no` overrides: the coordinator stays in the group (no
                      "under a supervisor" line), its sessions start (the option is the
                      coordinator's alone), and the group's SIGKILL kills it too: no sandbox.json,
                      while each process's session, in its own group, still writes its
                      report.json with the invocation.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import containerfix
import supervisedfix
from harness import ROOT, TIMEOUT, Proc, children_of, free_ports, pid_alive, run, short, wait_gone
from lambdafix import need_host
from tracing import breakpoints_left, load_report

MiB = 1 << 20
PAGE = 4096
TOL = 16 * PAGE          # as the timeline section: kmem:rss_stat and statm may differ by a few pages
TOLERANCE = containerfix.TOLERANCE
EXT_MB = 24
SUPERVISOR = """#!/bin/sh
# A function sandbox's supervisor: an extension first, the runtime later, as Lambda starts them.
python3 /var/task/extension.py &
read ready < /tmp/ext-ready
/var/task/bootstrap &
wait
"""
EXTENSION = """import http.client, os, time
host, port = os.environ["AWS_LAMBDA_RUNTIME_API"].split(":")
c = http.client.HTTPConnection(host, int(port), timeout=5)
try:
    c.request("POST", "/2020-01-01/extension/register", body=b'{"events": ["SHUTDOWN"]}',
              headers={"Lambda-Extension-Name": "extension.py"})
    c.getresponse().read()
except Exception:
    pass
held = bytearray(%d << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
with open("/tmp/ext-ready", "w") as f:
    f.write("ready\\n")
while True:
    time.sleep(3600)
""" % EXT_MB


def read_log(path):
    """{(role, phase): (pid, bytes)} from wl_sandbox's log."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                role, phase, pid, b = line.split()
                out[(role, phase)] = (int(pid), int(b))
    except (OSError, ValueError):
        pass
    return out


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def check_sandbox(res, name, outdir, log, roles, truth_peak):
    """The sandbox's figures against the workload's readings; roles: {role: log phase at its peak}."""
    sb = load(os.path.join(outdir, "sandbox.json"))
    if not res.true(name + ": sandbox.json written", sb is not None, outdir):
        return None
    res.true(name + ": sandbox.txt written", os.path.exists(os.path.join(outdir, "sandbox.txt")), outdir)
    imgs = {i["pid"]: i for i in sb.get("images", [])}
    for role, phase in roles.items():
        pid, want = log.get((role, phase), (None, None))
        im = imgs.get(pid)
        if not res.true("%s: %s traced" % (name, role), im is not None, "pid %s not in %s" % (pid, sorted(imgs))):
            continue
        print("INFO %s: %s own peak %d, its statm %d (%+d B); held %.0f ms" % (
            name, role, im["own_peak"], want, im["own_peak"] - want, im.get("held_ms", 0)), flush=True)
        res.true("%s: %s's own peak = its statm at its peak" % (name, role), abs(im["own_peak"] - want) <= TOL,
                 "peaktrace %d, statm %d" % (im["own_peak"], want))
        res.true("%s: %s's report.json" % (name, role),
                 load(os.path.join(outdir, im["dir"], "report.json")) is not None, im["dir"])
    print("INFO %s: sandbox peak %d, the readings' sum %d (%+d B); sum of own peaks %d" % (
        name, sb["rss_peak"], truth_peak, sb["rss_peak"] - truth_peak, sb["sum_of_own_peaks"]), flush=True)
    res.true(name + ": sandbox peak = the sum of the readings at the runtime's peak",
             abs(sb["rss_peak"] - truth_peak) <= TOL * len(roles), "peaktrace %d, readings %d" % (sb["rss_peak"], truth_peak))
    res.true(name + ": the sum of own peaks is measurably more (the peaks were at different times)",
             sb["sum_of_own_peaks"] - sb["rss_peak"] >= 24 * MiB, "own %d, sum %d" % (sb["sum_of_own_peaks"], sb["rss_peak"]))
    res.true(name + ": shares at the peak add up to it", abs(sb["shares_unexplained"]) <= TOL, sb["shares_unexplained"])
    res.eq(name + ": nothing left untraced", sb.get("not_traced"),
           {"exited_without_exec": 0, "slots_full": 0, "session_failed": 0, "hold_limit": 0,
            "allocator_not_found": 0})
    return sb


def follow_launch(res, ctx, wl, tmp):
    name = "follow/launch"
    outdir, log = os.path.join(tmp, "follow-launch"), os.path.join(tmp, "follow-launch.log")
    rc, out, err = run([ctx.pt, "--follow", "-o", outdir, "--", wl, "supervisor", log], timeout=5 * TIMEOUT)
    if not res.eq(name + ": exit status", rc, 0):
        print(short(err, 2000))
        return
    lg = read_log(log)
    truth = sum(lg.get(k, (0, 0))[1] for k in [("runtime", "peak"), ("extension", "after"), ("supervisor", "B")])
    sb = check_sandbox(res, name, outdir, lg, {"extension": "peak", "runtime": "peak", "supervisor": "B"}, truth)
    if sb:
        res.true(name + ": every image held at its exec", all(i["held"] for i in sb["images"]), sb["images"])
        res.true(name + ": the text report on stdout", "SANDBOX (every traced process together)" in out, short(out))


def follow_pids(res, ctx, wl, tmp):
    name = "follow/pids"
    outdir, log = os.path.join(tmp, "follow-pids"), os.path.join(tmp, "follow-pids.log")
    # Repeated -p is the same list; a PID that does not exist is exit 3, as with one.
    rc, _, err = run([ctx.pt, "-p", "1", "-p", "4194303", "-o", outdir + "-none"])
    res.true(name + ": -p 1 -p 4194303: exit 3, the missing one named",
             rc == 3 and "no such process: 4194303" in err, (rc, short(err)))
    procs, pipes = {}, {}
    for role in ("extension", "runtime"):
        up_r, up_w = os.pipe()
        dn_r, dn_w = os.pipe()
        procs[role] = subprocess.Popen([wl, role, log, str(up_w), str(dn_r)], pass_fds=(up_w, dn_r))
        os.close(up_w)
        os.close(dn_r)
        pipes[role] = (up_r, dn_w)

    def step(role):
        os.write(pipes[role][1], b"x")
        return os.read(pipes[role][0], 1) == b"x"

    deadline = time.monotonic() + TIMEOUT
    while len(read_log(log)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = "%d,%d" % (procs["extension"].pid, procs["runtime"].pid)
    p = Proc([ctx.pt, "-q", "-p", pids, "-o", outdir])
    ok = all(p.wait_for("err", r"tracing PID %d " % procs[r].pid, 3 * TIMEOUT) for r in procs)
    if not res.true(name + ": both traced", ok, p.err[-600:]):
        for pr in procs.values():
            pr.kill()
        p.kill()
        return
    ok = step("extension") and step("extension") and step("runtime")   # peak, after; its peak
    os.write(pipes["runtime"][1], b"x")
    os.write(pipes["extension"][1], b"x")
    for pr in procs.values():
        pr.wait(TIMEOUT)
    res.eq(name + ": exit status", p.wait(3 * TIMEOUT), 0)
    lg = read_log(log)
    truth = lg.get(("runtime", "peak"), (0, 0))[1] + lg.get(("extension", "after"), (0, 0))[1]
    sb = check_sandbox(res, name, outdir, lg, {"extension": "peak", "runtime": "peak"}, truth)
    if sb:
        res.true(name + ": attached, not held", not any(i["held"] for i in sb["images"]), sb["images"])


def follow_pid(res, ctx, wl, tmp):
    """--follow -p on a shell that, once traced, execs the supervisor: the exec of a process
    given, then the processes it starts."""
    name = "follow/pid --follow"
    outdir, log = os.path.join(tmp, "follow-pid"), os.path.join(tmp, "follow-pid.log")
    fifo = os.path.join(tmp, "follow-pid.fifo")
    os.mkfifo(fifo)
    sh = subprocess.Popen(["/bin/sh", "-c", 'read x < "$0"; exec "$1" supervisor "$2"', fifo, wl, log])
    p = Proc([ctx.pt, "--follow", "-q", "-p", str(sh.pid), "-o", outdir])
    if not res.true(name + ": traced", p.wait_for("err", r"tracing PID %d " % sh.pid, 3 * TIMEOUT), p.err[-600:]):
        sh.kill()
        p.kill()
        return
    with open(fifo, "w") as f:
        f.write("go\n")
    sh.wait(5 * TIMEOUT)
    res.eq(name + ": exit status", p.wait(3 * TIMEOUT), 0)
    lg = read_log(log)
    truth = sum(lg.get(k, (0, 0))[1] for k in [("runtime", "peak"), ("extension", "after"), ("supervisor", "B")])
    sb = check_sandbox(res, name, outdir, lg, {"extension": "peak", "runtime": "peak"}, truth)
    if sb:
        imgs = [(i["pid"], i["image"], i["held"]) for i in sb["images"]]
        res.true(name + ": the shell attached, its exec into the supervisor and the two it started held",
                 (sh.pid, 1, False) in imgs and (sh.pid, 2, True) in imgs and len(imgs) == 4, imgs)


def follow_untraced(res, ctx, tmp):
    """A child peaktrace cannot trace (a stripped static binary: no malloc to probe) is followed,
    let go untraced, and counted."""
    name = "follow/untraced child"
    st = ctx.built.get("wl_static", {}).get("fp")
    if not st:
        res.fail(name, "wl_static not built")
        return
    outdir = os.path.join(tmp, "follow-untraced")
    rc, out, err = run([ctx.pt, "--follow", "-q", "-o", outdir, "--", "/bin/sh", "-c", st + "; echo sh-after"],
                       timeout=3 * TIMEOUT)
    res.eq(name + ": exit status", rc, 0)
    res.true(name + ": the command ran on", "sh-after" in out, short(out))
    sb = load(os.path.join(outdir, "sandbox.json"))
    if not res.true(name + ": sandbox.json written", sb is not None, err[-500:]):
        return
    res.eq(name + ": counted (session_failed)", sb["not_traced"]["session_failed"], 1)
    res.eq(name + ": not a spare's failure (spares go on)", sb.get("spares", {}).get("failed"), 0)
    res.eq(name + ": the images, traced or not", sorted((i["comm"], i["traced"]) for i in sb["images"]),
           [("sh", True), ("wl_static", False)])


def spare_watch(pt, stop, seen):
    """While the run lasts: every spare session of this peaktrace binary (its --spare-fd) and the
    BPF programs it holds, from /proc (seen: {pid: set of prog ids})."""
    exe = os.path.realpath(pt)
    while not stop.is_set():
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/exe" % d) != exe:
                    continue
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if b"--spare-fd" not in f.read():
                        continue
                ids = seen.setdefault(int(d), set())
                for fd in os.listdir("/proc/%s/fdinfo" % d):
                    with open("/proc/%s/fdinfo/%s" % (d, fd)) as f:
                        m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
                    if m:
                        ids.add(int(m.group(1)))
            except OSError:
                continue
        stop.wait(0.02)


def follow_spare(res, ctx, tmp):
    """Images taken by spare sessions: their holds hold no BPF load; nothing left behind."""
    import threading
    name = "follow/spare"
    outdir = os.path.join(tmp, "follow-spare")
    t1, t2 = os.path.join(tmp, "spare-t1"), os.path.join(tmp, "spare-t2")
    script = ('read t rest < /proc/uptime; echo $t > "$0"; '
              'exec /bin/sh -c \'read t rest < /proc/uptime; echo $t > "$0"\' "$1"')
    stop, seen = threading.Event(), {}
    w = threading.Thread(target=spare_watch, args=(ctx.pt, stop, seen), daemon=True)
    w.start()
    rc, out, err = run([ctx.pt, "--follow", "-q", "-o", outdir, "--", "/bin/sh", "-c", script, t1, t2],
                       timeout=5 * TIMEOUT)
    # Spares no image took end with the coordinator (it waits for them).
    stop.set()
    w.join()
    res.eq(name + ": exit status", rc, 0)
    sb = load(os.path.join(outdir, "sandbox.json"))
    if not res.true(name + ": sandbox.json written", sb is not None, err[-600:]):
        return
    imgs = sb["images"]
    res.eq(name + ": the shell and its exec, both traced", [(i["comm"], i["image"], i["traced"]) for i in imgs],
           [("sh", 1, True), ("sh", 2, True)])
    res.true(name + ": both taken by a spare already loaded", all(i.get("spare") == "loaded" for i in imgs),
             [(i["image"], i.get("spare")) for i in imgs])
    for im in imgs:
        rep = load(os.path.join(outdir, im["dir"], "report.json")) or {}
        load_ms = rep.get("startup", {}).get("bpf_load_ns", 0) / 1e6
        print("INFO %s: image %d held %.1f ms, its session's BPF load %.1f ms" % (name, im["image"], im["held_ms"],
                                                                               load_ms), flush=True)
        res.true("%s: image %d held less than its session's BPF load took" % (name, im["image"]),
                 0 < im["held_ms"] < load_ms, (im["held_ms"], load_ms))
        if im["image"] == 2:
            try:
                with open(t1) as f1, open(t2) as f2:
                    gap = (float(f2.read()) - float(f1.read())) * 1000
            except (OSError, ValueError) as e:
                res.fail(name + ": the workload's own times", str(e))
                continue
            print("INFO %s: exec to the new image's first command %.0f ms by the workload's clock" % (name, gap),
                  flush=True)
            res.true(name + ": exec to first command (the workload's clock) shorter than the BPF load",
                     gap < load_ms, (gap, load_ms))
    want = {"sandbox.txt", "sandbox.json"} | {i["dir"] for i in imgs}
    res.eq(name + ": no report directory but the traced images'", sorted(os.listdir(outdir)), sorted(want))
    # The first spares are loaded before the command starts; a replacement may be seen before
    # its load, or killed during it at the end.
    res.true(name + ": spares seen while it ran, with their BPF programs",
             sum(1 for v in seen.values() if v) >= 2, {k: len(v) for k, v in seen.items()})
    res.eq(name + ": no spare process left", [p for p in seen if pid_alive(p)], [])
    left = []
    for ids in seen.values():
        for i in sorted(ids):
            if run(["bpftool", "prog", "show", "id", str(i)])[0] == 0:
                left.append(i)
    res.eq(name + ": none of the spares' BPF programs still loaded", left, [])


def follow_spare_unfit(res, ctx, tmp):
    """A spare cannot take an image whose allocator needs other settings: a session of its own."""
    name = "follow/spare unfit"
    je = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    if not os.path.exists(je):
        res.skip(name, "libjemalloc2 not installed")
        return
    outdir = os.path.join(tmp, "follow-spare-unfit")
    rc, out, err = run([ctx.pt, "--follow", "-q", "-o", outdir, "--", "/usr/bin/env", "LD_PRELOAD=" + je,
                        "/bin/sleep", "0.2"], timeout=5 * TIMEOUT)
    res.eq(name + ": exit status", rc, 0)
    sb = load(os.path.join(outdir, "sandbox.json"))
    if not res.true(name + ": sandbox.json written", sb is not None, err[-600:]):
        return
    imgs = [(i["comm"], i["traced"], i.get("spare")) for i in sb["images"]]
    res.eq(name + ": env by a spare, sleep (jemalloc) by a session of its own, both traced", imgs,
           [("env", True, "loaded"), ("sleep", True, "none")])
    res.eq(name + ": counted", sb.get("spares", {}).get("unfit"), 1)
    rep = load(os.path.join(outdir, sb["images"][-1]["dir"], "report.json")) or {}
    res.eq(name + ": sleep traced with jemalloc", rep.get("allocator", {}).get("kind") if
           isinstance(rep.get("allocator"), dict) else rep.get("allocator"), "jemalloc")
    want = {"sandbox.txt", "sandbox.json"} | {i["dir"] for i in sb["images"]}
    res.eq(name + ": no report directory but the traced images'", sorted(os.listdir(outdir)), sorted(want))


def follow_hostile(res, ctx, tmp):
    """A followed program named with terminal escapes: never raw in the sandbox's outputs or its
    directory names."""
    name = "follow/hostile name"
    evil = os.path.join(tmp, "ev\x1b[31mil\x07")
    shutil.copy2("/bin/sleep", evil)
    outdir = os.path.join(tmp, "follow-hostile")
    rc, out, err = run([ctx.pt, "--follow", "-o", outdir, "--", "/bin/sh", "-c", '"$0" 0.2', evil],
                       timeout=3 * TIMEOUT)
    res.eq(name + ": exit status", rc, 0)
    raw = ""
    for f in ("sandbox.txt", "sandbox.json"):
        try:
            with open(os.path.join(outdir, f), encoding="utf-8", errors="replace") as fh:
                raw += fh.read()
        except OSError as e:
            res.fail(name + ": " + f, str(e))
    res.true(name + ": the traced program is in the sandbox", "ev\\x1b[31mil\\x07" in raw or
             "ev\\u001b[31mil\\u0007" in raw, short(raw, 800))
    res.true(name + ": no raw ESC or BEL in sandbox.txt/json or on stdout", "\x1b" not in raw + out and
             "\x07" not in raw + out, short(raw, 300))
    dirs = os.listdir(outdir) if os.path.isdir(outdir) else []
    res.true(name + ": directory names only [A-Za-z0-9._-]", dirs and all(re.fullmatch(r"[A-Za-z0-9._-]+", d)
                                                                       for d in dirs), dirs)


HOLD_S = 5               # the coordinator's default hold limit (PT_FOLLOW_HOLD_S, --follow-hold)
EXEC_SLACK_S = 2.5       # an exec and its loader on a machine busy with the sessions' loads
CHILDREN = 50


def follow_many(res, ctx, tmp, name, children, hold=None):
    """children exec'ing at once: each one's hold at exec bounded by the hold limit (--follow-hold
    HOLD, else the default), the ones not followed counted. Returns sandbox.json's not_traced."""
    wl = ctx.built.get("wl_forkexec", {}).get("fp")
    if not wl:
        res.fail(name, "wl_forkexec not built")
        return None
    tag = "%s-%d-%s" % (name.split("/")[-1].replace(" ", "-"), children, hold)
    outdir = os.path.join(tmp, "follow-" + tag)
    log = os.path.join(tmp, "follow-%s.log" % tag)
    bound = (hold if hold is not None else HOLD_S) + EXEC_SLACK_S
    opts = ["--follow-hold", str(hold)] if hold is not None else []
    rc, out, err = run([ctx.pt, "--follow", "-q", "-o", outdir] + opts + ["--", wl, str(children), log],
                       timeout=3 * TIMEOUT)
    res.eq(name + ": exit status", rc, 0)
    try:
        with open(log) as f:
            holds = [int(l.split()[1]) / 1e6 for l in f if l.strip()]
        sb = load(os.path.join(outdir, "sandbox.json"))
        with open(os.path.join(outdir, "sandbox.txt")) as f:
            txt = f.read()
    except (OSError, ValueError, IndexError) as e:
        res.fail(name + ": outputs", str(e))
        return None
    res.eq(name + ": every child ran its new image", len(holds), children)
    res.true(name + ": every hold under %.1f s" % bound, holds and max(holds) < bound,
             "max %.2f s" % max(holds or [0]))
    nt = sb.get("not_traced", {})
    images = sb.get("images", [])
    traced = sum(1 for i in images if i.get("traced"))
    res.eq(name + ": traced images + hold_limit + session_failed = the images",
           traced + nt.get("hold_limit", -1) + nt.get("session_failed", -1), len(images))
    res.eq(name + ": images + slots_full = every process", len(images) + nt.get("slots_full", -1), children + 1)
    m = re.search(r"(\d+) let go untraced after ([0-9.]+) s held at exec", txt)
    res.true(name + ": sandbox.txt counts those let go, after the hold in force",
             m and int(m.group(1)) == nt.get("hold_limit")
             and abs(float(m.group(2)) - (hold if hold is not None else HOLD_S)) < 0.05,
             [l for l in txt.splitlines() if "not traced:" in l])
    print("%s: hold max %.2f s, median %.2f s; %d traced, %d let go at the hold limit, "
          "%d past the slots" % (name, max(holds), sorted(holds)[len(holds) // 2], traced, nt.get("hold_limit", -1),
                                 nt.get("slots_full", -1)))
    nt["traced"] = traced
    return nt


def statm_rss(pid):
    try:
        with open("/proc/%d/statm" % pid) as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return None


TRACED_FOLLOW = """#!/bin/sh
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
exec /usr/local/bin/peaktrace --follow -q -o /tmp/pt-follow -- /var/task/supervisor
"""


def ns_pid(pid):
    """The pid as the container's own PID namespace names it (NSpid's last field)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return pid


def container_run(res, ctx, rootfs, tmp, static):
    """static: peaktrace-static --follow inside the container, as its command (its PIDs are the
    container's); else the host's peaktrace --follow in the host's command, around unshare."""
    name = "follow/container static" if static else "follow/container"
    outdir = os.path.join(rootfs, "tmp/pt-follow") if static else os.path.join(tmp, "follow-container")
    task = rootfs + containerfix.TASK
    containerfix.write(os.path.join(task, "supervisor"), SUPERVISOR, 0o755)
    containerfix.write(os.path.join(task, "extension.py"), EXTENSION)
    containerfix.write(os.path.join(task, "traced-follow"), TRACED_FOLLOW, 0o755)
    shutil.rmtree(os.path.join(rootfs, "tmp/pt-follow"), ignore_errors=True)
    fifo = os.path.join(rootfs, "tmp/ext-ready")
    if os.path.lexists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    port = free_ports(2)
    argv = containerfix.host_argv(ctx, rootfs, port,
                                  containerfix.TASK + ("/traced-follow" if static else "/supervisor"))
    # peaktrace runs in the function's memory cgroup here (the host's runtime command), and so
    # do its sessions' BPF tables (about 33 MiB each with --follow's defaults).
    argv[argv.index("-m") + 1] = "1024"
    if not static:
        at = argv.index("--")
        argv = argv[:at + 1] + [os.path.abspath(ctx.pt), "--follow", "-q", "-o", outdir, "--"] + argv[at + 1:]
    state = {}

    def after_start(h):
        # Two python3 sessions (the extension's and the runtime's) tracing: the runtime is ready.
        deadline = time.monotonic() + 6 * TIMEOUT
        while time.monotonic() < deadline and h.running():
            if len(re.findall(r"^peaktrace: tracing PID \d+ \(python3", h.err, re.M)) >= 2:
                break
            time.sleep(0.2)
        else:
            res.fail(name, "the runtime and the extension were not both traced: " + h.err[-800:])
            return None
        pt = containerfix.find_desc(h.pid, "peaktrace", TIMEOUT)
        time.sleep(1.0)   # the runtime's imports, up to its first GET .../next

        def stop():
            # The container's processes but the runtime hold still: their RSS now is what they
            # held during the invocations. By the PID the report uses (the container's, inside).
            state["rss"] = {}
            for k in containerfix.descendants(h.pid):
                c = containerfix.comm(k)
                if k != pt and not c.startswith("peaktrace"):
                    state["rss"][ns_pid(k) if static else k] = (c, statm_rss(k))
            os.kill(pt, signal.SIGINT)
            if static:
                return wait_gone(pt, 3 * TIMEOUT)
            # The host starts its runtime command as RIE does: supervised, the coordinator
            # writes the reports and stays the command's parent (follow/supervised *).
            return h.wait_for("err", r"^peaktrace: sandbox.txt and sandbox.json written", 3 * TIMEOUT)
        return stop

    got = containerfix.drive(res, name, ctx, argv, port, after_start)
    if got is None:
        return
    ids, readings, done = got
    res.true(name + (": peaktrace exited on SIGINT" if static else
                     ": SIGINT: the sandbox report written (supervised: the command runs on)"), done, "no")
    check_container(res, name, outdir, ids, readings, state.get("rss", {}))


def check_container(res, name, outdir, ids, readings, rss):
    sb = load(os.path.join(outdir, "sandbox.json"))
    if not res.true(name + ": sandbox.json written", sb is not None, outdir):
        return
    imgs = sb.get("images", [])
    ext = [i for i in imgs if i["role"] == "extension"]
    rt = [i for i in imgs if i["role"] == "runtime" and i["comm"].startswith("python3")]
    res.true(name + ": the extension named as one (python3)", len(ext) == 1 and ext[0]["comm"].startswith("python3"),
             [(i["pid"], i["comm"], i["role"]) for i in imgs])
    res.true(name + ": the runtime traced (python3, from its exec)", len(rt) == 1 and rt[0]["held"],
             [(i["pid"], i["comm"], i["role"], i["held"]) for i in imgs])
    for i in imgs:
        print("INFO %s: %s[%d] image %d %s: held %.0f ms, own peak %d" % (
            name, i["comm"], i["pid"], i["image"], i["role"], i["held_ms"], i["own_peak"]), flush=True)
    if not ext or not rt:
        return
    rep = load(os.path.join(outdir, rt[0]["dir"], "report.json"))
    if res.true(name + ": the runtime's report.json", rep is not None, rt[0]["dir"]):
        invs = [i for i in rep.get("invocations", []) if i.get("phase") == "invocation"]
        res.eq(name + ": the runtime's request ids = the host's REPORT lines", [i.get("request_id") for i in invs], ids)
    sinv = sb.get("invocations", [])
    res.eq(name + ": sandbox invocations' request ids = the host's REPORT lines", [i["request_id"] for i in sinv], ids)
    # Truth: the handler's own reading, plus every other traced process's statm.
    traced = {i["pid"] for i in imgs} - {rt[0]["pid"]}
    others = sum(r for k, (c, r) in rss.items() if r and k in traced)
    print("INFO %s: the traced processes' statm at the end: %s" % (
        name, {k: v for k, v in rss.items() if k in traced}), flush=True)
    res.true(name + ": every traced process but the runtime read at the end", traced <= set(rss), (traced, rss))
    for k, (mb, r) in enumerate(readings):
        if k >= len(sinv) or r is None:
            res.fail("%s: invocation %d sandbox peak" % (name, k + 1), "no figure")
            continue
        want = r + others
        print("INFO %s: invocation %d (%d MiB): sandbox peak %d, handler %d + the other processes %d = %d (%+d B)"
              % (name, k + 1, mb, sinv[k]["rss_peak"], r, others, want, sinv[k]["rss_peak"] - want), flush=True)
        res.true("%s: invocation %d sandbox peak = the handler's statm + the others' (extension included)"
                 % (name, k + 1), abs(sinv[k]["rss_peak"] - want) <= TOLERANCE, "peaktrace %d, truth %d" % (
                     sinv[k]["rss_peak"], want))
    res.true(name + ": the sandbox peak covers both", sb["rss_peak"] >= max(r for _, r in readings if r) +
             EXT_MB * MiB - TOLERANCE, sb["rss_peak"])
    txt = open(os.path.join(outdir, "sandbox.txt")).read()
    res.true(name + ": a SANDBOX REPORT-style line per invocation",
             len(re.findall(r"^SANDBOX RequestId: \S+\t", txt, re.M)) == len(ids), short(txt, 1500))


# The command under the supervisor: a child process (wl_sleep: a few known blocks, then still until
# SIGTERM) and then the runtime, as a bootstrap script that starts a helper and execs the runtime.
SUPERVISED_CMD = '"$0" & exec "$1" "$2"'


def supervised_start(ctx, name, tag, port, pt_args):
    """supervisedfix.Supervised with peaktrace --follow; (s, wl_sleep's pid) once the runtime's image
    is traced, or None after saying why."""
    res = ctx.res
    wl = ctx.built.get("wl_sleep", {}).get("fp")
    if not wl:
        res.fail(name, "wl_sleep not built")
        return None
    shutil.rmtree(os.path.join(ctx.tmp, tag), ignore_errors=True)
    s = supervisedfix.Supervised(ctx, name, tag, port, ["--follow"] + pt_args,
                              runtime=["/bin/sh", "-c", SUPERVISED_CMD, wl, supervisedfix.PY,
                                       os.path.join(ROOT, "tools/functions/python/bootstrap.py")])
    if not s.start():     # the root's first session: sh, the pid the runtime keeps
        return None
    if not s.h.wait_for("err", r"^peaktrace: tracing PID %d \(python3" % s.rt, 6 * TIMEOUT):
        res.fail(name, "the runtime's image (python3) was not traced: " + s.h.err[-800:])
        s.stop()
        return None
    # The child is forked before the shell's exec into python3 but may exec after python3's
    # session is up (a spare takes it in milliseconds): wait for its exec.
    deadline = time.monotonic() + TIMEOUT
    while True:
        kids = [k for k in children_of(s.rt) if containerfix.comm(k).startswith("wl_sleep")]
        if kids or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not res.true(name + ": the command's child (wl_sleep) runs", len(kids) == 1, children_of(s.rt)):
        s.stop()
        return None
    res.true(name + ": wl_sleep traced", s.h.wait_for("err", r"^peaktrace: tracing PID %d " % kids[0], TIMEOUT),
             s.h.err[-600:])
    return s, kids[0]


def supervised_groups(res, name, s, child):
    s.check_groups()
    res.eq(name + ": wl_sleep is in that group too", supervisedfix.pgid(child), s.pt)
    sess = [k for k in children_of(s.pt) if containerfix.comm(k).startswith("peaktrace")]
    res.true(name + ": every session in a group of its own, out of the kill's reach",
             sess and all(supervisedfix.pgid(k) == k for k in sess),
             [(k, supervisedfix.pgid(k)) for k in sess])


def runtime_dir(outdir, rt):
    """The runtime's report directory: its python3 image's (the root pid's last image)."""
    dirs = sorted(d for d in (os.listdir(outdir) if os.path.isdir(outdir) else [])
                  if d.startswith("proc-%d-python3" % rt))
    return os.path.join(outdir, dirs[-1]) if dirs else os.path.join(outdir, "proc-%d-python3" % rt)


def wait_sandbox(outdir, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sb = load(os.path.join(outdir, "sandbox.json"))
        if sb is not None:
            return sb
        time.sleep(0.1)
    return None


def check_supervised(res, name, s, ids, readings, child_rss, sb):
    """Every image's report.json; the runtime's and the sandbox's invocations vs the host and the
    handler (plus wl_sleep, which held still, for the sandbox)."""
    if not res.true(name + ": sandbox.json written", sb is not None, s.outdir):
        return
    res.true(name + ": sandbox.txt written", os.path.exists(os.path.join(s.outdir, "sandbox.txt")), s.outdir)
    imgs = sb.get("images", [])
    res.eq(name + ": the images: sh, then python3 (the same pid), and wl_sleep, all traced",
           sorted((i["comm"].replace("wl_sleep_fp", "wl_sleep"), i["traced"]) for i in imgs),
           [("python3", True), ("sh", True), ("wl_sleep", True)])
    missing = [i["dir"] for i in imgs if load(os.path.join(s.outdir, i["dir"], "report.json")) is None]
    res.eq(name + ": every image's report.json written", missing, [])
    rep = load_report(res, name, runtime_dir(s.outdir, s.rt))
    if rep:
        containerfix.check_invocations(res, name, rep, ids, readings)   # the runtime's report
    sinv = sb.get("invocations", [])
    res.eq(name + ": sandbox invocations' request ids = the host's REPORT lines",
           [i.get("request_id") for i in sinv], ids)
    for k, (mb, r) in enumerate(readings):
        if k >= len(sinv) or r is None or child_rss is None:
            res.fail("%s: invocation %d sandbox peak" % (name, k + 1), "no figure")
            continue
        want = r + child_rss
        print("INFO %s: invocation %d (%d MiB): sandbox peak %d, handler %d + wl_sleep %d = %d (%+d B)"
              % (name, k + 1, mb, sinv[k]["rss_peak"], r, child_rss, want, sinv[k]["rss_peak"] - want), flush=True)
        res.true("%s: invocation %d sandbox peak = the handler's statm + wl_sleep's" % (name, k + 1),
                 abs(sinv[k]["rss_peak"] - want) <= TOLERANCE, "peaktrace %d, truth %d" % (sinv[k]["rss_peak"], want))
    return rep


def supervised_group_sigkill(ctx, port):
    res, name = ctx.res, "follow/supervised group SIGKILL"
    got = supervised_start(ctx, name, "follow-sup-kill", port, [])
    if not got:
        return
    s, child = got
    try:
        supervised_groups(res, name, s, child)
        readings = []
        for k, mb in enumerate(containerfix.SIZES):
            supervisedfix.flushed(runtime_dir(s.outdir, s.rt), k)
            rc, rss, _ = s.invoke(mb)
            res.eq("%s: invoke %d MiB answered" % (name, mb), rc, 0)
            readings.append((mb, rss))
        time.sleep(0.3)
        ids = s.ids(len(containerfix.SIZES))
        child_rss = statm_rss(child)
        try:
            os.kill(s.sup, signal.SIGUSR1)
        except (OSError, TypeError):
            pass
        t0 = time.monotonic()
        m = supervisedfix.wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt, 6 * TIMEOUT)
        print("INFO %s: the coordinator ended %.2f s after the group's SIGKILL (every report written first)"
              % (name, time.monotonic() - t0), flush=True)
        res.eq(name + ": the supervisor sees its child end by SIGKILL, as the runtime did",
               m.group(1) if m else None, "signal 9")
        res.true(name + ": the runtime and wl_sleep are gone", wait_gone(s.rt, 10) and wait_gone(child, 10),
                 "still there: %s" % [k for k in (s.rt, child) if pid_alive(k)])
        rep = check_supervised(res, name, s, ids, readings, child_rss, load(os.path.join(s.outdir, "sandbox.json")))
        if rep:
            t = rep.get("target", {})
            res.eq(name + ": the runtime killed by signal 9 (its report.json)", (t.get("exited"), t.get("exit_signal")),
                   (True, 9))
    finally:
        s.stop()


def supervised_stops(ctx, port, how):
    """Tracing stops at the end of -d, or at a SIGTERM to the coordinator; the command lives on."""
    res, name = ctx.res, "follow/supervised " + how
    # -d counts from peaktrace's start: the three sessions' start-up (seconds each on a loaded
    # machine) and two invocations fit.
    got = supervised_start(ctx, name, "follow-sup" + how, port, ["-d", "45"] if how == "-d" else [])
    if not got:
        return
    s, child = got
    try:
        supervised_groups(res, name, s, child)
        readings, pids = [], set()
        for k, mb in enumerate((24, 8)):
            supervisedfix.flushed(runtime_dir(s.outdir, s.rt), k)
            rc, rss, pid = s.invoke(mb)
            res.eq("%s: invoke %d MiB while tracing answered" % (name, mb), rc, 0)
            readings.append((mb, rss))
            pids.add(pid)
        supervisedfix.flushed(runtime_dir(s.outdir, s.rt), 2)
        ids = s.ids(2)
        child_rss = statm_rss(child)
        if how == "SIGTERM":
            os.kill(s.pt, signal.SIGTERM)
        if not s.h.wait_for("err", r"^peaktrace: sandbox.txt and sandbox.json written", 6 * TIMEOUT):
            res.fail(name, "no sandbox report at the end of %s: %s" % (how, s.h.err[-600:]))
            return
        rep = check_supervised(res, name, s, ids, readings, child_rss, load(os.path.join(s.outdir, "sandbox.json")))
        if rep:
            res.eq(name + ": the runtime still running (its report.json)", rep.get("target", {}).get("exited"), False)
        time.sleep(0.5)
        supervisedfix.runtime_kept(res, name, s, pids, "the stop")
        res.true(name + ": the coordinator is still the command's parent", pid_alive(s.pt) and s.rt in children_of(s.pt),
                 "alive %s, its children %s" % (pid_alive(s.pt), children_of(s.pt)))
        res.eq(name + ": no session left", [k for k in children_of(s.pt) if k != s.rt], [])
        res.eq(name + ": neither the runtime nor wl_sleep is ptraced any more",
               (supervisedfix.tracer_pid(s.rt), supervisedfix.tracer_pid(child)), (0, 0))
        bad = breakpoints_left(s.rt)
        res.true(name + ": the runtime's libc text is byte-identical to the file (no probe left)", bad == 0,
                 "%s bytes differ" % bad)
        os.kill(s.pt, signal.SIGTERM)
        m = supervisedfix.wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": %s SIGTERM to the coordinator goes to the runtime; it ends as the runtime did"
               % ("a" if how == "-d" else "a second"), m.group(1) if m else None, "signal 15")
        res.true(name + ": the runtime is gone", wait_gone(s.rt, 10), "runtime %d still there" % s.rt)
    finally:
        s.stop()
        if pid_alive(child):
            os.kill(child, signal.SIGKILL)


def supervised_no(ctx, port):
    res, name = ctx.res, "follow/supervised=no"
    got = supervised_start(ctx, name, "follow-sup-no", port, ["--supervised", "no"])
    if not got:
        return
    s, child = got
    try:
        res.true(name + ": not under a supervisor", "under a supervisor" not in s.h.err, s.h.err[-300:])
        res.eq(name + ": the coordinator stays in its group", supervisedfix.pgid(s.pt), s.pt)
        rc, rss, _ = s.invoke(16)
        res.eq(name + ": invoke answered", rc, 0)
        time.sleep(0.3)
        ids = s.ids(1)
        os.kill(s.sup, signal.SIGUSR1)
        m = supervisedfix.wait_log(s.log, r"^exited %d (\w+ \d+)$" % s.pt)
        res.eq(name + ": the group's SIGKILL kills the coordinator", m.group(1) if m else None, "signal 9")
        # The sessions (groups of their own) live on and write their reports.
        rdir = runtime_dir(s.outdir, s.rt)
        deadline = time.monotonic() + 3 * TIMEOUT
        while time.monotonic() < deadline and load(os.path.join(rdir, "report.json")) is None:
            time.sleep(0.2)
        rep = load_report(res, name, rdir)
        if rep:
            containerfix.check_invocations(res, name, rep, ids, [(16, rss)])
        res.true(name + ": no sandbox.json (the coordinator was killed)",
                 not os.path.exists(os.path.join(s.outdir, "sandbox.json")), s.outdir)
    finally:
        s.stop()


SUPERVISED_CASES = ("follow/supervised group SIGKILL", "follow/supervised -d", "follow/supervised SIGTERM",
                    "follow/supervised=no")


def run_section(ctx):
    res, tmp = ctx.res, ctx.tmp
    wanted = [n for n in ("follow/launch", "follow/pids", "follow/pid --follow", "follow/untraced child",
                          "follow/spare", "follow/spare unfit", "follow/hostile name", "follow/50 children",
                          "follow/--follow-hold",
                          "follow/container",
                          "follow/container static") + SUPERVISED_CASES if res.wanted(n)]
    if not wanted:
        return
    wl = ctx.built.get("wl_sandbox", {}).get("fp")
    if not wl:
        res.fail("follow", "wl_sandbox not built")
        return
    if res.wanted("follow/launch"):
        follow_launch(res, ctx, wl, tmp)
    if res.wanted("follow/pids"):
        follow_pids(res, ctx, wl, tmp)
    if res.wanted("follow/pid --follow"):
        follow_pid(res, ctx, wl, tmp)
    if res.wanted("follow/untraced child"):
        follow_untraced(res, ctx, tmp)
    if res.wanted("follow/spare"):
        follow_spare(res, ctx, tmp)
    if res.wanted("follow/spare unfit"):
        follow_spare_unfit(res, ctx, tmp)
    if res.wanted("follow/hostile name"):
        follow_hostile(res, ctx, tmp)
    if res.wanted("follow/50 children"):
        follow_many(res, ctx, tmp, "follow/50 children", CHILDREN)
    if res.wanted("follow/--follow-hold"):
        # A short hold bounds every hold by it; a long one lets a dozen all be traced.
        follow_many(res, ctx, tmp, "follow/--follow-hold", CHILDREN, hold=2)
        nt = follow_many(res, ctx, tmp, "follow/--follow-hold", 12, hold=60)
        if nt is not None:
            res.eq("follow/--follow-hold: with 60 s, none of 12 let go at the hold limit",
                   (nt.get("hold_limit"), nt.get("traced")), (0, 13))
    if any(res.wanted(n) for n in SUPERVISED_CASES):
        if need_host(res, "follow/supervised*", ctx.build_arg, "invoke"):
            base = free_ports(8)
            if res.wanted("follow/supervised group SIGKILL"):
                supervised_group_sigkill(ctx, base)
            if res.wanted("follow/supervised -d"):
                supervised_stops(ctx, base + 2, "-d")
            if res.wanted("follow/supervised SIGTERM"):
                supervised_stops(ctx, base + 4, "SIGTERM")
            if res.wanted("follow/supervised=no"):
                supervised_no(ctx, base + 6)
    if res.wanted("follow/container") or res.wanted("follow/container static"):
        rootfs = os.path.join(ctx.build, "rootfs", "trixie")
        if not need_host(res, "follow/container*", ctx.build_arg):
            return
        rc, out, err = run([os.path.join(ROOT, "tools", "rootfs.sh"), rootfs], timeout=900)
        if rc != 0:
            res.skip("follow/container*", (err.strip().splitlines() or ["rc %r" % rc])[-1])
            return
        containerfix.prepare(ctx, rootfs)
        if res.wanted("follow/container"):
            container_run(res, ctx, rootfs, tmp, False)
        if res.wanted("follow/container static"):
            container_run(res, ctx, rootfs, tmp, True)

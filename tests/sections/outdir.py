# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""outdir: -o DIR made by another user cannot redirect root's writes (issue 23, finding 1).

The attack: an unprivileged user (nobody, uid 65534, in a forked child) makes DIR in a sticky,
world-writable directory (as /tmp is) before root runs peaktrace, with symlinks at names peaktrace
writes (report.json, report.html, .peaktrace-write-test; for diff, diff.txt, diff.peak.folded and
diff.peak.svg) pointing at root-owned 0600 files ("victims") and at a path where none exists yet.
The target is /bin/true, launched (`peaktrace -q -d 5 -o DIR -- /bin/true`). Truth: each victim's
bytes, mode, owner and mtime (lstat) before and after, and whether the missing one was created.

  outdir/planted links   nobody's DIR: exit 6, one "peaktrace: " line; victims unchanged, none
                         created, the links still links, nothing else in DIR
  outdir/trusted         the same DIR with --trust-output-dir: exit 0, victims unchanged and none
                         created; report.json/html now root's regular files (report.json parses)
  outdir/trusted race    --trust-output-dir while nobody re-plants the links (unlink, symlink) in
                         a loop for the whole run: the victims unchanged, none created
  outdir/world-writable  a root-owned DIR of mode 0777 (and 0770): exit 6, one line, DIR empty
  outdir/sudo user group  nobody's 0775 DIR with SUDO_UID/SUDO_GID nobody's (a user private group
             under sudo): written; the same with another group: exit 6, DIR empty
  outdir/symlink dir     DIR itself a symlink owned by nobody to a root-only directory holding a
                         victim report.json: exit 6, that directory untouched, with and without
                         --trust-output-dir
  outdir/umask 000       peaktrace under umask 000, DIR and a parent missing: exit 0, DIR made
                         0700, every file in it 0644 at most (no group/other write bit)
  outdir/diff            `peaktrace diff -o DIR` with the planted links (two real runs as A and B):
                         exit 6 and victims unchanged; with --trust-output-dir exit 0, victims
                         unchanged, the three outputs regular files 0644
  outdir/follow          --follow -o nobody's DIR: exit 6 before anything is started
  outdir/compare         --compare-env -o nobody's DIR: exit 6, victims unchanged; the same with
                         --trust-output-dir and run-0-baseline planted as a link to a root-only
                         directory: the baseline run refused (exit 6), that directory untouched,
                         compare.txt root's own file; into a fresh DIR: run-0-baseline/ and
                         run-1-setting/ 0700, their files 0644 at most
"""

import json
import os
import stat

from harness import run, short

NOBODY = 65534
CASES = ["outdir/planted links", "outdir/trusted", "outdir/trusted race", "outdir/world-writable", "outdir/sudo user group", "outdir/symlink dir",
         "outdir/umask 000", "outdir/diff", "outdir/follow", "outdir/compare"]
TARGET = "/bin/true"


def as_nobody(fn):
    """Run fn() in a forked child as nobody; True when it returned without raising."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            fn()
            code = 0
        except BaseException as e:   # the child reports through its exit status only
            os.write(2, ("as nobody: %r\n" % e).encode())
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def one_error_line(res, name, err):
    lines = [l for l in err.splitlines() if l.strip()]
    res.true("%s: exactly one stderr line starting 'peaktrace: '" % name,
             len(lines) == 1 and lines[0].startswith("peaktrace: "), "stderr was %r" % short(err, 500))


def fingerprint(path):
    """What a write through a link would change: bytes, mode, owner, mtime; None if absent."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    with open(path, "rb") as f:
        data = f.read()
    return (data, stat.S_IMODE(st.st_mode), st.st_uid, st.st_mtime_ns)


class Plant:
    """A sticky 1777 directory (as /tmp), root's 0600 victims in a root-only directory beside it,
    and DIR made by nobody with links at the names given, each to a victim (the first name's
    victim absent: a write through it would create it)."""

    def __init__(self, tmp, tag, names):
        self.top = os.path.join(tmp, "outdir-" + tag)
        os.makedirs(self.top)
        os.chmod(self.top, 0o1777)
        self.vdir = os.path.join(tmp, "outdir-" + tag + "-victims")
        os.makedirs(self.vdir)
        os.chmod(self.vdir, 0o700)
        self.dir = os.path.join(self.top, "out")
        self.links = {}
        for i, n in enumerate(names):
            v = os.path.join(self.vdir, "victim-" + n.lstrip("."))
            if i:
                with open(v, "w") as f:
                    f.write("root's secret behind %s\n" % n)
                os.chmod(v, 0o600)
            self.links[n] = v
        os.chmod(self.vdir, 0o711)   # nobody's links must resolve for the attack to be real
        self.before = {n: fingerprint(v) for n, v in self.links.items()}

        def plant():
            os.mkdir(self.dir, 0o755)
            for n, v in self.links.items():
                os.symlink(v, os.path.join(self.dir, n))
        self.planted = as_nobody(plant)

    def check_victims(self, res, name):
        for n, v in self.links.items():
            after = fingerprint(v)
            what = "created" if self.before[n] is None else "bytes, mode, owner or mtime changed"
            res.true("%s: the file behind %s untouched" % (name, n), after == self.before[n],
                     "%s: %s" % (v, what))

    def check_links_kept(self, res, name):
        kept = all(os.path.islink(os.path.join(self.dir, n)) for n in self.links)
        res.true("%s: the links still links, nothing else in DIR" % name,
                 kept and sorted(os.listdir(self.dir)) == sorted(self.links), str(os.listdir(self.dir)))


def regular_0644(res, name, path):
    try:
        st = os.lstat(path)
    except OSError as e:
        res.fail("%s: %s" % (name, os.path.basename(path)), str(e))
        return
    res.true("%s: %s a root-owned regular file, 0644 at most" % (name, os.path.basename(path)),
             stat.S_ISREG(st.st_mode) and st.st_uid == 0 and not stat.S_IMODE(st.st_mode) & ~0o644,
             "mode %o uid %d regular %s" % (stat.S_IMODE(st.st_mode), st.st_uid, stat.S_ISREG(st.st_mode)))


def modes_at_most(res, name, top):
    """Every file under top 0644 at most, every directory 0700; (files, dirs) seen."""
    bad, nf, nd = [], 0, 0
    for dirpath, dirs, files in os.walk(top):
        for d in dirs:
            m = stat.S_IMODE(os.lstat(os.path.join(dirpath, d)).st_mode)
            nd += 1
            if m != 0o700:
                bad.append("%s/ %o" % (d, m))
        for f in files:
            m = stat.S_IMODE(os.lstat(os.path.join(dirpath, f)).st_mode)
            nf += 1
            if m & ~0o644:
                bad.append("%s %o" % (f, m))
    res.true("%s: every file 0644 at most, every directory made 0700" % name, not bad, str(bad[:8]))
    return nf, nd


def trace(pt, outdir, extra=(), umask=None):
    argv = [pt, "-q", "-d", "5", "-o", outdir] + list(extra) + ["--", TARGET]
    if umask is None:
        return run(argv)
    old = os.umask(umask)
    try:
        return run(argv)
    finally:
        os.umask(old)


def race(pt, p, extra):
    """Trace into p.dir while nobody re-plants every link in a loop (unlink, symlink) until
    peaktrace ends: O_EXCL|O_NOFOLLOW must never open one. The racer's rounds."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rounds = 0
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            stop = os.path.join(p.dir, ".stop")
            while not os.path.lexists(stop) and rounds < 10 ** 7:
                for n, v in p.links.items():
                    f = os.path.join(p.dir, n)
                    try:
                        os.unlink(f)
                    except OSError:
                        pass
                    try:
                        os.symlink(v, f)
                    except OSError:
                        pass
                rounds += 1
        finally:
            os.write(w, str(rounds).encode())
            os._exit(0)
    os.close(w)
    trace(pt, p.dir, extra)
    open(os.path.join(p.dir, ".stop"), "w").close()
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        got = f.read()
    return int(got) if got.isdigit() else 0


def run_section(ctx):
    res, pt, tmp = ctx.res, ctx.pt, ctx.tmp
    if not any(res.wanted(n) for n in CASES):
        return
    report_names = ["report.html", "report.json", ".peaktrace-write-test"]

    name = "outdir/planted links"
    if res.wanted(name):
        p = Plant(tmp, "planted", report_names)
        if res.true(name + ": nobody planted the links", p.planted, "setup as nobody failed"):
            rc, _, err = trace(pt, p.dir)
            res.eq(name + ": exit status", rc, 6)
            one_error_line(res, name, err)
            p.check_victims(res, name)
            p.check_links_kept(res, name)

    name = "outdir/trusted"
    if res.wanted(name):
        p = Plant(tmp, "trusted", report_names)
        if res.true(name + ": nobody planted the links", p.planted, "setup as nobody failed"):
            rc, _, err = trace(pt, p.dir, ["--trust-output-dir"])
            res.eq(name + ": exit status", rc, 0)
            p.check_victims(res, name)
            for n in ("report.json", "report.html"):
                regular_0644(res, name, os.path.join(p.dir, n))
            try:
                with open(os.path.join(p.dir, "report.json")) as f:
                    rep = json.load(f)
                tgt = rep.get("target", {}) if isinstance(rep, dict) else {}
                res.true(name + ": report.json is the run's (target comm true, exited 0)",
                         tgt.get("comm") == "true" and tgt.get("exit_status") == 0, short(str(tgt), 200))
            except (OSError, ValueError) as e:
                res.fail(name + ": report.json parses", str(e))

    name = "outdir/trusted race"
    if res.wanted(name):
        p = Plant(tmp, "race", report_names + ["report.txt", "peak.svg", "invocations.jsonl"])
        if res.true(name + ": nobody planted the links", p.planted, "setup as nobody failed"):
            loops = race(pt, p, ["--trust-output-dir"])
            res.true(name + ": nobody re-planted the links while peaktrace wrote", loops > 100,
                     "%d rounds" % loops)
            p.check_victims(res, name)

    name = "outdir/world-writable"
    if res.wanted(name):
        for mode in (0o777, 0o770):
            d = os.path.join(tmp, "outdir-open-%o" % mode)
            os.makedirs(d)
            os.chmod(d, mode)
            rc, _, err = trace(pt, d)
            res.eq("%s: mode %o: exit status" % (name, mode), rc, 6)
            one_error_line(res, "%s: mode %o" % (name, mode), err)
            res.eq("%s: mode %o: nothing written" % (name, mode), os.listdir(d), [])

    name = "outdir/sudo user group"
    if res.wanted(name):
        # A user's own 0775 directory (a user private group's umask 002) under sudo: accepted when
        # its group is SUDO_GID, the user's primary group; refused for any other group.
        for gid, want in ((NOBODY, 0), (NOBODY + 1, 6)):
            d = os.path.join(tmp, "outdir-upg-%d" % gid)
            os.makedirs(d)
            os.chown(d, NOBODY, gid)
            os.chmod(d, 0o775)
            env = dict(os.environ, SUDO_UID=str(NOBODY), SUDO_GID=str(NOBODY))
            rc, _, err = run([pt, "-q", "-d", "5", "-o", d, "--", TARGET], env=env)
            sub_name = "%s: group %d, SUDO_GID %d" % (name, gid, NOBODY)
            res.eq(sub_name + ": exit status", rc, want)
            if want:
                one_error_line(res, sub_name, err)
                res.eq(sub_name + ": nothing written", os.listdir(d), [])
            else:
                res.true(sub_name + ": report.json written",
                         os.path.exists(os.path.join(d, "report.json")), str(os.listdir(d)))

    name = "outdir/symlink dir"
    if res.wanted(name):
        top = os.path.join(tmp, "outdir-linkdir")
        os.makedirs(top)
        os.chmod(top, 0o1777)
        rootdir = os.path.join(tmp, "outdir-rootonly")
        os.makedirs(rootdir)
        victim = os.path.join(rootdir, "report.json")
        with open(victim, "w") as f:
            f.write("root's own report.json\n")
        os.chmod(victim, 0o600)
        before, listing = fingerprint(victim), sorted(os.listdir(rootdir))
        link = os.path.join(top, "out")
        if res.true(name + ": nobody planted DIR as a link", as_nobody(lambda: os.symlink(rootdir, link)),
                    "setup as nobody failed"):
            for extra in ([], ["--trust-output-dir"]):
                sub = name + (": trusted" if extra else "")
                rc, _, err = trace(pt, link, extra)
                res.eq(sub + ": exit status", rc, 6)
                one_error_line(res, sub, err)
                res.true(sub + ": the linked directory untouched",
                         fingerprint(victim) == before and sorted(os.listdir(rootdir)) == listing,
                         str(os.listdir(rootdir)))

    name = "outdir/umask 000"
    umask_dir = os.path.join(tmp, "outdir-umask", "parent", "out")
    if res.wanted(name) or res.wanted("outdir/diff"):
        rc, _, err = trace(pt, umask_dir, umask=0)
        if res.wanted(name):
            res.eq(name + ": exit status", rc, 0)
            try:
                m = stat.S_IMODE(os.lstat(umask_dir).st_mode)
                res.eq(name + ": DIR made 0700", "%o" % m, "700")
            except OSError as e:
                res.fail(name + ": DIR made", str(e))
            nf, _ = modes_at_most(res, name, umask_dir)
            res.true(name + ": the reports were written", nf >= 10 and
                     os.path.exists(os.path.join(umask_dir, "report.json")), "%d files" % nf)

    name = "outdir/diff"
    if res.wanted(name):
        diff_names = ["diff.peak.svg", "diff.txt", "diff.peak.folded"]
        for trusted in (False, True):
            sub = "%s%s" % (name, ": trusted" if trusted else "")
            p = Plant(tmp, "diff-trusted" if trusted else "diff", diff_names)
            if not res.true(sub + ": nobody planted the links", p.planted, "setup as nobody failed"):
                continue
            extra = ["--trust-output-dir"] if trusted else []
            old = os.umask(0)
            try:
                rc, _, err = run([pt, "diff", "-q", "-o", p.dir] + extra + [umask_dir, umask_dir])
            finally:
                os.umask(old)
            res.eq(sub + ": exit status", rc, 0 if trusted else 6)
            p.check_victims(res, sub)
            if trusted:
                for n in diff_names:
                    regular_0644(res, sub, os.path.join(p.dir, n))
            else:
                one_error_line(res, sub, err)
                p.check_links_kept(res, sub)

    name = "outdir/follow"
    if res.wanted(name):
        p = Plant(tmp, "follow", ["sandbox.txt", "sandbox.json"])
        if res.true(name + ": nobody planted the links", p.planted, "setup as nobody failed"):
            rc, _, err = trace(pt, p.dir, ["--follow"])
            res.eq(name + ": exit status", rc, 6)
            one_error_line(res, name, err)
            p.check_victims(res, name)
            p.check_links_kept(res, name)

    name = "outdir/compare"
    if res.wanted(name):
        p = Plant(tmp, "compare", ["compare.txt", "run-0-baseline"])
        cmp_opts = ["--compare-env", "OUTDIR_TEST=1", "--compare-untraced", "1"]
        if res.true(name + ": nobody planted the links", p.planted, "setup as nobody failed"):
            rc, _, err = trace(pt, p.dir, cmp_opts)
            res.eq(name + ": exit status", rc, 6)
            one_error_line(res, name, err)
            p.check_victims(res, name)
            p.check_links_kept(res, name)
        # Trusted DIR, run-0-baseline planted as a link to a root-only directory: the traced
        # child is given DIR/run-0-baseline as its -o DIR and must not follow that link.
        p = Plant(tmp, "compare-trusted", ["compare.txt"])
        rootdir = os.path.join(tmp, "outdir-compare-rootonly")
        os.makedirs(rootdir)
        os.chmod(rootdir, 0o700)
        victim = os.path.join(rootdir, "report.json")
        with open(victim, "w") as f:
            f.write("root's own report.json\n")
        before = fingerprint(victim)
        run0 = os.path.join(p.dir, "run-0-baseline")
        if res.true(name + ": trusted: nobody planted run-0-baseline as a link",
                    p.planted and as_nobody(lambda: os.symlink(rootdir, run0)), "setup as nobody failed"):
            rc, _, err = trace(pt, p.dir, cmp_opts + ["--trust-output-dir"])
            res.eq(name + ": trusted: exit status (the baseline run refused)", rc, 6)
            p.check_victims(res, name + ": trusted")
            res.true(name + ": trusted: the linked root-only directory untouched",
                     fingerprint(victim) == before and os.listdir(rootdir) == ["report.json"],
                     str(os.listdir(rootdir)))
            regular_0644(res, name + ": trusted", os.path.join(p.dir, "compare.txt"))
        fresh = os.path.join(tmp, "outdir-compare-fresh")
        rc, _, err = trace(pt, fresh, cmp_opts, umask=0)
        res.eq(name + ": fresh DIR: exit status", rc, 0)
        nf, nd = modes_at_most(res, name + ": fresh DIR", fresh)
        res.true(name + ": fresh DIR: run-0-baseline/ and run-1-setting/ with their reports and logs",
                 nd == 2 and all(os.path.exists(os.path.join(fresh, d, f))
                                 for d in ("run-0-baseline", "run-1-setting")
                                 for f in ("report.json", "untraced-1.log", "untraced.tsv")),
                 "%d files, %d dirs: %s" % (nf, nd, short(err, 300)))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tools/check-stack.py -- every BPF program's combined stack, from the built object.

    python3 tools/check-stack.py [--budget 448] [--json] OBJ.bpf.o [...]

The verifier allows 512 bytes of stack for a program and every frame it calls (BPF-to-BPF
calls, and the callbacks passed to bpf_loop / bpf_find_vma, which it counts as calls). Only
where the JIT gives tracing programs a private stack (recent x86-64 kernels, not every machine)
may each frame have its own 512, so a program that loads on such a machine may be refused on
the next ("combined stack size of 3 calls is 544. Too large"). This computes an upper bound
of each program's deepest chain from the instructions, as a kernel before 6.9 counts it
(every frame rounded up to 32 bytes, an empty one too), and fails when any exceeds the budget
(448: the margin is for the next field someone adds).

Frame sizes: the deepest r10 offset a function reaches, directly (*(u64 *)(r10 - 40)) or
through a register derived from r10 (r1 = r10; r1 += -64), in any branch: the verifier
counts only the paths it walks, which the loader's .rodata may prune, so this bound holds on
every kernel and every configuration. Call edges: `call -1` with an R_BPF_64_32 relocation to
a function (kfuncs and helpers are not frames), and a function's address loaded with an
R_BPF_64_64 relocation against a code section (a callback).

What the verifier's log prints as a function's "stack depth" can be 24 bytes more than this
tool's frame: where it inlines a bpf_loop call (5.19+) it gives the caller three more slots,
after the limit was checked (optimize_bpf_loop runs after check_max_stack_depth), so those do
not count against the 512.

Reads llvm-objdump's output (LLVM is a build dependency already); exit 1 when a chain is over
the budget, 2 when the object cannot be read."""

import argparse
import json
import re
import shutil
import subprocess
import sys

MAX_STACK = 512
INSN = re.compile(r"^\s*(\d+):\s+(.*)$")
RELOC = re.compile(r"^\s+[0-9a-f]+:\s+(R_BPF_\w+)\s+(\S+)")
HEADER = re.compile(r"^Disassembly of section (\S+):")
R10_MEM = re.compile(r"\(r10 - (\d+)\)")
ASSIGN = re.compile(r"^r(\d+) = (.*)$")
ADDK = re.compile(r"^r(\d+) \+= (-?\d+)$")
SUBK = re.compile(r"^r(\d+) -= (-?\d+)$")
MEM_REG = re.compile(r"\(r(\d+) ([+-]) (\d+)\)")
CALL = re.compile(r"^call (-?\d+)$")
LDIMM = re.compile(r"^r(\d+) = (-?\d+) ll$")
WRITES = re.compile(r"^(?:r|w)(\d+) (?:[-+*/%&|^]|<<|>>|s>>)?= ")


def objdump():
    for name in ("llvm-objdump", "llvm-objdump-14", "llvm-objdump-15", "llvm-objdump-16"):
        if shutil.which(name):
            return name
    return None


def symbols(tool, obj):
    """Functions as {section: [(start_insn, end_insn, name)]}."""
    out = subprocess.run([tool, "-t", obj], capture_output=True, text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        # 0000000000000678 l     F .text	0000000000000250 unw_vma_cb
        m = re.match(r"^([0-9a-f]+)\s+([lgw!]*)\s+F\s+(\S+)\s+([0-9a-f]+)\s+(\S+)$", line)
        if m:
            start, size = int(m.group(1), 16) // 8, int(m.group(4), 16) // 8
            funcs.setdefault(m.group(3), []).append((start, start + size, m.group(5)))
    for sec in funcs:
        funcs[sec].sort()
    return funcs


def func_at(funcs, sec, idx):
    for start, end, name in funcs.get(sec, []):
        if start <= idx < end:
            return name
    return None


def analyse(obj):
    """({function: frame bytes}, {function: set of callees}, [program names])."""
    tool = objdump()
    if not tool:
        raise RuntimeError("llvm-objdump not found (Debian's llvm package)")
    funcs = symbols(tool, obj)
    out = subprocess.run([tool, "-d", "-r", "--no-show-raw-insn", obj],
                         capture_output=True, text=True, check=True).stdout
    frame, calls = {}, {}
    sec, cur, derived, last = None, None, {}, None   # last: (function, instruction text)
    for line in out.splitlines():
        h = HEADER.match(line)
        if h:
            sec, cur, derived, last = h.group(1), None, {}, None
            continue
        r = RELOC.match(line)
        if r and last and cur:
            kind, target = r.group(1), r.group(2)
            text = last
            c = CALL.match(text)
            if kind == "R_BPF_64_32" and c:
                if target in funcs.get(".text", []) or any(n == target for fs in funcs.values() for _, _, n in fs):
                    calls[cur].add(target)
                elif target in funcs:
                    # Against a section symbol (a static function): libbpf resolves the
                    # target as that section's instruction imm + 1.
                    callee = func_at(funcs, target, int(c.group(1)) + 1)
                    if not callee:
                        raise RuntimeError("call at %s+%d: no function at %s+%d" % (
                            cur, last_idx, target, int(c.group(1)) + 1))
                    calls[cur].add(callee)
            elif kind == "R_BPF_64_64" and target in funcs:  # a code address: a callback
                m = LDIMM.match(text)
                callee = func_at(funcs, target, int(m.group(2)) // 8) if m else None
                if callee:
                    calls[cur].add(callee)
            continue
        m = INSN.match(line)
        if not m or sec is None:
            continue
        idx, text = int(m.group(1)), m.group(2).split("<")[0].strip()
        name = func_at(funcs, sec, idx)
        if name != cur:
            cur, derived = name, {}
        if cur is None:
            continue
        frame.setdefault(cur, 0)
        calls.setdefault(cur, set())
        last, last_idx = text, idx
        depth = 0
        for off in R10_MEM.findall(text):
            depth = max(depth, int(off))
        for reg, sign, off in MEM_REG.findall(text):
            if reg != "10" and reg in derived:
                depth = max(depth, derived[reg] + (int(off) if sign == "-" else -int(off)))
        a, k, s = ASSIGN.match(text), ADDK.match(text), SUBK.match(text)
        if k and k.group(1) in derived:
            derived[k.group(1)] -= int(k.group(2))
            depth = max(depth, derived[k.group(1)])
        elif s and s.group(1) in derived:
            derived[s.group(1)] += int(s.group(2))
            depth = max(depth, derived[s.group(1)])
        elif a and a.group(2) == "r10":
            derived[a.group(1)] = 0
        elif a and re.fullmatch(r"r(\d+)", a.group(2)) and a.group(2)[1:] in derived:
            derived[a.group(1)] = derived[a.group(2)[1:]]
        else:
            w = WRITES.match(text)
            if w:
                derived.pop(w.group(1), None)
            if CALL.match(text):       # calls clobber r0-r5
                for reg in "012345":
                    derived.pop(reg, None)
        frame[cur] = max(frame[cur], depth)
    progs = [n for s, fs in funcs.items() if s != ".text" for _, _, n in fs]
    return frame, calls, progs


def rounded(nbytes):
    """A frame as the verifier counts it without a private stack before 6.9."""
    return (max(nbytes, 1) + 31) // 32 * 32


def deepest(fn, frame, calls, seen=()):
    """(bytes, chain) of fn's deepest call chain."""
    if fn in seen:
        raise RuntimeError("recursion through %s" % fn)
    best = (0, [])
    for callee in sorted(calls.get(fn, ())):
        best = max(best, deepest(callee, frame, calls, seen + (fn,)), key=lambda b: b[0])
    return rounded(frame.get(fn, 0)) + best[0], [fn] + best[1]


def main():
    ap = argparse.ArgumentParser(description="combined BPF stack per program")
    ap.add_argument("--budget", type=int, default=448, help="bytes a chain may use (default 448 of 512)")
    ap.add_argument("--json", action="store_true", help="one JSON object: program -> {bytes, chain}")
    ap.add_argument("--tap", action="store_true", help='"ok - PROG: N bytes" / "not ok - ..." lines (tests)')
    ap.add_argument("--c-table", metavar="FILE",
                    help="also write FILE: a C table of each program's bytes (peaktrace's --verifier-stats)")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    over, result = 0, {}
    for obj in args.objects:
        try:
            frame, calls, progs = analyse(obj)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            print("check-stack: %s: %s" % (obj, e), file=sys.stderr)
            return 2
        for p in sorted(progs):
            nbytes, chain = deepest(p, frame, calls)
            result[p] = {"bytes": nbytes, "chain": [{"function": f, "frame": frame.get(f, 0)} for f in chain]}
            bad = nbytes > args.budget
            over += bad
            desc = " -> ".join("%s (%d)" % (f, frame.get(f, 0)) for f in chain)
            if args.tap:
                print("%s - %s: %d of %d bytes: %s" % ("not ok" if bad else "ok", p, nbytes, args.budget, desc))
            elif bad or not args.json:
                print("%s %s: %d bytes: %s" % ("OVER" if bad else "ok  ", p, nbytes, desc),
                      file=sys.stderr if args.json else sys.stdout)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    if args.c_table:
        with open(args.c_table, "w") as f:
            f.write("/* Generated by tools/check-stack.py from %s: each BPF program's deepest call chain,\n"
                    " * in stack bytes as a kernel before 6.9 counts them. */\n"
                    "#include \"bpfload.h\"\n\n"
                    "const struct pt_stack_chain pt_stack_chains[] = {\n" % ", ".join(args.objects))
            for p in sorted(result):
                f.write('\t{ "%s", %d },\n' % (p, result[p]["bytes"]))
            f.write("\t{ 0, 0 },\n};\n")
    if over:
        print("check-stack: %d program(s) over the %d-byte budget (the kernel's limit is %d without "
              "a private stack)" % (over, args.budget, MAX_STACK), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arm64.h — what the AArch64 port needs to know, as pure functions on numbers and bytes: they
 * compile on every host and tests/unit/test_arch_arm64.c runs them on x86-64 (issue 24).
 *
 *   registers   struct user_pt_regs (a uprobe's ctx, arch/arm64/include/uapi/asm/ptrace.h) and
 *               the AAPCS64 argument, result and hidden-result registers;
 *   unwinding   pointer-authentication codes stripped (the CFI rows themselves: unwind/cfi.c,
 *               by the file's e_machine; the walk: bpf/unwind.bpf.h);
 *   uprobes     which first instructions arm64's uprobe code simulates, steps out of line or
 *               refuses (arch/arm64/kernel/probes/decode-insn.c: arm_probe_decode_insn).
 */
#ifndef PEAKTRACE_ARCH_ARM64_H
#define PEAKTRACE_ARCH_ARM64_H
#include <stddef.h>
#include <stdint.h>

/* struct user_pt_regs: regs[31], sp, pc, pstate (272 bytes). */
#define PT_A64_USER_REGS_SIZE 272
enum pt_a64_reg {
	PT_A64_X0 = 0,
	PT_A64_X8 = 8,     /* AAPCS64's indirect result register: a by-value class's address */
	PT_A64_FP = 29,    /* x29: the frame record {caller's x29, x30} it points to */
	PT_A64_LR = 30,    /* x30: the return address a bl leaves */
	PT_A64_SP = 31,    /* user_pt_regs.sp */
	PT_A64_PC = 32,    /* user_pt_regs.pc */
};

/* The byte offset of a register in struct user_pt_regs, or -1. */
int pt_arm64_reg_off(int reg);
/* A register's value from a user_pt_regs copy (len bytes); 0 and -1 if it is not inside. */
int pt_arm64_reg_get(const uint8_t *regs, size_t len, int reg, uint64_t *out);
/* AAPCS64: the register of the n-th (from 0) integer argument, x0..x7; -1 for the stack. A
 * function returning a class in memory gets its address in x8, beside the arguments, which do
 * not shift (x86-64 passes it as the first argument, and returns it in rax: arm64 does not). */
int pt_arm64_arg_reg(unsigned int n);
/* The result register: x0. */
#define PT_A64_RET_REG PT_A64_X0

/* The return-address bits of a user address above its virtual address size: a PAC (and the
 * top byte, which user code may tag). va_bits: 48 on Debian's kernels (52 only for mappings
 * asked for above 2^48). */
uint64_t pt_arm64_pac_mask(unsigned int va_bits);
uint64_t pt_arm64_strip_pac(uint64_t addr, unsigned int va_bits);

/* What arm64's uprobe code does with an instruction probed. */
enum pt_a64_probe {
	PT_A64_SIMULATED,  /* simulated in the trap: no out-of-line step */
	PT_A64_STEPPED,    /* copied to the XOL slot and single-stepped (a second trap) */
	PT_A64_REJECTED,   /* refused: the uprobe cannot be placed there */
};
/* The class of one A64 instruction (little-endian word) and a short name ("paciasp",
 * "b.cond", "stp"...: the forms the allocators' first instructions take, else "insn"). */
int pt_arm64_probe_class(uint32_t insn, const char **name);
/* The instruction word at code[0..3] (A64 is little-endian in every Linux userland). */
uint32_t pt_arm64_insn(const uint8_t *code);

/* Where an allocator's entry uprobe goes (attach/probeplace.c's rule for A64): at the entry,
 * unless may_skip (a function with no return probe: a return probe shares the entry's trap)
 * and the entry is a landing pad or a compare the kernel steps (bti, nop, cmp/cmn/tst: they
 * write nothing but the flags, x30 and sp stay as at entry) followed, at most two on, by an
 * instruction it simulates (trixie's free: bti c; cbz x0 probes the cbz). A paciasp is never
 * passed: it signs x30, the return address a probe there would read. */
struct pt_a64_place {
	uint32_t skip;            /* bytes from the entry (4 per instruction skipped) */
	int cls;                  /* enum pt_a64_probe of the instruction probed */
	const char *insn;         /* its name (pt_arm64_probe_class), "(no code)" without one */
	const char *skipped[2];   /* the names of those skipped, NULL after the last */
};
void pt_arm64_probe_place(const uint8_t *code, size_t len, int may_skip, struct pt_a64_place *out);
/* A forwarding thunk: `b target` after an optional bti (jemalloc's operator delete, `b free`). */
int pt_arm64_is_branch_thunk(const uint8_t *code, size_t len);

/* CPython's inlined pymalloc (python/pyalloc.c), in A64 code: an LTO build compares the
 * allocator pointer it loaded with the static allocator's address, which it builds with
 * `adrp xN, page; add xN, xN, #off` (or `adr`), by `cmp xA, xB`. The address the first such
 * compare among PyObject_Malloc's first instructions (code, at vaddr) names; 0: none (a
 * shared libpython calls through the pointer and inlines nothing). */
uint64_t pt_arm64_pyalloc_guard_target(const uint8_t *code, size_t n, uint64_t vaddr);
/* The compares naming target in a text segment (code, at vaddr), outside [skip_lo, skip_hi):
 * registers followed in address order, each forgotten when an instruction may write it. */
uint32_t pt_arm64_pyalloc_count_guards(const uint8_t *code, size_t n, uint64_t vaddr,
				       uint64_t target, uint64_t skip_lo, uint64_t skip_hi);

#endif /* PEAKTRACE_ARCH_ARM64_H */

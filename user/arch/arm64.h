/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arm64.h — what the AArch64 port needs to know, as pure functions on numbers and bytes: they
 * compile on every host and tests/unit/test_arch_arm64.c runs them on x86-64 (issue 24).
 *
 *   registers   struct user_pt_regs (a uprobe's ctx, arch/arm64/include/uapi/asm/ptrace.h) and
 *               the AAPCS64 argument, result and hidden-result registers;
 *   unwinding   DWARF register numbers (aadwarf64), one CFI row applied to a frame, the frame
 *               record walk (x29 chain), pointer-authentication codes stripped;
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

/* AArch64 DWARF register numbers: x0-x30 are 0-30, sp 31; the CIEs' return-address column
 * is 30 (x30), where x86-64's is 16 (a column for the pushed return address). */
#define PT_A64_DW_FP 29
#define PT_A64_DW_LR 30
#define PT_A64_DW_SP 31
#define PT_A64_DW_RA_COLUMN 30
/* DW_CFA_AARCH64_negate_ra_state: the return address in x30 is signed (after paciasp) or not
 * (after autiasp). The opcode is DW_CFA_GNU_window_save's, SPARC's meaning elsewhere. */
#define PT_A64_CFA_NEGATE_RA_STATE 0x2d

/* How the unwinder's one-row rule says to recover a register in the caller. */
enum pt_a64_how {
	PT_A64_SAME,       /* unchanged: still in the register (x30 at a function's entry) */
	PT_A64_AT_CFA,     /* saved at CFA + off */
	PT_A64_UNDEF,      /* undefined: for the return address, the outermost frame */
};
struct pt_a64_rule {
	uint8_t how;       /* enum pt_a64_how */
	int64_t off;
};
/* One CFI row at a pc: CFA = reg + off (reg: PT_A64_DW_SP or PT_A64_DW_FP); x29 and the
 * return address (column 30) by rule; ra_signed if negate_ra_state ran an odd number of
 * times before the pc (the x30 value, wherever it is, carries a PAC). */
struct pt_a64_row {
	uint8_t cfa_reg;
	int64_t cfa_off;
	struct pt_a64_rule fp, ra;
	uint8_t ra_signed;
};
/* One frame's registers. lr_valid: x30 is known (only in the first frame, from the probe's
 * registers: a caller's x30 was clobbered by the call it made). */
struct pt_a64_frame {
	uint64_t pc, sp, fp, lr;
	uint8_t lr_valid;
};
/* Reads 8 bytes of the target's memory at addr; 0 or -1. */
typedef int (*pt_a64_read_fn)(void *ctx, uint64_t addr, uint64_t *out);

/* The return-address bits of a user address above its virtual address size: a PAC (and the
 * top byte, which user code may tag). va_bits: 48 on Debian's kernels (52 only for mappings
 * asked for above 2^48). */
uint64_t pt_arm64_pac_mask(unsigned int va_bits);
uint64_t pt_arm64_strip_pac(uint64_t addr, unsigned int va_bits);

/* Applies row to *f (the callee's frame): on success *f is the caller's (pc = the return
 * address, PAC stripped; sp = the CFA; fp by its rule) and 0 is returned; 1: the return
 * address is undefined (the outermost frame); -1: the row cannot be applied (its CFA
 * register unknown, a rule reading x30 after the first frame, a read failed). */
int pt_arm64_unwind_step(const struct pt_a64_row *row, struct pt_a64_frame *f, unsigned int va_bits,
			 pt_a64_read_fn rd, void *ctx);
/* The frame-record walk, one step: the caller's x29 at [fp], its return address at [fp + 8]
 * (stripped). 0 or -1 (fp misaligned or not above the previous one, a read failed). */
int pt_arm64_fp_step(struct pt_a64_frame *f, unsigned int va_bits, pt_a64_read_fn rd, void *ctx);

/* The CFI row in effect at pc_off bytes into a function: the CIE's initial instructions, then
 * the FDE's up to pc_off (code_align and data_align: the CIE's factors, 4 and -8 from GCC and
 * LLVM on AArch64). Before any rule, x29 and x30 are PT_A64_SAME (x30 holds the return address
 * at entry) and the CFA is whatever the CIE defines (sp + 0). Tracks the CFA (sp or x29 based),
 * x29, x30 and the return-address signing state (DW_CFA_AARCH64_negate_ra_state), with
 * remember/restore_state. 0, or -1: an instruction it does not take (expressions, set_loc, a
 * register rule, a CFA on another register) or truncated input. */
int pt_arm64_cfa_row(const uint8_t *cie_ins, size_t cie_len, const uint8_t *fde_ins, size_t fde_len,
		     uint64_t code_align, int64_t data_align, uint64_t pc_off, struct pt_a64_row *row);

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

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * unwind.h — the kernel/user contract for .eh_frame unwinding (x86-64 and AArch64).
 *
 * Userspace (user/cfi.c) compiles the CFI of one ELF file into a table of pt_unwind_row sorted
 * by pc; the BPF program binary-searches it for each frame and computes the caller's registers
 * with the pure functions below, which the host unit tests (tests/unit/test_cfi.c) run too
 * (they unwind the test's own stack with them).
 *
 * Why so little per row: an x86-64 unwinder needs only three registers to go up one frame.
 * The return address is always at CFA - 8 (the call pushed it; the builder checks that the CIE
 * says so and marks every other rule unsupported), the caller's rsp is the CFA itself, and rbp
 * is the only callee-saved register later frames may use as a CFA base. Everything else the
 * DWARF rules describe (rbx, r12..r15) cannot move a later CFA, so it is dropped. That gives
 * 8 bytes a row, so libc's ~25k rules fit in ~130 KiB of map.
 *
 * Rows:
 *  - pc is the ELF virtual address as written in the file (the symbol-table address): the BPF
 *    side subtracts the mapping's load bias first. Tables are per file and need vaddrs below
 *    4 GiB; the builder drops FDEs above that (and counts them).
 *  - A row holds from its pc up to the next row's pc. Consecutive equal rules are merged, so
 *    one row may span several FDEs. Code below the first row or between FDEs has no CFI: the
 *    builder closes every FDE that is not immediately followed by another with a PT_CFA_NONE
 *    row, so the walker can fall back to frame pointers there instead of trusting a rule of
 *    the function before.
 *  - For every frame but the innermost, look up (return address - 1): the call instruction,
 *    not the one after it, which may already be the next function when the call is the last
 *    instruction of a noreturn path.
 */
#ifndef PEAKTRACE_UNWIND_H
#define PEAKTRACE_UNWIND_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* pt_unwind_row.cfa_reg. PT_CFA_NONE is 0 so a zeroed (never written) map slot reads as
 * "no information", never as a rule. */
enum pt_cfa_kind {
	PT_CFA_NONE = 0,        /* no CFI covers this pc: try frame pointers */
	PT_CFA_RSP = 1,         /* CFA = rsp + cfa_off */
	PT_CFA_RBP = 2,         /* CFA = rbp + cfa_off */
	/* Lazy-binding .plt stubs share one DWARF expression (binutils emits it for the whole
	 * section): CFA = rsp + 8, plus 8 once the stub's `push $index` ran, i.e. when
	 * (pc & 15) >= N. cfa_off holds N: 11 for the classic 16-byte stub (jmp *GOT; push;
	 * jmp .plt0), 10 for binutils' lazy IBT stub. */
	PT_CFA_PLT = 3,
	PT_CFA_END = 4,         /* return address undefined: outermost frame (_start, clone) */
	PT_CFA_UNSUPPORTED = 5, /* a rule this format cannot express; cfa_off = enum pt_unwind_why */
	PT_CFA_KINDS,
};

/* Why a row is PT_CFA_UNSUPPORTED (kept in its cfa_off so the BPF side can count stops by
 * cause); also the index of user/cfi.h's per-cause statistics. */
enum pt_unwind_why {
	PT_UNW_WHY_NONE = 0,
	PT_UNW_WHY_CFA_EXPR,    /* CFA is a DWARF expression other than the .plt one (signal
	                         * trampolines, stack realignment) */
	PT_UNW_WHY_CFA_REG,     /* CFA based on a register other than rsp/rbp (r10 in realigned
	                         * prologues) */
	PT_UNW_WHY_CFA_RANGE,   /* CFA offset does not fit in s16 */
	PT_UNW_WHY_RA_RULE,     /* return address not saved at CFA - 8 */
	PT_UNW_WHY_RBP_RULE,    /* rbp kept in a register, an expression or as a value */
	PT_UNW_WHY_RBP_RANGE,   /* rbp slot not a multiple of 8, zero, or beyond s8 * 8 */
	PT_UNW_WHY_BAD_CIE,     /* CIE this unwinder cannot use (return column not 16) */
	PT_UNW_WHY_BAD_FDE,     /* malformed instructions (truncated, unknown opcode, state
	                         * stack underflow): the whole FDE gets this one row */
	PT_UNW_WHY_COUNT,
};

struct pt_unwind_row {
	__u32 pc;               /* first ELF vaddr this rule holds for */
	__s16 cfa_off;          /* RSP/RBP: CFA offset; PLT: threshold; UNSUPPORTED: why */
	__s8 rbp_off8;          /* caller's rbp saved at CFA + 8 * rbp_off8; 0 = not saved
	                         * (rbp still holds the caller's value) */
	__u8 cfa_reg;           /* enum pt_cfa_kind */
};
_Static_assert(sizeof(struct pt_unwind_row) == 8, "pt_unwind_row layout");

/* The return address slot, fixed by the x86-64 call instruction. */
#define PT_UNWIND_RA_OFF (-8)

/*
 * AArch64 rows: the same 8 bytes, read with these meanings (the BPF side by the PT_ARCH_ROW_*
 * macros of bpf/arch/, user space by the table's machine: user/unwind/cfi.h). A bl pushes
 * nothing: the return address stays in x30 until the prologue saves it, at CFA + k for any k
 * (GCC and LLVM save it beside x29 in the frame record, {x29, x30}, at the bottom of the
 * callee-saved area), and code built with -mbranch-protection signs it first (the BPF side
 * strips every return address, signed or not: bpf/arch/arm64.bpf.h).
 *  - cfa_reg: the kind in its low 3 bits (PT_CFA_RSP: sp, PT_CFA_RBP: x29; never PT_CFA_PLT:
 *    AArch64's .plt stubs have no CFI and touch neither sp nor x30), the return address's
 *    rule in its high 5 bits, which x86-64 rows leave 0:
 *      PT_CFA_RA_AT_FP (0)    beside x29 in the frame record: 8 above x29's slot;
 *      1..15                  at CFA - 8 * n (x30 saved alone or beside another register);
 *      16..30                 at B + 8 * (n - 16), B below (the same, in a large frame
 *                             whose callee-saved registers sit at its bottom);
 *      PT_CFA_RA_IN_LR (31)   still in x30: usable only in the frame the walk starts in (a
 *                             leaf or a prologue at a fault); a caller's x30 was clobbered
 *                             by the bl it made.
 *    Anything else is PT_CFA_UNSUPPORTED with PT_UNW_WHY_RA_RULE (counted by the builder):
 *    none of bookworm's arm64 libc.so.6 rows (19,175); 79 with slots from the CFA only.
 *  - rbp_off8: x29 saved at B + 8 * rbp_off8, B being the value of the register the CFA is
 *    based on (sp or x29: B = CFA - cfa_off); PT_CFA_A64_FP_UNSAVED (-128): not saved. From
 *    B, not from the CFA as on x86-64: GCC and LLVM put the frame record at the bottom of the
 *    frame, at sp (x29 = sp once set), and its locals above it, so its distance from the CFA
 *    is the frame's size (4 KiB of locals: CFA - 4128, beyond s8 * 8) while from B it is
 *    0 or a few words. Measured on bookworm's arm64 libc.so.6: 850 of 19,175 rows out of
 *    reach counted from the CFA, 79 counted from B;
 *  - cfa_off: the CFA's offset from sp or x29.
 * An x86-64 row therefore never reads as an AArch64 one with the same meaning: each table is
 * built for one machine and loaded only into the BPF object of that machine.
 */
#define PT_CFA_KIND_MASK 7
#define PT_CFA_RA_SHIFT 3
#define PT_CFA_RA_AT_FP 0
#define PT_CFA_RA_CFA_MAX 15
#define PT_CFA_RA_BASE0 16
#define PT_CFA_RA_BASE_MAX 30
#define PT_CFA_RA_IN_LR 31
#define PT_CFA_A64_FP_UNSAVED (-128)

/* Where an AArch64 row (its cfa_reg, cfa_off and rbp_off8) says x29 is saved, for a frame
 * whose CFA is cfa; 0 when it is not. */
static inline __u64 pt_unwind_a64_fp_at(__s16 cfa_off, __s8 rbp_off8, __u64 cfa)
{
	if (rbp_off8 == PT_CFA_A64_FP_UNSAVED)
		return 0;
	return cfa - (__s64)cfa_off + 8 * (__s64)rbp_off8;
}

/* Where an AArch64 row says the return address is saved; not for PT_CFA_RA_IN_LR. */
static inline __u64 pt_unwind_a64_ra_at(__u8 cfa_reg, __s16 cfa_off, __s8 rbp_off8, __u64 cfa)
{
	__u32 ra = cfa_reg >> PT_CFA_RA_SHIFT;

	if (ra == PT_CFA_RA_AT_FP)
		return pt_unwind_a64_fp_at(cfa_off, rbp_off8, cfa) + 8;
	if (ra >= PT_CFA_RA_BASE0)
		return cfa - (__s64)cfa_off + 8 * (__u64)(ra - PT_CFA_RA_BASE0);
	return cfa - 8 * (__u64)ra;
}
/* Largest table: halving [lo, hi) ends within 25 steps, a bound the verifier can see. */
#define PT_UNWIND_MAX_ROWS (1u << 24)
#define PT_UNWIND_SEARCH_STEPS 25

/*
 * Binary search for the last row with row.pc <= pc, one step at a time, so the host and the
 * BPF program share the arithmetic while each reads rows its own way:
 *
 *	lo = 0, hi = nrows;
 *	for (i = 0; i < PT_UNWIND_SEARCH_STEPS && lo < hi; i++) {
 *		mid = pt_unwind_mid(lo, hi);
 *		row = <row mid>;
 *		pt_unwind_step(&lo, &hi, mid, row->pc, pc);
 *	}
 *	index = lo - 1 (none when lo == 0: pc lies below the first row)
 *
 * In BPF, read row mid with bpf_map_lookup_elem() on an ARRAY map of rows, not by indexing
 * one big map value. Measured on kernel 6.18: indexing a 16K-row map value makes the
 * verifier track lo and hi precisely (they form a pointer offset), no loop state is pruned
 * and the 25 steps exceed the 1M-instruction limit; through a lookup key they stay imprecise
 * and the whole walk above verifies in ~2.3K instructions.
 */
static inline __u32 pt_unwind_mid(__u32 lo, __u32 hi)
{
	return lo + (hi - lo) / 2;
}

static inline void pt_unwind_step(__u32 *lo, __u32 *hi, __u32 mid, __u32 row_pc, __u32 pc)
{
	/* Invariant: rows [0, lo) have pc <= target, rows [hi, n) have pc > target. */
	if (row_pc <= pc)
		*lo = mid + 1;
	else
		*hi = mid;
}

/* The loop above over rows in plain memory (host code): index, or -1 below the first row.
 * n must not exceed PT_UNWIND_MAX_ROWS. */
static inline int pt_unwind_search(const struct pt_unwind_row *rows, __u32 n, __u32 pc)
{
	__u32 lo = 0, hi = n, mid;
	int i;

	for (i = 0; i < PT_UNWIND_SEARCH_STEPS && lo < hi; i++) {
		mid = pt_unwind_mid(lo, hi);
		pt_unwind_step(&lo, &hi, mid, rows[mid].pc, pc);
	}
	return (int)lo - 1;
}

/*
 * CFA of the frame executing at pc (runtime or file address: only pc & 15 is used, and the
 * load bias is page aligned) with registers rsp and rbp. Returns 0 with *cfa set, or -1 when
 * the walk cannot go through this row (its cfa_reg says why: NONE, END or UNSUPPORTED).
 * The caller then reads its return address at *cfa - 8 and, when r->rbp_off8 != 0, its rbp
 * at *cfa + 8 * r->rbp_off8; its rsp is *cfa.
 */
static inline int pt_unwind_cfa_kind(__u8 kind, const struct pt_unwind_row *r, __u64 pc,
				     __u64 rsp, __u64 rbp, __u64 *cfa)
{
	switch (kind) {
	case PT_CFA_RSP:
		*cfa = rsp + (__s64)r->cfa_off;
		return 0;
	case PT_CFA_RBP:
		*cfa = rbp + (__s64)r->cfa_off;
		return 0;
	case PT_CFA_PLT:
		*cfa = rsp + 8 + ((pc & 15) >= (__u64)r->cfa_off ? 8 : 0);
		return 0;
	default:
		return -1;
	}
}

/* The same for an x86-64 row, whose kind is its whole cfa_reg. (AArch64: kind =
 * cfa_reg & PT_CFA_KIND_MASK, and sp, x29 for rsp, rbp.) */
static inline int pt_unwind_cfa(const struct pt_unwind_row *r, __u64 pc, __u64 rsp, __u64 rbp,
				__u64 *cfa)
{
	return pt_unwind_cfa_kind(r->cfa_reg, r, pc, rsp, rbp, cfa);
}
/*
 * Where the rows of a running process are (user/unwind_maps.c loads them, bpf/unwind.bpf.h
 * reads them). All files' tables are concatenated in one ARRAY map of rows; a file mapped by
 * several processes, or twice, is built and stored once.
 */

/* Executable mappings kept per published set, and binary-search steps over them. */
#define PT_UNWIND_MAX_MAPS 4096
#define PT_UNWIND_MAP_STEPS 13
/* Files the in-kernel fallback can find by (device, inode). */
#define PT_UNWIND_MAX_FILES 1024
/* Default size of the row table: 8 MiB of kernel memory (libc 28k rows, libstdc++ 34k,
 * python3.11 65k, node 372k: a node process with its libraries fits). */
#define PT_DEF_UNWIND_ROWS (1u << 20)

/* One executable mapping [start, end): its code runs rows[first, first + nrows), looked up
 * with pc - bias (the ELF vaddr the rows use). An array of these sorted by start is
 * binary-searched; two such arrays (halves) let user space rewrite one while BPF reads the
 * other. */
struct pt_unwind_map {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 first;
	__u32 nrows;
};
_Static_assert(sizeof(struct pt_unwind_map) == 32, "pt_unwind_map layout");

/* A file as the kernel names it: dev is the kernel's dev_t (major << 20 | minor, what
 * /proc/PID/maps prints as major:minor), ino the inode number. */
struct pt_unwind_file_key {
	__u64 dev;
	__u64 ino;
};
_Static_assert(sizeof(struct pt_unwind_file_key) == 16, "pt_unwind_file_key layout");

/* A file's rows, for mappings not (yet) in the published array: bias = vm_start -
 * vm_pgoff * 4096 - adj, adj = p_vaddr - p_offset of its executable PT_LOAD. */
struct pt_unwind_file {
	__u64 adj;
	__u32 first;
	__u32 nrows;
};
_Static_assert(sizeof(struct pt_unwind_file) == 16, "pt_unwind_file layout");

/* Publication state (BPF .bss, written by user space through the skeleton's mapping). */
struct pt_unwind_ctl {
	__u64 sel;      /* (half << 32) | number of mappings in that half: one store publishes */
	__u64 mm;       /* mm_struct the published mappings describe; 0 = the next walk claims
	                 * them for its mm (set by user space with every publication) */
	__u64 gen;      /* publications so far: rows cached in the kernel carry it */
};
_Static_assert(sizeof(struct pt_unwind_ctl) == 24, "pt_unwind_ctl layout");
#endif

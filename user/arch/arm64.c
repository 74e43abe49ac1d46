// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * arm64.c — the AArch64 port's pure logic (arm64.h): register layout and argument registers,
 * one CFI row or frame record applied to a frame, PAC stripping, and the uprobe instruction
 * classes. No I/O, no test of the host's architecture: the unit tests run it on x86-64.
 */
#include <string.h>
#include "arch/arm64.h"

int pt_arm64_reg_off(int reg)
{
	if (reg >= PT_A64_X0 && reg <= PT_A64_LR)
		return reg * 8;
	if (reg == PT_A64_SP)
		return 31 * 8;
	if (reg == PT_A64_PC)
		return 32 * 8;
	return -1;
}

int pt_arm64_reg_get(const uint8_t *regs, size_t len, int reg, uint64_t *out)
{
	int off = pt_arm64_reg_off(reg);
	uint64_t v = 0;

	if (off < 0 || !regs || (size_t)off + 8 > len)
		return -1;
	/* Little-endian, as every arm64 Linux userland: byte by byte, any host. */
	for (int i = 7; i >= 0; i--)
		v = v << 8 | regs[off + i];
	*out = v;
	return 0;
}

int pt_arm64_arg_reg(unsigned int n)
{
	return n < 8 ? (int)n : -1;
}

uint64_t pt_arm64_pac_mask(unsigned int va_bits)
{
	if (va_bits == 0 || va_bits >= 64)
		return 0;
	return ~((1ULL << va_bits) - 1);
}

uint64_t pt_arm64_strip_pac(uint64_t addr, unsigned int va_bits)
{
	/* User addresses have bit 55 clear: every bit above the VA size is PAC or tag, never
	 * address (the kernel's half, bit 55 set, would need the bits set instead). */
	return addr & ~pt_arm64_pac_mask(va_bits);
}

uint32_t pt_arm64_insn(const uint8_t *code)
{
	return (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 |
	       (uint32_t)code[3] << 24;
}

/* The hint space (nop, pac*, aut*, bti): HINT #imm, d503201f | imm << 5. */
static const char *hint_name(uint32_t insn)
{
	switch (insn) {
	case 0xd503201f: return "nop";
	case 0xd503233f: return "paciasp";
	case 0xd503237f: return "pacibsp";
	case 0xd50323bf: return "autiasp";
	case 0xd50323ff: return "autibsp";
	case 0xd503241f: return "bti";
	case 0xd503245f: return "bti c";
	case 0xd503249f: return "bti j";
	case 0xd50324df: return "bti jc";
	default: return "hint";
	}
}

/* The instructions arm_probe_decode_insn() simulates: those reading or writing the pc. */
static const char *simulated_name(uint32_t insn)
{
	if ((insn & 0xff000010) == 0x54000000)
		return "b.cond";
	if ((insn & 0x7e000000) == 0x34000000)
		return insn & 0x01000000 ? "cbnz" : "cbz";
	if ((insn & 0x7e000000) == 0x36000000)
		return insn & 0x01000000 ? "tbnz" : "tbz";
	if ((insn & 0x1f000000) == 0x10000000)
		return insn & 0x80000000 ? "adrp" : "adr";
	if ((insn & 0x7c000000) == 0x14000000)
		return insn & 0x80000000 ? "bl" : "b";
	if ((insn & 0xfffffc1f) == 0xd61f0000)
		return "br";
	if ((insn & 0xfffffc1f) == 0xd63f0000)
		return "blr";
	if ((insn & 0xfffffc1f) == 0xd65f0000)
		return "ret";
	if ((insn & 0xbf000000) == 0x18000000)
		return "ldr literal";
	if ((insn & 0xff000000) == 0x98000000)
		return "ldrsw literal";
	return NULL;
}

int pt_arm64_probe_class(uint32_t insn, const char **name)
{
	const char *n;

	if ((insn & 0xfffff01f) == 0xd503201f) {
		/* Hints: aarch64_insn_is_steppable_hint() lets nop, the PAC-signing ones
		 * (paciasp, pacibsp, paciaz, pacibz, pacia1716, pacib1716, xpaclri) and the bti
		 * landing pads execute out of line (newer kernels simulate nop alone:
		 * simulate_nop) and refuses every other hint, autiasp included. The paciasp and
		 * bti ones start every function of a PAC/BTI-built glibc (trixie's). */
		*name = hint_name(insn);
		switch (insn & 0xfe0) {
		case 0x000: case 0x0e0: case 0x100: case 0x140: case 0x300: case 0x320:
		case 0x340: case 0x360: case 0x400: case 0x440: case 0x480: case 0x4c0:
			return PT_A64_STEPPED;
		default:
			return PT_A64_REJECTED;
		}
	}
	if ((n = simulated_name(insn))) {
		*name = n;
		return PT_A64_SIMULATED;
	}
	/* Exclusive loads and stores (o2 clear: the step loses the monitor; ldar/stlr have o2
	 * set and are stepped) and exception generation (svc, brk, hvc) are refused. */
	if ((insn & 0x3f800000) == 0x08000000) {
		*name = "exclusive";
		return PT_A64_REJECTED;
	}
	if ((insn & 0xff000000) == 0xd4000000) {
		*name = "exception";
		return PT_A64_REJECTED;
	}
	/* stp/ldp of any addressing form (the prologue's stp x29, x30, [sp, #-N]!). */
	if ((insn & 0x3a000000) == 0x28000000) {
		*name = insn & 0x00400000 ? "ldp" : "stp";
		return PT_A64_STEPPED;
	}
	*name = "insn";
	return PT_A64_STEPPED;
}

/* A landing pad or a no-op: bti of any kind, nop. */
static int is_pad(uint32_t insn)
{
	return insn == 0xd503201f || (insn & 0xffffff3f) == 0xd503241f;
}

/* Writes nothing but the flags: a pad, or cmp/cmn/tst (subs/adds/ands with xzr as the
 * destination) by immediate or shifted register. */
static int flags_only(uint32_t insn)
{
	if (is_pad(insn))
		return 1;
	if ((insn & 31) != 31)
		return 0;
	return (insn & 0x7f800000) == 0x71000000 || (insn & 0x7f800000) == 0x31000000 ||
	       (insn & 0x7f800000) == 0x72000000 || (insn & 0x7f200000) == 0x6b000000 ||
	       (insn & 0x7f200000) == 0x2b000000 || (insn & 0x7f200000) == 0x6a000000;
}

void pt_arm64_probe_place(const uint8_t *code, size_t len, int may_skip, struct pt_a64_place *out)
{
	uint32_t first;

	memset(out, 0, sizeof(*out));
	if (!code || len < 4) {
		out->insn = "(no code)";
		out->cls = PT_A64_STEPPED;
		return;
	}
	first = pt_arm64_insn(code);
	out->cls = pt_arm64_probe_class(first, &out->insn);
	if (out->cls == PT_A64_SIMULATED || !may_skip || !flags_only(first))
		return;
	/* Past one or two of them, to a simulated one; else the entry, which costs the same. */
	for (size_t k = 1; k <= 2 && 4 * (k + 1) <= len; k++) {
		uint32_t next = pt_arm64_insn(code + 4 * k);
		const char *name;

		if (pt_arm64_probe_class(next, &name) == PT_A64_SIMULATED) {
			pt_arm64_probe_class(first, &out->skipped[0]);
			if (k == 2)
				pt_arm64_probe_class(pt_arm64_insn(code + 4), &out->skipped[1]);
			out->skip = 4 * (uint32_t)k;
			out->cls = PT_A64_SIMULATED;
			out->insn = name;
			return;
		}
		if (!flags_only(next))
			return;
	}
}

int pt_arm64_is_branch_thunk(const uint8_t *code, size_t len)
{
	size_t i = 0;

	if (len >= 4 && (pt_arm64_insn(code) & 0xffffff3f) == 0xd503241f)
		i = 4;
	return i + 4 <= len && (pt_arm64_insn(code + i) & 0xfc000000) == 0x14000000;
}

/* The general registers (bit n: xn, 0-30) an instruction may write, over-approximated: a
 * register wrongly kept could fake a guard, one wrongly forgotten only loses one (a call
 * apart, below). */
static uint32_t a64_writes(uint32_t i)
{
	uint32_t rd = 1u << (i & 31), rn = 1u << (i >> 5 & 31);
	uint32_t rt2 = 1u << (i >> 10 & 31), rs = 1u << (i >> 16 & 31);
	uint32_t op0 = i >> 25 & 15, w;

	if ((op0 & 14) == 10) {                 /* branches, exceptions, system */
		/* bl, blr (and its PAC forms) write x30. The callee's writes to x0-x18 are not
		 * counted: the registers are followed in address order, not along the control
		 * flow, and a block placed after a call is often reached by a branch from where
		 * they were set (Debian's 3.11 has two guards so: 5d0508, 5d05dc). */
		if ((i & 0xfc000000) == 0x94000000 ||
		    ((i & 0xfe000000) == 0xd6000000 && (i >> 21 & 15) == 1))
			return 1u << 30;
		if ((i & 0xfff00000) == 0xd5300000 || (i & 0xfff80000) == 0xd5280000)
			return rd;              /* mrs, sysl */
		return 0;
	}
	if ((op0 & 5) != 4)                     /* data processing: Rd */
		return rd;
	if ((i & 0x3f000000) == 0x08000000)     /* exclusive: the status, the loaded pair */
		return rd | rt2 | rs;
	if ((i & 0x3a000000) == 0x28000000) {   /* pairs: ldp; pre/post index write the base */
		w = i & 0x00400000 ? rd | rt2 : 0;
		return i & 0x00800000 ? w | rn : w;
	}
	if ((i & 0x3b000000) == 0x18000000)     /* literal loads */
		return rd;
	if ((i & 0x38000000) == 0x38000000) {   /* one register */
		if (!(i & 0x01000000) && (i & 0x00200000) && !(i & 0xc00))
			return rd | rs;         /* atomics: the old value */
		/* A store (opc 00, not SIMD) writes no general register. */
		w = (i >> 22 & 3) || (i & 0x04000000) ? rd : 0;
		if (!(i & 0x01000000) && !(i & 0x00200000) && (i & 0x400))
			w |= rn;                /* pre/post index */
		return w;
	}
	return rd | rn;                         /* SIMD structures: the base written back */
}

/* Registers followed along the straight line: val[n] is valid where the bit n of known is. */
struct a64_regs {
	uint64_t val[31];
	uint32_t known;
};

/* One instruction at pc: its effect on the followed registers. For a 64-bit `cmp xA, xB`
 * (subs xzr, shifted register, no shift) of a followed register, 1 and *named the address. */
static int a64_follow(struct a64_regs *r, uint32_t i, uint64_t pc, uint64_t *named)
{
	unsigned int d = i & 31, n = i >> 5 & 31, m = i >> 16 & 31;

	if ((i & 0x1f000000) == 0x10000000 && d < 31) {          /* adr, adrp */
		uint64_t raw = (uint64_t)(i >> 5 & 0x7ffff) << 2 | (i >> 29 & 3);
		int64_t imm = (int64_t)(raw << 43) >> 43;               /* 21 bits, signed */

		if (i & 0x80000000)
			r->val[d] = (pc & ~0xfffULL) + ((uint64_t)imm << 12);
		else
			r->val[d] = pc + (uint64_t)imm;
		r->known |= 1u << d;
		return 0;
	}
	if ((i & 0xff800000) == 0x91000000 && d < 31) {          /* add xd, xn, #imm{, lsl 12} */
		if (n < 31 && r->known >> n & 1) {
			uint64_t imm = (uint64_t)(i >> 10 & 0xfff) << (i & 0x00400000 ? 12 : 0);

			r->val[d] = r->val[n] + imm;
			r->known |= 1u << d;
		} else {
			r->known &= ~(1u << d);
		}
		return 0;
	}
	if ((i & 0xff20fc1f) == 0xeb00001f) {                    /* cmp xn, xm */
		if (n < 31 && r->known >> n & 1) {
			*named = r->val[n];
			return 1;
		}
		if (m < 31 && r->known >> m & 1) {
			*named = r->val[m];
			return 1;
		}
		return 0;
	}
	r->known &= ~a64_writes(i);
	return 0;
}

uint64_t pt_arm64_pyalloc_guard_target(const uint8_t *code, size_t n, uint64_t vaddr)
{
	struct a64_regs r = { .known = 0 };
	uint64_t named;

	/* Debian's 3.11: the compare is PyObject_Malloc's 8th instruction; 3.13's: the 13th. */
	for (size_t k = 0; k + 4 <= n && k < 4 * 32; k += 4)
		if (a64_follow(&r, pt_arm64_insn(code + k), vaddr + k, &named))
			return named;
	return 0;
}

uint32_t pt_arm64_pyalloc_count_guards(const uint8_t *code, size_t n, uint64_t vaddr,
				       uint64_t target, uint64_t skip_lo, uint64_t skip_hi)
{
	struct a64_regs r = { .known = 0 };
	uint32_t count = 0;
	uint64_t named;

	if (!target)
		return 0;
	for (size_t k = 0; k + 4 <= n; k += 4) {
		uint64_t at = vaddr + k;

		if (a64_follow(&r, pt_arm64_insn(code + k), at, &named) && named == target &&
		    !(at >= skip_lo && at < skip_hi))
			count++;
	}
	return count;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_arch_arm64 — the AArch64 port's pure logic (user/arch/arm64.c), run on any host: the
 * user_pt_regs layout, argument registers, PAC stripping, one CFI row and one frame record
 * applied to a frame, a CFI row from real .eh_frame bytes, the uprobe classes of A64
 * instructions, and the arm64 syscall numbers the BPF programs use (bpf/arch/sysnr.h) against
 * the kernel's generic table. */
#include <stdint.h>
#include <string.h>
/* The generic syscall table (include/uapi/asm-generic/unistd.h) is arm64's; linux-libc-dev
 * ships it on every Debian host. Only this one: x86-64's <asm/unistd.h> would redefine the
 * __NR_ names. */
#include <asm-generic/unistd.h>

#include "check.h"
#include <elf.h>
#include "arch/arch.h"
#include "arch/arm64.h"
#include "bpf/arch/sysnr.h"

static void test_sysnr(void)
{
	CHECK_EQ_U64(PT_ARM64_NR_MMAP, __NR_mmap, "arm64 mmap = the generic table's");
	CHECK_EQ_U64(PT_ARM64_NR_MUNMAP, __NR_munmap, "arm64 munmap");
	CHECK_EQ_U64(PT_ARM64_NR_BRK, __NR_brk, "arm64 brk");
	CHECK_EQ_U64(PT_ARM64_NR_MREMAP, __NR_mremap, "arm64 mremap");
	CHECK_EQ_U64(PT_ARM64_NR_MADVISE, __NR_madvise, "arm64 madvise");
	CHECK_EQ_U64(PT_ARM64_NR_WRITEV, __NR_writev, "arm64 writev");
#ifdef __NR_open
	CHECK(0, "the generic table has no open (it would be arm64's)");
#else
	CHECK(1, "the generic table has no open: arm64 opens with openat");
#endif
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_regs(void)
{
	uint8_t regs[PT_A64_USER_REGS_SIZE];
	uint64_t v = 0;

	/* struct user_pt_regs { u64 regs[31]; u64 sp; u64 pc; u64 pstate; } */
	for (int i = 0; i < 34; i++)
		put64(regs + 8 * i, 0x1000 + (uint64_t)i);
	CHECK_EQ_U64(pt_arm64_reg_off(PT_A64_FP), 232, "x29 at 232");
	CHECK_EQ_U64(pt_arm64_reg_off(PT_A64_SP), 248, "sp at 248");
	CHECK_EQ_U64(pt_arm64_reg_off(PT_A64_PC), 256, "pc at 256");
	CHECK(pt_arm64_reg_off(33) == -1 && pt_arm64_reg_off(-1) == -1, "no register 33 or -1");
	CHECK(pt_arm64_reg_get(regs, sizeof(regs), PT_A64_LR, &v) == 0 && v == 0x101e, "x30 read");
	CHECK(pt_arm64_reg_get(regs, sizeof(regs), PT_A64_PC, &v) == 0 && v == 0x1020, "pc read");
	CHECK(pt_arm64_reg_get(regs, 256, PT_A64_PC, &v) == -1, "pc outside a 256-byte copy");
	CHECK_EQ_U64(pt_arm64_arg_reg(0), 0, "argument 0 in x0");
	CHECK_EQ_U64(pt_arm64_arg_reg(2), 2, "argument 2 in x2, hidden result or not (x86-64: rdx)");
	CHECK(pt_arm64_arg_reg(8) == -1, "argument 8 on the stack");
}

static void test_pac(void)
{
	/* A return address into libc signed by paciasp: PAC bits in 54..48 (48-bit VA). */
	uint64_t ra = 0x0000ffff8a1c2b44ULL, signed_ra = ra | 0x002d000000000000ULL;

	CHECK_EQ_U64(pt_arm64_strip_pac(signed_ra, 48), ra, "PAC stripped (48-bit VA)");
	CHECK_EQ_U64(pt_arm64_strip_pac(ra, 48), ra, "an unsigned address unchanged");
	CHECK_EQ_U64(pt_arm64_strip_pac(0x5a00aaaad5c41234ULL, 48), 0xaaaad5c41234ULL,
		     "a tagged top byte stripped too");
	CHECK_EQ_U64(pt_arm64_strip_pac(0x000f000000001000ULL, 52), 0x000f000000001000ULL,
		     "52-bit VA keeps bits 48..51");
	CHECK_EQ_U64(pt_arm64_pac_mask(48), 0xffff000000000000ULL, "mask for 48 bits");
}

static void test_probe_class(void)
{
	/* Assembled by aarch64-linux-gnu-as (binutils 2.40), little-endian words. */
	static const struct { uint8_t b[4]; int cls; const char *name; } v[] = {
		{ { 0x3f, 0x23, 0x03, 0xd5 }, PT_A64_STEPPED, "paciasp" },  /* malloc's first, trixie */
		{ { 0x5f, 0x24, 0x03, 0xd5 }, PT_A64_STEPPED, "bti c" },    /* free's first, trixie */
		{ { 0xa0, 0x03, 0x00, 0xb4 }, PT_A64_SIMULATED, "cbz" },    /* free's second: cbz x0 */
		{ { 0xfd, 0x7b, 0xbc, 0xa9 }, PT_A64_STEPPED, "stp" },      /* stp x29, x30, [sp, #-64]! */
		{ { 0xfd, 0x03, 0x00, 0x91 }, PT_A64_STEPPED, "insn" },     /* mov x29, sp */
		{ { 0x41, 0x00, 0x00, 0x54 }, PT_A64_SIMULATED, "b.cond" }, /* b.ne */
		{ { 0x00, 0x00, 0x00, 0x90 }, PT_A64_SIMULATED, "adrp" },
		{ { 0x00, 0x00, 0x00, 0x10 }, PT_A64_SIMULATED, "adr" },
		{ { 0x00, 0x00, 0x00, 0x94 }, PT_A64_SIMULATED, "bl" },
		{ { 0x00, 0x00, 0x00, 0x14 }, PT_A64_SIMULATED, "b" },
		{ { 0xc0, 0x03, 0x5f, 0xd6 }, PT_A64_SIMULATED, "ret" },
		{ { 0x00, 0x02, 0x1f, 0xd6 }, PT_A64_SIMULATED, "br" },     /* br x16: a PLT's last */
		{ { 0x20, 0x00, 0x3f, 0xd6 }, PT_A64_SIMULATED, "blr" },
		{ { 0x40, 0x00, 0x00, 0x58 }, PT_A64_SIMULATED, "ldr literal" },
		{ { 0x41, 0x00, 0x00, 0x98 }, PT_A64_SIMULATED, "ldrsw literal" },
		{ { 0x40, 0x00, 0x18, 0x36 }, PT_A64_SIMULATED, "tbz" },    /* tbz w0, #3 */
		{ { 0x41, 0x00, 0x00, 0xb5 }, PT_A64_SIMULATED, "cbnz" },
		{ { 0x01, 0x7c, 0x5f, 0xc8 }, PT_A64_REJECTED, "exclusive" },  /* ldxr x1, [x0] */
		{ { 0x62, 0xfc, 0x5f, 0x88 }, PT_A64_REJECTED, "exclusive" },  /* ldaxr w2, [x3] */
		{ { 0xc5, 0x7c, 0x04, 0xc8 }, PT_A64_REJECTED, "exclusive" },  /* stxr w4, x5, [x6] */
		{ { 0x01, 0xfc, 0xdf, 0xc8 }, PT_A64_STEPPED, "insn" },     /* ldar: ordered, not exclusive */
		{ { 0x01, 0x00, 0x00, 0xd4 }, PT_A64_REJECTED, "exception" }, /* svc #0 */
		{ { 0x1f, 0x20, 0x03, 0xd5 }, PT_A64_STEPPED, "nop" },
		/* Not in aarch64_insn_is_steppable_hint()'s list: refused (an epilogue's). */
		{ { 0xbf, 0x23, 0x03, 0xd5 }, PT_A64_REJECTED, "autiasp" },
		{ { 0xff, 0x20, 0x03, 0xd5 }, PT_A64_STEPPED, "hint" },     /* xpaclri */
		{ { 0x9f, 0x20, 0x03, 0xd5 }, PT_A64_REJECTED, "hint" },    /* sev */
		{ { 0xfd, 0x7b, 0xc4, 0xa8 }, PT_A64_STEPPED, "ldp" },      /* ldp x29, x30, [sp], #64 */
		{ { 0xe0, 0x07, 0x01, 0xad }, PT_A64_STEPPED, "stp" },      /* stp q0, q1, [sp, #32] */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const char *name = NULL;
		int cls = pt_arm64_probe_class(pt_arm64_insn(v[i].b), &name);

		CHECK(cls == v[i].cls && name && strcmp(name, v[i].name) == 0,
		      "%08x: %s, class %d (got %s, %d)", pt_arm64_insn(v[i].b), v[i].name, v[i].cls,
		      name ? name : "(null)", cls);
	}
}

/* Words as little-endian bytes. */
static size_t words(uint8_t *out, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 4; b++)
			out[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
	return 4 * n;
}

static void test_probe_place(void)
{
	/* The first three words of Debian's arm64 glibc entry points (aarch64-linux-gnu-objdump
	 * of libc6 2.36-9+deb12u14 and 2.41-12+deb13u5), and where the probe goes when it may
	 * leave the entry (free) and when it may not (the others: a return probe shares it). */
	static const struct {
		const char *what;
		uint32_t w[3];
		int may_skip;
		uint32_t skip;
		int cls;
		const char *insn, *skipped;
	} v[] = {
		{ "bookworm free", { 0xb4000880, 0xa9bc7bfd, 0x910003fd },
		  1, 0, PT_A64_SIMULATED, "cbz", NULL },
		{ "bookworm malloc", { 0xa9bc7bfd, 0x910003fd, 0xa90363f7 },
		  0, 0, PT_A64_STEPPED, "stp", NULL },
		{ "bookworm reallocarray", { 0x9bc27c23, 0x9b027c21, 0xb5000043 },
		  0, 0, PT_A64_STEPPED, "insn", NULL },
		{ "trixie free", { 0xd503245f, 0xb4000ea0, 0xd503233f },
		  1, 4, PT_A64_SIMULATED, "cbz", "bti c" },
		{ "trixie free, may not skip", { 0xd503245f, 0xb4000ea0, 0xd503233f },
		  0, 0, PT_A64_STEPPED, "bti c", NULL },
		{ "trixie malloc", { 0xd503233f, 0xa9bc7bfd, 0x910003fd },
		  1, 0, PT_A64_STEPPED, "paciasp", NULL },
		{ "trixie memalign", { 0xd503245f, 0xd00008e2, 0x395d9442 },
		  0, 0, PT_A64_STEPPED, "bti c", NULL },
		{ "trixie memalign, may skip", { 0xd503245f, 0xd00008e2, 0x395d9442 },
		  1, 4, PT_A64_SIMULATED, "adrp", "bti c" },
		{ "trixie reallocarray, may skip", { 0xd503245f, 0x9bc27c23, 0x9b027c21 },
		  1, 0, PT_A64_STEPPED, "bti c", NULL },
		/* bti c; cmp x0, #0; b.eq: two skipped. cmp x1, #16 then a stp: stays. */
		{ "bti; cmp; b.eq", { 0xd503245f, 0xf100001f, 0x54000040 },
		  1, 8, PT_A64_SIMULATED, "b.cond", "bti c" },
		{ "cmp; stp", { 0xf100403f, 0xa9bc7bfd, 0x54000040 },
		  1, 0, PT_A64_STEPPED, "insn", NULL },
		/* A mov writes x1: not passed even before a simulated one. */
		{ "mov; cbz", { 0xaa0003e1, 0xb4000040, 0 }, 1, 0, PT_A64_STEPPED, "insn", NULL },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct pt_a64_place p;
		uint8_t code[12];

		pt_arm64_probe_place(code, words(code, v[i].w, 3), v[i].may_skip, &p);
		CHECK(p.skip == v[i].skip && p.cls == v[i].cls && p.insn &&
		      strcmp(p.insn, v[i].insn) == 0,
		      "%s: +%u %s (got +%u %s, class %d)", v[i].what, v[i].skip, v[i].insn, p.skip,
		      p.insn ? p.insn : "(null)", p.cls);
		CHECK(v[i].skipped ? p.skipped[0] && strcmp(p.skipped[0], v[i].skipped) == 0 :
				     !p.skipped[0],
		      "%s: skipped %s (got %s)", v[i].what, v[i].skipped ? v[i].skipped : "nothing",
		      p.skipped[0] ? p.skipped[0] : "nothing");
	}
	{
		struct pt_a64_place p;
		uint8_t code[12];

		static const uint32_t bti_cmp_beq[] = { 0xd503245f, 0xf100001f, 0x54000040 };

		pt_arm64_probe_place(code, words(code, bti_cmp_beq, 3), 1, &p);
		CHECK(p.skipped[1] && strcmp(p.skipped[1], "insn") == 0,
		      "bti; cmp; b.eq: the cmp skipped second");
		pt_arm64_probe_place(code, 2, 1, &p);
		CHECK(p.skip == 0 && strcmp(p.insn, "(no code)") == 0,
		      "under 4 bytes: the entry, no code");
		pt_arm64_probe_place(code, 4, 1, &p);
		CHECK(p.skip == 0 && strcmp(p.insn, "bti c") == 0,
		      "bti c alone in the bytes read: the entry");
	}
}

static void test_thunk(void)
{
	uint8_t code[8];

	static const uint32_t b[] = { 0x14000010 }, bti_b[] = { 0xd503245f, 0x17fffff0 };
	static const uint32_t bl[] = { 0x94000010 }, pac_b[] = { 0xd503233f, 0x14000010 };

	CHECK(pt_arm64_is_branch_thunk(code, words(code, b, 1)), "b: a thunk");
	CHECK(pt_arm64_is_branch_thunk(code, words(code, bti_b, 2)), "bti c; b: a thunk");
	CHECK(!pt_arm64_is_branch_thunk(code, words(code, bl, 1)), "bl: no thunk");
	CHECK(!pt_arm64_is_branch_thunk(code, words(code, pac_b, 2)), "paciasp; b: no thunk");
	CHECK(!pt_arm64_is_branch_thunk(code, words(code, bti_b, 1)), "bti c alone: no thunk");
}

/* Encoders for the guard tests (checked against aarch64-linux-gnu-as in the fixtures below). */
static uint32_t adrp(int rd, uint64_t pc, uint64_t addr)
{
	int64_t pages = (int64_t)(addr >> 12) - (int64_t)(pc >> 12);

	return 0x90000000 | (uint32_t)(pages & 3) << 29 | (uint32_t)((pages >> 2) & 0x7ffff) << 5 |
	       (uint32_t)rd;
}

static uint32_t add_imm(int rd, int rn, uint32_t imm)
{
	return 0x91000000 | imm << 10 | (uint32_t)rn << 5 | (uint32_t)rd;
}

static uint32_t cmp_reg(int rn, int rm)
{
	return 0xeb00001f | (uint32_t)rm << 16 | (uint32_t)rn << 5;
}

static void test_isa(void)
{
	CHECK(pt_arch_isa_of_elf(EM_AARCH64) == PT_ISA_A64, "EM_AARCH64: A64");
	CHECK(pt_arch_isa_of_elf(EM_X86_64) == PT_ISA_X86_64, "EM_X86_64: x86-64");
	CHECK(pt_arch_isa_of_elf(EM_386) == PT_ISA_NONE, "EM_386: none");
	CHECK(pt_arch_host()->isa != PT_ISA_NONE, "this host's code is one the decoders read");
}

static void test_pyalloc_guards(void)
{
	/* PyObject_Malloc's first instructions in Debian's arm64 python3.11 3.11.2-6+deb12u8 (at
	 * 0x4753e4: tbnz; mov; adrp x0; add x3; adrp x2; add x2, #0x520; ldp x0, x3; cmp x3, x2)
	 * and python3.13 3.13.5-2+deb13u5 (0x484880: bti c; tbnz; paciasp; stp; mov; stp; adrp
	 * x20; add x20; mov; adrp x0; add x0, #0x9e8; ldr x2; cmp x2, x0). */
	static const uint32_t py311[] = { 0xb7f80960, 0xaa0003e1, 0x900025e0, 0x91048003,
					  0x90000002, 0x91148042, 0xa9400c60, 0xeb02007f,
					  0x540007a1 };
	static const uint32_t py313[] = { 0xd503245f, 0xb7f80ae0, 0xd503233f, 0xa9bd7bfd,
					  0x910003fd, 0xa90153f3, 0xf0002d14, 0x911a6294,
					  0xaa0003f3, 0x90000000, 0x9127a000, 0xf9418e82,
					  0xeb00005f, 0x54000801 };
	/* libpython3.11.so.1.0's: loads the pointer and jumps (br x16), compares nothing. */
	static const uint32_t lib311[] = { 0xaa0003e1, 0xb7f800c0, 0xf0002382, 0x91070042,
					   0xa9450840, 0xaa0203f0, 0xd61f0200, 0xd2800000,
					   0xd65f03c0 };
	uint8_t code[256];
	uint32_t w[64];
	uint64_t base = 0x400000, g = 0x475520;
	size_t n = 0;

	CHECK_EQ_U64(pt_arm64_pyalloc_guard_target(code, words(code, py311, 9), 0x4753e4), 0x475520,
		     "guard: Debian arm64 python3.11's PyObject_Malloc");
	CHECK_EQ_U64(pt_arm64_pyalloc_guard_target(code, words(code, py313, 14), 0x484880),
		     0x4849e8,
		     "guard: Debian arm64 python3.13's PyObject_Malloc");
	CHECK_EQ_U64(pt_arm64_pyalloc_guard_target(code, words(code, py311, 7), 0x4753e4), 0,
		     "guard: none in the bytes before the compare");
	CHECK_EQ_U64(pt_arm64_pyalloc_guard_target(code, words(code, lib311, 9), 0x1c6450), 0,
		     "guard: none in a shared libpython's (no inlining there)");
	CHECK_EQ_U64(adrp(2, 0x4753f4, g), 0x90000002, "encoder: adrp x2 as the assembler's");
	CHECK_EQ_U64(add_imm(2, 2, 0x520), 0x91148042,
		     "encoder: add x2, x2, #0x520 as the assembler's");
	CHECK_EQ_U64(cmp_reg(3, 2), 0xeb02007f, "encoder: cmp x3, x2 as the assembler's");

	/* A text segment at base: the sites below, one word each. */
#define AT (base + 4 * n)
	w[n] = adrp(2, AT, g), n++;             /* 1: adrp, add, cmp: counted */
	w[n] = add_imm(2, 2, 0x520), n++;
	w[n] = cmp_reg(3, 2), n++;
	w[n] = 0xf90007e2, n++;                 /* str x2, [sp, #8]: x2 kept */
	w[n] = cmp_reg(2, 4), n++;              /* 2: x2 as the first operand: counted */
	w[n] = 0x94000010, n++;                 /* bl: x2 kept (address order, see arm64.c) */
	w[n] = cmp_reg(5, 2), n++;              /* 3: counted */
	w[n] = 0xf9400402, n++;                 /* ldr x2, [x0, #8]: x2 forgotten */
	w[n] = cmp_reg(3, 2), n++;              /* not counted */
	w[n] = adrp(6, AT, g), n++;
	w[n] = add_imm(6, 6, 0x530), n++;       /* another address */
	w[n] = cmp_reg(3, 6), n++;              /* not counted */
	w[n] = adrp(7, AT, g), n++;
	w[n] = add_imm(8, 7, 0x520), n++;       /* into another register */
	w[n] = 0xa8c11be7, n++;                 /* ldp x7, x6, [sp], #16: x7 forgotten, x8 kept */
	w[n] = cmp_reg(8, 1), n++;              /* 4: counted */
	w[n] = 0xaa0103e8, n++;                 /* mov x8, x1: forgotten */
	w[n] = cmp_reg(8, 1), n++;              /* not counted */
	{
		/* adr x9, g (a linker's relaxation of adrp + add): from 0x400058 */
		int64_t d = (int64_t)(g - AT);

		w[n] = 0x10000000 | (uint32_t)(d & 3) << 29 | (uint32_t)((d >> 2) & 0x7ffff) << 5;
		w[n] |= 9;
		n++;
	}
	w[n] = cmp_reg(9, 0), n++;              /* 5: counted */
	w[n] = adrp(10, AT, g), n++;            /* inside [skip_lo, skip_hi): not counted */
	w[n] = add_imm(10, 10, 0x520), n++;
	w[n] = cmp_reg(10, 0), n++;
	n = words(code, w, n);
	CHECK_EQ_U64(pt_arm64_pyalloc_count_guards(code, n, base, g, base + n - 12, base + n), 5,
		     "count: five sites; forgotten registers, another address, the range out");
	CHECK_EQ_U64(pt_arm64_pyalloc_count_guards(code, n, base, g, 0, 0), 6,
		     "count: with the range");
	CHECK_EQ_U64(pt_arm64_pyalloc_count_guards(code, n, base, 0, 0, 0), 0,
		     "count: no target, none");
#undef AT
}

int main(void)
{
	test_sysnr();
	test_regs();
	test_pac();
	test_probe_class();
	test_probe_place();
	test_thunk();
	test_pyalloc_guards();
	test_isa();
	return CHECK_DONE();
}

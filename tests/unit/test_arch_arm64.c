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

/* A fake stack: 64 words from STACK_LO. */
#define STACK_LO 0x0000fffff0000000ULL
static uint64_t stack[64];

static int rd(void *ctx, uint64_t addr, uint64_t *out)
{
	(void)ctx;
	if (addr < STACK_LO || addr >= STACK_LO + sizeof(stack) || addr & 7)
		return -1;
	*out = stack[(addr - STACK_LO) / 8];
	return 0;
}

static void test_unwind_step(void)
{
	/* trixie's malloc: paciasp; stp x29, x30, [sp, #-64]!; mov x29, sp. The caller's sp is
	 * S, its x29 F, the return address R (signed once paciasp ran). */
	const uint64_t S = STACK_LO + 0x100, F = STACK_LO + 0x180, R = 0x0000aaaab0001234ULL;
	const uint64_t RS = R | 0x0041000000000000ULL;
	struct pt_a64_row entry = { PT_A64_DW_SP, 0, { PT_A64_SAME, 0 }, { PT_A64_SAME, 0 }, 0 };
	struct pt_a64_row signed_entry = entry;
	struct pt_a64_row saved = { PT_A64_DW_SP, 64, { PT_A64_AT_CFA, -64 }, { PT_A64_AT_CFA, -56 }, 1 };
	struct pt_a64_row framed = saved;
	struct pt_a64_row outermost = { PT_A64_DW_SP, 0, { PT_A64_SAME, 0 }, { PT_A64_UNDEF, 0 }, 0 };
	struct pt_a64_frame f;

	signed_entry.ra_signed = 1;
	framed.cfa_reg = PT_A64_DW_FP;
	stack[(S - 64 - STACK_LO) / 8] = F;       /* stp x29, x30, [sp, #-64]! */
	stack[(S - 56 - STACK_LO) / 8] = RS;

	f = (struct pt_a64_frame){ 0x1000, S, F, R, 1 };
	CHECK(pt_arm64_unwind_step(&entry, &f, 48, rd, NULL) == 0 && f.pc == R && f.sp == S && f.fp == F,
	      "at entry: the return address is x30, CFA = sp (not [sp] as on x86-64)");
	CHECK(!f.lr_valid, "the caller's x30 is not known");
	f = (struct pt_a64_frame){ 0x1004, S, F, RS, 1 };
	CHECK(pt_arm64_unwind_step(&signed_entry, &f, 48, rd, NULL) == 0 && f.pc == R,
	      "after paciasp: x30 signed, stripped");
	f = (struct pt_a64_frame){ 0x1008, S - 64, F, 0, 0 };
	CHECK(pt_arm64_unwind_step(&saved, &f, 48, rd, NULL) == 0 && f.pc == R && f.sp == S && f.fp == F,
	      "after stp: x29 at CFA-64, x30 at CFA-56 (CFA+k), PAC stripped");
	f = (struct pt_a64_frame){ 0x100c, S - 64, S - 64, 0, 0 };
	CHECK(pt_arm64_unwind_step(&framed, &f, 48, rd, NULL) == 0 && f.pc == R && f.sp == S && f.fp == F,
	      "after mov x29, sp: CFA = x29 + 64");
	f = (struct pt_a64_frame){ 0x1000, S, F, R, 0 };
	CHECK(pt_arm64_unwind_step(&entry, &f, 48, rd, NULL) == -1,
	      "a rule reading x30 beyond the first frame fails");
	f = (struct pt_a64_frame){ 0x1008, STACK_LO + 0x1000, F, 0, 0 };
	CHECK(pt_arm64_unwind_step(&saved, &f, 48, rd, NULL) == -1, "an unreadable slot fails");
	f = (struct pt_a64_frame){ 0x1000, S, F, R, 1 };
	CHECK(pt_arm64_unwind_step(&outermost, &f, 48, rd, NULL) == 1,
	      "undefined x30: the outermost frame");
}

static void test_fp_step(void)
{
	const uint64_t fp = STACK_LO + 0x40, next = STACK_LO + 0x80, R = 0x0000aaaab0005678ULL;
	struct pt_a64_frame f = { 0x2000, STACK_LO + 0x20, fp, 0, 1 };

	stack[(fp - STACK_LO) / 8] = next;
	stack[(fp + 8 - STACK_LO) / 8] = R | 0x0013000000000000ULL;
	CHECK(pt_arm64_fp_step(&f, 48, rd, NULL) == 0 && f.pc == R && f.fp == next && f.sp == fp + 16,
	      "frame record: [x29] the caller's x29, [x29+8] its return address, stripped");
	f = (struct pt_a64_frame){ 0x2000, STACK_LO, fp + 8, 0, 0 };
	CHECK(pt_arm64_fp_step(&f, 48, rd, NULL) == -1, "a misaligned x29 stops the walk");
	f = (struct pt_a64_frame){ 0x2000, fp + 16, fp, 0, 0 };
	CHECK(pt_arm64_fp_step(&f, 48, rd, NULL) == -1, "an x29 below sp stops the walk");
}

/* f() of tests-by-hand: `aarch64-linux-gnu-gcc -O2 -mbranch-protection=standard` (bookworm's
 * gcc 12) of a function that calls malloc, g and free, with a shrink-wrapped tail call; its
 * .eh_frame CIE ("zR", code 4, data -8, ra 30) and FDE instructions as the object holds them.
 * The expected rows are `readelf -wF`'s table of the same object (CFA, x29, ra; its "u", no
 * rule, is PT_A64_SAME here) and the signing state follows the paciasp/autiasp in the code:
 *   0: paciasp  4: stp x29, x30, [sp, #-48]!  8: mov x29, sp ... 48: ldp x29, x30, [sp], #48
 *   4c: autiasp  50: ret  54: ... 60: ldp x29, x30, [sp], #48  64: autiasp  68: b g */
static const uint8_t gcc_cie[] = { 0x0c, 0x1f, 0x00 };
static const uint8_t gcc_fde[] = {
	0x41, 0x2d, 0x41, 0x0e, 0x30, 0x9d, 0x06, 0x9e, 0x05, 0x42, 0x93, 0x04, 0x94, 0x03, 0x47,
	0x95, 0x02, 0x47, 0xd5, 0x41, 0xde, 0xdd, 0xd3, 0xd4, 0x0e, 0x00, 0x41, 0x2d, 0x41, 0x0e,
	0x30, 0x93, 0x04, 0x94, 0x03, 0x9d, 0x06, 0x9e, 0x05, 0x2d, 0x44, 0xde, 0xdd, 0xd3, 0xd4,
	0x0e, 0x00, 0x41, 0x2d, 0x00, 0x00,
};

static void test_cfa_row(void)
{
	static const struct { uint64_t pc; int64_t cfa; int saved; int sign; } want[] = {
		{ 0x00, 0, 0, 0 }, { 0x04, 0, 0, 1 }, { 0x08, 48, 1, 1 }, { 0x10, 48, 1, 1 },
		{ 0x2c, 48, 1, 1 }, { 0x48, 48, 1, 1 }, { 0x4c, 0, 0, 1 }, { 0x50, 0, 0, 0 },
		{ 0x54, 48, 1, 1 }, { 0x64, 0, 0, 1 }, { 0x68, 0, 0, 0 }, { 0x6b, 0, 0, 0 },
	};
	/* def_cfa x29+16; remember; def_cfa_register sp; negate; restore: back to x29+16,
	 * unsigned; then a DW_CFA_def_cfa_expression, not taken. */
	static const uint8_t fp_fde[] = { 0x0c, 0x1d, 0x10, 0x0a, 0x0d, 0x1f, 0x2d, 0x41, 0x0b, 0x41,
					  0x0f, 0x02, 0x8f, 0x00 };
	struct pt_a64_row row;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int ok = pt_arm64_cfa_row(gcc_cie, sizeof(gcc_cie), gcc_fde, sizeof(gcc_fde), 4, -8,
					  want[i].pc, &row) == 0;

		ok = ok && row.cfa_reg == PT_A64_DW_SP && row.cfa_off == want[i].cfa &&
		     row.ra_signed == want[i].sign;
		if (want[i].saved)
			ok = ok && row.fp.how == PT_A64_AT_CFA && row.fp.off == -48 &&
			     row.ra.how == PT_A64_AT_CFA && row.ra.off == -40;
		else
			ok = ok && row.fp.how == PT_A64_SAME && row.ra.how == PT_A64_SAME;
		CHECK(ok, "gcc f() at 0x%02" PRIx64 ": CFA sp+%" PRId64 ", x29/x30 %s, %s", want[i].pc,
		      want[i].cfa, want[i].saved ? "at c-48/c-40" : "in their registers",
		      want[i].sign ? "signed" : "unsigned");
	}
	CHECK(pt_arm64_cfa_row(gcc_cie, sizeof(gcc_cie), fp_fde, 6, 4, -8, 0, &row) == 0 &&
	      row.cfa_reg == PT_A64_DW_SP && row.cfa_off == 16, "def_cfa_register: sp, offset kept");
	CHECK(pt_arm64_cfa_row(gcc_cie, sizeof(gcc_cie), fp_fde, sizeof(fp_fde), 4, -8, 4, &row) == 0 &&
	      row.cfa_reg == PT_A64_DW_FP && row.cfa_off == 16 && !row.ra_signed,
	      "restore_state: CFA x29+16 and the unsigned state back");
	CHECK(pt_arm64_cfa_row(gcc_cie, sizeof(gcc_cie), fp_fde, sizeof(fp_fde), 4, -8, 8, &row) == -1,
	      "def_cfa_expression is not taken: -1");
	CHECK(pt_arm64_cfa_row(gcc_cie, sizeof(gcc_cie), gcc_fde, 6, 4, -8, 0x40, &row) == -1,
	      "truncated instructions (DW_CFA_offset r29 without its offset): -1");
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
		{ { 0xbf, 0x23, 0x03, 0xd5 }, PT_A64_STEPPED, "autiasp" },
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

int main(void)
{
	test_sysnr();
	test_regs();
	test_pac();
	test_unwind_step();
	test_fp_step();
	test_cfa_row();
	test_probe_class();
	return CHECK_DONE();
}

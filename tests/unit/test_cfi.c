// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_cfi — the CFI table builder (user/cfi.c) and the row contract (bpf/unwind.h).
 *
 *  1. hand-encoded CIE/FDE bytes -> exact rows (every opcode, encoding and failure path);
 *  2. real ELF files against binutils' independent decoder (readelf --debug-dump=frames-interp):
 *     every row of every FDE, at its first and its last byte, plus every gap between FDEs;
 *  3. a live unwind of this very process: f3 -> f2 -> f1 -> main -> libc -> _start with the
 *     tables and bpf/unwind.h's arithmetic, checked against __builtin_return_address and
 *     glibc's backtrace() (libgcc's unwinder);
 *  4. build times (informational);
 *  5. malformed input: truncated, mutated and random bytes, broken files.
 *
 * Run from the repository root (the fixture source is tests/unit/cfi_fixtures/frames.c).
 */
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <gelf.h>

#include "check.h"
#include "unwind/cfi.h"
#include "util/elfutil.h"
#include "symbolize/symbolize.h"
#include "bpf/unwind.h"

/* Test bodies stay out of main: inlined, their buffers would give main a frame larger than
 * the 32 KiB a row's s16 CFA offset can describe, and the live walk would stop there. */
#define NOINLINE __attribute__((noinline))

/* ---- 1. hand-encoded CFI ------------------------------------------------------------------ */

/* Where the test sections pretend to live (base of pcrel), and the GOT (base of datarel). */
#define VADDR 0x10000u
#define DATAREL 0x40000u
#include "tests/unit/cfibytes.h"

/* The CIE GCC writes on x86-64, with the FDE-pointer encoding and augmentation as given:
 * code 1, data -8, return column 16; CFA = rsp + 8, return address at CFA - 8. */
static size_t cie_enc(struct bb *x, const char *aug, uint8_t fde_enc)
{
	size_t at = entry_begin(x);

	u32(x, 0);                      /* CIE id */
	u8(x, 1);                       /* version */
	put(x, aug, strlen(aug) + 1);
	uleb(x, 1);                     /* code alignment */
	sleb(x, -8);                    /* data alignment */
	u8(x, 16);                      /* return address column */
	if (aug[0] == 'z') {
		uleb(x, 1);
		u8(x, fde_enc);
	}
	u8(x, 0x0c), uleb(x, 7), uleb(x, 8);    /* def_cfa rsp+8 */
	u8(x, 0x80 | 16), uleb(x, 1);           /* offset r16 (rip) at cfa-8 */
	entry_end(x, at);
	return at;
}

static size_t cie_std(struct bb *x)
{
	return cie_enc(x, "zR", 0x1b);  /* pcrel | sdata4 */
}

static int build_bb(const struct bb *x, int debug_frame, struct pt_unwind_table *t)
{
	struct pt_cfi_section s = {
		.data = x->b, .size = x->n, .vaddr = debug_frame ? 0 : VADDR, .datarel = DATAREL,
		.debug_frame = debug_frame,
	};

	return pt_cfi_build_mem(&s, t);
}

#define ROW(pc_, kind, off, rbp8) { .pc = (pc_), .cfa_reg = (kind), .cfa_off = (off), .rbp_off8 = (rbp8) }
#define UNS(pc_, why) ROW(pc_, PT_CFA_UNSUPPORTED, why, 0)
#define NONE(pc_) ROW(pc_, PT_CFA_NONE, 0, 0)

static void dump_rows(const char *what, const struct pt_unwind_row *r, uint32_t n)
{
	uint32_t i;

	printf("# %s (%u rows):\n", what, n);
	for (i = 0; i < n; i++)
		printf("#   %#x %s off=%d rbp8=%d\n", r[i].pc, pt_cfi_kind_str(r[i].cfa_reg),
		       r[i].cfa_off, r[i].rbp_off8);
}

static int rows_equal(const struct pt_unwind_table *t, const struct pt_unwind_row *want, uint32_t n)
{
	uint32_t i;

	if (t->nrows != n)
		return 0;
	for (i = 0; i < n; i++)
		if (memcmp(&t->rows[i], &want[i], sizeof(want[i])))
			return 0;
	return 1;
}

static void check_rows(const char *name, const struct pt_unwind_table *t,
		       const struct pt_unwind_row *want, uint32_t n)
{
	int ok = rows_equal(t, want, n);

	CHECK(ok, "%s: %u exact rows", name, n);
	if (!ok) {
		dump_rows("got", t->rows, t->nrows);
		dump_rows("want", want, n);
	}
}

#define NROWS(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* push rbp; mov rbp,rsp; ...; leave; ret — and a frameless function with two exits. */
static NOINLINE void test_prologues(void)
{
	struct pt_unwind_table t;
	const struct pt_unwind_row *r;
	struct bb x = { .n = 0 };
	size_t cie, f;
	__u64 cfa = 0;
	int err;

	cie = cie_std(&x);
	/* 0x1000 push %rbp; 0x1001 mov %rsp,%rbp; ... 0x101e leave; 0x101f ret */
	f = fde_begin(&x, cie, 0x1000, 0x20);
	u8(&x, 0x40 | 1);                               /* advance 1 */
	u8(&x, 0x0e), uleb(&x, 16);                     /* def_cfa_offset 16 */
	u8(&x, 0x80 | 6), uleb(&x, 2);                  /* offset rbp, cfa-16 */
	u8(&x, 0x40 | 3);                               /* advance 3 */
	u8(&x, 0x0d), uleb(&x, 6);                      /* def_cfa_register rbp */
	u8(&x, 0x40 | 0x1b);                            /* advance 27: after leave */
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8);         /* def_cfa rsp+8 */
	u8(&x, 0), u8(&x, 0);                           /* nop padding */
	entry_end(&x, f);

	/* 0x2000 push %r12; 0x2002 push %rbx; 0x2003 sub $0x18,%rsp; ...; 0x2010 add;
	 * 0x2014 pop %rbx; 0x2015 pop %r12; 0x2017 ret; 0x2018 more body ... 0x2040 */
	f = fde_begin(&x, cie, 0x2000, 0x40);
	u8(&x, 0x40 | 2), u8(&x, 0x0e), uleb(&x, 16), u8(&x, 0x80 | 12), uleb(&x, 2);
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 24), u8(&x, 0x80 | 3), uleb(&x, 3);
	u8(&x, 0x40 | 4), u8(&x, 0x0e), uleb(&x, 48);
	u8(&x, 0x40 | 0xd), u8(&x, 0x0a), u8(&x, 0x0e), uleb(&x, 24);  /* remember; cfa 24 */
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16);
	u8(&x, 0x40 | 2), u8(&x, 0x0e), uleb(&x, 8);
	u8(&x, 0x40 | 1), u8(&x, 0x0b);                                 /* restore_state */
	entry_end(&x, f);

	/* Two adjacent FDEs with no instructions: the CIE's rule, one row for both. */
	f = fde_begin(&x, cie, 0x2040, 0x10);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x2050, 0x10);
	entry_end(&x, f);
	u32(&x, 0);                                     /* terminator */

	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "prologues: build");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x1000, PT_CFA_RSP, 8, 0), ROW(0x1001, PT_CFA_RSP, 16, -2),
			ROW(0x1004, PT_CFA_RBP, 16, -2), ROW(0x101f, PT_CFA_RSP, 8, -2),
			NONE(0x1020),
			ROW(0x2000, PT_CFA_RSP, 8, 0), ROW(0x2002, PT_CFA_RSP, 16, 0),
			ROW(0x2003, PT_CFA_RSP, 24, 0), ROW(0x2007, PT_CFA_RSP, 48, 0),
			ROW(0x2014, PT_CFA_RSP, 24, 0), ROW(0x2015, PT_CFA_RSP, 16, 0),
			ROW(0x2017, PT_CFA_RSP, 8, 0), ROW(0x2018, PT_CFA_RSP, 48, 0),
			ROW(0x2040, PT_CFA_RSP, 8, 0), NONE(0x2060),
		};
		check_rows("prologues", &t, want, NROWS(want));
	}
	CHECK_EQ_U64(t.stats.cies, 1, "prologues: 1 CIE");
	CHECK_EQ_U64(t.stats.fdes, 4, "prologues: 4 FDEs");
	CHECK_EQ_U64(t.stats.none_rows, 2, "prologues: 2 NONE rows (gap, end)");

	CHECK(pt_cfi_lookup(&t, 0xfff) == NULL, "lookup below the first row: no row");
	r = pt_cfi_lookup(&t, 0x1003);
	CHECK(r && r->pc == 0x1001, "lookup 0x1003 -> row 0x1001");
	r = pt_cfi_lookup(&t, 0x101e);
	CHECK(r && r->cfa_reg == PT_CFA_RBP, "lookup at leave: CFA = rbp + 16");
	CHECK(r && pt_unwind_cfa(r, 0x101e, 0x5000, 0x7000, &cfa) == 0 && cfa == 0x7010,
	      "pt_unwind_cfa rbp row: cfa = rbp + 16 (got %#llx)", (unsigned long long)cfa);
	r = pt_cfi_lookup(&t, 0x101f);
	CHECK(r && r->cfa_reg == PT_CFA_RSP && r->cfa_off == 8, "lookup at ret: CFA = rsp + 8");
	r = pt_cfi_lookup(&t, 0x1020);
	CHECK(r && r->cfa_reg == PT_CFA_NONE, "lookup in the gap after an FDE: NONE");
	CHECK(r && pt_unwind_cfa(r, 0x1020, 0x5000, 0x7000, &cfa) == -1, "pt_unwind_cfa on NONE: stop");
	r = pt_cfi_lookup(&t, 0x1fff);
	CHECK(r && r->cfa_reg == PT_CFA_NONE, "lookup at the last byte of the gap: NONE");
	r = pt_cfi_lookup(&t, 0x2017);
	CHECK(r && r->cfa_off == 8, "lookup at the early ret: CFA = rsp + 8");
	r = pt_cfi_lookup(&t, 0x203f);
	CHECK(r && r->cfa_off == 48, "restore_state brings CFA = rsp + 48 back");
	r = pt_cfi_lookup(&t, 0xffffffffull);
	CHECK(r && r->cfa_reg == PT_CFA_NONE, "lookup far above: NONE");
	CHECK(pt_cfi_lookup(&t, 0x100000000ull) == NULL, "lookup above 4 GiB: no row");
	pt_cfi_free(&t);
}

/* binutils' .plt CFI (elf_x86_64_eh_frame_lazy_plt) and other CFA expressions. */
static void put_plt_expr(struct bb *x, uint8_t lit)
{
	static const uint8_t head[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a };
	static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	u8(x, 0x0f), uleb(x, 11);                       /* def_cfa_expression, 11 bytes */
	put(x, head, sizeof(head));
	u8(x, lit);
	put(x, tail, sizeof(tail));
}

static NOINLINE void test_plt_and_expressions(void)
{
	struct pt_unwind_table t;
	const struct pt_unwind_row *r;
	struct bb x = { .n = 0 };
	size_t cie, f;
	__u64 cfa = 0;
	int err;

	cie = cie_std(&x);
	f = fde_begin(&x, cie, 0x3000, 0x50);           /* .plt: PLT0 + 4 stubs */
	u8(&x, 0x0e), uleb(&x, 16);
	u8(&x, 0x40 | 6), u8(&x, 0x0e), uleb(&x, 24);
	u8(&x, 0x40 | 10);
	put_plt_expr(&x, 0x3b);                         /* lit11 */
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x3100, 0x40);           /* lazy IBT .plt: lit10 */
	put_plt_expr(&x, 0x3a);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x3200, 0x10);           /* almost: "lit3; shr" instead of shl */
	put_plt_expr(&x, 0x3b);
	x.b[x.n - 2] = 0x25;
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x3300, 0x10);           /* __restore_rt: breg7 160; deref */
	u8(&x, 0x0f), uleb(&x, 4), u8(&x, 0x77), uleb(&x, 160), u8(&x, 0x06);
	entry_end(&x, f);

	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "plt: build");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x3000, PT_CFA_RSP, 16, 0), ROW(0x3006, PT_CFA_RSP, 24, 0),
			ROW(0x3010, PT_CFA_PLT, 11, 0), NONE(0x3050),
			ROW(0x3100, PT_CFA_PLT, 10, 0), NONE(0x3140),
			UNS(0x3200, PT_UNW_WHY_CFA_EXPR), NONE(0x3210),
			UNS(0x3300, PT_UNW_WHY_CFA_EXPR), NONE(0x3310),
		};
		check_rows("plt and expressions", &t, want, NROWS(want));
	}
	CHECK_EQ_U64(t.stats.plt_rows, 2, "plt: 2 PLT rows");
	CHECK_EQ_U64(t.stats.why[PT_UNW_WHY_CFA_EXPR], 2, "plt: 2 rules with other expressions");
	/* A stub is 16 bytes: jmp *GOT (6), push $n (5), jmp PLT0 (5). */
	r = pt_cfi_lookup(&t, 0x3020);
	CHECK(r && pt_unwind_cfa(r, 0x3020, 0x1000, 0, &cfa) == 0 && cfa == 0x1008,
	      "plt stub at +0 (jmp *GOT): cfa = rsp + 8");
	CHECK(r && pt_unwind_cfa(r, 0x302a, 0x1000, 0, &cfa) == 0 && cfa == 0x1008,
	      "plt stub at +10 (inside push): cfa = rsp + 8");
	CHECK(r && pt_unwind_cfa(r, 0x302b, 0x1000, 0, &cfa) == 0 && cfa == 0x1010,
	      "plt stub at +11 (after push): cfa = rsp + 16");
	r = pt_cfi_lookup(&t, 0x310a);
	CHECK(r && pt_unwind_cfa(r, 0x310a, 0x1000, 0, &cfa) == 0 && cfa == 0x1010,
	      "ibt plt stub at +10: cfa = rsp + 16");
	pt_cfi_free(&t);
}

/* Every other CFA opcode, one rule change per byte of code. */
static NOINLINE void test_opcodes(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t cie, f;
	int err;

	cie = cie_enc(&x, "zRS", 0x1b);                 /* signal-frame CIE: same rules */
	f = fde_begin(&x, cie, 0x6000, 0x22);
	u8(&x, 0x40 | 1), u8(&x, 0x12), uleb(&x, 7), sleb(&x, -3);     /* def_cfa_sf rsp, 24 */
	u8(&x, 0x40 | 1), u8(&x, 0x13), sleb(&x, -4);                  /* def_cfa_offset_sf 32 */
	u8(&x, 0x40 | 1), u8(&x, 0x11), uleb(&x, 6), sleb(&x, 3);     /* offset_ext_sf rbp -24 */
	u8(&x, 0x40 | 1), u8(&x, 0x08), uleb(&x, 6);                  /* same_value rbp */
	u8(&x, 0x40 | 1), u8(&x, 0x05), uleb(&x, 6), uleb(&x, 2);     /* offset_extended -16 */
	u8(&x, 0x40 | 1), u8(&x, 0x06), uleb(&x, 6);                  /* restore_extended rbp */
	u8(&x, 0x40 | 1), u8(&x, 0x80 | 6), uleb(&x, 4);              /* offset rbp -32 */
	u8(&x, 0x02), u8(&x, 1), u8(&x, 0x14), uleb(&x, 6), uleb(&x, 1); /* loc1; val_offset */
	u8(&x, 0x03), u16(&x, 1), u8(&x, 0xc0 | 6);                   /* loc2; restore rbp */
	u8(&x, 0x04), u32(&x, 1), u8(&x, 0x09), uleb(&x, 6), uleb(&x, 3); /* loc4; register */
	u8(&x, 0x40 | 1), u8(&x, 0x07), uleb(&x, 6);                  /* undefined rbp */
	u8(&x, 0x40 | 1), u8(&x, 0x10), uleb(&x, 6), uleb(&x, 2), u8(&x, 0x76), sleb(&x, 0);
	u8(&x, 0x40 | 1), u8(&x, 0x80 | 6), uleb(&x, 4);              /* offset rbp -32, and: */
	u8(&x, 0x10), uleb(&x, 3), uleb(&x, 2), u8(&x, 0x77), sleb(&x, 8); /* expr on rbx: ignored */
	u8(&x, 0x2e), uleb(&x, 16), u8(&x, 0x00);                     /* GNU_args_size; nop */
	u8(&x, 0x40 | 1), u8(&x, 0x16), uleb(&x, 6), uleb(&x, 1), u8(&x, 0x30); /* val_expression */
	u8(&x, 0x40 | 1), u8(&x, 0x2f), uleb(&x, 6), uleb(&x, 1);     /* GNU_neg_offset_ext +8 */
	u8(&x, 0x40 | 1), u8(&x, 0x80 | 6), uleb(&x, 200);            /* rbp at cfa-1600 */
	u8(&x, 0x40 | 1), u8(&x, 0x08), uleb(&x, 6), u8(&x, 0x0e), uleb(&x, 40000);
	u8(&x, 0x40 | 1), u8(&x, 0x0c), uleb(&x, 10), uleb(&x, 0);    /* def_cfa r10+0 */
	u8(&x, 0x40 | 1), u8(&x, 0x0c), uleb(&x, 6), uleb(&x, 16);    /* def_cfa rbp+16 */
	u8(&x, 0x40 | 1), u8(&x, 0x14), uleb(&x, 16), uleb(&x, 1);    /* val_offset rip */
	u8(&x, 0x40 | 1), u8(&x, 0x80 | 16), uleb(&x, 1), u8(&x, 0x0d), uleb(&x, 7);
	u8(&x, 0x40 | 1), u8(&x, 0x80 | 16), uleb(&x, 2);             /* rip at cfa-16 */
	u8(&x, 0x40 | 1), u8(&x, 0xc0 | 16);                          /* restore rip */
	u8(&x, 0x40 | 1), u8(&x, 0x09), uleb(&x, 16), uleb(&x, 1);    /* rip in rdx */
	u8(&x, 0x40 | 1), u8(&x, 0xc0 | 16);
	u8(&x, 0x01), u32(&x, (uint32_t)(0x6020 - (VADDR + x.n)));    /* set_loc 0x6020 */
	u8(&x, 0x0e), uleb(&x, 8);
	u8(&x, 0x40 | 0), u8(&x, 0x0e), uleb(&x, 16);                 /* advance 0: replaces */
	u8(&x, 0x40 | 1), u8(&x, 0x07), uleb(&x, 16);                 /* undefined rip: END */
	entry_end(&x, f);

	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "opcodes: build");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x6000, PT_CFA_RSP, 8, 0), ROW(0x6001, PT_CFA_RSP, 24, 0),
			ROW(0x6002, PT_CFA_RSP, 32, 0), ROW(0x6003, PT_CFA_RSP, 32, -3),
			ROW(0x6004, PT_CFA_RSP, 32, 0), ROW(0x6005, PT_CFA_RSP, 32, -2),
			ROW(0x6006, PT_CFA_RSP, 32, 0), ROW(0x6007, PT_CFA_RSP, 32, -4),
			UNS(0x6008, PT_UNW_WHY_RBP_RULE), ROW(0x6009, PT_CFA_RSP, 32, 0),
			UNS(0x600a, PT_UNW_WHY_RBP_RULE), ROW(0x600b, PT_CFA_RSP, 32, 0),
			UNS(0x600c, PT_UNW_WHY_RBP_RULE), ROW(0x600d, PT_CFA_RSP, 32, -4),
			UNS(0x600e, PT_UNW_WHY_RBP_RULE), ROW(0x600f, PT_CFA_RSP, 32, 1),
			UNS(0x6010, PT_UNW_WHY_RBP_RANGE), UNS(0x6011, PT_UNW_WHY_CFA_RANGE),
			UNS(0x6012, PT_UNW_WHY_CFA_REG), ROW(0x6013, PT_CFA_RBP, 16, 0),
			UNS(0x6014, PT_UNW_WHY_RA_RULE), ROW(0x6015, PT_CFA_RSP, 16, 0),
			UNS(0x6016, PT_UNW_WHY_RA_RULE), ROW(0x6017, PT_CFA_RSP, 16, 0),
			UNS(0x6018, PT_UNW_WHY_RA_RULE), ROW(0x6019, PT_CFA_RSP, 16, 0),
			ROW(0x6021, PT_CFA_END, 0, 0), NONE(0x6022),
		};
		check_rows("opcodes", &t, want, NROWS(want));
	}
	CHECK_EQ_U64(t.stats.why[PT_UNW_WHY_RBP_RULE], 4, "opcodes: 4 rbp-rule rules");
	CHECK_EQ_U64(t.stats.why[PT_UNW_WHY_RA_RULE], 3, "opcodes: 3 ra-rule rules");
	CHECK_EQ_U64(t.stats.end_rows, 1, "opcodes: 1 END row");
	pt_cfi_free(&t);
}

static int deref_table(void *arg, uint64_t vaddr, uint64_t *val)
{
	(void)arg;
	if (vaddr != 0x77000)
		return -EFAULT;
	*val = 0x5800;
	return 0;
}

/* FDE address encodings, augmentations, code alignment, DWARF64, terminators. */
static NOINLINE void test_encodings(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t cie, f;
	int err;

	/* "zPLR": personality indirect|pcrel|sdata4, LSDA pcrel|sdata4, FDEs pcrel|sdata4. */
	cie = entry_begin(&x);
	u32(&x, 0), u8(&x, 1), put(&x, "zPLR", 5), uleb(&x, 1), sleb(&x, -8), u8(&x, 16);
	uleb(&x, 7), u8(&x, 0x9b), u32(&x, 0x1234), u8(&x, 0x1b), u8(&x, 0x1b);
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x80 | 16), uleb(&x, 1);
	entry_end(&x, cie);
	f = entry_begin(&x);
	u32(&x, (uint32_t)(x.n - cie)), u32(&x, (uint32_t)(0x5000 - (VADDR + x.n))), u32(&x, 0x10);
	uleb(&x, 4), u32(&x, 0xdead);                   /* LSDA pointer */
	u8(&x, 0x40 | 4), u8(&x, 0x0e), uleb(&x, 16);
	entry_end(&x, f);

#define ENC_CASE(enc, pc, put_pc, put_len) do { \
		size_t c_ = cie_enc(&x, "zR", enc), f_ = entry_begin(&x); \
		u32(&x, (uint32_t)(x.n - c_)); \
		put_pc; \
		put_len; \
		uleb(&x, 0); \
		u8(&x, 0x40 | 4), u8(&x, 0x0e), uleb(&x, 16); \
		entry_end(&x, f_); \
	} while (0)
	ENC_CASE(0x03, 0x5100, u32(&x, 0x5100), u32(&x, 0x10));                  /* udata4 */
	ENC_CASE(0x0c, 0x5200, u64(&x, 0x5200), u64(&x, 0x10));                  /* sdata8 */
	ENC_CASE(0x01, 0x5300, uleb(&x, 0x5300), uleb(&x, 0x10));                /* uleb128 */
	ENC_CASE(0x3b, 0x5400, u32(&x, 0x5400 - DATAREL), u32(&x, 0x10));        /* datarel */
	ENC_CASE(0x00, 0x5500, u64(&x, 0x5500), u64(&x, 0x10));                  /* absptr */
	ENC_CASE(0x02, 0x5600, u16(&x, 0x5600), u16(&x, 0x10));                  /* udata2 */
	ENC_CASE(0x09, 0x5700, sleb(&x, 0x5700), sleb(&x, 0x10));                /* sleb128 */
	ENC_CASE(0x83, 0x5800, u32(&x, 0x77000), u32(&x, 0x10));                 /* indirect */
	/* aligned: pad to the next 8-byte address, then an absolute pointer. */
	ENC_CASE(0x50, 0x5900, while ((VADDR + x.n) & 7) u8(&x, 0); u64(&x, 0x5900), u64(&x, 0x10));

	/* Code alignment 4: advance_loc 1 moves 4 bytes. */
	cie = entry_begin(&x);
	u32(&x, 0), u8(&x, 3), put(&x, "zR", 3), uleb(&x, 4), sleb(&x, -8), uleb(&x, 16);
	uleb(&x, 1), u8(&x, 0x1b), u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x90), uleb(&x, 1);
	entry_end(&x, cie);
	f = fde_begin(&x, cie, 0x5a00, 0x10);
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16);
	entry_end(&x, f);

	/* DWARF64 entries (length escape 0xffffffff, 8-byte CIE id and pointer), after a stray
	 * zero terminator. */
	u32(&x, 0);
	cie = x.n;
	u32(&x, 0xffffffff);
	{
		size_t len_at = x.n, body;

		u64(&x, 0);
		body = x.n;
		u64(&x, 0), u8(&x, 1), put(&x, "zR", 3), uleb(&x, 1), sleb(&x, -8), u8(&x, 16);
		uleb(&x, 1), u8(&x, 0x1b), u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x90), uleb(&x, 1);
		memcpy(x.b + len_at, &(uint64_t){ x.n - body }, 8);
		u32(&x, 0xffffffff);
		len_at = x.n;
		u64(&x, 0);
		body = x.n;
		u64(&x, x.n - cie);
		u32(&x, (uint32_t)(0x5b00 - (VADDR + x.n))), u32(&x, 0x10), uleb(&x, 0);
		u8(&x, 0x40 | 4), u8(&x, 0x0e), uleb(&x, 16);
		memcpy(x.b + len_at, &(uint64_t){ x.n - body }, 8);
	}

	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "encodings: build without deref");
	CHECK_EQ_U64(t.stats.fdes, 12, "encodings: 12 FDEs parsed");
	CHECK_EQ_U64(t.stats.fdes_dropped, 1, "encodings: indirect FDE dropped without deref");
	pt_cfi_free(&t);
	{
		struct pt_cfi_section s = {
			.data = x.b, .size = x.n, .vaddr = VADDR, .datarel = DATAREL,
			.deref = deref_table,
		};
		static const struct pt_unwind_row want[] = {
			ROW(0x5000, PT_CFA_RSP, 8, 0), ROW(0x5004, PT_CFA_RSP, 16, 0), NONE(0x5010),
			ROW(0x5100, PT_CFA_RSP, 8, 0), ROW(0x5104, PT_CFA_RSP, 16, 0), NONE(0x5110),
			ROW(0x5200, PT_CFA_RSP, 8, 0), ROW(0x5204, PT_CFA_RSP, 16, 0), NONE(0x5210),
			ROW(0x5300, PT_CFA_RSP, 8, 0), ROW(0x5304, PT_CFA_RSP, 16, 0), NONE(0x5310),
			ROW(0x5400, PT_CFA_RSP, 8, 0), ROW(0x5404, PT_CFA_RSP, 16, 0), NONE(0x5410),
			ROW(0x5500, PT_CFA_RSP, 8, 0), ROW(0x5504, PT_CFA_RSP, 16, 0), NONE(0x5510),
			ROW(0x5600, PT_CFA_RSP, 8, 0), ROW(0x5604, PT_CFA_RSP, 16, 0), NONE(0x5610),
			ROW(0x5700, PT_CFA_RSP, 8, 0), ROW(0x5704, PT_CFA_RSP, 16, 0), NONE(0x5710),
			ROW(0x5800, PT_CFA_RSP, 8, 0), ROW(0x5804, PT_CFA_RSP, 16, 0), NONE(0x5810),
			ROW(0x5900, PT_CFA_RSP, 8, 0), ROW(0x5904, PT_CFA_RSP, 16, 0), NONE(0x5910),
			ROW(0x5a00, PT_CFA_RSP, 8, 0), ROW(0x5a04, PT_CFA_RSP, 16, 0), NONE(0x5a10),
			ROW(0x5b00, PT_CFA_RSP, 8, 0), ROW(0x5b04, PT_CFA_RSP, 16, 0), NONE(0x5b10),
		};

		err = pt_cfi_build_mem(&s, &t);
		CHECK_EQ_U64(err, 0, "encodings: build with deref");
		check_rows("encodings (zPLR, udata4, sdata8, uleb, datarel, absptr, udata2, sleb, "
			   "indirect, aligned, code_align 4, DWARF64)", &t, want, NROWS(want));
		CHECK_EQ_U64(t.stats.cies, 12, "encodings: 12 CIEs");
		CHECK_EQ_U64(t.stats.fdes_dropped, 0, "encodings: nothing dropped");
		pt_cfi_free(&t);
	}
}

/* Old GCC's "eh" augmentation: an exception-table address right after the string, before the
 * alignment factors; FDE addresses absolute (no 'R'). */
static NOINLINE void test_eh_augmentation(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t cie, f;
	int err;

	cie = entry_begin(&x);
	u32(&x, 0), u8(&x, 1), put(&x, "eh", 3), u64(&x, 0xdeadbeef);
	uleb(&x, 1), sleb(&x, -8), u8(&x, 16);
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x90), uleb(&x, 1);
	entry_end(&x, cie);
	f = entry_begin(&x);
	u32(&x, (uint32_t)(x.n - cie)), u64(&x, 0x7000), u64(&x, 0x10);
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16);
	entry_end(&x, f);
	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "eh augmentation: build");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x7000, PT_CFA_RSP, 8, 0), ROW(0x7001, PT_CFA_RSP, 16, 0), NONE(0x7010),
		};
		check_rows("\"eh\" augmentation", &t, want, NROWS(want));
	}
	pt_cfi_free(&t);
}

/* .debug_frame: CIE id ~0, version 3 and 4, CIE pointers as section offsets (even forward),
 * absolute 8-byte addresses. */
static NOINLINE void test_debug_frame(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t cie, cie3, f, fwd;
	int err;

	cie = entry_begin(&x);
	u32(&x, 0xffffffff), u8(&x, 4), u8(&x, 0), u8(&x, 8), u8(&x, 0);
	uleb(&x, 1), sleb(&x, -8), uleb(&x, 16);
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x90), uleb(&x, 1);
	entry_end(&x, cie);
	f = entry_begin(&x);
	u32(&x, (uint32_t)cie), u64(&x, 0x9000), u64(&x, 0x10);
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16), u8(&x, 0x80 | 6), uleb(&x, 2);
	entry_end(&x, f);
	/* An FDE naming a CIE that comes after it. */
	f = entry_begin(&x);
	fwd = x.n;
	u32(&x, 0), u64(&x, 0x9010), u64(&x, 0x10);
	u8(&x, 0x40 | 2), u8(&x, 0x0e), uleb(&x, 24);
	entry_end(&x, f);
	cie3 = entry_begin(&x);
	u32(&x, 0xffffffff), u8(&x, 3), u8(&x, 0), uleb(&x, 1), sleb(&x, -8), uleb(&x, 16);
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x90), uleb(&x, 1);
	entry_end(&x, cie3);
	memcpy(x.b + fwd, &(uint32_t){ (uint32_t)cie3 }, 4);

	err = build_bb(&x, 1, &t);
	CHECK_EQ_U64(err, 0, "debug_frame: build");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x9000, PT_CFA_RSP, 8, 0), ROW(0x9001, PT_CFA_RSP, 16, -2),
			ROW(0x9010, PT_CFA_RSP, 8, 0), ROW(0x9012, PT_CFA_RSP, 24, 0), NONE(0x9020),
		};
		check_rows("debug_frame v4 + v3, forward CIE pointer", &t, want, NROWS(want));
	}
	CHECK_EQ_U64(t.stats.debug_frame, 1, "debug_frame: flagged");
	pt_cfi_free(&t);
}

/* Overlaps, empty FDEs, missing CIEs, bad CIEs, malformed programs, truncation. */
static NOINLINE void test_malformed_entries(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t cie, bad_cie, f;
	int err;

	cie = cie_std(&x);
	/* Return column 30: not an x86-64 frame this walker can climb. */
	bad_cie = entry_begin(&x);
	u32(&x, 0), u8(&x, 1), put(&x, "zR", 3), uleb(&x, 1), sleb(&x, -8), u8(&x, 30);
	uleb(&x, 1), u8(&x, 0x1b), u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8);
	entry_end(&x, bad_cie);

	f = fde_begin(&x, cie, 0x8000, 0x100);          /* cut short by the next one */
	u8(&x, 0x40 | 0x10), u8(&x, 0x0e), uleb(&x, 16);
	u8(&x, 0x02), u8(&x, 0x90), u8(&x, 0x0e), uleb(&x, 32);  /* at 0x80a0: beyond the cut */
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8080, 0x100);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8200, 0);              /* zero length */
	entry_end(&x, f);
	f = fde_begin(&x, bad_cie, 0x8300, 0x10);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8400, 0x10);           /* restore_state with nothing saved */
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16), u8(&x, 0x40 | 1), u8(&x, 0x0b);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8500, 0x10);           /* DW_CFA_GNU_window_save (SPARC) */
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16), u8(&x, 0x40 | 1), u8(&x, 0x2d);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8600, 0x10);           /* instruction cut by the entry's end */
	u8(&x, 0x40 | 1), u8(&x, 0x0e), u8(&x, 0x80);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8700, 0x10);           /* set_loc backwards */
	u8(&x, 0x40 | 4), u8(&x, 0x01), u32(&x, (uint32_t)(0x8701 - (VADDR + x.n)));
	entry_end(&x, f);
	f = entry_begin(&x);                            /* CIE pointer to nowhere */
	u32(&x, (uint32_t)(x.n - cie + 3)), u32(&x, 0), u32(&x, 0x10), uleb(&x, 0);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8800, 0x10);           /* remember_state 33 deep */
	{
		int i;

		for (i = 0; i < 33; i++)
			u8(&x, 0x0a);
	}
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x8900, 0x10);           /* fine again */
	entry_end(&x, f);
	/* An entry claiming more bytes than the section has. */
	u32(&x, 0x1000), u32(&x, 0);

	err = build_bb(&x, 0, &t);
	CHECK_EQ_U64(err, 0, "malformed: build succeeds");
	{
		static const struct pt_unwind_row want[] = {
			ROW(0x8000, PT_CFA_RSP, 8, 0), ROW(0x8010, PT_CFA_RSP, 16, 0),
			ROW(0x8080, PT_CFA_RSP, 8, 0), NONE(0x8180),
			UNS(0x8300, PT_UNW_WHY_BAD_CIE), NONE(0x8310),
			UNS(0x8400, PT_UNW_WHY_BAD_FDE), NONE(0x8410),
			UNS(0x8500, PT_UNW_WHY_BAD_FDE), NONE(0x8510),
			UNS(0x8600, PT_UNW_WHY_BAD_FDE), NONE(0x8610),
			UNS(0x8700, PT_UNW_WHY_BAD_FDE), NONE(0x8710),
			UNS(0x8800, PT_UNW_WHY_BAD_FDE), NONE(0x8810),
			ROW(0x8900, PT_CFA_RSP, 8, 0), NONE(0x8910),
		};
		check_rows("malformed entries", &t, want, NROWS(want));
	}
	CHECK_EQ_U64(t.stats.fdes_overlap, 1, "malformed: 1 FDE cut by the next");
	CHECK_EQ_U64(t.stats.fdes_empty, 1, "malformed: 1 empty FDE");
	CHECK_EQ_U64(t.stats.fdes_dropped, 1, "malformed: 1 FDE without CIE dropped");
	CHECK_EQ_U64(t.stats.why[PT_UNW_WHY_BAD_FDE], 5, "malformed: 5 bad programs");
	CHECK_EQ_U64(t.stats.truncated, 1, "malformed: truncated section noticed");
	pt_cfi_free(&t);

	{
		struct pt_cfi_section s = { .data = NULL, .size = 0 };

		err = pt_cfi_build_mem(&s, &t);
		CHECK(err == 0 && t.nrows == 0 && pt_cfi_lookup(&t, 0x1000) == NULL,
		      "empty section: empty table");
		pt_cfi_free(&t);
	}
}

/* ---- 5. fuzzing ------------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* What every table must satisfy, whatever the input. */
static int table_sane(const struct pt_unwind_table *t)
{
	uint32_t i;

	if (t->nrows && !t->rows)
		return 0;
	for (i = 0; i < t->nrows; i++) {
		const struct pt_unwind_row *r = &t->rows[i];

		if (r->cfa_reg >= PT_CFA_KINDS)
			return 0;
		if (r->cfa_reg == PT_CFA_UNSUPPORTED && (r->cfa_off <= 0 || r->cfa_off >= PT_UNW_WHY_COUNT))
			return 0;
		if (i && (r->pc <= t->rows[i - 1].pc ||
			  (r->cfa_reg == t->rows[i - 1].cfa_reg && r->cfa_off == t->rows[i - 1].cfa_off &&
			   r->rbp_off8 == t->rows[i - 1].rbp_off8)))
			return 0;
	}
	return t->stats.rows == t->nrows;
}

static int fuzz_one(const uint8_t *p, size_t n, int debug_frame, uint64_t *rows)
{
	struct pt_cfi_section s = {
		.data = p, .size = n, .vaddr = VADDR, .datarel = DATAREL, .debug_frame = debug_frame,
		.deref = deref_table,
	};
	struct pt_unwind_table t;
	uint8_t *buf;
	int ok, err;

	/* Copy to an exact-size heap buffer so valgrind sees any read past the end. */
	buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	memcpy(buf, p, n);
	s.data = buf;
	err = pt_cfi_build_mem(&s, &t);
	ok = err == 0 && table_sane(&t);
	if (ok && t.nrows)
		ok = pt_cfi_lookup(&t, t.rows[t.nrows - 1].pc) == &t.rows[t.nrows - 1];
	*rows += t.nrows;
	pt_cfi_free(&t);
	free(buf);
	return ok;
}

static const uint8_t *section_bytes(struct pt_elf *e, const char *want, size_t *n, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			return NULL;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			return NULL;
		*n = d->d_size;
		*addr = sh.sh_addr;
		return d->d_buf;
	}
	return NULL;
}

static NOINLINE void test_fuzz(void)
{
	struct bb x = { .n = 0 };
	uint8_t buf[8192];
	uint64_t rows = 0;
	size_t cie, f, i;
	int bad = 0, runs = 0, k;
	struct pt_elf e;

	/* A compact sample touching most of the parser: two CIEs, PLT, remember/restore. */
	cie = cie_std(&x);
	f = fde_begin(&x, cie, 0x1000, 0x40);
	u8(&x, 0x40 | 1), u8(&x, 0x0e), uleb(&x, 16), u8(&x, 0x80 | 6), uleb(&x, 2);
	u8(&x, 0x40 | 3), u8(&x, 0x0d), uleb(&x, 6), u8(&x, 0x0a), u8(&x, 0x40 | 9);
	u8(&x, 0x0c), uleb(&x, 7), uleb(&x, 8), u8(&x, 0x40 | 1), u8(&x, 0x0b);
	entry_end(&x, f);
	f = fde_begin(&x, cie, 0x1040, 0x40);
	put_plt_expr(&x, 0x3b);
	entry_end(&x, f);
	cie = cie_enc(&x, "zPLR", 0x1b);
	f = fde_begin(&x, cie, 0x2000, 0x40);
	u8(&x, 0x12), uleb(&x, 7), sleb(&x, -3), u8(&x, 0x10), uleb(&x, 6), uleb(&x, 1), u8(&x, 0x30);
	entry_end(&x, f);

	/* Every truncation, in both section flavors. */
	for (i = 0; i <= x.n; i++) {
		bad += !fuzz_one(x.b, i, 0, &rows);
		bad += !fuzz_one(x.b, i, 1, &rows);
		runs += 2;
	}
	/* Byte mutations of the sample. */
	for (k = 0; k < 20000; k++) {
		int flips = 1 + rng() % 4, j;

		memcpy(buf, x.b, x.n);
		for (j = 0; j < flips; j++)
			buf[rng() % x.n] = (uint8_t)rng();
		bad += !fuzz_one(buf, x.n, k & 1, &rows);
		runs++;
	}
	/* Random bytes, and random bytes after a valid CIE. */
	{
		struct bb c = { .n = 0 };

		cie_std(&c);
		for (k = 0; k < 5000; k++) {
			size_t n = c.n + rng() % 512;

			for (i = 0; i < n; i++)
				buf[i] = (uint8_t)rng();
			if (k & 1)
				memcpy(buf, c.b, c.n);
			bad += !fuzz_one(buf, n, k % 3 == 0, &rows);
			runs++;
		}
	}
	/* Mutations of the start of libc's real .eh_frame. */
	if (pt_elf_open("/lib/x86_64-linux-gnu/libc.so.6", &e) == 0) {
		uint64_t addr = 0;
		size_t n = 0;
		const uint8_t *p = section_bytes(&e, ".eh_frame", &n, &addr);

		if (p) {
			n = n < sizeof(buf) ? n : sizeof(buf);
			for (k = 0; k < 2000; k++) {
				int j, flips = 1 + rng() % 8;

				memcpy(buf, p, n);
				for (j = 0; j < flips; j++)
					buf[rng() % n] = (uint8_t)rng();
				bad += !fuzz_one(buf, n, 0, &rows);
				runs++;
			}
		}
		pt_elf_close(&e);
	}
	CHECK(bad == 0, "fuzz: %d truncated/mutated/random sections, all built sane tables "
	      "(%d bad, %" PRIu64 " rows in all)", runs, bad, rows);
}

/* ---- 2. readelf as the independent decoder ---------------------------------------------- */

struct re_row {
	uint64_t loc;
	char cfa[32], rbp[16], ra[16];
};

struct re_fde {
	uint64_t start, end;
	uint32_t first, n;      /* rows in re.rows; n == 0: the CIE's initial row applies */
	uint64_t cie;
	uint8_t overlap;
};

struct re_cie {
	uint64_t off;
	struct re_row init;
};

struct re {
	struct re_row *rows;
	uint32_t nrows, rcap;
	struct re_fde *fdes;
	uint32_t nfdes, fcap;
	struct re_cie *cies;
	uint32_t ncies, ccap;
};

static void *grow(void *p, uint32_t *cap, uint32_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(p, *cap * sz);
	if (!p)
		abort();
	return p;
}

static void re_free(struct re *re)
{
	free(re->rows);
	free(re->fdes);
	free(re->cies);
	memset(re, 0, sizeof(*re));
}

/* Parse `readelf --debug-dump=frames-interp` for one section (".eh_frame"/".debug_frame").
 * -wN: do not follow .gnu_debuglink into a separate debug file (whose .eh_frame is NOBITS).
 * Column sets change between tables (and within one when a new register appears: readelf
 * then prints the header again), so every header line resets the column map. */
static int re_parse(const char *path, const char *section, struct re *re)
{
	char cmd[PATH_MAX + 64], line[4096], *cols[64];
	int ncols = 0, in_section = 0, in_cie = 0, i;
	FILE *fp;

	memset(re, 0, sizeof(*re));
	snprintf(cmd, sizeof(cmd), "readelf -wN --debug-dump=frames-interp '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		char *tok[64], *save = NULL, *s;
		int ntok = 0;

		if (!strncmp(line, "Contents of the ", 16)) {
			in_section = !strncmp(line + 16, section, strlen(section)) &&
				     line[16 + strlen(section)] == ' ';
			continue;
		}
		if (!in_section)
			continue;
		for (s = strtok_r(line, " \t\n", &save); s && ntok < 64; s = strtok_r(NULL, " \t\n", &save)) {
			/* "r9 (r9)": a register rule is one column printed as two words. */
			if (s[0] == '(' && ntok)
				continue;
			tok[ntok++] = s;
		}
		if (!ntok)
			continue;
		if (ntok >= 4 && !strcmp(tok[3], "CIE")) {
			re->cies = grow(re->cies, &re->ccap, re->ncies, sizeof(*re->cies));
			memset(&re->cies[re->ncies], 0, sizeof(re->cies[0]));
			re->cies[re->ncies++].off = strtoull(tok[0], NULL, 16);
			in_cie = 1;
			continue;
		}
		if (ntok >= 6 && !strcmp(tok[3], "FDE")) {
			struct re_fde *f;
			char *dots;

			re->fdes = grow(re->fdes, &re->fcap, re->nfdes, sizeof(*re->fdes));
			f = &re->fdes[re->nfdes++];
			memset(f, 0, sizeof(*f));
			f->cie = strtoull(tok[4] + 4, NULL, 16);       /* cie=XXXXXXXX */
			f->start = strtoull(tok[5] + 3, &dots, 16);    /* pc=A..B */
			f->end = strtoull(dots + 2, NULL, 16);
			f->first = re->nrows;
			in_cie = 0;
			continue;
		}
		if (!strcmp(tok[0], "LOC")) {
			static char names[64][16];

			ncols = ntok < 64 ? ntok : 64;
			for (i = 0; i < ncols; i++) {
				snprintf(names[i], sizeof(names[i]), "%s", tok[i]);
				cols[i] = names[i];
			}
			continue;
		}
		if (ntok >= 2 && strlen(tok[0]) == 16 && ncols && ntok == ncols) {
			struct re_row r;

			memset(&r, 0, sizeof(r));
			r.loc = strtoull(tok[0], NULL, 16);
			snprintf(r.cfa, sizeof(r.cfa), "%s", tok[1]);
			for (i = 2; i < ntok; i++) {
				if (!strcmp(cols[i], "rbp"))
					snprintf(r.rbp, sizeof(r.rbp), "%s", tok[i]);
				else if (!strcmp(cols[i], "ra"))
					snprintf(r.ra, sizeof(r.ra), "%s", tok[i]);
			}
			if (in_cie && re->ncies) {
				re->cies[re->ncies - 1].init = r;
			} else if (re->nfdes) {
				re->rows = grow(re->rows, &re->rcap, re->nrows, sizeof(*re->rows));
				re->rows[re->nrows++] = r;
				re->fdes[re->nfdes - 1].n++;
			}
		}
	}
	return pclose(fp) == 0 ? 0 : -EIO;
}

/* What readelf's row says the table must hold, following cfi.c's documented precedence
 * (END > CFA rule > return-address rule > rbp rule). *either: readelf prints any CFA
 * expression as "exp"; the caller then wants PLT inside the .plt section (binutils emits its
 * expression for that section only) and UNSUPPORTED anywhere else. */
static struct pt_unwind_row re_expect(const struct re_row *r, int *either)
{
	struct pt_unwind_row w = { 0 };
	long off;
	char *end;

	*either = 0;
	if (!strcmp(r->ra, "u"))
		return (struct pt_unwind_row)ROW(0, PT_CFA_END, 0, 0);
	if (!strcmp(r->cfa, "exp")) {
		*either = 1;
		w.cfa_reg = PT_CFA_PLT;
	} else if (!strncmp(r->cfa, "rsp", 3) || !strncmp(r->cfa, "rbp", 3)) {
		off = strtol(r->cfa + 3, &end, 10);
		if (*end || off < INT16_MIN || off > INT16_MAX)
			return (struct pt_unwind_row)UNS(0, 0);
		w.cfa_reg = r->cfa[1] == 's' ? PT_CFA_RSP : PT_CFA_RBP;
		w.cfa_off = (int16_t)off;
	} else {
		return (struct pt_unwind_row)UNS(0, 0);
	}
	if (strcmp(r->ra, "c-8"))
		return (struct pt_unwind_row)UNS(0, 0);
	if (r->rbp[0] && strcmp(r->rbp, "u") && strcmp(r->rbp, "s")) {
		if (r->rbp[0] != 'c')
			return (struct pt_unwind_row)UNS(0, 0);
		off = strtol(r->rbp + 1, &end, 10);
		if (*end || off == 0 || off % 8 || off / 8 < INT8_MIN || off / 8 > INT8_MAX)
			return (struct pt_unwind_row)UNS(0, 0);
		w.rbp_off8 = (int8_t)(off / 8);
	}
	return w;
}

struct agree {
	uint64_t checks, ok, by_kind[PT_CFA_KINDS], gaps, gaps_ok, skipped_overlap;
	uint64_t plt_lo, plt_hi; /* the file's .plt: where "exp" must be the PLT expression */
	int shown;
};

static void agree_at(struct agree *a, const struct pt_unwind_table *t, uint64_t pc,
		     const struct re_row *r, const char *file)
{
	const struct pt_unwind_row *got = pt_cfi_lookup(t, pc);
	int either, ok;
	struct pt_unwind_row w = re_expect(r, &either);

	a->checks++;
	if (!got)
		ok = 0;
	else if (either && pc >= a->plt_lo && pc < a->plt_hi)
		ok = got->cfa_reg == PT_CFA_PLT && got->rbp_off8 == w.rbp_off8;
	else if (either)
		ok = got->cfa_reg == PT_CFA_UNSUPPORTED;
	else if (w.cfa_reg == PT_CFA_UNSUPPORTED || w.cfa_reg == PT_CFA_END)
		ok = got->cfa_reg == w.cfa_reg;
	else
		ok = got->cfa_reg == w.cfa_reg && got->cfa_off == w.cfa_off &&
		     got->rbp_off8 == w.rbp_off8;
	if (ok) {
		a->ok++;
		a->by_kind[got->cfa_reg]++;
	} else if (a->shown++ < 10) {
		printf("# %s: at %#" PRIx64 " readelf says CFA %s rbp %s ra %s; table has %s off=%d "
		       "rbp8=%d\n", file, pc, r->cfa, r->rbp[0] ? r->rbp : "-", r->ra,
		       got ? pt_cfi_kind_str(got->cfa_reg) : "(no row)", got ? got->cfa_off : 0,
		       got ? got->rbp_off8 : 0);
	}
}

static int cmp_re_fde(const void *pa, const void *pb)
{
	const struct re_fde *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Every row of every FDE readelf decodes, checked at its first and last byte; every gap
 * between FDEs checked for NONE. */
static NOINLINE void compare_with_readelf(const char *path, const char *label, int want_hdr)
{
	struct pt_unwind_table t;
	struct agree a = { 0 };
	struct timespec t0, t1;
	struct re re;
	uint64_t max_end = 0, nonempty = 0;
	uint32_t i, j;
	int err;

	{
		struct pt_elf e;
		size_t n = 0;

		if (pt_elf_open(path, &e) == 0) {
			if (section_bytes(&e, ".plt", &n, &a.plt_lo))
				a.plt_hi = a.plt_lo + n;
			pt_elf_close(&e);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = pt_cfi_build(path, &t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(err == 0, "%s: table built (err %d)", label, err);
	if (err)
		return;
	err = re_parse(path, t.stats.debug_frame ? ".debug_frame" : ".eh_frame", &re);
	CHECK(err == 0 && re.nfdes > 0, "%s: readelf decoded %u FDEs", label, re.nfdes);
	if (err || !re.nfdes) {
		pt_cfi_free(&t);
		re_free(&re);
		return;
	}
	CHECK_EQ_U64(t.stats.fdes, re.nfdes, "FDEs parsed = FDEs readelf lists");
	CHECK(table_sane(&t), "%s: table sorted, merged, valid kinds", label);

	/* Which FDEs overlap another: the table cuts them, readelf does not. */
	qsort(re.fdes, re.nfdes, sizeof(*re.fdes), cmp_re_fde);
	for (i = 0; i < re.nfdes; i++) {
		struct re_fde *f = &re.fdes[i];

		if (f->start == f->end)
			continue;
		for (j = i + 1; j < re.nfdes && re.fdes[j].start < f->end; j++) {
			if (re.fdes[j].start == re.fdes[j].end)
				continue;
			f->overlap = re.fdes[j].overlap = 1;
		}
	}
	for (i = 0; i < re.nfdes; i++) {
		struct re_fde *f = &re.fdes[i];
		struct re_row init;
		uint32_t k;

		if (f->start == f->end)
			continue;
		nonempty++;
		if (f->overlap) {
			a.skipped_overlap++;
			continue;
		}
		if (!f->n) {
			/* Nothing but nops: readelf prints no table, the CIE's rule holds. */
			for (k = 0; k < re.ncies && re.cies[k].off != f->cie; k++)
				;
			if (k == re.ncies) {
				a.checks++;
				continue;
			}
			init = re.cies[k].init;
			agree_at(&a, &t, f->start, &init, label);
			agree_at(&a, &t, f->end - 1, &init, label);
			continue;
		}
		for (k = 0; k < f->n; k++) {
			const struct re_row *r = &re.rows[f->first + k];
			uint64_t next = k + 1 < f->n ? re.rows[f->first + k + 1].loc : f->end;

			/* Several rows at one address: the last one holds. */
			if (next == r->loc || r->loc >= f->end)
				continue;
			if (next > f->end)
				next = f->end;
			agree_at(&a, &t, r->loc, r, label);
			agree_at(&a, &t, next - 1, r, label);
		}
	}
	/* Gaps: an end no FDE continues must read as NONE. */
	for (i = 0; i < re.nfdes; i++) {
		const struct re_fde *f = &re.fdes[i];

		if (f->start == f->end)
			continue;
		if (f->end > max_end)
			max_end = f->end;
		for (j = i + 1; j < re.nfdes && re.fdes[j].start == re.fdes[j].end; j++)
			;
		if (j == re.nfdes || re.fdes[j].start > max_end) {
			const struct pt_unwind_row *r = pt_cfi_lookup(&t, max_end);

			a.gaps++;
			if (r && r->cfa_reg == PT_CFA_NONE)
				a.gaps_ok++;
		}
	}
	CHECK(a.ok == a.checks && a.checks > 0,
	      "%s: %" PRIu64 "/%" PRIu64 " lookups agree with readelf (rsp %" PRIu64 ", rbp %" PRIu64
	      ", plt %" PRIu64 ", end %" PRIu64 ", unsupported %" PRIu64 "; %" PRIu64 " FDEs, %" PRIu64
	      " skipped as overlapping)", label, a.ok, a.checks, a.by_kind[PT_CFA_RSP],
	      a.by_kind[PT_CFA_RBP], a.by_kind[PT_CFA_PLT], a.by_kind[PT_CFA_END],
	      a.by_kind[PT_CFA_UNSUPPORTED], nonempty, a.skipped_overlap);
	CHECK(a.gaps_ok == a.gaps && a.gaps > 0, "%s: %" PRIu64 "/%" PRIu64 " gaps between FDEs read NONE",
	      label, a.gaps_ok, a.gaps);
	if (want_hdr)
		CHECK(t.stats.hdr_fdes == (int32_t)t.stats.fdes && t.stats.hdr_matched == t.stats.hdr_fdes,
		      "%s: .eh_frame_hdr lists %d FDEs, %d match ours, we parsed %u", label,
		      t.stats.hdr_fdes, t.stats.hdr_matched, t.stats.fdes);
	printf("ok - %s: %u rows (%zu bytes) from %u FDEs, %u rules, built in %.1f ms; "
	       "none %u, end %u, plt %u, unsupported %u [cfa-expr %u, cfa-reg %u, cfa-range %u, "
	       "ra %u, rbp-rule %u, rbp-range %u]\n", label, t.nrows,
	       (size_t)t.nrows * sizeof(*t.rows), t.stats.fdes, t.stats.rules,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, t.stats.none_rows,
	       t.stats.end_rows, t.stats.plt_rows, t.stats.unsupported_rows,
	       t.stats.why[PT_UNW_WHY_CFA_EXPR], t.stats.why[PT_UNW_WHY_CFA_REG],
	       t.stats.why[PT_UNW_WHY_CFA_RANGE], t.stats.why[PT_UNW_WHY_RA_RULE],
	       t.stats.why[PT_UNW_WHY_RBP_RULE], t.stats.why[PT_UNW_WHY_RBP_RANGE]);
	pt_cfi_free(&t);
	re_free(&re);
}

/* The fixture, compiled now in several flavors into dir. */
static int compile_fixture(const char *dir, const char *name, const char *flags, char *out,
			   size_t outsz)
{
	const char *src = "tests/unit/cfi_fixtures/frames.c";
	char cmd[PATH_MAX * 2 + 256];

	if (access(src, R_OK))
		return -ENOENT;
	snprintf(out, outsz, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc -O2 -fPIC -shared -nostdlib -fvisibility=hidden %s %s -o %s "
		 ">/dev/null 2>&1", flags, src, out);
	return system(cmd) == 0 ? 0 : -EIO;
}

static NOINLINE void test_fixtures(void)
{
	char dir[] = "/tmp/test_cfi.XXXXXX", path[PATH_MAX], cmd[PATH_MAX + 32];
	struct pt_unwind_table t;
	int err;

	if (!mkdtemp(dir)) {
		CHECK(0, "fixtures: mkdtemp: %s", strerror(errno));
		return;
	}
	if (compile_fixture(dir, "eh.so", "-g", path, sizeof(path)) == 0) {
		compare_with_readelf(path, "fixture .eh_frame", 1);
		err = pt_cfi_build(path, &t);
		CHECK(err == 0 && t.stats.why[PT_UNW_WHY_CFA_REG] && t.stats.why[PT_UNW_WHY_CFA_EXPR] &&
		      t.stats.why[PT_UNW_WHY_CFA_RANGE] && t.stats.why[PT_UNW_WHY_RBP_RULE],
		      "fixture .eh_frame: DRAP realignment and the 100 KB frame are unsupported rows "
		      "(cfa-reg %u, cfa-expr %u, cfa-range %u, rbp-rule %u)",
		      t.stats.why[PT_UNW_WHY_CFA_REG], t.stats.why[PT_UNW_WHY_CFA_EXPR],
		      t.stats.why[PT_UNW_WHY_CFA_RANGE], t.stats.why[PT_UNW_WHY_RBP_RULE]);
		pt_cfi_free(&t);
	} else {
		printf("ok - # SKIP fixtures: no C compiler or no tests/unit/cfi_fixtures (run from the repo root)\n");
		goto out;
	}
	if (compile_fixture(dir, "fp.so", "-fno-omit-frame-pointer", path, sizeof(path)) == 0)
		compare_with_readelf(path, "fixture -fno-omit-frame-pointer", 1);
	if (compile_fixture(dir, "dbg.so", "-g -fno-asynchronous-unwind-tables -fno-unwind-tables",
			    path, sizeof(path)) == 0) {
		compare_with_readelf(path, "fixture .debug_frame", 0);
		err = pt_cfi_build(path, &t);
		CHECK(err == 0 && t.stats.debug_frame, "fixture without .eh_frame: .debug_frame used");
		pt_cfi_free(&t);
	}
	if (compile_fixture(dir, "dbgz.so", "-g -gz -fno-asynchronous-unwind-tables -fno-unwind-tables",
			    path, sizeof(path)) == 0)
		compare_with_readelf(path, "fixture compressed .debug_frame", 0);
	if (compile_fixture(dir, "nocfi.so", "-fno-asynchronous-unwind-tables -fno-unwind-tables",
			    path, sizeof(path)) == 0) {
		err = pt_cfi_build(path, &t);
		CHECK(err == -ENOENT && t.nrows == 0, "fixture without any CFI: -ENOENT (got %d)", err);
	}
out:
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

/* ---- 3. a live unwind of this process ------------------------------------------------------- */

#define MAX_OBJS 8
#define MAX_FRAMES 64

struct live_obj {
	char path[PATH_MAX];
	uint64_t bias;
	struct pt_unwind_table t;
};

static struct live_obj objs[MAX_OBJS];
static int nobjs;

struct find_obj {
	uint64_t pc, bias;
	const char *name;
	int found;
};

static int find_obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_obj *fo = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && fo->pc >= lo && fo->pc < lo + ph->p_memsz) {
			fo->bias = info->dlpi_addr;
			fo->name = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
			fo->found = 1;
			return 1;
		}
	}
	return 0;
}

/* The table of the object containing pc (built on first use), and its load bias. */
static struct live_obj *obj_for(uint64_t pc)
{
	struct find_obj fo = { .pc = pc };
	int i;

	dl_iterate_phdr(find_obj_cb, &fo);
	if (!fo.found)
		return NULL;
	for (i = 0; i < nobjs; i++)
		if (!strcmp(objs[i].path, fo.name))
			return &objs[i];
	if (nobjs == MAX_OBJS)
		return NULL;
	snprintf(objs[nobjs].path, sizeof(objs[nobjs].path), "%s", fo.name);
	objs[nobjs].bias = fo.bias;
	if (pt_cfi_build(fo.name, &objs[nobjs].t))
		return NULL;
	return &objs[nobjs++];
}

struct live_walk {
	uint64_t pcs[MAX_FRAMES];
	int n;
	int stop;               /* kind of the row the walk stopped at, or -1 */
	void *bt[MAX_FRAMES];
	int nbt;
};

static struct live_walk walk;
static uintptr_t ra_f1, ra_f2, ra_f3, ra_main;
static uint64_t stack_lo, stack_hi;
static volatile int live_result;

/* What the BPF program will do, on our own stack: find the row, compute the CFA with
 * bpf/unwind.h, read the return address and maybe rbp, go up. */
static __attribute__((noinline)) void unwind_from(uint64_t pc, uint64_t sp, uint64_t bp)
{
	walk.n = 0;
	walk.stop = -1;
	walk.pcs[walk.n++] = pc;
	while (walk.n < MAX_FRAMES) {
		/* Return addresses point after the call: look up the call itself. */
		uint64_t lookup = walk.n == 1 ? pc : pc - 1;
		__u64 cfa;
		struct live_obj *o = obj_for(lookup);
		const struct pt_unwind_row *r = o ? pt_cfi_lookup(&o->t, lookup - o->bias) : NULL;

		if (!r) {
			walk.stop = PT_CFA_NONE;
			return;
		}
		if (pt_unwind_cfa(r, pc, sp, bp, &cfa)) {
			walk.stop = r->cfa_reg;
			return;
		}
		/* A wrong table must fail the test, not crash it. */
		if (cfa <= sp || cfa - 8 < stack_lo || cfa + 8 > stack_hi ||
		    (r->rbp_off8 && (cfa + 8 * (int64_t)r->rbp_off8 < stack_lo ||
				     cfa + 8 * (int64_t)r->rbp_off8 + 8 > stack_hi)))
			return;
		if (r->rbp_off8)
			bp = *(const uint64_t *)(uintptr_t)(cfa + 8 * (int64_t)r->rbp_off8);
		pc = *(const uint64_t *)(uintptr_t)(cfa - 8);
		sp = cfa;
		walk.pcs[walk.n++] = pc;
	}
}

#define CHAIN __attribute__((noipa, optimize("omit-frame-pointer")))

static CHAIN int f3(int x)
{
	uint64_t pc, sp, bp;

	ra_f3 = (uintptr_t)__builtin_return_address(0);
	/* rip (of the mov after the lea), rsp and rbp at one point in f3, where the CFI row
	 * at pc describes exactly this rsp. */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	unwind_from(pc, sp, bp);
	walk.nbt = backtrace(walk.bt, MAX_FRAMES);
	return x + 1;
}

/* A variable-length array makes GCC keep rbp as frame pointer here even with
 * -fomit-frame-pointer: f2's rows are CFA = rbp + 16, which only works if rbp survives f3. */
static CHAIN int f2(int n)
{
	volatile char buf[n];

	ra_f2 = (uintptr_t)__builtin_return_address(0);
	buf[0] = (char)n;
	buf[n - 1] = 1;
	return f3(buf[0] + buf[n - 1]) + 1;
}

static CHAIN int f1(int n)
{
	volatile long a = n, b = n * 2;

	ra_f1 = (uintptr_t)__builtin_return_address(0);
	return f2((int)(a + b) + 16) * 2 + (int)a;
}

static NOINLINE void check_live(void)
{
	struct pt_symbolizer *sym = pt_sym_new(getpid());
	static const char *const names[] = { "f3", "f2", "f1", "main", "__libc_start_call_main" };
	int i, k, same_bt = 1, nbt;
	const char *last = NULL;

	CHECK(walk.n >= 5, "live: unwound %d frames from f3", walk.n);
	CHECK(walk.stop == PT_CFA_END, "live: walk ended at the outermost frame (END), got %s",
	      walk.stop < 0 ? "a bad CFA" : pt_cfi_kind_str(walk.stop));
	CHECK(walk.n > 3 && walk.pcs[1] == ra_f3 && walk.pcs[2] == ra_f2 && walk.pcs[3] == ra_f1,
	      "live: frames 1-3 are __builtin_return_address of f3, f2, f1");
	CHECK(walk.n > 4 && walk.pcs[4] == ra_main, "live: frame 4 is main's return address");
	/* backtrace() unwinds with libgcc's DWARF unwinder: an independent walk of the same
	 * stack. Its first frames are inside backtrace's own machinery (one more under ASan's
	 * interceptor) and f3 after the call; ours start at the lea in f3. Align on frame 1. */
	nbt = walk.nbt;
	for (k = 0; k < nbt && walk.n > 1 && (uint64_t)(uintptr_t)walk.bt[k] != walk.pcs[1]; k++)
		;
	for (i = 1; i < walk.n; i++)
		if (k + i - 1 >= nbt || (uint64_t)(uintptr_t)walk.bt[k + i - 1] != walk.pcs[i])
			same_bt = 0;
	CHECK(same_bt && nbt - k + 1 == walk.n, "live: all %d frames above f3 equal glibc "
	      "backtrace()'s (%d frames from f2 on)", walk.n - 1, nbt - k);
	for (i = 0; sym && i < walk.n; i++) {
		struct pt_symres res;
		uint64_t a = i ? walk.pcs[i] - 1 : walk.pcs[i];

		if (pt_sym_resolve(sym, a, &res) == 0 && res.func)
			last = res.func;
		else
			last = "?";
		printf("#   frame %d: %#" PRIx64 " %s (%s)\n", i, walk.pcs[i], last,
		       res.module ? res.module : "?");
		if (i < (int)(sizeof(names) / sizeof(names[0])))
			CHECK_STR(last, names[i], "live: frame symbolizes");
	}
	CHECK_STR(last, "_start", "live: outermost frame");
	if (sym)
		pt_sym_free(sym);
}

/* ---- 4/6. files ------------------------------------------------------------------------------ */

static NOINLINE void test_files(void)
{
	struct pt_unwind_table t;
	char dir[] = "/tmp/test_cfi_files.XXXXXX", path[PATH_MAX], cmd[PATH_MAX * 3];
	struct timespec t0, t1;
	int err, i;

	err = pt_cfi_build("/nonexistent/libfoo.so", &t);
	CHECK(err == -ENOENT, "missing file: -ENOENT (got %d)", err);
	err = pt_cfi_build("/etc/hostname", &t);
	CHECK(err == -ENOEXEC, "not an ELF file: -ENOEXEC (got %d)", err);
	err = pt_cfi_build("/tmp", &t);
	CHECK(err < 0, "a directory: error %d", err);

	/* Build times (the table is rebuilt for every newly mapped object). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 5; i++) {
		err = pt_cfi_build("/lib/x86_64-linux-gnu/libc.so.6", &t);
		if (i < 4)
			pt_cfi_free(&t);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ok - built libc table: %u rows in %.2f ms (mean of 5)\n", err ? 0 : t.nrows,
	       ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6) / 5);
	if (!err)
		pt_cfi_free(&t);

	if (!mkdtemp(dir))
		return;
	/* Truncated copies of libc, and one claiming to be AArch64, then RISC-V. */
	{
		static const long cuts[] = { 10, 64, 4096, 100000, 1000000 };
		int fails = 0;

		for (i = 0; i < (int)(sizeof(cuts) / sizeof(cuts[0])); i++) {
			snprintf(path, sizeof(path), "%s/cut%d", dir, i);
			snprintf(cmd, sizeof(cmd), "head -c %ld /lib/x86_64-linux-gnu/libc.so.6 > %s",
				 cuts[i], path);
			if (system(cmd))
				continue;
			err = pt_cfi_build(path, &t);
			if (err == 0 && !table_sane(&t))
				fails++;
			if (err == 0)
				pt_cfi_free(&t);
			else if (t.nrows || t.rows)
				fails++;
		}
		CHECK(fails == 0, "truncated copies of libc: errors or sane tables, no crash");
		snprintf(path, sizeof(path), "%s/arm", dir);
		snprintf(cmd, sizeof(cmd), "cp /lib/x86_64-linux-gnu/libc.so.6 %s && "
			 "printf '\\267\\000' | dd of=%s bs=1 seek=18 conv=notrunc 2>/dev/null",
			 path, path);
		if (system(cmd) == 0) {
			/* Built by AArch64's rules (the machine comes from e_machine): x86-64's CIEs
			 * name return column 16, not 30, so nothing is mis-compiled into a rule:
			 * every FDE is a counted bad-cie row. */
			uint32_t rules = 0;

			err = pt_cfi_build(path, &t);
			for (i = 0; err == 0 && i < (int)t.nrows; i++)
				rules += (t.rows[i].cfa_reg & PT_CFA_KIND_MASK) != PT_CFA_NONE &&
					 (t.rows[i].cfa_reg != PT_CFA_UNSUPPORTED ||
					  t.rows[i].cfa_off != PT_UNW_WHY_BAD_CIE);
			CHECK(err == 0 && t.machine == EM_AARCH64 && rules == 0 &&
			      t.stats.why[PT_UNW_WHY_BAD_CIE] > 0,
			      "x86-64 libc labelled AArch64: AArch64 rules, %u bad-cie FDEs, no rule row "
			      "(err %d, %u rule rows)", t.stats.why[PT_UNW_WHY_BAD_CIE], err, rules);
			if (err == 0)
				pt_cfi_free(&t);
		}
		snprintf(cmd, sizeof(cmd), "printf '\\363\\000' | dd of=%s bs=1 seek=18 conv=notrunc "
			 "2>/dev/null", path);
		if (system(cmd) == 0) {
			err = pt_cfi_build(path, &t);
			CHECK(err == -EOPNOTSUPP && !t.nrows, "RISC-V ELF: -EOPNOTSUPP (got %d)", err);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	char self[PATH_MAX];
	ssize_t n;
	pthread_attr_t attr;
	void *lo;
	size_t sz;

	ra_main = (uintptr_t)__builtin_return_address(0);
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &lo, &sz);
		stack_lo = (uint64_t)(uintptr_t)lo;
		stack_hi = stack_lo + sz;
		pthread_attr_destroy(&attr);
	}
	/* The live walk first, while main's frame is the one this function set up. */
	live_result = f1(3);
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_prologues();
	test_plt_and_expressions();
	test_opcodes();
	test_encodings();
	test_eh_augmentation();
	test_debug_frame();
	test_malformed_entries();
	check_live();

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		compare_with_readelf(self, "test_cfi (this binary)", 1);
	}
	compare_with_readelf("/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", 1);
	compare_with_readelf("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++.so.6", 1);
	compare_with_readelf("/usr/bin/python3.11", "python3.11", 1);
	test_fixtures();
	test_files();
	test_fuzz();
	while (nobjs > 0)
		pt_cfi_free(&objs[--nobjs].t);
	return CHECK_DONE();
}

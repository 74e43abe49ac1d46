// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_cfi_a64 — AArch64 tables from the CFI compiler (user/unwind/cfi.c), on any host: the
 * machine comes from the ELF's e_machine (or struct pt_cfi_section.machine), not the build.
 *
 *  1. hand-encoded CIE/FDE bytes -> exact rows: the return address still in x30, at CFA - 8n,
 *     beside x29 in the frame record, out of the row's reach; CFA on sp or x29;
 *     DW_CFA_AARCH64_negate_ra_state taken on AArch64 and refused on x86-64;
 *  2. objects from aarch64-linux-gnu-gcc -O2 (tests/unit/cfi_fixtures/frames.c), with and
 *     without -mbranch-protection=standard and -fomit-frame-pointer, and the cross toolchain's
 *     libc, against aarch64-linux-gnu-readelf -wF (binutils' decoder, the independent truth):
 *     every row of every FDE at its first and last byte;
 *  3. the rows' arithmetic (bpf/unwind.h pt_unwind_a64_ra_at) on a made-up stack.
 *
 * Part 2 is skipped (said so) without the cross toolchain (make deps-arm64). Run from the
 * repository root.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "check.h"
#include "unwind/cfi.h"
#include "bpf/unwind.h"

#define NOINLINE __attribute__((noinline))
#define VADDR 0x10000u
#include "tests/unit/cfibytes.h"

/* ---- 1. hand-encoded CFI ------------------------------------------------------------------ */

/* GCC's AArch64 CIE: "zR", code 4, data -8, return column ra, pcrel|sdata4, CFA = sp + 0. */
static size_t cie_a64(struct bb *x, uint8_t ra)
{
	size_t at = entry_begin(x);

	u32(x, 0);
	u8(x, 1);
	put(x, "zR", 3);
	uleb(x, 4);
	sleb(x, -8);
	u8(x, ra);
	uleb(x, 1);
	u8(x, 0x1b);
	u8(x, 0x0c);    /* def_cfa sp, 0 */
	uleb(x, 31);
	uleb(x, 0);
	entry_end(x, at);
	return at;
}

static int build(const struct bb *x, uint16_t machine, struct pt_unwind_table *t)
{
	struct pt_cfi_section s = { .data = x->b, .size = x->n, .vaddr = VADDR, .machine = machine };

	return pt_cfi_build_mem(&s, t);
}

#define RA(n) ((uint8_t)((n) << PT_CFA_RA_SHIFT))
#define UNSAVED PT_CFA_A64_FP_UNSAVED
#define ROW(pc, reg, off, fp8) { VADDR + (pc), (off), (fp8), (reg) }
#define FDE(x, cie, pc, len) fde_begin(x, cie, VADDR + (pc), len)

static void check_rows(const char *name, const struct pt_unwind_table *t,
		       const struct pt_unwind_row *want, uint32_t n)
{
	int ok = t->nrows == n;

	for (uint32_t i = 0; ok && i < n; i++)
		ok = !memcmp(&t->rows[i], &want[i], sizeof(want[i]));
	CHECK(ok, "%s: %u rows as expected", name, n);
	if (!ok) {
		for (uint32_t i = 0; i < t->nrows || i < n; i++) {
			const struct pt_unwind_row *g = i < t->nrows ? &t->rows[i] : NULL;
			const struct pt_unwind_row *w = i < n ? &want[i] : NULL;

			printf("#   got pc=%#x kind=%u ra=%u off=%d fp8=%d; want pc=%#x kind=%u ra=%u "
			       "off=%d fp8=%d\n", g ? g->pc : 0, g ? g->cfa_reg & PT_CFA_KIND_MASK : 0,
			       g ? g->cfa_reg >> PT_CFA_RA_SHIFT : 0, g ? g->cfa_off : 0,
			       g ? g->rbp_off8 : 0, w ? w->pc : 0, w ? w->cfa_reg & PT_CFA_KIND_MASK : 0,
			       w ? w->cfa_reg >> PT_CFA_RA_SHIFT : 0, w ? w->cfa_off : 0,
			       w ? w->rbp_off8 : 0);
		}
	}
}

static NOINLINE void test_hand(void)
{
	struct pt_unwind_table t;
	struct bb x = { .n = 0 };
	size_t c, f;
	int err;

	/* A PAC-signed prologue and epilogue, as GCC writes them with -mbranch-protection:
	 *   0 paciasp               negate_ra_state
	 *   4 stp x29, x30, [sp, #-32]!   def_cfa_offset 32; offset x29 -32; offset x30 -24
	 *   8 mov x29, sp           def_cfa_register x29
	 *  12 ...                   remember_state
	 *  16 ldp x29, x30, [sp], #32    restore x30; restore x29; def_cfa sp, 0
	 *  20 autiasp               negate_ra_state
	 *  24 ret                   restore_state
	 *  28 (after it)  */
	c = cie_a64(&x, 30);
	f = FDE(&x, c, 0x100, 32);
	u8(&x, 0x2d);
	u8(&x, 0x41);                   /* advance 4 */
	u8(&x, 0x0e); uleb(&x, 32);
	u8(&x, 0x80 | 29); uleb(&x, 4);
	u8(&x, 0x80 | 30); uleb(&x, 3);
	u8(&x, 0x41);
	u8(&x, 0x0d); uleb(&x, 29);
	u8(&x, 0x42);                   /* to 16 */
	u8(&x, 0x0a);
	u8(&x, 0xc0 | 30);
	u8(&x, 0xc0 | 29);
	u8(&x, 0x0c); uleb(&x, 31); uleb(&x, 0);
	u8(&x, 0x41);                   /* 20 */
	u8(&x, 0x2d);
	u8(&x, 0x41);                   /* 24 */
	u8(&x, 0x0b);
	entry_end(&x, f);
	/* x30 saved alone below the CFA (str x30, [sp, #-16]!), then 256 bytes from both the CFA
	 * and sp: out of the row's reach. */
	f = FDE(&x, c, 0x200, 12);
	u8(&x, 0x41);
	u8(&x, 0x0e); uleb(&x, 16);
	u8(&x, 0x80 | 30); uleb(&x, 2);
	u8(&x, 0x41);
	u8(&x, 0x0e); uleb(&x, 512);
	u8(&x, 0x80 | 30); uleb(&x, 32);
	entry_end(&x, f);
	/* A frame record far from both the CFA and sp: x30 beside x29 at CFA - 1040 = sp + 1008
	 * (neither slot form can say it, the frame-record form can), then x29 at CFA - 16 =
	 * sp + 2032, beyond s8 * 8 from sp (x30 at CFA - 8 is fine). */
	f = FDE(&x, c, 0x300, 12);
	u8(&x, 0x41);
	u8(&x, 0x0e); uleb(&x, 2048);
	u8(&x, 0x80 | 29); uleb(&x, 131);
	u8(&x, 0x80 | 30); uleb(&x, 130);
	u8(&x, 0x41);
	u8(&x, 0x80 | 29); uleb(&x, 2);
	u8(&x, 0x80 | 30); uleb(&x, 1);
	entry_end(&x, f);
	err = build(&x, EM_AARCH64, &t);
	CHECK(err == 0 && t.machine == EM_AARCH64, "AArch64 section built (err %d)", err);
	if (!err) {
		static const struct pt_unwind_row want[] = {
			/* x29 from the CFA's base (sp, x29): at sp + 0, x29 + 0. */
			ROW(0x100, PT_CFA_RSP | RA(PT_CFA_RA_IN_LR), 0, UNSAVED),
			ROW(0x104, PT_CFA_RSP | RA(3), 32, 0),
			ROW(0x108, PT_CFA_RBP | RA(3), 32, 0),
			ROW(0x110, PT_CFA_RSP | RA(PT_CFA_RA_IN_LR), 0, UNSAVED),
			ROW(0x118, PT_CFA_RBP | RA(3), 32, 0),
			ROW(0x120, PT_CFA_NONE, 0, 0),
			ROW(0x200, PT_CFA_RSP | RA(PT_CFA_RA_IN_LR), 0, UNSAVED),
			ROW(0x204, PT_CFA_RSP | RA(2), 16, UNSAVED),
			ROW(0x208, PT_CFA_UNSUPPORTED, PT_UNW_WHY_RA_RULE, 0),
			ROW(0x20c, PT_CFA_NONE, 0, 0),
			ROW(0x300, PT_CFA_RSP | RA(PT_CFA_RA_IN_LR), 0, UNSAVED),
			ROW(0x304, PT_CFA_RSP | RA(PT_CFA_RA_AT_FP), 2048, 125),
			ROW(0x308, PT_CFA_UNSUPPORTED, PT_UNW_WHY_RBP_RANGE, 0),
			ROW(0x30c, PT_CFA_NONE, 0, 0),
		};

		check_rows("signed prologue/epilogue, x30 alone, far frame record", &t, want,
			   sizeof(want) / sizeof(want[0]));
		CHECK(t.stats.why[PT_UNW_WHY_BAD_FDE] == 0 && t.stats.why[PT_UNW_WHY_RA_RULE] == 1 &&
		      t.stats.why[PT_UNW_WHY_RBP_RANGE] == 1,
		      "negate_ra_state taken; what the rows cannot say is counted (ra %u, x29 range %u)",
		      t.stats.why[PT_UNW_WHY_RA_RULE], t.stats.why[PT_UNW_WHY_RBP_RANGE]);
		pt_cfi_free(&t);
	}
	/* The same bytes as x86-64's: column 30 is not its return column (bad CIE, counted). */
	err = build(&x, EM_X86_64, &t);
	CHECK(err == 0 && t.machine == EM_X86_64 && t.stats.why[PT_UNW_WHY_BAD_CIE] == 3,
	      "the same section as x86-64: every FDE a bad-cie row (%u)",
	      t.stats.why[PT_UNW_WHY_BAD_CIE]);
	if (!err)
		pt_cfi_free(&t);
	/* And 0x2d in an x86-64 FDE (return column 16): DW_CFA_GNU_window_save, refused. */
	x.n = 0;
	c = cie_a64(&x, 16);
	f = FDE(&x, c, 0x100, 8);
	u8(&x, 0x2d);
	entry_end(&x, f);
	err = build(&x, EM_X86_64, &t);
	CHECK(err == 0 && t.stats.why[PT_UNW_WHY_BAD_FDE] == 1,
	      "0x2d on x86-64: a bad-fde row (%u)", t.stats.why[PT_UNW_WHY_BAD_FDE]);
	if (!err)
		pt_cfi_free(&t);
	err = build(&x, EM_RISCV, &t);
	CHECK(err == -EOPNOTSUPP && !t.nrows, "a machine it does not know: -EOPNOTSUPP (%d)", err);
}

/* ---- 2. aarch64-linux-gnu-readelf as the judge --------------------------------------------- */

struct re_row {
	uint64_t loc;
	char cfa[32], fp[16], ra[16];
};

/* What readelf's row says the AArch64 row must be, by cfi.c's precedence (END > CFA rule >
 * return-address rule > x29 rule). readelf prints "u" for a column no rule mentioned yet: for
 * x30 that is "still in x30" (the objects have no DW_CFA_undefined; their _start would). */
static struct pt_unwind_row re_expect(const struct re_row *r)
{
	struct pt_unwind_row w = { 0 };
	struct pt_unwind_row uns = { 0, 0, 0, PT_CFA_UNSUPPORTED };
	long off, fpoff = 0, raoff;
	int ra, fp_saved = 0;
	char *end;

	if (!strncmp(r->cfa, "sp+", 3) || !strncmp(r->cfa, "x29+", 4)) {
		off = strtol(strchr(r->cfa, '+') + 1, &end, 10);
		if (*end || off > INT16_MAX)
			return uns;
		w.cfa_reg = r->cfa[0] == 's' ? PT_CFA_RSP : PT_CFA_RBP;
		w.cfa_off = (int16_t)off;
	} else {
		return uns;
	}
	if (r->fp[0] == 'c') {
		fpoff = strtol(r->fp + 1, &end, 10);
		fp_saved = !*end;
	}
	if (!r->ra[0] || !strcmp(r->ra, "u")) {
		ra = PT_CFA_RA_IN_LR;
	} else if (r->ra[0] == 'c') {
		raoff = strtol(r->ra + 1, &end, 10);
		if (*end)
			return uns;
		if (raoff < 0 && raoff % 8 == 0 && -raoff / 8 <= PT_CFA_RA_CFA_MAX)
			ra = (int)(-raoff / 8);
		else if ((w.cfa_off + raoff) % 8 == 0 && w.cfa_off + raoff >= 0 &&
			 (w.cfa_off + raoff) / 8 <= PT_CFA_RA_BASE_MAX - PT_CFA_RA_BASE0)
			ra = PT_CFA_RA_BASE0 + (int)((w.cfa_off + raoff) / 8);
		else if (fp_saved && raoff == fpoff + 8)
			ra = PT_CFA_RA_AT_FP;
		else
			return uns;
	} else {
		return uns;
	}
	/* x29's slot from the CFA's base register: CFA - fpoff = base + (off - fpoff). */
	if (fp_saved) {
		long at = w.cfa_off + fpoff;    /* fpoff: readelf's c-N, negative */

		if (at % 8 || at / 8 <= PT_CFA_A64_FP_UNSAVED || at / 8 > INT8_MAX)
			return uns;
		w.rbp_off8 = (int8_t)(at / 8);
	} else if (r->fp[0] && strcmp(r->fp, "u") && strcmp(r->fp, "s")) {
		return uns;
	} else {
		w.rbp_off8 = PT_CFA_A64_FP_UNSAVED;
	}
	if (ra == PT_CFA_RA_AT_FP && !fp_saved)
		return uns;
	w.cfa_reg |= RA(ra);
	return w;
}

struct agree {
	uint64_t checks, ok, in_lr, slot, at_fp, x29_cfa, unsupported, end, bad_cie;
	int shown;
	int cie_ra;     /* the return column of the CIE of the FDE being checked */
};

static void agree_at(struct agree *a, const struct pt_unwind_table *t, uint64_t pc,
		     const struct re_row *r, const char *label)
{
	const struct pt_unwind_row *got = pt_cfi_lookup(t, pc);
	struct pt_unwind_row w = re_expect(r);
	int ok;

	a->checks++;
	if (a->cie_ra != 30)
		w.cfa_reg = PT_CFA_UNSUPPORTED;        /* not x30's column: a bad CIE */
	if (!got)
		ok = 0;
	else if (!strcmp(r->ra, "u") && got->cfa_reg == PT_CFA_END)
		/* readelf prints "u" for DW_CFA_undefined x30 (the outermost frame: END) and
		 * for a column not mentioned yet (still in x30) alike. */
		ok = 1;
	else if (w.cfa_reg == PT_CFA_UNSUPPORTED)
		ok = got->cfa_reg == PT_CFA_UNSUPPORTED;
	else
		ok = got->cfa_reg == w.cfa_reg && got->cfa_off == w.cfa_off &&
		     got->rbp_off8 == w.rbp_off8;
	if (ok) {
		unsigned int ra = got->cfa_reg >> PT_CFA_RA_SHIFT;

		a->ok++;
		if (got->cfa_reg == PT_CFA_END)
			a->end++;
		else if (got->cfa_reg == PT_CFA_UNSUPPORTED && a->cie_ra != 30)
			a->bad_cie++;
		else if (got->cfa_reg == PT_CFA_UNSUPPORTED)
			a->unsupported++;
		else if (ra == PT_CFA_RA_IN_LR)
			a->in_lr++;
		else if (ra == PT_CFA_RA_AT_FP)
			a->at_fp++;
		else
			a->slot++;
		if ((got->cfa_reg & PT_CFA_KIND_MASK) == PT_CFA_RBP)
			a->x29_cfa++;
	} else if (a->shown++ < 10) {
		printf("# %s: at %#" PRIx64 " readelf: CFA %s x29 %s ra %s; table: kind %u ra %u "
		       "off %d x29 %d\n", label, pc, r->cfa, r->fp[0] ? r->fp : "-",
		       r->ra[0] ? r->ra : "-", got ? got->cfa_reg & PT_CFA_KIND_MASK : 99,
		       got ? got->cfa_reg >> PT_CFA_RA_SHIFT : 99, got ? got->cfa_off : 0,
		       got ? got->rbp_off8 : 0);
	}
}

/* Every FDE's rows from `aarch64-linux-gnu-readelf -wF`, each checked at its first and last
 * byte (FDEs readelf prints without rows hold the CIE's sp+0 with x30 in place). */
static NOINLINE void compare_with_readelf(const char *path, const char *label, int want_pac)
{
	char cmd[PATH_MAX + 128], line[4096];
	struct pt_unwind_table t;
	struct agree a = { 0 };
	struct re_row rows[256], init = { 0, "sp+0", "", "u" };
	uint64_t fstart = 0, fend = 0, fdes = 0, pac_ops = 0;
	int nrows = 0, cols[64] = { 0 }, ncols = 0, in_fde = 0, err, ncies = 0;
	static struct {
		uint64_t off;
		int ra;
	} cies[64];
	FILE *fp;

	err = pt_cfi_build(path, &t);
	CHECK(err == 0 && t.machine == EM_AARCH64, "%s: AArch64 table built (err %d)", label, err);
	if (err)
		return;
	/* The raw instructions, for the signing state: the PAC flavours must exercise it. */
	snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-readelf -wf '%s' 2>/dev/null | "
		 "grep -c -E 'negate_ra_state|window_save'", path);
	fp = popen(cmd, "r");
	if (fp && fgets(line, sizeof(line), fp))
		pac_ops = strtoull(line, NULL, 10);
	if (fp)
		pclose(fp);
	snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-readelf -wF '%s' 2>/dev/null", path);
	fp = popen(cmd, "r");
	if (!fp) {
		pt_cfi_free(&t);
		return;
	}
	/* One more line than the file has: the last FDE's rows are checked at the end. */
	for (int last = 0; !last;) {
		char *tok[64], *save = NULL, *s;
		int ntok = 0;

		if (!fgets(line, sizeof(line), fp)) {
			last = 1;
			line[0] = 0;
		}
		for (s = strtok_r(line, " \t\n", &save); s && ntok < 64; s = strtok_r(NULL, " \t\n", &save))
			tok[ntok++] = s;
		if (last || (ntok >= 4 && (!strcmp(tok[3], "FDE") || !strcmp(tok[3], "CIE")))) {
			/* The previous FDE's rows, each to the next (or the FDE's end). */
			if (in_fde && fend > fstart) {
				if (!nrows) {
					agree_at(&a, &t, fstart, &init, label);
					agree_at(&a, &t, fend - 1, &init, label);
				}
				for (int k = 0; k < nrows; k++) {
					uint64_t next = k + 1 < nrows ? rows[k + 1].loc : fend;

					if (next == rows[k].loc || rows[k].loc >= fend)
						continue;
					agree_at(&a, &t, rows[k].loc, &rows[k], label);
					agree_at(&a, &t, (next > fend ? fend : next) - 1, &rows[k], label);
				}
			}
			in_fde = ntok >= 6 && !strcmp(tok[3], "FDE");
			nrows = 0;
			if (!last && !strcmp(tok[3], "CIE") && ncies < 64) {
				/* 00000000 ... CIE "zR" cf=4 df=-8 ra=30 */
				cies[ncies].off = strtoull(tok[0], NULL, 16);
				cies[ncies].ra = -1;
				for (int i = 4; i < ntok; i++)
					if (!strncmp(tok[i], "ra=", 3))
						cies[ncies].ra = atoi(tok[i] + 3);
				ncies++;
			}
			if (in_fde) {
				uint64_t cie = strtoull(tok[4] + 4, NULL, 16);      /* cie=X */
				char *dots;

				a.cie_ra = -1;
				for (int i = 0; i < ncies; i++)
					if (cies[i].off == cie)
						a.cie_ra = cies[i].ra;
				fdes++;
				fstart = strtoull(tok[5] + 3, &dots, 16);
				fend = strtoull(dots + 2, NULL, 16);
			}
			continue;
		}
		if (ntok && !strcmp(tok[0], "LOC")) {
			ncols = ntok;
			for (int i = 0; i < ntok && i < 64; i++)
				cols[i] = !strcmp(tok[i], "x29") ? 1 : !strcmp(tok[i], "ra") ? 2 : 0;
			continue;
		}
		if (in_fde && ntok == ncols && ntok >= 2 && strlen(tok[0]) == 16 && nrows < 256) {
			struct re_row *r = &rows[nrows++];

			memset(r, 0, sizeof(*r));
			r->loc = strtoull(tok[0], NULL, 16);
			snprintf(r->cfa, sizeof(r->cfa), "%s", tok[1]);
			for (int i = 2; i < ntok; i++) {
				if (cols[i] == 1)
					snprintf(r->fp, sizeof(r->fp), "%s", tok[i]);
				else if (cols[i] == 2)
					snprintf(r->ra, sizeof(r->ra), "%s", tok[i]);
			}
		}
	}
	pclose(fp);
	CHECK(fdes == t.stats.fdes && a.checks > 0 && a.ok == a.checks,
	      "%s: %" PRIu64 "/%" PRIu64 " lookups agree with readelf over %" PRIu64 " FDEs (ra in "
	      "x30 %" PRIu64 ", at CFA-8n %" PRIu64 ", beside x29 %" PRIu64 ", CFA on x29 %" PRIu64
	      ", end %" PRIu64 ", unsupported %" PRIu64 ", other return column %" PRIu64 ")", label,
	      a.ok, a.checks, fdes, a.in_lr, a.slot, a.at_fp, a.x29_cfa, a.end, a.unsupported,
	      a.bad_cie);
	CHECK(!want_pac || (pac_ops > 0 && t.stats.why[PT_UNW_WHY_BAD_FDE] == 0),
	      "%s: %" PRIu64 " negate_ra_state instructions, %u bad FDEs; %u rows, %u unsupported "
	      "[ra %u, x29 range %u, cfa-expr %u]", label, pac_ops, t.stats.why[PT_UNW_WHY_BAD_FDE],
	      t.nrows, t.stats.unsupported_rows, t.stats.why[PT_UNW_WHY_RA_RULE],
	      t.stats.why[PT_UNW_WHY_RBP_RANGE], t.stats.why[PT_UNW_WHY_CFA_EXPR]);
	pt_cfi_free(&t);
}

static NOINLINE void test_objects(void)
{
	static const struct {
		const char *name, *flags;
		int pac;
	} fl[] = {
		{ "fp.so", "-fno-omit-frame-pointer", 0 },
		{ "nofp.so", "-fomit-frame-pointer", 0 },
		{ "fp-pac.so", "-fno-omit-frame-pointer -mbranch-protection=standard", 1 },
		{ "nofp-pac.so", "-fomit-frame-pointer -mbranch-protection=standard", 1 },
	};
	char dir[] = "/tmp/test_cfi_a64.XXXXXX", path[PATH_MAX], cmd[PATH_MAX * 2 + 256];
	const char *libc = "/usr/aarch64-linux-gnu/lib/libc.so.6";

	if (system("aarch64-linux-gnu-gcc --version >/dev/null 2>&1 && "
		   "aarch64-linux-gnu-readelf --version >/dev/null 2>&1")) {
		printf("ok - # SKIP AArch64 objects: no aarch64-linux-gnu-gcc/readelf (make deps-arm64)\n");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fl[i].name);
		snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-gcc -O2 -fPIC -shared -nostdlib "
			 "-fvisibility=hidden %s tests/unit/cfi_fixtures/frames.c -o %s >/dev/null 2>&1",
			 fl[i].flags, path);
		if (system(cmd)) {
			CHECK(0, "aarch64-linux-gnu-gcc %s: compiled", fl[i].flags);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "aarch64 -O2 %s", fl[i].flags);
		compare_with_readelf(path, cmd, fl[i].pac);
	}
	if (access(libc, R_OK) == 0)
		compare_with_readelf(libc, "the cross toolchain's libc.so.6", 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

/* ---- 3. the rows' arithmetic ---------------------------------------------------------------- */

static NOINLINE void test_ra_at(void)
{
	uint64_t cfa = 0x7ffff000;

	CHECK(pt_unwind_a64_ra_at(RA(3), 32, 0, cfa) == cfa - 24, "slot 3: CFA - 24");
	CHECK(pt_unwind_a64_ra_at(PT_CFA_RSP | RA(PT_CFA_RA_AT_FP), 4128, 0, cfa) == cfa - 4120 &&
	      pt_unwind_a64_fp_at(4128, 0, cfa) == cfa - 4128,
	      "a 4 KiB frame's record at sp: x29 at CFA - 4128, x30 at CFA - 4120");
	CHECK(pt_unwind_a64_ra_at(PT_CFA_RBP | RA(PT_CFA_RA_AT_FP), 16, 0, cfa) == cfa - 8,
	      "CFA = x29 + 16: x30 at x29 + 8");
	CHECK(pt_unwind_a64_ra_at(PT_CFA_RSP | RA(PT_CFA_RA_CFA_MAX), 0, UNSAVED, cfa) == cfa - 120 &&
	      pt_unwind_a64_fp_at(0, UNSAVED, cfa) == 0, "the last CFA slot: CFA - 120; x29 not saved");
	CHECK(pt_unwind_a64_ra_at(PT_CFA_RSP | RA(PT_CFA_RA_BASE0 + 2), 4128, UNSAVED, cfa) ==
	      cfa - 4112, "x30 alone at sp + 16 in a 4 KiB frame (str x30, [sp, #16]): CFA - 4112");
}

int main(void)
{
	test_hand();
	test_objects();
	test_ra_at();
	return CHECK_DONE();
}

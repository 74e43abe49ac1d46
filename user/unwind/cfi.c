// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfi.c — .eh_frame / .debug_frame CFI into pt_unwind_row tables (cfi.h, bpf/unwind.h).
 *
 * Three steps:
 *  1. Walk the section's entries. CIEs are parsed once and kept in section order (so an FDE
 *     finds its CIE by binary search); FDE headers are decoded into (start, end, program, CIE).
 *  2. Sort FDEs by start. The table must come out sorted, and each FDE must know where the
 *     next one starts: an FDE reaching into the next is cut there (counted), and an FDE
 *     followed by a gap is closed with a PT_CFA_NONE row.
 *  3. Run each FDE's CFA program, after its CIE's initial instructions, turning every state
 *     into a row; rows are merged with their equal neighbour as they are appended.
 *
 * The bytes come from files of other processes, so nothing is trusted: every read goes
 * through struct rd, whose sticky `bad` flag turns an overrun into "this entry is malformed"
 * rather than a read past the section. A malformed FDE costs only its own range (one
 * UNSUPPORTED row); a malformed entry length ends the walk (stats.truncated).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "unwind/cfi.h"
#include "util/elfutil.h"
#include "util/leb128.h"
#include "util/sha256.h"

/* DW_EH_PE_* pointer encodings (LSB "Exception Frames"): low nibble = format, bits 4-6 =
 * what the value is relative to, bit 7 = the value is the address of the real value.
 * Own names: <dwarf.h> (libdw-dev) is not a build dependency. */
#define EH_PE_absptr 0x00
#define EH_PE_uleb128 0x01
#define EH_PE_udata2 0x02
#define EH_PE_udata4 0x03
#define EH_PE_udata8 0x04
#define EH_PE_sleb128 0x09
#define EH_PE_sdata2 0x0a
#define EH_PE_sdata4 0x0b
#define EH_PE_sdata8 0x0c
#define EH_PE_pcrel 0x10
#define EH_PE_datarel 0x30
#define EH_PE_aligned 0x50
#define EH_PE_indirect 0x80
#define EH_PE_omit 0xff

/* DWARF CFA opcodes (DWARF 5 §6.4.2, plus the GNU ones GCC emits). */
#define CFA_advance_loc 0x40    /* high 2 bits; delta in the low 6 */
#define CFA_offset 0x80         /* high 2 bits; register in the low 6 */
#define CFA_restore 0xc0        /* high 2 bits; register in the low 6 */
#define CFA_nop 0x00
#define CFA_set_loc 0x01
#define CFA_advance_loc1 0x02
#define CFA_advance_loc2 0x03
#define CFA_advance_loc4 0x04
#define CFA_offset_extended 0x05
#define CFA_restore_extended 0x06
#define CFA_undefined 0x07
#define CFA_same_value 0x08
#define CFA_register 0x09
#define CFA_remember_state 0x0a
#define CFA_restore_state 0x0b
#define CFA_def_cfa 0x0c
#define CFA_def_cfa_register 0x0d
#define CFA_def_cfa_offset 0x0e
#define CFA_def_cfa_expression 0x0f
#define CFA_expression 0x10
#define CFA_offset_extended_sf 0x11
#define CFA_def_cfa_sf 0x12
#define CFA_def_cfa_offset_sf 0x13
#define CFA_val_offset 0x14
#define CFA_val_offset_sf 0x15
#define CFA_val_expression 0x16
#define CFA_GNU_args_size 0x2e
#define CFA_GNU_negative_offset_extended 0x2f

/* DW_CFA_AARCH64_negate_ra_state (DW_CFA_GNU_window_save's number, SPARC's meaning elsewhere). */
#define CFA_AARCH64_negate_ra_state 0x2d

/*
 * What differs between the machines a table is built for (chosen by the ELF's e_machine): the
 * DWARF numbers of the stack pointer, of the frame pointer the rows track (the only callee-
 * saved register a later CFA can be based on) and of the return-address column, and how the
 * return address's rule is expressed in a row (bpf/unwind.h).
 *  - x86-64 (psABI): rsp 7, rbp 6, column 16 always at CFA - 8 (the call pushed it: any other
 *    rule is unsupported), and binutils' .plt expression.
 *  - AArch64 (aadwarf64): sp 31, x29 29, column 30 (x30) saved at CFA + k or still in x30
 *    (the CIE's default: a bl pushes nothing), encoded in the row's high cfa_reg bits;
 *    DW_CFA_AARCH64_negate_ra_state taken and ignored (the BPF side strips every return
 *    address, signed or not); no .plt expression (AArch64's stubs have no CFI).
 */
struct cfi_machine {
	uint16_t e_machine;
	uint64_t sp, fp, ra;    /* DWARF register numbers */
	uint8_t ra_at_cfa_m8;   /* the return address is always at CFA - 8 (x86-64) */
	uint8_t plt_expr;       /* binutils' x86-64 .plt CFA expression is understood */
	uint8_t negate_ra;      /* DW_CFA_AARCH64_negate_ra_state is an instruction here */
	uint8_t fp_from_base;   /* the frame pointer's slot counts from the CFA's base register
				 * (AArch64), not from the CFA (x86-64) */
};

static const struct cfi_machine cfi_x86_64 = { EM_X86_64, 7, 6, 16, 1, 1, 0, 0 };
static const struct cfi_machine cfi_aarch64 = { EM_AARCH64, 31, 29, 30, 0, 0, 1, 1 };

/* The description for an ELF e_machine (0: x86-64, the default of struct pt_cfi_section), or
 * NULL for a machine this builder does not know. */
static const struct cfi_machine *cfi_machine_of(uint16_t e_machine)
{
	if (e_machine == 0 || e_machine == EM_X86_64)
		return &cfi_x86_64;
	if (e_machine == EM_AARCH64)
		return &cfi_aarch64;
	return NULL;
}

/* DW_CFA_remember_state nesting. GCC uses one level per epilogue; 32 is far beyond what a
 * compiler emits and keeps the interpreter's state on the stack (~2 KiB). */
#define CFI_STATE_STACK 32

/* ---- bounds-checked reader --------------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	int bad;                /* sticky: a read ran past end; every later read returns 0 */
};

static uint64_t rd_fixed(struct rd *r, unsigned int n)
{
	uint64_t v = 0;
	unsigned int i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	/* x86-64 and AArch64 files are little-endian; ELFCLASS64 and ELFDATA2LSB are checked
	 * before we get here. */
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint8_t rd_u8(struct rd *r)
{
	return (uint8_t)rd_fixed(r, 1);
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = pt_uleb128(&r->p, r->end, &r->bad);

	if (r->bad)
		r->p = r->end;
	return v;
}

static int64_t rd_sleb(struct rd *r)
{
	int64_t v = pt_sleb128(&r->p, r->end, &r->bad);

	if (r->bad)
		r->p = r->end;
	return v;
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return;
	}
	r->p += n;
}

/* u * f with wrap-around instead of signed-overflow UB: only malformed input overflows, and
 * its result is then just another wrong offset, which ends up in an UNSUPPORTED row. */
static int64_t factored(uint64_t u, int64_t f)
{
	return (int64_t)(u * (uint64_t)f);
}

/*
 * One DW_EH_PE-encoded value at r->p in section s. deref: follow DW_EH_PE_indirect (FDE
 * addresses). The personality pointer in a CIE is only skipped, so it is never followed.
 * 0, -EINVAL (truncated, unknown format) or -EOPNOTSUPP (textrel/funcrel, which x86-64
 * toolchains never emit for CFI, or indirect without a way to read memory).
 */
static int rd_encoded(struct rd *r, const struct pt_cfi_section *s, uint8_t enc, int deref,
		      uint64_t *out)
{
	const uint8_t *base = s->data;
	uint64_t field, v;

	if (r->bad)
		return -EINVAL;
	field = s->vaddr + (uint64_t)(r->p - base);
	if ((enc & 0x70) == EH_PE_aligned) {
		/* Aligned to the address size in the address space, not in the buffer. */
		rd_skip(r, (8 - (field & 7)) & 7);
		field = (field + 7) & ~7ULL;
	}
	switch (enc & 0x0f) {
	case EH_PE_absptr:
		v = rd_fixed(r, 8);
		break;
	case EH_PE_uleb128:
		v = rd_uleb(r);
		break;
	case EH_PE_udata2:
		v = rd_fixed(r, 2);
		break;
	case EH_PE_udata4:
		v = rd_fixed(r, 4);
		break;
	case EH_PE_udata8:
	case EH_PE_sdata8:
		v = rd_fixed(r, 8);
		break;
	case EH_PE_sleb128:
		v = (uint64_t)rd_sleb(r);
		break;
	case EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2);
		break;
	case EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4);
		break;
	default:
		return -EINVAL;
	}
	if (r->bad)
		return -EINVAL;
	switch (enc & 0x70) {
	case EH_PE_absptr:
	case EH_PE_aligned:
		break;
	case EH_PE_pcrel:
		v += field;
		break;
	case EH_PE_datarel:
		v += s->datarel;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if ((enc & EH_PE_indirect) && deref) {
		if (!s->deref)
			return -EOPNOTSUPP;
		if (s->deref(s->deref_arg, v, &v))
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* ---- CIEs, FDEs and the interpreter state ------------------------------------------------- */

/* How a register (only the frame pointer and the return address are tracked) is recovered. */
enum rule_how {
	RULE_SAME = 0,          /* unchanged (also the default for a register never mentioned) */
	RULE_UNDEF,
	RULE_OFFSET,            /* saved at CFA + off */
	RULE_VAL_OFFSET,        /* value is CFA + off */
	RULE_REG,               /* in another register */
	RULE_EXPR,
	RULE_VAL_EXPR,
};

struct rule {
	uint8_t how;
	int64_t off;
};

struct cfa_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr; /* non-NULL: the CFA is this DWARF expression */
	uint64_t cfa_expr_len;
	struct rule fp, ra;     /* rbp or x29; the return-address column */
};

struct cie {
	size_t off;             /* section offset of the entry (what FDEs point to) */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t has_z;          /* FDEs carry an augmentation-data length */
	uint8_t usable;         /* its FDEs' headers can be decoded */
	uint8_t supported;      /* and their rules expressed: the machine's return column, sane
				 * program */
	const uint8_t *insns, *insns_end;
	struct cfa_state init;  /* after the initial instructions: what DW_CFA_restore restores */
};

struct fde {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
	size_t off;             /* section offset of the entry (.eh_frame_hdr cross-check) */
	uint32_t cie;           /* index into builder.cies */
	uint32_t seq;           /* section order: equal starts keep it, so sorting is stable */
	uint8_t skip;           /* empty or dropped: no rows */
};

struct interp;

struct builder {
	const struct pt_cfi_section *s;
	const struct cfi_machine *m;
	struct pt_unwind_table *t;
	struct interp *in;      /* one interpreter, reused: its state stack is ~2 KiB */
	uint32_t cap;
	struct cie *cies;
	uint32_t ncies, cies_cap;
	struct fde *fdes;
	uint32_t nfdes, fdes_cap;
};

struct interp {
	struct builder *b;
	const struct cie *cie;
	const struct cfa_state *init; /* DW_CFA_restore target */
	struct cfa_state st;
	struct cfa_state stack[CFI_STATE_STACK];
	int depth;
	uint64_t loc, end;      /* current pc; rows at or beyond end are not this FDE's */
	int emit;               /* 0 while running a CIE's initial instructions */
};

static int same_rule(const struct pt_unwind_row *a, const struct pt_unwind_row *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off && a->rbp_off8 == b->rbp_off8;
}

/* Append a row at pc, keeping the table sorted and minimal: a row at the pc of the last one
 * replaces it (a zero-length advance, or an FDE cut to nothing), and a row equal to the last
 * is not needed at all. */
static int push_row(struct builder *b, uint64_t pc, struct pt_unwind_row row)
{
	struct pt_unwind_table *t = b->t;

	row.pc = (uint32_t)pc;
	if (t->nrows) {
		struct pt_unwind_row *last = &t->rows[t->nrows - 1];

		/* Cannot happen with sorted, clipped FDEs; refuse rather than unsort. */
		if (pc < last->pc)
			return -EINVAL;
		if (pc == last->pc) {
			*last = row;
			if (t->nrows > 1 && same_rule(&t->rows[t->nrows - 2], last))
				t->nrows--;
			return 0;
		}
		if (same_rule(last, &row))
			return 0;
	}
	if (t->nrows == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 1024;
		struct pt_unwind_row *n;

		if (b->cap >= PT_UNWIND_MAX_ROWS)
			return -E2BIG;
		if (cap > PT_UNWIND_MAX_ROWS)
			cap = PT_UNWIND_MAX_ROWS;
		n = realloc(t->rows, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->rows = n;
		b->cap = cap;
	}
	t->rows[t->nrows++] = row;
	return 0;
}

static struct pt_unwind_row kind_row(uint8_t kind, int16_t off)
{
	struct pt_unwind_row r = { .cfa_reg = kind, .cfa_off = off };

	return r;
}

static struct pt_unwind_row unsup_row(int why)
{
	return kind_row(PT_CFA_UNSUPPORTED, (int16_t)why);
}

/*
 * The standard x86-64 lazy .plt CFA expression (binutils elf_x86_64_eh_frame_*plt):
 *   DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_litN;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. rsp + 8 + (((rip & 15) >= N) << 3). Returns N, or -1 for any other expression.
 */
static int plt_threshold(const uint8_t *e, uint64_t len)
{
	struct rd r = { e, e + len, 0 };
	int n;

	if (rd_u8(&r) != 0x77 || rd_sleb(&r) != 8)            /* breg7 8 */
		return -1;
	if (rd_u8(&r) != 0x80 || rd_sleb(&r) != 0)            /* breg16 0 */
		return -1;
	if (rd_u8(&r) != 0x3f || rd_u8(&r) != 0x1a)            /* lit15; and */
		return -1;
	n = rd_u8(&r);
	if (n == 0x08)                                         /* const1u N */
		n = rd_u8(&r);
	else if (n >= 0x30 && n <= 0x4f)                       /* litN */
		n -= 0x30;
	else
		return -1;
	if (rd_u8(&r) != 0x2a || rd_u8(&r) != 0x33)            /* ge; lit3 */
		return -1;
	if (rd_u8(&r) != 0x24 || rd_u8(&r) != 0x22)            /* shl; plus */
		return -1;
	if (r.bad || r.p != r.end || n < 1 || n > 15)
		return -1;
	return n;
}

/*
 * One interpreter state as a row. Precedence (tests/unit/test_cfi.c mirrors it when it
 * derives the expected row from readelf's table):
 *   unusable CIE > return address undefined (END) > CFA rule > return-address rule > rbp rule.
 * An undefined return address wins over everything else because it is the one thing the walker
 * needs to know there: stop, this is the outermost frame.
 */
/* AArch64: the return address's rule in the high bits of cfa_reg (bpf/unwind.h): still in
 * x30, at CFA - 8 * n, at the CFA's base register + 8 * n, or beside x29 in the frame record;
 * -1 when none says where it is. */
static int a64_ra_code(const struct cfa_state *st)
{
	int64_t off = st->ra.off, at = st->cfa_off + st->ra.off;

	if (st->ra.how == RULE_SAME)
		return PT_CFA_RA_IN_LR;
	if (st->ra.how != RULE_OFFSET)
		return -1;
	if (off < 0 && off % 8 == 0 && -off / 8 <= PT_CFA_RA_CFA_MAX)
		return (int)(-off / 8);
	if (at >= 0 && at % 8 == 0 && at / 8 <= PT_CFA_RA_BASE_MAX - PT_CFA_RA_BASE0)
		return PT_CFA_RA_BASE0 + (int)(at / 8);
	if (st->fp.how == RULE_OFFSET && off == st->fp.off + 8)
		return PT_CFA_RA_AT_FP;
	return -1;
}

static struct pt_unwind_row state_row(const struct cfi_machine *m, const struct cie *cie,
				      const struct cfa_state *st)
{
	struct pt_unwind_row row = { 0 };
	int ra = 0;

	if (!cie->supported)
		return unsup_row(PT_UNW_WHY_BAD_CIE);
	if (st->ra.how == RULE_UNDEF)
		return kind_row(PT_CFA_END, 0);
	if (st->cfa_expr) {
		int n = m->plt_expr ? plt_threshold(st->cfa_expr, st->cfa_expr_len) : -1;

		if (n < 0)
			return unsup_row(PT_UNW_WHY_CFA_EXPR);
		row.cfa_reg = PT_CFA_PLT;
		row.cfa_off = (int16_t)n;
	} else if (st->cfa_reg == m->sp || st->cfa_reg == m->fp) {
		if (st->cfa_off < INT16_MIN || st->cfa_off > INT16_MAX)
			return unsup_row(PT_UNW_WHY_CFA_RANGE);
		row.cfa_reg = st->cfa_reg == m->sp ? PT_CFA_RSP : PT_CFA_RBP;
		row.cfa_off = (int16_t)st->cfa_off;
	} else {
		return unsup_row(PT_UNW_WHY_CFA_REG);
	}
	if (m->ra_at_cfa_m8 && (st->ra.how != RULE_OFFSET || st->ra.off != PT_UNWIND_RA_OFF))
		return unsup_row(PT_UNW_WHY_RA_RULE);
	if (!m->ra_at_cfa_m8 && (ra = a64_ra_code(st)) < 0)
		return unsup_row(PT_UNW_WHY_RA_RULE);
	switch (st->fp.how) {
	case RULE_SAME:
	case RULE_UNDEF:
		/* Undefined rbp: the caller's value is lost, but nothing better than the current
		 * one is known either, and most frames never use it. Same as readelf's "u". */
		if (m->fp_from_base)
			row.rbp_off8 = PT_CFA_A64_FP_UNSAVED;
		break;
	case RULE_OFFSET: {
		/* x86-64: from the CFA. AArch64: from the CFA's base register (bpf/unwind.h). */
		int64_t at = m->fp_from_base ? st->cfa_off + st->fp.off : st->fp.off;

		if ((at == 0 && !m->fp_from_base) || at % 8 || at / 8 > INT8_MAX ||
		    at / 8 < (m->fp_from_base ? PT_CFA_A64_FP_UNSAVED + 1 : INT8_MIN))
			return unsup_row(PT_UNW_WHY_RBP_RANGE);
		row.rbp_off8 = (int8_t)(at / 8);
		break;
	}
	default:
		return unsup_row(PT_UNW_WHY_RBP_RULE);
	}
	/* The frame record's slot needs x29's (checked just above). */
	if (ra == PT_CFA_RA_AT_FP && m->fp_from_base && row.rbp_off8 == PT_CFA_A64_FP_UNSAVED)
		return unsup_row(PT_UNW_WHY_RBP_RANGE);
	row.cfa_reg |= (uint8_t)(ra << PT_CFA_RA_SHIFT);
	return row;
}

/* The state at in->loc holds until the next advance: make it a row (FDE programs only). */
static int emit_state(struct interp *in)
{
	struct pt_cfi_stats *stats = &in->b->t->stats;
	struct pt_unwind_row row;

	if (!in->emit || in->loc >= in->end)
		return 0;
	row = state_row(in->b->m, in->cie, &in->st);
	stats->rules++;
	if (row.cfa_reg == PT_CFA_UNSUPPORTED)
		stats->why[row.cfa_off]++;
	return push_row(in->b, in->loc, row);
}

static int advance(struct interp *in, uint64_t delta, uint64_t factor)
{
	uint64_t d;
	int err;

	err = emit_state(in);
	if (err)
		return err;
	if (__builtin_mul_overflow(delta, factor, &d) || d >= in->end - in->loc)
		in->loc = in->end;
	else
		in->loc += d;
	return 0;
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t how, int64_t off)
{
	struct rule r = { how, off };

	/* Only the frame pointer and the return address can matter to a later frame (see
	 * bpf/unwind.h). */
	if (reg == in->b->m->fp)
		in->st.fp = r;
	else if (reg == in->cie->ra_reg)
		in->st.ra = r;
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	if (reg == in->b->m->fp)
		in->st.fp = in->init->fp;
	else if (reg == in->cie->ra_reg)
		in->st.ra = in->init->ra;
}

/* Runs one CFA program. 0, or -EINVAL when it is malformed, or -ENOMEM/-E2BIG from the table. */
static int run_insns(struct interp *in, const uint8_t *p, const uint8_t *end)
{
	const struct cie *cie = in->cie;
	struct rd r = { p, end, 0 };
	uint64_t reg, u, len;
	int err = 0;

	while (r.p < r.end) {
		uint8_t op = rd_u8(&r);

		/* Past the end of this FDE's (possibly cut) range nothing can change its rows. */
		if (in->emit && in->loc >= in->end)
			return 0;
		switch (op & 0xc0) {
		case CFA_advance_loc:
			err = advance(in, op & 0x3f, cie->code_align);
			break;
		case CFA_offset:
			u = rd_uleb(&r);
			set_rule(in, op & 0x3f, RULE_OFFSET, factored(u, cie->data_align));
			break;
		case CFA_restore:
			restore_rule(in, op & 0x3f);
			break;
		default:
			switch (op) {
			case CFA_nop:
				break;
			case CFA_set_loc:
				err = rd_encoded(&r, in->b->s, cie->fde_enc, 1, &u);
				if (err)
					return -EINVAL;
				/* DWARF requires set_loc to move forward. */
				if (in->emit && u < in->loc)
					return -EINVAL;
				err = advance(in, u - in->loc, 1);
				break;
			case CFA_advance_loc1:
				err = advance(in, rd_fixed(&r, 1), cie->code_align);
				break;
			case CFA_advance_loc2:
				err = advance(in, rd_fixed(&r, 2), cie->code_align);
				break;
			case CFA_advance_loc4:
				err = advance(in, rd_fixed(&r, 4), cie->code_align);
				break;
			case CFA_offset_extended:
				reg = rd_uleb(&r);
				u = rd_uleb(&r);
				set_rule(in, reg, RULE_OFFSET, factored(u, cie->data_align));
				break;
			case CFA_restore_extended:
				restore_rule(in, rd_uleb(&r));
				break;
			case CFA_undefined:
				set_rule(in, rd_uleb(&r), RULE_UNDEF, 0);
				break;
			case CFA_same_value:
				set_rule(in, rd_uleb(&r), RULE_SAME, 0);
				break;
			case CFA_register:
				reg = rd_uleb(&r);
				u = rd_uleb(&r);
				set_rule(in, reg, RULE_REG, (int64_t)u);
				break;
			case CFA_remember_state:
				if (in->depth == CFI_STATE_STACK)
					return -EINVAL;
				/* The CFA rule is part of the saved state (GCC relies on it:
				 * remember; def_cfa_offset 8; ret; restore), as in libgcc. */
				in->stack[in->depth++] = in->st;
				break;
			case CFA_restore_state:
				if (!in->depth)
					return -EINVAL;
				in->st = in->stack[--in->depth];
				break;
			case CFA_def_cfa:
				in->st.cfa_reg = rd_uleb(&r);
				in->st.cfa_off = (int64_t)rd_uleb(&r);
				in->st.cfa_expr = NULL;
				break;
			case CFA_def_cfa_sf:
				in->st.cfa_reg = rd_uleb(&r);
				in->st.cfa_off = factored((uint64_t)rd_sleb(&r), cie->data_align);
				in->st.cfa_expr = NULL;
				break;
			case CFA_def_cfa_register:
				in->st.cfa_reg = rd_uleb(&r);
				in->st.cfa_expr = NULL;
				break;
			case CFA_def_cfa_offset:
				/* Keeps an expression CFA an expression, as libgcc and readelf do. */
				in->st.cfa_off = (int64_t)rd_uleb(&r);
				break;
			case CFA_def_cfa_offset_sf:
				in->st.cfa_off = factored((uint64_t)rd_sleb(&r), cie->data_align);
				break;
			case CFA_def_cfa_expression:
				len = rd_uleb(&r);
				in->st.cfa_expr = r.p;
				in->st.cfa_expr_len = len;
				rd_skip(&r, len);
				break;
			case CFA_expression:
			case CFA_val_expression:
				reg = rd_uleb(&r);
				rd_skip(&r, rd_uleb(&r));
				set_rule(in, reg, op == CFA_expression ? RULE_EXPR : RULE_VAL_EXPR, 0);
				break;
			case CFA_offset_extended_sf:
				reg = rd_uleb(&r);
				set_rule(in, reg, RULE_OFFSET,
					 factored((uint64_t)rd_sleb(&r), cie->data_align));
				break;
			case CFA_val_offset:
				reg = rd_uleb(&r);
				set_rule(in, reg, RULE_VAL_OFFSET, factored(rd_uleb(&r), cie->data_align));
				break;
			case CFA_val_offset_sf:
				reg = rd_uleb(&r);
				set_rule(in, reg, RULE_VAL_OFFSET,
					 factored((uint64_t)rd_sleb(&r), cie->data_align));
				break;
			case CFA_GNU_args_size:
				/* Outgoing arguments pushed: the CFA rules count them already. */
				rd_uleb(&r);
				break;
			case CFA_GNU_negative_offset_extended:
				reg = rd_uleb(&r);
				u = rd_uleb(&r);
				set_rule(in, reg, RULE_OFFSET, -factored(u, cie->data_align));
				break;
			case CFA_AARCH64_negate_ra_state:   /* x30 (un)signed: no move, PAC stripped */
				if (!in->b->m->negate_ra)
					return -EINVAL;
				break;
			default:
				/* DW_CFA_GNU_window_save (SPARC), vendor opcodes, garbage. */
				return -EINVAL;
			}
		}
		if (err)
			return err;
		if (r.bad)
			return -EINVAL;
	}
	return 0;
}

/* ---- section walk ------------------------------------------------------------------------ */

static int parse_cie(struct builder *b, struct cie *c, struct rd *r)
{
	const struct pt_cfi_section *s = b->s;
	const char *aug;
	const uint8_t *nul, *aug_end = NULL;
	uint8_t version;
	uint64_t u;

	version = rd_u8(r);
	if (r->bad || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	nul = memchr(r->p, 0, r->end - r->p);
	if (!nul)
		return -EINVAL;
	aug = (const char *)r->p;
	r->p = nul + 1;
	if (!strcmp(aug, "eh"))
		rd_skip(r, 8);  /* old GCC: exception table address, before the factors */
	if (version >= 4) {
		/* .debug_frame v4: address and segment selector sizes. */
		if (rd_u8(r) != 8 || rd_u8(r) != 0)
			return -EINVAL;
	}
	c->code_align = rd_uleb(r);
	c->data_align = rd_sleb(r);
	c->ra_reg = version == 1 ? rd_u8(r) : rd_uleb(r);
	c->fde_enc = EH_PE_absptr;
	if (aug[0] == 'z') {
		const char *a;
		struct rd ar;

		u = rd_uleb(r);
		if (r->bad || u > (uint64_t)(r->end - r->p))
			return -EINVAL;
		ar.p = r->p;
		ar.end = aug_end = r->p + u;
		ar.bad = 0;
		c->has_z = 1;
		for (a = aug + 1; *a; a++) {
			uint8_t enc;
			uint64_t ignored;

			switch (*a) {
			case 'R':       /* FDE address encoding */
				c->fde_enc = rd_u8(&ar);
				break;
			case 'P':       /* personality routine: encoding, then pointer (skipped) */
				enc = rd_u8(&ar);
				if (rd_encoded(&ar, s, enc, 0, &ignored))
					return -EINVAL;
				break;
			case 'L':       /* LSDA encoding; the LSDA pointer is in FDE augmentation data */
				rd_u8(&ar);
				break;
			case 'S':       /* signal frame. It would change the caller's lookup (pc, not
					 * pc - 1), but not kept: signal trampolines' CFA is an
					 * expression, so the walk stops there anyway. */
			case 'B':       /* AArch64 BTI, 'G' MTE: no data */
			case 'G':
				break;
			default:
				/* Unknown letters have unknown data, and an 'R' after one could not
				 * be found: the FDEs cannot be decoded reliably. */
				return -EINVAL;
			}
			if (ar.bad)
				return -EINVAL;
		}
		r->p = aug_end;
	} else if (aug[0] && strcmp(aug, "eh")) {
		return -EINVAL;
	}
	if (r->bad)
		return -EINVAL;
	c->insns = r->p;
	c->insns_end = r->end;
	c->usable = 1;
	return 0;
}

/* Run the CIE's initial instructions once; its FDEs start from (and restore to) the result. */
static void cie_init_state(struct builder *b, struct cie *c)
{
	static const struct cfa_state zero;
	struct interp *in = b->in;

	/* Only the machine's return column: anything else is not a frame this walker can climb. */
	if (c->ra_reg != b->m->ra)
		return;
	in->b = b;
	in->cie = c;
	in->init = &zero;
	in->st = zero;
	in->depth = 0;
	in->loc = 0;
	in->end = UINT64_MAX;
	in->emit = 0;
	if (run_insns(in, c->insns, c->insns_end) == 0) {
		c->init = in->st;
		c->supported = 1;
	}
}

static int add_cie(struct builder *b, struct cie **out)
{
	if (b->ncies == b->cies_cap) {
		uint32_t cap = b->cies_cap ? b->cies_cap * 2 : 8;
		struct cie *n = realloc(b->cies, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->cies = n;
		b->cies_cap = cap;
	}
	*out = &b->cies[b->ncies++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

static int add_fde(struct builder *b, struct fde **out)
{
	if (b->nfdes == b->fdes_cap) {
		uint32_t cap = b->fdes_cap ? b->fdes_cap * 2 : 256;
		struct fde *n;

		if (cap > (UINT32_MAX / 2) / sizeof(*n))
			return -E2BIG;
		n = realloc(b->fdes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->fdes = n;
		b->fdes_cap = cap;
	}
	*out = &b->fdes[b->nfdes++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

static struct cie *find_cie(struct builder *b, uint64_t off)
{
	uint32_t lo = 0, hi = b->ncies;

	/* CIEs were appended in section order, so they are sorted by offset. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->cies[mid].off == off)
			return &b->cies[mid];
		if (b->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Step 1: every entry of the section. FDE headers are decoded only after the walk, since in
 * .debug_frame an FDE may name a CIE that comes later. -ENOMEM/-E2BIG only; malformed entries
 * are counted.
 */
static int walk_section(struct builder *b)
{
	const struct pt_cfi_section *s = b->s;
	const uint8_t *base = s->data;
	struct pt_cfi_stats *st = &b->t->stats;
	size_t off = 0;
	int err;

	while (off < s->size) {
		struct rd r = { base + off, base + s->size, 0 };
		uint64_t len, id, hdr;
		int off64 = 0;

		len = rd_fixed(&r, 4);
		if (r.bad) {
			st->truncated = 1;
			break;
		}
		if (len == 0) {
			/* A terminator. Linkers leave one at the end; keep going past stray ones
			 * as readelf does (the unwinder's binary search finds FDEs there too). */
			off += 4;
			continue;
		}
		if (len == 0xffffffff) {
			len = rd_fixed(&r, 8);
			off64 = 1;
		} else if (len >= 0xfffffff0) {
			st->truncated = 1;      /* reserved lengths */
			break;
		}
		hdr = (uint64_t)(r.p - base);
		if (r.bad || len > s->size - hdr || len < (off64 ? 8u : 4u)) {
			st->truncated = 1;
			break;
		}
		r.end = base + hdr + len;
		id = rd_fixed(&r, off64 ? 8 : 4);
		if (s->debug_frame ? id == (off64 ? UINT64_MAX : 0xffffffffu) : id == 0) {
			struct cie *c;

			err = add_cie(b, &c);
			if (err)
				return err;
			c->off = off;
			st->cies++;
			if (parse_cie(b, c, &r) == 0)
				cie_init_state(b, c);
		} else {
			struct fde *f;

			err = add_fde(b, &f);
			if (err)
				return err;
			st->fdes++;
			f->off = off;
			f->seq = b->nfdes - 1;
			/* Borrow the fields until decode_fdes(): body and CIE offset. In .eh_frame
			 * the CIE pointer counts back from the pointer field itself. */
			f->insns = r.p;
			f->insns_end = r.end;
			if (s->debug_frame)
				f->start = id;
			else
				f->start = id <= hdr ? hdr - id : UINT64_MAX;
		}
		off = hdr + len;
	}
	return 0;
}

static int decode_fde(struct builder *b, struct fde *f)
{
	struct rd r = { f->insns, f->insns_end, 0 };
	struct cie *c = f->start == UINT64_MAX ? NULL : find_cie(b, f->start);
	uint64_t start, range;

	if (!c || !c->usable)
		return -EINVAL;
	if (rd_encoded(&r, b->s, c->fde_enc, 1, &start))
		return -EINVAL;
	/* The range is a length: same format, nothing to be relative to. */
	if (rd_encoded(&r, b->s, c->fde_enc & 0x0f, 0, &range))
		return -EINVAL;
	if (c->has_z)
		rd_skip(&r, rd_uleb(&r));
	if (r.bad)
		return -EINVAL;
	f->cie = (uint32_t)(c - b->cies);
	f->insns = r.p;
	f->start = start;
	if (!range) {
		b->t->stats.fdes_empty++;
		f->skip = 1;
		f->end = start;
		return 0;
	}
	/* Row pcs are __u32, including the NONE row that closes the FDE at its end. */
	if (start > UINT32_MAX || range > UINT32_MAX - start)
		return -ERANGE;
	f->end = start + range;
	return 0;
}

static int cmp_fde(const void *pa, const void *pb)
{
	const struct fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Step 3 for one FDE, its rows limited to [f->start, end). */
static int run_fde(struct builder *b, const struct fde *f, uint64_t end)
{
	struct pt_unwind_table *t = b->t;
	const struct cie *c = &b->cies[f->cie];
	struct pt_cfi_stats saved_stats = t->stats;
	struct pt_unwind_row saved_last = { 0 };
	uint32_t saved_n = t->nrows;
	struct interp *in = b->in;
	int err;

	if (!c->supported) {
		t->stats.rules++;
		t->stats.why[PT_UNW_WHY_BAD_CIE]++;
		return push_row(b, f->start, unsup_row(PT_UNW_WHY_BAD_CIE));
	}
	if (saved_n)
		saved_last = t->rows[saved_n - 1];
	in->b = b;
	in->cie = c;
	in->init = &c->init;
	in->st = c->init;
	in->depth = 0;
	in->loc = f->start;
	in->end = end;
	in->emit = 1;
	err = run_insns(in, f->insns, f->insns_end);
	if (!err)
		err = emit_state(in);
	if (err == -ENOMEM || err == -E2BIG)
		return err;
	if (err) {
		/* Undo the FDE's partial rows (push_row may have rewritten the last row before
		 * it) and cover its whole range with one row saying why. */
		t->nrows = saved_n;
		if (saved_n)
			t->rows[saved_n - 1] = saved_last;
		t->stats = saved_stats;
		t->stats.rules++;
		t->stats.why[PT_UNW_WHY_BAD_FDE]++;
		return push_row(b, f->start, unsup_row(PT_UNW_WHY_BAD_FDE));
	}
	return 0;
}

static int fde_at(const struct builder *b, uint64_t start, size_t off)
{
	uint32_t lo = 0, hi = b->nfdes;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->fdes[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->nfdes && b->fdes[lo].start == start; lo++)
		if (b->fdes[lo].off == off)
			return 1;
	return 0;
}

/*
 * Optional cross-check against .eh_frame_hdr, the binary-search table the linker built from
 * the same FDEs: it must point at our .eh_frame and each entry must name an FDE we parsed.
 * Only counted (stats.hdr_*); the table never depends on it.
 */
static void check_hdr(struct builder *b, const uint8_t *h, size_t n, uint64_t hvaddr)
{
	/* In .eh_frame_hdr, datarel is relative to the start of the header itself. */
	struct pt_cfi_section hs = { .data = h, .size = n, .vaddr = hvaddr, .datarel = hvaddr };
	struct pt_cfi_stats *st = &b->t->stats;
	struct rd r = { h, h + n, 0 };
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	uint64_t ptr, cnt, i;

	ver = rd_u8(&r);
	ptr_enc = rd_u8(&r);
	cnt_enc = rd_u8(&r);
	tab_enc = rd_u8(&r);
	if (r.bad || ver != 1 || ptr_enc == EH_PE_omit || cnt_enc == EH_PE_omit)
		return;
	if (rd_encoded(&r, &hs, ptr_enc, 0, &ptr) || ptr != b->s->vaddr)
		return;
	if (rd_encoded(&r, &hs, cnt_enc, 0, &cnt) || cnt > INT32_MAX)
		return;
	st->hdr_fdes = (int32_t)cnt;
	if (tab_enc == EH_PE_omit)
		return;
	for (i = 0; i < cnt; i++) {
		uint64_t loc, fde;

		if (rd_encoded(&r, &hs, tab_enc, 0, &loc) || rd_encoded(&r, &hs, tab_enc, 0, &fde))
			break;
		if (fde >= b->s->vaddr && fde_at(b, loc, fde - b->s->vaddr))
			st->hdr_matched++;
	}
}

static int build(struct builder *b, const uint8_t *hdr, size_t hdr_size, uint64_t hdr_vaddr)
{
	struct pt_unwind_table *t = b->t;
	uint64_t next;
	uint32_t i, j;
	int err;

	err = walk_section(b);
	if (err)
		return err;
	for (i = 0; i < b->nfdes; i++) {
		if (decode_fde(b, &b->fdes[i])) {
			t->stats.fdes_dropped++;
			b->fdes[i].skip = 1;
			/* Keep it out of the hdr cross-check and at the end of the sort. */
			b->fdes[i].start = b->fdes[i].end = UINT64_MAX;
		}
	}
	if (b->nfdes)
		qsort(b->fdes, b->nfdes, sizeof(*b->fdes), cmp_fde);
	if (hdr)
		check_hdr(b, hdr, hdr_size, hdr_vaddr);

	/* Each FDE needs the start of the next non-empty one: j looks ahead and only moves
	 * forward, so the pass stays linear. */
	for (i = 0, j = 0; i < b->nfdes; i++) {
		struct fde *f = &b->fdes[i];
		uint64_t end;

		if (f->skip)
			continue;
		if (j <= i)
			j = i + 1;
		while (j < b->nfdes && b->fdes[j].skip)
			j++;
		next = j < b->nfdes ? b->fdes[j].start : UINT64_MAX;
		end = f->end;
		if (next < end) {
			t->stats.fdes_overlap++;
			end = next;
		}
		err = run_fde(b, f, end);
		if (err)
			return err;
		/* Code after this FDE that no other FDE covers has no CFI. */
		if (next > f->end) {
			err = push_row(b, f->end, kind_row(PT_CFA_NONE, 0));
			if (err)
				return err;
		}
	}
	return 0;
}

static void finish_stats(struct pt_unwind_table *t)
{
	uint32_t i;

	t->stats.rows = t->nrows;
	for (i = 0; i < t->nrows; i++) {
		/* The kind: AArch64 rows keep the return address's rule above it. */
		switch (t->rows[i].cfa_reg & PT_CFA_KIND_MASK) {
		case PT_CFA_NONE:
			t->stats.none_rows++;
			break;
		case PT_CFA_END:
			t->stats.end_rows++;
			break;
		case PT_CFA_PLT:
			t->stats.plt_rows++;
			break;
		case PT_CFA_UNSUPPORTED:
			t->stats.unsupported_rows++;
			break;
		}
	}
}

static int build_sections(const struct pt_cfi_section *sec, const uint8_t *hdr, size_t hdr_size,
			  uint64_t hdr_vaddr, struct pt_unwind_table *out)
{
	struct builder b = { .s = sec, .t = out, .m = cfi_machine_of(sec->machine) };
	int err;

	memset(out, 0, sizeof(*out));
	if (!b.m)
		return -EOPNOTSUPP;
	out->machine = b.m->e_machine;
	out->stats.hdr_fdes = -1;
	out->stats.debug_frame = !!sec->debug_frame;
	if (!sec->data && sec->size)
		return -EINVAL;
	b.in = malloc(sizeof(*b.in));
	if (!b.in)
		return -ENOMEM;
	err = build(&b, hdr, hdr_size, hdr_vaddr);
	free(b.in);
	free(b.cies);
	free(b.fdes);
	if (err) {
		pt_cfi_free(out);
		return err;
	}
	if (out->nrows && out->nrows < b.cap) {
		/* Give back the doubling slack: tables live as long as their mapping. */
		struct pt_unwind_row *n = realloc(out->rows, out->nrows * sizeof(*n));

		if (n)
			out->rows = n;
	}
	finish_stats(out);
	return 0;
}

int pt_cfi_build_mem(const struct pt_cfi_section *sec, struct pt_unwind_table *out)
{
	return build_sections(sec, NULL, 0, 0, out);
}

/* ---- ELF files ----------------------------------------------------------------------------- */

/* DW_EH_PE_indirect FDE addresses: the 8-byte word at that vaddr, read from the file. Each
 * read is counted (stats.derefs): the table then depends on bytes outside its CFI section,
 * which the unwind cache's key (pt_cfi_elf_digest) does not cover, so such a table is never
 * cached. */
struct elf_deref_ctx {
	struct pt_elf *e;
	uint32_t n;
};

static int elf_deref(void *arg, uint64_t vaddr, uint64_t *val)
{
	struct elf_deref_ctx *c = arg;
	struct pt_elf *e = c->e;
	uint8_t buf[8];
	uint64_t off, v = 0;
	int i;

	c->n++;
	if (pt_elf_vaddr_to_off(e->loads, e->nloads, vaddr, &off))
		return -ENOENT;
	if (pread(e->fd, buf, sizeof(buf), (off_t)off) != (ssize_t)sizeof(buf))
		return -EIO;
	for (i = 0; i < 8; i++)
		v |= (uint64_t)buf[i] << (8 * i);
	*val = v;
	return 0;
}

static int scn_bytes(Elf_Scn *scn, const GElf_Shdr *sh, const uint8_t **p, size_t *n)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return -ENOENT;
	/* .debug_frame may be SHF_COMPRESSED (gcc -gz); libelf inflates it in place. */
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return -ENOEXEC;
	d = elf_getdata(scn, NULL);
	if (!d || (!d->d_buf && d->d_size))
		return -ENOEXEC;
	*p = d->d_buf;
	*n = d->d_size;
	return 0;
}

/* What a table of e is built from: the CFI section chosen (.eh_frame, else .debug_frame) with
 * the addresses it is read against, and .eh_frame_hdr (cross-check only). 0, or -errno as
 * pt_cfi_build_elf. */
struct elf_cfi_input {
	struct pt_cfi_section sec;
	const uint8_t *hdr;
	size_t hdr_n;
	uint64_t hdr_addr;
};

static int elf_cfi_input(struct pt_elf *e, struct elf_cfi_input *in)
{
	Elf_Scn *scn = NULL, *eh = NULL, *hdr = NULL, *dbg = NULL;
	GElf_Shdr eh_sh, hdr_sh, dbg_sh, sh;
	struct pt_cfi_section *sec = &in->sec;
	size_t shstrndx;
	GElf_Ehdr ehdr;

	if (!gelf_getehdr(e->elf, &ehdr))
		return -ENOEXEC;
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    !cfi_machine_of(ehdr.e_machine) || ehdr.e_machine == 0)
		return -EOPNOTSUPP;
	sec->machine = ehdr.e_machine;
	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		/* Type not checked: .eh_frame is PROGBITS from GNU ld and SHT_X86_64_UNWIND from
		 * others; only NOBITS (a stripped debug file's stand-in) is refused below. */
		if (!strcmp(name, ".eh_frame") && !eh) {
			eh = scn;
			eh_sh = sh;
		} else if (!strcmp(name, ".eh_frame_hdr") && !hdr) {
			hdr = scn;
			hdr_sh = sh;
		} else if (!strcmp(name, ".debug_frame") && !dbg) {
			dbg = scn;
			dbg_sh = sh;
		} else if (!strcmp(name, ".got") && !sec->datarel) {
			/* x86-64 psABI: DW_EH_PE_datarel in .eh_frame is relative to the GOT. */
			sec->datarel = sh.sh_addr;
		}
	}
	/* A .eh_frame holding only its 4-byte terminator is no CFI: prefer .debug_frame then. */
	if (eh && eh_sh.sh_type != SHT_NOBITS && eh_sh.sh_size > 4) {
		int err = scn_bytes(eh, &eh_sh, (const uint8_t **)&sec->data, &sec->size);

		if (err)
			return err;
		sec->vaddr = eh_sh.sh_addr;
		if (hdr && scn_bytes(hdr, &hdr_sh, &in->hdr, &in->hdr_n))
			in->hdr = NULL;
		in->hdr_addr = hdr ? hdr_sh.sh_addr : 0;
		return 0;
	}
	if (dbg && scn_bytes(dbg, &dbg_sh, (const uint8_t **)&sec->data, &sec->size) == 0) {
		/* .debug_frame addresses are absolute; pcrel would be meaningless there. */
		sec->vaddr = 0;
		sec->debug_frame = 1;
		return 0;
	}
	return -ENOENT;
}

int pt_cfi_build_elf(struct pt_elf *e, struct pt_unwind_table *out)
{
	struct elf_deref_ctx dc = { .e = e };
	struct elf_cfi_input in = { .sec = { .deref = elf_deref, .deref_arg = &dc } };
	int err;

	memset(out, 0, sizeof(*out));
	err = elf_cfi_input(e, &in);
	if (err)
		return err;
	if (in.sec.debug_frame)
		err = build_sections(&in.sec, NULL, 0, 0, out);
	else
		err = build_sections(&in.sec, in.hdr, in.hdr_n, in.hdr_addr, out);
	if (!err)
		out->stats.derefs = dc.n;
	return err;
}

static void put_le64(struct pt_sha256 *c, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pt_sha256_update(c, b, sizeof(b));
}

int pt_cfi_elf_digest(struct pt_elf *e, uint8_t out[PT_SHA256_LEN])
{
	struct elf_cfi_input in = { 0 };
	struct pt_sha256 c;
	int err;

	err = elf_cfi_input(e, &in);
	if (err)
		return err;
	/* Everything build_sections() reads besides the bytes (where they sit, which rules apply,
	 * the GOT's address), each field fixed-size so that no two inputs serialize alike.
	 * .eh_frame_hdr is left out: the table never depends on it (check_hdr only counts). */
	pt_sha256_init(&c);
	pt_sha256_update(&c, "peaktrace cfi input 1", 22);
	put_le64(&c, in.sec.debug_frame);
	put_le64(&c, in.sec.vaddr);
	put_le64(&c, in.sec.datarel);
	put_le64(&c, in.sec.size);
	/* The same bytes make other rows on another machine. Only for those: x86-64's digests
	 * (the unwind caches already written) stay what they were. */
	if (in.sec.machine != EM_X86_64)
		put_le64(&c, in.sec.machine);
	if (in.sec.size)
		pt_sha256_update(&c, in.sec.data, in.sec.size);
	pt_sha256_final(&c, out);
	return 0;
}

int pt_cfi_build(const char *path, struct pt_unwind_table *out)
{
	struct pt_elf e;
	int err;

	memset(out, 0, sizeof(*out));
	err = pt_elf_open(path, &e);
	if (err)
		return err;
	err = pt_cfi_build_elf(&e, out);
	pt_elf_close(&e);
	return err;
}

void pt_cfi_free(struct pt_unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

const struct pt_unwind_row *pt_cfi_lookup(const struct pt_unwind_table *t, uint64_t pc)
{
	int i;

	/* Tables only describe vaddrs below 4 GiB (decode_fde drops the rest). */
	if (!t || !t->nrows || pc > UINT32_MAX)
		return NULL;
	i = pt_unwind_search(t->rows, t->nrows, (uint32_t)pc);
	return i < 0 ? NULL : &t->rows[i];
}

const char *pt_cfi_kind_str(unsigned int kind)
{
	static const char *const names[PT_CFA_KINDS] = {
		[PT_CFA_NONE] = "none", [PT_CFA_RSP] = "rsp", [PT_CFA_RBP] = "rbp",
		[PT_CFA_PLT] = "plt", [PT_CFA_END] = "end", [PT_CFA_UNSUPPORTED] = "unsupported",
	};

	return kind < PT_CFA_KINDS ? names[kind] : "?";
}

const char *pt_cfi_why_str(unsigned int why)
{
	static const char *const names[PT_UNW_WHY_COUNT] = {
		[PT_UNW_WHY_NONE] = "none", [PT_UNW_WHY_CFA_EXPR] = "cfa-expression",
		[PT_UNW_WHY_CFA_REG] = "cfa-register", [PT_UNW_WHY_CFA_RANGE] = "cfa-offset-range",
		[PT_UNW_WHY_RA_RULE] = "ra-rule", [PT_UNW_WHY_RBP_RULE] = "rbp-rule",
		[PT_UNW_WHY_RBP_RANGE] = "rbp-offset-range", [PT_UNW_WHY_BAD_CIE] = "bad-cie",
		[PT_UNW_WHY_BAD_FDE] = "bad-fde",
	};

	return why < PT_UNW_WHY_COUNT ? names[why] : "?";
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * probeplace.c — choose the instruction an entry uprobe sits on.
 *
 * An x86 uprobe replaces one instruction with int3. On the hit the kernel must
 * also execute the displaced instruction: a handful it emulates in the trap
 * (arch/x86/kernel/uprobes.c: branch_setup_xol_ops(), push_setup_xol_ops()),
 * everything else it single-steps out of line, a second trap. Measured here:
 * ~1.1 us emulated vs ~5.5 us single-stepped per hit.
 *
 * When the entry instruction is not emulated but only reads (test, cmp, endbr64,
 * a long nop) and the next one is emulated, we probe the next one instead. That is
 * safe because the skipped instruction writes nothing but RFLAGS: the probe sees
 * the same argument registers, the same %rsp and the same return address at [%rsp]
 * as it would at entry. A memory operand (glibc's `cmpb $0,__malloc_initialized
 * (%rip)`) is only read, natively, exactly as without the probe.
 *
 * Caveat (documented, not checked here): the probe fires whenever the moved-to
 * instruction runs, so a branch elsewhere in the function that targets it would
 * fire it again. Compilers branch back to a condition's test, not past it; the
 * functions this is used for (allocator entry points) start with an argument
 * check or a prologue, which nothing jumps to.
 */
#include <stdio.h>
#include <string.h>

#include "attach/probeplace.h"
#include "arch/arch.h"
#include "arch/arm64.h"

/* At most this many read-only instructions are skipped (endbr64 + test). */
#define MAX_SKIP_INSNS 2

struct insn {
	size_t len;		/* 0: not decoded */
	int emulated;		/* the kernel emulates it at a uprobe */
	int readonly;		/* writes nothing but RFLAGS */
	char desc[48];
};

/*
 * The kernel's x86_nops[] (64-bit, P6 nops), which branch_setup_xol_ops() emulates
 * byte for byte. Newer kernels emulate every nop encoding (insn_is_nop()); we
 * claim only the table, so on older kernels we never promise emulation wrongly.
 * Getting this wrong would only cost speed, never correctness.
 */
static const uint8_t kernel_nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

static const char *const cc_names[16] = {
	"o", "no", "b", "ae", "e", "ne", "be", "a",
	"s", "ns", "p", "np", "l", "ge", "le", "g",
};

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
static const char *const reg32[16] = {
	"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	"r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d",
};
static const char *const reg16[16] = {
	"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
	"r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w",
};
static const char *const reg8_rex[16] = {
	"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil",
	"r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b",
};
static const char *const reg8_legacy[8] = {
	"al", "cl", "dl", "bl", "ah", "ch", "dh", "bh",
};

/* Operand size in bytes: 1 for byte forms, else REX.W / 0x66 / default 32-bit. */
static const char *reg_name(int idx, int size, int rex)
{
	switch (size) {
	case 1:	return rex ? reg8_rex[idx & 15] : reg8_legacy[idx & 7];
	case 2:	return reg16[idx & 15];
	case 8:	return reg64[idx & 15];
	default: return reg32[idx & 15];
	}
}

static char size_suffix(int size)
{
	return size == 1 ? 'b' : size == 2 ? 'w' : size == 8 ? 'q' : 'l';
}

/*
 * Length of a ModRM operand (ModRM + SIB + displacement) in 64-bit mode; the
 * 0x67 address-size prefix does not change the encoding there. -1 if truncated.
 * Describes the r/m operand into rm (register name or memory form).
 */
static int modrm_operand(const uint8_t *p, size_t len, int size, int rex, char *rm, size_t rmsz)
{
	uint8_t modrm, mod, r;
	size_t n = 1;
	int32_t disp = 0;

	if (len < 1)
		return -1;
	modrm = p[0];
	mod = modrm >> 6;
	r = modrm & 7;
	if (mod == 3) {
		snprintf(rm, rmsz, "%%%s", reg_name(r | ((rex & 1) << 3), size, rex));
		return 1;
	}
	if (r == 4) {			/* SIB follows */
		if (len < 2)
			return -1;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;		/* no base, disp32 */
	} else if (mod == 0 && r == 5) {
		if (len < 5)
			return -1;
		memcpy(&disp, p + 1, 4);
		snprintf(rm, rmsz, "0x%x(%%rip)", (unsigned int)disp);
		return 5;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	if (n > len)
		return -1;
	snprintf(rm, rmsz, "mem");
	return (int)n;
}

static int is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
	case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
		return 1;
	}
	return 0;
}

/* Decode the one instruction at c. Only what matters for placement is understood:
 * emulated branches/push/nop and read-only compares; the rest is "not decoded". */
static void decode(const uint8_t *c, size_t len, struct insn *in)
{
	int opsz16 = 0, rep = 0, lock = 0, rex = 0, size, imm = 0;
	uint8_t op, op2, reg;
	size_t i = 0;
	char rm[32];
	int n;

	memset(in, 0, sizeof(*in));
	while (i < len && i < 14 && is_legacy_prefix(c[i])) {
		if (c[i] == 0x66)
			opsz16 = 1;
		else if (c[i] == 0xf2 || c[i] == 0xf3)
			rep = c[i];
		else if (c[i] == 0xf0)
			lock = 1;
		i++;
	}
	if (i < len && (c[i] & 0xf0) == 0x40)
		rex = c[i++];
	if (i >= len)
		goto undecoded;
	op = c[i++];
	size = (rex & 8) ? 8 : opsz16 ? 2 : 4;

	if (op >= 0x50 && op <= 0x57) {
		/* push_setup_xol_ops(): plain push, or with exactly REX.B (0x41). */
		in->len = i;
		in->emulated = i == 1 || (i == 2 && rex == 0x41);
		snprintf(in->desc, sizeof(in->desc), "push %%%s", reg64[(op & 7) | ((rex & 1) << 3)]);
		return;
	}
	/*
	 * Branches: the kernel rejects a 0x66 prefix (16-bit target) and we do not
	 * claim REX-prefixed or lock/rep-odd forms; bnd (0xf2) and branch hints pass.
	 */
	if (op == 0xeb || (op >= 0x70 && op <= 0x7f)) {
		if (i + 1 > len)
			goto undecoded;
		in->len = i + 1;
		in->emulated = !opsz16 && !rex && !lock && rep != 0xf3;
		if (op == 0xeb)
			snprintf(in->desc, sizeof(in->desc), "jmp rel8");
		else
			snprintf(in->desc, sizeof(in->desc), "j%s rel8", cc_names[op & 15]);
		return;
	}
	if (op == 0xe8 || op == 0xe9) {
		imm = opsz16 ? 2 : 4;
		if (i + imm > len)
			goto undecoded;
		in->len = i + imm;
		in->emulated = !opsz16 && !rex && !lock && rep != 0xf3;
		snprintf(in->desc, sizeof(in->desc), "%s rel%d", op == 0xe8 ? "call" : "jmp", imm * 8);
		return;
	}
	if (op == 0x90 && !rex) {
		/* "prefix* + nop" is emulated as a jump to the next instruction. */
		in->len = i;
		in->emulated = !lock;
		in->readonly = !lock;
		snprintf(in->desc, sizeof(in->desc), rep == 0xf3 ? "pause" : "nop");
		return;
	}
	if (op == 0x0f) {
		if (i >= len)
			goto undecoded;
		op2 = c[i++];
		if (op2 >= 0x80 && op2 <= 0x8f) {
			imm = opsz16 ? 2 : 4;
			if (i + imm > len)
				goto undecoded;
			in->len = i + imm;
			in->emulated = !opsz16 && !rex && !lock && rep != 0xf3;
			snprintf(in->desc, sizeof(in->desc), "j%s rel%d", cc_names[op2 & 15], imm * 8);
			return;
		}
		if (op2 == 0x1e && rep == 0xf3 && i < len && (c[i] == 0xfa || c[i] == 0xfb)) {
			/* endbr64/endbr32: a marker for indirect branches; probing after it
			 * also leaves IBT's landing pad intact. */
			in->len = i + 1;
			in->readonly = !lock && !opsz16 && !rex;
			snprintf(in->desc, sizeof(in->desc), c[i] == 0xfa ? "endbr64" : "endbr32");
			return;
		}
		if (op2 == 0x1f) {
			n = modrm_operand(c + i, len - i, size, rex, rm, sizeof(rm));
			if (n < 0)
				goto undecoded;
			in->len = i + n;
			in->readonly = !lock && !rep;
			in->emulated = in->len <= 8 &&
				       memcmp(c, kernel_nops[in->len], in->len) == 0;
			snprintf(in->desc, sizeof(in->desc), "nop%zu", in->len);
			return;
		}
		goto undecoded;
	}

	switch (op) {
	case 0x84: case 0x85:		/* test r/m, r */
	case 0x38: case 0x39:		/* cmp r/m, r */
	case 0x3a: case 0x3b:		/* cmp r, r/m */
		if (i >= len)
			goto undecoded;
		if (!(op & 1))
			size = 1;
		reg = ((c[i] >> 3) & 7) | ((rex & 4) << 1);
		n = modrm_operand(c + i, len - i, size, rex, rm, sizeof(rm));
		if (n < 0)
			goto undecoded;
		in->len = i + n;
		in->readonly = 1;
		if (op == 0x3a || op == 0x3b)
			snprintf(in->desc, sizeof(in->desc), "cmp %s,%%%s", rm, reg_name(reg, size, rex));
		else
			snprintf(in->desc, sizeof(in->desc), "%s %%%s,%s", op >= 0x84 ? "test" : "cmp",
				 reg_name(reg, size, rex), rm);
		break;
	case 0x3c: case 0x3d:		/* cmp al/eax/rax, imm */
	case 0xa8: case 0xa9:		/* test al/eax/rax, imm */
		if (!(op & 1))
			size = 1;
		imm = size == 1 ? 1 : size == 2 ? 2 : 4;
		if (i + imm > len)
			goto undecoded;
		in->len = i + imm;
		in->readonly = 1;
		snprintf(in->desc, sizeof(in->desc), "%s $imm,%%%s", op >= 0xa8 ? "test" : "cmp",
			 reg_name(0, size, rex));
		break;
	case 0x80: case 0x81: case 0x83:	/* group 1: only /7 (cmp) reads only */
	case 0xf6: case 0xf7:			/* group 3: only /0 (test) has an imm */
		if (i >= len)
			goto undecoded;
		reg = (c[i] >> 3) & 7;
		if (op == 0x80 || op == 0xf6)
			size = 1;
		imm = (op == 0x81 || op == 0xf7) ? (size == 2 ? 2 : 4) : 1;
		if (op >= 0xf6 && reg != 0)
			goto undecoded;	/* not, neg, mul, div: no imm, never skipped */
		n = modrm_operand(c + i, len - i, size, rex, rm, sizeof(rm));
		if (n < 0 || i + n + imm > len)
			goto undecoded;
		in->len = i + n + imm;
		in->readonly = op < 0xf6 ? reg == 7 : 1;
		{
			const char *mn = op >= 0xf6 ? "test" : reg == 7 ? "cmp" : "alu";
			uint64_t v = 0;

			if (imm == 1 && op == 0x83)
				v = (uint64_t)(int64_t)(int8_t)c[i + n];	/* sign-extended */
			else
				memcpy(&v, c + i + n, imm);
			/* AT&T: size suffix only when no register names the size. */
			if (rm[0] == '%')
				snprintf(in->desc, sizeof(in->desc), "%s $0x%llx,%s", mn,
					 (unsigned long long)v, rm);
			else
				snprintf(in->desc, sizeof(in->desc), "%s%c $0x%llx,%s", mn,
					 size_suffix(size), (unsigned long long)v, rm);
		}
		break;
	default:
		goto undecoded;
	}
	/* lock makes cmp/test invalid; rep/bnd on them is undefined; keep it simple.
	 * Segment overrides (fs:, gs:) only change where the read goes: allowed. */
	if (lock || rep)
		in->readonly = 0;
	return;

undecoded:
	memset(in, 0, sizeof(*in));
	if (len > 1)
		snprintf(in->desc, sizeof(in->desc), "insn %02x %02x", c[0], c[1]);
	else
		snprintf(in->desc, sizeof(in->desc), "insn %02x", len ? c[0] : 0);
}

void pt_probe_place_x86(const uint8_t *code, size_t len, int may_skip, struct pt_probe_place *out)
{
	struct insn first, next;
	size_t off;
	int k;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	if (!code || !len) {
		snprintf(out->insn, sizeof(out->insn), "(no code)");
		return;
	}
	decode(code, len, &first);
	if (first.emulated) {
		out->emulated = 1;
		snprintf(out->insn, sizeof(out->insn), "%s", first.desc);
		return;
	}
	if (may_skip && first.readonly && first.len) {
		char skipped[sizeof(out->skipped)];

		snprintf(skipped, sizeof(skipped), "%s", first.desc);
		off = first.len;
		for (k = 1; k <= MAX_SKIP_INSNS && off < len; k++) {
			decode(code + off, len - off, &next);
			if (next.emulated) {
				out->skip = (uint32_t)off;
				out->emulated = 1;
				snprintf(out->insn, sizeof(out->insn), "%s", next.desc);
				memcpy(out->skipped, skipped, sizeof(skipped));
				return;
			}
			if (!next.readonly || !next.len || k == MAX_SKIP_INSNS)
				break;
			/* Another read-only one (endbr64; test): try past it too. */
			/* Truncating a long description is fine; it is for humans. */
			if (snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped),
				     "; %s", next.desc) < 0)
				break;
			off += next.len;
		}
	}
	snprintf(out->insn, sizeof(out->insn), "%s", first.desc);
}

void pt_probe_place_a64(const uint8_t *code, size_t len, int may_skip, struct pt_probe_place *out)
{
	struct pt_a64_place a;

	if (!out)
		return;
	memset(out, 0, sizeof(*out));
	pt_arm64_probe_place(code, len, may_skip, &a);
	out->skip = a.skip;
	out->emulated = a.cls == PT_A64_SIMULATED;
	snprintf(out->insn, sizeof(out->insn), "%s", a.insn);
	if (a.skipped[0])
		snprintf(out->skipped, sizeof(out->skipped), "%s%s%s", a.skipped[0],
			 a.skipped[1] ? "; " : "", a.skipped[1] ? a.skipped[1] : "");
}

void pt_probe_place(int isa, const uint8_t *code, size_t len, int may_skip,
		    struct pt_probe_place *out)
{
	switch (isa) {
	case PT_ISA_X86_64:
		pt_probe_place_x86(code, len, may_skip, out);
		break;
	case PT_ISA_A64:
		pt_probe_place_a64(code, len, may_skip, out);
		break;
	default:
		pt_probe_place_x86(NULL, 0, 0, out);    /* "(no code)": the entry */
		break;
	}
}

int pt_probe_is_thunk(int isa, const uint8_t *code, size_t len)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;

	if (isa == PT_ISA_A64)
		return pt_arm64_is_branch_thunk(code, len);
	if (isa != PT_ISA_X86_64)
		return 0;
	if (len >= 4 && memcmp(code, endbr64, 4) == 0)
		i = 4;
	return i < len && (code[i] == 0xe9 || code[i] == 0xeb);
}

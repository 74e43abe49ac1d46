/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cfibytes.h — hand-encoded .eh_frame bytes for the CFI compiler's unit tests (test_cfi.c,
 * x86-64; test_cfi_a64.c, AArch64): a buffer, fixed-size and LEB128 numbers, entries whose
 * length is patched at their end, and an FDE header for a "zR" pcrel|sdata4 CIE. The includer
 * defines VADDR, where the section pretends to live (the base of pcrel).
 */
#ifndef PEAKTRACE_TEST_CFIBYTES_H
#define PEAKTRACE_TEST_CFIBYTES_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bb {
	uint8_t b[8192];
	size_t n;
};

static inline void put(struct bb *x, const void *p, size_t n)
{
	if (x->n + n > sizeof(x->b))
		abort();
	memcpy(x->b + x->n, p, n);
	x->n += n;
}

static inline void u8(struct bb *x, uint8_t v)
{
	put(x, &v, 1);
}

static inline void u16(struct bb *x, uint16_t v)
{
	put(x, &v, 2);
}

static inline void u32(struct bb *x, uint32_t v)
{
	put(x, &v, 4);
}

static inline void u64(struct bb *x, uint64_t v)
{
	put(x, &v, 8);
}

static inline void uleb(struct bb *x, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		u8(x, b | (v ? 0x80 : 0));
	} while (v);
}

static inline void sleb(struct bb *x, int64_t v)
{
	int more;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		u8(x, b | (more ? 0x80 : 0));
	} while (more);
}

/* An entry: 4-byte length patched by entry_end(). */
static inline size_t entry_begin(struct bb *x)
{
	size_t at = x->n;

	u32(x, 0);
	return at;
}

static inline void entry_end(struct bb *x, size_t at)
{
	uint32_t len = (uint32_t)(x->n - at - 4);

	memcpy(x->b + at, &len, 4);
}

/* FDE header for [pc, pc + len) under a "zR"/pcrel-sdata4 CIE; instructions follow. */
static inline size_t fde_begin(struct bb *x, size_t cie, uint32_t pc, uint32_t len)
{
	size_t at = entry_begin(x);

	u32(x, (uint32_t)(x->n - cie)); /* CIE pointer: back from this very field */
	u32(x, (uint32_t)(pc - (VADDR + x->n)));
	u32(x, len);
	uleb(x, 0);                     /* augmentation data length */
	return at;
}

#endif

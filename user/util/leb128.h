/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * leb128.h — DWARF's LEB128 numbers, read from bytes of another process's file: the one reader
 * of unwind/cfi.c (the CFI compiler) and arch/arm64.c (one AArch64 CFI row).
 */
#ifndef PEAKTRACE_LEB128_H
#define PEAKTRACE_LEB128_H
#include <stdint.h>

/* The number at *p, read up to end: *p moves past it. Running off end sets *bad (sticky: once
 * set, every read returns 0 and moves nothing). Bits beyond 64 are dropped: only malformed
 * input has them, and any value is as good as another for it. */
static inline uint64_t pt_leb128_raw(const uint8_t **p, const uint8_t *end, int *bad,
				     unsigned int *shift_out, uint8_t *last)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*bad || *p >= end) {
			*bad = 1;
			*shift_out = 0;
			*last = 0;
			return 0;
		}
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*shift_out = shift;
	*last = b;
	return v;
}

static inline uint64_t pt_uleb128(const uint8_t **p, const uint8_t *end, int *bad)
{
	unsigned int shift;
	uint8_t last;

	return pt_leb128_raw(p, end, bad, &shift, &last);
}

static inline int64_t pt_sleb128(const uint8_t **p, const uint8_t *end, int *bad)
{
	unsigned int shift;
	uint8_t last;
	uint64_t v = pt_leb128_raw(p, end, bad, &shift, &last);

	/* Sign-extend from the last byte's bit 6. */
	if (shift && shift < 64 && (last & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

#endif /* PEAKTRACE_LEB128_H */

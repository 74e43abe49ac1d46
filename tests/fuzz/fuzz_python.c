// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_python — what user/python/python.c reads of a CPython target. The first byte picks:
 *   0: pt_py_line on a location table (co_linetable): [0] mode, [1..4] co_firstlineno,
 *      [5..8] code unit index, then the table;
 *   1: code objects through the resolver (pt_py_resolve_stack, pt_py_frame_name), read from
 *      this process's own memory (/proc/self/mem, the way the target's is read): [1] minor
 *      version (11 + n % 3), [2] frame count, then per frame 4 bytes (u16 offset of its code
 *      object in the image, u16 instruction index), then the memory image. In the image, an
 *      8-byte aligned word 0xfffe0000XXXXXXXX is a pointer to image offset XXXXXXXX % size;
 *   2: pt_py_splice of a native stack ([1] count, then one byte each: odd = an eval frame)
 *      with the words that follow (boundaries, frames).
 */
#include "python/python.h"
#include "bpf/pyframe.h"
#include "fuzz.h"

#define POINTER_TAG 0xfffeULL

static void fuzz_line(const uint8_t *d, size_t n)
{
	int32_t first;
	uint32_t idx;
	int line;

	if (n < 9)
		return;
	memcpy(&first, d + 1, 4);
	memcpy(&idx, d + 5, 4);
	line = pt_py_line(d + 9, n - 9, first, idx);
	(void)line;
}

static void fuzz_code(const uint8_t *d, size_t n)
{
	struct pt_py_info info = { .minor = 11 + d[1] % 3 };
	struct pt_py_resolver *r;
	uint32_t nf, k;
	size_t hdr, isz;
	__u64 w[64];
	uint8_t *img;

	nf = d[2] % 64;
	hdr = 3 + 4 * (size_t)nf;
	if (n < hdr + 8)
		return;
	isz = (n - hdr) & ~(size_t)7;
	img = malloc(isz);   /* 16-byte aligned: words and code objects are 8-aligned */
	if (!img)
		return;
	memcpy(img, d + hdr, isz);
	for (size_t o = 0; o < isz; o += 8) {
		uint64_t v;

		memcpy(&v, img + o, 8);
		if (v >> 48 == POINTER_TAG) {
			v = (uint64_t)(uintptr_t)img + (v & 0xffffffffu) % isz;
			memcpy(img + o, &v, 8);
		}
	}
	for (k = 0; k < nf; k++) {
		uint16_t off, idx;

		memcpy(&off, d + 3 + 4 * k, 2);
		memcpy(&idx, d + 5 + 4 * k, 2);
		if (off == 0xffff)
			w[k] = pt_py_boundary_word(idx & 3);
		else
			w[k] = pt_py_frame_word((uint64_t)(uintptr_t)img + (off % isz & ~7u), idx);
	}
	r = pt_py_resolver_new(getpid(), &info);
	if (r) {
		pt_py_resolve_stack(r, 0, w, nf);
		for (k = 0; k < nf + 1; k++) {
			const char *name, *file;
			uint32_t rec;
			int line;

			if (k < nf && pt_py_is_boundary(w[k]))
				continue;
			/* k == nf: beyond the stack's words (the word is read on its own). */
			if (pt_py_frame_name(r, 0, k, k < nf ? w[k] : w[0], &name, &file, &line, &rec) == 0)
				FUZZ_ASSERT(name && rec);
			/* A stack the kernel never announced: read when first named. */
			pt_py_frame_name(r, 1 + k % 3, k, k < nf ? w[k] : w[0], &name, &file, &line, &rec);
		}
		(void)pt_py_unreadable(r);
		pt_py_resolver_free(r);
	}
	free(img);
}

static void fuzz_splice(const uint8_t *d, size_t n)
{
	uint32_t nn = d[1], nw, unmatched, got;
	struct pt_py_item out[2 * 256 + 64 + 1];
	bool eval[256];
	__u64 w[64];

	if (n < 2 + (size_t)nn)
		return;
	for (uint32_t k = 0; k < nn; k++)
		eval[k] = d[2 + k] & 1;
	nw = (uint32_t)((n - 2 - nn) / 8);
	if (nw > 64)
		nw = 64;
	memcpy(w, d + 2 + nn, nw * 8);
	got = pt_py_splice(eval, nn, w, nw, out, sizeof(out) / sizeof(out[0]), &unmatched);
	FUZZ_ASSERT(got <= sizeof(out) / sizeof(out[0]));
	for (uint32_t i = 0; i < got; i++) {
		FUZZ_ASSERT(out[i].kind <= PT_PY_ITEM_TRUNC);
		FUZZ_ASSERT(out[i].kind != PT_PY_ITEM_NATIVE || out[i].i < nn);
		FUZZ_ASSERT(out[i].kind != PT_PY_ITEM_PY || (out[i].i < nw && !pt_py_is_boundary(w[out[i].i])));
	}
	/* A small output buffer is filled, never overrun. */
	FUZZ_ASSERT(pt_py_splice(eval, nn, w, nw, out, 3, NULL) <= 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_line(data, size);
		break;
	case 1:
		fuzz_code(data, size);
		break;
	default:
		fuzz_splice(data, size);
		break;
	}
	return 0;
}

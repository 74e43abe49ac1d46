/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jitmap.h — which perf-map line names a JIT address: the newest line covering it, as perf
 * does. A JIT runtime appends "START SIZE name" to /tmp/perf-PID.map as it compiles; V8 and
 * CPython reuse code space, so one address can be covered by several lines of different
 * starts and sizes, and only the last one written describes the code there now. Choosing by
 * the greatest start instead names code that was freed long ago (seen on Node: an early
 * `node:internal/worker/io` entry named the user's own `loadSession`).
 *
 * The lines are flattened into sorted, non-overlapping segments, each pointing at the line
 * that owns it, so a lookup is one binary search however many lines overlap.
 */
#ifndef PEAKTRACE_JITMAP_H
#define PEAKTRACE_JITMAP_H
#include <stddef.h>
#include <stdint.h>

/* [start, end) named by line idx (its index in file order: a larger idx is a newer line). */
struct pt_jit_seg {
	uint64_t start, end;
	size_t idx;
};

/*
 * Every point covered by some item of in[0..n) is owned by the covering item of greatest idx;
 * *out (malloc'd, sorted by start, non-overlapping, adjacent pieces of one idx merged) says
 * who. The items may be lines and earlier segments alike (segments are a flattened set of
 * older lines, so flattening them with newer lines is flattening all of them): that is how
 * lines appended later are folded in without re-reading the older ones. Items with
 * end <= start are ignored. 0, or -ENOMEM (*out untouched).
 */
int pt_jit_flatten(const struct pt_jit_seg *in, size_t n, struct pt_jit_seg **out, size_t *nout);

/* The segment of seg[0..n) (as pt_jit_flatten makes them) holding addr, or NULL. */
const struct pt_jit_seg *pt_jit_find(const struct pt_jit_seg *seg, size_t n, uint64_t addr);

/* A perf-map line's end, START + SIZE, saturated (a bogus SIZE must not wrap to below START). */
static inline uint64_t pt_jit_end(uint64_t start, uint64_t size)
{
	return start + size < start ? UINT64_MAX : start + size;
}
#endif

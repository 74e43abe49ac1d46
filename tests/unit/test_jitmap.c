// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_jitmap — the newest perf-map line covering an address names it (symbolize/jitmap.h),
 * as perf does, whatever the lines' starts and sizes, and across incremental reads. */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "symbolize/jitmap.h"

/* Who names addr by the rule itself: the last line (greatest index) covering it; -1 if none. */
static long naive(const struct pt_jit_seg *l, size_t n, uint64_t addr)
{
	long who = -1;

	for (size_t i = 0; i < n; i++)
		if (l[i].start <= addr && addr < l[i].end)
			who = (long)l[i].idx;
	return who;
}

static long flat_owner(const struct pt_jit_seg *seg, size_t n, uint64_t addr)
{
	const struct pt_jit_seg *g = pt_jit_find(seg, n, addr);

	return g ? (long)g->idx : -1;
}

/*
 * V8 reused code space: line 0 (old, `node:internal/worker/io`) covers [0x1000, 0x1400); line
 * 1 (new, the user's loadSession) was compiled over part of it at a lower start, [0xf00,
 * 0x1200). The greatest start (line 0) is the wrong answer wherever both cover.
 */
static void test_reuse(void)
{
	struct pt_jit_seg l[] = {
		{ 0x1000, 0x1400, 0 },	/* JS:~ node:internal/worker/io:1:1 */
		{ 0x0f00, 0x1200, 1 },	/* JS:*loadSession /var/task/index.js:12 */
	};
	struct { uint64_t addr; long want; const char *what; } q[] = {
		{ 0x1100, 1, "inside both: the newer line" },
		{ 0x1000, 1, "the old line's start, inside the new one: the newer line" },
		{ 0x11ff, 1, "the new line's last byte" },
		{ 0x1200, 0, "just past the new line, inside the old one: the old line" },
		{ 0x1300, 0, "inside only the old line" },
		{ 0x13ff, 0, "the old line's last byte" },
		{ 0x1400, -1, "just past the old line: nothing" },
		{ 0x0f00, 1, "the new line's start" },
		{ 0x0f80, 1, "inside only the new line" },
		{ 0x0eff, -1, "just before the new line: nothing" },
		{ 0, -1, "address 0: nothing" },
		{ UINT64_MAX, -1, "the last address: nothing" },
	};
	struct pt_jit_seg *seg = NULL;
	size_t ns = 0;

	CHECK(pt_jit_flatten(l, 2, &seg, &ns) == 0, "flatten a reused range");
	CHECK_EQ_U64(ns, 2, "two segments: the new line whole, the old line's tail");
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		long got = flat_owner(seg, ns, q[i].addr);

		CHECK(got == q[i].want, "0x%" PRIx64 ", %s (line %ld, want %ld)", q[i].addr, q[i].what,
		      got, q[i].want);
	}
	free(seg);

	/* The same lines in the other order: the old range rewritten over the new one. */
	l[0].idx = 1;
	l[1].idx = 0;
	CHECK(pt_jit_flatten(l, 2, &seg, &ns) == 0 && flat_owner(seg, ns, 0x1100) == 1 &&
	      flat_owner(seg, ns, 0x0f80) == 0 && flat_owner(seg, ns, 0x1300) == 1,
	      "written the other way round, the other line wins where both cover");
	free(seg);
}

/* A newer line inside an older one splits it; a line for the same code at the same place
 * (recompiled: same start, same size) replaces it; a zero or wrapped range covers nothing. */
static void test_shapes(void)
{
	struct pt_jit_seg l[] = {
		{ 0x1000, 0x2000, 0 },
		{ 0x1400, 0x1800, 1 },
		{ 0x3000, 0x3100, 2 },
		{ 0x3000, 0x3100, 3 },
		{ 0x5000, 0x5000, 4 },	/* empty */
		{ 0x6000, 0x5000, 5 },	/* end before start */
		{ pt_jit_end(UINT64_MAX - 0x10, 0x100) - 0x20, pt_jit_end(UINT64_MAX - 0x10, 0x100), 6 },
	};
	struct pt_jit_seg *seg = NULL;
	size_t ns = 0;

	CHECK(pt_jit_end(UINT64_MAX - 0x10, 0x100) == UINT64_MAX, "a wrapping size saturates");
	CHECK(pt_jit_flatten(l, 7, &seg, &ns) == 0, "flatten nested, repeated and empty lines");
	CHECK(flat_owner(seg, ns, 0x1200) == 0 && flat_owner(seg, ns, 0x1500) == 1 &&
	      flat_owner(seg, ns, 0x1900) == 0, "a newer line inside an older one splits it");
	CHECK_EQ_U64(ns, 5, "segments: old, new, old again, the recompiled line, the top one");
	CHECK(flat_owner(seg, ns, 0x3050) == 3, "recompiled at the same place: the later line");
	CHECK(flat_owner(seg, ns, 0x5000) == -1 && flat_owner(seg, ns, 0x5800) == -1,
	      "empty and inverted ranges cover nothing");
	CHECK(flat_owner(seg, ns, UINT64_MAX - 1) == 6, "a range reaching the top of the space");
	for (size_t i = 1; i < ns; i++)
		CHECK(seg[i - 1].end <= seg[i].start, "segments %zu and %zu sorted, apart", i - 1, i);
	free(seg);
	CHECK(pt_jit_flatten(NULL, 0, &seg, &ns) == 0 && ns == 0, "no lines: no segments");
	free(seg);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random maps in a small space (so lines overlap a lot), read in several increments as
 * perfmap_read does: the earlier increments' segments are folded with the new lines. Every
 * address of the space is checked against the rule itself.
 */
static void test_random_incremental(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int bad = 0, rounds = 200;

	for (int r = 0; r < rounds && !bad; r++) {
		struct pt_jit_seg l[64], *seg = NULL, *in;
		size_t n = 1 + rnd(&x) % 64, done = 0, ns = 0;

		for (size_t i = 0; i < n; i++) {
			l[i].start = rnd(&x) % 512;
			l[i].end = l[i].start + 1 + rnd(&x) % 96;
			l[i].idx = i;
		}
		while (done < n && !bad) {
			size_t step = 1 + rnd(&x) % (n - done), nout;
			struct pt_jit_seg *out;

			in = malloc((ns + step) * sizeof(*in));
			memcpy(in, seg, ns * sizeof(*in));
			memcpy(in + ns, l + done, step * sizeof(*in));
			if (pt_jit_flatten(in, ns + step, &out, &nout))
				bad++;
			free(in);
			free(seg);
			seg = out;
			ns = nout;
			done += step;
			for (uint64_t a = 0; a < 640 && !bad; a++)
				if (flat_owner(seg, ns, a) != naive(l, done, a)) {
					printf("# round %d, %zu of %zu lines, address %" PRIu64 ": line %ld, "
					       "want %ld\n", r, done, n, a, flat_owner(seg, ns, a),
					       naive(l, done, a));
					bad++;
				}
			if (ns > 2 * done) {
				printf("# round %d: %zu segments for %zu lines\n", r, ns, done);
				bad++;
			}
		}
		free(seg);
	}
	CHECK(!bad, "%d random maps, read in increments: every address named by its newest line, at most 2 segments a line",
	      rounds);
}

/* A long-running Node service writes 100k+ lines: flattening and lookups stay quick. */
static void test_speed(void)
{
	size_t n = 200000, ns = 0, hits = 0;
	struct pt_jit_seg *l = malloc(n * sizeof(*l)), *seg = NULL;
	uint64_t x = 12345;
	struct timespec t0, t1;
	double dt;

	/* Code space of 64 MiB reused over and over: every line overlaps some older ones. */
	for (size_t i = 0; i < n; i++) {
		l[i].start = 0x7f0000000000ULL + (rnd(&x) % (64 << 20));
		l[i].end = l[i].start + 64 + rnd(&x) % 4096;
		l[i].idx = i;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pt_jit_flatten(l, n, &seg, &ns) == 0)
		for (size_t i = 0; i < 1000000; i++)
			hits += pt_jit_find(seg, ns, 0x7f0000000000ULL + rnd(&x) % (64 << 20)) != NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(ns && hits > 900000, "200k overlapping lines: %zu segments, %zu of 1M lookups named",
	      ns, hits);
	CHECK(dt < 2.0, "200k lines flattened and 1M lookups in %.3f s", dt);
	/* Spot checks against the rule (a linear scan of 200k lines each). */
	for (int k = 0; k < 50; k++) {
		uint64_t a = 0x7f0000000000ULL + rnd(&x) % (64 << 20);

		if (flat_owner(seg, ns, a) != naive(l, n, a)) {
			CHECK(0, "address 0x%" PRIx64 " named by its newest line", a);
			break;
		}
		if (k == 49)
			CHECK(1, "50 random addresses named by their newest line");
	}
	free(seg);
	free(l);
}

int main(void)
{
	test_reuse();
	test_shapes();
	test_random_incremental();
	test_speed();
	return CHECK_DONE();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jitmap.c — the newest perf-map line covering each JIT address (see jitmap.h).
 *
 * A sweep over the items sorted by start, with a max-heap (by idx) of the items open at the
 * sweep's position: the heap's top owns the position until either it ends or a new item
 * starts. Items that end under the top are left in the heap and dropped when they surface.
 * O(n log n) for n items, at most 2n segments (each one ends at some item's start or end).
 */
#include <errno.h>
#include <stdlib.h>

#include "symbolize/jitmap.h"

static int cmp_start(const void *a, const void *b)
{
	const struct pt_jit_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The heap holds indexes into the sorted items, the greatest idx on top. */
struct heap {
	const struct pt_jit_seg *it;
	size_t *h, n;
};

static void heap_push(struct heap *hp, size_t v)
{
	size_t k = hp->n++;

	while (k) {
		size_t up = (k - 1) / 2;

		if (hp->it[hp->h[up]].idx >= hp->it[v].idx)
			break;
		hp->h[k] = hp->h[up];
		k = up;
	}
	hp->h[k] = v;
}

static void heap_pop(struct heap *hp)
{
	size_t v = hp->h[--hp->n], k = 0;

	for (;;) {
		size_t c = 2 * k + 1;

		if (c >= hp->n)
			break;
		if (c + 1 < hp->n && hp->it[hp->h[c + 1]].idx > hp->it[hp->h[c]].idx)
			c++;
		if (hp->it[hp->h[c]].idx <= hp->it[v].idx)
			break;
		hp->h[k] = hp->h[c];
		k = c;
	}
	hp->h[k] = v;
}

static void emit(struct pt_jit_seg *res, size_t *nr, uint64_t start, uint64_t end, size_t idx)
{
	/* A line split by a newer one and whole again after it stays two pieces; only pieces
	 * that touch are merged (a segment made from one earlier segment per read stays one). */
	if (*nr && res[*nr - 1].end == start && res[*nr - 1].idx == idx) {
		res[*nr - 1].end = end;
		return;
	}
	res[*nr].start = start;
	res[*nr].end = end;
	res[(*nr)++].idx = idx;
}

int pt_jit_flatten(const struct pt_jit_seg *in, size_t n, struct pt_jit_seg **out, size_t *nout)
{
	struct pt_jit_seg *it, *res;
	struct heap hp;
	size_t i, m = 0, nr = 0;
	uint64_t pos = 0;

	it = malloc((n ? n : 1) * sizeof(*it));
	res = malloc((n ? 2 * n : 1) * sizeof(*res));
	hp.h = malloc((n ? n : 1) * sizeof(*hp.h));
	if (!it || !res || !hp.h) {
		free(it);
		free(res);
		free(hp.h);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (in[i].end > in[i].start)
			it[m++] = in[i];
	qsort(it, m, sizeof(*it), cmp_start);
	hp.it = it;
	hp.n = 0;
	for (i = 0;;) {
		const struct pt_jit_seg *top;
		uint64_t next;

		while (hp.n && it[hp.h[0]].end <= pos)
			heap_pop(&hp);
		if (!hp.n) {
			if (i == m)
				break;
			pos = it[i].start;	/* a gap: nothing covers up to the next start */
		}
		while (i < m && it[i].start <= pos)
			heap_push(&hp, i++);
		/* The top is open at pos: it was checked above, or it starts at pos. */
		top = &it[hp.h[0]];
		next = top->end;
		if (i < m && it[i].start < next)
			next = it[i].start;
		emit(res, &nr, pos, next, top->idx);
		pos = next;
	}
	free(it);
	free(hp.h);
	*out = res;
	*nout = nr;
	return 0;
}

const struct pt_jit_seg *pt_jit_find(const struct pt_jit_seg *seg, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (seg[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < seg[lo - 1].end ? &seg[lo - 1] : NULL;
}

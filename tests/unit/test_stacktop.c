// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_stacktop.c — the shortcuts the writers take at many stacks must give exactly what the
 * long way gives:
 *   pt_stacks_top(k): the first k entries are the first k of a full sort (most of the metric
 *   first, ties by lower index), and the others follow in their original order;
 *   pt_folded_order + pt_write_folded_order: byte for byte pt_write_folded, for every metric.
 * Profiles are generated (fixed seed) with many ties, zero values, empty stacks and distinct
 * frames of the same name, so stacks of equal text sit around zero-valued ones.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"
#include "output/output.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* nstacks stacks over 400 frames (frames 2k and 2k+1 share a name: equal folded text from
 * distinct stacks; "b;c" folds to "b:c", as "b:c" does), values in [0, vmax) with a zero one
 * in four, so some texts have only zero values for a metric and others mix both. */
static int make_profile(struct pt_profile *p, uint32_t nstacks, uint32_t vmax)
{
	static const char *const names[] = { "main", "a", "b;c", "b:c", "e", "f" };
	char name[32];
	uint32_t i, j;

	memset(p, 0, sizeof(*p));
	p->nframes = 400;
	p->frames = calloc(p->nframes, sizeof(*p->frames));
	p->stacks = calloc(nstacks, sizeof(*p->stacks));
	if (!p->frames || !p->stacks)
		return -ENOMEM;
	for (i = 0; i < p->nframes; i++) {
		snprintf(name, sizeof(name), "fn%u", i / 2);
		p->frames[i].func = strdup(i < 12 ? names[i / 2] : name);
		p->frames[i].module = strdup("/bin/app");
		p->frames[i].addr = 0x1000 + i;
		if (!p->frames[i].func || !p->frames[i].module)
			return -ENOMEM;
	}
	for (i = 0; i < nstacks; i++) {
		struct pt_stack *s = &p->stacks[p->nstacks++];

		s->nframes = rnd(7);	/* 0: "[no stack]" */
		s->frames = malloc((s->nframes ? s->nframes : 1) * sizeof(*s->frames));
		if (!s->frames)
			return -ENOMEM;
		for (j = 0; j < s->nframes; j++)
			s->frames[j] = j + 1 == s->nframes ? rnd(2) : rnd(p->nframes);
		for (j = 0; j < PT_METRIC_MAX; j++)
			s->v[j] = rnd(4) ? rnd(vmax) : 0;
	}
	return 0;
}

static int memchr_u32(const uint32_t *a, uint32_t v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] == v)
			return 1;
	return 0;
}

static int top_cmp(const void *a, const void *b, void *arg)
{
	const struct pt_profile *p = ((void **)arg)[0];
	enum pt_metric m = *(enum pt_metric *)((void **)arg)[1];
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = p->stacks[x].v[m], vy = p->stacks[y].v[m];

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return x < y ? -1 : x > y;
}

static void test_top(const struct pt_profile *p, enum pt_metric m, uint32_t k)
{
	uint32_t *idx = malloc(p->nstacks * sizeof(*idx)), *full = malloc(p->nstacks * sizeof(*full));
	uint32_t n = 0, i, j, bad_top = 0, bad_rest = 0;
	void *arg[2] = { (void *)p, &m };

	if (!idx || !full) {
		CHECK(0, "pt_stacks_top m %d k %u: out of memory", m, k);
		free(idx);
		free(full);
		return;
	}
	/* Every third stack left out, as the callers leave out the stacks without the figure. */
	for (i = 0; i < p->nstacks; i++)
		if (i % 3)
			idx[n++] = i;
	memcpy(full, idx, n * sizeof(*idx));
	qsort_r(full, n, sizeof(*full), top_cmp, arg);
	CHECK(pt_stacks_top(p, m, idx, n, k) == 0, "pt_stacks_top m %d k %u returns 0", m, k);
	for (i = 0; i < k && i < n; i++)
		bad_top += idx[i] != full[i];
	CHECK(bad_top == 0, "pt_stacks_top m %d k %u: the first k are a full sort's first k (%u differ)",
	      m, k, bad_top);
	/* The rest: the others in increasing index (the order idx had), each once. */
	for (i = k < n ? k : n, j = 0; i < n; i++) {
		while (j < p->nstacks && (j % 3 == 0 || (k && memchr_u32(idx, j, k < n ? k : n))))
			j++;
		bad_rest += idx[i] != j++;
	}
	CHECK(bad_rest == 0, "pt_stacks_top m %d k %u: the rest in their order (%u misplaced)", m, k,
	      bad_rest);
	free(idx);
	free(full);
}

static char *written(int (*fn)(FILE *, const struct pt_profile *, enum pt_metric, const uint32_t *),
		     const struct pt_profile *p, enum pt_metric m, const uint32_t *order, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (fn(f, p, m, order)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static int folded_plain(FILE *f, const struct pt_profile *p, enum pt_metric m, const uint32_t *o)
{
	(void)o;
	return pt_write_folded(f, p, m);
}

static void test_folded(const struct pt_profile *p)
{
	uint32_t *order = NULL;
	int m;

	CHECK(pt_folded_order(p, &order) == 0 && order, "pt_folded_order of %u stacks", p->nstacks);
	for (m = 0; order && m < PT_METRIC_MAX; m++) {
		size_t la = 0, lb = 0;
		char *a = written(folded_plain, p, (enum pt_metric)m, NULL, &la);
		char *b = written(pt_write_folded_order, p, (enum pt_metric)m, order, &lb);

		CHECK(a && b && la > 0 && la == lb && memcmp(a, b, la) == 0,
		      "metric %d: pt_write_folded_order writes what pt_write_folded writes (%zu, %zu bytes)",
		      m, la, lb);
		free(a);
		free(b);
	}
	free(order);
}

int main(void)
{
	static const uint32_t ks[] = { 0, 1, 3, 10, 1000, 5000 };
	struct pt_profile p;
	size_t i;

	if (make_profile(&p, 3000, 40)) {
		CHECK(0, "profile built");
		pt_profile_free(&p);
		return CHECK_DONE();
	}
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		test_top(&p, PT_PEAK_BYTES, ks[i]);
		test_top(&p, PT_ALLOC_COUNT, ks[i]);
	}
	test_folded(&p);
	pt_profile_free(&p);
	/* Few distinct values: ties decide almost every place. */
	if (make_profile(&p, 500, 3) == 0) {
		test_top(&p, PT_LIVE_BYTES, 7);
		test_folded(&p);
	}
	pt_profile_free(&p);
	/* Small ones, mostly zeros: the first lines in text order are often of value 0. */
	for (i = 0; i < 8; i++) {
		if (make_profile(&p, 12, 2) == 0)
			test_folded(&p);
		pt_profile_free(&p);
	}
	return CHECK_DONE();
}

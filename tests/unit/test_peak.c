// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_peak: the lazy peak snapshot (bpf/peak.h) against a brute-force replay that recomputes
 * every stack's live bytes at the moment of the peak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "bpf/peak.h"
#include "bpf/sample.h"

#define NSTACKS 8
#define NEVENTS 20000

struct ev { int stack; int64_t bytes; };   /* bytes > 0 alloc, < 0 free */

/* What the BPF side does per event, in the same order. */
static void apply(struct pt_global *g, struct pt_stack_stats *st, int s, int64_t b)
{
	pt_peak_touch(&st[s], g->peak_seq);
	if (b > 0) {
		st[s].alloc_bytes += b;
		st[s].alloc_count++;
	} else {
		st[s].free_bytes += -b;
		st[s].free_count++;
	}
	g->live_bytes += b;
	g->live_count += b > 0 ? 1 : -1;
	if (b > 0)
		pt_peak_update(g, g->live_bytes);
}

static int run(unsigned seed, int nevents)
{
	static struct ev ev[NEVENTS];
	struct pt_stack_stats st[NSTACKS];
	struct pt_global g;
	int64_t live[NSTACKS] = { 0 }, at_peak[NSTACKS] = { 0 }, total = 0, peak = 0;
	int64_t blocks[NSTACKS][64];
	int nb[NSTACKS] = { 0 }, i, s, bad = 0;

	memset(st, 0, sizeof(st));
	memset(&g, 0, sizeof(g));
	srand(seed);
	for (i = 0; i < nevents; i++) {
		s = rand() % NSTACKS;
		if (nb[s] && (rand() % 2 || nb[s] == 64)) {
			int k = rand() % nb[s];

			ev[i].bytes = -blocks[s][k];
			blocks[s][k] = blocks[s][--nb[s]];
		} else {
			ev[i].bytes = 1 + rand() % 5000;
			blocks[s][nb[s]++] = ev[i].bytes;
		}
		ev[i].stack = s;
	}
	/* Brute force: snapshot every stack whenever the total sets a new maximum. */
	for (i = 0; i < nevents; i++) {
		live[ev[i].stack] += ev[i].bytes;
		total += ev[i].bytes;
		if (total > peak) {
			peak = total;
			memcpy(at_peak, live, sizeof(live));
		}
	}
	for (i = 0; i < nevents; i++)
		apply(&g, st, ev[i].stack, ev[i].bytes);
	if (g.peak_bytes != peak)
		bad++;
	for (s = 0; s < NSTACKS; s++)
		if (pt_peak_bytes_of(&st[s], g.peak_seq) != at_peak[s])
			bad++;
	return bad;
}

/*
 * --sample-bytes: the global total (and so the peak) counts every block exactly, a stack's
 * counters only its sampled blocks, with their weights (sample.h). At the peak each stack must
 * hold exactly the weights of its sampled blocks live at that moment; unsampled blocks touch
 * no stack. The same replay as above, against a brute force that sums weights.
 */
static int run_weighted(unsigned seed, int nevents, uint64_t mean)
{
	struct blk { int64_t size; int sampled; } blocks[NSTACKS][64];
	struct pt_stack_stats st[NSTACKS];
	struct pt_global g;
	int64_t live[NSTACKS] = { 0 }, at_peak[NSTACKS] = { 0 }, total = 0, peak = 0;
	int nb[NSTACKS] = { 0 }, i, s, bad = 0;
	__u64 left = 0;

	memset(st, 0, sizeof(st));
	memset(&g, 0, sizeof(g));
	srand(seed);
	for (i = 0; i < nevents; i++) {
		struct blk b;
		__u64 wb, wc;

		s = rand() % NSTACKS;
		if (nb[s] && (rand() % 2 || nb[s] == 64)) {
			int k = rand() % nb[s];

			b = blocks[s][k];
			blocks[s][k] = blocks[s][--nb[s]];
			pt_sample_weights(mean, b.size, &wb, &wc);
			if (b.sampled) {
				pt_peak_touch(&st[s], g.peak_seq);
				st[s].free_bytes += wb;
				st[s].free_count += wc;
				live[s] -= wb;
			}
			g.live_bytes -= b.size;
			g.live_count--;
			total -= b.size;
		} else {
			b.size = 1 + rand() % 20000;
			if (!left)
				left = pt_sample_gap(mean, (uint32_t)rand() * 2654435761u);
			b.sampled = pt_sample_hit(&left, b.size);
			if (b.sampled)
				left = pt_sample_gap(mean, (uint32_t)rand() * 2654435761u);
			blocks[s][nb[s]++] = b;
			pt_sample_weights(mean, b.size, &wb, &wc);
			if (b.sampled) {
				pt_peak_touch(&st[s], g.peak_seq);
				st[s].alloc_bytes += wb;
				st[s].alloc_count += wc;
				live[s] += wb;
			}
			g.live_bytes += b.size;
			g.live_count++;
			pt_peak_update(&g, g.live_bytes);
			total += b.size;
			/* Brute force: snapshot every stack's weighted live at each new maximum. */
			if (total > peak) {
				peak = total;
				memcpy(at_peak, live, sizeof(live));
			}
		}
	}
	if (g.peak_bytes != peak)
		bad++;
	for (s = 0; s < NSTACKS; s++)
		if (pt_peak_bytes_of(&st[s], g.peak_seq) != at_peak[s] || pt_live_bytes_of(&st[s]) != live[s])
			bad++;
	return bad;
}

int main(void)
{
	struct pt_stack_stats st[2];
	struct pt_global g;
	unsigned seed;
	int bad = 0;

	/* A hand-made case: A=100 and B=50 live (peak 150), A freed, B grows to 120 (total 120:
	 * no new peak). At the peak A held 100 and B 50. */
	memset(st, 0, sizeof(st));
	memset(&g, 0, sizeof(g));
	apply(&g, st, 0, 100);
	apply(&g, st, 1, 50);
	apply(&g, st, 0, -100);
	apply(&g, st, 1, 70);
	CHECK_EQ_U64(g.peak_bytes, 150, "peak live bytes");
	CHECK_EQ_U64(pt_peak_bytes_of(&st[0], g.peak_seq), 100, "stack A held 100 at the peak");
	CHECK_EQ_U64(pt_peak_bytes_of(&st[1], g.peak_seq), 50, "stack B held 50 at the peak");
	CHECK_EQ_U64(pt_peak_count_of(&st[1], g.peak_seq), 1, "stack B held 1 block at the peak");
	/* B grows past the old peak: the new peak is 180, all B's. */
	apply(&g, st, 1, 60);
	CHECK_EQ_U64(g.peak_bytes, 180, "new peak");
	CHECK_EQ_U64(pt_peak_bytes_of(&st[0], g.peak_seq), 0, "A held nothing at the new peak");
	CHECK_EQ_U64(pt_peak_bytes_of(&st[1], g.peak_seq), 180, "B held everything at the new peak");

	/* Live is derived: a block the live table could not hold is allocated, never live. */
	memset(st, 0, sizeof(st));
	st[0].alloc_count = 3;
	st[0].alloc_bytes = 30;
	st[0].free_count = 1;
	st[0].free_bytes = 10;
	st[0].unheld_count = 1;
	st[0].unheld_bytes = 10;
	CHECK_EQ_U64(pt_live_bytes_of(&st[0]), 10, "live bytes: alloc - free - unheld");
	CHECK_EQ_U64(pt_live_count_of(&st[0]), 1, "live count: alloc - free - unheld");

	for (seed = 1; seed <= 200; seed++)
		bad += run(seed, seed < 100 ? 200 : NEVENTS);
	CHECK(bad == 0, "200 random event sequences: peak and per-stack bytes at peak match brute force (%d mismatches)", bad);
	bad = 0;
	for (seed = 1; seed <= 200; seed++)
		bad += run_weighted(seed, seed < 100 ? 200 : NEVENTS, seed % 2 ? 8192 : 65536);
	CHECK(bad == 0, "200 sampled sequences (--sample-bytes 8K/64K): exact peak, weighted per-stack bytes at peak match brute force (%d mismatches)", bad);
	return CHECK_DONE();
}

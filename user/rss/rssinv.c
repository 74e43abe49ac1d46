// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rssinv.c — who held the anonymous RSS at one invocation's RSS peak: the lazy snapshot of
 * bpf/rss.bpf.h (rss_inv_peak[], rss_inv_seq[] of each stack), read when the invocation ends.
 */
#include <errno.h>
#include <stdlib.h>

#include "maps/mapread.h"
#include "invocation/invocation.h"

#define RSS_CHUNK 256

static int keep_stack(struct pt_inv_record *rec, uint32_t *cap, uint32_t k, int64_t b)
{
	if (rec->nrss_all == *cap) {
		/* Doubling: growing by one stack at a time copied the list at each stack. */
		uint32_t nc = *cap ? *cap * 2 : 64;
		struct pt_inv_stack *a = realloc(rec->rss_all, nc * sizeof(*a));

		if (!a)
			return -ENOMEM;
		rec->rss_all = a;
		*cap = nc;
	}
	rec->rss_all[rec->nrss_all].stack = k;
	rec->rss_all[rec->nrss_all].bytes = b;
	rec->rss_all[rec->nrss_all++].count = 0;
	return 0;
}

static void top_rss(struct pt_inv_record *rec, uint32_t k, int64_t b)
{
	uint32_t i, pos;

	for (pos = 0; pos < rec->nrss_top; pos++)
		if (b > rec->rss_top[pos].bytes)
			break;
	if (pos >= PT_INV_TOP)
		return;
	if (rec->nrss_top < PT_INV_TOP)
		rec->nrss_top++;
	for (i = rec->nrss_top - 1; i > pos; i--)
		rec->rss_top[i] = rec->rss_top[i - 1];
	rec->rss_top[pos].stack = k;
	rec->rss_top[pos].bytes = b;
	rec->rss_top[pos].count = 0;
}

int pt_inv_capture_rss(struct pt_inv_record *rec, uint64_t rss_seq, int stats_fd, uint32_t nstacks,
		       bool keep_all)
{
	static struct pt_stack_stats chunk[RSS_CHUNK];
	static uint32_t keys[RSS_CHUNK];
	uint32_t k, j, p = rec->seq & 1, cap = 0;
	int64_t b;
	int got;

	rec->nrss_top = 0;
	rec->rss_all = NULL;
	rec->nrss_all = 0;
	if (stats_fd < 0)
		return 0;
	/* By batches, as pt_inv_capture reads them: one lookup per stack was 131k system calls
	 * at each invocation's end with 2^17 stacks. */
	for (k = 0; k < nstacks; k += (uint32_t)got) {
		got = pt_map_read_range(stats_fd, k, nstacks - k < RSS_CHUNK ? nstacks - k : RSS_CHUNK,
					keys, chunk, sizeof(chunk[0]));
		if (got <= 0)
			return got ? got : -EIO;
		for (j = 0; j < (uint32_t)got; j++) {
			const struct pt_stack_stats *st = &chunk[j];

			/* Unchanged since that peak: what it holds now is what it held then. */
			b = st->rss_inv_seq[p] == rss_seq ? st->rss_inv_peak[p] : st->rss_now;
			if (b <= 0)
				continue;
			if (keep_all && keep_stack(rec, &cap, k + j, b))
				return -ENOMEM;
			top_rss(rec, k + j, b);
		}
	}
	return 0;
}

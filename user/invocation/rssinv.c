// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rssinv.c — who held the anonymous RSS at one invocation's RSS peak: the lazy snapshot of
 * bpf/rss.bpf.h (rss_inv_peak[], rss_inv_seq[] of each stack), read when the invocation ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>

#include "invocation/invocation.h"

int pt_inv_capture_rss(struct pt_inv_record *rec, uint64_t rss_seq, int stats_fd, uint32_t nstacks,
		       bool keep_all)
{
	struct pt_stack_stats st;
	uint32_t k, i, pos, p = rec->seq & 1;
	int64_t b;

	rec->nrss_top = 0;
	rec->rss_all = NULL;
	rec->nrss_all = 0;
	if (stats_fd < 0)
		return 0;
	for (k = 0; k < nstacks; k++) {
		if (bpf_map_lookup_elem(stats_fd, &k, &st))
			return -errno;
		/* Unchanged since that peak: what it holds now is what it held then. */
		b = st.rss_inv_seq[p] == rss_seq ? st.rss_inv_peak[p] : st.rss_now;
		if (b <= 0)
			continue;
		if (keep_all) {
			struct pt_inv_stack *a = realloc(rec->rss_all, (rec->nrss_all + 1) * sizeof(*a));

			if (!a)
				return -ENOMEM;
			rec->rss_all = a;
			rec->rss_all[rec->nrss_all].stack = k;
			rec->rss_all[rec->nrss_all].bytes = b;
			rec->rss_all[rec->nrss_all++].count = 0;
		}
		for (pos = 0; pos < rec->nrss_top; pos++)
			if (b > rec->rss_top[pos].bytes)
				break;
		if (pos >= PT_INV_TOP)
			continue;
		if (rec->nrss_top < PT_INV_TOP)
			rec->nrss_top++;
		for (i = rec->nrss_top - 1; i > pos; i--)
			rec->rss_top[i] = rec->rss_top[i - 1];
		rec->rss_top[pos].stack = k;
		rec->rss_top[pos].bytes = b;
		rec->rss_top[pos].count = 0;
	}
	return 0;
}

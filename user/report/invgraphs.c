// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* invgraphs.c — --per-invocation: folded stacks and a flame graph of each invocation's peak. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "profile/collect.h"
#include "report/report.h"

/* DIR/invocation-N.peak.folded and .svg: the stacks held at each invocation's own peak. */
void pt_report_invocation_graphs(const char *dir, const struct pt_inv_list *invs,
				 const struct pt_collect_in *all, struct pt_symbolizer *sym,
				 const char *comm)
{
	uint32_t nstk = all->nstacks, k, i;
	struct pt_stack_stats *st = calloc(nstk ? nstk : 1, sizeof(*st));

	if (!st)
		return;
	for (k = 0; k < invs->n; k++) {
		const struct pt_inv_record *ir = &invs->r[k];
		/* The same stacks, Python words and names; stats of this invocation's peak only,
		 * in whole counts (the weights are already applied). */
		struct pt_collect_in cin = *all;

		struct pt_profile prof;
		struct pt_map_stack *ms = NULL;
		uint32_t nms = 0;
		char path[4096], title[128], sub[512], b[32];
		FILE *f;

		if (!ir->nall)
			continue;
		cin.stats = st;
		cin.leaked = NULL;      /* the whole trace's leaks are not this peak's */
		cin.stack_out = NULL;
		cin.peak_seq = 1;
		cin.count_shift = 0;
		cin.cstats = NULL;
		memset(st, 0, nstk * sizeof(*st));
		/* A stats table that holds only this invocation's peak, in the fields the
		 * collector reads for "at the peak". */
		for (i = 0; i < ir->nall; i++) {
			if (ir->all[i].stack >= nstk)
				continue;
			st[ir->all[i].stack].alloc_count = 1;
			st[ir->all[i].stack].peak_bytes = ir->all[i].bytes;
			st[ir->all[i].stack].peak_count = ir->all[i].count;
			st[ir->all[i].stack].snap_seq = 1;
		}
		if (pt_collect(&cin, sym, &prof, &ms, &nms) == 0) {
			snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".peak.folded", dir, ir->seq);
			if ((f = fopen(path, "w"))) {
				pt_write_folded(f, &prof, PT_PEAK_BYTES);
				fclose(f);
			}
			snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".peak.svg", dir, ir->seq);
			snprintf(title, sizeof(title), "%s %" PRIu64 ": heap live at its peak",
				 ir->seq ? "Invocation" : "Init phase", ir->seq);
			snprintf(sub, sizeof(sub), "%s %s: peak heap %s", comm, ir->id,
				 pt_fmt_bytes(b, sizeof(b), (double)ir->heap_peak));
			if ((f = fopen(path, "w"))) {
				pt_write_flamegraph(f, &prof, PT_PEAK_BYTES, title, sub);
				fclose(f);
			}
		}
		for (i = 0; i < nms; i++)
			free(ms[i].frames);
		free(ms);
		pt_profile_free(&prof);
	}
	free(st);
}

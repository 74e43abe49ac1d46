// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* invgraphs.c — --per-invocation: folded stacks and a flame graph of each invocation's peaks
 * (heap and RSS). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "profile/collect.h"
#include "output/output.h"
#include "invocation/invgraphs.h"

/* What one per-invocation graph shows: a stats table holding only that invocation's figures,
 * in the fields the collector reads for the metric, and its file and labels. */
struct inv_view {
	const char *suffix;   /* invocation-N.SUFFIX.folded / .svg */
	enum pt_metric m;
	const char *title;    /* after "Invocation N: " */
	const char *figure;   /* the subtitle's figure, e.g. "peak heap" */
	const char *note;     /* appended to the subtitle */
	bool (*has)(const struct pt_inv_record *ir);
	void (*fill)(const struct pt_inv_record *ir, struct pt_stack_stats *st, uint32_t nstk);
	int64_t (*value)(const struct pt_inv_record *ir);
};

static bool heap_has(const struct pt_inv_record *ir) { return ir->nall > 0; }
static int64_t heap_value(const struct pt_inv_record *ir) { return ir->heap_peak; }

static void heap_fill(const struct pt_inv_record *ir, struct pt_stack_stats *st, uint32_t nstk)
{
	for (uint32_t i = 0; i < ir->nall; i++) {
		if (ir->all[i].stack >= nstk)
			continue;
		/* A heap stack (alloc_count), holding nothing live now (alloc - unheld). */
		st[ir->all[i].stack].alloc_count = 1;
		st[ir->all[i].stack].unheld_count = 1;
		st[ir->all[i].stack].peak_bytes = ir->all[i].bytes;
		st[ir->all[i].stack].peak_count = ir->all[i].count;
		st[ir->all[i].stack].snap_seq = 1;
	}
}

static bool rss_has(const struct pt_inv_record *ir) { return ir->nrss_all > 0; }
static int64_t rss_value(const struct pt_inv_record *ir) { return ir->rss_peak; }

static void rss_fill(const struct pt_inv_record *ir, struct pt_stack_stats *st, uint32_t nstk)
{
	for (uint32_t i = 0; i < ir->nrss_all; i++) {
		if (ir->rss_all[i].stack >= nstk)
			continue;
		st[ir->rss_all[i].stack].rss_now = ir->rss_all[i].bytes;
		st[ir->rss_all[i].stack].rss_peak = ir->rss_all[i].bytes;
		st[ir->rss_all[i].stack].rss_snap_seq = 1;
	}
}

static const struct inv_view views[] = {
	{ "peak", PT_PEAK_BYTES, "heap live at its peak", "peak heap", "", heap_has, heap_fill, heap_value },
	{ "rss", PT_RSS_PEAK_BYTES, "anonymous RSS at its RSS peak, by who faulted it in", "peak RSS",
	  " (the attributed anonymous part drawn)", rss_has, rss_fill, rss_value },
};

/* f closed, its bytes counted against --max-output. */
static void graph_close(FILE *f, struct pt_outcap *out)
{
	long n = ftell(f);

	if (n > 0)
		out->used += (uint64_t)n;
	fclose(f);
}

/* Room left under --max-output for another file (else counted as not written). */
static bool graph_room(struct pt_outcap *out)
{
	if (!out->cap || out->used < out->cap)
		return true;
	out->graphs_cut++;
	return false;
}

static void inv_graph(const char *dir, const struct pt_inv_record *ir, const struct pt_collect_in *all,
		      struct pt_stack_stats *st, const struct inv_view *v, struct pt_symbolizer *sym,
		      const char *comm, struct pt_outcap *out)
{
	/* The same stacks, Python words and names; stats of this invocation's figures only, in
	 * whole counts (the weights are already applied), and none of the whole trace's
	 * per-stack outputs (leaks, where each kernel stack went). */
	struct pt_collect_in cin = *all;
	struct pt_profile prof;
	struct pt_map_stack *ms = NULL;
	uint32_t nms = 0, i;
	char path[4096], title[160], sub[1024], b[32];
	FILE *f;

	if (out->cap && out->used >= out->cap) {   /* neither file: not worth collecting */
		out->graphs_cut += 2;
		return;
	}
	cin.stats = st;
	cin.leaked = NULL;
	cin.stack_out = NULL;
	cin.peak_seq = 1;
	cin.rss_peak_seq = 1;
	cin.count_shift = 0;
	cin.cstats = NULL;
	memset(st, 0, all->nstacks * sizeof(*st));
	v->fill(ir, st, all->nstacks);
	if (pt_collect(&cin, sym, &prof, &ms, &nms) == 0) {
		snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".%s.folded", dir, ir->seq, v->suffix);
		if (graph_room(out) && (f = pt_output_fopen(path))) {
			pt_write_folded(f, &prof, v->m);
			graph_close(f, out);
		}
		snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".%s.svg", dir, ir->seq, v->suffix);
		snprintf(title, sizeof(title), "%s %" PRIu64 ": %s", ir->seq ? "Invocation" : "Init phase",
			 ir->seq, v->title);
		snprintf(sub, sizeof(sub), "%s %s: %s %s%s", comm, ir->id, v->figure,
			 pt_fmt_bytes(b, sizeof(b), (double)v->value(ir)), v->note);
		if (graph_room(out) && (f = pt_output_fopen(path))) {
			pt_write_flamegraph(f, &prof, v->m, title, sub);
			graph_close(f, out);
		}
	}
	for (i = 0; i < nms; i++)
		free(ms[i].frames);
	free(ms);
	pt_profile_free(&prof);
}

/* DIR/invocation-N.peak.* (the heap held at each invocation's own peak) and invocation-N.rss.*
 * (the anonymous RSS at its RSS peak, by the stack that faulted it in). */
void pt_inv_graphs_write(const char *dir, const struct pt_inv_list *invs,
				 const struct pt_collect_in *all, struct pt_symbolizer *sym,
				 const char *comm, struct pt_outcap *out)
{
	struct pt_stack_stats *st = calloc(all->nstacks ? all->nstacks : 1, sizeof(*st));

	if (!st)
		return;
	for (uint32_t k = 0; k < invs->n; k++)
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
			if (views[v].has(&invs->r[k]))
				inv_graph(dir, &invs->r[k], all, st, &views[v], sym, comm, out);
	free(st);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * killed.c — the post-mortem of an invocation the process died in (killed.h).
 *
 * Both views are the invocation's own, taken when it ended (invocation/invocation.c,
 * rss/rssinv.c), so a target gone by the end keeps them: the heap blocks live at its
 * heap peak, and the resident anonymous pages at its RSS peak by the stack whose fault made
 * each resident. The pages are what a memory limit counts: for a Python handler buffering
 * strings, most of them are CPython's pymalloc arenas, which no heap block shows. Their memory
 * kind is the stack's (rss/rsskind.h), told against the maps kept while the target ran when
 * its maps were gone by the end.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "util/fmt.h"
#include "profile/collect.h"
#include "report/report.h"
#include "output/holder.h"
#include "report/killed.h"

bool pt_killed_rss_first(const struct pt_inv_record *ir)
{
	if (ir->light || !ir->ntop)
		return true;
	return ir->nrss_top && ir->rss_top[0].bytes >= ir->top[0].bytes;
}

static int64_t covered(const struct pt_inv_stack *s, uint32_t n)
{
	int64_t sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		sum += s[i].bytes;
	return sum;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* "the 5 biggest hold 98.0 MiB, 71.8% of it" */
static void set_line(FILE *f, const char *what, const struct pt_inv_stack *s, uint32_t n, int64_t rss)
{
	char b1[32];

	fprintf(f, "  %s: ", what);
	if (!n) {
		fprintf(f, "none\n");
		return;
	}
	fprintf(f, "the %u biggest hold %s, %.1f%% of it\n", n,
		pt_fmt_bytes(b1, sizeof(b1), (double)covered(s, n)), 100.0 * share(covered(s, n), rss));
}

/* A holder's frames as the first screen shows them (output/holder.h): the named ones past the
 * runs of stripped and allocator frames, and the program's own. */
static void holder_text(FILE *f, const struct pt_report *r, uint32_t idx)
{
	struct pt_profile p;
	uint32_t fr[PT_MAX_MERGED];
	struct pt_stack s = { .frames = fr };

	if (pt_inv_stack_frames(&r->inv_stacks, idx, &p, fr, &s.nframes)) {
		fprintf(f, "        [unknown stack]\n");
		return;
	}
	pt_holder_text(f, &p, &s);
	pt_profile_free(&p);
}

static void rss_holders_text(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir)
{
	char b1[32];
	uint32_t t;

	set_line(f, "resident pages, by the stack whose fault made them resident", ir->rss_top,
		 ir->nrss_top, ir->rss_peak);
	if (ir->nrss_top && !r->rss.kinds.read)
		fprintf(f, "    memory kinds not known: the target's maps could not be read at the end, and "
			   "none were kept while it ran\n");
	else if (ir->nrss_top && r->rss.kinds.from_kept)
		fprintf(f, "    memory kinds told against its maps as last read while it ran (%.0f ms before "
			   "the end: they were gone by then)\n", r->rss.kinds.end_ns > r->rss.kinds.kept_ns ?
			   (double)(r->rss.kinds.end_ns - r->rss.kinds.kept_ns) / 1e6 : 0.0);
	for (t = 0; t < ir->nrss_top; t++) {
		fprintf(f, "    #%u %s (%.1f%%) [%s]\n", t + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_top[t].bytes),
			100.0 * share(ir->rss_top[t].bytes, ir->rss_peak),
			pt_mem_kind_name(pt_rss_kind_of_stack(&r->rss.kinds, ir->rss_top[t].stack)));
		holder_text(f, r, ir->rss_top[t].stack);
	}
}

static void heap_holders_text(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir)
{
	char b1[32];
	uint32_t t;

	set_line(f, "heap blocks live at its heap peak, by the stack that allocated them", ir->top,
		 ir->ntop, ir->rss_peak);
	for (t = 0; t < ir->ntop; t++) {
		fprintf(f, "    #%u %s (%.1f%%) in %" PRId64 " block%s\n", t + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->top[t].bytes),
			100.0 * share(ir->top[t].bytes, ir->rss_peak), ir->top[t].count,
			ir->top[t].count == 1 ? "" : "s");
		holder_text(f, r, ir->top[t].stack);
	}
}

void pt_killed_text(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir)
{
	char b1[32], b2[32];
	uint32_t t;

	fprintf(f, "\nKILLED during %s %" PRIu64 " (RequestId %s): peak RSS %s, peak heap %s\n",
		ir->seq ? "invocation" : ir->attached ? "the time since attaching" : "the init phase", ir->seq,
		ir->id[0] ? ir->id : "?", pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak),
		ir->light ? "not traced (--light)" : pt_fmt_bytes(b2, sizeof(b2), (double)ir->heap_peak));
	fprintf(f, "  RSS trajectory (ms since its start: RSS): 0: %s",
		pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_start));
	for (t = 0; t < ir->traj_n; t++)
		fprintf(f, ", %.1f: %s",
			ir->traj[t].t_ns > ir->start_ns ? (ir->traj[t].t_ns - ir->start_ns) / 1e6 : 0.0,
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->traj[t].rss));
	fprintf(f, "\n  who held its memory at its RSS peak of %s (where a memory limit kills it), the view "
		   "with the bigger holder first; %% of that RSS:\n",
		pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak));
	if (ir->light) {
		rss_holders_text(f, r, ir);
		fprintf(f, "  heap blocks: not traced (--light)\n");
	} else if (pt_killed_rss_first(ir)) {
		rss_holders_text(f, r, ir);
		heap_holders_text(f, r, ir);
	} else {
		heap_holders_text(f, r, ir);
		rss_holders_text(f, r, ir);
	}
	fprintf(f, "  what was resident or live at the moment of death: TOP STACKS HOLDING RSS, "
		   "TOP STACKS LIVE AT END below\n");
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void json_set_head(FILE *f, const struct pt_inv_stack *s, uint32_t n, int64_t rss)
{
	fprintf(f, "{\"covered_bytes\": %" PRId64 ", \"covered_fraction\": %.4f, ", covered(s, n),
		share(covered(s, n), rss));
}

static void json_rss_holders(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir)
{
	uint32_t t;

	json_set_head(f, ir->rss_top, ir->nrss_top, ir->rss_peak);
	fprintf(f, "\"kinds_from\": \"%s\", \"stacks\": [", pt_rss_kinds_source(&r->rss.kinds));
	for (t = 0; t < ir->nrss_top; t++) {
		enum pt_mem_kind k = pt_rss_kind_of_stack(&r->rss.kinds, ir->rss_top[t].stack);

		fprintf(f, "%s{\"rss_bytes\": %" PRId64 ", \"fraction\": %.4f, \"kind\": \"%s\", \"kind_key\": "
			   "\"%s\", \"frames\": ", t ? ", " : "", ir->rss_top[t].bytes,
			share(ir->rss_top[t].bytes, ir->rss_peak), pt_mem_kind_name(k), pt_mem_kind_key(k));
		pt_inv_json_frames(f, &r->inv_stacks, ir->rss_top[t].stack);
		fputc('}', f);
	}
	fputs("]}", f);
}

static void json_heap_holders(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir)
{
	uint32_t t;

	if (ir->light) {
		fputs("null", f);
		return;
	}
	json_set_head(f, ir->top, ir->ntop, ir->rss_peak);
	fputs("\"stacks\": [", f);
	for (t = 0; t < ir->ntop; t++) {
		fprintf(f, "%s{\"bytes\": %" PRId64 ", \"count\": %" PRId64 ", \"fraction\": %.4f, \"frames\": ",
			t ? ", " : "", ir->top[t].bytes, ir->top[t].count, share(ir->top[t].bytes, ir->rss_peak));
		pt_inv_json_frames(f, &r->inv_stacks, ir->top[t].stack);
		fputc('}', f);
	}
	fputs("]}", f);
}

void pt_killed_json(FILE *f, const struct pt_report *r)
{
	uint32_t k;
	int n = 0;

	fputs("  \"killed\": [", f);
	for (k = 0; r->invs && k < r->invs->n; k++) {
		const struct pt_inv_record *ir = &r->invs->r[k];

		if (ir->outcome != PT_OUT_KILLED)
			continue;
		fprintf(f, "%s\n    {\"seq\": %" PRIu64 ", \"request_id\": ", n++ ? "," : "", ir->seq);
		pt_json_str(f, ir->id);
		fprintf(f, ", \"exit_signal\": ");
		if (ir->exit_signal > 0)
			fprintf(f, "%d", ir->exit_signal);
		else
			fputs("null", f);
		fprintf(f, ", \"rss_peak_bytes\": %" PRId64 ", \"first\": \"%s\", \"rss_holders\": ",
			ir->rss_peak, pt_killed_rss_first(ir) ? "rss_holders" : "heap_holders");
		json_rss_holders(f, r, ir);
		fputs(", \"heap_holders\": ", f);
		json_heap_holders(f, r, ir);
		fputc('}', f);
	}
	fprintf(f, "%s],\n", n ? "\n  " : "");
}

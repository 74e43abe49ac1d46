// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jsonstacks.c — report.json's stack lists, written as pprof and speedscope do: each frame
 * once in "frame_table", each stack a list of indexes into it. With 100k+ distinct stacks
 * the frames repeated per stack were most of the file (2.4 KB a stack); by index a stack is
 * a line of figures and a few dozen digits. Only the top N stacks by each figure the text
 * report ranks (peak, live, allocated bytes) are kept unless --json-stacks all; the figures of
 * the others are summed in "stacks_left_out", so kept + left out == totals, exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "report/report.h"

static const int heap_metrics[] = {
	PT_ALLOC_COUNT, PT_ALLOC_BYTES, PT_FREE_COUNT, PT_FREE_BYTES,
	PT_LIVE_COUNT, PT_LIVE_BYTES, PT_PEAK_COUNT, PT_PEAK_BYTES,
	PT_LEAKED_COUNT, PT_LEAKED_BYTES,
};
static const char *const heap_names[] = {
	"alloc_count", "alloc_bytes", "free_count", "free_bytes",
	"live_count", "live_bytes", "peak_count", "peak_bytes",
	"leaked_count", "leaked_bytes",
};
#define NHEAP ((int)(sizeof(heap_metrics) / sizeof(heap_metrics[0])))

/* A heap stack has a heap figure; one with only page-fault RSS (rss_attribution) has none. */
static bool heap_stack(const struct pt_stack *s)
{
	for (int k = 0; k < NHEAP; k++)
		if (s->v[heap_metrics[k]])
			return true;
	return false;
}

struct rank_ctx {
	const struct pt_profile *p;
	int m;
};

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const struct rank_ctx *c = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	uint64_t va = c->p->stacks[ia].v[c->m], vb = c->p->stacks[ib].v[c->m];

	if (va != vb)
		return va < vb ? 1 : -1;
	return ia < ib ? -1 : ia > ib;
}

/* Marks the top n stacks by metric m (bytes; ties and zero-byte stacks by index, as the text
 * report ranks them) among those with any bytes or count of it. */
static void keep_top(const struct pt_profile *p, uint32_t *idx, int m_bytes, int m_count,
		     uint32_t n, bool *keep)
{
	struct rank_ctx c = { p, m_bytes };
	uint32_t i, k = 0;

	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].v[m_bytes] || p->stacks[i].v[m_count])
			idx[k++] = i;
	/* The first n in order, without sorting the rest. */
	if (pt_stacks_top(p, m_bytes, idx, k, n))
		qsort_r(idx, k, sizeof(*idx), cmp_rank, &c);
	for (i = 0; i < k && i < n; i++)
		keep[idx[i]] = true;
}

static int cmp_mrank(const void *a, const void *b, void *arg)
{
	const struct pt_map_stack *ms = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;

	if (ms[ia].mmap_bytes != ms[ib].mmap_bytes)
		return ms[ia].mmap_bytes < ms[ib].mmap_bytes ? 1 : -1;
	if (ms[ia].munmap_bytes != ms[ib].munmap_bytes)
		return ms[ia].munmap_bytes < ms[ib].munmap_bytes ? 1 : -1;
	return ia < ib ? -1 : ia > ib;
}

static void use_frames(struct pt_json_sel *sel, const uint32_t *fr, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++)
		if (sel->fmap[fr[j]] == UINT32_MAX) {
			sel->fmap[fr[j]] = sel->nframes;
			sel->forder[sel->nframes++] = fr[j];
		}
}

int pt_json_sel_init(struct pt_json_sel *sel, const struct pt_report *r)
{
	const struct pt_profile *p = &r->prof;
	uint32_t n = r->json_stacks, nidx = p->nstacks > r->nmstacks ? p->nstacks : r->nmstacks;
	uint32_t *idx = NULL, i, k;

	memset(sel, 0, sizeof(*sel));
	sel->keep = calloc(p->nstacks + 1, sizeof(*sel->keep));
	sel->mkeep = calloc(r->nmstacks + 1, sizeof(*sel->mkeep));
	sel->fmap = malloc((p->nframes + 1) * sizeof(*sel->fmap));
	sel->forder = malloc((p->nframes + 1) * sizeof(*sel->forder));
	idx = malloc((nidx + 1) * sizeof(*idx));
	if (!sel->keep || !sel->mkeep || !sel->fmap || !sel->forder || !idx) {
		free(idx);
		pt_json_sel_free(sel);
		return -ENOMEM;
	}
	memset(sel->fmap, 0xff, (p->nframes + 1) * sizeof(*sel->fmap));
	if (!n || n >= p->nstacks) {
		for (i = 0; i < p->nstacks; i++)
			sel->keep[i] = true;
	} else {
		keep_top(p, idx, PT_PEAK_BYTES, PT_PEAK_COUNT, n, sel->keep);
		keep_top(p, idx, PT_LIVE_BYTES, PT_LIVE_COUNT, n, sel->keep);
		keep_top(p, idx, PT_ALLOC_BYTES, PT_ALLOC_COUNT, n, sel->keep);
		keep_top(p, idx, PT_LEAKED_BYTES, PT_LEAKED_COUNT, n, sel->keep);
	}
	/* A stack with only page-fault RSS (no heap figure) is no heap stack: never in "stacks". */
	for (i = 0; i < p->nstacks; i++)
		if (!heap_stack(&p->stacks[i]))
			sel->keep[i] = false;
	sel->jidx = malloc((p->nstacks + 1) * sizeof(*sel->jidx));
	if (!sel->jidx) {
		free(idx);
		pt_json_sel_free(sel);
		return -ENOMEM;
	}
	for (i = 0, k = 0; i < p->nstacks; i++)
		sel->jidx[i] = sel->keep[i] ? k++ : UINT32_MAX;
	if (!n || n >= r->nmstacks) {
		for (i = 0; i < r->nmstacks; i++)
			sel->mkeep[i] = true;
	} else {
		for (i = 0; i < r->nmstacks; i++)
			idx[i] = i;
		qsort_r(idx, r->nmstacks, sizeof(*idx), cmp_mrank, r->mstacks);
		for (i = 0; i < n; i++)
			sel->mkeep[idx[i]] = true;
	}
	free(idx);
	/* The frame table in the order the kept stacks first use each frame. */
	for (i = 0; i < p->nstacks; i++)
		if (sel->keep[i])
			use_frames(sel, p->stacks[i].frames, p->stacks[i].nframes);
	for (i = 0; i < r->nmstacks; i++)
		if (sel->mkeep[i])
			use_frames(sel, r->mstacks[i].frames, r->mstacks[i].nframes);
	return 0;
}

void pt_json_sel_free(struct pt_json_sel *sel)
{
	free(sel->keep);
	free(sel->mkeep);
	free(sel->fmap);
	free(sel->forder);
	free(sel->jidx);
	memset(sel, 0, sizeof(*sel));
}

static void frame_table(FILE *f, const struct pt_profile *p, const struct pt_json_sel *sel)
{
	fprintf(f, "  \"frame_table\": [");
	for (uint32_t i = 0; i < sel->nframes; i++) {
		const struct pt_frame *x = &p->frames[sel->forder[i]];

		fprintf(f, "%s\n    {\"func\": ", i ? "," : "");
		pt_json_str(f, x->func);
		fprintf(f, ", \"module\": ");
		pt_json_str(f, x->module ? x->module : "");
		fprintf(f, ", \"addr\": \"0x%" PRIx64 "\", \"offset\": \"0x%" PRIx64 "\"", x->addr,
			x->offset);
		if (x->file && x->line) {
			fprintf(f, ", \"file\": ");
			pt_json_str(f, x->file);
			fprintf(f, ", \"line\": %" PRIu32, x->line);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n");
}

static void frame_refs(FILE *f, const struct pt_json_sel *sel, const uint32_t *fr, uint32_t n)
{
	fputc('[', f);
	for (uint32_t j = 0; j < n; j++) {
		if (j)
			putc(',', f);
		pt_put_u64(f, sel->fmap[fr[j]]);
	}
	fputc(']', f);
}

static void json_limit(FILE *f, const struct pt_report *r)
{
	if (r->json_stacks)
		fprintf(f, "\"limit\": %" PRIu32, r->json_stacks);
	else
		fprintf(f, "\"limit\": null");
}


void pt_json_heap_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel)
{
	const struct pt_profile *p = &r->prof;
	uint64_t out[NHEAP] = { 0 }, nout = 0, rss_only = 0;
	uint32_t i, n = 0;
	int k;

	frame_table(f, p, sel);
	fprintf(f, "  \"stacks\": [");
	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (!sel->keep || !sel->keep[i]) {
			for (k = 0; k < NHEAP; k++)
				out[k] += s->v[heap_metrics[k]];
			if (heap_stack(s))
				nout++;
			else
				rss_only++;
			continue;
		}
		fprintf(f, "%s\n    {", n++ ? "," : "");
		for (k = 0; k < NHEAP; k++)
			fprintf(f, "\"%s\": %" PRIu64 ", ", heap_names[k], s->v[heap_metrics[k]]);
		fprintf(f, "\"loader_init\": %s, \"frames\": ", pt_stack_loader_init(p, s) ? "true" : "false");
		frame_refs(f, sel, s->frames, s->nframes);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"stacks_left_out\": {");
	json_limit(f, r);
	fprintf(f, ", \"stacks\": %" PRIu64 ", \"rss_only_stacks\": %" PRIu64, nout, rss_only);
	for (k = 0; k < NHEAP; k++)
		fprintf(f, ", \"%s\": %" PRIu64, heap_names[k], out[k]);
	fprintf(f, "},\n");
}

void pt_json_map_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel)
{
	uint64_t out[4] = { 0 }, nout = 0;
	uint32_t i, n = 0;

	fprintf(f, "  \"mmap_stacks\": [");
	for (i = 0; i < r->nmstacks; i++) {
		const struct pt_map_stack *s = &r->mstacks[i];

		if (!sel->mkeep || !sel->mkeep[i]) {
			out[0] += s->mmap_count;
			out[1] += s->mmap_bytes;
			out[2] += s->munmap_count;
			out[3] += s->munmap_bytes;
			nout++;
			continue;
		}
		fprintf(f, "%s\n    {\"mmap_count\": %" PRIu64 ", \"mmap_bytes\": %" PRIu64
			   ", \"munmap_count\": %" PRIu64 ", \"munmap_bytes\": %" PRIu64 ", \"frames\": ",
			n++ ? "," : "", s->mmap_count, s->mmap_bytes, s->munmap_count, s->munmap_bytes);
		frame_refs(f, sel, s->frames, s->nframes);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"mmap_stacks_left_out\": {");
	json_limit(f, r);
	fprintf(f, ", \"stacks\": %" PRIu64 ", \"mmap_count\": %" PRIu64 ", \"mmap_bytes\": %" PRIu64
		   ", \"munmap_count\": %" PRIu64 ", \"munmap_bytes\": %" PRIu64 "}", nout, out[0],
		out[1], out[2], out[3]);
}

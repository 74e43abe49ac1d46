// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rss.c — who held the anonymous RSS at its peak: each stack's pages (bpf/rss.bpf.h, profile
 * metrics PT_RSS_PEAK_BYTES and PT_RSS_NOW_BYTES) and the unattributed buckets beside them, in
 * the text report, report.json ("rss_attribution") and DIR/rss.folded, DIR/rss.svg, whose
 * root frames include the buckets, and the file and shmem objects with their own buckets
 * (rssobj.c), so the graph's total is the whole RSS at the peak.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "profile/collect.h"
#include "output/output.h"
#include "output/holder.h"
#include "rss/rss.h"

#define RSS_TOP 5
#define RSS_FRAMES 8

/* Root frames of the unattributed buckets (rss.folded, rss.svg, the text report). */
#define NBUCKETS 5
static const char *const bucket_names[NBUCKETS] = {
	"[resident before tracing]",
	"[populated without a fault]",
	"[added by another task]",
	"[page table full]",
	"[concurrent faults]",
};

void pt_rss_split_of(const struct pt_rss_figures *fig, int64_t anon, struct pt_rss_split *s)
{
	int64_t freed = fig->freed_unowned, reclaimed = fig->reclaimed, refaulted = fig->refaulted;
	int64_t sum;

	memset(s, 0, sizeof(*s));
	s->anon = anon;
	s->attributed = fig->attributed;
	s->before = fig->before;
	s->no_fault = fig->no_fault;
	s->other_task = fig->other_task;
	s->table_full = fig->table_full;
	s->raced = fig->raced;
	/* A fault onto a page still attributed: the page had gone by a path not seen (reclaim,
	 * or a decrement counted as freed_unowned): those pages were attributed ones. */
	refaulted = pt_rss_take(&reclaimed, refaulted);
	refaulted = pt_rss_take(&freed, refaulted);
	freed = pt_rss_take(&s->no_fault, freed);
	freed = pt_rss_take(&s->other_task, freed);
	freed = pt_rss_take(&s->before, freed);
	freed = pt_rss_take(&s->table_full, freed);
	s->over = reclaimed - refaulted + fig->pending + freed;
	s->unattributed = anon - s->attributed;
	sum = s->attributed + s->before + s->no_fault + s->other_task + s->table_full + s->raced -
	      s->over;
	s->mismatch = anon - sum;
}

static void split_at(const struct pt_rss_view *v, bool peak, struct pt_rss_split *s)
{
	if (peak)
		pt_rss_split_of(&v->rss->kernel.at_peak, v->rss->kernel.at_peak.anon, s);
	else
		pt_rss_split_of(&v->rss->kernel.now, v->totals->rss[PT_RSS_ANON], s);
}

static const int64_t *bucket_vals(const struct pt_rss_split *s, int64_t v[NBUCKETS])
{
	v[0] = s->before;
	v[1] = s->no_fault;
	v[2] = s->other_task;
	v[3] = s->table_full;
	v[4] = s->raced;
	return v;
}

/* ---- text ----------------------------------------------------------------------------------- */

static int cmp_idx_desc(const void *a, const void *b, void *ctx)
{
	const struct pt_profile *p = ctx;
	uint64_t x = p->stacks[*(const uint32_t *)a].v[PT_RSS_PEAK_BYTES];
	uint64_t y = p->stacks[*(const uint32_t *)b].v[PT_RSS_PEAK_BYTES];

	return x < y ? 1 : x > y ? -1 : 0;
}

uint32_t *pt_rss_ranked(const struct pt_profile *p, uint32_t *n)
{
	uint32_t *idx = calloc(p->nstacks + 1, sizeof(*idx)), i;

	*n = 0;
	if (!idx)
		return NULL;
	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].v[PT_RSS_PEAK_BYTES])
			idx[(*n)++] = i;
	qsort_r(idx, *n, sizeof(*idx), cmp_idx_desc, (void *)p);
	return idx;
}

static void split_line(FILE *f, const char *what, const struct pt_rss_split *s)
{
	char b1[32], b2[32], b3[32];
	int64_t v[NBUCKETS];
	int i;

	fprintf(f, "  %s: anon RSS %s = attributed %s + unattributed %s", what,
		pt_fmt_bytes(b1, sizeof(b1), (double)s->anon),
		pt_fmt_bytes(b2, sizeof(b2), (double)s->attributed),
		pt_fmt_bytes(b3, sizeof(b3), (double)s->unattributed));
	bucket_vals(s, v);
	for (i = 0; i < NBUCKETS; i++)
		if (v[i])
			fprintf(f, "; %s %s", bucket_names[i], pt_fmt_bytes(b1, sizeof(b1), (double)v[i]));
	if (s->over)
		fprintf(f, "; released by the kernel or a syscall in progress but still attributed %s",
			pt_fmt_bytes(b1, sizeof(b1), (double)s->over));
	if (s->mismatch)
		fprintf(f, "; unexplained %" PRId64 " bytes", s->mismatch);
	fputc('\n', f);
}

#define RSS_SUMMARY 3

void pt_rss_summary_text(FILE *f, const struct pt_rss_view *v)
{
	const struct pt_profile *p = v->prof;
	struct pt_rss_split pk;
	uint32_t *idx, n, i;
	char b1[32], b2[32];

	/* --light traces no heap: the RSS holders are the only holders there are. */
	if (!v->light && !pt_rss_first_screen((int64_t)v->totals->peak_bytes, (int64_t)v->totals->rss_peak))
		return;
	idx = pt_rss_ranked(p, &n);
	if (!idx)
		return;
	split_at(v, true, &pk);
	if (v->light)
		fprintf(f, "\nWHO HELD THE RSS (top %u of %u stacks holding anonymous RSS at the RSS peak; "
			   "TOP STACKS HOLDING RSS below)\n", n < RSS_SUMMARY ? n : RSS_SUMMARY, n);
	else
		fprintf(f, "\nWHO HELD THE RSS (the live heap at its peak, %s, was under half the peak RSS, "
			   "%s: top %u of %u stacks holding anonymous RSS at the RSS peak; TOP STACKS "
			   "HOLDING RSS below)\n", pt_fmt_bytes(b1, sizeof(b1), (double)v->totals->peak_bytes),
			pt_fmt_bytes(b2, sizeof(b2), (double)v->totals->rss_peak), n < RSS_SUMMARY ? n : RSS_SUMMARY,
			n);
	if (!n)
		fprintf(f, "  (no stack holds anonymous pages at the peak)\n");
	for (i = 0; i < n && i < RSS_SUMMARY && (int)i < v->top; i++) {
		const struct pt_stack *s = &p->stacks[idx[i]];

		fprintf(f, "  #%-2u %s (%.1f%% of the anonymous RSS)%s%s%s\n", i + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)s->v[PT_RSS_PEAK_BYTES]),
			pk.anon > 0 ? 100.0 * (double)s->v[PT_RSS_PEAK_BYTES] / (double)pk.anon : 0,
			v->rss->kinds.read ? " [" : "", v->rss->kinds.read ? pt_mem_kind_name(s->rss_kind) : "",
			v->rss->kinds.read ? "]" : "");
		pt_holder_text(f, p, s);
	}
	free(idx);
}

void pt_rss_text(FILE *f, const struct pt_rss_view *v)
{
	const struct pt_profile *p = v->prof;
	struct pt_rss_split pk, end;
	uint32_t *idx, n, i, j;
	char b1[32], b2[32];

	split_at(v, true, &pk);
	split_at(v, false, &end);
	fprintf(f, "\nTOP STACKS HOLDING RSS AT THE PEAK (anonymous pages, by the stack that faulted them in)\n");
	split_line(f, "at the RSS peak", &pk);
	split_line(f, "at the end", &end);
	fprintf(f, "  %" PRIu64 " page faults seen, %" PRIu64 " made anonymous pages resident",
		(uint64_t)v->rss->kernel.faults, (uint64_t)v->rss->kernel.faults_used);
	if (v->rss->kernel.odd_size)
		fprintf(f, "; %" PRIu64 " reported together with another thread's (their excess: [concurrent faults])",
			(uint64_t)v->rss->kernel.odd_size);
	if (v->rss->kernel.table_full_events)
		fprintf(f, "; page table full %" PRIu64 " times", (uint64_t)v->rss->kernel.table_full_events);
	if (v->rss->kernel.removals_capped)
		fprintf(f, "; %" PRIu64 " removals over more than 2 TiB visited only their first 2 TiB",
			(uint64_t)v->rss->kernel.removals_capped);
	if (v->rss->kernel.stacks_cut)
		fprintf(f, "; %" PRIu64 " of their stacks cut short by the unwinder (frames kept so far)",
			(uint64_t)v->rss->kernel.stacks_cut);
	fputc('\n', f);
	pt_rss_kinds_text(f, v);
	pt_rss_python_note(f, v, false);
	idx = pt_rss_ranked(p, &n);
	if (!idx)
		return;
	for (i = 0; i < n && i < RSS_TOP && (int)i < v->top; i++) {
		const struct pt_stack *s = &p->stacks[idx[i]];

		fprintf(f, "  #%-2u %s at the peak (%.1f%%), %s at the end%s%s%s\n", i + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)s->v[PT_RSS_PEAK_BYTES]),
			pk.anon > 0 ? 100.0 * (double)s->v[PT_RSS_PEAK_BYTES] / (double)pk.anon : 0,
			pt_fmt_bytes(b2, sizeof(b2), (double)s->v[PT_RSS_NOW_BYTES]),
			v->rss->kinds.read ? " [" : "", v->rss->kinds.read ? pt_mem_kind_name(s->rss_kind) : "",
			v->rss->kinds.read ? "]" : "");
		for (j = 0; j < s->nframes && j < RSS_FRAMES; j++) {
			char *l = pt_frame_label(&p->frames[s->frames[j]]);

			fprintf(f, "        %s\n", l ? l : "?");
			free(l);
		}
		if (s->nframes > RSS_FRAMES)
			fprintf(f, "        ... %u more frames\n", s->nframes - RSS_FRAMES);
	}
	if (!n)
		fprintf(f, "  (no stack holds anonymous pages at the peak)\n");
	free(idx);
	pt_rss_objs_text(f, v);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void json_split(FILE *f, const struct pt_rss_split *s)
{
	fprintf(f, "{\"anon_bytes\": %" PRId64 ", \"attributed_bytes\": %" PRId64
		   ", \"unattributed_bytes\": %" PRId64 ", \"resident_before_bytes\": %" PRId64
		   ", \"populated_without_fault_bytes\": %" PRId64 ", \"other_task_bytes\": %" PRId64
		   ", \"table_full_bytes\": %" PRId64 ", \"concurrent_faults_bytes\": %" PRId64
		   ", \"still_attributed_released_bytes\": %" PRId64 ", \"unexplained_bytes\": %" PRId64 "}",
		s->anon, s->attributed, s->unattributed, s->before, s->no_fault, s->other_task,
		s->table_full, s->raced, s->over, s->mismatch);
}

void pt_rss_json(FILE *f, const struct pt_rss_view *v)
{
	const struct pt_profile *p = v->prof;
	struct pt_rss_split s;
	uint32_t *idx, n = 0, i, j;

	fprintf(f, "  \"rss_attribution\": {\"at_peak\": ");
	split_at(v, true, &s);
	json_split(f, &s);
	fprintf(f, ", \"at_end\": ");
	split_at(v, false, &s);
	json_split(f, &s);
	fprintf(f, ", \"faults\": %" PRIu64 ", \"faults_resident\": %" PRIu64
		   ", \"odd_size_faults\": %" PRIu64 ", \"table_full_events\": %" PRIu64
		   ", \"stacks_cut\": %" PRIu64 ", \"removals_capped\": %" PRIu64 ", ",
		(uint64_t)v->rss->kernel.faults, (uint64_t)v->rss->kernel.faults_used, (uint64_t)v->rss->kernel.odd_size,
		(uint64_t)v->rss->kernel.table_full_events, (uint64_t)v->rss->kernel.stacks_cut,
		(uint64_t)v->rss->kernel.removals_capped);
	pt_rss_kinds_json(f, v);
	fprintf(f, ", \"rss_at_peak_bytes\": %" PRId64 ", ", (int64_t)v->totals->rss_peak);
	pt_rss_python_note_json(f, v);
	fprintf(f, ", ");
	pt_rss_objs_json(f, v);
	fprintf(f, ", \"top_stacks\": [");
	idx = pt_rss_ranked(p, &n);
	for (i = 0; idx && i < n && (int)i < v->top; i++) {
		const struct pt_stack *st = &p->stacks[idx[i]];

		fprintf(f, "%s\n    {\"rss_peak_bytes\": %" PRIu64 ", \"rss_bytes\": %" PRIu64
			   ", \"kind\": \"%s\", \"frames\": [", i ? "," : "", st->v[PT_RSS_PEAK_BYTES],
			st->v[PT_RSS_NOW_BYTES], v->rss->kinds.read ? pt_mem_kind_name(st->rss_kind) : "not known");
		for (j = 0; j < st->nframes; j++) {
			const struct pt_frame *fr = &p->frames[st->frames[j]];
			char *l = pt_frame_label(fr);

			fprintf(f, "%s{\"func\": ", j ? ", " : "");
			pt_json_str(f, l ? l : "?");
			fprintf(f, ", \"module\": ");
			pt_json_str(f, fr->module ? fr->module : "");
			fputc('}', f);
			free(l);
		}
		fprintf(f, "]}");
	}
	free(idx);
	fprintf(f, "%s]},\n", n ? "\n  " : "");
}

/* ---- rss.folded, rss.svg ------------------------------------------------------------------- */

/* The profile with one more stack per non-empty bucket (a root frame of its own), and when the
 * memory kinds were read, each stack holding pages at the peak under a root frame of its kind
 * ("[kind: malloc heap: mmapped chunk]"; frames in *pool), sharing everything else with v->prof:
 * free only its arrays and *pool. Only the stacks holding pages at the peak are copied, in their
 * order: the writers skip the others (at 2^17 heap stacks a whole copy was 13 MiB, most of it
 * stacks that never faulted a page in). */
static int with_buckets(const struct pt_rss_view *v, struct pt_profile *q, uint32_t *fidx,
			uint32_t **pool)
{
	const struct pt_profile *p = v->prof;
	uint32_t extra = pt_rss_obj_extra(v), k, n = 0;
	struct pt_rss_split s;
	int64_t bv[NBUCKETS];
	int i;

	*q = *p;
	*pool = NULL;
	for (k = 0; k < p->nstacks; k++)
		n += p->stacks[k].v[PT_RSS_PEAK_BYTES] != 0;
	q->frames = malloc((p->nframes + NBUCKETS + PT_MK_COUNT + extra) * sizeof(*q->frames));
	q->stacks = malloc((n + NBUCKETS + extra) * sizeof(*q->stacks));
	if (!q->frames || !q->stacks) {
		free(q->frames);
		free(q->stacks);
		return -ENOMEM;
	}
	memcpy(q->frames, p->frames, p->nframes * sizeof(*q->frames));
	for (k = 0, q->nstacks = 0; k < p->nstacks; k++)
		if (p->stacks[k].v[PT_RSS_PEAK_BYTES])
			q->stacks[q->nstacks++] = p->stacks[k];
	split_at(v, true, &s);
	bucket_vals(&s, bv);
	for (i = 0; i < NBUCKETS; i++) {
		struct pt_frame *fr = &q->frames[q->nframes];
		struct pt_stack *st = &q->stacks[q->nstacks];

		if (bv[i] <= 0)
			continue;
		memset(fr, 0, sizeof(*fr));
		fr->func = (char *)bucket_names[i];
		fr->module = (char *)"";
		fr->kind = PT_FK_OTHER;
		memset(st, 0, sizeof(*st));
		fidx[i] = q->nframes;
		st->nframes = 1;
		st->frames = &fidx[i];
		st->v[PT_RSS_PEAK_BYTES] = (uint64_t)bv[i];
		q->nframes++;
		q->nstacks++;
	}
	pt_rss_obj_frames(v, q, fidx + NBUCKETS);
	return v->rss->kinds.read ? pt_rss_kind_frames(q, n, pool) : 0;
}

int pt_rss_write_files(const char *dir, const struct pt_rss_view *v)
{
	struct pt_profile q;
	struct pt_rss_split s;
	struct pt_rss_sh_split fsh[2];
	uint32_t *fidx, *pool;
	char path[4096], sub[320], b1[32], b2[32], b3[32], b4[32], b5[32];
	int err, e;
	FILE *f;

	fidx = calloc(NBUCKETS + pt_rss_obj_extra(v), sizeof(*fidx));
	if (!fidx)
		return -ENOMEM;
	if ((err = with_buckets(v, &q, fidx, &pool))) {
		free(fidx);
		return err;
	}
	split_at(v, true, &s);
	pt_rss_sh_split_at(v, 0, true, &fsh[0]);
	pt_rss_sh_split_at(v, 1, true, &fsh[1]);
	snprintf(path, sizeof(path), "%s/rss.folded", dir);
	f = pt_output_fopen(path);
	err = f ? pt_write_folded(f, &q, PT_RSS_PEAK_BYTES) : -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	snprintf(sub, sizeof(sub), "PID %d (%s): RSS %s at its peak: anonymous %s (%s of it by stack), "
		 "file %s, shmem %s (by object)", v->pid, v->comm,
		 pt_fmt_bytes(b1, sizeof(b1), (double)v->totals->rss_peak),
		 pt_fmt_bytes(b2, sizeof(b2), (double)s.anon),
		 pt_fmt_bytes(b3, sizeof(b3), (double)s.attributed),
		 pt_fmt_bytes(b4, sizeof(b4), (double)fsh[0].total),
		 pt_fmt_bytes(b5, sizeof(b5), (double)fsh[1].total));
	snprintf(path, sizeof(path), "%s/rss.svg", dir);
	f = pt_output_fopen(path);
	e = f ? pt_write_flamegraph(f, &q, PT_RSS_PEAK_BYTES, "RSS held at the RSS peak", sub)
	      : -errno;
	if (f && fclose(f) && !e)
		e = -errno;
	free(q.frames);
	free(q.stacks);
	free(pool);
	free(fidx);
	return err ? err : e;
}

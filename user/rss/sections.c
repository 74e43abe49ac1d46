// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sections.c — the parts of the RSS sections (rss.c) that read the memory kinds (rsskind.h)
 * and the file and shmem objects (rssobj.h): the by-kind line, the Python-objects note, the
 * FILES AND SHARED MEMORY block, their report.json members and rss.folded's object frames.
 * Here, not beside their collectors, so that those never include the slice's header (rss.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "profile/profile.h"
#include "rss/rss.h"

#define OBJ_TOP 10

static const char *const sh_kind[2] = { "file", "shmem" };

/* ---- memory kinds ---------------------------------------------------------------------------- */

static void sum_kinds(const struct pt_rss_view *rv, uint64_t v[PT_MK_COUNT])
{
	uint32_t i;

	memset(v, 0, PT_MK_COUNT * sizeof(*v));
	for (i = 0; i < rv->prof->nstacks; i++) {
		const struct pt_stack *st = &rv->prof->stacks[i];

		v[st->rss_kind < PT_MK_COUNT ? st->rss_kind : 0] += st->v[PT_RSS_PEAK_BYTES];
	}
}

void pt_rss_kinds_text(FILE *f, const struct pt_rss_view *rv)
{
	uint64_t v[PT_MK_COUNT];
	char b[32];
	int i, n = 0;

	if (!rv->rss->kinds.read) {
		fprintf(f, "  by memory kind: not known (the target's maps could not be read at the end, "
			   "and none were kept while it ran)\n");
		return;
	}
	sum_kinds(rv, v);
	fprintf(f, "  by memory kind at the RSS peak (attributed pages, by each stack's last fault");
	if (rv->rss->kinds.from_kept)
		fprintf(f, "; told against its maps as last read while it ran, %.0f ms before the end: "
			   "they were gone by then", rv->rss->kinds.end_ns > rv->rss->kinds.kept_ns ?
			   (double)(rv->rss->kinds.end_ns - rv->rss->kinds.kept_ns) / 1e6 : 0.0);
	fprintf(f, "):");
	for (i = 0; i < PT_MK_COUNT; i++)
		if (v[i])
			fprintf(f, "%s %s %s", n++ ? ";" : "", pt_mem_kind_name(i),
				pt_fmt_bytes(b, sizeof(b), (double)v[i]));
	if (!n)
		fprintf(f, " none");
	if (rv->prof->rss_kind_mixed)
		fprintf(f, "; %" PRIu64 " stacks merged from pages of several kinds (labelled by the first)",
			rv->prof->rss_kind_mixed);
	if (rv->rss->kinds.scan_capped)
		fprintf(f, "; %" PRIu64 " stacks not scanned for malloc chunks (read budget spent: "
			   "shown as anonymous mmap)", rv->rss->kinds.scan_capped);
	if (rv->rss->kernel.kind_ev_skipped || rv->rss->kinds.early_dropped)
		fprintf(f, "; %" PRIu64 " faults in new regions not looked at while the target ran "
			   "(rate limit, busy ring buffer, or the target gone first; a heap unmapped by the end may show as "
			   "\"unmapped by the end\")", (uint64_t)rv->rss->kernel.kind_ev_skipped + rv->rss->kinds.early_dropped);
	if (rv->rss->kinds.kept_unlooked)
		fprintf(f, "; %" PRIu64 " stack%s \"not known\": in anonymous memory never looked at while "
			   "the target ran (its maps alone cannot tell a heap from a plain mmap)",
			rv->rss->kinds.kept_unlooked, rv->rss->kinds.kept_unlooked == 1 ? "" : "s");
	fputc('\n', f);
}

void pt_rss_kinds_json(FILE *f, const struct pt_rss_view *rv)
{
	uint64_t v[PT_MK_COUNT];
	int i;

	sum_kinds(rv, v);
	fprintf(f, "\"kinds_read\": %s, \"kinds_from\": \"%s\", \"kinds_maps_age_ns\": ",
		rv->rss->kinds.read ? "true" : "false", pt_rss_kinds_source(&rv->rss->kinds));
	if (rv->rss->kinds.from_kept)
		fprintf(f, "%" PRIu64, rv->rss->kinds.end_ns > rv->rss->kinds.kept_ns ? rv->rss->kinds.end_ns - rv->rss->kinds.kept_ns : 0);
	else
		fputs("null", f);
	fprintf(f, ", \"kinds_maps_kept_reads\": %" PRIu64 ", \"by_kind_at_peak\": {", rv->rss->kinds.kept_reads);
	for (i = 0; i < PT_MK_COUNT; i++)
		fprintf(f, "%s\"%s_bytes\": %" PRIu64, i ? ", " : "", pt_mem_kind_key(i), v[i]);
	fprintf(f, "}, \"kind_stacks_mixed\": %" PRIu64 ", \"kind_scan_reads\": %" PRIu64
		   ", \"kind_scan_capped\": %" PRIu64 ", \"kind_looks_skipped\": %" PRIu64
		   ", \"kind_looks_dropped\": %" PRIu64 ", \"kind_reads_not_resident\": %" PRIu64
		   ", \"kind_not_looked_stacks\": %" PRIu64,
		rv->prof->rss_kind_mixed, rv->rss->kinds.scan_reads, rv->rss->kinds.scan_capped,
		(uint64_t)rv->rss->kernel.kind_ev_skipped, rv->rss->kinds.early_dropped, rv->rss->kinds.not_resident,
		rv->rss->kinds.kept_unlooked);
}

uint64_t pt_rss_kind_bytes(const struct pt_rss_view *rv, enum pt_mem_kind k)
{
	uint64_t v[PT_MK_COUNT];

	if (!rv->rss->kinds.read || k >= PT_MK_COUNT)
		return 0;
	sum_kinds(rv, v);
	return v[k];
}

/* Shown unless every Python object is in the heap view: --python-objects with its probes seeing
 * them all (a build that inlines pymalloc leaves some out: "partial"). */
static bool python_outside(const struct pt_rss_view *rv, uint64_t *b)
{
	*b = pt_rss_kind_bytes(rv, PT_MK_PYMALLOC);
	return !rv->python_traced && *b > PT_PY_OUTSIDE_MIN;
}

uint64_t pt_rss_python_outside(const struct pt_rss_view *rv)
{
	uint64_t b;

	return python_outside(rv, &b) ? b : 0;
}

void pt_rss_python_note(FILE *f, const struct pt_rss_view *rv, bool lead)
{
	uint64_t b;
	char s[32];

	if (!python_outside(rv, &b))
		return;
	pt_fmt_bytes(s, sizeof(s), (double)b);
	if (lead)
		fprintf(f, "  Python objects outside the heap view: %s of the RSS at its peak is in "
			   "CPython's pymalloc arenas (TOP STACKS HOLDING RSS below, rss.svg by the Python "
			   "code that grew them; --python-objects traces each object)\n", s);
	else
		fprintf(f, "  Python objects outside the heap view: %s at the RSS peak is in CPython's pymalloc "
			   "arenas, which the heap figures (peak.folded, TOP STACKS LIVE AT THE HEAP PEAK) "
			   "do not show. The page view has them by the Python code that grew them: rss.svg, "
			   "rss.folded, the stacks below. --python-objects traces each Python object like "
			   "malloc (slower).\n", s);
}

void pt_rss_python_note_json(FILE *f, const struct pt_rss_view *rv)
{
	uint64_t b;
	bool on = python_outside(rv, &b);

	fprintf(f, "\"python_objects_outside_heap\": {\"shown\": %s, \"pymalloc_arenas_bytes\": %" PRIu64
		   ", \"threshold_bytes\": %llu, \"page_view\": \"rss.svg\", \"option\": "
		   "\"--python-objects\"}", on ? "true" : "false", b, (unsigned long long)PT_PY_OUTSIDE_MIN);
}

/* ---- file and shmem objects ------------------------------------------------------------------ */

void pt_rss_sh_split_at(const struct pt_rss_view *v, int i, bool peak, struct pt_rss_sh_split *s)
{
	int m = i ? PT_RSS_SHMEM : PT_RSS_FILE;

	if (peak && v->rss->kernel.sh_snap_seq[i] == v->rss->kernel.peak_seq)
		pt_rss_sh_split_of(&v->rss->kernel.sh_at_peak[i], v->rss->kernel.sh_at_peak[i].total, s);
	else if (peak)   /* unchanged since the peak (bpf/peaktrace.h sh_snap_seq) */
		pt_rss_sh_split_of(&v->rss->kernel.sh_now[i], v->totals->rss[m], s);
	else
		pt_rss_sh_split_of(&v->rss->kernel.sh_now[i], v->totals->rss[m], s);
}

static int64_t by_member(const struct pt_rss_view *v, int i, bool peak)
{
	int64_t sum = 0;
	uint32_t k;

	for (k = 0; k < v->rss->objs.n; k++)
		if ((v->rss->objs.row[k].o.member == PT_RSS_SHMEM) == (i == 1))
			sum += peak ? v->rss->objs.row[k].at_peak : v->rss->objs.row[k].now;
	return sum;
}

static void sh_line(FILE *f, const struct pt_rss_view *v, int i)
{
	struct pt_rss_sh_split s;
	char b1[32], b2[32];
	int b;

	pt_rss_sh_split_at(v, i, true, &s);
	fprintf(f, "  %s pages at the RSS peak: %s = by %s %s", sh_kind[i],
		pt_fmt_bytes(b1, sizeof(b1), (double)s.total), i ? "object" : "file",
		pt_fmt_bytes(b2, sizeof(b2), (double)s.attributed));
	for (b = 0; b < PT_RSS_SH_BUCKETS; b++)
		if (pt_rss_sh_bucket(&s, b))
			fprintf(f, "; %s %s", pt_rss_sh_bucket_name(i, b),
				pt_fmt_bytes(b1, sizeof(b1), (double)pt_rss_sh_bucket(&s, b)));
	if (s.over)
		fprintf(f, "; released with no object known but still on their objects %s",
			pt_fmt_bytes(b1, sizeof(b1), (double)s.over));
	if (s.mismatch)
		fprintf(f, "; unexplained %" PRId64 " bytes", s.mismatch);
	fputc('\n', f);
}

void pt_rss_objs_text(FILE *f, const struct pt_rss_view *v)
{
	char b1[32], b2[32];
	uint64_t rest = 0;
	uint32_t k;

	fprintf(f, "\nFILES AND SHARED MEMORY HOLDING RSS AT THE PEAK (by the file or object their pages are in)\n");
	sh_line(f, v, 0);
	sh_line(f, v, 1);
	if (v->rss->kernel.sh_vma_busy || v->rss->kernel.sh_table_full_events || v->rss->kernel.sh_split_removals)
		fprintf(f, "  %" PRIu64 " faults whose mapping was not looked up, object table full %" PRIu64
			   " times, %" PRIu64 " removals over several mappings (their pages: released "
			   "with no object known)\n", (uint64_t)v->rss->kernel.sh_vma_busy,
			(uint64_t)v->rss->kernel.sh_table_full_events, (uint64_t)v->rss->kernel.sh_split_removals);
	for (k = 0; k < v->rss->objs.n; k++) {
		const struct pt_rss_obj_row *o = &v->rss->objs.row[k];

		if (k >= OBJ_TOP || (int)k >= v->top) {
			rest += o->at_peak > 0 ? (uint64_t)o->at_peak : 0;
			continue;
		}
		fprintf(f, "  #%-2u %s at the peak, %s at the end  %-5s %s\n", k + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)o->at_peak),
			pt_fmt_bytes(b2, sizeof(b2), (double)o->now),
			o->o.member == PT_RSS_SHMEM ? "shmem" : "file", o->label);
	}
	if (rest || v->rss->objs.n > OBJ_TOP)
		fprintf(f, "  ... %u more objects holding %s at the peak (report.json, rss.folded)\n",
			v->rss->objs.n > OBJ_TOP ? v->rss->objs.n - OBJ_TOP : 0, pt_fmt_bytes(b1, sizeof(b1), (double)rest));
	if (!v->rss->objs.n)
		fprintf(f, "  (no file or shared-memory object held pages)\n");
}

static void json_sh(FILE *f, const struct pt_rss_view *v, int i, bool peak)
{
	struct pt_rss_sh_split s;

	pt_rss_sh_split_at(v, i, peak, &s);
	fprintf(f, "{\"total_bytes\": %" PRId64 ", \"attributed_bytes\": %" PRId64
		   ", \"objects_bytes\": %" PRId64 ", \"resident_before_bytes\": %" PRId64
		   ", \"populated_without_fault_bytes\": %" PRId64 ", \"other_task_bytes\": %" PRId64
		   ", \"mapping_not_looked_up_bytes\": %" PRId64 ", \"table_full_bytes\": %" PRId64
		   ", \"released_unknown_object_bytes\": %" PRId64 ", \"unexplained_bytes\": %" PRId64 "}",
		s.total, s.attributed, by_member(v, i, peak), s.before, s.no_fault, s.other_task,
		s.vma_busy, s.table_full, s.over, s.mismatch);
}

void pt_rss_objs_json(FILE *f, const struct pt_rss_view *v)
{
	uint32_t k;
	int i;

	fprintf(f, "\"file_shmem\": {");
	for (i = 0; i < 2; i++) {
		fprintf(f, "%s\"%s\": {\"at_peak\": ", i ? ", " : "", sh_kind[i]);
		json_sh(f, v, i, true);
		fprintf(f, ", \"at_end\": ");
		json_sh(f, v, i, false);
		fputc('}', f);
	}
	fprintf(f, ", \"faults\": %" PRIu64 ", \"mapping_not_looked_up_events\": %" PRIu64
		   ", \"table_full_events\": %" PRIu64 ", \"split_removals\": %" PRIu64
		   ", \"maps_reads\": %" PRIu64 ", \"reused_slot_events\": %" PRIu64 ", \"objects\": [",
		(uint64_t)v->rss->kernel.sh_faults, (uint64_t)v->rss->kernel.sh_vma_busy,
		(uint64_t)v->rss->kernel.sh_table_full_events, (uint64_t)v->rss->kernel.sh_split_removals,
		v->rss->objs.maps_reads, (uint64_t)v->rss->kernel.sh_obj_reused);
	for (k = 0; k < v->rss->objs.n; k++) {
		const struct pt_rss_obj_row *o = &v->rss->objs.row[k];

		fprintf(f, "%s\n    {\"kind\": \"%s\", \"name\": ", k ? "," : "",
			o->o.member == PT_RSS_SHMEM ? "shmem" : "file");
		pt_json_str(f, o->label);
		fprintf(f, ", \"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"rss_peak_bytes\": %" PRId64
			   ", \"rss_bytes\": %" PRId64 "}", o->o.dev >> 20, o->o.dev & 0xfffff,
			(uint64_t)o->o.ino, o->at_peak, o->now);
	}
	fprintf(f, "%s]}", v->rss->objs.n ? "\n  " : "");
}

uint32_t pt_rss_obj_extra(const struct pt_rss_view *v)
{
	return v->rss->objs.n + 2 * PT_RSS_SH_BUCKETS;
}

static void add_root(struct pt_profile *q, uint32_t *fidx, const char *name, int64_t v)
{
	struct pt_frame *fr = &q->frames[q->nframes];
	struct pt_stack *st = &q->stacks[q->nstacks];

	memset(fr, 0, sizeof(*fr));
	fr->func = (char *)name;
	fr->module = (char *)"";
	fr->kind = PT_FK_OTHER;
	memset(st, 0, sizeof(*st));
	*fidx = q->nframes;
	st->nframes = 1;
	st->frames = fidx;
	st->v[PT_RSS_PEAK_BYTES] = (uint64_t)v;
	q->nframes++;
	q->nstacks++;
}

void pt_rss_obj_frames(const struct pt_rss_view *v, struct pt_profile *q, uint32_t *fidx)
{
	struct pt_rss_sh_split s;
	uint32_t k, used = 0;
	int i, b;

	for (k = 0; k < v->rss->objs.n; k++)
		if (v->rss->objs.row[k].at_peak > 0)
			add_root(q, &fidx[used++], v->rss->objs.row[k].frame, v->rss->objs.row[k].at_peak);
	for (i = 0; i < 2; i++) {
		pt_rss_sh_split_at(v, i, true, &s);
		for (b = 0; b < PT_RSS_SH_BUCKETS; b++)
			if (pt_rss_sh_bucket(&s, b) > 0)
				add_root(q, &fidx[used++], pt_rss_sh_bucket_name(i, b),
					 pt_rss_sh_bucket(&s, b));
	}
}

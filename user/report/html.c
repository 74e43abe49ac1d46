// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * html.c — DIR/report.html: the page people look at. One file, no network: the CSS and JS
 * (user/report/html/, embedded at build time) and the data, embedded once as JSON in a
 * <script type="application/json"> element. Frames are interned into one table; stacks are
 * [value, [frame, ...]] (leaf first), at most PT_HTML_MAX_STACKS per view with the rest summed.
 * Every string is written by pt_json_str_script (util/fmt.c), so nothing the target names can close the element.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "profile/profile.h"
#include "profile/collect.h"
#include "profile/frames.h"
#include "report/report.h"
#include "report/html.h"
#include "output/holder.h"
#include "rss/rss.h"

/* Target text (comm, exe, paths) shown as every output shows it: pt_sanitize's "\xHH" escapes. */
static void html_san(FILE *f, const char *s)
{
	char *d = pt_sanitize_dup(s);

	pt_json_str_script(f, d ? d : "?");
	free(d);
}

/* ---- frame table: (label, kind, file, line, module) interned across every stack written ---- */

struct hframe {
	char *label, *file, *module;
	uint32_t line;
	uint8_t kind;
};

struct hctx {
	FILE *f;
	struct hframe *fr;
	uint32_t nfr, cap;
	uint32_t *slot;          /* open addressing: index + 1, 0 empty */
	uint32_t nslot;
	uint32_t *pmap;          /* main profile frame -> table index + 1 */
	struct { uint32_t stack, n, *fr; } *kc;   /* kernel stack -> table frames (invocations) */
	uint32_t nkc, kcap;
	uint32_t *kslot, nkslot; /* open addressing over kc: index + 1, 0 empty */
	int err;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

static int same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static int grow_slots(struct hctx *c)
{
	uint32_t n = c->nslot ? c->nslot * 2 : 4096, i;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < c->nfr; i++) {
		const struct hframe *h = &c->fr[i];
		uint64_t k = hash_str(hash_str(hash_str(h->kind + h->line * 31ULL, h->label), h->file),
				      h->module);

		while (s[k & (n - 1)])
			k++;
		s[k & (n - 1)] = i + 1;
	}
	free(c->slot);
	c->slot = s;
	c->nslot = n;
	return 0;
}

/* The table index of fr's row, added if new; UINT32_MAX when out of memory. */
static uint32_t intern(struct hctx *c, const struct pt_frame *fr)
{
	char *label = pt_frame_label(fr);
	const char *file = fr->file ? fr->file : "";
	uint32_t line = fr->file ? fr->line : 0, i;
	uint64_t k;

	if (!label || ((c->nfr + 1) * 2 > c->nslot && grow_slots(c)))
		goto oom;
	k = hash_str(hash_str(hash_str(fr->kind + line * 31ULL, label), file), fr->module);
	for (;; k++) {
		i = c->slot[k & (c->nslot - 1)];
		if (!i)
			break;
		const struct hframe *h = &c->fr[i - 1];
		if (h->kind == fr->kind && h->line == line && same(h->label, label) &&
		    same(h->file, file) && same(h->module, fr->module)) {
			free(label);
			return i - 1;
		}
	}
	if (c->nfr == c->cap) {
		uint32_t nc = c->cap ? c->cap * 2 : 1024;
		struct hframe *a = realloc(c->fr, nc * sizeof(*a));

		if (!a)
			goto oom;
		c->fr = a;
		c->cap = nc;
	}
	c->fr[c->nfr].label = label;
	c->fr[c->nfr].file = strdup(file);
	c->fr[c->nfr].module = strdup(fr->module ? fr->module : "");
	c->fr[c->nfr].line = line;
	c->fr[c->nfr].kind = fr->kind < PT_FK_MAX ? fr->kind : PT_FK_OTHER;
	c->slot[k & (c->nslot - 1)] = ++c->nfr;
	return c->nfr - 1;
oom:
	free(label);
	c->err = -ENOMEM;
	return UINT32_MAX;
}

/* A synthetic frame ("[other stacks]"), by its label. */
static uint32_t intern_marker(struct hctx *c, const char *label)
{
	struct pt_frame fr = { .func = (char *)label, .module = "", .kind = PT_FK_OTHER };

	return intern(c, &fr);
}

static void write_frames(struct hctx *c)
{
	uint32_t i;

	fputs("\"frames\": [", c->f);
	for (i = 0; i < c->nfr; i++) {
		const struct hframe *h = &c->fr[i];
		const char *mod = strrchr(h->module, '/');

		fputs(i ? ",\n[" : "\n[", c->f);
		pt_json_str_script(c->f, h->label);
		fprintf(c->f, ",%u,", h->kind);
		html_san(c->f, h->file);
		fprintf(c->f, ",%u,", h->line);
		html_san(c->f, mod ? mod + 1 : h->module);
		fputc(']', c->f);
	}
	fputs("]", c->f);
}

static void hctx_free(struct hctx *c)
{
	uint32_t i;

	for (i = 0; i < c->nfr; i++) {
		free(c->fr[i].label);
		free(c->fr[i].file);
		free(c->fr[i].module);
	}
	for (i = 0; i < c->nkc; i++)
		free(c->kc[i].fr);
	free(c->kc);
	free(c->kslot);
	free(c->fr);
	free(c->slot);
	free(c->pmap);
}

/* ---- profile views --------------------------------------------------------------------------- */

/* The views of the profile, in page order: adding a metric to the page is one line here. */
static const struct { const char *key; enum pt_metric m; const char *title; } html_views[] = {
	{ "peak", PT_PEAK_BYTES, "Heap live at the peak" },
	{ "live", PT_LIVE_BYTES, "Heap live at end of trace" },
	{ "alloc", PT_ALLOC_BYTES, "Heap allocated in total" },
	{ "leaked", PT_LEAKED_BYTES, "Leaked across invocations" },
	{ "rss", PT_RSS_PEAK_BYTES, "Anonymous RSS at the RSS peak, by the stack that faulted it in" },
};

static const struct pt_profile *g_prof;
static enum pt_metric g_metric;

static int cmp_by_metric(const void *a, const void *b)
{
	uint64_t x = g_prof->stacks[*(const uint32_t *)a].v[g_metric];
	uint64_t y = g_prof->stacks[*(const uint32_t *)b].v[g_metric];

	if (x != y)
		return x < y ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void write_view(struct hctx *c, const struct pt_profile *p, uint32_t *order, size_t v)
{
	enum pt_metric m = html_views[v].m;
	uint64_t total = 0, rest = 0;
	uint32_t i, j, n = 0, nrest = 0;

	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].v[m])
			order[n++] = i;
	/* Only the first PT_HTML_MAX_STACKS need their order: the rest are summed. */
	if (pt_stacks_top(p, m, order, n, PT_HTML_MAX_STACKS)) {
		g_prof = p;
		g_metric = m;
		qsort(order, n, sizeof(*order), cmp_by_metric);
	}
	fprintf(c->f, "%s\n{\"key\": \"%s\", \"title\": \"%s\", \"stacks\": [", v ? "," : "",
		html_views[v].key, html_views[v].title);
	for (i = 0; i < n; i++) {
		const struct pt_stack *s = &p->stacks[order[i]];

		total += s->v[m];
		if (i >= PT_HTML_MAX_STACKS) {
			rest += s->v[m];
			nrest++;
			continue;
		}
		fprintf(c->f, "%s[%" PRIu64 ",[", i ? ",\n" : "\n", s->v[m]);
		for (j = 0; j < s->nframes; j++) {
			uint32_t pf = s->frames[j];

			if (!c->pmap[pf])
				c->pmap[pf] = intern(c, &p->frames[pf]) + 1;
			fprintf(c->f, "%s%u", j ? "," : "", c->pmap[pf] - 1);
		}
		fputs("]]", c->f);
	}
	if (nrest)
		fprintf(c->f, "%s[%" PRIu64 ",[%u]]", n > nrest ? ",\n" : "\n", rest,
			intern_marker(c, "[other stacks]"));
	fprintf(c->f, "], \"total\": %" PRIu64 ", \"nstacks\": %u, \"other_stacks\": %u, "
		   "\"other_bytes\": %" PRIu64 "}", total, n, nrest, rest);
}

/* ---- the summary's holders (output/holder.h): what report.txt's first screen shows ------------- */

#define HTML_HOLDERS 3

/* [value, blocks or kind, [line, ...]] of stack s: a line is a frame table index (a frame) or a
 * string (a run said in words: "... 12 unnamed frames (libonnxruntime.so.1)"); own is the index
 * of the program's own frame among the lines, -1 if none is shown. */
static void write_holder(struct hctx *c, const struct pt_profile *p, const struct pt_stack *s)
{
	const struct pt_frame **fr = malloc((s->nframes + 1) * sizeof(*fr));
	struct pt_holder_line l[PT_HOLDER_MAX_LINES];
	char buf[512];
	uint32_t i, n;
	int own = -1;

	if (!fr) {
		c->err = -ENOMEM;
		fputs("[]", c->f);
		return;
	}
	for (i = 0; i < s->nframes; i++)
		fr[i] = &p->frames[s->frames[i]];
	n = pt_holder_lines(fr, s->nframes, l);
	fputc('[', c->f);
	for (i = 0; i < n; i++) {
		uint32_t pf = s->frames[l[i].i];

		if (i)
			fputc(',', c->f);
		if (l[i].what != PT_HL_FRAME && l[i].what != PT_HL_OWN) {
			pt_holder_line_text(buf, sizeof(buf), fr, &l[i]);
			pt_json_str_script(c->f, buf);
			continue;
		}
		if (!c->pmap[pf])
			c->pmap[pf] = intern(c, &p->frames[pf]) + 1;
		fprintf(c->f, "%u", c->pmap[pf] - 1);
		if (own < 0 && pt_holder_own(fr[l[i].i]))
			own = (int)i;
	}
	fprintf(c->f, "], %d", own);
	free(fr);
}

static void write_holders(struct hctx *c, const struct pt_report *r, uint32_t *order)
{
	const struct pt_profile *p = &r->prof;
	uint32_t i, n = 0, *idx;

	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].v[PT_PEAK_BYTES])
			order[n++] = i;
	if (pt_stacks_top(p, PT_PEAK_BYTES, order, n, HTML_HOLDERS)) {
		g_prof = p;
		g_metric = PT_PEAK_BYTES;
		qsort(order, n, sizeof(*order), cmp_by_metric);
	}
	fputs("\"holders\": [", c->f);
	for (i = 0; !r->light && i < n && i < HTML_HOLDERS; i++) {
		const struct pt_stack *s = &p->stacks[order[i]];

		fprintf(c->f, "%s[%" PRIu64 ", %" PRIu64 ", ", i ? ",\n" : "\n", s->v[PT_PEAK_BYTES],
			s->v[PT_PEAK_COUNT]);
		write_holder(c, p, s);
		fputc(']', c->f);
	}
	fputs("],\n\"rss_holders\": ", c->f);
	/* As report.txt's WHO HELD THE RSS: when the heap is a small part of the RSS, or not traced
	 * (--light). */
	idx = NULL;
	if ((!r->light && !pt_rss_first_screen((int64_t)r->totals.peak_bytes, (int64_t)r->totals.rss_peak)) ||
	    !(idx = pt_rss_ranked(p, &n))) {
		fputs("null,\n", c->f);
		return;
	}
	fprintf(c->f, "{\"anon\": %" PRId64 ", \"nstacks\": %u, \"stacks\": [", (int64_t)r->rss.kernel.at_peak.anon, n);
	for (i = 0; i < n && i < HTML_HOLDERS; i++) {
		const struct pt_stack *s = &p->stacks[idx[i]];

		fprintf(c->f, "%s[%" PRIu64 ", ", i ? ",\n" : "\n", s->v[PT_RSS_PEAK_BYTES]);
		pt_json_str_script(c->f, r->rss.kinds.read ? pt_mem_kind_name(s->rss_kind) : "");
		fputs(", ", c->f);
		write_holder(c, p, s);
		fputc(']', c->f);
	}
	fputs("]},\n", c->f);
	free(idx);
}

/* ---- invocations ----------------------------------------------------------------------------- */

/* The table frames of kernel stack idx, symbolized once per report (invocations share stacks). */
static int kstack(struct hctx *c, const struct pt_stack_src *src, uint32_t idx, uint32_t **out)
{
	struct pt_profile p;
	uint32_t fr[PT_MAX_MERGED], n, i;

	uint64_t h;

	if ((c->nkc + 1) * 2 > c->nkslot) {
		uint32_t ns = c->nkslot ? c->nkslot * 2 : 1024, *s = calloc(ns, sizeof(*s));

		if (!s)
			return -1;
		for (i = 0; i < c->nkc; i++) {
			for (h = c->kc[i].stack * 2654435761ULL; s[h & (ns - 1)]; h++)
				;
			s[h & (ns - 1)] = i + 1;
		}
		free(c->kslot);
		c->kslot = s;
		c->nkslot = ns;
	}
	for (h = idx * 2654435761ULL; c->kslot[h & (c->nkslot - 1)]; h++) {
		i = c->kslot[h & (c->nkslot - 1)] - 1;
		if (c->kc[i].stack == idx) {
			*out = c->kc[i].fr;
			return (int)c->kc[i].n;
		}
	}
	if (c->nkc == c->kcap) {
		uint32_t nc = c->kcap ? c->kcap * 2 : 256;
		void *a = realloc(c->kc, nc * sizeof(*c->kc));

		if (!a)
			return -1;
		c->kc = a;
		c->kcap = nc;
	}
	if (pt_inv_stack_frames(src, idx, &p, fr, &n)) {
		n = 1;
		pt_profile_free(&p);
		c->kc[c->nkc].fr = malloc(sizeof(uint32_t));
		if (c->kc[c->nkc].fr)
			c->kc[c->nkc].fr[0] = intern_marker(c, "[unknown stack]");
	} else {
		c->kc[c->nkc].fr = malloc(n * sizeof(uint32_t) + 1);
		for (i = 0; c->kc[c->nkc].fr && i < n; i++)
			c->kc[c->nkc].fr[i] = intern(c, &p.frames[fr[i]]);
		pt_profile_free(&p);
	}
	if (!c->kc[c->nkc].fr)
		return -1;
	c->kc[c->nkc].stack = idx;
	c->kc[c->nkc].n = n;
	c->kslot[h & (c->nkslot - 1)] = c->nkc + 1;
	*out = c->kc[c->nkc++].fr;
	return (int)n;
}

static void write_inv_stacks(struct hctx *c, const struct pt_report *r, const struct pt_inv_record *ir)
{
	uint32_t i, *fr;
	int n, j, first = 1;

	fputs(", \"stacks\": [", c->f);
	for (i = 0; i < ir->nall; i++) {
		if ((n = kstack(c, &r->inv_stacks, ir->all[i].stack, &fr)) < 0)
			continue;
		fprintf(c->f, "%s[%" PRId64 ",[", first ? "" : ",", ir->all[i].bytes);
		for (j = 0; j < n; j++)
			fprintf(c->f, "%s%u", j ? "," : "", fr[j]);
		fputs("]]", c->f);
		first = 0;
	}
	if (ir->other_stacks)
		fprintf(c->f, "%s[%" PRId64 ",[%u]]", first ? "" : ",", ir->other_bytes,
			intern_marker(c, "[other stacks]"));
	fprintf(c->f, "], \"other_stacks\": %u, \"other_bytes\": %" PRId64, ir->other_stacks,
		ir->other_bytes);
}

static void write_invocations(struct hctx *c, const struct pt_report *r)
{
	const struct pt_inv_list *l = r->invs;
	uint32_t k;

	fputs("\"invocations\": [", c->f);
	for (k = 0; l && k < l->n; k++) {
		const struct pt_inv_record *ir = &l->r[k];
		double dur = ir->end_ns > ir->start_ns ? (double)(ir->end_ns - ir->start_ns) / 1e6 : 0;

		fprintf(c->f, "%s\n{\"seq\": %" PRIu64 ", \"id\": ", k ? "," : "", ir->seq);
		pt_json_str_script(c->f, ir->id);
		fprintf(c->f, ", \"phase\": \"%s\", \"outcome\": ", pt_inv_phase(ir));
		pt_json_str_script(c->f, pt_inv_outcome(ir));
		fprintf(c->f, ", \"start_ns\": %" PRIu64 ", \"duration_ms\": %.3f, \"rss_peak\": %" PRId64
			   ", \"heap_peak\": %" PRId64 ", \"vmhwm\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
			   ", \"overwritten\": %s", ir->start_ns, dur, ir->rss_peak, ir->heap_peak,
			ir->vmhwm, ir->alloc_bytes, ir->overwritten ? "true" : "false");
		if (k < PT_HTML_MAX_INV_GRAPHS && r->inv_stacks.stacks_fd >= 0)
			write_inv_stacks(c, r, ir);
		fputc('}', c->f);
	}
	fputs("]", c->f);
}

/* ---- the page -------------------------------------------------------------------------------- */

static void write_data(struct hctx *c, const char *dir, const struct pt_report *r, uint32_t *order)
{
	FILE *f = c->f;
	struct pt_rss_view rv = pt_report_rss_view(r);
	size_t v;

	fprintf(f, "{\"peaktrace\": \"%s\", \"pid\": %d, \"comm\": ", PT_VERSION, (int)r->pid);
	html_san(f, r->comm);
	fputs(", \"exe\": ", f);
	html_san(f, r->exe);
	fprintf(f, ",\n\"duration_ns\": %" PRIu64 ", \"peak_bytes\": %" PRId64 ", \"live_bytes\": %" PRId64
		   ", \"alloc_bytes\": %" PRIu64 ", \"rss_peak\": %" PRId64 ", \"vmhwm\": %" PRIu64
		   ", \"max_stacks_per_view\": %u, \"max_inv_graphs\": %u, \"inv_keep\": %u"
		   ", \"stacks_used\": %" PRIu64 ", \"max_stacks\": %" PRIu64 ",\n",
		r->duration_ns, (int64_t)r->totals.peak_bytes, (int64_t)r->totals.live_bytes,
		(uint64_t)r->totals.alloc_bytes, (int64_t)r->totals.rss_peak, r->vmhwm_bytes, PT_HTML_MAX_STACKS,
		PT_HTML_MAX_INV_GRAPHS, PT_INV_KEEP, r->stacks_used, r->max_stacks);
	fprintf(f, "\"light\": %s,\n", r->light ? "true" : "false");
	fprintf(f, "\"python_outside\": %" PRIu64 ",\n", pt_rss_python_outside(&rv));
	fputs("\"kinds\": [", f);
	for (v = 0; v < PT_FK_MAX; v++)
		fprintf(f, "%s\"%s\"", v ? ", " : "", pt_frame_kind_name((enum pt_frame_kind)v));
	fputs("],\n", f);
	write_holders(c, r, order);
	fputs("\"views\": [", f);
	for (v = 0; v < sizeof(html_views) / sizeof(html_views[0]); v++)
		write_view(c, &r->prof, order, v);
	fputs("],\n", f);
	write_invocations(c, r);
	fputs(",\n\"timeline\": ", f);
	pt_html_timeline(f, dir, r->invs);
	fputs(",\n", f);
	write_frames(c);
	fputs("}\n", f);
}

int pt_write_html(FILE *f, const char *dir, const struct pt_report *r)
{
	struct hctx c = { .f = f };
	uint32_t *order = calloc(r->prof.nstacks + 1, sizeof(*order));
	int err;

	c.pmap = calloc(r->prof.nframes + 1, sizeof(*c.pmap));
	if (!order || !c.pmap) {
		free(order);
		free(c.pmap);
		return -ENOMEM;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<title>peaktrace report</title>\n<style>\n", f);
	fputs(pt_html_css, f);
	fputs("</style></head>\n<body>\n<noscript>This report draws itself with JavaScript; the same "
	      "figures are in report.txt and report.json.</noscript>\n<div id=\"app\"></div>\n"
	      "<script type=\"application/json\" id=\"pt-data\">\n", f);
	write_data(&c, dir, r, order);
	fputs("</script>\n<script>\n", f);
	fputs(pt_html_js, f);
	fputs("</script>\n</body></html>\n", f);
	err = c.err ? c.err : pt_stream_result(f);
	hctx_free(&c);
	free(order);
	return err;
}

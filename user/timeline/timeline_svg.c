// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * timeline_svg.c — DIR/timeline.svg: RSS and live heap over time, one band per invocation, the
 * RSS peak marked; axes in s and MiB. Self-contained (no script, no fonts or links fetched).
 *
 * Each sample draws its interval's maximum then its level at the sample's time, so a spike
 * shorter than the interval is a vertical stroke rather than nothing. Past PLOT_POINTS samples,
 * runs of samples are merged (maximum of the maxima, the last level): the peak stays visible.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "timeline/timeline.h"
#include "util/fmt.h"

#define W 960
#define H 420
#define ML 70     /* margins: left (MiB labels), right, top (legend), bottom (s labels) */
#define MR 20
#define MT 40
#define MB 45
#define PLOT_POINTS 4000

/* Text in an SVG element: the XML specials escaped (ids are sanitized already). */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		uint32_t cp;
		size_t k = pt_format_char((const unsigned char *)s, &cp);

		if (k) {   /* a format character as visible text, as pt_sanitize writes it */
			char esc[12];

			fwrite(esc, 1, (size_t)pt_format_escape(esc, sizeof(esc), cp), f);
			s += k - 1;
			continue;
		}
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

double pt_tl_axis_step(double span, int max_ticks)
{
	double raw, p, m;

	if (!(span > 0) || max_ticks < 1)
		return 1;
	raw = span / max_ticks;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

struct frame {
	double xmax_s, ymax_mib;
};

static double px(const struct frame *fr, double s)
{
	return ML + s / fr->xmax_s * (W - ML - MR);
}

static double py(const struct frame *fr, double bytes)
{
	return H - MB - bytes / 1048576.0 / fr->ymax_mib * (H - MT - MB);
}

static double sec(const struct pt_timeline *tl, uint64_t t_ns)
{
	return t_ns > tl->t0_ns ? (double)(t_ns - tl->t0_ns) / 1e9 : 0;
}

static void axes(FILE *f, const struct frame *fr)
{
	double xs = pt_tl_axis_step(fr->xmax_s, 10), ys = pt_tl_axis_step(fr->ymax_mib, 8);

	fprintf(f, "<g stroke=\"#ccc\" stroke-width=\"1\">\n");
	for (double v = 0; v <= fr->ymax_mib + ys / 1e6; v += ys)
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", ML, W - MR,
			py(fr, v * 1048576.0), py(fr, v * 1048576.0));
	fprintf(f, "</g>\n<g font-size=\"11\" fill=\"#333\">\n");
	for (double v = 0; v <= fr->ymax_mib + ys / 1e6; v += ys)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6,
			py(fr, v * 1048576.0) + 4, v);
	for (double v = 0; v <= fr->xmax_s + xs / 1e6; v += xs)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(fr, v),
			H - MB + 16, v);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (s)</text>\n",
		(ML + W - MR) / 2, H - 8);
	fprintf(f, "<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">"
		   "memory (MiB)</text>\n</g>\n", (MT + H - MB) / 2, (MT + H - MB) / 2);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
}

static void bands(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs,
		  const struct frame *fr)
{
	for (uint32_t k = 0; invs && k < invs->n; k++) {
		const struct pt_inv_record *r = &invs->r[k];
		double x0, x1;

		if (!r->seq || r->overwritten || !r->start_ns)
			continue;
		x0 = px(fr, sec(tl, r->start_ns));
		x1 = px(fr, sec(tl, r->end_ns > r->start_ns ? r->end_ns : r->start_ns));
		fprintf(f, "<rect class=\"inv\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			   "fill=\"%s\" fill-opacity=\"0.35\"><title>invocation %" PRIu64 " ",
			x0, MT, x1 - x0 < 1 ? 1 : x1 - x0, H - MT - MB, r->seq % 2 ? "#9ecae1" : "#c6dbef",
			r->seq);
		xml_text(f, r->id);
		fprintf(f, " (%s)</title></rect>\n<text x=\"%.1f\" y=\"%d\" font-size=\"10\" "
			   "fill=\"#336\">%" PRIu64 "</text>\n", pt_inv_outcome(r), x0 + 2, MT + 11, r->seq);
	}
}

/* One series: each (merged) sample's maximum, then its level. */
static void series(FILE *f, const struct pt_timeline *tl, const struct frame *fr, bool heap,
		   const char *colour)
{
	uint32_t step = tl->n > PLOT_POINTS ? (tl->n + PLOT_POINTS - 1) / PLOT_POINTS : 1;

	fprintf(f, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
		heap ? "heap" : "rss", colour);
	for (uint32_t i = 0; i < tl->n; i += step) {
		uint32_t end = i + step < tl->n ? i + step : tl->n;
		int64_t mx = 0, lv;
		double x;

		for (uint32_t j = i; j < end; j++) {
			int64_t m = heap ? tl->s[j].heap_max : tl->s[j].rss_max;

			if (m > mx)
				mx = m;
		}
		lv = heap ? tl->s[end - 1].heap : tl->s[end - 1].rss;
		x = px(fr, sec(tl, tl->s[end - 1].t_ns));
		if (mx > lv)
			fprintf(f, "%.1f,%.1f ", x, py(fr, (double)mx));
		fprintf(f, "%.1f,%.1f ", x, py(fr, (double)lv));
	}
	fprintf(f, "\"/>\n");
}

int pt_timeline_write_svg(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs)
{
	struct pt_tl_summary sm;
	struct frame fr;
	char b1[32];

	pt_tl_summarize(tl, invs, &sm);
	fr.xmax_s = sm.span_ms / 1e3 > 0.001 ? sm.span_ms / 1e3 : 0.001;
	fr.ymax_mib = (double)(sm.rss_peak > sm.heap_peak ? sm.rss_peak : sm.heap_peak) / 1048576.0;
	fr.ymax_mib = fr.ymax_mib > 0.01 ? fr.ymax_mib * 1.08 : 1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		   "<title>peaktrace: memory over time, PID %d</title>\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H, W, H, (int)tl->pid);
	bands(f, tl, invs, &fr);
	axes(f, &fr);
	series(f, tl, &fr, false, "#d62728");
	if (!tl->light)
		series(f, tl, &fr, true, "#1f77b4");
	if (sm.rss_peak > 0) {
		double x = px(&fr, sm.rss_peak_ms / 1e3), y = py(&fr, (double)sm.rss_peak);

		fprintf(f, "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" "
			   "stroke=\"#000\" stroke-width=\"1.5\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
			   "font-size=\"11\" text-anchor=\"%s\">peak %s at %.3f s</text>\n",
			x, y, x + (x > W / 2 ? -8 : 8), y + 4 < MT + 12 ? MT + 12 : y + 4,
			x > W / 2 ? "end" : "start", pt_fmt_bytes(b1, sizeof(b1), (double)sm.rss_peak),
			sm.rss_peak_ms / 1e3);
	}
	fprintf(f, "<g font-size=\"12\"><line x1=\"%d\" x2=\"%d\" y1=\"18\" y2=\"18\" stroke=\"#d62728\" "
		   "stroke-width=\"2\"/><text x=\"%d\" y=\"22\">RSS (anon+file+shmem)</text>\n"
		   "<line x1=\"%d\" x2=\"%d\" y1=\"18\" y2=\"18\" stroke=\"#1f77b4\" stroke-width=\"2\"/>"
		   "<text x=\"%d\" y=\"22\">%s</text>\n"
		   "<rect x=\"%d\" y=\"10\" width=\"18\" height=\"12\" fill=\"#9ecae1\" fill-opacity=\"0.35\"/>"
		   "<text x=\"%d\" y=\"22\">invocation</text>\n",
		ML, ML + 24, ML + 30, ML + 200, ML + 224, ML + 230,
		tl->light ? "live heap: not traced (--light)" : "live heap", ML + 320, ML + 344);
	fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"end\" fill=\"#555\">every %u ms, %" PRIu64
		   " samples, %" PRIu64 " dropped, %" PRIu64 " ticks missed</text></g>\n</svg>\n",
		W - MR, tl->interval_ms, sm.taken, sm.dropped, sm.missed);
	return ferror(f) ? -EIO : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flamegraph.c — one self-contained, interactive SVG flame graph.
 *
 * The layout follows Brendan Gregg's flamegraph.pl so the picture reads the way people
 * expect (root "all" at the bottom, callees stacked above, width = share of the metric,
 * siblings in alphabetical order), but the file must open anywhere — a browser on a
 * laptop with no network, a CI artifact viewer — so everything it needs (style, script)
 * is inline, and nothing refers to a font, script or DTD elsewhere.
 *
 * Numbers are formatted with integer arithmetic, never "%f": the loader may call
 * setlocale(), and a decimal comma would silently break every coordinate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "output/output.h"
#include "profile/frames.h"
#include "util/fmt.h"

#define IMG_W		1200	/* px, like flamegraph.pl's default */
#define XPAD		10	/* px left and right of the frames */
#define FRAME_H		16	/* px per stack level (1 px of it is the gap) */
#define FONT_SIZE	12	/* px */
#define FONT_W		(FONT_SIZE * 0.59)	/* average glyph width, to fit labels */
#define MIN_W		0.1	/* px; narrower frames are invisible, so leave them out */
#define BOTTOM		34	/* px below the root: room for the details line */
#define LEGEND_H	20	/* px between the root and the details line: the legend */
#define LEGEND_BOX	12	/* px, the side of a legend swatch */

#define ROOT_NAME	(UINT32_MAX)	/* node name of "all" */

struct node {
	uint64_t value;		/* metric total of this frame and everything above it */
	uint64_t start;		/* left edge, in metric units from the root's left edge */
	uint64_t next;		/* where the next child starts (layout cursor) */
	int64_t aux;		/* the style's per-stack figure, summed like value */
	uint32_t parent;
	uint32_t name;		/* rank of the label, or ROOT_NAME */
	uint32_t depth;		/* root = 0 */
};

struct tree {
	struct node *n;
	uint32_t len, cap;
};

/* Root-first rank of frame i of stack s: stacks are stored leaf first. */
static inline uint32_t rank_at(const struct pt_stack *s, const uint32_t *rank, uint32_t i)
{
	return rank[s->frames[s->nframes - 1 - i]];
}

static int stack_cmp(const void *a, const void *b, void *ctx)
{
	const struct pt_stack *x = *(const struct pt_stack *const *)a;
	const struct pt_stack *y = *(const struct pt_stack *const *)b;
	const uint32_t *rank = ctx;
	uint32_t i, n = x->nframes < y->nframes ? x->nframes : y->nframes;

	for (i = 0; i < n; i++) {
		uint32_t rx = rank_at(x, rank, i), ry = rank_at(y, rank, i);

		if (rx != ry)
			return rx < ry ? -1 : 1;
	}
	return x->nframes < y->nframes ? -1 : x->nframes > y->nframes;
}

static int tree_add(struct tree *t, uint32_t parent, uint32_t name, uint32_t depth)
{
	if (t->len == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct node *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->n = n;
		t->cap = cap;
	}
	t->n[t->len] = (struct node){ .parent = parent, .name = name, .depth = depth };
	return t->len++;
}

/*
 * Merge the stacks into a call tree, the way flamegraph.pl's flow() does: with the
 * stacks sorted root-first by name, stacks sharing a prefix are adjacent, so each one
 * only has to diverge from the path of the previous one. Nodes come out in pre-order
 * with children in name order, which is also the drawing order.
 */
static int build_tree(const struct pt_profile *p, enum pt_metric m, uint32_t *rank,
		      const int64_t *aux, struct tree *t)
{
	const struct pt_stack **sorted = NULL;
	uint32_t *path = NULL;
	uint32_t i, j, n = 0, maxd = 0, cur = 0;
	uint64_t total = 0;
	double scale = 0;
	int err = -ENOMEM, idx;

	sorted = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	for (i = 0; i < p->nstacks; i++) {
		/* A stack with no value still carries its aux to its callers (a stack gone from a
		 * differential graph makes its caller bluer); it gets no width. */
		if (!p->stacks[i].v[m] && !(aux && aux[i]))
			continue;
		sorted[n++] = &p->stacks[i];	/* index i = sorted[n] - p->stacks (aux) */
		if (p->stacks[i].nframes > maxd)
			maxd = p->stacks[i].nframes;
	}
	qsort_r(sorted, n, sizeof(*sorted), stack_cmp, rank);
	for (i = 0; i < n; i++)
		total += sorted[i]->v[m];	/* the root's value, as the writer will find it */
	if (total)
		scale = (double)(IMG_W - 2 * XPAD) / total;

	path = malloc((maxd + 1) * sizeof(*path));
	if (!path || tree_add(t, 0, ROOT_NAME, 0) < 0)
		goto out;
	path[0] = 0;
	for (i = 0; i < n; i++) {
		const struct pt_stack *s = sorted[i];
		uint32_t k = 0;

		while (k < cur && k < s->nframes && t->n[path[k + 1]].name == rank_at(s, rank, k))
			k++;
		/*
		 * The path below k is complete: no later stack adds to it. A finished node too narrow
		 * to draw (the writer's own test) keeps its place for the layout, but its descendants,
		 * narrower still and never drawn, are dropped: they are the tail of the array. With
		 * 100k+ stacks fanning out they were most of the tree (400k nodes for 2^17 stacks).
		 */
		for (j = k + 1; j <= cur; j++) {
			if (t->n[path[j]].value * scale < MIN_W) {
				t->len = path[j] + 1;
				break;
			}
		}
		for (cur = k; cur < s->nframes; cur++) {
			idx = tree_add(t, path[cur], rank_at(s, rank, cur), cur + 1);
			if (idx < 0)
				goto out;
			path[cur + 1] = idx;
		}
		for (j = 0; j <= s->nframes; j++) {
			t->n[path[j]].value += s->v[m];
			if (aux)
				t->n[path[j]].aux += aux[s - p->stacks];
		}
	}

	/* Pre-order means a parent is placed before its children, and siblings come in
	 * drawing order, so one pass of per-parent cursors lays everything out. */
	for (i = 1; i < t->len; i++) {
		struct node *nd = &t->n[i], *pa = &t->n[nd->parent];

		nd->start = nd->next = pa->next;
		pa->next += nd->value;
	}
	err = 0;
out:
	free(path);
	free(sorted);
	return err;
}

/* v rounded to two decimals without printf("%f") (see the file comment). */
static const char *fix2(char *buf, size_t len, double v)
{
	/* Half away from zero by hand: llround() would need libm for this one call. */
	long long c = v < 0 ? (long long)(v * 100.0 - 0.5) : (long long)(v * 100.0 + 0.5);

	if (c < 0)
		snprintf(buf, len, "-%lld.%02lld", -c / 100, -c % 100);
	else
		snprintf(buf, len, "%lld.%02lld", c / 100, c % 100);
	return buf;
}

/* Escape for XML character data and attribute values. Input is clean UTF-8 (sanitized). */
static void xml_put(FILE *f, const char *s, size_t n)
{
	size_t i, k;
	uint32_t cp;

	for (i = 0; i < n; i++) {
		/* A format character (bidi override...) as visible text, as pt_sanitize writes it. */
		if ((k = pt_format_char((const unsigned char *)s + i, &cp)) && i + k <= n) {
			char esc[12];

			fwrite(esc, 1, (size_t)pt_format_escape(esc, sizeof(esc), cp), f);
			i += k - 1;
			continue;
		}
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: putc(s[i], f);
		}
	}
}

/* Byte length of the first `chars` UTF-8 characters of s (all of s if shorter),
 * and the character count of s in *total. */
static size_t utf8_prefix(const char *s, size_t chars, size_t *total)
{
	size_t i, n = 0, cut = 0;

	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;	/* continuation byte */
		if (n == chars)
			cut = i;
		n++;
	}
	*total = n;
	return n > chars ? cut : i;
}

/* The label as it fits in a frame w px wide: whole, cut with "..", or nothing. The
 * script redoes this after a zoom, with the same rule. */
static void put_fitted(FILE *f, const char *label, double w)
{
	double room = (w - 6) / FONT_W;
	size_t chars = room > 0 ? (size_t)room : 0, total, cut;

	if (chars < 3)
		return;
	cut = utf8_prefix(label, chars, &total);
	if (total <= chars) {
		xml_put(f, label, cut);
		return;
	}
	xml_put(f, label, utf8_prefix(label, chars - 2, &total));
	fputs("..", f);
}

/* FNV-1a: a stable colour per name, so a function keeps its colour across runs. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/*
 * One hue per frame kind (enum pt_frame_kind), light enough for black text, none near the
 * search highlight (MATCH in the script, magenta): native code green, Python blue, JIT code
 * gold, the allocator red-orange, markers grey. Within a kind the name hash moves each channel
 * by up to +-spread/2 (grey: all three alike), so neighbours differ and a function keeps its
 * shade across runs.
 */
static const struct kind_colour {
	uint8_t r, g, b, spread;
} kind_colours[PT_FK_MAX] = {
	[PT_FK_NATIVE] = { 70, 195, 120, 44 },
	[PT_FK_PYTHON] = { 115, 165, 235, 36 },
	[PT_FK_JIT] = { 232, 200, 70, 40 },
	[PT_FK_ALLOC] = { 238, 112, 82, 36 },
	[PT_FK_OTHER] = { 190, 190, 190, 30 },
};

static unsigned int shade(unsigned int base, unsigned int spread, uint32_t byte)
{
	int v = (int)base + (int)(byte * spread / 255) - (int)spread / 2;

	return v < 0 ? 0 : v > 255 ? 255 : (unsigned int)v;
}

static void put_color(FILE *f, const char *name, enum pt_frame_kind k)
{
	const struct kind_colour *c = &kind_colours[k < PT_FK_MAX ? k : PT_FK_OTHER];
	uint32_t h = name_hash(name);
	uint32_t hr = (h >> 16) & 0xff, hg = h & 0xff, hb = (h >> 8) & 0xff;

	if (k == PT_FK_OTHER)
		hg = hb = hr;
	fprintf(f, "rgb(%u,%u,%u)", shade(c->r, c->spread, hr), shade(c->g, c->spread, hg),
		shade(c->b, c->spread, hb));
}

static const char *count_noun(enum pt_metric m)
{
	switch (m) {
	case PT_ALLOC_COUNT: return "allocations";
	case PT_FREE_COUNT: return "frees";
	default: return "objects";
	}
}

/* "1.50 MiB, 1572864 bytes" / "512 bytes" / "42 allocations" */
static void put_amount(FILE *f, enum pt_metric m, uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = v;
	char buf[40];
	int u = -1;

	if (strcmp(pt_metric_unit(m), "bytes") != 0) {
		fprintf(f, "%" PRIu64 " %s", v, count_noun(m));
		return;
	}
	if (v < 1024) {
		fprintf(f, "%" PRIu64 " bytes", v);
		return;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	fprintf(f, "%s %s, %" PRIu64 " bytes", fix2(buf, sizeof(buf), d), units[u], v);
}

/*
 * The script is static; the few numbers it shares with the layout come first, printed
 * from the same #defines. It keeps ES5 syntax so older viewers run it too.
 * Interaction: click a frame to zoom into it (ancestors stay, dimmed, full width),
 * "Reset Zoom" or Esc to go back; "Search", Ctrl-F or F3 to highlight frames matching a
 * regular expression and show what share of the total they cover.
 */
static const char script[] =
"var MATCH = \"rgb(230,0,230)\", FONT_W = FONT_SIZE * 0.59;\n"
"var frames = [], details, matched, unzoombtn, searchbtn, searching = false;\n"
"\n"
"function init(evt) {\n"
"	details = document.getElementById(\"details\");\n"
"	matched = document.getElementById(\"matched\");\n"
"	unzoombtn = document.getElementById(\"unzoom\");\n"
"	searchbtn = document.getElementById(\"search\");\n"
"	var gs = document.getElementById(\"frames\").getElementsByTagName(\"g\");\n"
"	for (var i = 0; i < gs.length; i++) {\n"
"		var g = gs[i], r = g.getElementsByTagName(\"rect\")[0];\n"
"		var tip = g.getElementsByTagName(\"title\")[0].textContent;\n"
"		var fr = { g: g, r: r, t: g.getElementsByTagName(\"text\")[0], tip: tip,\n"
"			/* the tooltip is \"NAME (amount, P%)\"; names may hold \" (\" too */\n"
"			name: tip.substring(0, tip.lastIndexOf(\" (\")),\n"
"			x: parseFloat(r.getAttribute(\"x\")), y: parseFloat(r.getAttribute(\"y\")),\n"
"			w: parseFloat(r.getAttribute(\"width\")), fill: r.getAttribute(\"fill\") };\n"
"		frames.push(fr);\n"
"		hook(fr);\n"
"	}\n"
"	unzoombtn.addEventListener(\"click\", unzoom, false);\n"
"	searchbtn.addEventListener(\"click\", function () {\n"
"		if (searching)\n"
"			reset_search();\n"
"		else\n"
"			search_prompt();\n"
"	}, false);\n"
"	window.addEventListener(\"keydown\", function (e) {\n"
"		if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
"			e.preventDefault();\n"
"			search_prompt();\n"
"		} else if (e.keyCode === 27) {\n"
"			reset_search();\n"
"			unzoom();\n"
"		}\n"
"	}, false);\n"
"}\n"
"\n"
"function hook(fr) {\n"
"	fr.g.addEventListener(\"click\", function () { zoom(fr); }, false);\n"
"	fr.g.addEventListener(\"mouseover\", function () {\n"
"		details.textContent = \"Frame: \" + fr.tip;\n"
"	}, false);\n"
"	fr.g.addEventListener(\"mouseout\", function () {\n"
"		details.textContent = \" \";\n"
"	}, false);\n"
"}\n"
"\n"
"function fit(fr, w) {\n"
"	var n = Math.floor((w - 6) / FONT_W);\n"
"	if (n < 3)\n"
"		fr.t.textContent = \"\";\n"
"	else if (fr.name.length <= n)\n"
"		fr.t.textContent = fr.name;\n"
"	else\n"
"		fr.t.textContent = fr.name.substring(0, n - 2) + \"..\";\n"
"}\n"
"\n"
"function place(fr, x, w, cls) {\n"
"	fr.g.setAttribute(\"class\", cls);\n"
"	if (cls === \"hide\")\n"
"		return;\n"
"	fr.r.setAttribute(\"x\", x.toFixed(2));\n"
"	fr.r.setAttribute(\"width\", w.toFixed(2));\n"
"	fr.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"	fit(fr, w);\n"
"}\n"
"\n"
"/* Positions are compared in the original layout; they are rounded to 0.01 px,\n"
"   hence the tolerance. */\n"
"function zoom(z) {\n"
"	var eps = 0.02, full = IMG_W - 2 * XPAD, scale = full / z.w;\n"
"	for (var i = 0; i < frames.length; i++) {\n"
"		var e = frames[i];\n"
"		if (e.y > z.y) {\n"
"			/* below the clicked frame: its ancestors span it */\n"
"			if (e.x <= z.x + eps && e.x + e.w >= z.x + z.w - eps)\n"
"				place(e, XPAD, full, \"parent\");\n"
"			else\n"
"				place(e, 0, 0, \"hide\");\n"
"		} else if (e.x >= z.x - eps && e.x + e.w <= z.x + z.w + eps) {\n"
"			place(e, XPAD + (e.x - z.x) * scale, e.w * scale, \"\");\n"
"		} else {\n"
"			place(e, 0, 0, \"hide\");\n"
"		}\n"
"	}\n"
"	unzoombtn.setAttribute(\"class\", \"button\");\n"
"}\n"
"\n"
"function unzoom() {\n"
"	for (var i = 0; i < frames.length; i++)\n"
"		place(frames[i], frames[i].x, frames[i].w, \"\");\n"
"	unzoombtn.setAttribute(\"class\", \"button hide\");\n"
"}\n"
"\n"
"function search_prompt() {\n"
"	var term = window.prompt(\"Search frames (regular expression):\", \"\");\n"
"	if (term)\n"
"		search(term);\n"
"}\n"
"\n"
"function search(term) {\n"
"	var re, spans = [], i;\n"
"	try {\n"
"		re = new RegExp(term);\n"
"	} catch (err) {\n"
"		/* not a valid regex: look for the text literally */\n"
"		re = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\"));\n"
"	}\n"
"	for (i = 0; i < frames.length; i++) {\n"
"		var e = frames[i];\n"
"		if (re.test(e.name)) {\n"
"			e.r.setAttribute(\"fill\", MATCH);\n"
"			spans.push([e.x, e.x + e.w]);\n"
"		} else {\n"
"			e.r.setAttribute(\"fill\", e.fill);\n"
"		}\n"
"	}\n"
"	/* A match inside a match must not count twice: measure the union. */\n"
"	spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"	var covered = 0, cs = 0, ce = -1;\n"
"	for (i = 0; i < spans.length; i++) {\n"
"		if (spans[i][0] > ce) {\n"
"			if (ce > cs)\n"
"				covered += ce - cs;\n"
"			cs = spans[i][0];\n"
"			ce = spans[i][1];\n"
"		} else if (spans[i][1] > ce) {\n"
"			ce = spans[i][1];\n"
"		}\n"
"	}\n"
"	if (ce > cs)\n"
"		covered += ce - cs;\n"
"	var pct = frames.length ? 100 * covered / frames[0].w : 0;\n"
"	matched.textContent = spans.length ?\n"
"		\"Matched: \" + pct.toFixed(1) + \"%\" : \"No match for \" + term;\n"
"	searchbtn.textContent = \"Reset Search\";\n"
"	searching = true;\n"
"}\n"
"\n"
"function reset_search() {\n"
"	for (var i = 0; i < frames.length; i++)\n"
"		frames[i].r.setAttribute(\"fill\", frames[i].fill);\n"
"	matched.textContent = \" \";\n"
"	searchbtn.textContent = \"Search\";\n"
"	searching = false;\n"
"}\n";

static const char style[] =
"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
"#title { text-anchor: middle; font-size: 17px; }\n"
"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
"#search, #matched { text-anchor: end; }\n"
".button { cursor: pointer; opacity: 0.8; }\n"
".button:hover { opacity: 1; text-decoration: underline; }\n"
".hide { display: none; }\n"
".parent { opacity: 0.5; }\n"
"#frames g { cursor: pointer; }\n"
"#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n";

static void put_frame(FILE *f, const struct node *nd, const char *label, enum pt_frame_kind k,
		      enum pt_metric m, uint64_t total, double scale, int frames_bottom,
		      const struct pt_flame_style *st)
{
	double x = XPAD + nd->start * scale, w = nd->value * scale;
	int y = frames_bottom - (nd->depth + 1) * FRAME_H;
	char bx[32], bw[32], bt[32], bp[32];

	fputs("<g><title>", f);
	xml_put(f, label, strlen(label));
	fputs(" (", f);
	put_amount(f, m, nd->value);
	fprintf(f, ", %s%%", fix2(bp, sizeof(bp), nd->value * 100.0 / total));
	if (st && st->note)
		st->note(f, nd->value, nd->aux, st->ctx);
	fputs(")</title>", f);
	fprintf(f, "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"",
		fix2(bx, sizeof(bx), x), y, fix2(bw, sizeof(bw), w), FRAME_H - 1);
	if (st && st->color)
		st->color(f, label, nd->value, nd->aux, st->ctx);
	else if (nd->name == ROOT_NAME)
		fprintf(f, "rgb(%u,%u,%u)", kind_colours[PT_FK_OTHER].r, kind_colours[PT_FK_OTHER].g,
			kind_colours[PT_FK_OTHER].b);
	else
		put_color(f, label, k);
	fprintf(f, "\" rx=\"2\" ry=\"2\"/><text x=\"%s\" y=\"%d\">", fix2(bt, sizeof(bt), x + 3),
		y + FRAME_H - 5);
	put_fitted(f, label, w);
	fputs("</text></g>\n", f);
}

static void put_text(FILE *f, const char *id, const char *cls, int x, int y, const char *s)
{
	fprintf(f, "<text id=\"%s\"%s%s%s x=\"%d\" y=\"%d\">", id, cls ? " class=\"" : "",
		cls ? cls : "", cls ? "\"" : "", x, y);
	xml_put(f, s, strlen(s));
	fputs("</text>\n", f);
}

/* One swatch and name per kind drawn (present[k]), left to right in enum order, in the row
 * between the root and the details line: outside the frames group, so the script leaves it. */
static void put_legend(FILE *f, const int *present, int y)
{
	int k, x = XPAD;

	fputs("<g id=\"legend\">\n", f);
	for (k = 0; k < PT_FK_MAX; k++) {
		const struct kind_colour *c = &kind_colours[k];
		const char *name = pt_frame_kind_name((enum pt_frame_kind)k);

		if (!present[k])
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" "
			"rx=\"2\" ry=\"2\"/><text x=\"%d\" y=\"%d\">%s</text>\n", x, y, LEGEND_BOX,
			LEGEND_BOX, c->r, c->g, c->b, x + LEGEND_BOX + 4, y + LEGEND_BOX - 2, name);
		x += LEGEND_BOX + 4 + (int)(strlen(name) * FONT_W) + 18;
	}
	fputs("</g>\n", f);
}

int pt_write_flamegraph(FILE *f, const struct pt_profile *p, enum pt_metric m,
			const char *title, const char *subtitle)
{
	return pt_write_flamegraph_styled(f, p, m, title, subtitle, NULL);
}

int pt_write_flamegraph_styled(FILE *f, const struct pt_profile *p, enum pt_metric m,
			       const char *title, const char *subtitle,
			       const struct pt_flame_style *st)
{
	struct tree t = { 0 };
	char **labels = NULL, *ctitle = NULL, *csub = NULL, *deftitle = NULL;
	uint32_t *rank = NULL, nranks, i, maxdepth = 0;
	const char **by_rank = NULL;
	uint8_t *kind_by_rank = NULL;
	int present[PT_FK_MAX] = { 0 };
	uint64_t total;
	double scale = 0;
	int err, top, height, frames_bottom;

	err = pt_writer_prepare(p, m, &labels);
	if (err)
		return err;
	err = -ENOMEM;
	rank = malloc((p->nframes ? p->nframes : 1) * sizeof(*rank));
	if (!rank)
		goto out;
	err = pt_frame_ranks(p, labels, 0, rank, &nranks);
	if (err)
		goto out;
	err = build_tree(p, m, rank, st ? st->aux : NULL, &t);
	if (err)
		goto out;
	/* Tree nodes only know ranks; any frame of a rank carries its label. */
	err = -ENOMEM;
	by_rank = malloc((nranks ? nranks : 1) * sizeof(*by_rank));
	kind_by_rank = malloc(nranks ? nranks : 1);
	if (!by_rank || !kind_by_rank)
		goto out;
	/* Frames that share a label share a node; the last one's kind colours it. */
	for (i = 0; i < p->nframes; i++) {
		by_rank[rank[i]] = labels[i];
		kind_by_rank[rank[i]] = p->frames[i].kind < PT_FK_MAX ? p->frames[i].kind : PT_FK_OTHER;
	}

	if (!title && asprintf(&deftitle, "Memory flame graph: %s", pt_metric_name(m)) < 0)
		goto out;
	ctitle = pt_clean_text(title ? title : deftitle);
	csub = pt_clean_text(subtitle);
	if (!ctitle || !csub)
		goto out;

	total = t.n[0].value;
	if (total)
		scale = (double)(IMG_W - 2 * XPAD) / total;
	for (i = 0; i < t.len; i++) {
		if (t.n[i].value * scale < MIN_W)
			continue;
		if (t.n[i].depth > maxdepth)
			maxdepth = t.n[i].depth;
		if (t.n[i].name != ROOT_NAME)
			present[kind_by_rank[t.n[i].name]] = 1;
	}
	top = *csub ? 56 : 40;
	frames_bottom = top + (maxdepth + 1) * FRAME_H;
	height = frames_bottom + (total ? LEGEND_H : 0) + BOTTOM;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n", f);
	fprintf(f, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n",
		IMG_W, height, IMG_W, height);
	fputs("<!-- Memory flame graph written by peaktrace. Click a frame to zoom, "
	      "Ctrl-F to search. -->\n", f);
	fputs("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	      "<stop stop-color=\"#e0e0ff\" offset=\"95%\"/></linearGradient></defs>\n", f);
	fprintf(f, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", style);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n\"use strict\";\n"
		"var IMG_W = %d, XPAD = %d, FONT_SIZE = %d;\n%s]]></script>\n",
		IMG_W, XPAD, FONT_SIZE, script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		IMG_W, height);
	put_text(f, "title", NULL, IMG_W / 2, 24, ctitle);
	if (*csub)
		put_text(f, "subtitle", NULL, IMG_W / 2, 42, csub);
	put_text(f, "unzoom", "button hide", XPAD, 24, "Reset Zoom");
	put_text(f, "search", "button", IMG_W - XPAD, 24, "Search");
	put_text(f, "details", NULL, XPAD, height - 12, " ");
	put_text(f, "matched", NULL, IMG_W - XPAD, height - 12, " ");
	if (!total)
		put_text(f, "empty", NULL, XPAD, frames_bottom - 4,
			 "No data: this metric is zero for every stack.");

	fputs("<g id=\"frames\">\n", f);
	for (i = 0; total && i < t.len; i++) {
		const struct node *nd = &t.n[i];
		const char *label = nd->name == ROOT_NAME ? "all" : by_rank[nd->name];

		if (nd->value * scale < MIN_W)
			continue;
		put_frame(f, nd, label, nd->name == ROOT_NAME ? PT_FK_OTHER : kind_by_rank[nd->name],
			  m, total, scale, frames_bottom, st);
	}
	fputs("</g>\n", f);
	/* A styled graph (diff) colours by its own rule: the kinds' legend would mislead. */
	if (total && !st)
		put_legend(f, present, frames_bottom + 4);
	fputs("</svg>\n", f);
	err = pt_stream_result(f);
out:
	free(deftitle);
	free(ctitle);
	free(csub);
	free(t.n);
	free(by_rank);
	free(kind_by_rank);
	free(rank);
	pt_labels_free(labels, p->nframes);
	return err;
}

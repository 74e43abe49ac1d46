// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff.c — `peaktrace diff DIR_A DIR_B` (diff.h), in the manner of heaptrack --diff and
 * Brendan Gregg's difffolded.pl: per-stack deltas from the folded files, which hold every
 * stack with its exact bytes (report.json keeps only the top stacks), the overall and
 * per-invocation figures from report.json, and a differential flame graph whose widths are B's
 * bytes and whose colours say what grew (red) or shrank (blue) since A.
 *
 * Both inputs may be anything a user points at, so every read is bounded (file sizes, the JSON
 * reader's depth) and every malformed input ends in one "peaktrace: " line, never a crash.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/outdir.h"
#include "profile/profile.h"
#include "report/diff.h"

#define MAX_JSON	(256u << 20)	/* report.json larger than this is not ours */
#define MAX_FOLDED	(1024u << 20)
#define SHORT_FRAMES	5		/* frames shown per stack line */
#define MAX_INVS	100000		/* invocation rows read per run */

/* ---- the pure core ---------------------------------------------------------------------- */

static int line_cmp(const void *x, const void *y)
{
	return strcmp(((const struct pt_fold_line *)x)->stack, ((const struct pt_fold_line *)y)->stack);
}

/* One line (NUL-terminated, newline gone): its stack and value, or -EINVAL. */
static int parse_line(char *s, size_t n, struct pt_fold_line *l)
{
	char *sp, *p;
	uint64_t v = 0;

	if (n && s[n - 1] == '\r')
		s[--n] = '\0';
	sp = strrchr(s, ' ');
	if (!sp || sp == s || !sp[1])
		return -EINVAL;
	for (p = sp + 1; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*sp = '\0';
	l->stack = s;
	l->v = v;
	return 0;
}

int pt_fold_parse(char *text, size_t len, struct pt_fold *out, size_t *bad_line)
{
	size_t cap = 0, n = 0, i, lineno = 0;
	struct pt_fold_line *lines = NULL, *nl;
	char *s = text, *end = text + len, *e;

	*out = (struct pt_fold){ 0 };
	if (memchr(text, '\0', len)) {
		/* A binary file: name the line of the first NUL. */
		for (e = text, lineno = 1; e < text + len && *e; e++)
			lineno += *e == '\n';
		*bad_line = lineno;
		return -EINVAL;
	}
	for (; s < end; s = e + 1) {
		e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		*e = '\0';	/* text has room: end is the reader's NUL */
		lineno++;
		if (s == e || (e - s == 1 && *s == '\r'))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(nl = realloc(lines, cap * sizeof(*lines)))) {
				free(lines);
				return -ENOMEM;
			}
			lines = nl;
		}
		if (parse_line(s, (size_t)(e - s), &lines[n])) {
			free(lines);
			*bad_line = lineno;
			return -EINVAL;
		}
		n++;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), line_cmp);
	/* Merge repeated stacks (saturating: the sum of a hostile file may not fit). */
	for (i = 0, out->n = 0; i < n; i++) {
		if (out->n && strcmp(lines[out->n - 1].stack, lines[i].stack) == 0) {
			uint64_t *v = &lines[out->n - 1].v;

			*v = *v > UINT64_MAX - lines[i].v ? UINT64_MAX : *v + lines[i].v;
			continue;
		}
		lines[out->n++] = lines[i];
	}
	out->lines = lines;
	return 0;
}

void pt_fold_free(struct pt_fold *f)
{
	free(f->lines);
	*f = (struct pt_fold){ 0 };
}

int pt_fold_diff(const struct pt_fold *a, const struct pt_fold *b, struct pt_diff_row **rows,
		 size_t *n)
{
	size_t i = 0, j = 0, k = 0, cap = a->n + b->n;
	struct pt_diff_row *r;

	*rows = NULL;
	*n = 0;
	if (!cap)
		return 0;
	r = calloc(cap, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* A merge join: both sides are sorted by stack, each stack once. */
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->lines[i].stack, b->lines[j].stack);

		if (c <= 0) {
			r[k].stack = a->lines[i].stack;
			r[k].a = a->lines[i++].v;
		}
		if (c >= 0) {
			r[k].stack = b->lines[j].stack;
			r[k].b = b->lines[j++].v;
		}
		k++;
	}
	*rows = r;
	*n = k;
	return 0;
}

static int row_cmp(const void *x, const void *y)
{
	const struct pt_diff_row *p = x, *q = y;
	int64_t dp = pt_diff_delta(p), dq = pt_diff_delta(q);

	if (dp != dq)
		return dp > dq ? -1 : 1;
	return strcmp(p->stack, q->stack);
}

void pt_diff_sort(struct pt_diff_row *rows, size_t n)
{
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
}

char *pt_diff_short_stack(const char *stack, int maxframes)
{
	size_t len = strlen(stack), o = 0, cap = len + 16;
	const char *end = stack + len, *p;
	char *out = malloc(cap), *clean;
	int k;

	if (!out)
		return NULL;
	/* Walk from the leaf (the last frame) toward the root. */
	for (k = 0; end > stack && k < maxframes; k++) {
		for (p = end; p > stack && p[-1] != ';'; p--)
			;
		o += (size_t)snprintf(out + o, cap - o, "%s%.*s", k ? " < " : "", (int)(end - p), p);
		end = p > stack ? p - 1 : stack;
		if (p == stack)
			break;
	}
	if (k == maxframes && end > stack)
		snprintf(out + o, cap - o, " < ...");
	clean = pt_sanitize_dup(out);
	free(out);
	return clean;
}

void pt_diff_color(char *buf, size_t len, int64_t delta, uint64_t scale)
{
	uint64_t mag = delta < 0 ? (uint64_t)0 - (uint64_t)delta : (uint64_t)delta;
	unsigned int c;

	if (!delta || !scale) {
		snprintf(buf, len, "rgb(220,220,220)");
		return;
	}
	if (mag > scale)
		mag = scale;
	/* As flamegraph.pl does for difffolded input: the other two channels fade from 210 to 0. */
	c = (unsigned int)(210.0 * (double)(scale - mag) / (double)scale);
	if (delta > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", c, c);
	else
		snprintf(buf, len, "rgb(%u,%u,255)", c, c);
}

/* ---- one run's directory ---------------------------------------------------------------- */

enum { F_PEAK, F_LIVE, F_ALLOC, F_COUNT };
static const char *const folded_names[F_COUNT] = { "peak.folded", "live.folded", "alloc.folded" };
static const char *const folded_titles[F_COUNT] = {
	"AT PEAK (held when the live heap peaked)", "LIVE AT END (still allocated)",
	"ALLOCATED (in total)" };

struct inv_peak {
	uint64_t seq;
	char phase[16];
	bool has_heap, has_rss;
	uint64_t heap_peak, rss_peak;
};

struct run {
	const char *dir;
	char *json;
	char *text[F_COUNT];
	struct pt_fold fold[F_COUNT];
	uint64_t peak_live, live, alloc_bytes, rss_peak, vmhwm;
	bool has_rss, has_vmhwm;
	struct inv_peak *invs;
	size_t ninvs;
};

static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < F_COUNT; i++) {
		pt_fold_free(&r->fold[i]);
		free(r->text[i]);
	}
	free(r->json);
	free(r->invs);
}

static int bad(const char *dir, const char *what, const char *why)
{
	fprintf(stderr, "peaktrace: %s%s%s: %s\n", dir, what ? "/" : "", what ? what : "", why);
	return -EINVAL;
}

/* A file of the run, whole: NULL (and the error line said) if missing or too large. */
static char *read_whole(const struct run *r, const char *name, size_t max, size_t *len)
{
	char path[4096], why[256];
	char *s;

	if (snprintf(path, sizeof(path), "%s/%s", r->dir, name) >= (int)sizeof(path)) {
		bad(r->dir, name, "path too long");
		return NULL;
	}
	s = pt_read_file(path, max, len);
	if (!s) {
		snprintf(why, sizeof(why), "%s (not a peaktrace -o directory?)", strerror(errno));
		bad(r->dir, name, why);
		return NULL;
	}
	if (*len >= max) {
		bad(r->dir, name, "too large");
		free(s);
		return NULL;
	}
	return s;
}

static bool get_u64(struct pt_json obj, const char *a, const char *b, uint64_t *out)
{
	struct pt_json v;

	return pt_json_get(obj, a, &v) && (!b || pt_json_get(v, b, &v)) && pt_json_u64(v, out);
}

/* invocations[]: seq and the two peaks of each row (null figures stay unknown). */
static int read_invocations(struct run *r, struct pt_json doc)
{
	struct pt_json arr, it, row, v;
	struct inv_peak *p;

	if (!pt_json_get(doc, "invocations", &arr) || !pt_json_iter(arr, &it))
		return 0;	/* an older report, or none: no per-invocation figures */
	while (pt_json_next(&it, &row) && r->ninvs < MAX_INVS) {
		if (r->ninvs % 64 == 0) {
			p = realloc(r->invs, (r->ninvs + 64) * sizeof(*p));
			if (!p)
				return -ENOMEM;
			r->invs = p;
		}
		p = &r->invs[r->ninvs];
		*p = (struct inv_peak){ 0 };
		if (!get_u64(row, "seq", NULL, &p->seq))
			continue;
		p->has_heap = get_u64(row, "heap_peak_bytes", NULL, &p->heap_peak);
		p->has_rss = get_u64(row, "rss_peak_bytes", NULL, &p->rss_peak);
		if (pt_json_get(row, "phase", &v))
			pt_json_str_copy(v, p->phase, sizeof(p->phase));
		r->ninvs++;
	}
	return 0;
}

static int read_report(struct run *r)
{
	struct pt_json doc, v;
	char tool[64];
	uint64_t version;
	size_t len;

	r->json = read_whole(r, "report.json", MAX_JSON, &len);
	if (!r->json)
		return -EINVAL;
	if (pt_json_parse(r->json, len, &doc) || pt_json_type(doc) != PT_JSON_OBJECT)
		return bad(r->dir, "report.json", "not valid JSON");
	if (!pt_json_get(doc, "tool", &v) || !pt_json_str_copy(v, tool, sizeof(tool)) ||
	    strncmp(tool, "peaktrace", 9) != 0 || !get_u64(doc, "version", NULL, &version))
		return bad(r->dir, "report.json", "not a peaktrace report (no \"tool\": \"peaktrace ...\")");
	if (version != 1)
		return bad(r->dir, "report.json", "report version not 1");
	if (!get_u64(doc, "totals", "peak_live_bytes", &r->peak_live) ||
	    !get_u64(doc, "totals", "live_bytes", &r->live) ||
	    !get_u64(doc, "totals", "alloc_bytes", &r->alloc_bytes))
		return bad(r->dir, "report.json", "no totals.peak_live_bytes, live_bytes, alloc_bytes");
	r->has_rss = get_u64(doc, "rss", "peak_bytes", &r->rss_peak);
	r->has_vmhwm = get_u64(doc, "rss", "vmhwm_bytes", &r->vmhwm);
	if (read_invocations(r, doc))
		return -ENOMEM;
	return 0;
}

static int read_run(struct run *r)
{
	char why[64];
	struct stat st;
	size_t len, line;
	int i, err;

	if (stat(r->dir, &st))
		return bad(r->dir, NULL, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return bad(r->dir, NULL, "not a directory (give two peaktrace -o directories)");
	if ((err = read_report(r)))
		return err;
	for (i = 0; i < F_COUNT; i++) {
		r->text[i] = read_whole(r, folded_names[i], MAX_FOLDED, &len);
		if (!r->text[i])
			return -EINVAL;
		err = pt_fold_parse(r->text[i], len, &r->fold[i], &line);
		if (err == -ENOMEM)
			return err;
		if (err) {
			snprintf(why, sizeof(why), "line %zu is not \"STACK BYTES\"", line);
			return bad(r->dir, folded_names[i], why);
		}
	}
	return 0;
}

/* ---- the report ------------------------------------------------------------------------- */

/* "+123456 bytes (+120.56 KiB)", "-512 bytes", "0 bytes" */
static void put_delta(FILE *f, int64_t d)
{
	char h[32];

	fprintf(f, d ? "%+" PRId64 " bytes" : "%" PRId64 " bytes", d);
	if (d >= 1024 || d <= -1024)
		fprintf(f, " (%s%s)", d > 0 ? "+" : "", pt_fmt_bytes(h, sizeof(h), (double)d));
}

static void put_total(FILE *f, const char *what, bool ok_a, uint64_t a, bool ok_b, uint64_t b)
{
	char sa[24] = "-", sb[24] = "-";

	if (ok_a)
		snprintf(sa, sizeof(sa), "%" PRIu64, a);
	if (ok_b)
		snprintf(sb, sizeof(sb), "%" PRIu64, b);
	fprintf(f, "  %-16s %16s %16s  ", what, sa, sb);
	if (ok_a && ok_b)
		put_delta(f, (int64_t)(b - a));
	else
		fputs("-", f);
	fputc('\n', f);
}

static void put_row(FILE *f, const struct pt_diff_row *r)
{
	char *st = pt_diff_short_stack(r->stack, SHORT_FRAMES);

	fputs("    ", f);
	put_delta(f, pt_diff_delta(r));
	fprintf(f, "  (%" PRIu64 " -> %" PRIu64 ")  %s\n", r->a, r->b, st ? st : "?");
	free(st);
}

/* rows sorted by pt_diff_sort: growth first, shrink last. */
static void put_stacks(FILE *f, const char *title, const struct pt_diff_row *rows, size_t n,
		       int top)
{
	size_t grew = 0, shrank = 0, i;
	int k;

	for (i = 0; i < n; i++) {
		grew += pt_diff_delta(&rows[i]) > 0;
		shrank += pt_diff_delta(&rows[i]) < 0;
	}
	fprintf(f, "\n%s: %zu stack%s grew, %zu shrank, %zu unchanged (of %zu)\n", title, grew,
		grew == 1 ? "" : "s", shrank, n - grew - shrank, n);
	if (grew)
		fprintf(f, "  grew (biggest first):\n");
	for (i = 0, k = 0; i < n && k < top && pt_diff_delta(&rows[i]) > 0; i++, k++)
		put_row(f, &rows[i]);
	if (grew > (size_t)top)
		fprintf(f, "    ... %zu more\n", grew - (size_t)top);
	if (shrank)
		fprintf(f, "  shrank (biggest first):\n");
	for (i = n, k = 0; i-- > 0 && k < top && pt_diff_delta(&rows[i]) < 0; k++)
		put_row(f, &rows[i]);
	if (shrank > (size_t)top)
		fprintf(f, "    ... %zu more\n", shrank - (size_t)top);
}

static int inv_cmp(const void *x, const void *y)
{
	uint64_t p = ((const struct inv_peak *)x)->seq, q = ((const struct inv_peak *)y)->seq;

	return p < q ? -1 : p > q;
}

static bool has_invocations(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->ninvs; i++)
		if (r->invs[i].seq > 0 || strcmp(r->invs[i].phase, "invocation") == 0)
			return true;
	return false;
}

/* Per-invocation peaks matched by seq (request ids differ between runs). */
static void put_invocations(FILE *f, struct run *a, struct run *b)
{
	static const struct inv_peak none = { 0 };
	size_t i = 0, j = 0;

	if (!has_invocations(a) && !has_invocations(b))
		return;
	if (a->ninvs)
		qsort(a->invs, a->ninvs, sizeof(*a->invs), inv_cmp);
	if (b->ninvs)
		qsort(b->invs, b->ninvs, sizeof(*b->invs), inv_cmp);
	fprintf(f, "\nINVOCATIONS (matched by seq: request ids differ between runs)\n");
	while (i < a->ninvs || j < b->ninvs) {
		const struct inv_peak *x = &none, *y = &none;
		uint64_t seq;
		char name[64];

		if (j == b->ninvs || (i < a->ninvs && a->invs[i].seq <= b->invs[j].seq))
			x = &a->invs[i];
		if (i == a->ninvs || (j < b->ninvs && b->invs[j].seq <= a->invs[i].seq))
			y = &b->invs[j];
		seq = x != &none ? x->seq : y->seq;
		/* Repeated seqs (a hand-made file): each side moves past all of them. */
		while (i < a->ninvs && a->invs[i].seq == seq)
			i++;
		while (j < b->ninvs && b->invs[j].seq == seq)
			j++;
		snprintf(name, sizeof(name), "seq %" PRIu64 " %s", seq,
			 *y->phase ? y->phase : x->phase);
		fprintf(f, " %s\n", name);
		put_total(f, "heap peak", x->has_heap, x->heap_peak, y->has_heap, y->heap_peak);
		put_total(f, "RSS peak", x->has_rss, x->rss_peak, y->has_rss, y->rss_peak);
	}
}

static void print_report(FILE *f, const struct pt_diff_options *o, struct run *a, struct run *b,
			 struct pt_diff_row *rows[F_COUNT], const size_t nrows[F_COUNT])
{
	char *da = pt_sanitize_dup(a->dir), *db = pt_sanitize_dup(b->dir);
	int i;

	fprintf(f, "peaktrace diff: A = %s, B = %s\n\n", da ? da : "?", db ? db : "?");
	fprintf(f, "  %-16s %16s %16s  %s\n", "", "A (bytes)", "B (bytes)", "change (B - A)");
	put_total(f, "peak live heap", true, a->peak_live, true, b->peak_live);
	put_total(f, "peak RSS", a->has_rss, a->rss_peak, b->has_rss, b->rss_peak);
	put_total(f, "VmHWM", a->has_vmhwm, a->vmhwm, b->has_vmhwm, b->vmhwm);
	put_total(f, "live at end", true, a->live, true, b->live);
	put_total(f, "allocated", true, a->alloc_bytes, true, b->alloc_bytes);
	for (i = 0; i < F_COUNT; i++) {
		pt_diff_sort(rows[i], nrows[i]);
		put_stacks(f, folded_titles[i], rows[i], nrows[i], o->top);
	}
	put_invocations(f, a, b);
	free(da);
	free(db);
}

/* ---- the differential flame graph ------------------------------------------------------- */

/* Frame names interned by an open-addressing table: a name is one pt_frame. */
struct interner {
	struct pt_profile *p;
	uint32_t *slot;		/* frame index + 1, 0 = empty */
	uint32_t cap, fcap;	/* slots (a power of 2), frames allocated */
};

static uint32_t fnv(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int intern_grow(struct interner *in)
{
	uint32_t cap = in->cap ? in->cap * 2 : 1024, i, k;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < in->p->nframes; i++) {
		const char *name = in->p->frames[i].func;

		for (k = fnv(name, strlen(name)) & (cap - 1); slot[k]; k = (k + 1) & (cap - 1))
			;
		slot[k] = i + 1;
	}
	free(in->slot);
	in->slot = slot;
	in->cap = cap;
	return 0;
}

/* The frame index of name[0, n): found or added. -1 when out of memory. */
static int64_t intern(struct interner *in, const char *name, size_t n)
{
	struct pt_profile *p = in->p;
	struct pt_frame *fr;
	uint32_t k;

	if ((p->nframes + 1) * 2 > in->cap && intern_grow(in))
		return -1;
	for (k = fnv(name, n) & (in->cap - 1); in->slot[k]; k = (k + 1) & (in->cap - 1)) {
		const char *f = p->frames[in->slot[k] - 1].func;

		if (strlen(f) == n && memcmp(f, name, n) == 0)
			return in->slot[k] - 1;
	}
	if (p->nframes == in->fcap) {
		uint32_t cap = in->fcap ? in->fcap * 2 : 256;

		if (!(fr = realloc(p->frames, cap * sizeof(*fr))))
			return -1;
		p->frames = fr;
		in->fcap = cap;
	}
	fr = &p->frames[p->nframes];
	*fr = (struct pt_frame){ .func = strndup(name, n), .module = "" };
	if (!fr->func)
		return -1;
	in->slot[k] = ++p->nframes;
	return p->nframes - 1;
}

/* One stack of the profile from a folded (root-first) stack: frames leaf first. */
static int add_stack(struct interner *in, struct pt_stack *st, const char *stack)
{
	uint32_t n = 1, i;
	const char *s, *e;
	int64_t idx;

	for (s = stack; *s; s++)
		n += *s == ';';
	st->frames = malloc(n * sizeof(*st->frames));
	if (!st->frames)
		return -ENOMEM;
	for (s = stack, i = n; i-- > 0; s = e + 1) {
		e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		if ((idx = intern(in, s, (size_t)(e - s))) < 0)
			return -ENOMEM;
		st->frames[i] = (uint32_t)idx;
		st->nframes++;
	}
	return 0;
}

static void profile_free(struct pt_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nframes; i++)
		free(p->frames[i].func);
	for (i = 0; i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->frames);
	free(p->stacks);
}

struct diff_style {
	uint64_t scale;	/* the most any frame's delta can be: max(all growth, all shrink) */
};

static void diff_color(FILE *f, const char *label, uint64_t value, int64_t aux, void *ctx)
{
	char buf[32];

	pt_diff_color(buf, sizeof(buf), aux, ((struct diff_style *)ctx)->scale);
	fputs(buf, f);
}

static void diff_note(FILE *f, uint64_t value, int64_t aux, void *ctx)
{
	/* Exact bytes only: the viewer's script takes the name up to the last " (". */
	fprintf(f, aux ? ", %+" PRId64 " bytes since A" : ", %" PRId64 " bytes since A", aux);
}

/* diff.peak.svg: B's stacks at the peak (width), coloured by their change since A. Stacks
 * gone in B have no width but still count in their callers' colour. */
static int write_svg(FILE *f, const struct pt_diff_row *rows, size_t n, const char *sub)
{
	struct pt_profile p = { 0 };
	struct interner in = { .p = &p };
	struct diff_style ds = { 0 };
	struct pt_flame_style st = { .color = diff_color, .note = diff_note, .ctx = &ds };
	uint64_t grew = 0, shrank = 0;
	int64_t *aux = NULL;
	size_t i;
	int err = -ENOMEM;

	p.stacks = calloc(n ? n : 1, sizeof(*p.stacks));
	aux = calloc(n ? n : 1, sizeof(*aux));
	if (!p.stacks || !aux)
		goto out;
	for (i = 0; i < n; i++) {
		int64_t d = pt_diff_delta(&rows[i]);

		if (!rows[i].b && !d)
			continue;
		if (add_stack(&in, &p.stacks[p.nstacks], rows[i].stack)) {
			p.nstacks++;	/* so its frames are freed */
			goto out;
		}
		p.stacks[p.nstacks].v[PT_PEAK_BYTES] = rows[i].b;
		aux[p.nstacks++] = d;
		if (d > 0)
			grew += (uint64_t)d;
		else
			shrank += (uint64_t)0 - (uint64_t)d;
	}
	ds.scale = grew > shrank ? grew : shrank;
	st.aux = aux;
	err = pt_write_flamegraph_styled(f, &p, PT_PEAK_BYTES,
					 "Differential flame graph: peak_space, B against A", sub, &st);
out:
	free(aux);
	free(in.slot);
	profile_free(&p);
	return err;
}

static int write_folded(FILE *f, const struct pt_diff_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pt_diff_delta(&rows[i]))
			fprintf(f, "%s %" PRId64 "\n", rows[i].stack, pt_diff_delta(&rows[i]));
	return pt_stream_result(f);
}

/* OUTDIR/name written by fn, or text when fn is NULL: 0, or the error line said and -errno. */
static int write_out(const char *dir, const char *name, const struct pt_diff_row *rows, size_t n,
		     const char *sub, const char *text)
{
	char path[4096];
	FILE *f;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		fprintf(stderr, "peaktrace: %s/%s: path too long\n", dir, name);
		return -ENAMETOOLONG;
	}
	f = pt_out_fopen(path);
	if (!f) {
		err = -errno;
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
		return err;
	}
	if (text) {
		fputs(text, f);
		err = pt_stream_result(f);
	} else {
		err = sub ? write_svg(f, rows, n, sub) : write_folded(f, rows, n);
	}
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

/* ---- the subcommand --------------------------------------------------------------------- */

/* --max-growth: true (and the one line said) when B's peak live heap exceeds A's by more. */
static bool gate_fails(const struct pt_diff_options *o, const struct run *a, const struct run *b,
		       const struct pt_diff_row *peak_rows, size_t n)
{
	int64_t d = (int64_t)(b->peak_live - a->peak_live);
	char *st = NULL;

	if (b->peak_live <= a->peak_live || (uint64_t)d <= o->max_growth)
		return false;
	/* peak_rows are sorted by pt_diff_sort: the first is the biggest growth. */
	if (n && pt_diff_delta(&peak_rows[0]) > 0)
		st = pt_diff_short_stack(peak_rows[0].stack, SHORT_FRAMES);
	fprintf(stderr, "peaktrace: peak live heap grew by ");
	put_delta(stderr, d);
	fprintf(stderr, ", %" PRIu64 " -> %" PRIu64 ", more than --max-growth %" PRIu64
		" bytes; top growing stack at peak: ", a->peak_live, b->peak_live, o->max_growth);
	if (st) {
		put_delta(stderr, pt_diff_delta(&peak_rows[0]));
		fprintf(stderr, " %s\n", st);
	} else {
		fprintf(stderr, "none\n");
	}
	free(st);
	return true;
}

static enum pt_diff_result write_outputs(const struct pt_diff_options *o, const struct run *a,
					 const struct run *b, const struct pt_diff_row *rows,
					 size_t n)
{
	char *sub = NULL;
	int err;

	if (pt_outdir_prepare(o->outdir))   /* made, checked and held: said why not */
		return PT_DIFF_OUTPUT;
	if (asprintf(&sub, "width: B's bytes at the peak (%s); red grew, blue shrank since A (%s)",
		     b->dir, a->dir) < 0)
		return PT_DIFF_FAIL;
	err = write_out(o->outdir, "diff.peak.folded", rows, n, NULL, NULL);
	if (!err)
		err = write_out(o->outdir, "diff.peak.svg", rows, n, sub, NULL);
	free(sub);
	return err == -ENOMEM ? PT_DIFF_FAIL : err ? PT_DIFF_OUTPUT : PT_DIFF_OK;
}

enum pt_diff_result pt_diff_run(const struct pt_diff_options *o)
{
	struct run a = { .dir = o->dir_a }, b = { .dir = o->dir_b };
	struct pt_diff_row *rows[F_COUNT] = { 0 };
	size_t nrows[F_COUNT] = { 0 }, tlen;
	enum pt_diff_result res;
	char *text = NULL;
	FILE *m;
	int err, i;

	if ((err = read_run(&a)) || (err = read_run(&b))) {
		res = err == -ENOMEM ? PT_DIFF_FAIL : PT_DIFF_BAD_INPUT;
		if (err == -ENOMEM)
			fprintf(stderr, "peaktrace: out of memory\n");
		goto out;
	}
	res = PT_DIFF_FAIL;
	for (i = 0; i < F_COUNT; i++)
		if (pt_fold_diff(&a.fold[i], &b.fold[i], &rows[i], &nrows[i]))
			goto out;
	/* The files first, while the rows are still in stack order. */
	if ((res = write_outputs(o, &a, &b, rows[F_PEAK], nrows[F_PEAK])) != PT_DIFF_OK)
		goto out;
	res = PT_DIFF_FAIL;
	if (!(m = open_memstream(&text, &tlen)))
		goto out;
	print_report(m, o, &a, &b, rows, nrows);
	if (fclose(m))
		goto out;
	if (!o->quiet) {
		fputs(text, stdout);
		fflush(stdout);
	}
	if (write_out(o->outdir, "diff.txt", NULL, 0, NULL, text)) {
		res = PT_DIFF_OUTPUT;
		goto out;
	}
	res = o->gate && gate_fails(o, &a, &b, rows[F_PEAK], nrows[F_PEAK]) ? PT_DIFF_GREW : PT_DIFF_OK;
out:
	free(text);
	for (i = 0; i < F_COUNT; i++)
		free(rows[i]);
	run_free(&a);
	run_free(&b);
	return res;
}

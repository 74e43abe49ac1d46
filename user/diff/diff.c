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
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/outdir.h"
#include "profile/profile.h"
#include "output/output.h"
#include "diff/diff.h"

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

/* A stack of more than PT_FOLD_MAX_FRAMES frames: PT_FOLD_CUT_FRAME and its innermost
 * PT_FOLD_MAX_FRAMES - 1, malloc'd and kept in f->owned. 0, 1 (not cut) or -ENOMEM. */
static int cut_stack(struct pt_fold *f, struct pt_fold_line *l)
{
	const char *s = l->stack, *p;
	size_t frames = 1;
	char **no, *c;

	for (p = s; *p; p++)
		frames += *p == ';';
	if (frames <= PT_FOLD_MAX_FRAMES)
		return 1;
	/* Past the first frames - (MAX - 1) separators: the innermost MAX - 1 frames. */
	for (p = s, frames -= PT_FOLD_MAX_FRAMES - 1; frames; p++)
		frames -= *p == ';';
	if (asprintf(&c, PT_FOLD_CUT_FRAME ";%s", p) < 0)
		return -ENOMEM;
	if (!(no = realloc(f->owned, (f->nowned + 1) * sizeof(*no)))) {
		free(c);
		return -ENOMEM;
	}
	f->owned = no;
	f->owned[f->nowned++] = c;
	l->stack = c;
	f->cut++;
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
				pt_fold_free(out);
				return -ENOMEM;
			}
			lines = nl;
		}
		if (parse_line(s, (size_t)(e - s), &lines[n])) {
			free(lines);
			pt_fold_free(out);
			*bad_line = lineno;
			return -EINVAL;
		}
		if (cut_stack(out, &lines[n]) < 0) {
			free(lines);
			pt_fold_free(out);
			return -ENOMEM;
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
	size_t i;

	for (i = 0; i < f->nowned; i++)
		free(f->owned[i]);
	free(f->owned);
	free(f->lines);
	*f = (struct pt_fold){ 0 };
}

/* ";" and the end of a frame below every other byte: a frame's callees sort before its
 * siblings (strcmp puts "a;b2" between "a;b" and "a;b;c"). */
static inline int frame_byte(unsigned char c)
{
	return c == 0 ? 0 : c == ';' ? 1 : c + 2;
}

int pt_fold_frame_cmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return frame_byte((unsigned char)*a) - frame_byte((unsigned char)*b);
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

/* One input directory. Its four files are opened when it is checked, relative to the
 * directory's own fd and never through a symlink (a root-only file linked from the directory
 * would otherwise be read, and its lines copied into diff.peak.folded); their sizes count
 * against --max-input before anything is read. A folded file is read, used and freed one at a
 * time, so at most one pair of them is in memory. */
enum { F_JSON = F_COUNT, F_FILES };

struct run {
	const char *dir;
	int dfd;
	int fd[F_FILES];
	uint64_t size[F_FILES];
	uint64_t peak_live, live, alloc_bytes, rss_peak, vmhwm;
	bool has_rss, has_vmhwm;
	struct inv_peak *invs;
	size_t ninvs;
};

static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < F_FILES; i++)
		if (r->fd[i] >= 0)
			close(r->fd[i]);
	if (r->dfd >= 0)
		close(r->dfd);
	free(r->invs);
}

static int bad(const char *dir, const char *what, const char *why)
{
	char *d = pt_sanitize_dup(dir);

	fprintf(stderr, "peaktrace: %s%s%s: %s\n", d ? d : "?", what ? "/" : "", what ? what : "", why);
	free(d);
	return -EINVAL;
}

static const char *file_name(int i)
{
	return i == F_JSON ? "report.json" : folded_names[i];
}

/* The directory and its four files, opened and checked: 0, or the error line said. */
static int open_run(struct run *r)
{
	char why[160];
	struct stat st;
	int i;

	for (i = 0; i < F_FILES; i++)
		r->fd[i] = -1;
	r->dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dfd < 0)
		return bad(r->dir, NULL, errno == ENOTDIR ? "not a directory (give two peaktrace -o directories)"
							 : strerror(errno));
	for (i = 0; i < F_FILES; i++) {
		r->fd[i] = openat(r->dfd, file_name(i), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (r->fd[i] < 0) {
			if (errno == ELOOP)
				return bad(r->dir, file_name(i), "a symbolic link: not followed inside an input directory");
			snprintf(why, sizeof(why), "%s (not a peaktrace -o directory?)", strerror(errno));
			return bad(r->dir, file_name(i), why);
		}
		if (fstat(r->fd[i], &st))
			return bad(r->dir, file_name(i), strerror(errno));
		if (!S_ISREG(st.st_mode))
			return bad(r->dir, file_name(i), "not a regular file");
		r->size[i] = (uint64_t)st.st_size;
		if (r->size[i] >= (i == F_JSON ? MAX_JSON : MAX_FOLDED))
			return bad(r->dir, file_name(i), "too large");
	}
	return 0;
}

/* --max-input over both directories, before anything is read: 0, or the line said. */
static int check_budget(const struct pt_diff_options *o, const struct run *a, const struct run *b)
{
	uint64_t max = o->max_input ? o->max_input : PT_DIFF_DEFAULT_MAX_INPUT, ta = 0, tb = 0;
	int i;

	for (i = 0; i < F_FILES; i++) {
		ta += a->size[i];
		tb += b->size[i];
	}
	if (ta + tb <= max)
		return 0;
	fprintf(stderr, "peaktrace: the inputs are %" PRIu64 " bytes (A %" PRIu64 ", B %" PRIu64
		"), more than --max-input %" PRIu64 ": refused, nothing read (raise --max-input)\n",
		ta + tb, ta, tb, max);
	return -EFBIG;
}

/* File i of the run, whole (its fd is used up): NULL and the line said if it changed size. */
static char *read_one(struct run *r, int i, size_t *len)
{
	int fd = r->fd[i];
	char *s;

	r->fd[i] = -1;
	/* One byte more than fstat said: a file still growing is refused, not read on. */
	s = pt_read_fd(fd, r->size[i] + 1, len);
	if (!s) {
		bad(r->dir, file_name(i), strerror(errno));
		return NULL;
	}
	if (*len != r->size[i]) {
		bad(r->dir, file_name(i), "changed while being read");
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

static int parse_report(struct run *r, const char *json, size_t len);

/* report.json's figures, copied out: the text is freed before any folded file is read. */
static int read_report(struct run *r)
{
	char *json;
	size_t len;
	int err;

	json = read_one(r, F_JSON, &len);
	if (!json)
		return -EINVAL;
	err = parse_report(r, json, len);
	free(json);
	return err;
}

static int parse_report(struct run *r, const char *json, size_t len)
{
	struct pt_json doc, v;
	char tool[64];
	uint64_t version;

	if (pt_json_parse(json, len, &doc) || pt_json_type(doc) != PT_JSON_OBJECT)
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

/* Folded file i of both runs, parsed: 0, or the line said and -EINVAL / -ENOMEM. */
static int read_folded(struct run *r, int i, char **text, struct pt_fold *f)
{
	char why[64];
	size_t len, line;
	int err;

	*text = read_one(r, i, &len);
	if (!*text)
		return -EINVAL;
	err = pt_fold_parse(*text, len, f, &line);
	if (err == -ENOMEM)
		return err;
	if (err) {
		snprintf(why, sizeof(why), "line %zu is not \"STACK BYTES\"", line);
		return bad(r->dir, folded_names[i], why);
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

/* The totals: what the report starts with (the stack sections follow, then invocations). */
static void print_totals(FILE *f, struct run *a, struct run *b)
{
	char *da = pt_sanitize_dup(a->dir), *db = pt_sanitize_dup(b->dir);

	fprintf(f, "peaktrace diff: A = %s, B = %s\n\n", da ? da : "?", db ? db : "?");
	fprintf(f, "  %-16s %16s %16s  %s\n", "", "A (bytes)", "B (bytes)", "change (B - A)");
	put_total(f, "peak live heap", true, a->peak_live, true, b->peak_live);
	put_total(f, "peak RSS", a->has_rss, a->rss_peak, b->has_rss, b->rss_peak);
	put_total(f, "VmHWM", a->has_vmhwm, a->vmhwm, b->has_vmhwm, b->vmhwm);
	put_total(f, "live at end", true, a->live, true, b->live);
	put_total(f, "allocated", true, a->alloc_bytes, true, b->alloc_bytes);
	free(da);
	free(db);
}

/* One folded file of both runs: the texts (the rows point into them), parsed, and the rows. */
struct pair {
	char *text[2];
	struct pt_fold f[2];
	struct pt_diff_row *rows;
	size_t n;
};

static void pair_free(struct pair *p)
{
	int k;

	for (k = 0; k < 2; k++) {
		pt_fold_free(&p->f[k]);
		free(p->text[k]);
	}
	free(p->rows);
	*p = (struct pair){ 0 };
}

/* Folded file i of A and B read, parsed and merged (the parsed lines freed: the rows are all
 * that is used): 0, -EINVAL (the line said) or -ENOMEM. */
static int read_pair(struct run *a, struct run *b, int i, struct pair *p)
{
	int err, k;

	*p = (struct pair){ 0 };
	if ((err = read_folded(a, i, &p->text[0], &p->f[0])) || (err = read_folded(b, i, &p->text[1], &p->f[1])))
		return err;
	if (pt_fold_diff(&p->f[0], &p->f[1], &p->rows, &p->n))
		return -ENOMEM;
	for (k = 0; k < 2; k++) {
		free(p->f[k].lines);
		p->f[k].lines = NULL;
		p->f[k].n = 0;
	}
	return 0;
}

/* The section of folded file i, sorted by change, into f. */
static void print_section(FILE *f, const struct pt_diff_options *o, int i, struct pair *p)
{
	pt_diff_sort(p->rows, p->n);
	put_stacks(f, folded_titles[i], p->rows, p->n, o->top);
	if (p->f[0].cut || p->f[1].cut)
		fprintf(f, "  (stacks deeper than %d frames, cut to their innermost %d under \"%s\": "
			   "A %" PRIu64 ", B %" PRIu64 ")\n", PT_FOLD_MAX_FRAMES, PT_FOLD_MAX_FRAMES - 1,
			PT_FOLD_CUT_FRAME, p->f[0].cut, p->f[1].cut);
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

/*
 * The flame graph is fed only what it can draw. Its writer (flamegraph.c) drops frames under
 * 0.1 px (MIN_W there, at 1200 px less 2 x 10 px of padding) but keeps each one's place, and
 * takes a pt_profile with every frame's name: handing it every stack of a 256 MiB file cost ~16
 * times the file (one pt_frame per distinct name, a node per path). So the rows are walked
 * once in call-tree order (pt_fold_frame_cmp) with the path's figures, and what reaches the
 * writer is: each frame at least half as wide as the writer's limit, with its own bytes; and,
 * below those, each run of adjacent narrower siblings merged into one stack (named by its
 * first, so it sorts where the run was) as long as the run stays under that half: the same
 * widths, places and colours (aux sums) for everything drawn, with at most a few frames per
 * drawable pixel of each level.
 */
#define SVG_DRAW_W	1180.0	/* flamegraph.c: IMG_W - 2 * XPAD */
#define SVG_KEEP_W	0.05	/* px: half of flamegraph.c's MIN_W, to stay clear of its test */

struct walk_node {
	const char *name;	/* the frame, in the row's stack */
	size_t len;
	uint64_t value, self;	/* B's bytes of the subtree / of the rows ending here */
	int64_t aux, self_aux;	/* the same of the change since A */
	/* The run of narrow children not yet handed on: named by its first. */
	bool grp;
	const char *gname;
	size_t glen;
	uint64_t gval;
	int64_t gaux;
};

struct walk {
	struct interner in;
	struct pt_profile *p;
	int64_t *aux;
	uint32_t scap;
	double scale;		/* px per byte */
	struct walk_node node[PT_FOLD_MAX_FRAMES + 2];	/* [0] = the root */
	uint32_t depth;
};

static bool narrow(const struct walk *w, uint64_t v)
{
	return (double)v * w->scale < SVG_KEEP_W;
}

/* A stack: the path node[1..d] then, if name, that frame; its value and aux. */
static int walk_emit(struct walk *w, uint32_t d, const char *name, size_t len, uint64_t v, int64_t aux)
{
	struct pt_profile *p = w->p;
	struct pt_stack *st;
	uint32_t n = d + (name ? 1 : 0), i;
	int64_t idx;

	if (p->nstacks == w->scap) {
		uint32_t cap = w->scap ? w->scap * 2 : 256;
		struct pt_stack *ns = realloc(p->stacks, cap * sizeof(*ns));
		int64_t *na;

		if (!ns)
			return -ENOMEM;
		p->stacks = ns;
		if (!(na = realloc(w->aux, cap * sizeof(*na))))
			return -ENOMEM;
		w->aux = na;
		w->scap = cap;
	}
	st = &p->stacks[p->nstacks];
	*st = (struct pt_stack){ 0 };
	if (!(st->frames = malloc((n ? n : 1) * sizeof(*st->frames))))
		return -ENOMEM;
	p->nstacks++;	/* so its frames are freed */
	/* Leaf first. */
	for (i = 0; i < n; i++) {
		idx = i < d ? intern(&w->in, w->node[i + 1].name, w->node[i + 1].len) : intern(&w->in, name, len);
		if (idx < 0)
			return -ENOMEM;
		st->frames[n - 1 - i] = (uint32_t)idx;
	}
	st->nframes = n;
	st->v[PT_PEAK_BYTES] = v;
	w->aux[p->nstacks - 1] = aux;
	return 0;
}

static int walk_flush(struct walk *w, uint32_t j)
{
	struct walk_node *n = &w->node[j];

	if (!n->grp)
		return 0;
	n->grp = false;
	return walk_emit(w, j, n->gname, n->glen, n->gval, n->gaux);
}

/* Node j (the deepest open one) is complete: handed on, or merged into its parent's run. */
static int walk_close(struct walk *w, uint32_t j)
{
	struct walk_node *n = &w->node[j], *pa = &w->node[j - 1];
	int err;

	if (narrow(w, n->value)) {
		/* Its callees are narrower still: their run is dropped (their bytes are in n's). */
		n->grp = false;
		if (pa->grp && narrow(w, pa->gval + n->value)) {
			pa->gval += n->value;
			pa->gaux += n->aux;
			return 0;
		}
		if ((err = walk_flush(w, j - 1)))
			return err;
		pa->grp = true;
		pa->gname = n->name;
		pa->glen = n->len;
		pa->gval = n->value;
		pa->gaux = n->aux;
		return 0;
	}
	if ((err = walk_flush(w, j)) || (err = walk_flush(w, j - 1)))
		return err;
	if (n->self || n->self_aux)
		return walk_emit(w, j, NULL, 0, n->self, n->self_aux);
	return 0;
}

/* One row: the path closed down to what it shares with the open one, then extended. */
static int walk_row(struct walk *w, const struct pt_diff_row *r)
{
	const char *s = r->stack, *e;
	int64_t d = pt_diff_delta(r);
	uint32_t k = 0, j;
	int err;

	/* Frames shared with the open path; s ends at the first one not shared, or NULL. */
	for (; s; k++) {
		e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		if (k >= w->depth || w->node[k + 1].len != (size_t)(e - s) ||
		    memcmp(w->node[k + 1].name, s, (size_t)(e - s)))
			break;
		s = *e ? e + 1 : NULL;
	}
	while (w->depth > k)
		if ((err = walk_close(w, w->depth--)))
			return err;
	/* Rows are cut to PT_FOLD_MAX_FRAMES frames, so the path fits in node[]. */
	while (s && w->depth <= PT_FOLD_MAX_FRAMES) {
		e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		w->node[++w->depth] = (struct walk_node){ .name = s, .len = (size_t)(e - s) };
		s = *e ? e + 1 : NULL;
	}
	for (j = 0; j <= w->depth; j++) {
		w->node[j].value += r->b;
		w->node[j].aux += d;
	}
	w->node[w->depth].self += r->b;
	w->node[w->depth].self_aux += d;
	return 0;
}

static int by_frames(const void *x, const void *y)
{
	return pt_fold_frame_cmp((*(const struct pt_diff_row *const *)x)->stack,
				 (*(const struct pt_diff_row *const *)y)->stack);
}

int pt_diff_write_svg(FILE *f, const struct pt_diff_row *rows, size_t n, const char *sub)
{
	struct pt_profile p = { 0 };
	struct walk *w = calloc(1, sizeof(*w));
	struct diff_style ds = { 0 };
	struct pt_flame_style st = { .color = diff_color, .note = diff_note, .ctx = &ds };
	const struct pt_diff_row **sorted = malloc((n ? n : 1) * sizeof(*sorted));
	uint64_t grew = 0, shrank = 0, total = 0;
	size_t i, m = 0;
	int err = -ENOMEM;

	if (!w || !sorted)
		goto out;
	w->p = &p;
	w->in.p = &p;
	for (i = 0; i < n; i++) {
		int64_t d = pt_diff_delta(&rows[i]);

		if (!rows[i].b && !d)
			continue;
		sorted[m++] = &rows[i];
		total += rows[i].b;
		if (d > 0)
			grew += (uint64_t)d;
		else
			shrank += (uint64_t)0 - (uint64_t)d;
	}
	qsort(sorted, m, sizeof(*sorted), by_frames);
	w->scale = total ? SVG_DRAW_W / (double)total : 0;
	for (i = 0; i < m; i++)
		if ((err = walk_row(w, sorted[i])))
			goto out;
	while (w->depth > 0)
		if ((err = walk_close(w, w->depth--)))
			goto out;
	if ((err = walk_flush(w, 0)))
		goto out;
	ds.scale = grew > shrank ? grew : shrank;
	st.aux = w->aux;
	err = pt_write_flamegraph_styled(f, &p, PT_PEAK_BYTES,
					 "Differential flame graph: peak_space, B against A", sub, &st);
out:
	if (w) {
		free(w->aux);
		free(w->in.slot);
	}
	free(w);
	free(sorted);
	profile_free(&p);
	return err;
}

static int write_svg(FILE *f, const struct pt_diff_row *rows, size_t n, const char *sub)
{
	return pt_diff_write_svg(f, rows, n, sub);
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

static void run_init(struct run *r, const char *dir)
{
	int i;

	*r = (struct run){ .dir = dir, .dfd = -1 };
	for (i = 0; i < F_FILES; i++)
		r->fd[i] = -1;
}

/* Both directories checked against --max-input, their reports read: 0, -EINVAL, -ENOMEM. */
static int open_both(const struct pt_diff_options *o, struct run *a, struct run *b)
{
	int err;

	if ((err = open_run(a)) || (err = open_run(b)))
		return err;
	if (check_budget(o, a, b))
		return -EINVAL;
	if ((err = read_report(a)) || (err = read_report(b)))
		return err;
	return 0;
}

enum pt_diff_result pt_diff_run(const struct pt_diff_options *o)
{
	static const int order[F_COUNT] = { F_ALLOC, F_LIVE, F_PEAK };
	struct run a, b;
	struct pair p = { 0 };
	char *sect[F_COUNT] = { 0 }, *text = NULL;
	size_t slen, tlen;
	enum pt_diff_result res;
	FILE *m;
	int err = 0, i, k;

	run_init(&a, o->dir_a);
	run_init(&b, o->dir_b);
	/* Every input read and checked before OUTDIR is touched; the peak last, its rows kept
	 * for the files and the gate. */
	if (!(err = open_both(o, &a, &b))) {
		for (k = 0; k < F_COUNT && !err; k++) {
			i = order[k];
			if ((err = read_pair(&a, &b, i, &p)))
				break;
			if (i == F_PEAK)
				break;
			if (!(m = open_memstream(&sect[i], &slen))) {
				err = -ENOMEM;
				break;
			}
			print_section(m, o, i, &p);
			if (fclose(m))
				err = -ENOMEM;
			pair_free(&p);
		}
	}
	if (err) {
		res = err == -ENOMEM ? PT_DIFF_FAIL : PT_DIFF_BAD_INPUT;
		if (err == -ENOMEM)
			fprintf(stderr, "peaktrace: out of memory\n");
		goto out;
	}
	/* The files first, while the rows are still in stack order. */
	if ((res = write_outputs(o, &a, &b, p.rows, p.n)) != PT_DIFF_OK)
		goto out;
	res = PT_DIFF_FAIL;
	if (!(m = open_memstream(&text, &tlen)))
		goto out;
	print_totals(m, &a, &b);
	print_section(m, o, F_PEAK, &p);
	fputs(sect[F_LIVE] ? sect[F_LIVE] : "", m);
	fputs(sect[F_ALLOC] ? sect[F_ALLOC] : "", m);
	put_invocations(m, &a, &b);
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
	res = o->gate && gate_fails(o, &a, &b, p.rows, p.n) ? PT_DIFF_GREW : PT_DIFF_OK;
out:
	free(text);
	for (i = 0; i < F_COUNT; i++)
		free(sect[i]);
	pair_free(&p);
	run_free(&a);
	run_free(&b);
	return res;
}

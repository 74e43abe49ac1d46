// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_diff — peaktrace diff's pure core (diff/diff.h) and the JSON reader it uses (util/json.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "profile/profile.h"
#include "output/output.h"
#include "diff/diff.h"
#include "util/json.h"

static const struct pt_diff_row *find(const struct pt_diff_row *r, size_t n, const char *stack)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].stack, stack) == 0)
			return &r[i];
	return NULL;
}

static void test_parse(void)
{
	char text[] = "main;a 100\nmain;b 5\r\n\nmain;a 23\nmain;c;d 18446744073709551615\n";
	char bad1[] = "main;a 1\nno_value_here\n";
	char bad2[] = "main;a 12x\n";
	char bad3[] = "main;a 99999999999999999999\n";
	char bad4[] = " 5\n";
	char bin[] = "main;a 1\nmain\0b 2\n";
	struct pt_fold f;
	size_t line = 0;

	CHECK(pt_fold_parse(text, sizeof(text) - 1, &f, &line) == 0, "parse: folded text");
	CHECK_EQ_U64(f.n, 3, "parse: repeated stacks merged");
	CHECK_STR(f.lines[0].stack, "main;a", "parse: sorted, first");
	CHECK_EQ_U64(f.lines[0].v, 123, "parse: main;a summed");
	CHECK_EQ_U64(f.lines[1].v, 5, "parse: CRLF line");
	CHECK_EQ_U64(f.lines[2].v, UINT64_MAX, "parse: the largest value");
	pt_fold_free(&f);
	CHECK(pt_fold_parse(bad1, sizeof(bad1) - 1, &f, &line) == -EINVAL && line == 2,
	      "parse: a line without a value (line %zu)", line);
	CHECK(pt_fold_parse(bad2, sizeof(bad2) - 1, &f, &line) == -EINVAL && line == 1,
	      "parse: not a number");
	CHECK(pt_fold_parse(bad3, sizeof(bad3) - 1, &f, &line) == -EINVAL, "parse: overflow");
	CHECK(pt_fold_parse(bad4, sizeof(bad4) - 1, &f, &line) == -EINVAL, "parse: no stack");
	CHECK(pt_fold_parse(bin, sizeof(bin) - 1, &f, &line) == -EINVAL && line == 2,
	      "parse: a NUL byte (line %zu)", line);
	CHECK(pt_fold_parse(bin, 0, &f, &line) == 0 && f.n == 0, "parse: empty file");
	pt_fold_free(&f);
}

static void test_diff(void)
{
	char ta[] = "r;same 1000\nr;gone 300\nr;shrink 500\nr;grow 10\n";
	char tb[] = "r;same 1000\nr;shrink 100\nr;grow 20010\nr;new 123456\n";
	struct pt_fold a, b;
	struct pt_diff_row *rows;
	const struct pt_diff_row *r;
	size_t n, line;

	CHECK(pt_fold_parse(ta, sizeof(ta) - 1, &a, &line) == 0 &&
	      pt_fold_parse(tb, sizeof(tb) - 1, &b, &line) == 0, "diff: inputs parse");
	CHECK(pt_fold_diff(&a, &b, &rows, &n) == 0, "diff: merge");
	CHECK_EQ_U64(n, 5, "diff: every stack of either once");
	for (size_t i = 1; i < n; i++)
		CHECK(strcmp(rows[i - 1].stack, rows[i].stack) < 0, "diff: stack order at %zu", i);
	r = find(rows, n, "r;new");
	CHECK(r && r->a == 0 && r->b == 123456 && pt_diff_delta(r) == 123456, "diff: a new stack");
	r = find(rows, n, "r;gone");
	CHECK(r && r->a == 300 && r->b == 0 && pt_diff_delta(r) == -300, "diff: a stack gone");
	r = find(rows, n, "r;same");
	CHECK(r && pt_diff_delta(r) == 0, "diff: unchanged");
	pt_diff_sort(rows, n);
	CHECK_STR(rows[0].stack, "r;new", "sort: biggest growth first");
	CHECK_STR(rows[1].stack, "r;grow", "sort: then the next");
	CHECK_STR(rows[2].stack, "r;same", "sort: no change in the middle");
	CHECK_STR(rows[3].stack, "r;gone", "sort: shrinks after");
	CHECK_STR(rows[4].stack, "r;shrink", "sort: biggest shrink last");
	free(rows);

	CHECK(pt_fold_diff(&a, &a, &rows, &n) == 0 && n == 4, "diff: a run against itself");
	for (size_t i = 0; i < n; i++)
		CHECK(pt_diff_delta(&rows[i]) == 0, "diff: self, no change on %s", rows[i].stack);
	free(rows);
	pt_fold_free(&a);
	pt_fold_free(&b);
}

static void test_short_and_color(void)
{
	char *s = pt_diff_short_stack("_start;main;f;g;h;leaf", 3);
	char buf[32];

	CHECK_STR(s, "leaf < h < g < ...", "short stack: leaf first, cut");
	free(s);
	s = pt_diff_short_stack("main;leaf", 5);
	CHECK_STR(s, "leaf < main", "short stack: whole");
	free(s);
	s = pt_diff_short_stack("main;ev\x1bil", 5);
	CHECK_STR(s, "ev\\x1bil < main", "short stack: sanitized");
	free(s);
	pt_diff_color(buf, sizeof(buf), 100, 100);
	CHECK_STR(buf, "rgb(255,0,0)", "colour: all the growth is red");
	pt_diff_color(buf, sizeof(buf), -50, 100);
	CHECK_STR(buf, "rgb(105,105,255)", "colour: half the shrink, light blue");
	pt_diff_color(buf, sizeof(buf), 0, 100);
	CHECK_STR(buf, "rgb(220,220,220)", "colour: no change, grey");
}

static void test_json(void)
{
	static const char doc[] = " {\"tool\": \"peaktrace 0.1.0\", \"esc\": \"a\\\"b\\u00e9\","
		" \"totals\": {\"peak_live_bytes\": 1130456, \"f\": 1.5e3, \"neg\": -1},"
		" \"invocations\": [{\"seq\": 0}, {\"seq\": 1, \"x\": [[], {}]}], \"n\": null} ";
	static const char *const bad[] = { "", "{", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "01",
		"\"\\x\"", "\"a", "{} {}", "tru", "-", "1.", "[\"\x01\"]" };
	struct pt_json d, v, it, e;
	char deep[200];
	uint64_t x = 0;
	int n = 0;

	CHECK(pt_json_parse(doc, strlen(doc), &d) == 0, "json: a report-like object parses");
	CHECK(pt_json_get(d, "tool", &v) && pt_json_str_is(v, "peaktrace 0.1.0"), "json: a string");
	CHECK(pt_json_get(d, "totals", &v) && pt_json_get(v, "peak_live_bytes", &v) &&
	      pt_json_u64(v, &x) && x == 1130456, "json: a nested integer");
	CHECK(pt_json_get(d, "totals", &v) && pt_json_get(v, "f", &v) && !pt_json_u64(v, &x),
	      "json: a fraction is not a u64");
	CHECK(pt_json_get(d, "totals", &v) && pt_json_get(v, "neg", &v) && !pt_json_u64(v, &x),
	      "json: a negative is not a u64");
	CHECK(!pt_json_get(d, "missing", &v), "json: a missing key");
	CHECK(pt_json_get(d, "invocations", &v) && pt_json_iter(v, &it), "json: an array");
	while (pt_json_next(&it, &e))
		n++;
	CHECK(n == 2, "json: two elements (got %d)", n);
	CHECK(pt_json_get(d, "n", &v) && pt_json_type(v) == PT_JSON_NULL, "json: null");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(pt_json_parse(bad[i], strlen(bad[i]), &d) == -EINVAL, "json: rejects bad input %zu", i);
	memset(deep, '[', sizeof(deep));
	CHECK(pt_json_parse(deep, sizeof(deep), &d) == -EINVAL, "json: nesting beyond the bound");
	memset(deep + 100, ']', 100);
	CHECK(pt_json_parse(deep, sizeof(deep), &d) == -EINVAL, "json: 100 levels is too deep");
	CHECK(pt_json_parse(deep + 40, 120, &d) == 0, "json: 60 levels is fine");
}

/* PT_FOLD_MAX_FRAMES: a deeper line keeps its innermost MAX - 1 frames under the cut frame;
 * two lines that differ only in what was cut become one stack, their bytes summed. */
static void test_frame_cap(void)
{
	size_t cap = 64u * PT_FOLD_MAX_FRAMES * 8, o = 0, line;
	char *text = malloc(cap), want[64];
	struct pt_fold f;
	int k, i;

	if (!text)
		return;
	/* Exactly MAX frames: kept. MAX + 1 twice, differing only in the outermost: cut, merged. */
	for (k = 0; k < 3; k++) {
		int n = k == 0 ? PT_FOLD_MAX_FRAMES : PT_FOLD_MAX_FRAMES + 1;

		for (i = 0; i < n; i++)
			o += (size_t)snprintf(text + o, cap - o, "%s%s%d", i ? ";" : "",
					      k == 0 ? "k" : i == 0 ? (k == 1 ? "rootA" : "rootB") : "f", i);
		o += (size_t)snprintf(text + o, cap - o, " %d\n", 10 * (k + 1));
	}
	CHECK(pt_fold_parse(text, o, &f, &line) == 0 && f.n == 2 && f.cut == 2,
	      "frame cap: %d frames kept, two of %d cut (counted) and merged into one stack", PT_FOLD_MAX_FRAMES,
	      PT_FOLD_MAX_FRAMES + 1);
	for (i = 0; i < (int)f.n; i++) {
		const char *s = f.lines[i].stack, *p;
		int frames = 1;

		for (p = s; *p; p++)
			frames += *p == ';';
		if (strncmp(s, PT_FOLD_CUT_FRAME ";", strlen(PT_FOLD_CUT_FRAME) + 1) == 0) {
			snprintf(want, sizeof(want), PT_FOLD_CUT_FRAME ";f2;f3;");
			CHECK(frames == PT_FOLD_MAX_FRAMES && !strncmp(s, want, strlen(want)) && f.lines[i].v == 50,
			      "frame cap: the cut stack is %s and the innermost %d (f2 ... f%d), 20 + 30 bytes",
			      PT_FOLD_CUT_FRAME, PT_FOLD_MAX_FRAMES - 1, PT_FOLD_MAX_FRAMES);
		} else {
			CHECK(frames == PT_FOLD_MAX_FRAMES && !strncmp(s, "k0;k1;", 6) && f.lines[i].v == 10,
			      "frame cap: the %d-frame stack whole", PT_FOLD_MAX_FRAMES);
		}
	}
	pt_fold_free(&f);
	free(text);
}

/* Call-tree order: a frame's callees come right after it, before its next sibling. */
static void test_frame_order(void)
{
	CHECK(pt_fold_frame_cmp("a;b", "a;b;c") < 0, "frame order: a caller before its callee");
	CHECK(pt_fold_frame_cmp("a;b;c", "a;b2") < 0, "frame order: a;b's callees before its sibling a;b2 "
	      "(strcmp puts a;b2 first)");
	CHECK(strcmp("a;b;c", "a;b2") > 0, "... (which strcmp does not)");
	CHECK(pt_fold_frame_cmp("a;b2", "a;c") < 0 && pt_fold_frame_cmp("a;c", "a;b2") > 0,
	      "frame order: siblings by name");
	CHECK(pt_fold_frame_cmp("x;y", "x;y") == 0, "frame order: the same stack");
	CHECK(pt_fold_frame_cmp("a;!", "a;;") > 0, "frame order: an empty frame before any named one");
}

/* The flame graph of every row, built the plain way (diff.c's before it fed the writer only
 * what it can draw): one pt_frame per distinct name, one stack per row. */
struct naive_style {
	uint64_t scale;
};

static void naive_color(FILE *f, const char *label, uint64_t value, int64_t aux, void *ctx)
{
	char buf[32];

	pt_diff_color(buf, sizeof(buf), aux, ((struct naive_style *)ctx)->scale);
	fputs(buf, f);
}

static void naive_note(FILE *f, uint64_t value, int64_t aux, void *ctx)
{
	fprintf(f, aux ? ", %+" PRId64 " bytes since A" : ", %" PRId64 " bytes since A", aux);
}

static int naive_svg(FILE *f, const struct pt_diff_row *rows, size_t n, const char *sub)
{
	struct pt_profile p = { 0 };
	struct naive_style ns = { 0 };
	struct pt_flame_style st = { .color = naive_color, .note = naive_note, .ctx = &ns };
	int64_t *aux = calloc(n + 1, sizeof(*aux));
	uint64_t grew = 0, shrank = 0;
	uint32_t cap = 0, i, k;
	int err;

	p.stacks = calloc(n + 1, sizeof(*p.stacks));
	for (i = 0; i < n; i++) {
		int64_t d = pt_diff_delta(&rows[i]);
		char *dup = strdup(rows[i].stack), *save = NULL, *tok;
		uint32_t nf = 0, fr[PT_FOLD_MAX_FRAMES];

		if (!rows[i].b && !d) {
			free(dup);
			continue;
		}
		for (tok = strtok_r(dup, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			for (k = 0; k < p.nframes && strcmp(p.frames[k].func, tok); k++)
				;
			if (k == p.nframes) {
				if (p.nframes == cap) {
					cap = cap ? cap * 2 : 64;
					p.frames = realloc(p.frames, cap * sizeof(*p.frames));
				}
				p.frames[p.nframes++] = (struct pt_frame){ .func = strdup(tok), .module = "" };
			}
			fr[nf++] = k;
		}
		free(dup);
		p.stacks[p.nstacks].frames = malloc(nf * sizeof(uint32_t));
		for (k = 0; k < nf; k++)
			p.stacks[p.nstacks].frames[k] = fr[nf - 1 - k];
		p.stacks[p.nstacks].nframes = nf;
		p.stacks[p.nstacks].v[PT_PEAK_BYTES] = rows[i].b;
		aux[p.nstacks++] = d;
		if (d > 0)
			grew += (uint64_t)d;
		else
			shrank += (uint64_t)0 - (uint64_t)d;
	}
	ns.scale = grew > shrank ? grew : shrank;
	st.aux = aux;
	err = pt_write_flamegraph_styled(f, &p, PT_PEAK_BYTES, "Differential flame graph: peak_space, B against A",
					 sub, &st);
	for (i = 0; i < p.nframes; i++)
		free(p.frames[i].func);
	for (i = 0; i < p.nstacks; i++)
		free(p.stacks[i].frames);
	free(p.frames);
	free(p.stacks);
	free(aux);
	return err;
}

static int row_strcmp(const void *x, const void *y)
{
	return strcmp(((const struct pt_diff_row *)x)->stack, ((const struct pt_diff_row *)y)->stack);
}

/* Random call trees (a few wide frames, many narrow ones, stacks gone from B, one huge stack
 * or not): pt_diff_write_svg's picture is byte for byte the plain one. */
static void test_svg_pruned(void)
{
	unsigned int seed = 12345;
	int round;

	for (round = 0; round < 24; round++) {
		size_t n = 0, cap = 3000, i, la = 0, lb = 0;
		struct pt_diff_row *rows = calloc(cap, sizeof(*rows));
		char **names = calloc(cap, sizeof(*names)), *ta = NULL, *tb = NULL;
		FILE *fa, *fb;

		for (i = 0; i < cap; i++) {
			char buf[256];
			int depth = 1 + rand_r(&seed) % 8, o = 0, d;

			for (d = 0; d < depth; d++)
				o += snprintf(buf + o, sizeof(buf) - (size_t)o, "%s%c%d", d ? ";" : "",
					      'a' + rand_r(&seed) % 3, rand_r(&seed) % (d < 2 ? 3 : 40));
			names[n] = strdup(buf);
			rows[n].stack = names[n];
			rows[n].a = rand_r(&seed) % 4 ? (uint64_t)(rand_r(&seed) % 1000) : 0;
			rows[n].b = rand_r(&seed) % 5 ? (uint64_t)(rand_r(&seed) % (round % 3 ? 1000 : 100000)) : 0;
			n++;
		}
		if (round % 2)
			rows[0].b = 5000000000ull;	/* everything else narrow */
		qsort(rows, n, sizeof(*rows), row_strcmp);
		/* Each stack once, as pt_fold_diff gives them. */
		for (i = 1, cap = 1; i < n; i++)
			if (strcmp(rows[i].stack, rows[cap - 1].stack))
				rows[cap++] = rows[i];
		fa = open_memstream(&ta, &la);
		fb = open_memstream(&tb, &lb);
		CHECK(pt_diff_write_svg(fa, rows, cap, "sub") == 0 && naive_svg(fb, rows, cap, "sub") == 0,
		      "svg round %d: both written", round);
		fclose(fa);
		fclose(fb);
		CHECK(la == lb && la > 1000 && !memcmp(ta, tb, la),
		      "svg round %d: %zu stacks: the pruned feed draws byte for byte the plain picture (%zu bytes)",
		      round, cap, la);
		free(ta);
		free(tb);
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		free(rows);
	}
}

int main(void)
{
	test_parse();
	test_svg_pruned();
	test_frame_cap();
	test_frame_order();
	test_diff();
	test_short_and_color();
	test_json();
	return CHECK_DONE();
}

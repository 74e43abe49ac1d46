// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_diff — peaktrace diff's pure core (report/diff.h) and the JSON reader it uses (util/json.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "report/diff.h"
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

int main(void)
{
	test_parse();
	test_diff();
	test_short_and_color();
	test_json();
	return CHECK_DONE();
}

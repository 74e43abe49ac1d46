// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_timeline — the timeline's pure parts (timeline/timeline.h): the buffer's holding back of
 * equal samples and its bound, the sampler's tick arithmetic, the axis step, the summary and the
 * timeline.jsonl lines (edges merged in time order, the request id escaped); both files against
 * tests/golden/small.timeline.jsonl and small.timeline.svg (after an intentional change:
 * PEAKTRACE_UPDATE_GOLDEN=1 build/tests/unit/test_timeline from the repository root, and review
 * the diff). */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "timeline/timeline.h"
#include "util/file.h"
#include "util/json.h"

static int update_golden;

/* Compare buf with (or, when updating, rewrite) tests/golden/<name>. */
static void golden(const char *name, const char *buf, size_t len)
{
	char path[256];
	size_t wlen = 0, i;
	char *want;

	snprintf(path, sizeof(path), "tests/golden/%s", name);
	if (update_golden) {
		FILE *f = fopen(path, "wb");

		CHECK(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0, "golden %s rewritten", path);
		return;
	}
	want = pt_read_file(path, 1 << 20, &wlen);
	if (!want) {
		CHECK(0, "golden %s readable (PEAKTRACE_UPDATE_GOLDEN=1 creates it)", path);
		return;
	}
	for (i = 0; i < len && i < wlen && buf[i] == want[i]; i++)
		;
	CHECK(len == wlen && i == len, "%s matches golden byte for byte (%zu bytes; first difference at %zu)",
	      name, len, i);
	free(want);
}

static struct pt_tl_sample smp(uint64_t ms, int64_t rss, int64_t heap, int64_t rss_max)
{
	struct pt_tl_sample x = { .t_ns = 1000000000ULL + ms * 1000000ULL, .rss = rss, .anon = rss,
				  .heap = heap, .rss_max = rss_max, .heap_max = heap };
	return x;
}

static void test_buffer(void)
{
	struct pt_timeline tl = { .interval_ms = 10 };
	struct pt_tl_sample x;

	x = smp(0, 100, 1, 100);  pt_tl_add(&tl, &x);
	x = smp(10, 100, 1, 100); pt_tl_add(&tl, &x);
	x = smp(20, 100, 1, 100); pt_tl_add(&tl, &x);
	CHECK_EQ_U64(tl.n, 1, "buffer: a plateau is held back");
	x = smp(30, 200, 1, 200); pt_tl_add(&tl, &x);
	CHECK_EQ_U64(tl.n, 3, "buffer: a change writes the plateau's end, then itself");
	CHECK_EQ_U64(tl.s[1].t_ns, 1020000000ULL, "buffer: the plateau's end is its last sample");
	/* Same level, but a spike in between: not equal, kept. */
	x = smp(40, 200, 1, 900); pt_tl_add(&tl, &x);
	CHECK_EQ_U64(tl.n, 4, "buffer: a maximum above the level is a change");
	x = smp(50, 200, 1, 200); pt_tl_add(&tl, &x);
	x = smp(60, 200, 1, 200); pt_tl_add(&tl, &x);
	pt_tl_flush(&tl);
	CHECK_EQ_U64(tl.n, 6, "buffer: the held sample is written at the end");
	CHECK_EQ_U64(tl.taken, 7, "buffer: every sample taken is counted");
	CHECK_EQ_U64(tl.t0_ns, 1000000000ULL, "buffer: t0 is the first sample");
	free(tl.s);

	struct pt_timeline b = { .interval_ms = 10, .max = 3 };

	for (int i = 0; i < 10; i++) {
		x = smp((uint64_t)i * 10, i, 0, i);
		pt_tl_add(&b, &x);
	}
	CHECK_EQ_U64(b.n, 3, "bound: no more than max lines kept");
	CHECK_EQ_U64(b.dropped, 7, "bound: the rest counted as dropped");
	free(b.s);
}

static void test_ticks(void)
{
	uint64_t missed = 0;

	CHECK_EQ_U64(pt_tl_next_tick(100, 101, 10, &missed), 110, "tick: on time");
	CHECK_EQ_U64(missed, 0, "tick: on time, none missed");
	CHECK_EQ_U64(pt_tl_next_tick(100, 109, 10, &missed), 110, "tick: late within the interval");
	CHECK_EQ_U64(missed, 0, "tick: late within the interval, none missed");
	CHECK_EQ_U64(pt_tl_next_tick(100, 110, 10, &missed), 120, "tick: a whole interval late");
	CHECK_EQ_U64(missed, 1, "tick: one missed");
	CHECK_EQ_U64(pt_tl_next_tick(100, 145, 10, &missed), 150, "tick: 4.5 intervals late");
	CHECK_EQ_U64(missed, 5, "tick: four more missed (110..140)");
}

static void test_axis(void)
{
	CHECK(pt_tl_axis_step(1.0, 10) == 0.1, "axis: 1 s in 10 ticks: 0.1");
	CHECK(pt_tl_axis_step(93.0, 8) == 20, "axis: 93 MiB in 8: 20");
	CHECK(pt_tl_axis_step(7.0, 10) == 1, "axis: 7 in 10: 1");
	CHECK(pt_tl_axis_step(0, 10) == 1, "axis: empty span");
	CHECK(pt_tl_axis_step(3000, 10) == 500, "axis: 3000 in 10: 500");
}

static void test_jsonl(void)
{
	struct pt_timeline tl = { .interval_ms = 10, .pid = 42 };
	struct pt_inv_record r[3];
	struct pt_inv_list invs = { .r = r, .n = 3, .cap = 3 };
	struct pt_tl_summary sm;
	struct pt_tl_sample x;
	char *buf = NULL, *line, *save;
	size_t len = 0;
	FILE *f;
	int n = 0, starts = 0, ends = 0, samples = 0, order_ok = 1;
	double last = -1;

	memset(r, 0, sizeof(r));
	r[0].seq = 0;                       /* init phase: no edges */
	r[0].start_ns = 1000000000ULL;
	r[0].end_ns = 1005000000ULL;
	r[1].seq = 1;
	strcpy(r[1].id, "req\"1\\");        /* escaped in JSON */
	r[1].outcome = PT_OUT_RESPONSE;
	r[1].start_ns = 1005000000ULL;
	r[1].end_ns = 1025000000ULL;
	r[1].rss_peak = 900;
	r[1].heap_peak = 7;
	r[2].seq = 2;
	r[2].overwritten = true;            /* not read: no edges */
	x = smp(0, 100, 1, 100);  pt_tl_add(&tl, &x);
	x = smp(10, 200, 1, 900); pt_tl_add(&tl, &x);
	x = smp(20, 200, 1, 200); pt_tl_add(&tl, &x);
	x = smp(30, 150, 1, 200); pt_tl_add(&tl, &x);
	pt_tl_flush(&tl);
	f = open_memstream(&buf, &len);
	CHECK(pt_timeline_write_jsonl(f, &tl, &invs) == 0, "jsonl: written");
	fclose(f);
	golden("small.timeline.jsonl", buf, len);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		struct pt_json doc, v;
		uint64_t u;

		if (pt_json_parse(line, strlen(line), &doc)) {
			CHECK(0, "jsonl: line %d is JSON: %s", n, line);
			continue;
		}
		if (n == 0) {
			CHECK(pt_json_get(doc, "timeline", &v) && pt_json_u64(v, &u) && u == 1 &&
			      pt_json_get(doc, "t0_ns", &v) && pt_json_u64(v, &u) && u == 1000000000ULL &&
			      pt_json_get(doc, "pid", &v) && pt_json_u64(v, &u) && u == 42, "jsonl: header");
			continue;
		}
		if (pt_json_get(doc, "end", &v)) {
			CHECK(pt_json_get(doc, "samples", &v) && pt_json_u64(v, &u) && u == 4,
			      "jsonl: end line counts the 4 sample lines");
			continue;
		}
		if (pt_json_get(doc, "t", &v)) {
			double t = strtod(v.p, NULL);

			order_ok &= t >= last;
			last = t;
		}
		if (pt_json_get(doc, "event", &v)) {
			if (pt_json_str_is(v, "start")) {
				starts++;
				CHECK(pt_json_get(doc, "id", &v) && pt_json_str_is(v, "req\\\"1\\\\"),
				      "jsonl: start carries the id, escaped");
				CHECK(strstr(line, "\"t\":5.000") != NULL, "jsonl: start at 5 ms: %s", line);
			} else {
				ends++;
				CHECK(strstr(line, "\"outcome\":\"response\",\"rss_peak\":900,\"heap_peak\":7,"
					     "\"arena_resident\":null") != NULL, "jsonl: end line: %s", line);
			}
		} else if (pt_json_get(doc, "rss", &v)) {
			samples++;
		}
	}
	CHECK(order_ok, "jsonl: lines in time order");
	CHECK(starts == 1 && ends == 1, "jsonl: one start and one end (init and overwritten rows have none)");
	CHECK_EQ_U64(samples, 4, "jsonl: four sample lines");
	free(buf);

	pt_tl_summarize(&tl, &invs, &sm);
	CHECK_EQ_U64(sm.rss_peak, 900, "summary: the peak is the largest rss_max");
	CHECK(sm.rss_peak_ms == 10.0, "summary: at 10 ms");
	CHECK(sm.inv_seq == 1, "summary: in invocation 1");

	f = open_memstream(&buf, &len);
	CHECK(pt_timeline_write_svg(f, &tl, &invs) == 0, "svg: written");
	fclose(f);
	golden("small.timeline.svg", buf, len);
	CHECK(strstr(buf, "<script") == NULL && strstr(buf, "href") == NULL, "svg: no script, no link");
	CHECK(strstr(buf, "req&quot;1\\") != NULL, "svg: the id XML-escaped in the band's title");
	CHECK(strstr(buf, "class=\"peak\"") && strstr(buf, "class=\"rss\"") && strstr(buf, "class=\"heap\""),
	      "svg: peak, RSS and heap drawn");
	free(buf);
	free(tl.s);
}

int main(void)
{
	const char *u = getenv("PEAKTRACE_UPDATE_GOLDEN");

	update_golden = u && *u && strcmp(u, "0") != 0;
	test_buffer();
	test_ticks();
	test_axis();
	test_jsonl();
	return CHECK_DONE();
}

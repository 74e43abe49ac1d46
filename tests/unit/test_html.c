/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_html.c — report.html's data: escaping for a <script> element, the timeline.jsonl reader
 * (a hand-made file whose figures the test knows), its fallback, and a whole page with hostile
 * names. With PT_HTML_TEST_DIR set, the timeline page is left there for the browser section
 * (tests/sections/browser.py, browser/chart). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "report/report.h"
#include "report/html.h"
#include "timeline/timeline.h"

static char *capture_str(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pt_json_str_script(f, s);
	fclose(f);
	return buf;
}

static char *capture_tl(const char *dir, const struct pt_inv_list *invs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	pt_html_timeline(f, dir, invs);
	fclose(f);
	return buf;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_escape(void)
{
	char *s = capture_str("</script><!--&\x1b\x07\xe2\x80\xa8\xff\"\\ok\xc3\xa9");

	CHECK_STR(s, "\"\\u003c/script\\u003e\\u003c!--\\u0026\\u001b\\u0007\\\\u2028\\ufffd\\\"\\\\ok\xc3\xa9\"",
		  "markup, controls and a bad byte escaped, U+2028 as visible text; UTF-8 kept");
	free(s);
}

/* Three invocations; RSS 100, 200, 300 MiB at their peaks, back to 50 MiB between. */
static const char *TL =
	"{\"timeline\":1,\"interval_ms\":10,\"t0_ns\":5000000000,\"pid\":42}\n"
	"{\"t\":0,\"rss\":52428800,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":1048576,\"rss_max\":52428800,\"heap_max\":1048576}\n"
	"{\"t\":10,\"event\":\"start\",\"seq\":1,\"id\":\"req-one\"}\n"
	"{\"t\":20,\"rss\":104857600,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":41943040,\"rss_max\":104857600,\"heap_max\":41943040}\n"
	"{\"t\":30,\"event\":\"end\",\"seq\":1,\"outcome\":\"response\",\"rss_peak\":104857600,\"heap_peak\":41943040,\"arena_resident\":null}\n"
	"{\"t\":40,\"rss\":52428800,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":1048576,\"rss_max\":104857600,\"heap_max\":41943040}\n"
	"{\"t\":50,\"event\":\"start\",\"seq\":2,\"id\":\"req-</script>-two\"}\n"
	"{\"t\":60,\"rss\":314572800,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":209715200,\"rss_max\":314572800,\"heap_max\":209715200}\n"
	"{\"t\":70,\"event\":\"end\",\"seq\":2,\"outcome\":\"error\",\"rss_peak\":314572800,\"heap_peak\":209715200,\"arena_resident\":null}\n"
	"{\"t\":80,\"rss\":52428800,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":1048576,\"rss_max\":314572800,\"heap_max\":209715200}\n"
	"not json at all\n"
	"{\"t\":90,\"event\":\"start\",\"seq\":3,\"id\":\"req-three\"}\n"
	"{\"t\":100,\"rss\":209715200,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":104857600,\"rss_max\":314572800,\"heap_max\":209715200}\n"
	"{\"t\":110,\"event\":\"end\",\"seq\":3,\"outcome\":\"response\",\"rss_peak\":209715200,\"heap_peak\":104857600,\"arena_resident\":7}\n"
	"{\"t\":120,\"rss\":52428800,\"anon\":1,\"file\":2,\"shmem\":0,\"heap\":1048576,\"rss_max\":314572800,\"heap_max\":209715200}\n"
	"{\"end\":true,\"samples\":7,\"dropped\":2,\"missed_ticks\":1}\n";

static void test_timeline(const char *dir)
{
	char *s;

	write_file(dir, "timeline.jsonl", TL);
	s = capture_tl(dir, NULL);
	CHECK(s && strstr(s, "\"source\": \"timeline.jsonl\""), "timeline.jsonl is the chart's source");
	CHECK(s && strstr(s, "\"t\": [0,20,40,60,80,100,120]"), "every sample's time, in order");
	CHECK(s && strstr(s, "\"rss\": [52428800,104857600,52428800,314572800,52428800,209715200,52428800]"),
	      "every sample's RSS");
	CHECK(s && strstr(s, "\"rss_max\": [52428800,104857600,104857600,314572800,314572800,314572800,314572800]"),
	      "the sampler's running maximum (Lambda's figure)");
	CHECK(s && strstr(s, "\"heap_v\": [1048576,41943040,1048576,209715200,1048576,104857600,1048576]"),
	      "every sample's heap");
	CHECK(s && strstr(s, "{\"seq\": 1, \"t0\": 10.000, \"t1\": 30.000, \"id\": \"req-one\", \"outcome\": \"response\"}"),
	      "invocation 1's band");
	CHECK(s && strstr(s, "\"id\": \"req-\\u003c/script\\u003e-two\", \"outcome\": \"error\""),
	      "invocation 2's band, its id escaped");
	CHECK(s && strstr(s, "{\"seq\": 3, \"t0\": 90.000, \"t1\": 110.000"), "invocation 3's band");
	CHECK(s && strstr(s, "\"samples\": 7, \"dropped\": 2, \"missed_ticks\": 1, \"trailer\": true, \"bad_lines\": 1"),
	      "the trailer's losses, and the line not understood, counted");
	free(s);
}

/* 10,000 samples, one spike: merged to at most PT_HTML_MAX_POINTS, the spike kept. */
static void test_merge(const char *dir)
{
	char path[4096], *s, *p;
	FILE *f;
	int i, n = 0;

	snprintf(path, sizeof(path), "%s/timeline.jsonl", dir);
	f = fopen(path, "w");
	fprintf(f, "{\"timeline\":1,\"interval_ms\":10,\"t0_ns\":1,\"pid\":1}\n");
	for (i = 0; i < 10000; i++)
		fprintf(f, "{\"t\":%d,\"rss\":%d,\"anon\":0,\"file\":0,\"shmem\":0,\"heap\":0,\"rss_max\":0,\"heap_max\":0}\n",
			i * 10, i == 4321 ? 999999999 : 1000);
	fclose(f);
	s = capture_tl(dir, NULL);
	p = s ? strstr(s, "\"rss\": [") : NULL;
	for (; p && *p && *p != ']'; p++)
		n += *p == ',';
	CHECK(n + 1 <= PT_HTML_MAX_POINTS && n > 1000, "10,000 samples merged to %d points", n + 1);
	CHECK(s && strstr(s, "999999999"), "the spike survives the merge");
	CHECK(s && strstr(s, "\"merged\": 3"), "the page is told 3 samples make each point");
	CHECK(s && strstr(s, "\"trailer\": false"), "a file without its end line is said to be cut short");
	free(s);
	unlink(path);
}

static void test_fallback(const char *dir)
{
	struct pt_inv_list l = { 0 };
	struct pt_inv_record r;
	char *s;

	s = capture_tl(dir, &l);
	CHECK(s && strstr(s, "\"source\": null, \"reason\": \"no timeline.jsonl and no invocation"),
	      "no file and no record: no chart, and why");
	free(s);
	memset(&r, 0, sizeof(r));
	r.seq = 1;
	snprintf(r.id, sizeof(r.id), "abc");
	r.start_ns = 1000000000;
	r.end_ns = 1100000000;
	r.rss_start = 10 << 20;
	r.rss_end = 11 << 20;
	r.traj_n = 2;
	r.traj[0].t_ns = 1050000000;
	r.traj[0].rss = 50 << 20;
	r.traj[1].t_ns = 1060000000;
	r.traj[1].rss = 40 << 20;
	r.outcome = PT_OUT_RESPONSE;
	pt_inv_append(&l, &r);
	s = capture_tl(dir, &l);
	CHECK(s && strstr(s, "\"source\": \"records\""), "no file: the records' trajectories");
	CHECK(s && strstr(s, "\"t\": [0,50,60,100]"), "start, trajectory, end, in ms since the first start");
	CHECK(s && strstr(s, "\"rss_max\": [10485760,52428800,52428800,52428800]"), "their running maximum");
	free(s);
	pt_inv_list_free(&l);
}

/* A whole page: a hostile frame name and request id never appear raw. */
static void test_page(const char *dir, const char *keep)
{
	static char evil[] = "</script><svg onload=alert(1)>\x1b[2J\x07";
	struct pt_frame fr[2] = {
		{ .addr = 0x1000, .func = evil, .module = "/x/</script>.so", .kind = PT_FK_NATIVE },
		{ .addr = 0x2000, .func = "main", .module = "/x/a", .kind = PT_FK_NATIVE },
	};
	uint32_t st[2] = { 0, 1 };
	struct pt_stack stk = { .nframes = 2, .frames = st };
	struct pt_report r;
	char path[4096], *buf = NULL, *p;
	size_t len = 0;
	FILE *f;
	int n = 0;

	memset(&r, 0, sizeof(r));
	r.pid = 7;
	snprintf(r.comm, sizeof(r.comm), "<b>x\x1b");
	r.prof.frames = fr;
	r.prof.nframes = 2;
	r.prof.stacks = &stk;
	r.prof.nstacks = 1;
	stk.v[PT_PEAK_BYTES] = stk.v[PT_ALLOC_BYTES] = 4096;
	r.totals.peak_bytes = 4096;
	r.inv_stacks.stacks_fd = -1;
	f = open_memstream(&buf, &len);
	CHECK(pt_write_html(f, keep ? keep : dir, &r) == 0, "pt_write_html succeeds");
	fclose(f);
	for (p = buf; p && (p = strstr(p, "</script")); p++)
		n++;
	CHECK(n == 2, "exactly the page's own two </script (got %d)", n);
	CHECK(buf && !strchr(buf, '\x1b') && !strchr(buf, '\x07'), "no raw ESC or BEL");
	CHECK(buf && !strstr(buf, "<svg onload") && !strstr(buf, "<b>x"), "no markup from the target");
	CHECK(buf && strstr(buf, "\\u003c/script\\u003e\\u003csvg onload=alert(1)\\u003e"), "the name is there, escaped");
	CHECK(buf && strstr(buf, "\"source\": \"timeline.jsonl\""), "the chart reads DIR/timeline.jsonl");
	if (keep && buf) {
		snprintf(path, sizeof(path), "%s/report.html", keep);
		if ((f = fopen(path, "w"))) {
			fputs(buf, f);
			fclose(f);
		}
	}
	free(buf);
}

/* 100 stacks of 1..100 KiB: the 64 biggest kept in order, the 36 others summed. */
static void test_keep(void)
{
	struct pt_inv_record r;
	int64_t kept = 0;
	uint32_t i;
	int ordered = 1;

	memset(&r, 0, sizeof(r));
	r.all = calloc(100, sizeof(*r.all));
	for (i = 0; i < 100; i++) {
		r.all[i].stack = i;
		r.all[i].bytes = (int64_t)(i + 1) * 1024;
		r.all[i].count = 1;
	}
	r.nall = 100;
	pt_inv_keep_biggest(&r, 64);
	for (i = 0; i < r.nall; i++) {
		kept += r.all[i].bytes;
		ordered &= r.all[i].stack == 99 - i;
	}
	CHECK_EQ_U64(r.nall, 64, "64 stacks kept");
	CHECK(ordered, "the biggest, biggest first");
	CHECK_EQ_U64(r.other_stacks, 36, "36 summed");
	CHECK_EQ_U64(r.other_bytes, 36 * 37 / 2 * 1024, "their bytes: 1..36 KiB");
	CHECK_EQ_U64(r.other_count, 36, "their count");
	CHECK_EQ_U64(kept + r.other_bytes, 100 * 101 / 2 * 1024, "kept + other = every stack's bytes");
	pt_inv_keep_biggest(&r, 64);
	CHECK_EQ_U64(r.other_stacks, 36, "again: nothing more to sum");
	free(r.all);
}

int main(void)
{
	char dir[] = "/tmp/pt-test-html-XXXXXX", path[4200];
	const char *keep = getenv("PT_HTML_TEST_DIR");

	if (!mkdtemp(dir))
		return 1;
	test_escape();
	test_keep();
	test_timeline(dir);
	if (keep)
		write_file(keep, "timeline.jsonl", TL);
	test_page(dir, keep);
	test_merge(dir);
	test_fallback(dir);
	snprintf(path, sizeof(path), "%s/timeline.jsonl", dir);
	unlink(path);
	rmdir(dir);
	return CHECK_DONE();
}

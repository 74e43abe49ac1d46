// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/arenas.c (smaps parsing, heap attribution, advice) and the comparison
 * table of user/compare.c. The attribution is also checked on this process's own thread arena. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "arenas/arenas.h"
#include "bpf/chunk.h"
#include "compare/compare.h"
#include "tests/unit/mergedheap.h"

static const char fixture[] =
	"55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"Rss:                  12 kB\n"
	"Pss:                  12 kB\n"
	"VmFlags: rd wr mr mw me ac sd\n"
	"7f3e84000000-7f3e84321000 rw-p 00000000 00:00 0 \n"
	"Size:               3204 kB\n"
	"Rss:                3200 kB\n"
	"7f3e84321000-7f3e88000000 ---p 00000000 00:00 0 \n"
	"Size:              62332 kB\n"
	"Rss:                   0 kB\n"
	"7f3e88000000-7f3e88100000 rw-p 00000000 00:00 0 \n"
	"Rss:                1024 kB\n"
	"7f3e8c000000-7f3e8c010000 rw-p 00000000 08:01 1234                       /tmp/x\n"
	"Rss:                  64 kB\n"
	"7ffd1000-7ffd2000 r-xp 00000000 00:00 0                                  [vdso]\n"
	"Rss:                   4 kB\n";

static void test_parse(void)
{
	struct pt_smap m[8];
	int n = pt_smaps_parse(fixture, m, 8);

	CHECK_EQ_U64(n, 6, "six mappings parsed");
	CHECK(m[0].heap && m[0].anon && m[0].rw, "[heap] is the anonymous read-write heap");
	CHECK_EQ_U64(m[0].rss, 12 * 1024, "[heap] Rss in bytes");
	CHECK(!m[1].heap && m[1].anon && m[1].rw, "a nameless mapping is anonymous");
	CHECK_EQ_U64(m[1].start, 0x7f3e84000000ULL, "start address");
	CHECK_EQ_U64(m[1].rss, 3200 * 1024, "Rss of the heap's read-write part");
	CHECK(!m[2].rw, "the PROT_NONE rest of a heap is not read-write");
	CHECK(!m[4].anon, "a file mapping is not anonymous");
	CHECK(!m[5].anon, "[vdso] is not anonymous");
	CHECK_EQ_U64(pt_smaps_parse(fixture, m, 2), 2, "stops at max");
	CHECK_EQ_U64(pt_smaps_parse("", m, 8), 0, "empty text");
}

static void test_attribute(void)
{
	struct pt_smap m[8];
	uint64_t w[8] = { 0 };
	struct pt_arena_row rows[3];
	int n = pt_smaps_parse(fixture, m, 8);

	memset(rows, 0, sizeof(rows));
	rows[0].main = true;
	rows[0].st.live_chunk_bytes = 4096;
	rows[1].addr = 0x7f3e84000030ULL;
	rows[1].st.live_chunk_bytes = 1 << 20;
	rows[2].addr = 0x7f3e90000030ULL;   /* no heap of its own in the maps */
	w[1] = 0x7f3e84000030ULL;           /* first heap: points into itself */
	w[3] = 0x7f3e84000030ULL;           /* second heap of the same arena */
	w[4] = 0x7f3e84000030ULL;           /* a file mapping: never a heap */
	pt_arenas_attribute(rows, 3, m, n, w);
	CHECK_EQ_U64(rows[0].heaps, 1, "main arena: [heap]");
	CHECK_EQ_U64(rows[0].resident_bytes, 12 * 1024, "main arena resident");
	CHECK_EQ_U64(rows[0].retained_bytes, 8 * 1024, "main arena retained = resident - chunks");
	CHECK_EQ_U64(rows[1].heaps, 2, "thread arena: both 64 MiB-aligned heaps naming it");
	CHECK_EQ_U64(rows[1].mapped_bytes, 0x321000ULL + 0x100000ULL, "mapped = read-write parts");
	CHECK_EQ_U64(rows[1].resident_bytes, (3200 + 1024) * 1024ULL, "resident of both heaps");
	CHECK_EQ_U64(rows[1].retained_bytes, (3200 + 1024) * 1024ULL - (1 << 20), "retained");
	CHECK_EQ_U64(rows[2].heaps, 0, "an arena without heaps in the maps");
	rows[2].st.live_chunk_bytes = 100;
	pt_arenas_attribute(rows, 3, m, n, w);
	CHECK_EQ_U64(rows[2].retained_bytes, 0, "retained is never negative");
}

/* A real thread arena: this process's own, found the way peaktrace finds a target's. */
static void *thread_alloc(void *arg)
{
	(void)arg;
	return malloc(100000);
}

static void test_own_arena(void)
{
	pthread_t t;
	void *p = NULL;
	uint64_t hdr, ar;
	struct pt_arena_row row;
	char path[64], *text;
	size_t cap = 1 << 20, len = 0;
	FILE *f;
	struct pt_smap *m;
	uint64_t *w;
	int n, i;

	pthread_create(&t, NULL, thread_alloc, NULL);
	pthread_join(t, &p);
	memset(p, 1, 100000);
	memcpy(&hdr, (char *)p - 8, 8);
	CHECK_EQ_U64(pt_chunk_kind(hdr, 100000), PT_CHUNK_THREAD, "a thread's block lives in a thread arena");
	ar = *(uint64_t *)pt_chunk_heap((uint64_t)p);
	snprintf(path, sizeof(path), "/proc/%d/smaps", getpid());
	f = fopen(path, "r");
	text = malloc(cap);
	while (f && text && len + 1 < cap) {
		size_t r = fread(text + len, 1, cap - len - 1, f);

		if (!r)
			break;
		len += r;
	}
	if (f)
		fclose(f);
	text[len] = 0;
	m = calloc(8192, sizeof(*m));
	w = calloc(8192, sizeof(*w));
	n = pt_smaps_parse(text, m, 8192);
	for (i = 0; i < n; i++)
		if (m[i].anon && !m[i].heap && m[i].rw && !(m[i].start & (PT_HEAP_MAX_SIZE - 1)))
			w[i] = *(uint64_t *)m[i].start;
	memset(&row, 0, sizeof(row));
	row.addr = ar;
	row.st.live_chunk_bytes = (int64_t)pt_chunk_size(hdr);
	pt_arenas_attribute(&row, 1, m, n, w);
	CHECK(row.heaps >= 1, "the arena's heap is found in our own smaps (%d)", row.heaps);
	CHECK(row.resident_bytes >= 100000 && row.resident_bytes <= row.mapped_bytes,
	      "resident covers the written block and is within the mapping (%llu of %llu)",
	      (unsigned long long)row.resident_bytes, (unsigned long long)row.mapped_bytes);
	free(p);
	free(text);
	free(m);
	free(w);
}

/* heap_info's four words at a boundary: an arena's first heap, a later one, and what is not. */
static void test_heap_info(void)
{
	const uint64_t h = 0x7f0004000000ULL, first = 0x7f0000000000ULL;
	uint64_t w[4] = { h + 0x30, 0, 0x21000, 0x21000 };

	CHECK(pt_heap_info_ok(w, h), "a first heap: its arena in its first page, no prev");
	w[2] = 0x20000;
	CHECK(pt_heap_info_ok(w, h), "shrunk: size below mprotect_size");
	w[2] = 0x22000;
	CHECK(!pt_heap_info_ok(w, h), "size above mprotect_size: not one");
	w[2] = 0x21000;
	w[3] = (64ULL << 20) + 4096;
	CHECK(!pt_heap_info_ok(w, h), "mprotect_size above 64 MiB: not one");
	w[3] = 0x21000;
	w[2] = 0x21010;
	CHECK(!pt_heap_info_ok(w, h), "a size not in whole pages: not one");
	w[2] = 0;
	CHECK(!pt_heap_info_ok(w, h), "size 0: not one");
	w[2] = 0x21000;
	w[0] = h + 4096;
	CHECK(!pt_heap_info_ok(w, h), "no prev, its arena past its first page: not one");
	w[0] = first + 0x30;
	w[1] = first;
	CHECK(pt_heap_info_ok(w, h), "a later heap: prev a boundary, its arena in another's first page");
	w[1] = first + 8;
	CHECK(!pt_heap_info_ok(w, h), "prev not on a boundary: not one");
	w[1] = first;
	w[0] = first + 0x5000;
	CHECK(!pt_heap_info_ok(w, h), "a later heap whose arena is past a first page: not one");
	w[0] = h + 0x30;
	CHECK(!pt_heap_info_ok(w, h), "a later heap naming itself as its arena's: not one");
	w[0] = first + 0x34;
	CHECK(!pt_heap_info_ok(w, h), "an arena address not 8-aligned: not one");
}

/* The bytes of [a, e) in read-write mappings of /proc/self/maps (mapped), and resident by
 * mincore (resident): the truth for an arena's heaps, independent of smaps and pagemap. */
static void rw_truth(uint64_t a, uint64_t e, uint64_t *mapped, uint64_t *resident)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long s, t;
	char line[512], perms[8];
	unsigned char vec[16384];

	while (f && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, i;

		if (sscanf(line, "%llx-%llx %7s", &s, &t, perms) != 3 || perms[0] != 'r' || perms[1] != 'w')
			continue;
		lo = s > a ? s : a;
		hi = t < e ? t : e;
		if (lo >= hi)
			continue;
		*mapped += hi - lo;
		if (mincore((void *)(uintptr_t)lo, hi - lo, vec) == 0)
			for (i = 0; i < (hi - lo) / 4096; i++)
				*resident += vec[i] & 1 ? 4096 : 0;
	}
	if (f)
		fclose(f);
}

/* A thread arena's two heaps, the first merged with the mapping just below it by the kernel
 * (mergedheap.h): read from smaps as peaktrace reads a target's, the heap is split off the
 * mapping at its boundary and both heaps are the arena's, their mapped and resident bytes
 * those of the maps and mincore; the mapping below is not. */
static void test_merged_heap(void)
{
	struct merged_heap mh = { 0 };
	struct pt_arena_row row;
	struct pt_smap *m = NULL;
	uint64_t *w = NULL, mapped = 0, resident = 0;
	int n, i, at_h1 = -1, below = -1;

	CHECK(merged_heap_make(&mh) == 0 && mh.merged, "merged: setup (a heap one mapping with the one below)");
	n = pt_smaps_read(getpid(), &m, &w);
	CHECK(n > 0, "merged: our own smaps read");
	for (i = 0; i < n; i++) {
		if (m[i].start == mh.h1)
			at_h1 = i;
		if (m[i].start == mh.below)
			below = i;
	}
	CHECK(at_h1 >= 0 && w[at_h1] == mh.arena, "merged: the heap split off at its boundary, naming its arena");
	CHECK(below >= 0 && m[below].end == mh.h1 && w[below] == 0 && m[below].rss == 0,
	      "merged: the mapping below ends at the heap, not a heap, nothing resident (never written)");
	memset(&row, 0, sizeof(row));
	row.addr = mh.arena;
	pt_arenas_attribute(&row, 1, m, n > 0 ? n : 0, w);
	rw_truth(mh.h1, mh.h1 + MH_HEAP, &mapped, &resident);
	rw_truth(mh.h2, mh.h2 + MH_HEAP, &mapped, &resident);
	CHECK_EQ_U64(row.heaps, 2, "merged: both heaps are the arena's");
	CHECK_EQ_U64(row.mapped_bytes, mapped, "merged: mapped = the read-write parts of its two 64 MiB");
	CHECK_EQ_U64(row.resident_bytes, resident, "merged: resident = mincore's count there");
	CHECK_EQ_U64(pt_arenas_resident_in_memory(getpid()) >= (int64_t)resident, 1,
		     "merged: arena memory resident in all counts both heaps");
	free(m);
	free(w);
}

static void test_advice(void)
{
	struct pt_arena_row rows[3];
	struct pt_arenas a;
	const int64_t MiB = 1 << 20;

	memset(rows, 0, sizeof(rows));
	memset(&a, 0, sizeof(a));
	rows[0].main = true;
	rows[1].addr = 0x1000;
	rows[2].addr = 0x2000;
	rows[1].retained_bytes = 30 * MiB;
	rows[2].retained_bytes = 20 * MiB;
	rows[1].st.alloc_count = rows[2].st.alloc_count = 500;
	a.rows = rows;
	a.nrows = 3;
	a.nthreads = 2;
	a.rss_bytes = 100 * MiB;
	a.retained_bytes = 50 * MiB;
	a.resident_bytes = 60 * MiB;
	a.large_peak_bytes = 40 * MiB;
	a.large_count = 200;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.nadvice, 3, "threshold, arena max and trim (main arena retains nothing)");
	CHECK_STR(a.advice[0].setting, "malloc_trim(0) after each invocation", "sorted by bytes addressed: trim first");
	CHECK_EQ_U64(a.advice[0].addresses_bytes, 50 * MiB, "malloc_trim addresses all retained");
	CHECK_STR(a.advice[1].setting, "MALLOC_MMAP_THRESHOLD_=32768", "then the mmap threshold");
	CHECK_EQ_U64(a.advice[1].addresses_bytes, 40 * MiB, "threshold: the large blocks' peak (< retained)");
	CHECK_STR(a.advice[2].setting, "MALLOC_ARENA_MAX=2", "then fewer arenas");
	CHECK_EQ_U64(a.advice[2].addresses_bytes, 20 * MiB, "arena max: all but the largest arena's");
	CHECK(strstr(a.advice[1].cost, "200") != NULL, "the cost names the mmap calls it adds");
	CHECK(strncmp(a.advice[1].cost, "not measured: ", 14) == 0, "an unmeasured cost says so first");
	CHECK(strstr(a.advice[1].cost, "--compare-env MALLOC_MMAP_THRESHOLD_=32768") != NULL,
	      "and how to measure it");
	CHECK(strstr(a.advice[1].cost, "per invocation over") == NULL, "no per-invocation count without invocations");
	a.invocations = 8;
	pt_arenas_advise(&a);
	CHECK(strstr(a.advice[1].cost, "25.0 per invocation over 8 invocations") != NULL,
	      "200 large allocations over 8 invocations: 25.0 per invocation");
	for (int k = 0; k < a.nadvice; k++)
		CHECK(strncmp(a.advice[k].cost, "not measured: ", 14) == 0, "every advice's cost: not measured");
	a.invocations = 0;
	{
		char *line = NULL;
		size_t llen = 0;
		FILE *lf = open_memstream(&line, &llen);

		pt_arenas_advice_line(lf, &a, false);
		pt_arenas_advice_line(lf, &a, true);
		fclose(lf);
		CHECK(strstr(line, "ADVICE: malloc_trim(0) after each invocation (addresses up to 50.00 MiB") != NULL &&
		      strstr(line, "  its cost: not measured (what it consists of: ARENAS below)\n") != NULL,
		      "the first screen's advice: not an environment setting, its cost not measured");
		free(line);
	}

	a.mmap_threshold_set = a.arena_max_set = true;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.nadvice, 1, "settings already in the environment are not advised again");

	a.mmap_threshold_set = a.arena_max_set = false;
	a.retained_bytes = 3 * MiB;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.nadvice, 0, "no advice under 4 MiB retained");
	a.retained_bytes = 8 * MiB;
	a.rss_bytes = 1000 * MiB;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.nadvice, 0, "no advice under 10%% of RSS");

	/* Attached with 48 MiB of arena memory resident already: 50 MiB "retained" may be 2. */
	a.rss_bytes = 100 * MiB;
	a.retained_bytes = 50 * MiB;
	a.attach_resident = 48 * MiB;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.retained_floor, 2 * MiB, "attached: the floor discounts what was resident at attach");
	CHECK_EQ_U64(a.nadvice, 0, "no advice when the floor is small");
	a.from_start = true;
	pt_arenas_advise(&a);
	CHECK_EQ_U64(a.retained_floor, 50 * MiB, "launched: every block is known, no discount");
	CHECK(a.nadvice > 0, "launched: advice");
}

static void test_compare(void)
{
	struct pt_summary s[3];
	const char *labels[3] = { "baseline", "MALLOC_MMAP_THRESHOLD_=32768", "X=1" };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	memset(s, 0, sizeof(s));
	s[0].ok = s[1].ok = true;
	s[0].rss_peak = 200 << 20;
	s[1].rss_peak = 100 << 20;
	s[0].arenas = s[1].arenas = true;
	s[0].arena_retained = 188 << 20;
	s[1].arena_retained = 4 << 20;
	pt_compare_print(f, labels, s, 3);
	fclose(f);
	CHECK(strstr(out, "100.00 MiB (-50.0%)") != NULL, "halved peak RSS shows -50.0%%");
	CHECK(strstr(out, "4.00 MiB (-97.9%)") != NULL, "188 MB -> 4 MB retained shows -97.9%%");
	CHECK(strstr(out, "(no result)") != NULL, "a failed run says so");
	CHECK(strstr(out, "invocations") == NULL, "no invocation rows without invocations");
	free(out);

	{
		char path[] = "/tmp/pt-summary-XXXXXX";
		int fd = mkstemp(path);
		FILE *g = fdopen(fd, "w");
		struct pt_summary r;

		fprintf(g, "exit_status\t137\nwall_ns\t1500000000\nrss_peak\t123\narena_resident\t7\n"
			   "arena_retained\t5\nnonsense line\n");
		fclose(g);
		CHECK(pt_summary_read(path, &r) == 0 && r.ok, "summary read");
		CHECK_EQ_U64(r.exit_status, 137, "exit status");
		CHECK_EQ_U64(r.rss_peak, 123, "rss_peak");
		CHECK(r.arenas && r.arena_retained == 5, "arena figures present");
		CHECK(r.wall_s > 1.49 && r.wall_s < 1.51, "wall time in seconds");
		unlink(path);
		CHECK(pt_summary_read(path, &r) < 0 && !r.ok, "a missing summary is an error");
	}
}

/* The untraced figures and the measured price of a setting. */
static void test_untraced(void)
{
	struct pt_summary s[2];
	const char *labels[2] = { "baseline", "MALLOC_MMAP_THRESHOLD_=32768" };
	double v[4] = { 3, 1, 4, 2 }, med, lo, hi, ms;
	int64_t mb;
	char *out = NULL, buf[1024];
	size_t len = 0;
	FILE *f;
	int k;

	CHECK(pt_lambda_report_line("REPORT RequestId: f95d\tDuration: 71.36 ms\tBilled Duration: 72 ms\t"
				    "Memory Size: 256 MB\tMax Memory Used: 33 MB\tInit Duration: 518.30 ms\t\n",
				    &ms, &mb) && ms > 71.35 && ms < 71.37 && mb == 33,
	      "a REPORT line: Duration 71.36 ms, Max Memory Used 33 MB");
	CHECK(!pt_lambda_report_line("START RequestId: f95d Version: $LATEST\n", &ms, &mb), "START is not REPORT");
	CHECK(!pt_lambda_report_line("{\"REPORT RequestId: \": 1}\n", &ms, &mb), "REPORT must start the line");
	pt_spread(v, 4, &med, &lo, &hi);
	CHECK(med == 2.5 && lo == 1 && hi == 4, "median of an even count: the mean of the middle two");

	memset(s, 0, sizeof(s));
	s[0].ok = s[1].ok = true;
	s[0].arenas = s[1].arenas = true;
	s[0].arena_retained = 100 << 20;
	s[1].arena_retained = 5 << 20;
	s[0].nadvice = 2;
	snprintf(s[0].advice[0], sizeof(s[0].advice[0]), "MALLOC_MMAP_THRESHOLD_=32768");
	snprintf(s[0].advice[1], sizeof(s[0].advice[1]), "MALLOC_ARENA_MAX=2");
	CHECK(pt_measured_cost(buf, sizeof(buf), &s[0], &s[1]) == 0, "nothing untraced: no measured cost");
	for (k = 0; k < 3; k++) {
		s[0].u.wall_s[k] = 1.0 + k * 0.1;
		s[1].u.wall_s[k] = 2.0 + k * 0.1;
		s[0].u.cpu_s[k] = s[1].u.cpu_s[k] = 0.5;
		s[0].u.maxrss[k] = 200 << 20;
		s[1].u.maxrss[k] = 150 << 20;
	}
	s[0].u.runs = s[1].u.runs = 3;
	/* The ONNX function's figures (issue 21): 264-410 ms per invocation, 564-825 ms with it. */
	s[0].u.inv_ms[0] = 264, s[0].u.inv_ms[1] = 300, s[0].u.inv_ms[2] = 410;
	s[1].u.inv_ms[0] = 825, s[1].u.inv_ms[1] = 600, s[1].u.inv_ms[2] = 564;
	s[0].u.ninv = s[1].u.ninv = 3;
	s[0].u.max_mem_mb = 210;
	s[1].u.max_mem_mb = 160;
	CHECK(pt_measured_cost(buf, sizeof(buf), &s[0], &s[1]) > 0, "measured cost written");
	CHECK(strstr(buf, "time per invocation 300.0 ms [264.0-410.0] -> 600.0 ms [564.0-825.0] (+100%)") != NULL,
	      "time per invocation: medians, ranges and change");
	CHECK(strstr(buf, "wall time 1.100 s [1.000-1.200] -> 2.100 s [2.000-2.200] (+91%)") != NULL, "wall time");
	CHECK(strstr(buf, "peak RSS 200.00 MiB -> 150.00 MiB (-25%) (untraced, 3 and 3 runs)") != NULL, "peak RSS");
	CHECK(strstr(buf, "arena retained at the end 100.00 MiB -> 5.00 MiB (-95%) (traced: bytes are exact)") != NULL,
	      "retained from the traced runs, said so");
	f = open_memstream(&out, &len);
	pt_compare_print(f, labels, s, 2);
	fclose(f);
	CHECK(strstr(out, "  untraced: the command alone, 3 runs per setting") != NULL, "the untraced rows' label");
	CHECK(strstr(out, "  traced (distorted by tracing: do not use for time)") != NULL, "the traced times' label");
	CHECK(strstr(out, "  invocation Duration (REPORT)   300.0 ms [264.0-410.0]") != NULL,
	      "the untraced invocation row");
	CHECK(strstr(out, "  Max Memory Used (REPORT)       210 MB (max)") != NULL, "the host's Max Memory Used");
	CHECK(strstr(out, "ADVICE: MALLOC_MMAP_THRESHOLD_=32768, its cost as measured: time per invocation") != NULL,
	      "the baseline's advice priced by its comparison");
	CHECK(strstr(out, "ADVICE: MALLOC_ARENA_MAX=2: its cost not measured here (--compare-env MALLOC_ARENA_MAX=2)") != NULL,
	      "an advice not compared says how to measure it");
	free(out);
}

int main(void)
{
	test_parse();
	test_attribute();
	test_merged_heap();   /* first: before any thread arena (test_rsskind.c says why) */
	test_own_arena();
	test_heap_info();
	test_advice();
	test_compare();
	test_untraced();
	return CHECK_DONE();
}

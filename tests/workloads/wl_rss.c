/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_rss — anonymous pages made resident by known functions, for the rss section
 * (tests/sections/rss.py). Each scenario measures its own effect on the process's anonymous
 * RSS (RssAnon of /proc/self/status, the counter kmem:rss_stat reports) and writes it to the
 * log file as "NAME BYTES" lines, so the test has an independent truth for every figure.
 *
 * Usage: wl_rss [--wait] LOG thp|nothp
 *   thp: madvise(MADV_HUGEPAGE) on every region, and THP for this process only where madvised
 *        (prctl PR_SET_THP_DISABLE with PR_THP_DISABLE_EXCEPT_ADVISED, 6.18+: "madvise" mode
 *        whatever the system's, logged as "thp_except_advised 1", else 0). Under "always"
 *        (Debian's kernels) khugepaged collapses the brk heap too, and when a 2 MiB boundary
 *        lies in the heap's unwritten top pad (~31 pages) it fills the pages below it: RssAnon
 *        grows by them in whatever window is being measured (7.3 guest: a run failed by 6
 *        pages that way; docs/design.md "Honest accounting"), pages no function faulted.
 *        Without the flag (before 6.18): mallopt(M_TOP_PAD, 0), no unwritten top pad.
 *        Once the peak is logged THP is off for the process (khugepaged included): the
 *        release windows after it are measured with no collapse inside them;
 *   nothp: prctl(PR_SET_THP_DISABLE) first (no transparent huge pages).
 *   Each region's own AnonHugePages (smaps) is not needed: the figures are RssAnon deltas.
 *   In order, everything held until the peak:
 *     scn_malloc_memset   malloc(64 MiB) + memset (glibc mmaps it)           "malloc_memset"
 *     scn_mmap_touch      mmap 32 MiB, one write per page in the function    "mmap_touch"
 *     scn_stack_deep      on a new thread, 4 MiB of its stack touched by a
 *                         64-deep recursion (measured inside the thread)    "stack_deep"
 *                         (the thread lives until the peak is past: at its exit glibc
 *                         madvises most of its stack away, "thread_exit")
 *     scn_heap_small      8 MiB in 1 KiB mallocs, written (main arena)      "heap_small"
 *     scn_arena_small     the same on the thread, after its stack (a thread arena's heap)
 *                                                                            "arena_small"
 *     scn_mremap_touch    mmap 8 MiB touched ...                            "mremap_touch"
 *     scn_mremap_grow     ... mremap to 16 MiB (may move: the pages keep their owner), the new
 *                         half touched here                                  "mremap_grow"
 *     scn_read_into       read 4 MiB of /dev/zero into a fresh mmap: the kernel faults the
 *                         pages in (page_fault_kernel), on read's user stack  "read_into"
 *     scn_munmap_touch    mmap 16 MiB touched                               "munmap_touch"
 *     scn_populate        mmap 8 MiB with MAP_POPULATE (no fault: unattributed) "populate"
 *     scn_thp_on          4 MiB on a 2 MiB boundary, madvise(MADV_HUGEPAGE), one write per
 *                         2 MiB: two faults, 4 MiB resident where THP is available (8 KiB
 *                         with "nothp" or THP "never")          "thp_on", its AnonHugePages
 *                                                               delta "thp_on_huge"
 *     scn_thp_off         the same with madvise(MADV_NOHUGEPAGE): 8 KiB "thp_off", "thp_off_huge"
 *   "peak_anon BYTES": RssAnon now, the RSS peak. Then the releases:
 *     scn_dontneed        madvise(DONTNEED) of the second half of mmap_touch's 32 MiB
 *                                                     "dontneed" (negative: the change)
 *     scn_munmap          munmap of munmap_touch's 16 MiB                    "munmap"
 *   "end_anon BYTES": RssAnon at the end. Exit 0. (Also "huge BYTES": AnonHugePages of the
 *   whole process at the peak, so the test knows whether THP was really used.)
 * No stdio (wl_common.h): numbers are formatted by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "wl_common.h"

#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif

#define MiB (1024UL * 1024UL)
#define PAGE 4096UL

static int log_fd = -1;
static int thp;   /* "thp": madvise(MADV_HUGEPAGE) each region (THP is "madvise" here) */
static pthread_barrier_t peak_passed;
static volatile int stack_logged;

static long status_kb(const char *key)
{
	return wl_field_kb("/proc/self/smaps_rollup", key);
}


/* "thp": huge pages where the kernel may use them (no fault happens here). */
/* From p's first whole page on, not from its first 2 MiB boundary: that split a mapping the
 * kernel had not placed on one (before 6.7 anonymous mappings are not THP-aligned) into two
 * VMAs, and scn_mremap_grow's mremap of both failed (EFAULT: seen on 6.1). */
static void want_thp(void *p, size_t len)
{
	uintptr_t a = ((uintptr_t)p + PAGE - 1) & ~(PAGE - 1);

	if (thp && a < (uintptr_t)p + len)
		madvise((void *)a, ((uintptr_t)p + len - a) & ~(PAGE - 1), MADV_HUGEPAGE);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	want_thp(p, len);
	return p;
}

WL_SCENARIO void *scn_malloc_memset(void)
{
	size_t n = wl_opaque_size(64 * MiB);
	char *p = malloc(n);

	want_thp(p, n);
	memset(p, 1, n);
	wl_sink(p);
	return p;
}

/* The writes are in the function itself (no helper call): the faulting instruction is here. */
WL_SCENARIO char *scn_mmap_touch(size_t len)
{
	volatile char *p = map_anon(len);

	for (size_t i = 0; i < len; i += PAGE)
		p[i] = 1;
	return (char *)p;
}

/* 8 MiB in 1 KiB blocks, each written whole and kept: below the mmap threshold, so from the
 * calling thread's arena ([heap] on the main thread, a thread arena's heap on another). */
WL_SCENARIO void scn_small_blocks(void)
{
	for (int i = 0; i < 8192; i++) {
		char *p = malloc(wl_opaque_size(1024));

		memset(p, 2, 1024);
		wl_sink(p);
	}
}

/* The call after it keeps scn_small_blocks() from being a tail call (this frame stays). */
WL_SCENARIO void scn_heap_small(void)
{
	scn_small_blocks();
	wl_sink(NULL);
}

WL_SCENARIO void scn_arena_small(void)
{
	scn_small_blocks();
	wl_sink(NULL);
}

WL_SCENARIO int scn_stack_deep(int depth)
{
	volatile char frame[64 * 1024];

	for (size_t i = 0; i < sizeof(frame); i += PAGE)
		frame[i] = (char)depth;
	if (depth > 1)
		return scn_stack_deep(depth - 1) + frame[100];
	return frame[200];
}

static void *thread_main(void *arg)
{
	long before;

	/* The first measurement's own page: read() fills wl_field_kb's buffer after the kernel took
	 * the counter, so that page would land in the next delta although read() faulted it
	 * (and peaktrace rightly gives it to read's stack). Measured once first, it is resident. */
	wl_rss_anon();
	before = wl_rss_anon();

	scn_stack_deep(64);
	wl_say_val(log_fd, "stack_deep", wl_rss_anon() - before);
	before = wl_rss_anon();
	scn_arena_small();
	wl_say_val(log_fd, "arena_small", wl_rss_anon() - before);
	stack_logged = 1;
	/* Alive until the peak is past: at its exit glibc gives most of its stack back. */
	pthread_barrier_wait(&peak_passed);
	return arg;
}

WL_SCENARIO char *scn_mremap_touch(size_t len)
{
	volatile char *p = map_anon(len);

	for (size_t i = 0; i < len; i += PAGE)
		p[i] = 1;
	return (char *)p;
}

WL_SCENARIO char *scn_mremap_grow(char *old, size_t oldl, size_t newl)
{
	volatile char *p = mremap(old, oldl, newl, MREMAP_MAYMOVE);

	if (p == MAP_FAILED) {
		wl_say_val(log_fd, "mremap_failed_errno", errno);
		exit(3);
	}
	want_thp((char *)p, newl);

	for (size_t i = oldl; i < newl; i += PAGE)
		p[i] = 1;
	return (char *)p;
}

WL_SCENARIO char *scn_read_into(size_t len)
{
	char *p = map_anon(len);
	int fd = open("/dev/zero", O_RDONLY);
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return p;
}

WL_SCENARIO char *scn_munmap_touch(size_t len)
{
	volatile char *p = map_anon(len);

	for (size_t i = 0; i < len; i += PAGE)
		p[i] = 1;
	return (char *)p;
}

WL_SCENARIO char *scn_populate(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		    -1, 0);
}

/* One write per 2 MiB of a 2 MiB-aligned region, the madvise given: with MADV_HUGEPAGE each
 * write's fault makes a whole 2 MiB page resident (where THP is available). */
static char *thp_region(size_t len, int advice)
{
	char *p = mmap(NULL, len + 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *a = (char *)(((uintptr_t)p + 2 * MiB - 1) & ~(2 * MiB - 1));

	madvise(a, len, advice);
	return a;
}

WL_SCENARIO char *scn_thp_on(size_t len)
{
	volatile char *p = thp_region(len, MADV_HUGEPAGE);

	for (size_t i = 0; i < len; i += 2 * MiB)
		p[i] = 1;
	return (char *)p;
}

WL_SCENARIO char *scn_thp_off(size_t len)
{
	volatile char *p = thp_region(len, MADV_NOHUGEPAGE);

	for (size_t i = 0; i < len; i += 2 * MiB)
		p[i] = 1;
	return (char *)p;
}

WL_SCENARIO void scn_dontneed(char *p, size_t len)
{
	madvise(p, len, MADV_DONTNEED);
}

WL_SCENARIO void scn_munmap(char *p, size_t len)
{
	munmap(p, len);
}

#define MEASURE(name, expr) do { long b_ = wl_rss_anon(); expr; wl_say_val(log_fd, name, wl_rss_anon() - b_); } while (0)
/* The same, and the change of AnonHugePages (smaps_rollup) as NAME_huge. */
#define MEASURE_HUGE(name, expr) do { long h_ = status_kb("AnonHugePages:"); \
	MEASURE(name, expr); wl_say_val(log_fd, name "_huge", (status_kb("AnonHugePages:") - h_) * 1024); } while (0)

int main(int argc, char **argv)
{
	int a = wl_maybe_wait(argc, argv);
	char *mt, *mr, *mu, *rd, *pp, *ton, *toff;
	pthread_t th;

	if (argc - a < 2)
		return 2;
	log_fd = open(argv[a], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (log_fd < 0)
		return 3;
	if (!strcmp(argv[a + 1], "nothp"))
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	thp = !strcmp(argv[a + 1], "thp");
	/* Before the first line's RssAnon: no window measured yet. */
	if (thp) {
		int advised = !prctl(PR_SET_THP_DISABLE, 1, PR_THP_DISABLE_EXCEPT_ADVISED, 0, 0);

		wl_say_val(log_fd, "thp_except_advised", advised);
		/* Before 6.18 (no such flag): heaps that grow by what malloc needs, no top pad,
		 * leave khugepaged no unwritten page inside them to fill (their last page holds
		 * the top chunk's header). The figures are the same: pad pages are never written. */
		if (!advised)
			mallopt(M_TOP_PAD, 0);
	}
	pthread_barrier_init(&peak_passed, NULL, 2);
	wl_say_val(log_fd, "start_anon", wl_rss_anon());
	MEASURE("malloc_memset", wl_sink(scn_malloc_memset()));
	MEASURE("mmap_touch", mt = scn_mmap_touch(32 * MiB));
	MEASURE("heap_small", scn_heap_small());
	pthread_create(&th, NULL, thread_main, NULL);
	while (!stack_logged)
		usleep(1000);
	MEASURE("mremap_touch", mr = scn_mremap_touch(8 * MiB));
	MEASURE("mremap_grow", mr = scn_mremap_grow(mr, 8 * MiB, 16 * MiB));
	MEASURE("read_into", rd = scn_read_into(4 * MiB));
	MEASURE("munmap_touch", mu = scn_munmap_touch(16 * MiB));
	MEASURE("populate", pp = scn_populate(8 * MiB));
	MEASURE_HUGE("thp_on", ton = scn_thp_on(4 * MiB));
	MEASURE_HUGE("thp_off", toff = scn_thp_off(4 * MiB));
	wl_sink(ton);
	wl_sink(toff);
	wl_sink(mr);
	wl_sink(rd);
	wl_sink(pp);
	wl_say_val(log_fd, "peak_anon", wl_rss_anon());
	wl_say_val(log_fd, "huge", status_kb("AnonHugePages:") * 1024);
	/* Past the peak only releases are measured. THP off for the whole process from here
	 * (khugepaged included: it skips an mm with THP disabled), so that no collapse of a
	 * madvised region's partly resident 2 MiB range adds pages inside a window: seen once,
	 * +2 MiB in "munmap" (its RssAnon delta -14 MiB for 16 MiB unmapped), peaktrace naming
	 * them "[added by another task]". Huge pages already there are released as before. */
	if (thp)
		wl_say_val(log_fd, "thp_off_after_peak", !prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	MEASURE("thread_exit", (pthread_barrier_wait(&peak_passed), pthread_join(th, NULL)));
	MEASURE("dontneed", scn_dontneed(mt + 16 * MiB, 16 * MiB));
	MEASURE("munmap", scn_munmap(mu, 16 * MiB));
	wl_say_val(log_fd, "end_anon", wl_rss_anon());
	return 0;
}

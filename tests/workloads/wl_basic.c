/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_basic — every glibc allocator entry point, with exactly known figures.
 *
 * Usage: wl_basic [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Each scn_* function is one scenario; the figures in its comment are what its
 * stack(s) (selected by frames[0].func == the function) must show at the end of
 * tracing, following docs/json-report.md: "a/A f/F l/L p/P" = alloc count/bytes,
 * free count/bytes, live count/bytes, peak count/bytes (held at the live-heap peak).
 * Frees are charged to the stack that allocated the block, wherever free() is called.
 * Expected figures live in tests/cases/basic.json; tests/run.py re-derives them
 * independently with tests/workloads/ref_preload.c on every run.
 *
 * Live-heap timeline: the leaks below stay live to the end; scn_early_big's 3 MB block
 * is freed long before scn_peak holds 9,130,000 bytes, which with the 333,965 bytes
 * then live makes the only (and unrepeated) peak: peak_live_bytes = 9,463,965.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

/* A request no allocator can satisfy (> PTRDIFF_MAX): glibc fails it up front. */
#define HUGE_SIZE ((size_t)1 << 63)

/* 1/300000 l1/300000 p1/300000 — above the 128 KiB mmap threshold: an mmapped chunk. */
WL_SCENARIO void scn_big_leak(void)
{
	wl_sink(malloc(300000));
}

/* a5/5555 f3/3333 l2/2222 p2/2222 */
WL_SCENARIO void scn_malloc(void)
{
	void *p[5];
	for (int i = 0; i < 5; i++) {
		p[i] = malloc(1111);
		wl_sink(p[i]);
	}
	for (int i = 0; i < 3; i++)
		free(p[i]);
}

/* a3/2331 f2/1554 l1/777 p1/777 — calloc(7, 111) counts 7*111 = 777 bytes. */
WL_SCENARIO void scn_calloc(void)
{
	void *p[3];
	for (int i = 0; i < 3; i++) {
		p[i] = calloc(7, 111);
		wl_sink(p[i]);
	}
	free(p[0]);
	free(p[2]);
}

/* Sources for the realloc scenarios: the block realloc frees is charged back to
 * these stacks, the new block to the realloc caller's stack. */
WL_SCENARIO void *scn_rsrc_grow(void)   { void *p = malloc(2000); wl_sink(p); return p; } /* a1/2000 f1/2000 */
WL_SCENARIO void *scn_rsrc_shrink(void) { void *p = malloc(6000); wl_sink(p); return p; } /* a1/6000 f1/6000 */
WL_SCENARIO void *scn_rsrc_fail(void)   { void *p = malloc(3333); wl_sink(p); return p; } /* a1/3333 l1/3333 p1/3333 */
WL_SCENARIO void *scn_rsrc_zero(void)   { void *p = malloc(5550); wl_sink(p); return p; } /* a1/5550 f1/5550 */
WL_SCENARIO void *scn_rsrc_big(void)    { void *p = malloc(400000); wl_sink(p); return p; } /* a1/400000 f1/400000 */

/* a1/5000 l1/5000 p1/5000 (2000 -> 5000; the 2000 are freed on scn_rsrc_grow) */
WL_SCENARIO void scn_realloc_grow(void *p)
{
	wl_sink(realloc(p, 5000));
}

/* a1/600 l1/600 p1/600 — shrinking in place still counts a free + an allocation. */
WL_SCENARIO void scn_realloc_shrink(void *p)
{
	wl_sink(realloc(p, 600));
}

/* nothing: realloc fails (NULL), the old block stays live on scn_rsrc_fail. */
WL_SCENARIO void scn_realloc_fail(void *p)
{
	wl_sink(realloc(p, wl_opaque_size(HUGE_SIZE)));
}

/* a1/4444 f1/4444 — realloc(NULL, n) is one malloc (not two, despite glibc's
 * internal malloc call). */
WL_SCENARIO void scn_realloc_null(void)
{
	void *p = realloc(wl_opaque_ptr(NULL), 4444);
	wl_sink(p);
	free(p);
}

/* nothing: realloc(p, 0) frees p (charged to scn_rsrc_zero) and returns NULL. */
WL_SCENARIO void scn_realloc_zero(void *p)
{
	wl_sink(realloc(p, wl_opaque_size(0)));
}

/* a1/800000 f1/800000 — an mmapped block grown with mremap, then freed. */
WL_SCENARIO void scn_realloc_big(void *p)
{
	void *q = realloc(p, 800000);
	wl_sink(q);
	free(q);
}

/* a2/1616 f1/707 l1/909 p1/909 — reallocarray(NULL, 7, 101) = 707 bytes, grown to
 * reallocarray(p, 9, 101) = 909 bytes (glibc's internal realloc call is nested). */
WL_SCENARIO void scn_reallocarray(void)
{
	void *p = reallocarray(wl_opaque_ptr(NULL), 7, 101);
	wl_sink(p);
	p = reallocarray(p, 9, 101);
	wl_sink(p);
}

/* a2/13333 f1/12121 l1/1212 p1/1212 */
WL_SCENARIO void scn_posix_memalign(void)
{
	void *a = NULL, *b = NULL;
	if (posix_memalign(&a, 64, 1212) == 0)
		wl_sink(a);
	if (posix_memalign(&b, 4096, 12121) == 0)
		wl_sink(b);
	free(b);
}

/* a1/2560 l1/2560 p1/2560 (aligned_alloc and memalign share one address in glibc) */
WL_SCENARIO void scn_aligned_alloc(void)
{
	wl_sink(aligned_alloc(256, 2560));
}

/* a1/1280 f1/1280 */
WL_SCENARIO void scn_memalign(void)
{
	void *p = memalign(128, 1280);
	wl_sink(p);
	free(p);
}

/* a1/3000 l1/3000 p1/3000 */
WL_SCENARIO void scn_valloc(void)
{
	wl_sink(valloc(3000));
}

/* a1/8192 l1/8192 p1/8192 — a page multiple, so requested == rounded size. */
WL_SCENARIO void scn_pvalloc(void)
{
	wl_sink(pvalloc(8192));
}

/* strdup of a 99-character string: glibc's strdup calls malloc(100), so this stack's
 * frames[0] is strdup/__strdup (a1/100 l1/100 p1/100); scn_strdup has no stack. */
static const char strdup_src[] =
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";
WL_SCENARIO void scn_strdup(void)
{
	char *s = strdup((const char *)wl_opaque_ptr((void *)(strdup_src + 1)));
	wl_sink(s);
}

/* nothing: free(NULL) is ignored. */
WL_SCENARIO void scn_free_null(void)
{
	for (int i = 0; i < 3; i++)
		free(wl_opaque_ptr(NULL));
}

/* nothing: failed allocations are not counted. */
WL_SCENARIO void scn_failures(void)
{
	void *p = NULL;
	wl_sink(malloc(wl_opaque_size(HUGE_SIZE)));
	wl_sink(calloc(wl_opaque_size((size_t)1 << 62), 8));   /* n*s overflows */
	wl_sink(memalign(64, wl_opaque_size(HUGE_SIZE)));
	wl_sink(valloc(wl_opaque_size(HUGE_SIZE)));
	wl_sink(realloc(wl_opaque_ptr(NULL), wl_opaque_size(HUGE_SIZE)));
	wl_sink(reallocarray(wl_opaque_ptr(NULL), wl_opaque_size((size_t)1 << 62), 8));
	if (posix_memalign(&p, wl_opaque_size(3), 100) == 0)  /* EINVAL: not a power of 2 */
		wl_sink(p);
}

/* a1/6060 f1/6060 p1/6060 — allocated before the peak, freed after it. */
WL_SCENARIO void *scn_held_over_peak(void)
{
	void *p = malloc(6060);
	wl_sink(p);
	return p;
}

/* a1/3000000 f1/3000000 — a big block (mmapped) that is not the peak. */
WL_SCENARIO void scn_early_big(void)
{
	void *p = malloc(3000000);
	wl_sink(p);
	free(p);
}

/* a100/4800 f100/4800 — 100 short-lived blocks from one call site. */
WL_SCENARIO void scn_small_loop(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(48);
		wl_sink(p);
		free(p);
	}
}

/* a4/9130000 f4/9130000 p4/9130000 — the live-heap peak (then everything freed). */
WL_SCENARIO void scn_peak(void)
{
	static const size_t sz[4] = { 4000000, 4100000, 310000, 720000 };
	void *p[4];
	for (int i = 0; i < 4; i++) {
		p[i] = malloc(sz[i]);
		wl_sink(p[i]);
	}
	for (int i = 0; i < 4; i++)
		free(p[i]);
}

/* a1/4321 f1/4321 — malloc called with sp 256 KiB below the caller's frame, on stack pages the
 * process never touched: alloca's area is written only at its top (the last byte), and nothing
 * between the alloca and the call stores below it (no call, the size and the area made opaque
 * by empty asm, not by wl_opaque_*()'s calls, whose frames would touch the pages at sp). On
 * arm64 the return address is in x30, not at [sp], and [sp] cannot be read from the uprobe (no
 * faulting there): the stack must still be kept, whole (scn_untouched_stack <- main). */
#define UNTOUCHED_BYTES (256 << 10)
WL_SCENARIO void scn_untouched_stack(void)
{
	size_t n = UNTOUCHED_BYTES, sz = 4321;
	volatile char *area;
	void *p;

	__asm__ volatile("" : "+r"(n), "+r"(sz));
	area = __builtin_alloca(n);
	area[n - 1] = 1;
	p = malloc(sz);
	wl_sink((void *)area);
	wl_sink(p);
	free(p);
}

/* a1/7070 l1/7070 p0/0 — allocated after the peak. */
WL_SCENARIO void scn_late_leak(void)
{
	wl_sink(malloc(7070));
}

int main(int argc, char **argv)
{
	void *held;

	wl_maybe_wait(argc, argv);

	scn_big_leak();
	scn_malloc();
	scn_calloc();
	scn_realloc_grow(scn_rsrc_grow());
	scn_realloc_shrink(scn_rsrc_shrink());
	scn_realloc_fail(scn_rsrc_fail());
	scn_realloc_null();
	scn_realloc_zero(scn_rsrc_zero());
	scn_realloc_big(scn_rsrc_big());
	scn_reallocarray();
	scn_posix_memalign();
	scn_aligned_alloc();
	scn_memalign();
	scn_valloc();
	scn_pvalloc();
	scn_strdup();
	scn_free_null();
	scn_failures();
	scn_untouched_stack();
	held = scn_held_over_peak();
	scn_early_big();
	scn_small_loop();
	scn_peak();
	free(held);
	scn_late_leak();
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_arenas — glibc arenas, agreed with glibc's own books.
 *
 * Usage: wl_arenas [--wait]      (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Four worker threads each get their own glibc arena and allocate, free and keep blocks of
 * known sizes around the thresholds that matter (small/tcache sizes, just under and over
 * 32 KiB and 128 KiB, and 300 KB / 1 MiB blocks above the mmap threshold); main keeps a few
 * blocks of its own in the main arena and one mmapped. At the final point (after every
 * worker has been joined) main prints ONE JSON line on stdout and then allocates and frees
 * nothing more before it exits, so that line describes exactly the heap peaktrace sees at the
 * end of the trace:
 *
 *   {"wl_arenas": 1, "pid": P,
 *    "threads": [{"tid", "index", "arena": "main" | "0x7f...", "heap": "0x7f...", "heap_size",
 *                 "alloc_count", "free_count", "live_count", "live_bytes", "live_chunk_bytes",
 *                 "mmapped_live_count", "mmapped_live_chunk_bytes"}, ...],   main is index -1
 *    "heaps": [{"nr", "arena": "main" | "0x7f...", "system", "fast", "rest", "rest_count", "in_use",
 *               "subheaps", "own_chunk_bytes"}, ...],         from malloc_info(), nr order
 *    "mmapped": {"count", "size"},                            malloc_info()'s <total type="mmap">
 *    "mallinfo2": {"arena", "uordblks", "fordblks", "hblks", "hblkhd"},
 *    "formula": {"tcache_struct_chunk": 656, "thread_arena_header": 2256},
 *    "self_check": {"ok": true|false, "why": "..."},
 *    "malloc_info": "<malloc version=...>...</malloc>"}       (raw XML, JSON-escaped)
 *
 * Each thread names its arena itself, from the chunk header of one of its blocks (docs/design.md, "glibc arenas"):
 * NON_MAIN_ARENA (0x4) set -> heap_info at ptr & ~(64 MiB - 1), whose first word is the arena
 * pointer; otherwise "main". Thread arenas are created one after the other (each worker makes
 * its first malloc only after the previous one has made its own), and glibc pushes every new
 * arena at the head of its list (main_arena.next), which malloc_info() walks: heap nr 0 is the
 * main arena and nr k (k >= 1) is the arena of worker NTHREADS - k. The workload checks that
 * mapping: a single-heap arena's <system type="current"> equals heap_info.size of the heap it
 * found through its own block, and every worker's heap size differs (different sizes per worker).
 *
 * ---- The formula (glibc 2.36, x86-64; measured with this workload, see self_check) ----
 * In use per arena, from malloc_info():
 *     in_use = system - fast - rest + (rest_count - 1)
 * (<system type="current"> size, <total type="fast"> size, <total type="rest"> size and count).
 * "rest" is the top chunk plus every binned free chunk, "fast" the fastbins. The correction term:
 * malloc_info() sums each binned chunk's raw size word (chunksize_nomask), flags included, and
 * every binned chunk carries exactly PREV_INUSE (1): _int_free, malloc_consolidate and every
 * split set_head(p, size | PREV_INUSE) and a free chunk's predecessor is always in use (else they
 * would have merged). The top chunk (the "- 1") is summed masked. The result summed over all
 * heaps equals mallinfo2().uordblks exactly (int_mallinfo masks the sizes); self_check asserts it.
 * Everything in system_mem that is not free counts as in use, including:
 *   (a) chunks parked in a thread's tcache (freed by the program, in use for glibc);
 *   (b) each thread's tcache_perthread_struct: 64 x 2-byte counts + 64 x 8-byte entries = 640
 *       bytes -> one 656-byte chunk, taken with _int_malloc (never through malloc, so no tracer
 *       sees it), in the arena of the thread's first malloc;
 *   (c) a thread arena's own header at the start of its first heap: heap_info (5 words + 8 pad
 *       = 48) + malloc_state (2200) + 8 bytes so that chunk2mem(top) is 16-aligned = 2256;
 *   (d) per extra heap of an arena: its heap_info and the fenceposts left in the old heap.
 * The workload makes (a), (b) and (d) vanish for the thread arenas and pins them for main:
 *   - the workers have EXITED at the final point: tcache_thread_shutdown() freed their tcache
 *     entries and their tcache struct (these frees reach free() and count as unknown_free in
 *     peaktrace: it never saw those pointers allocated, or saw them freed already);
 *   - every arena stays within one 64 MiB heap (each worker holds < 8 MB at any time);
 *   - main never frees a block of tcache size (<= 1032 bytes) nor an aligned block (memalign
 *     frees the split-off lead/tail through _int_free, which may park them in the tcache), so its
 *     tcache is empty; its tcache struct (b) stays.
 * Hence, with L(a) = sum of chunk sizes (header size, flags masked) of the blocks live at the end
 * that were allocated while tracing (peaktrace's live_chunk_bytes; launch mode traces from exec):
 *     main arena:     in_use(main)  = L(main) + 656
 *     thread arena:   in_use(arena) = L(arena) + 2256
 *     mmapped chunks: hblkhd = L(mmapped), hblks = live mmapped count (mallinfo2; also
 *                     malloc_info's <total type="mmap">)
 * exactly, tolerance 0: every term is a whole chunk or a fixed header, nothing is estimated.
 * (Without the flag correction the naive system - fast - rest is low by one byte per binned
 * chunk, 9 to 11 bytes per thread arena here: do not use it.)
 * Why mmapped agrees exactly: glibc adds the chunk size it writes in the header (page-rounded,
 * header included) to mmapped_mem; the one exception is an aligned block served by mmap
 * (_int_memalign moves the header forward by the lead size but mmapped_mem keeps the whole
 * mapping), so this workload aligns only small blocks, which come from the arena.
 * self_check verifies (c) and the thread formula with the workload's own blocks alone
 * (in_use - own_chunk_bytes == 2256 for every worker's arena, own blocks being all there is in
 * a thread arena) and hblkhd == own mmapped chunk bytes (main's 2 MiB block + the workers'
 * live mmapped blocks); for main, in_use - 656 - own_chunk_bytes is what glibc itself allocated
 * through malloc in the main arena (pthread_create's DTVs: 4 x calloc(17, 16) -> 288-byte
 * chunks; fdopen's FILE: 472 -> 480) = 1632, checked as well.
 *
 * Per worker i (0..3), all through the public entry points:
 *   first:   malloc(64)                              (kept; creates the arena)
 *   3 rounds r of: malloc of each size in SIZES(i) (11 sizes), then free every block of the
 *            round whose index k has (k + r) odd; the others stay live
 *   calloc(10, 100 + i)          kept
 *   malloc(5000) then realloc to 20000 + i     kept (one alloc, then realloc = free + alloc)
 *   aligned_alloc(4096, 4096 + 16 i)   kept;  posix_memalign(64, 777)  kept
 *   memalign(256, 3000) then free
 * Counts per worker (as peaktrace counts them: realloc = 1 free + 1 alloc): allocs 1 + 33 + 1 +
 * 2 + 2 + 1 = 40, frees 16 + 1 + 1 = 18 (rounds free 5, 6, 5 blocks), live 22. The requested
 * live bytes and chunk bytes are printed per thread (chunk sizes depend on where glibc put each
 * block, which the free of an mmapped block changes at run time: glibc then raises its dynamic
 * mmap threshold, globally, racing with the other workers).
 * main: malloc(1500), malloc(70000), malloc(2 MiB) kept (the last one mmapped), malloc(5000)
 * freed, then pthread_create x 4 (DTV callocs), joins, then fdopen (FILE) before the final point.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wl_common.h"

#define NTHREADS 4
#define NSIZES 11
#define ROUNDS 3
#define MAXLIVE 64
#define HEAP_MAX (64UL << 20)
#define TCACHE_STRUCT_CHUNK 656
#define THREAD_ARENA_HEADER 2256
/* What glibc itself mallocs in the main arena here: 4 DTVs (calloc(17, 16) -> 288) + a FILE (472 -> 480). */
#define GLIBC_OWN_MAIN (4 * 288 + 480)

static const size_t base_sizes[NSIZES] = {
	24, 200, 1000,              /* tcache sizes */
	3000,                       /* small, over tcache */
	32768 - 64, 32768 + 64,     /* around 32 KiB (the story's M_MMAP_THRESHOLD) */
	131072 - 64, 131072 + 64,   /* around 128 KiB (glibc's default threshold) */
	200000,
	300000, 1048576,            /* above the threshold: mmapped (until it rises) */
};

struct thread_rec {
	pid_t tid;
	uintptr_t arena;            /* 0 = main */
	uintptr_t heap;             /* heap_info of a thread arena, 0 for main */
	long alloc_count, free_count;
	void *live[MAXLIVE];
	size_t live_req[MAXLIVE];
	int nlive;
};

static struct thread_rec recs[NTHREADS + 1];   /* [NTHREADS] = main */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn;
static pthread_barrier_t all_attached;

static size_t chunk_hdr(const void *p)
{
	/* Through the opaque helper: gcc must not reason about bytes before a malloc'd object. */
	return ((const size_t *)wl_opaque_ptr((void *)p))[-1];
}

static size_t chunk_size(const void *p)
{
	return chunk_hdr(p) & ~(size_t)7;
}

static int chunk_mmapped(const void *p)
{
	return (chunk_hdr(p) & 2) != 0;
}

/* The arena a block belongs to (0 = main arena), from its chunk header. */
static uintptr_t arena_of(const void *p)
{
	if (chunk_hdr(p) & 4)
		return *(const uintptr_t *)((uintptr_t)p & ~(HEAP_MAX - 1));
	return 0;
}

static void keep(struct thread_rec *t, void *p, size_t req)
{
	t->live[t->nlive] = p;
	t->live_req[t->nlive++] = req;
}

static void drop(struct thread_rec *t, void *p)
{
	for (int i = 0; i < t->nlive; i++)
		if (t->live[i] == p) {
			t->live[i] = t->live[--t->nlive];
			t->live_req[i] = t->live_req[t->nlive];
			return;
		}
}

static void *tracked_malloc(struct thread_rec *t, size_t n)
{
	void *p = malloc(wl_opaque_size(n));

	wl_sink(p);
	if (p) {
		t->alloc_count++;
		keep(t, p, n);
	}
	return p;
}

static void tracked_free(struct thread_rec *t, void *p)
{
	drop(t, p);
	free(wl_opaque_ptr(p));
	t->free_count++;
}

WL_SCENARIO void scn_arena_worker(int i)
{
	struct thread_rec *t = &recs[i];
	void *round[NSIZES], *p;

	t->tid = gettid();
	/* Arenas one after the other: malloc_info's heap order then follows the worker index. */
	pthread_mutex_lock(&turn_lock);
	while (turn != i)
		pthread_cond_wait(&turn_cv, &turn_lock);
	pthread_mutex_unlock(&turn_lock);
	p = tracked_malloc(t, 64);
	t->arena = arena_of(p);
	t->heap = t->arena ? ((uintptr_t)p & ~(HEAP_MAX - 1)) : 0;
	pthread_mutex_lock(&turn_lock);
	turn++;
	pthread_cond_broadcast(&turn_cv);
	pthread_mutex_unlock(&turn_lock);
	/* No worker exits (which frees its arena for reuse) before all have one. */
	pthread_barrier_wait(&all_attached);

	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < NSIZES; k++) {
			size_t n = base_sizes[k];

			if (n >= 3000)
				n += 4096 * (size_t)i;   /* different heap sizes per worker */
			round[k] = tracked_malloc(t, n);
		}
		for (int k = 0; k < NSIZES; k++)
			if ((k + r) % 2)
				tracked_free(t, round[k]);
	}

	p = calloc(wl_opaque_size(10), wl_opaque_size(100 + (size_t)i));
	wl_sink(p);
	t->alloc_count++;
	keep(t, p, 10 * (100 + (size_t)i));

	p = tracked_malloc(t, 5000);
	drop(t, p);
	p = realloc(wl_opaque_ptr(p), wl_opaque_size(20000 + (size_t)i));
	wl_sink(p);
	t->alloc_count++;
	t->free_count++;
	keep(t, p, 20000 + (size_t)i);

	p = aligned_alloc(wl_opaque_size(4096), wl_opaque_size(4096 + 16 * (size_t)i));
	wl_sink(p);
	t->alloc_count++;
	keep(t, p, 4096 + 16 * (size_t)i);
	if (posix_memalign(&p, wl_opaque_size(64), wl_opaque_size(777)) == 0) {
		wl_sink(p);
		t->alloc_count++;
		keep(t, p, 777);
	}
	p = memalign(wl_opaque_size(256), wl_opaque_size(3000));
	wl_sink(p);
	t->alloc_count++;
	keep(t, p, 3000);
	tracked_free(t, p);
}

static void *worker(void *arg)
{
	scn_arena_worker((int)(uintptr_t)arg);
	return NULL;
}

WL_SCENARIO void scn_arena_main(struct thread_rec *m)
{
	void *p;

	tracked_malloc(m, 1500);
	tracked_malloc(m, 70000);
	tracked_malloc(m, 2UL << 20);
	p = tracked_malloc(m, 5000);
	tracked_free(m, p);
}

/* ---- output, all into static buffers (no allocation after the final point) ---- */

static char out[1 << 17];
static size_t outlen;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out + outlen, sizeof(out) - outlen, fmt, ap);
	va_end(ap);
	if (n > 0)
		outlen += (size_t)n < sizeof(out) - outlen ? (size_t)n : sizeof(out) - outlen - 1;
}

static void put_addr(const char *key, uintptr_t a)
{
	if (a)
		put("\"%s\": \"0x%lx\"", key, (unsigned long)a);
	else
		put("\"%s\": \"main\"", key);
}

/* Value of attribute `attr` in the first `<tag ...type="type"` element within [s, end). */
static long xml_attr(const char *s, const char *end, const char *elem, const char *attr)
{
	char pat[64], apat[32];
	const char *p, *q;

	snprintf(pat, sizeof(pat), "%s", elem);
	snprintf(apat, sizeof(apat), " %s=\"", attr);
	p = strstr(s, pat);
	if (!p || p >= end)
		return -1;
	q = strstr(p, apat);
	if (!q || q >= end)
		return -1;
	return strtol(q + strlen(apat), NULL, 10);
}

static char xml[1 << 16];

int main(int argc, char **argv)
{
	struct thread_rec *m = &recs[NTHREADS];
	static char fbuf[1 << 16];
	pthread_t th[NTHREADS];
	struct mallinfo2 mi;
	long sys[NTHREADS + 1], fast[NTHREADS + 1], rest[NTHREADS + 1], rest_count[NTHREADS + 1];
	long subheaps[NTHREADS + 1], in_use[NTHREADS + 1], in_use_sum = 0;
	size_t own[NTHREADS + 1] = { 0 }, mm_count = 0, mm_bytes = 0;
	long mmap_count, mmap_size;
	const char *why = "";
	ssize_t xlen;
	FILE *f;
	int fd, nheaps = 0;

	wl_maybe_wait(argc, argv);

	m->tid = gettid();
	scn_arena_main(m);
	pthread_barrier_init(&all_attached, NULL, NTHREADS);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&all_attached);

	/* malloc_info writes through stdio: a FILE made now (its 480-byte struct is the last malloc)
	 * over a memfd, with a static buffer so that writing allocates nothing. */
	fd = memfd_create("wl_arenas", 0);
	f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f)
		return 2;
	setvbuf(f, fbuf, _IOFBF, sizeof(fbuf));

	/* ---- final point: nothing is allocated or freed from here on ---- */
	malloc_info(0, f);
	mi = mallinfo2();
	fflush(f);
	xlen = pread(fd, xml, sizeof(xml) - 1, 0);
	if (xlen <= 0)
		return 3;
	xml[xlen] = '\0';

	/* Per heap figures, nr order. */
	for (const char *h = strstr(xml, "<heap nr="); h && nheaps <= NTHREADS; h = strstr(h + 1, "<heap nr=")) {
		const char *end = strstr(h, "</heap>");

		if (!end)
			break;
		fast[nheaps] = xml_attr(h, end, "<total type=\"fast\"", "size");
		rest[nheaps] = xml_attr(h, end, "<total type=\"rest\"", "size");
		rest_count[nheaps] = xml_attr(h, end, "<total type=\"rest\"", "count");
		sys[nheaps] = xml_attr(h, end, "<system type=\"current\"", "size");
		subheaps[nheaps] = xml_attr(h, end, "<aspace type=\"subheaps\"", "size");
		/* "rest" adds the raw size word of every binned chunk, PREV_INUSE (1) included. */
		in_use[nheaps] = sys[nheaps] - fast[nheaps] - rest[nheaps] + (rest_count[nheaps] - 1);
		in_use_sum += in_use[nheaps];
		nheaps++;
	}
	{
		/* The totals after the last heap. */
		const char *tail = strstr(xml, "<total type=\"mmap\"");

		mmap_count = tail ? xml_attr(tail, tail + 200, "<total type=\"mmap\"", "count") : -1;
		mmap_size = tail ? xml_attr(tail, tail + 200, "<total type=\"mmap\"", "size") : -1;
	}

	/* Own live blocks by where they are: heap nr 0 main, nr k worker NTHREADS - k, or mmapped. */
	for (int i = 0; i <= NTHREADS; i++) {
		struct thread_rec *t = &recs[i];

		for (int k = 0; k < t->nlive; k++) {
			void *p = t->live[k];
			uintptr_t a = arena_of(p);
			int nr = -1;

			if (chunk_mmapped(p)) {
				mm_count++;
				mm_bytes += chunk_size(p);
				continue;
			}
			if (!a)
				nr = 0;
			for (int w = 0; w < NTHREADS; w++)
				if (a && recs[w].arena == a)
					nr = NTHREADS - w;
			if (nr >= 0)
				own[nr] += chunk_size(p);
		}
	}

	/* Self check of the mapping and of the formula with the workload's own blocks. */
	if (nheaps != NTHREADS + 1)
		why = "malloc_info does not list 1 + NTHREADS heaps";
	for (int w = 0; !*why && w < NTHREADS; w++) {
		int nr = NTHREADS - w;
		size_t hsize = recs[w].heap ? ((const size_t *)recs[w].heap)[2] : 0;   /* heap_info.size */

		if (!recs[w].arena)
			why = "a worker got the main arena";
		else if (subheaps[nr] != 1)
			why = "an arena has more than one heap";
		else if ((long)hsize != sys[nr])
			why = "heap nr order does not follow arena creation (heap_info.size != system)";
		else if ((rest[nr] - (rest_count[nr] - 1)) % 16)
			why = "a binned chunk's size word has flags other than PREV_INUSE";
		else if (in_use[nr] - (long)own[nr] != THREAD_ARENA_HEADER)
			why = "thread arena: in_use != own chunk bytes + 2256";
		for (int v = 0; !*why && v < w; v++)
			if (recs[v].arena == recs[w].arena)
				why = "two workers share an arena";
	}
	if (!*why && (size_t)mi.hblkhd != mm_bytes)
		why = "hblkhd != own mmapped chunk bytes";
	if (!*why && (long)mi.hblkhd != mmap_size)
		why = "hblkhd != malloc_info mmap size";
	if (!*why && in_use_sum != (long)mi.uordblks)
		why = "sum of per-heap in_use != mallinfo2 uordblks";
	if (!*why && in_use[0] - TCACHE_STRUCT_CHUNK - (long)own[0] != GLIBC_OWN_MAIN)
		why = "main arena: in_use - 656 - own != 4 DTVs (288) + FILE (480)";

	put("{\"wl_arenas\": 1, \"pid\": %d, \"threads\": [", (int)getpid());
	for (int i = 0; i <= NTHREADS; i++) {
		struct thread_rec *t = &recs[i];
		size_t lb = 0, lcb = 0, mc = 0, mcb = 0;

		for (int k = 0; k < t->nlive; k++) {
			lb += t->live_req[k];
			lcb += chunk_size(t->live[k]);
			if (chunk_mmapped(t->live[k])) {
				mc++;
				mcb += chunk_size(t->live[k]);
			}
		}
		put("%s{\"tid\": %d, \"index\": %d, ", i ? ", " : "", (int)t->tid, i == NTHREADS ? -1 : i);
		put_addr("arena", t->arena);
		put(", ");
		put_addr("heap", t->heap);
		put(", \"heap_size\": %zu, \"alloc_count\": %ld, \"free_count\": %ld, \"live_count\": %d, "
		    "\"live_bytes\": %zu, \"live_chunk_bytes\": %zu, \"mmapped_live_count\": %zu, "
		    "\"mmapped_live_chunk_bytes\": %zu}",
		    t->heap ? ((const size_t *)t->heap)[2] : 0, t->alloc_count, t->free_count, t->nlive,
		    lb, lcb, mc, mcb);
	}
	put("], \"heaps\": [");
	for (int nr = 0; nr < nheaps; nr++) {
		put("%s{\"nr\": %d, ", nr ? ", " : "", nr);
		put_addr("arena", nr == 0 ? 0 : recs[NTHREADS - nr].arena);
		put(", \"system\": %ld, \"fast\": %ld, \"rest\": %ld, \"rest_count\": %ld, \"in_use\": %ld, "
		    "\"subheaps\": %ld, \"own_chunk_bytes\": %zu}", sys[nr], fast[nr], rest[nr], rest_count[nr],
		    in_use[nr], subheaps[nr], own[nr]);
	}
	put("], \"mmapped\": {\"count\": %ld, \"size\": %ld, \"own_count\": %zu, \"own_chunk_bytes\": %zu}",
	    mmap_count, mmap_size, mm_count, mm_bytes);
	put(", \"mallinfo2\": {\"arena\": %zu, \"uordblks\": %zu, \"fordblks\": %zu, \"hblks\": %zu, "
	    "\"hblkhd\": %zu}", mi.arena, mi.uordblks, mi.fordblks, mi.hblks, mi.hblkhd);
	put(", \"formula\": {\"tcache_struct_chunk\": %d, \"thread_arena_header\": %d}",
	    TCACHE_STRUCT_CHUNK, THREAD_ARENA_HEADER);
	put(", \"self_check\": {\"ok\": %s, \"why\": \"%s\"}", *why ? "false" : "true", why);
	put(", \"malloc_info\": \"");
	for (ssize_t k = 0; k < xlen; k++) {
		if (xml[k] == '"' || xml[k] == '\\')
			put("\\%c", xml[k]);
		else if (xml[k] == '\n')
			put("\\n");
		else
			put("%c", xml[k]);
	}
	put("\"}\n");
	wl_say(1, out);
	return 0;
}

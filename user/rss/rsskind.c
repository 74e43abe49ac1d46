// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rsskind.c — the memory kind of each stack's anonymous RSS pages (rsskind.h).
 *
 * One address per kernel stack: the kernel keeps each stack's last attributed fault address
 * and the user sp then (bpf/rss.bpf.h rss_owner_where), so a stack whose pages are all gone by
 * the end (a thread's stack after its exit) still has a kind. A call site faults into one kind
 * of memory in practice; when kernel stacks of several kinds merge into one output stack, that
 * is counted (pt_profile.rss_kind_mixed). The kinds, first match:
 *   [heap]                               malloc heap: main arena
 *   [stack]                              main thread stack
 *   a file path                          private copy of a file mapping
 *   other "[...]"                        other
 *   the sp's mapping, addr within [sp - 64 KiB, sp + 8 MiB)   thread stack
 *   a glibc heap_info at the 64 MiB boundary at or below addr, inside the run of read-write
 *   anonymous mappings holding addr (arenas.h pt_heap_info_ok; the kernel merges a heap's
 *   mapping with an adjacent one of the same flags)           malloc heap: thread arena
 *   a glibc mmapped chunk's header at a page start at or below addr (prev_size 0, IS_MMAPPED,
 *   page-multiple size reaching past addr, inside the mapping)  malloc heap: mmapped chunk
 *   a CPython pymalloc pool header at the 16 KiB pool start      CPython pymalloc arenas
 *   a V8 page header at a 256 KiB boundary at or below addr       V8 heap
 *   (both before the chunk scan: see in_pymalloc_pool and in_v8_chunk for why these tests)
 *   else                                 anonymous mmap
 *   no mapping at the end                unmapped by the end
 * The header scan reads the target's memory (/proc/PID/mem, 16 bytes a page, downwards from
 * addr until a header): at most SCAN_BUDGET reads in all, the stacks past it counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arenas/arenas.h"
#include "arenas/resident.h"
#include "maps/mapread.h"
#include "target/proc.h"
#include "target/procmaps.h"
#include "profile/profile.h"
#include "rss/rsskind.h"
#include "util/fmt.h"

#define KIND_PAGE 4096ULL
#define ARENA_HEAP (64ULL << 20)
#define SCAN_BUDGET (1ULL << 20)   /* 4 GiB of address space scanned for chunk headers */
#define CHUNK 256
#define READS 8192                 /* header reads one look keeps (direct-mapped by address) */
/* k->early's mark of a stack looked at while the target ran whose page was read and held no
 * heap header (plain anonymous memory then); never a kind (enum pt_mem_kind < PT_MK_COUNT). */
#define EARLY_PLAIN 0xff

/* A header read: the first 40 bytes at addr (a V8 page header; a chunk header is 16). */
struct pt_kind_read {
	uint64_t addr;
	uint32_t gen;
	bool ok;
	uint64_t w[5];
};

/*
 * A read of the target's memory that never makes a page resident: only where its pagemap says
 * the page is present (a look's pagemap is open: k->pm_open). Reading a page the target never
 * touched maps the zero page on most kernels, but some allocate a real page for a read fault
 * (measured on a 6.18 guest: 256 pages read through /proc/PID/mem, RssAnon +1 MiB), and the
 * scans below read downwards page by page: they grew the target's RSS, charged to "another
 * task" (the reader), and its own later writes to those pages no longer faulted, so they were
 * attributed to no stack. A page not present reads as unreadable (nothing there is a header:
 * it holds zeros or swapped-out data), counted in k->not_resident.
 */
static bool kind_pread(struct pt_rss_kinds *k, int fd, void *out, size_t len, uint64_t addr)
{
	if (k->pm_open && (!pt_page_resident(k->pm_fd, addr) ||
			   ((addr ^ (addr + len - 1)) >= KIND_PAGE && !pt_page_resident(k->pm_fd, addr + len - 1)))) {
		k->not_resident++;
		return false;
	}
	return pread(fd, out, len, (off_t)addr) == (ssize_t)len;
}

/* A look's pagemap, beside its /proc/PID/mem. */
static void pagemap_open(struct pt_rss_kinds *k, pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	k->pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	k->pm_open = k->pm_fd >= 0;
}

static void pagemap_close(struct pt_rss_kinds *k)
{
	if (k->pm_open)
		close(k->pm_fd);
	k->pm_open = false;
}

static const char *const names[PT_MK_COUNT] = {
	[PT_MK_UNKNOWN] = "not known",
	[PT_MK_HEAP_MAIN] = "malloc heap: main arena",
	[PT_MK_HEAP_ARENA] = "malloc heap: thread arena",
	[PT_MK_HEAP_MMAPPED] = "malloc heap: mmapped chunk",
	[PT_MK_MAIN_STACK] = "main thread stack",
	[PT_MK_THREAD_STACK] = "thread stack",
	[PT_MK_ANON] = "anonymous mmap",
	[PT_MK_FILE_PRIVATE] = "file mapping, private copy",
	[PT_MK_OTHER] = "other mapping",
	[PT_MK_GONE] = "unmapped by the end",
	[PT_MK_PYMALLOC] = "CPython pymalloc arenas",
	[PT_MK_V8] = "V8 heap",
};

static const char *const keys[PT_MK_COUNT] = {
	[PT_MK_UNKNOWN] = "not_known",
	[PT_MK_HEAP_MAIN] = "malloc_heap_main_arena",
	[PT_MK_HEAP_ARENA] = "malloc_heap_thread_arena",
	[PT_MK_HEAP_MMAPPED] = "malloc_heap_mmapped_chunk",
	[PT_MK_MAIN_STACK] = "main_thread_stack",
	[PT_MK_THREAD_STACK] = "thread_stack",
	[PT_MK_ANON] = "anonymous_mmap",
	[PT_MK_FILE_PRIVATE] = "file_private",
	[PT_MK_OTHER] = "other_mapping",
	[PT_MK_GONE] = "unmapped_by_end",
	[PT_MK_PYMALLOC] = "pymalloc_arenas",
	[PT_MK_V8] = "v8_heap",
};

const char *pt_mem_kind_name(enum pt_mem_kind k)
{
	return k < PT_MK_COUNT ? names[k] : "?";
}

const char *pt_mem_kind_key(enum pt_mem_kind k)
{
	return k < PT_MK_COUNT ? keys[k] : "unknown";
}

static int map_of(const struct pt_maps *m, uint64_t a)
{
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (a < m->m[mid].start)
			hi = mid;
		else if (a >= m->m[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static bool anon_rw(const struct pt_mapping *mp)
{
	return (!mp->path || !mp->path[0]) && mp->perms[0] == 'r' && mp->perms[1] == 'w';
}

/* The run of adjacent anonymous read-write mappings around mapping i (madvise splits a
 * mapping: MADV_HUGEPAGE on a chunk's aligned part; adjacent mmaps merge). */
static struct pt_mapping anon_run(const struct pt_maps *m, int i)
{
	struct pt_mapping run = m->m[i];
	int lo = i, hi = i;

	while (lo > 0 && m->m[lo - 1].end == m->m[lo].start && anon_rw(&m->m[lo - 1]))
		lo--;
	while (hi + 1 < m->n && m->m[hi + 1].start == m->m[hi].end && anon_rw(&m->m[hi + 1]))
		hi++;
	run.start = m->m[lo].start;
	run.end = m->m[hi].end;
	return run;
}

/*
 * CPython's pymalloc (3.10 to 3.13, 64-bit builds): objects up to 512 bytes live in 16 KiB
 * pools, POOL_SIZE-aligned inside 1 MiB arenas CPython mmaps itself, each pool starting with a
 * struct pool_header whose last four 32-bit words (at byte 32) are arenaindex, szidx,
 * nextoffset, maxnextoffset. With 16-byte size classes a pool of class szidx (< 32) holds blocks
 * of (szidx + 1) * 16 bytes; maxnextoffset is the pool size less one block, and nextoffset the
 * 48-byte header plus whole blocks. That identity on 12 bytes at the pool start is the test:
 * true of every pool CPython has initialised, and unrelated data would have to satisfy three
 * exact equations at once. Arenas are not told by their mappings: consecutive 1 MiB mmaps
 * merge into one. Reading CPython's own arena table (obmalloc's `arenas` array) was the other
 * way: in 3.11 it is a static of obmalloc.c, stripped from Debian's build, and only from 3.12
 * is it inside _PyRuntime, at offsets that change per version and that user/python/ does not
 * find (its offsets are the frame walk's); the header test (arenas/resident.c, which counts
 * the pools resident at each invocation's end with it) works the same on all three and costs
 * one 48-byte read per stack.
 */
static bool in_pymalloc_pool(struct pt_rss_kinds *k, int fd, uint64_t addr)
{
	uint64_t pool = addr & ~(uint64_t)(PT_PYPOOL_SIZE - 1);
	unsigned char hdr[PT_PYPOOL_HEADER];

	return kind_pread(k, fd, hdr, sizeof(hdr), pool) && pt_pymalloc_pool_ok(hdr, sizeof(hdr), pool);
}

/* A new look: its reads start afresh (the target ran since the last one). */
static void reads_begin(struct pt_rss_kinds *k)
{
	if (!k->reads)
		k->reads = calloc(READS, sizeof(*k->reads));
	if (++k->reads_gen == 0)
		k->reads_gen = 1;
}

/* The len (<= 40) bytes at the target's addr, read once per look: 0, or -1 when unreadable.
 * Only a read made counts against the budget (scan_reads); *capped when it is spent. */
static int header_read(struct pt_rss_kinds *k, int fd, uint64_t addr, void *out, size_t len,
		       bool *capped)
{
	struct pt_kind_read *r = k->reads ? &k->reads[(addr >> 12) % READS] : NULL;

	if (r && r->gen == k->reads_gen && r->addr == addr) {
		memcpy(out, r->w, len);
		return r->ok ? 0 : -1;
	}
	if (k->scan_reads >= SCAN_BUDGET) {
		*capped = true;
		return -1;
	}
	k->scan_reads++;
	if (!r)
		return kind_pread(k, fd, out, len, addr) ? 0 : -1;
	r->addr = addr;
	r->gen = k->reads_gen;
	r->ok = kind_pread(k, fd, r->w, sizeof(r->w), addr);
	memcpy(out, r->w, len);
	return r->ok ? 0 : -1;
}

/*
 * V8's heap (Node 20: V8 11.3, x64): Node builds V8 without pointer compression, so there is no
 * 4 GiB cage reservation to test against (the heap pointers in its objects are full 64-bit
 * addresses anywhere). Every heap chunk is 256 KiB-aligned and starts with its
 * BasicMemoryChunk header: size, flags, the Heap*, area_start, area_end. The test, at the
 * 256 KiB boundaries at or below addr (a large object's chunk spans several) within the run:
 * a size of at least 256 KiB in whole pages reaching past addr, area_start just past the
 * header (under 16 KiB in), area_end above it and inside the chunk, a non-null 8-aligned Heap*.
 */
#define V8_PAGE (256ULL << 10)
#define V8_STEPS 512   /* 128 MiB below addr at most: V8's largest regular chunk sizes */
static bool in_v8_chunk(struct pt_rss_kinds *k, int fd, const struct pt_mapping *run,
			uint64_t addr, bool *capped)
{
	uint64_t c = addr & ~(V8_PAGE - 1), w[5];
	int step;

	for (step = 0; step < V8_STEPS && c >= run->start; step++, c -= V8_PAGE) {
		if (header_read(k, fd, c, w, sizeof(w), capped))
			return false;
		if (w[0] >= V8_PAGE && !(w[0] & (KIND_PAGE - 1)) && c + w[0] > addr && w[3] > c &&
		    w[3] < c + 16384 && w[4] > w[3] && w[4] <= c + w[0] && w[2] && !(w[2] & 7))
			return true;
		if (c < V8_PAGE)
			break;
	}
	return false;
}

/* A glibc mmapped chunk's header (prev_size 0, IS_MMAPPED alone, a page-multiple size) at pg,
 * inside the run: its size, else 0. */
static uint64_t mmapped_header(const uint64_t hdr[2], uint64_t pg, const struct pt_mapping *run)
{
	uint64_t size = hdr[1] & ~7ULL;

	return hdr[0] == 0 && (hdr[1] & 7) == 2 && size && !(size & (KIND_PAGE - 1)) &&
	       size <= run->end - pg ? size : 0;
}

/* A glibc mmapped chunk holds addr, found from the run's start chunk by chunk: a chunk is its
 * own mmap, and the kernel merges adjacent ones into one mapping, so a run of them takes a few
 * reads. False also when the chain meets memory that is not a chunk before addr. */
static bool in_chunk_chain(struct pt_rss_kinds *k, int fd, const struct pt_mapping *run, uint64_t addr,
			   bool *capped)
{
	uint64_t pos = run->start, hdr[2], size;
	int n;

	for (n = 0; n < 4096 && pos <= addr; n++, pos += size) {
		if (header_read(k, fd, pos, hdr, sizeof(hdr), capped) || !(size = mmapped_header(hdr, pos, run)))
			return false;
		if (pos + size > addr)
			return true;
	}
	return false;
}

/* A glibc mmapped chunk holds addr: its header at a page start at or below it, page by page (a
 * 32 MiB chunk's 8,192 pages for an address at its end: in_chunk_chain first). */
static bool in_mmapped_chunk(struct pt_rss_kinds *k, int fd, const struct pt_mapping *run,
			     uint64_t addr, bool *capped)
{
	uint64_t pg = addr & ~(KIND_PAGE - 1), hdr[2], size;

	for (;; pg -= KIND_PAGE) {
		if (header_read(k, fd, pg, hdr, sizeof(hdr), capped))
			return false;
		size = mmapped_header(hdr, pg, run);
		if (size)
			return pg + size > addr;
		if (pg <= run->start)
			return false;
	}
}

/* addr (in mapping i of m, read-write anonymous) is in a glibc thread arena's heap: a
 * heap_info at the 64 MiB boundary at or below it, that boundary inside the run of read-write
 * anonymous mappings holding addr. Not the mapping's start: the kernel merges a heap's
 * read-write part with an adjacent mapping of the same flags (seen in a 7.3 arm64 guest: the
 * 2 MiB left of a 6 MiB mmap just below a heap, one line in the maps), and a full heap with
 * the next one above it. One read a look (header_read: the stacks faulting in one heap share
 * it). */
static bool arena_heap(struct pt_rss_kinds *k, int fd, const struct pt_maps *m, int i, uint64_t addr,
		       bool *capped)
{
	uint64_t h = addr & ~(ARENA_HEAP - 1), w[4];

	return anon_rw(&m->m[i]) && h >= anon_run(m, i).start && !header_read(k, fd, h, w, sizeof(w), capped) &&
	       pt_heap_info_ok(w, h);
}

/* ---- the maps kept while the target runs ------------------------------------------------ */

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* The keeps' verdicts on 64 MiB boundaries (kept_heaps: the boundary, its low bit set for a
 * heap): 1 a heap, 0 read and not one, -1 not decided. */
#define KEPT_HEAP 1ULL
static int kept_verdict(const struct pt_rss_kinds *k, uint64_t h)
{
	uint32_t i;

	for (i = 0; i < k->nkept_heaps; i++)
		if ((k->kept_heaps[i] & ~KEPT_HEAP) == h)
			return (int)(k->kept_heaps[i] & KEPT_HEAP);
	return -1;
}

static bool kept_heap_at(const struct pt_rss_kinds *k, uint64_t h)
{
	return kept_verdict(k, h) == 1;
}

/* Boundary h of mapping mp (being kept) is a heap's: decided by the last keep if mp is the same
 * mapping as then (its verdict stands: a heap is made by a new mapping), else read now (fd >= 0,
 * the page resident). 1, 0, or -1 when neither (unreadable: a heap the last keep found there
 * stays one, a target exiting reads as nothing). Each boundary is read once while its mapping
 * stays the same: a read of a page the target is giving back at that moment (a DONTNEED
 * between the pagemap test and the read) would fault it in again, a page of "another task". */
static int keep_verdict(struct pt_rss_kinds *k, int fd, const struct pt_mapping *mp, uint64_t h)
{
	int o = k->kept ? map_of(k->kept, h) : -1, v = kept_verdict(k, h);
	uint64_t w[4];

	if (v >= 0 && o >= 0 && k->kept->m[o].start == mp->start && k->kept->m[o].end == mp->end)
		return v;
	if (fd >= 0 && kind_pread(k, fd, w, sizeof(w), h))
		return pt_heap_info_ok(w, h);
	return v == 1 ? 1 : -1;
}

/* Take m (left empty) as the kept maps, and the thread arenas' heaps in them: every 64 MiB
 * boundary inside a read-write anonymous mapping tested for a heap_info (keep_verdict; fd: the
 * target's /proc/PID/mem, -1: not read). */
static void keep_maps(struct pt_rss_kinds *k, struct pt_maps *m, int fd)
{
	uint64_t *heaps = NULL, h;
	uint32_t n = 0, room = 0;
	int i;

	if (!k->kept && !(k->kept = calloc(1, sizeof(*k->kept))))
		return;
	for (i = 0; i < m->n; i++) {
		const struct pt_mapping *mp = &m->m[i];

		if (!anon_rw(mp))
			continue;
		for (h = (mp->start + ARENA_HEAP - 1) & ~(ARENA_HEAP - 1);
		     h < mp->end && (mp->end - mp->start <= PT_HEAP_SCAN_SPAN || h == mp->start); h += ARENA_HEAP) {
			int v = keep_verdict(k, fd, mp, h);

			if (v < 0)
				continue;
			if (n == room) {
				uint64_t *nh = realloc(heaps, (room = room ? 2 * room : 16) * sizeof(*nh));

				if (!nh) {
					free(heaps);
					return;
				}
				heaps = nh;
			}
			heaps[n++] = h | (v ? KEPT_HEAP : 0);
		}
	}
	pt_maps_free(k->kept);
	*k->kept = *m;
	memset(m, 0, sizeof(*m));
	free(k->kept_heaps);
	k->kept_heaps = heaps;
	k->nkept_heaps = n;
	k->kept_ns = mono_ns();
	k->kept_reads++;
}

void pt_rss_kinds_keep(struct pt_rss_kinds *k, pid_t pid, uint64_t gen, uint64_t now)
{
	struct pt_maps m = { 0 };
	int fd;

	if ((k->kept && gen == k->kept_gen) || now < k->kept_ns + PT_KIND_KEEP_NS)
		return;
	if (pt_maps_read(pid, &m) || !m.n) {
		pt_maps_free(&m);
		return;
	}
	fd = pt_proc_mem_open(pid);
	/* Only resident pages are read (kind_pread): an arena's first page read before the
	 * thread wrote it would become resident by our read, not by its fault. */
	pagemap_open(k, pid);
	if (!k->pm_open && fd >= 0) {
		close(fd);
		fd = -1;
	}
	keep_maps(k, &m, fd);
	k->kept_gen = gen;
	if (fd >= 0)
		close(fd);
	pagemap_close(k);
	pt_maps_free(&m);
}

/* A kind told against the kept maps, without reading the target (gone): a thread arena's heap
 * where the keep found one (its 64 MiB: the part not read-write then is reserved for it); an
 * address in none of the maps is not known (mapped after the last read, or unmapped before
 * it: "unmapped by the end" would be a guess). */
static enum pt_mem_kind kept_kind(const struct pt_rss_kinds *k, enum pt_mem_kind kind, uint64_t addr)
{
	if (kind == PT_MK_GONE)
		return PT_MK_UNKNOWN;
	return kind == PT_MK_ANON && kept_heap_at(k, addr & ~(ARENA_HEAP - 1)) ? PT_MK_HEAP_ARENA : kind;
}

enum pt_mem_kind pt_rss_kind_kept(struct pt_rss_kinds *k, uint64_t addr, uint64_t sp)
{
	bool capped = false;

	if (!k->kept || !k->kept->n)
		return PT_MK_UNKNOWN;
	return kept_kind(k, pt_mem_kind_of(k, k->kept, -1, addr, sp, &capped), addr);
}

enum pt_mem_kind pt_mem_kind_of(struct pt_rss_kinds *k, const struct pt_maps *m, int fd,
				uint64_t addr, uint64_t sp, bool *capped)
{
	int i = map_of(m, addr);
	const struct pt_mapping *mp;
	struct pt_mapping run;

	if (!addr)
		return PT_MK_UNKNOWN;
	if (i < 0)
		return PT_MK_GONE;
	mp = &m->m[i];
	if (mp->path && !strcmp(mp->path, "[heap]"))
		return PT_MK_HEAP_MAIN;
	if (mp->path && !strcmp(mp->path, "[stack]"))
		return PT_MK_MAIN_STACK;
	if (mp->path && mp->path[0] == '/')
		return PT_MK_FILE_PRIVATE;
	if (mp->path && mp->path[0])
		return PT_MK_OTHER;
	if (map_of(m, sp) == i && addr + (64 << 10) >= sp && addr < sp + (8ULL << 20))
		return PT_MK_THREAD_STACK;
	if (fd < 0)
		return PT_MK_ANON;
	if (arena_heap(k, fd, m, i, addr, capped))
		return PT_MK_HEAP_ARENA;
	if (in_pymalloc_pool(k, fd, addr))
		return PT_MK_PYMALLOC;
	run = anon_run(m, i);
	if (in_chunk_chain(k, fd, &run, addr, capped))
		return PT_MK_HEAP_MMAPPED;
	if (in_v8_chunk(k, fd, &run, addr, capped))
		return PT_MK_V8;
	if (in_mmapped_chunk(k, fd, &run, addr, capped))
		return PT_MK_HEAP_MMAPPED;
	return PT_MK_ANON;
}

void pt_rss_kinds_queue(struct pt_rss_kinds *k, uint32_t stack, uint64_t addr, uint64_t ts)
{
	if (k->nqueued >= sizeof(k->early_queued) / sizeof(k->early_queued[0])) {
		k->early_dropped++;
		return;
	}
	k->early_queued[k->nqueued][0] = stack;
	k->early_queued[k->nqueued][1] = addr;
	k->early_queued[k->nqueued++][2] = ts;
}

void pt_rss_kinds_early(struct pt_rss_kinds *k, pid_t pid, uint64_t now)
{
	struct pt_maps m = { 0 };
	uint32_t q, ripe = 0, keep = 0;
	uint64_t saved;
	int fd;

	/* Those settled: the queue is in event order, so a prefix. */
	while (ripe < k->nqueued && (!now || k->early_queued[ripe][2] + PT_KIND_SETTLE_NS <= now))
		ripe++;
	if (!ripe)
		return;
	fd = pt_proc_mem_open(pid);
	pagemap_open(k, pid);
	/* The looks while running have a read budget of their own: they must not spend the one
	 * the classification at the end needs (scan_reads is what the scanners count). */
	saved = k->scan_reads;
	k->scan_reads = k->early_reads;
	reads_begin(k);
	if (fd < 0 || pt_maps_read(pid, &m)) {
		k->early_dropped += ripe;
		goto out;
	}
	for (q = 0; q < ripe; q++) {
		uint32_t st = (uint32_t)k->early_queued[q][0];
		uint64_t a = k->early_queued[q][1];
		int i = map_of(&m, a);
		uint8_t kind = 0;
		bool capped = false;
		struct pt_mapping run;

		/* Only what is recognised is kept: a region already gone, or a header not
		 * written yet, says nothing against an earlier heap of the same stack. */
		if (i < 0 || !anon_rw(&m.m[i]))
			continue;
		/* A thread arena's heap is told at the end, by its heap_info: scanning it for
		 * chunk headers page by page (64 MiB) would find none. */
		if (arena_heap(k, fd, &m, i, a, &capped))
			continue;
		run = anon_run(&m, i);
		if (in_pymalloc_pool(k, fd, a))
			kind = PT_MK_PYMALLOC;
		else if (in_chunk_chain(k, fd, &run, a, &capped))
			kind = PT_MK_HEAP_MMAPPED;   /* freed before the end: usual for big blocks */
		else if (in_v8_chunk(k, fd, &run, a, &capped))
			kind = PT_MK_V8;
		else if (in_mmapped_chunk(k, fd, &run, a, &capped))
			kind = PT_MK_HEAP_MMAPPED;
		if (!kind) {
			uint64_t w[2];

			k->early_dropped += capped;   /* not looked at to the end: counted, not silent */
			/* Looked at to the end, its page read (the scans' last read, kept by
			 * header_read): plain anonymous memory, unless a heap was seen before, or
			 * the page starts with zeros (a header not written yet: the faulting thread
			 * can be held off the CPU past the settling time; told no more than a
			 * stack never looked at). */
			if (capped || header_read(k, fd, a & ~(KIND_PAGE - 1), w, sizeof(w), &capped) ||
			    !(w[0] | w[1]) || (st < k->nearly && k->early[st]))
				continue;
			kind = EARLY_PLAIN;
		}
		if (st >= k->nearly) {
			uint32_t n = st + 1024;
			uint8_t *e = realloc(k->early, n);

			if (!e) {
				k->early_dropped++;
				continue;
			}
			memset(e + k->nearly, 0, n - k->nearly);
			k->early = e;
			k->nearly = n;
		}
		k->early[st] = kind;
	}
	keep_maps(k, &m, fd);   /* the latest view of its mappings, should it die */
out:
	k->early_reads = k->scan_reads;
	k->scan_reads = saved;
	for (q = ripe; q < k->nqueued; q++, keep++)
		memcpy(k->early_queued[keep], k->early_queued[q], sizeof(k->early_queued[q]));
	k->nqueued = keep;
	if (fd >= 0)
		close(fd);
	pagemap_close(k);
	pt_maps_free(&m);
}

int pt_rss_kinds_capture(struct pt_rss_kinds *k, pid_t pid, int stats_fd, uint32_t nstacks)
{
	struct pt_stack_stats *st = NULL;
	struct pt_maps m = { 0 };
	const struct pt_maps *use = &m;
	uint32_t *kk = NULL, i, j;
	int err, fd = -1, got;

	if (k->read)
		return 0;
	k->end_ns = mono_ns();
	err = pt_maps_read(pid, &m);
	if ((err || !m.n) && k->kept && k->kept->n) {
		/* Exited (its mm is gone: attach mode): the maps kept while it ran, nothing read
		 * of its memory; what a header would tell, the looks while it ran told. */
		pt_maps_free(&m);
		use = k->kept;
		k->from_kept = true;
		err = 0;
	} else if (err) {
		return err;
	} else if (!m.n) {
		return -ESRCH;	/* exited before any maps were kept */
	}
	k->kind = calloc(nstacks ? nstacks : 1, 1);
	st = calloc(CHUNK, sizeof(*st));
	kk = calloc(CHUNK, sizeof(*kk));
	if (!k->kind || !st || !kk) {
		err = -ENOMEM;
		goto out;
	}
	k->n = nstacks;
	if (!k->from_kept) {
		fd = pt_proc_mem_open(pid);
		pagemap_open(k, pid);
	}
	reads_begin(k);
	for (i = 0; i < nstacks; i += CHUNK) {
		got = pt_map_read_range(stats_fd, i, nstacks - i < CHUNK ? nstacks - i : CHUNK, kk, st,
					sizeof(*st));
		if (got <= 0) {
			err = got < 0 ? got : -EIO;
			goto out;
		}
		for (j = 0; j < (uint32_t)got; j++) {
			bool capped = false;
			uint8_t e;

			if (st[j].rss_now <= 0 && st[j].rss_peak <= 0)
				continue;
			if (k->from_kept)
				k->kind[i + j] = pt_rss_kind_kept(k, st[j].rss_addr, st[j].rss_sp);
			else
				k->kind[i + j] = pt_mem_kind_of(k, use, fd, st[j].rss_addr, st[j].rss_sp, &capped);
			k->scan_capped += capped;
			e = i + j < k->nearly ? k->early[i + j] : 0;
			/* Unmapped by the end, or a runtime heap's pages reused as plain memory:
			 * the heap its first fault was in (kept maps: no chunk scan was made, so a
			 * glibc mmapped chunk too). */
			if (e && e != EARLY_PLAIN &&
			    (k->kind[i + j] == PT_MK_GONE || k->kind[i + j] == PT_MK_UNKNOWN ||
			     (k->kind[i + j] == PT_MK_ANON && (e != PT_MK_HEAP_MMAPPED || k->from_kept))))
				k->kind[i + j] = e;
			/* Kept maps say "anonymous" without reading anything: plain anonymous
			 * memory only if a look while it ran read the page and found no heap;
			 * never looked at (its fault's event skipped, or the target gone before
			 * the look), it is not known, not a guess. */
			else if (k->from_kept && k->kind[i + j] == PT_MK_ANON && e != EARLY_PLAIN) {
				k->kind[i + j] = PT_MK_UNKNOWN;
				k->kept_unlooked++;
			}
		}
	}
	k->read = true;
out:
	if (fd >= 0)
		close(fd);
	pagemap_close(k);
	free(st);
	free(kk);
	pt_maps_free(&m);
	return err;
}

enum pt_mem_kind pt_rss_kind_of_stack(const struct pt_rss_kinds *k, uint32_t idx)
{
	return k->read && idx < k->n && k->kind[idx] < PT_MK_COUNT ? (enum pt_mem_kind)k->kind[idx]
								   : PT_MK_UNKNOWN;
}

const char *pt_rss_kinds_source(const struct pt_rss_kinds *k)
{
	return !k->read ? "not_known" : k->from_kept ? "maps_kept_while_running" : "maps_at_end";
}

void pt_rss_kinds_free(struct pt_rss_kinds *k)
{
	pt_maps_free(k->kept);
	free(k->kept);
	free(k->kept_heaps);
	free(k->kind);
	free(k->early);
	free(k->reads);
	memset(k, 0, sizeof(*k));
}

/* ---- in the report ---------------------------------------------------------------------- */

static char frame_names[PT_MK_COUNT][64];

int pt_rss_kind_frames(struct pt_profile *q, uint32_t nstacks, uint32_t **pool)
{
	uint32_t fi[PT_MK_COUNT], i, j, used = 0, *out;
	size_t need = 0;

	for (i = 0; i < PT_MK_COUNT; i++)
		fi[i] = UINT32_MAX;
	for (i = 0; i < nstacks; i++)
		if (q->stacks[i].v[PT_RSS_PEAK_BYTES])
			need += q->stacks[i].nframes + 1;
	out = *pool = malloc((need ? need : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (i = 0; i < nstacks; i++) {
		struct pt_stack *st = &q->stacks[i];
		unsigned k = st->rss_kind < PT_MK_COUNT ? st->rss_kind : PT_MK_UNKNOWN;

		if (!st->v[PT_RSS_PEAK_BYTES])
			continue;
		if (fi[k] == UINT32_MAX) {
			struct pt_frame *fr = &q->frames[q->nframes];

			snprintf(frame_names[k], sizeof(frame_names[k]), "[kind: %s]", names[k]);
			memset(fr, 0, sizeof(*fr));
			fr->func = frame_names[k];
			fr->module = (char *)"";
			fr->kind = PT_FK_OTHER;
			fi[k] = q->nframes++;
		}
		for (j = 0; j < st->nframes; j++)
			out[used + j] = st->frames[j];
		out[used + st->nframes] = fi[k];
		st->frames = &out[used];
		used += ++st->nframes;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * resident.c — malloc heap and pymalloc arenas resident in the target (resident.h).
 *
 * pymalloc's pool_header (CPython 3.10-3.13, 64-bit; Objects/obmalloc.c):
 *   0  union { block *_padding; uint count; } ref
 *   8  block *freeblock        16 pool_header *nextpool     24 pool_header *prevpool
 *   32 uint arenaindex         36 uint szidx                40 uint nextoffset
 *   44 uint maxnextoffset
 * init_pool() sets maxnextoffset = POOL_SIZE - size and nextoffset = 48 + 2 * size for the size
 * class (szidx + 1) * 16, and nextoffset only grows by size: a pair no other data is likely to
 * hold at a 16 KiB boundary. Only pages pagemap says are present are read (reading a page that
 * is not would make the kernel map one in the target).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arenas/arenas.h"
#include "arenas/resident.h"
#include "target/proc.h"

#define RPAGE 4096ull
#define PM_PRESENT PT_PAGEMAP_PRESENT
#define PM_BATCH 512

static uint32_t u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

bool pt_pymalloc_pool_ok(const unsigned char *hdr, size_t len, uint64_t pool)
{
	uint32_t count, szidx, next, maxnext, size;
	uint64_t freeblock;

	if (len < PT_PYPOOL_HEADER || pool & (PT_PYPOOL_SIZE - 1))
		return false;
	count = u32(hdr);
	freeblock = u64(hdr + 8);
	szidx = u32(hdr + 36);
	next = u32(hdr + 40);
	maxnext = u32(hdr + 44);
	if (szidx >= 32)
		return false;
	size = (szidx + 1) * 16;
	if (maxnext != PT_PYPOOL_SIZE - size || next < PT_PYPOOL_HEADER + size ||
	    next > maxnext + size || (next - PT_PYPOOL_HEADER) % size)
		return false;
	if (count > (PT_PYPOOL_SIZE - PT_PYPOOL_HEADER) / size)
		return false;
	if (freeblock && (freeblock < pool + PT_PYPOOL_HEADER || freeblock >= pool + PT_PYPOOL_SIZE ||
			  (freeblock - pool - PT_PYPOOL_HEADER) % size))
		return false;
	return true;
}

/* A thread arena's heap: 64 MiB-aligned, its first word inside the first page of a heap
 * candidate (the arena's malloc_state sits just after the first heap's heap_info). */
static bool thread_heap(const struct pt_smap *m, const uint64_t *w, int nm, int i)
{
	if (!pt_smap_heap_candidate(&m[i]) || !w[i])
		return false;
	for (int j = 0; j < nm; j++)
		if (pt_smap_heap_candidate(&m[j]) && w[i] >= m[j].start && w[i] < m[j].start + RPAGE)
			return true;
	return false;
}

/* The pools of one anonymous mapping: pagemap in batches, a header read per present pool start. */
static void scan_pools(struct pt_mem_resident *r, int pm, int mem, const struct pt_smap *m,
		       uint64_t *budget)
{
	uint64_t pm_buf[PM_BATCH], a, pool, first = m->start;
	unsigned char hdr[PT_PYPOOL_HEADER];
	bool in_pool = false;

	for (a = first; a < m->end;) {
		uint64_t n = (m->end - a) / RPAGE, k;
		ssize_t got;

		if (n > PM_BATCH)
			n = PM_BATCH;
		if (*budget < n) {
			/* What is left of this mapping is not looked at: counted, not guessed (its
			 * resident share is not known, so the mapping's whole Rss is an upper bound). */
			r->unscanned_bytes += (int64_t)m->rss;
			return;
		}
		*budget -= n;
		got = pread(pm, pm_buf, n * 8, (off_t)(a / RPAGE * 8));
		if (got < (ssize_t)(n * 8))
			return;
		for (k = 0; k < n; k++, a += RPAGE) {
			pool = a & ~(uint64_t)(PT_PYPOOL_SIZE - 1);
			if (a == pool)
				in_pool = (pm_buf[k] & PM_PRESENT) && pool + PT_PYPOOL_SIZE <= m->end &&
					  pread(mem, hdr, sizeof(hdr), (off_t)pool) == (ssize_t)sizeof(hdr) &&
					  pt_pymalloc_pool_ok(hdr, sizeof(hdr), pool) && ++r->pymalloc_pools;
			if (in_pool && (pm_buf[k] & PM_PRESENT))
				r->pymalloc_bytes += RPAGE;
		}
	}
}

int pt_mem_resident_read(pid_t pid, bool pools, struct pt_mem_resident *out)
{
	struct pt_smap *m = NULL;
	uint64_t *w = NULL, budget = PT_RESIDENT_SCAN_PAGES;
	char path[64];
	int nm, i, pm, mem;

	memset(out, 0, sizeof(*out));
	nm = pt_smaps_read(pid, &m, &w);
	if (nm <= 0)
		return nm ? nm : -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	mem = pt_proc_mem_open(pid);
	for (i = 0; i < nm; i++) {
		if (m[i].heap)
			out->heap_main_bytes += (int64_t)m[i].rss;
		else if (thread_heap(m, w, nm, i))
			out->heap_thread_bytes += (int64_t)m[i].rss;
		else if (pools && m[i].anon && m[i].rw && m[i].rss && pm >= 0 && mem >= 0)
			scan_pools(out, pm, mem, &m[i], &budget);
	}
	if (pm >= 0)
		close(pm);
	if (mem >= 0)
		close(mem);
	free(m);
	free(w);
	out->read = true;
	return 0;
}

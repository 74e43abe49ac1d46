/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A glibc thread arena with two heaps in this very process, its first heap merged by the kernel
 * with a mapping just below it: one line of the maps holds both (the kernel merges adjacent
 * anonymous mappings of the same flags; seen in a 7.3 arm64 guest with a plain mmap, made here
 * with the heap's own flags, PROT_NONE and MAP_NORESERVE made read-write, which merge on every
 * kernel). Shared by test_rsskind.c and test_arenas.c. */
#ifndef PT_TEST_MERGEDHEAP_H
#define PT_TEST_MERGEDHEAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define MH_HEAP (64ULL << 20)
#define MH_BELOW (2ULL << 20)

struct merged_heap {
	uint64_t small;    /* a small block in the first heap */
	uint64_t last;     /* a block in the second heap */
	uint64_t h1, h2;   /* the two heaps' 64 MiB boundaries */
	uint64_t below;    /* the mapping merged below h1: [below, h1) */
	uint64_t arena;    /* the arena's address (h1's heap_info.ar_ptr) */
	bool merged;       /* the maps show [below, h1 + ...) as one mapping */
};

/* 70 MiB in 100 KiB blocks (below the mmap threshold: from the arena), kept. */
static void *mh_thread(void *arg)
{
	struct merged_heap *mh = arg;
	char *p = malloc(100);

	p[0] = 1;
	mh->small = (uint64_t)(uintptr_t)p;
	for (int i = 0; i < 700; i++) {
		p = malloc(100 << 10);
		p[0] = 1;
		mh->last = (uint64_t)(uintptr_t)p;
	}
	return NULL;
}

/* The mapping of /proc/self/maps holding a: its start, 0 if none. */
static uint64_t mh_map_start(uint64_t a)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long s, e;
	char line[512];
	uint64_t r = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && a >= s && a < e)
			r = s;
	if (f)
		fclose(f);
	return r;
}

/* 0, or -1 when the setup could not be made (the caller fails a check). The blocks stay. */
static int merged_heap_make(struct merged_heap *mh)
{
	pthread_t t;
	void *q;

	if (pthread_create(&t, NULL, mh_thread, mh) || pthread_join(t, NULL))
		return -1;
	mh->h1 = mh->small & ~(MH_HEAP - 1);
	mh->h2 = mh->last & ~(MH_HEAP - 1);
	mh->arena = *(uint64_t *)(uintptr_t)mh->h1;
	mh->below = mh->h1 - MH_BELOW;
	q = mmap((void *)(uintptr_t)mh->below, MH_BELOW, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (q != (void *)(uintptr_t)mh->below || mprotect(q, MH_BELOW, PROT_READ | PROT_WRITE))
		return -1;
	mh->merged = mh_map_start(mh->h1) == mh->below;
	return mh->h2 != mh->h1 ? 0 : -1;
}

#endif

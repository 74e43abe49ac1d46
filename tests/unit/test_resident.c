// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/arenas/resident.c: the pymalloc pool_header check, and the whole reading
 * on this process (a hand-made pool in its own memory, its malloc heap). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "arenas/resident.h"

#define POOL 0x7f0000004000ull

/* A pool_header as CPython's init_pool() leaves it after the first block of class szidx. */
static void make_header(unsigned char *h, uint64_t pool, uint32_t szidx)
{
	uint32_t size = (szidx + 1) * 16, count = 1, next = 48 + 2 * size, maxnext = 16384 - size;
	uint64_t freeblock = pool + 48 + size, link = pool;

	memset(h, 0, 48);
	memcpy(h, &count, 4);
	memcpy(h + 8, &freeblock, 8);
	memcpy(h + 16, &link, 8);
	memcpy(h + 24, &link, 8);
	memcpy(h + 36, &szidx, 4);
	memcpy(h + 40, &next, 4);
	memcpy(h + 44, &maxnext, 4);
}

static void set32(unsigned char *h, int off, uint32_t v)
{
	memcpy(h + off, &v, 4);
}

static void test_pool_ok(void)
{
	unsigned char h[48];
	uint64_t v;

	make_header(h, POOL, 3);
	CHECK(pt_pymalloc_pool_ok(h, 48, POOL), "a fresh pool of the 64-byte class");
	make_header(h, POOL, 31);
	CHECK(pt_pymalloc_pool_ok(h, 48, POOL), "a fresh pool of the 512-byte class");
	make_header(h, POOL, 3);
	CHECK(!pt_pymalloc_pool_ok(h, 47, POOL), "too short");
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL + 4096), "not at a 16 KiB boundary");
	set32(h, 36, 32);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "szidx 32: no such class");
	make_header(h, POOL, 3);
	set32(h, 44, 16384 - 48);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "maxnextoffset of another class");
	make_header(h, POOL, 3);
	set32(h, 40, 48 + 2 * 64 + 8);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "nextoffset not on a block boundary");
	make_header(h, POOL, 3);
	set32(h, 40, 16384 + 64);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "nextoffset past the pool");
	make_header(h, POOL, 3);
	set32(h, 40, 48 + 255 * 64);
	CHECK(pt_pymalloc_pool_ok(h, 48, POOL), "nextoffset past maxnextoffset by under a block: a full pool");
	make_header(h, POOL, 3);
	set32(h, 0, 1000);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "more blocks counted than fit");
	make_header(h, POOL, 3);
	v = POOL + 16384;
	memcpy(h + 8, &v, 8);
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "freeblock in the next pool");
	v = 0;
	memcpy(h + 8, &v, 8);
	CHECK(pt_pymalloc_pool_ok(h, 48, POOL), "freeblock NULL: a full pool");
	memset(h, 0, sizeof(h));
	CHECK(!pt_pymalloc_pool_ok(h, 48, POOL), "zeros are no pool");
}

/* Our own memory: one hand-made pool with two resident pages, a page of a pool without a header,
 * and a malloc'd block in [heap]. */
static void test_own_process(void)
{
	size_t len = 1 << 20;
	unsigned char *m = mmap(NULL, len + 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	unsigned char *pool = (unsigned char *)(((uintptr_t)m + 16383) & ~(uintptr_t)16383);
	struct pt_mem_resident r;
	char *small = malloc(1000);
	int err;

	CHECK(m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	madvise(m, len + 16384, MADV_NOHUGEPAGE);
	make_header(pool, (uint64_t)(uintptr_t)pool, 3);
	pool[8192] = 1;            /* the pool's third page */
	pool[16384 + 4096] = 1;    /* a page of the next 16 KiB, no header there */
	memset(small, 1, 1000);
	err = pt_mem_resident_read(getpid(), true, &r);
	CHECK_EQ_U64(err, 0, "pt_mem_resident_read on ourselves");
	CHECK(r.read, "read");
	CHECK_EQ_U64(r.pymalloc_pools, 1, "one pool recognised");
	CHECK_EQ_U64(r.pymalloc_bytes, 2 * 4096, "its two resident pages, not the headerless one");
	CHECK(r.heap_main_bytes >= 4096, "the main arena's [heap] is resident");
	CHECK_EQ_U64(r.unscanned_bytes, 0, "nothing past the budget");
	CHECK(pt_mem_resident_read(-1, true, &r) < 0 && !r.read, "no such process: an error, read false");
	/* Not a CPython target: no pool scan, the heap still read. */
	err = pt_mem_resident_read(getpid(), false, &r);
	CHECK(!err && r.read && r.pymalloc_pools == 0 && r.pymalloc_bytes == 0 && r.heap_main_bytes >= 4096,
	      "pools false: no pool counted, the heap read");
	free(small);
	munmap(m, len + 16384);
}

int main(void)
{
	test_pool_ok();
	test_own_process();
	return CHECK_DONE();
}

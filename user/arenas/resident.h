/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * resident.h — resident memory by allocator, from the target's own mappings alone (no kernel
 * tables, so --light has it too), read in user space after an invocation's end:
 *   malloc heap      glibc's arenas: the main arena's "[heap]" and every thread arena's heap (a
 *                    64 MiB-aligned anonymous mapping whose first word, heap_info.ar_ptr, points
 *                    into the first page of an arena's first heap); smaps Rss.
 *   pymalloc arenas  CPython's object allocator: 1 MiB anonymous mappings cut into 16 KiB pools,
 *                    each starting with a pool_header (obmalloc.c) whose size class fixes two of
 *                    its fields; the resident pages (/proc/PID/pagemap) of every pool whose
 *                    header checks out. Adjacent arenas merge into one mapping in smaps, so
 *                    pools, not mappings, are what is recognised.
 * Bounded: PT_RESIDENT_SCAN_PAGES pages of anonymous mappings looked at in all; what lies past
 * that is counted (unscanned_bytes), not guessed.
 */
#ifndef PEAKTRACE_RESIDENT_H
#define PEAKTRACE_RESIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PT_RESIDENT_SCAN_PAGES (1u << 20)   /* 4 GiB of anonymous mappings */
#define PT_PYPOOL_SIZE 16384u               /* CPython 3.10+ on 64-bit: POOL_BITS 14 */
#define PT_PYPOOL_HEADER 48u                /* sizeof(struct pool_header), 16-aligned */

struct pt_mem_resident {
	bool read;                  /* false: not measured (the target had exited, smaps unreadable) */
	int64_t heap_main_bytes;    /* malloc heap: the main arena ([heap]) */
	int64_t heap_thread_bytes;  /* malloc heap: thread arenas' heaps */
	int64_t pymalloc_bytes;     /* pymalloc arenas: resident bytes of its pools */
	uint32_t pymalloc_pools;    /* pools recognised (resident header page) */
	int64_t unscanned_bytes;    /* resident anonymous bytes past the scan budget */
};

/* Read /proc/PID/smaps, pagemap and the pool headers (/proc/PID/mem). 0 or -errno (out->read
 * false). Never stops the target; the kernel takes its mmap lock for reading while it walks.
 * pools false: a target without CPython, whose anonymous memory is not scanned for pymalloc
 * pools (a Node runtime's ~1,700 header reads at every invocation's end); pymalloc 0. */
int pt_mem_resident_read(pid_t pid, bool pools, struct pt_mem_resident *out);

/* Pure, unit tested: is hdr (len bytes at pool address pool) a pymalloc pool_header in use?
 * szidx < 32, maxnextoffset == POOL_SIZE - size, nextoffset a block boundary in the pool,
 * freeblock NULL or a block of this pool, count no more blocks than fit. */
bool pt_pymalloc_pool_ok(const unsigned char *hdr, size_t len, uint64_t pool);

#endif

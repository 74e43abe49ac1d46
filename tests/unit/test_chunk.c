// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_chunk: glibc chunk-header decoding (bpf/chunk.h) against the real glibc of this machine:
 * the header a real malloc wrote, decoded by the same code the BPF program runs. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "bpf/chunk.h"

/* The word glibc keeps before the pointer (read through a volatile so the compiler does not
 * object to reading outside the block it knows about). */
static uint64_t header(void *p)
{
	char *volatile q = p;
	uint64_t h;

	memcpy(&h, q - 8, sizeof(h));
	return h;
}

static void *thread_alloc(void *arg)
{
	void **out = arg;

	out[0] = malloc(1000);
	out[1] = malloc(24 << 10);
	return NULL;
}

int main(void)
{
	void *small = malloc(100), *mid = malloc(100 << 10), *big = malloc(1 << 20);
	void *zero = malloc(0), *cal = calloc(10, 1000), *al = aligned_alloc(4096, 5000);
	void *th[2];
	pthread_t t;

	CHECK_EQ_U64(pt_chunk_kind(header(small), 100), PT_CHUNK_MAIN, "malloc(100) is in the main arena");
	CHECK_EQ_U64(pt_chunk_kind(header(mid), 100 << 10), PT_CHUNK_MAIN, "malloc(100 KiB) is below the mmap threshold");
	CHECK_EQ_U64(pt_chunk_kind(header(big), 1 << 20), PT_CHUNK_MMAPPED, "malloc(1 MiB) is mmapped");
	CHECK_EQ_U64(pt_chunk_kind(header(zero), 0), PT_CHUNK_MAIN, "malloc(0) is a real main-arena chunk");
	CHECK_EQ_U64(pt_chunk_kind(header(cal), 10000), PT_CHUNK_MAIN, "calloc(10, 1000) is in the main arena");
	CHECK_EQ_U64(pt_chunk_kind(header(al), 5000), PT_CHUNK_MAIN, "aligned_alloc(4096, 5000) is in the main arena");
	CHECK_EQ_U64(pt_chunk_usable(header(small)), malloc_usable_size(small), "usable size of malloc(100) == malloc_usable_size");
	CHECK_EQ_U64(pt_chunk_usable(header(big)), malloc_usable_size(big), "usable size of an mmapped chunk == malloc_usable_size");
	CHECK_EQ_U64(pt_chunk_usable(header(al)), malloc_usable_size(al), "usable size of an aligned chunk == malloc_usable_size");
	CHECK(pt_chunk_size(header(small)) % 16 == 0, "chunk sizes are multiples of 16");

	pthread_create(&t, NULL, thread_alloc, th);
	pthread_join(t, NULL);
	CHECK_EQ_U64(pt_chunk_kind(header(th[0]), 1000), PT_CHUNK_THREAD, "a second thread's malloc(1000) is in a thread arena");
	CHECK_EQ_U64(pt_chunk_kind(header(th[1]), 24 << 10), PT_CHUNK_THREAD, "a second thread's malloc(24 KiB) is in a thread arena");
	CHECK(pt_chunk_heap((uint64_t)th[0]) == pt_chunk_heap((uint64_t)th[1]), "both live in the same 64 MiB heap");
	{
		uint64_t ar = *(uint64_t *)pt_chunk_heap((uint64_t)th[0]);
		uint64_t heap = pt_chunk_heap((uint64_t)th[0]);

		/* heap_info.ar_ptr: the arena struct sits right after heap_info in the first heap. */
		CHECK(ar > heap && ar < heap + 4096, "heap_info.ar_ptr points into the heap's first page (0x%llx)",
		      (unsigned long long)ar);
	}

	/* Headers that cannot belong to the block: unknown, never a wrong arena. */
	CHECK_EQ_U64(pt_chunk_kind(0, 16), PT_CHUNK_UNKNOWN, "zero header is unknown");
	CHECK_EQ_U64(pt_chunk_kind(0x28 | 1, 16), PT_CHUNK_UNKNOWN, "size not a multiple of 16 is unknown");
	CHECK_EQ_U64(pt_chunk_kind(0x20 | 1, 100), PT_CHUNK_UNKNOWN, "chunk smaller than the request is unknown");
	CHECK_EQ_U64(pt_chunk_kind(0x1010 | 2, 4096), PT_CHUNK_MMAPPED, "IS_MMAPPED flag decodes");
	CHECK_EQ_U64(pt_chunk_kind(0x1010 | 4 | 1, 4096), PT_CHUNK_THREAD, "NON_MAIN_ARENA flag decodes");
	CHECK_EQ_U64(pt_chunk_usable(0x1010 | 2), 0x1000, "mmapped usable = size - 16");
	CHECK_EQ_U64(pt_chunk_usable(0x1010 | 1), 0x1008, "heap chunk usable = size - 8");
	CHECK_EQ_U64(pt_tid_kind(pt_tid_pack(4194303, PT_CHUNK_MMAPPED, 255)), PT_CHUNK_MMAPPED, "kind survives packing");
	CHECK_EQ_U64(pt_tid_tid(pt_tid_pack(4194303, PT_CHUNK_MMAPPED, 255)), 4194303, "tid survives packing");
	CHECK_EQ_U64(pt_tid_arena(pt_tid_pack(4194303, PT_CHUNK_THREAD, 255)), 255, "arena survives packing");
	CHECK_EQ_U64(pt_tid_arena(pt_tid_pack(1, PT_CHUNK_MAIN, 0)), 0, "main arena index packs as 0");
	CHECK_EQ_U64(pt_tid_kind(pt_tid_pack(7, PT_CHUNK_THREAD, 17)), PT_CHUNK_THREAD, "kind next to an arena index");
	CHECK_EQ_U64(pt_size_req(pt_size_pack(100, 112)), 100, "requested size survives packing");
	CHECK_EQ_U64(pt_size_chunk(pt_size_pack(100, 112)), 112, "chunk size survives packing");
	CHECK_EQ_U64(pt_size_chunk(pt_size_pack(4096, 8192)), 8192, "a page of mmap slack fits");
	CHECK_EQ_U64(pt_size_chunk(pt_size_pack(1, 1ULL << 20)), 1 + 0xffff, "larger slack saturates");
	CHECK_EQ_U64(pt_size_req(pt_size_pack((1ULL << 40) + 3, 0)), (1ULL << 40) + 3, "a 1 TiB request fits");
	CHECK_EQ_U64(pt_size_chunk(pt_size_pack(64, 0)), 64, "chunk below the request means no slack");

	/* Which blocks an arena's own row counts; the rest are summed from thread sub-rows. */
	CHECK(!pt_arena_counts_itself(3, PT_TS_MAIN, PT_ARENA_MAIN), "main arena: from the thread rows");
	CHECK(!pt_arena_counts_itself(PT_TSLOT_OTHER, PT_TS_MAIN, PT_ARENA_MAIN),
	      "main arena, shared row: from the thread rows (PT_TS_MAIN holds the main arena alone)");
	CHECK(!pt_arena_counts_itself(3, PT_TS_ARENA0, 5), "a thread's first arena: from its row");
	CHECK(pt_arena_counts_itself(3, PT_TS_ARENA1, 5), "second sub-row (may mix arenas; also a thread with no row): itself");
	CHECK(pt_arena_counts_itself(PT_TSLOT_OTHER, PT_TS_ARENA0, 5), "shared row: itself");
	CHECK(pt_arena_counts_itself(3, PT_TS_ARENA0, PT_ARENA_OTHER), "arenas beyond the table: itself");

	free(small); free(mid); free(big); free(zero); free(cal); free(al); free(th[0]); free(th[1]);
	return CHECK_DONE();
}

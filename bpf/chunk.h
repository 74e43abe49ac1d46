/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * chunk.h — glibc malloc chunk headers, decoded. Pure functions shared by the BPF program and the
 * host unit tests (tests/unit/test_chunk.c checks them against the real glibc).
 *
 * glibc keeps, 8 bytes before every pointer it returns, the chunk's size with three flags in the
 * low bits (malloc/malloc.c: PREV_INUSE 0x1, IS_MMAPPED 0x2, NON_MAIN_ARENA 0x4). A chunk from a
 * thread arena lives in a heap aligned to HEAP_MAX_SIZE (64 MiB on 64-bit: 2 * the 32 MiB
 * DEFAULT_MMAP_THRESHOLD_MAX), whose first word (heap_info.ar_ptr) names its arena.
 */
#ifndef PEAKTRACE_CHUNK_H
#define PEAKTRACE_CHUNK_H

#include "peaktrace.h"

#define PT_CHUNK_PREV_INUSE 0x1ULL
#define PT_CHUNK_IS_MMAPPED 0x2ULL
#define PT_CHUNK_NON_MAIN_ARENA 0x4ULL
#define PT_CHUNK_FLAGS 0x7ULL
#define PT_HEAP_MAX_SIZE (64ULL << 20)

/* Where a block lives; values fit in 2 bits (they are packed into the live slot's tid). */
enum pt_chunk_kind {
	PT_CHUNK_UNKNOWN = 0,  /* not glibc, or the header made no sense */
	PT_CHUNK_MAIN = 1,     /* main arena (brk heap) */
	PT_CHUNK_THREAD = 2,   /* a thread arena's mmapped heap */
	PT_CHUNK_MMAPPED = 3,  /* its own mmap (>= the mmap threshold) */
	PT_CHUNK_KINDS = 4,
};

static inline __u64 pt_chunk_size(__u64 hdr)
{
	return hdr & ~PT_CHUNK_FLAGS;
}

/* Bytes the program may use: an mmapped chunk carries two header words; a heap chunk one, since
 * it borrows the next chunk's prev_size word (malloc_usable_size agrees). */
static inline __u64 pt_chunk_usable(__u64 hdr)
{
	__u64 sz = pt_chunk_size(hdr), ovh = (hdr & PT_CHUNK_IS_MMAPPED) ? 16 : 8;

	return sz > ovh ? sz - ovh : 0;
}

/* Kind of the chunk holding a block of `req` requested bytes, or PT_CHUNK_UNKNOWN when the header
 * cannot belong to it (sizes are multiples of 16 and at least req plus the header). */
static inline __u32 pt_chunk_kind(__u64 hdr, __u64 req)
{
	__u64 sz = pt_chunk_size(hdr);

	if (sz < 32 || (sz & 15) || pt_chunk_usable(hdr) < req)
		return PT_CHUNK_UNKNOWN;
	if (hdr & PT_CHUNK_IS_MMAPPED)
		return PT_CHUNK_MMAPPED;
	if (hdr & PT_CHUNK_NON_MAIN_ARENA)
		return PT_CHUNK_THREAD;
	return PT_CHUNK_MAIN;
}

/* The heap_info of a thread-arena chunk: its first word is the arena pointer. */
static inline __u64 pt_chunk_heap(__u64 ptr)
{
	return ptr & ~(PT_HEAP_MAX_SIZE - 1);
}

/*
 * The live slot's owner word: in the low 22 bits the allocating thread's row and sub-row
 * (pt_owner), the arena index (peaktrace.h, 0..PT_ARENA_OTHER) in the next 8 and the chunk kind
 * in the top 2.
 */
#define PT_TID_BITS 22
#define PT_TID_ARENA_SHIFT 22
#define PT_TID_KIND_SHIFT 30
static inline __u32 pt_tid_pack(__u32 tid, __u32 kind, __u32 arena)
{
	return (tid & ((1u << PT_TID_BITS) - 1)) | ((arena & 0xff) << PT_TID_ARENA_SHIFT) |
	       (kind << PT_TID_KIND_SHIFT);
}
static inline __u32 pt_tid_kind(__u32 packed)
{
	return packed >> PT_TID_KIND_SHIFT;
}
static inline __u32 pt_tid_arena(__u32 packed)
{
	return (packed >> PT_TID_ARENA_SHIFT) & 0xff;
}
static inline __u32 pt_tid_tid(__u32 packed)
{
	return packed & ((1u << PT_TID_BITS) - 1);
}
/* Thread row (< 2^16) and sub-row (enum pt_thread_sub) in the low 22 bits. */
static inline __u32 pt_owner(__u32 slot, __u32 sub)
{
	return (slot & 0xffff) | (sub << 16);
}
static inline __u32 pt_owner_slot(__u32 packed)
{
	return packed & 0xffff;
}
static inline __u32 pt_owner_sub(__u32 packed)
{
	return (packed >> 16) & 0x7;
}

/*
 * Whether a block's arena row counts its allocation and free itself (atomics shared by every
 * thread of the arena, bpf/arenas.bpf.h) or leaves them to the thread rows, whose counts only
 * their own thread writes (plain adds) and user space sums per arena (user/arenas/arenas.c
 * counts_from_threads). A sub-row that holds one arena alone can stand for it: PT_TS_MAIN of
 * every row (the main arena), and PT_TS_ARENA0 of a thread's own row (its first thread arena).
 * Not PT_TS_ARENA1 (a third arena or more is counted there too), not the shared row of the
 * threads beyond the table (its arena[] is any thread's), not the arenas beyond the table.
 */
static inline int pt_arena_counts_itself(__u32 slot, __u32 sub, __u32 arena)
{
	if (arena == PT_ARENA_MAIN)
		return 0;
	return slot == PT_TSLOT_OTHER || sub != PT_TS_ARENA0 || arena == PT_ARENA_OTHER;
}

/*
 * The live slot's size word: requested bytes in the low 48 bits, and the chunk's slack (chunk
 * size - requested) in the top 16. glibc's slack is below 16 bytes of rounding + a remainder too
 * small to split (< 32) for heap chunks and below a page + 16 for mmapped ones; a larger slack
 * saturates (and the chunk bytes of that block are then short by the excess).
 */
#define PT_SIZE_BITS 48
#define PT_SLACK_MAX 0xffffULL
static inline __u64 pt_size_pack(__u64 size, __u64 chunk)
{
	__u64 slack = chunk > size ? chunk - size : 0;

	if (slack > PT_SLACK_MAX)
		slack = PT_SLACK_MAX;
	return (size & ((1ULL << PT_SIZE_BITS) - 1)) | (slack << PT_SIZE_BITS);
}
static inline __u64 pt_size_req(__u64 packed)
{
	return packed & ((1ULL << PT_SIZE_BITS) - 1);
}
static inline __u64 pt_size_chunk(__u64 packed)
{
	return pt_size_req(packed) + (packed >> PT_SIZE_BITS);
}

#endif

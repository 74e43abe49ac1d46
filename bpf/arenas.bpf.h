/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arenas.bpf.h — glibc arenas: each glibc block attributed, from its chunk header
 * (chunk.h), to the main arena, a thread arena or its own mmap, and counted there and in the
 * row of the thread that allocated it. Only with the loader's glibc_arenas.
 */
#ifndef PEAKTRACE_ARENAS_BPF_H
#define PEAKTRACE_ARENAS_BPF_H

#include "state.bpf.h"
#include "chunk.h"

/* key: malloc_state address (heap_info.ar_ptr); value: arena index. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_MAX_ARENAS);
	__type(key, __u64);
	__type(value, __u32);
} arena_ids SEC(".maps");

/* key: arena index; value: its counters. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PT_MAX_ARENAS);
	__type(key, __u32);
	__type(value, struct pt_arena_stats);
} arenas SEC(".maps");

/* key: thread row (thread_state.tslot); value: the thread's counters per arena. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PT_MAX_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct pt_thread_slot);
} thread_slots SEC(".maps");

/* Raise *peak to v (racy between CPUs; settled with a few compare-and-swaps). */
static __always_inline void max_s64(__s64 *peak, __s64 v)
{
	for (int i = 0; i < 3; i++) {
		__s64 old = *peak;

		if (v <= old || __sync_val_compare_and_swap(peak, old, v) == old)
			break;
	}
}

/* This thread's row in thread_slots, handed out at its first allocation. */
static __always_inline void thread_slot(struct thread_state *ts, __u32 tid)
{
	struct pt_thread_slot *row;
	__u32 n;

	if (ts->tslot)
		return;
	n = __sync_fetch_and_add(&g.thread_slots, 1) + 1;
	if (n >= PT_TSLOT_OTHER) {
		/* Beyond the table: its blocks go to the shared "other threads" row. */
		count_err(PT_ERR_ARENA_FULL);
		ts->tslot = PT_TSLOT_OTHER;
		return;
	}
	ts->tslot = n;
	row = bpf_map_lookup_elem(&thread_slots, &n);
	if (row)
		row->tid = tid;
}

/* Sub-row of thread arena idx in a thread's row (see enum pt_thread_sub). Only the thread itself
 * writes its row's arena[] (the shared overflow row may mix them up: it is "other threads"). */
static __always_inline __u32 thread_sub(struct pt_thread_slot *row, __u32 idx)
{
	if (!row)
		return PT_TS_ARENA1;
	if (row->arena[0] == idx)
		return PT_TS_ARENA0;
	if (row->arena[0] == 0) {
		row->arena[0] = idx;
		return PT_TS_ARENA0;
	}
	if (row->arena[1] == idx)
		return PT_TS_ARENA1;
	if (row->arena[1] == 0) {
		row->arena[1] = idx;
		return PT_TS_ARENA1;
	}
	/* Atomic: the shared "other threads" row is written by threads on every CPU at once. */
	__sync_fetch_and_add(&row->extra, 1);
	count_err(PT_ERR_ARENA_FULL);
	return PT_TS_ARENA1;
}

/*
 * Arena of a fresh glibc block (chunk.h): the chunk header says main arena, thread
 * arena or mmapped; a thread arena is named by the first word of its 64 MiB-aligned heap. A
 * thread keeps allocating from the same heap, so the heap -> arena index pair is cached in its
 * state: the second read and the map lookup happen only when the heap changes. Returns the packed
 * owner word (chunk.h: thread row and sub-row, arena, kind) and sets *chunk to the chunk size.
 */
static __always_inline __u32 arena_of(struct thread_state *ts, __u64 ptr, __u64 size, __u32 tid,
				      __u64 *chunk)
{
	__u64 hdr, heap, ar;
	__u32 kind, idx, *known, slot;

	thread_slot(ts, tid);
	if (bpf_probe_read_user(&hdr, sizeof(hdr), (void *)(ptr - 8)))
		goto unknown;
	kind = pt_chunk_kind(hdr, size);
	if (kind == PT_CHUNK_UNKNOWN)
		goto unknown;
	*chunk = pt_chunk_size(hdr);
	if (*chunk - size > PT_SLACK_MAX)
		count_err(PT_ERR_CHUNK_SLACK);
	if (kind == PT_CHUNK_MAIN)
		return pt_tid_pack(pt_owner(ts->tslot, PT_TS_MAIN), kind, PT_ARENA_MAIN);
	if (kind == PT_CHUNK_MMAPPED)
		return pt_tid_pack(pt_owner(ts->tslot, PT_TS_MMAPPED), kind, PT_ARENA_MAIN);
	heap = pt_chunk_heap(ptr);
	if (ts->heap_arena && ts->heap_base == heap) {
		idx = ts->heap_arena;
		goto found;
	}
	if (bpf_probe_read_user(&ar, sizeof(ar), (void *)heap) || !ar)
		goto unknown;
	known = bpf_map_lookup_elem(&arena_ids, &ar);
	if (known) {
		idx = *known;
	} else {
		idx = __sync_fetch_and_add(&g.arena_next, 1) + 1;
		if (idx >= PT_ARENA_OTHER) {
			/* Beyond the table: lumped together, and counted at every lookup. */
			count_err(PT_ERR_ARENA_FULL);
			idx = PT_ARENA_OTHER;
		} else if (bpf_map_update_elem(&arena_ids, &ar, &idx, BPF_NOEXIST)) {
			/* Another CPU named it first (its index is wasted). */
			known = bpf_map_lookup_elem(&arena_ids, &ar);
			idx = known ? *known : PT_ARENA_OTHER;
		} else {
			struct pt_arena_stats *a = bpf_map_lookup_elem(&arenas, &idx);

			if (a)
				a->addr = ar;
		}
	}
	ts->heap_base = heap;
	ts->heap_arena = idx;
found:
	/* The key copied to the stack: in a global function (pt_do_alloc) ts is plain memory,
	 * which kernels before 6.x refuse as a map key ("R2 type=mem expected=fp"). */
	slot = ts->tslot;
	return pt_tid_pack(pt_owner(slot, thread_sub(bpf_map_lookup_elem(&thread_slots, &slot), idx)),
			   kind, idx);
unknown:
	count_err(PT_ERR_CHUNK_READ);
	return pt_tid_pack(pt_owner(ts->tslot, PT_TS_UNKNOWN), PT_CHUNK_UNKNOWN, PT_ARENA_MAIN);
}

/* Count a glibc block in (alloc) or out of its arena, its chunk kind and its thread's row; cur is
 * the thread running this program. */
static __always_inline void arena_account(__u32 tidw, __u64 size, __u64 chunk, bool alloc, __u32 cur)
{
	__u32 kind = pt_tid_kind(tidw) & 3, idx = pt_tid_arena(tidw);
	__s64 c = alloc ? 1 : -1, b = alloc ? (__s64)size : -(__s64)size;
	__s64 cb = alloc ? (__s64)chunk : -(__s64)chunk;
	__u32 slot = pt_owner_slot(tidw), sub = pt_owner_sub(tidw);
	struct pt_thread_slot *row;
	struct pt_thread_arena *t;

	/* Live counts and bytes are alloc - free (user space derives them); only the chunk bytes,
	 * which no other counter adds up to, are kept live. */
	if (kind == PT_CHUNK_MMAPPED || kind == PT_CHUNK_UNKNOWN) {
		__sync_fetch_and_add(&g.kind_live_count[kind], c);
		__sync_fetch_and_add(&g.kind_live_bytes[kind], b);
		__sync_fetch_and_add(&g.kind_live_chunk_bytes[kind], cb);
	} else {
		struct pt_arena_stats *a = bpf_map_lookup_elem(&arenas, &idx);

		if (a) {
			__s64 now;

			/* Most blocks' counts are the sum of the thread sub-rows that hold their
			 * arena alone (chunk.h pt_arena_counts_itself), added up in user space
			 * (arenas.c counts_from_threads): two atomics fewer a block, on a line
			 * every thread of the arena writes. Only the rest are counted here. */
			if (pt_arena_counts_itself(slot, sub, idx)) {
				if (alloc) {
					__sync_fetch_and_add(&a->alloc_count, 1);
					__sync_fetch_and_add(&a->alloc_bytes, size);
				} else {
					__sync_fetch_and_add(&a->free_count, 1);
					__sync_fetch_and_add(&a->free_bytes, size);
				}
			}
			now = __sync_fetch_and_add(&a->live_chunk_bytes, cb) + cb;
			if (alloc)
				max_s64(&a->peak_chunk_bytes, now);
			if (size >= PT_ARENA_LARGE) {
				if (alloc) {
					__sync_fetch_and_add(&a->large_count, 1);
					__sync_fetch_and_add(&a->large_bytes, size);
				}
				now = __sync_fetch_and_add(&a->large_live_chunk_bytes, cb) + cb;
				if (alloc)
					max_s64(&a->large_peak_chunk_bytes, now);
			}
		}
	}
	row = bpf_map_lookup_elem(&thread_slots, &slot);
	if (!row || sub >= PT_TS_N)
		return;
	t = &row->c[sub];
	if (slot != PT_TSLOT_OTHER && (alloc || row->tid == cur)) {
		/* The row's own thread: only it allocates into its row and only it writes these
		 * fields (other threads' frees go to xfree_*; a thread's programs never overlap),
		 * so plain adds, three atomics fewer a block. A thread id reused after the row's
		 * thread died is a new writer of a row its dead owner no longer writes. */
		if (alloc) {
			t->alloc_count += 1;
			t->alloc_bytes += size;
		} else {
			t->free_count += 1;
			t->free_bytes += size;
		}
		t->live_chunk_bytes += cb;
	} else if (alloc) {
		__sync_fetch_and_add(&t->alloc_count, 1);
		__sync_fetch_and_add(&t->alloc_bytes, size);
		__sync_fetch_and_add(&t->live_chunk_bytes, cb);
	} else {
		__sync_fetch_and_add(&t->xfree_count, 1);
		__sync_fetch_and_add(&t->xfree_bytes, size);
		__sync_fetch_and_add(&t->xfree_chunk_bytes, chunk);
	}
}

#endif /* PEAKTRACE_ARENAS_BPF_H */

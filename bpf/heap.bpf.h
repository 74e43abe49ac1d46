/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * heap.bpf.h — the live heap: allocator entry and return, free, the live-pointer table, and the
 * accounting of every block in the global totals, its stack's counters (with the lazy peak
 * snapshots of peak.h, global and per invocation) and, for glibc, its arena (arenas.bpf.h).
 */
#ifndef PEAKTRACE_HEAP_BPF_H
#define PEAKTRACE_HEAP_BPF_H

#include "state.bpf.h"
#include "stack.bpf.h"
#include "arenas.bpf.h"
#include "peak.h"
#include "chunk.h"
#include "sample.h"

/* The live-pointer table: key: bucket number (hash of the pointer); value: 8 slots claimed with
 * compare-and-swap, their pointers in one cache line (struct pt_live_bucket). An array lookup is
 * inlined by the verifier, so insert and delete cost one bucket scan instead of a hash-map
 * update + delete (~2x cheaper on the free path).
 * max_entries is set by the loader (live slots / PT_BUCKET_SLOTS). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* Never mmapped: the flag is for where the values start. A plain array's values follow
	 * the kernel's struct bpf_array header (312 bytes on 6.18: 56 past a cache line), so a
	 * bucket's pointers would straddle two lines; an mmapable array's values start on a page. */
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PT_DEF_LIVE_SLOTS / PT_BUCKET_SLOTS);
	__type(key, __u32);
	__type(value, struct pt_live_bucket);
} live SEC(".maps");

/* key: pointer; value: its allocation. Used only when a bucket is full. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_DEF_OVERFLOW);
	__type(key, __u64);
	__type(value, struct pt_live_info);
} live_overflow SEC(".maps");

/* Before a stack's counters change: keep what it held at the current invocation's peak. */
static __always_inline void inv_touch(struct pt_stack_stats *st)
{
	__u32 p = g.inv_seq & 1, q = p ^ 1;
	__u64 seq = g.inv[p].peak_seq, qseq = g.inv[q].peak_seq;

	if (st->inv_snap_seq[p] != seq) {
		st->inv_peak_count[p] = pt_live_count_of(st);
		st->inv_peak_bytes[p] = pt_live_bytes_of(st);
		st->inv_snap_seq[p] = seq;
	}
	/* The previous invocation has ended but user space may not have read it yet: a stack that
	 * changes now must first keep what it held at that invocation's peak too. */
	if (st->inv_snap_seq[q] != qseq && g.inv[q].state == PT_INV_ENDED) {
		st->inv_peak_count[q] = pt_live_count_of(st);
		st->inv_peak_bytes[q] = pt_live_bytes_of(st);
		st->inv_snap_seq[q] = qseq;
	}
}

/* Global live total; bumps peak_seq when a new maximum is set. */
static __always_inline void global_add(__s64 bytes, __s64 count)
{
	__s64 total = __sync_fetch_and_add(&g.live_bytes, bytes) + bytes;

	__sync_fetch_and_add(&g.live_count, count);
	if (bytes > 0) {
		struct pt_inv *inv = &g.inv[g.inv_seq & 1];

		/* The timeline's interval maximum: one compare and store, no atomics (a store
		 * racing user space's swap lands in the next interval, which is where it is). */
		if (total > g.tl_heap_max)
			g.tl_heap_max = total;

		/* The invocation's own peak: a new peak_seq, unique across invocations, makes
		 * every stack snapshot itself lazily as for the global peak. */
		if (inv->state == PT_INV_RUNNING && total > inv->heap_peak) {
			inv->heap_peak = total;
			inv->heap_peak_count = g.live_count;
			inv->peak_seq = __sync_fetch_and_add(&g.inv_peak_counter, 1) + 1;
		}
	}
	if (bytes > 0 && total > g.peak_bytes) {
		/* Racy max between CPUs is settled with compare-and-swap (bounded retries). */
		for (int i = 0; i < 4; i++) {
			__s64 old = g.peak_bytes;

			if (total <= old)
				break;
			if (__sync_val_compare_and_swap(&g.peak_bytes, old, total) == old) {
				g.peak_count = g.live_count;
				__sync_fetch_and_add(&g.peak_seq, 1);
				break;
			}
		}
	}
}

static __always_inline __u32 bucket_of(__u64 ptr)
{
	return (__u32)((ptr * 0x9E3779B97F4A7C15ULL) >> 32) & live_bucket_mask;
}

/* What one block of size bytes adds to its stack's counters: itself, or with --sample-bytes the
 * unbiased weight of a sampled block (sample.h; counts in 2^-16 units). A pure function of the
 * size, so the free subtracts exactly what the allocation added. */
static __always_inline void stack_weight(__u64 size, __s64 *wbytes, __s64 *wcount)
{
	__u64 wb, wc;

	if (!sample_bytes) {
		*wbytes = size;
		*wcount = 1;
		return;
	}
	pt_sample_weights(sample_bytes, size, &wb, &wc);
	*wbytes = wb;
	*wcount = wc;
}

static __always_inline void stack_account(__u32 stack, __s64 bytes, bool alloc)
{
	struct pt_stack_stats *st;
	__s64 wb, wc;

	/* Unsampled blocks have no stack: their allocation and free cost no stack work. */
	if (stack == PT_STACK_UNSAMPLED)
		return;
	st = bpf_map_lookup_elem(&stats, &stack);
	if (!st)
		return;
	stack_weight(bytes, &wb, &wc);
	pt_peak_touch(st, g.peak_seq);
	inv_touch(st);
	/* Live is alloc - free - unheld (peak.h), not a counter of its own. */
	if (alloc) {
		__sync_fetch_and_add(&st->alloc_count, wc);
		__sync_fetch_and_add(&st->alloc_bytes, wb);
	} else {
		__sync_fetch_and_add(&st->free_count, wc);
		__sync_fetch_and_add(&st->free_bytes, wb);
	}
}

/* Remove ptr from the live table. Returns true and its size/stack when it was live. */
static __always_inline bool live_take(__u64 ptr, __u64 *size, __u32 *stack, __u32 *tid)
{
	__u32 b = bucket_of(ptr);
	struct pt_live_bucket *bk = bpf_map_lookup_elem(&live, &b);
	struct pt_live_info *info;

	if (bk) {
		for (int i = 0; i < PT_BUCKET_SLOTS; i++) {
			struct pt_live_info *v = &bk->v[i];

			if (bk->ptr[i] != ptr)
				continue;
			*size = v->size;
			*stack = v->stack;
			*tid = v->tid;
			/* Only one of two racing frees of the same pointer wins the slot. */
			if (__sync_val_compare_and_swap(&bk->ptr[i], ptr, 0) == ptr)
				return true;
		}
	}
	info = bpf_map_lookup_elem(&live_overflow, &ptr);
	if (info) {
		*size = info->size;
		*stack = info->stack;
		*tid = info->tid;
		if (bpf_map_delete_elem(&live_overflow, &ptr) == 0)
			return true;
	}
	return false;
}

/* Returns whether ptr was live (and now is not). cur: the thread running this program. A global
 * function, verified once per program: alloc_return frees in three places (realloc's old block,
 * realloc(p, 0), a stale live entry in pt_do_alloc), each an inlined copy before. */
__noinline int pt_do_free(__u64 ptr, int quiet, __u32 cur)
{
	__u64 packed, size;
	__u32 stack, tid;

	if (!live_take(ptr, &packed, &stack, &tid)) {
		if (!quiet)
			count_err(PT_ERR_UNKNOWN_FREE);
		return false;
	}
	size = pt_size_req(packed);
	if (glibc_arenas)
		arena_account(tid, size, pt_size_chunk(packed), false, cur);
	stack_account(stack, size, false);
	/* No free counters: frees are alloc - live - unheld (bpf/inv.h). */
	global_add(-(__s64)size, -1);
	return true;
}

/* A global function: alloc_return reaches it from realloc's, posix_memalign's and the other
 * functions' paths, each of which re-verified the inlined body (with the frees inlined around
 * it) under its own states. As one function it is verified once per program, for any
 * arguments. Returns 0. */
__noinline int pt_do_alloc(struct thread_state *ts, __u64 ptr, __u64 size, __u32 stack, __u32 tid)
{
	__u32 cur = tid;
	__u32 b = bucket_of(ptr);
	struct pt_live_bucket *bk = bpf_map_lookup_elem(&live, &b);
	/* Which invocation made the block: its epoch (pt_global.epoch), not a clock read. */
	__u64 now = g.epoch, chunk = size;
	bool stored = false;

	if (!ts)
		return 0;

	/* A pymalloc block has no chunk header to read (its size says whether it is one). */
	if (glibc_arenas && !((ts->fn & PT_FN_PYOBJ) && size - 1 < PT_PYMALLOC_MAX))
		tid = arena_of(ts, ptr, size, tid, &chunk);
	else
		tid = pt_tid_pack(tid, PT_CHUNK_UNKNOWN, 0);
	size = pt_size_pack(size, chunk);

	if (bk) {
		int i;

		/* A pointer we still hold as live means its free was missed; retire it first. */
		for (i = 0; i < PT_BUCKET_SLOTS; i++) {
			if (bk->ptr[i] == ptr) {
				count_err(PT_ERR_STALE_LIVE);
				pt_do_free(ptr, true, cur);
				break;
			}
		}
		for (i = 0; i < PT_BUCKET_SLOTS; i++) {
			struct pt_live_info *v = &bk->v[i];

			if (bk->ptr[i] == 0 && __sync_val_compare_and_swap(&bk->ptr[i], 0, ptr) == 0) {
				/* The pointer has not reached the program yet, so no free can race
				 * these stores. */
				v->size = size;
				v->stack = stack;
				v->tid = tid;
				v->ts = now;
				stored = true;
				break;
			}
		}
	}
	/* From here on size is the requested size again (the slots keep it packed). */
	if (!stored) {
		struct pt_live_info info = { .size = size, .stack = stack, .tid = tid, .ts = now };

		if (bpf_map_update_elem(&live_overflow, &ptr, &info, BPF_ANY)) {
			/* Counted as allocated but not as live: it can never be freed from us. */
			count_err(PT_ERR_LIVE_FULL);
			size = pt_size_req(size);
			struct pt_stack_stats *st = NULL;
			__s64 wb, wc;

			if (stack != PT_STACK_UNSAMPLED)
				st = bpf_map_lookup_elem(&stats, &stack);
			if (st) {
				stack_weight(size, &wb, &wc);
				__sync_fetch_and_add(&st->alloc_count, wc);
				__sync_fetch_and_add(&st->alloc_bytes, wb);
				__sync_fetch_and_add(&st->unheld_count, wc);
				__sync_fetch_and_add(&st->unheld_bytes, wb);
			}
			if (sample_bytes && stack != PT_STACK_UNSAMPLED) {
				__sync_fetch_and_add(&g.sampled_count, 1);
				__sync_fetch_and_add(&g.sampled_bytes, size);
			}
			__sync_fetch_and_add(&g.alloc_count, 1);
			__sync_fetch_and_add(&g.alloc_bytes, size);
			__sync_fetch_and_add(&g.unheld_count, 1);
			__sync_fetch_and_add(&g.unheld_bytes, size);
			return 0;
		}
	}
	size = pt_size_req(size);
	stack_account(stack, size, true);
	if (glibc_arenas)
		arena_account(tid, size, chunk, true, cur);
	if (sample_bytes && stack != PT_STACK_UNSAMPLED) {
		__sync_fetch_and_add(&g.sampled_count, 1);
		__sync_fetch_and_add(&g.sampled_bytes, size);
	}
	__sync_fetch_and_add(&g.alloc_count, 1);
	__sync_fetch_and_add(&g.alloc_bytes, size);
	global_add(size, 1);
	return 0;
}

/*
 * Allocator entry. Only the outermost allocator call on a thread is counted: glibc's own
 * functions call each other (realloc(NULL, n) -> malloc, reallocarray -> realloc as a tail
 * jump), and a uprobe fires on every call, internal or not.
 */
static __always_inline int alloc_enter(struct pt_regs *ctx, __u32 fn, __u64 size, __u64 arg)
{
	struct thread_state *ts;
	__u64 sp, ra;

	if (!is_target())
		return 0;
	ts = thread_get(true);
	if (!ts) {
		count_err(PT_ERR_THREAD_STATE);
		return 0;
	}
	sp = PT_REGS_SP(ctx);
	if (ts->depth) {
		/* Nested: deeper stack, or a tail jump (same sp, and [sp] already replaced by the
		 * uretprobe trampoline so it differs from the outer return address). */
		if (sp < ts->sp)
			goto nested;
		if (sp == ts->sp) {
			if (bpf_probe_read_user(&ra, sizeof(ra), (void *)sp) || ra != ts->ra)
				goto nested;
		}
		/* The outer call's return was never seen. Start over. */
		count_err(PT_ERR_MISSED_RETURN);
		ts->depth = 0;
	}
	ts->depth = 1;
	ts->sp = sp;
	ts->size = size;
	ts->arg = arg;
	ts->fn = fn;
	if (sample_bytes) {
		/* Poisson sampling by bytes (sample.h): the block is still tracked as live and in
		 * every total; only its stack is skipped. The decision is taken on the requested
		 * size, the size the live table keeps, so the free recomputes the same weight. */
		if (!ts->sample_left)
			ts->sample_left = pt_sample_gap(sample_bytes, bpf_get_prandom_u32());
		if (!pt_sample_hit(&ts->sample_left, size)) {
			/* The nesting check above needs the outer return address. */
			if (bpf_probe_read_user(&ra, sizeof(ra), (void *)sp))
				ra = 0;
			ts->ra = ra;
			ts->stack = PT_STACK_UNSAMPLED;
			return 0;
		}
		ts->sample_left = pt_sample_gap(sample_bytes, bpf_get_prandom_u32());
	}
	PT_ARCH_KEEP_LR(ts, PT_REGS_RET(ctx));         /* arm64: frame 0 (stack.bpf.h) */
	ts->stack = capture(ts, sp, PT_REGS_FP(ctx));
	ts->ra = ts->pcs[0];
	return 0;
nested:
	ts->depth++;
	return 0;
}

static __always_inline int alloc_exit(struct pt_regs *ctx)
{
	struct thread_state *ts;
	__u64 ret, ptr, old;
	__u32 tid;

	if (!is_target())
		return 0;
	ts = thread_get(false);
	/* No state or depth 0: the entry was not seen (we attached while the call ran). */
	if (!ts || !ts->depth)
		return 0;
	if (--ts->depth)
		return 0;
	ret = PT_REGS_RC(ctx);
	tid = (__u32)bpf_get_current_pid_tgid();

	switch (ts->fn & ~PT_FN_PYOBJ) {
	case PT_FN_REALLOC:
	case PT_FN_REALLOCARRAY:
		old = ts->arg;
		if (!ret) {
			/* glibc's realloc(p, 0) frees p through free() (already seen by the free
			 * probe) and returns NULL; other failures leave p live. */
			if (ts->size == 0 && old)
				pt_do_free(old, true, tid);
			return 0;
		}
		if (old)
			pt_do_free(old, false, tid);
		pt_do_alloc(ts, ret, ts->size, ts->stack, tid);
		return 0;
	case PT_FN_POSIX_MEMALIGN:
		/* Returns an error number; the pointer is stored through memptr. */
		if ((int)ret != 0)
			return 0;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)ts->arg)) {
			count_err(PT_ERR_PTR_READ);
			return 0;
		}
		pt_do_alloc(ts, ptr, ts->size, ts->stack, tid);
		return 0;
	default:
		if (!ret)
			return 0;
		pt_do_alloc(ts, ret, ts->size, ts->stack, tid);
		return 0;
	}
}

/* The entry of every allocation function: the attach cookie (enum pt_alloc_fn) says which, and
 * so where its size is. */
static __always_inline int alloc_enter_by_cookie(struct pt_regs *ctx)
{
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx);
	__u32 cookie = (__u32)bpf_get_attach_cookie(ctx), fn = cookie & ~PT_FN_PYOBJ;

	/* The flag rides along in fn for the return (pt_do_alloc, the switch in alloc_exit). */
	switch (fn) {
	case PT_FN_MALLOC:
	case PT_FN_VALLOC:
	case PT_FN_PVALLOC:
		/* valloc/pvalloc: the requested size is counted, not the page rounding. */
		return alloc_enter(ctx, cookie, a0, 0);
	case PT_FN_CALLOC:
		/* An overflowing product fails in calloc and is never counted. */
		return alloc_enter(ctx, cookie, a0 * a1, 0);
	case PT_FN_REALLOC:
		return alloc_enter(ctx, cookie, a1, a0);
	case PT_FN_REALLOCARRAY:
		return alloc_enter(ctx, fn, a1 * a2, a0);
	case PT_FN_POSIX_MEMALIGN:
		/* (memptr, alignment, size) */
		return alloc_enter(ctx, fn, a2, a0);
	case PT_FN_ALIGNED_ALLOC:
	case PT_FN_MEMALIGN:
		/* (alignment, size) */
		return alloc_enter(ctx, PT_FN_MEMALIGN, a1, 0);
	}
	return 0;
}

/*
 * free. No return probe, no thread state: a free only looks its pointer up. The probe may sit
 * a few bytes after the entry (glibc: free+3, past `test %rdi,%rdi`, so the kernel emulates the
 * `je` instead of single-stepping the test: 1.15 µs instead of 5.8 µs; trixie's arm64 glibc:
 * free+4, past `bti c`, to a simulated `cbz x0`); the argument register is unchanged there.
 */
static __always_inline int free_probe(struct pt_regs *ctx)
{
	__u64 ptr = PT_REGS_PARM1(ctx), id;
	__u32 cur;

	if (!ptr)
		return 0;
	id = bpf_get_current_pid_tgid();
	if ((id >> 32) != targ_tgid)
		return 0;
	cur = (__u32)id;
	if (free_checks_thread) {
		struct thread_state *ts = thread_get(true);

		if (!ts) {
			count_err(PT_ERR_THREAD_STATE);
			pt_do_free(ptr, false, cur);
			return 0;
		}
		__u32 fn = ts->fn & ~PT_FN_PYOBJ;

		if (ts->depth && (fn == PT_FN_REALLOC || fn == PT_FN_REALLOCARRAY) && ts->arg == ptr)
			return 0;
		/* Quiet when this thread's previous free probe took the same pointer. */
		if (pt_do_free(ptr, ts->last_free == ptr, cur))
			ts->last_free = ptr;
		return 0;
	}
	pt_do_free(ptr, false, cur);
	return 0;
}

#endif /* PEAKTRACE_HEAP_BPF_H */

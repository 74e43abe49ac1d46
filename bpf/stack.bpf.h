/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stack.bpf.h — user stacks: captured at allocator entry (or a memory syscall), hashed in the
 * kernel to a dense index (stack_ids -> stacks[], stats[]); stats[] is the counters of each stack,
 * updated by heap.bpf.h and memstat.bpf.h.
 */
#ifndef PEAKTRACE_STACK_BPF_H
#define PEAKTRACE_STACK_BPF_H

#include "state.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"

/* key: hash of a stack's PCs; value: its stack index. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u64);
	__type(value, __u32);
} stack_ids SEC(".maps");

/* key: stack index; value: the stack's PCs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct pt_stack_rec);
} stacks SEC(".maps");

/*
 * The Python words of new stacks. A chunk pool first: an insert into a hash map that is not
 * preallocated cost ~2.8 µs here (its allocator refills its per-CPU cache from irq_work, a
 * self-IPI in this guest, every few 1 KiB elements); a CPython import makes a new stack every
 * few microseconds (~15 ms of a 28 ms import's BPF time). Chunks of an array are preallocated
 * and handed out in order, as many as a stack's words need (25 words on average on that
 * import: two chunks). When the pool is used up, py_stacks takes the words, as it took all of
 * them before, so capacity stays max_stacks stacks.
 */
/* key: chunk index; value: PT_PY_CHUNK_WORDS words of one stack. max_entries set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pt_py_chunk);
} py_chunks SEC(".maps");

/* Chunks of py_chunks handed out (written by BPF only; chunk 0 is never handed out). */
__u64 py_chunk_next = 0;

/* key: stack index; value: its Python words (pyframe.h), for stacks the pool had no room for;
 * not preallocated, so a target without Python costs nothing here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct pt_py_stack);
} py_stacks SEC(".maps");

/* key: stack index; value: its counters. Never mmapped: the flag puts the values on a page
 * (see live in heap.bpf.h), so the four counters an allocation or free writes (the first 32
 * bytes of a 224-byte value) are always in one cache line, the one line threads allocating from
 * the same stack pass between them; a plain array's values start 56 bytes past a line, which
 * split them over two for every other stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct pt_stack_stats);
} stats SEC(".maps");

/*
 * Frames 1.. by frame pointers, from bp, inside the window ts->win holds from sp when whole (else
 * with one read per frame). Returns the number of pcs; *hash is updated. A global function:
 * inlined in every capture, its 63 unrolled frames were ~100K instructions to verify per
 * program with --unwind fp.
 */
__noinline __u32 pt_fp_walk(struct thread_state *ts, __u64 sp, __u64 bp, int whole, __u64 *hash)
{
	__u64 prev = PT_ARCH_FP_FLOOR(sp), fp = bp, h;
	__u32 n = 1, i;

	if (!ts || !hash)
		return 1;
	h = *hash;
	for (i = 1; i < PT_MAX_FRAMES; i++) {
		__u64 next, ra, off;

		if (fp & 7 || fp <= prev || fp - sp > (8ULL << 20))
			break;
		off = (fp - sp) / 8;
		if (whole && off < PT_STACK_WINDOW / 8 - 1) {
			next = ts->win[off];
			ra = ts->win[off + 1];
		} else {
			__u64 pair[2];

			if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp))
				break;
			next = pair[0];
			ra = pair[1];
		}
		/* A return address below the first page is not code: garbage rbp in code built
		 * without frame pointers. (Its PAC stripped first, on arm64.) */
		ra = PT_ARCH_STRIP_RA(ra);
		if (ra < 4096)
			break;
		ts->pcs[i & (PT_MAX_FRAMES - 1)] = ra;
		h = mix64(h, ra);
		n = i + 1;
		prev = fp;
		fp = next;
	}
	*hash = h;
	return n;
}

/*
 * Stack capture. frames[0] = the return address at function entry (exact): at [sp] on x86-64,
 * in x30 on arm64 (PT_ARCH_ENTRY_RA: kept in ts->uw_lr by the caller). Then a
 * frame-pointer walk from bp, done inside one copy of PT_STACK_WINDOW bytes from sp: the kernel's
 * own walk (bpf_get_stackid) costs ~1.3 µs here mostly because it ends by faulting on the last
 * saved frame pointer; this one stops before reading an implausible frame pointer (zero,
 * misaligned, not above the previous frame, or more than 8 MiB above sp). With dwarf_unwind
 * set, frames 1.. come from the .eh_frame walk of unwind.bpf.h instead.
 *
 * Returns the number of PCs in ts->pcs and their hash in *hash.
 */
static __always_inline __u32 unwind(struct thread_state *ts, __u64 ip, __u64 sp, __u64 bp,
				    __u64 *hash)
{
	__u64 h = 0x84222325cbf29ce4ULL;
	__u32 n = 0;
	bool whole = true;
	__u64 win_len = 8;

	if (bpf_probe_read_user(ts->win, sizeof(ts->win), (void *)sp)) {
		/* The stack top is less than a window above sp (deep in a short stack): read just
		 * the return address and walk with single reads. */
		whole = false;
		if (bpf_probe_read_user(ts->win, 8, (void *)sp)) {
			/* A fault on the stack's own new page (ip given), or an entry whose caller's
			 * frame bottom was never touched (arm64: frame 0 is in x30, not at [sp]):
			 * sp is not readable yet, but the frames above it are; walk them with no
			 * window. On x86-64 frame 0 is [sp] itself: nothing to keep. */
			if (!ip && !PT_ARCH_ENTRY_RA_IN_REG) {
				count_err(PT_ERR_STACK_READ);
				*hash = 0;
				return 0;
			}
			win_len = 0;
		}
	}
	/* ip: the stack of an instruction anywhere in its function (a page fault, rss.bpf.h): it
	 * is frame 0 and the walk starts from its registers, not from a return address at [sp].
	 * It is kept as ip + 1, so that every frame of every stack reads as a return address:
	 * user space names frame k by the byte before it (the call), which for the faulting
	 * instruction itself would be the previous function's last byte when it is the first
	 * instruction of its function. */
	ts->pcs[0] = ip ? ip + 1 : PT_ARCH_ENTRY_RA(ts);
	h = mix64(h, ts->pcs[0]);
	n = 1;
	if (!capture_stacks)
		goto out;
	if (dwarf_unwind) {
		/* CFI walk (unwind.bpf.h), frame pointers only where code has no CFI. */
		n = pt_dwarf_walk(ts, sp, bp, (whole ? PT_STACK_WINDOW : win_len) | (ip ? UNW_AT_IP : 0),
				  &h);
		goto out;
	}

	n = pt_fp_walk(ts, sp, bp, whole, &h);
out:
	*hash = mix64(h, n);
	return n;
}

/* The n Python words in ta->py into consecutive chunks of the pool: the first chunk's index,
 * or 0 when the pool has no room (the chunks past its end are never looked up: a lookup beyond
 * the array fails). A global function: verified once. */
__noinline __u32 pt_py_pool_store(struct thread_aux *ta, __u32 n)
{
	__u64 nch, at;
	__u32 key, c;
	struct pt_py_chunk *ch;

	if (!ta || !n || n > PT_MAX_PY_FRAMES)
		return 0;
	nch = (n + PT_PY_CHUNK_WORDS - 1) / PT_PY_CHUNK_WORDS;
	at = __sync_fetch_and_add(&py_chunk_next, nch) + 1;
	if (at + nch > 0xffffffffULL)
		return 0;
	key = at + nch - 1;
	if (!bpf_map_lookup_elem(&py_chunks, &key))
		return 0;
	for (c = 0; c < PT_MAX_PY_FRAMES / PT_PY_CHUNK_WORDS && c < nch; c++) {
		key = at + c;
		ch = bpf_map_lookup_elem(&py_chunks, &key);
		if (!ch)
			return 0;
		__builtin_memcpy(ch->w, &ta->py[c * PT_PY_CHUNK_WORDS], sizeof(ch->w));
	}
	return at;
}

/* Indexes handed out by the innermost and the leaf tier (pt_tier_start), past each tier's
 * start (written by BPF only; user space reads how much of the table to read). */
__u64 tier_next[PT_TIERS] = {};

/* The index stack_ids holds for hash h, checked against the stack's depth, Python words and
 * leaf (a cheap collision check); *hit says whether h was there. */
static __always_inline __u32 stack_lookup(struct thread_state *ts, __u32 n, __u32 py_n, __u64 h,
					  bool *hit)
{
	struct pt_stack_rec *rec;
	__u32 *idxp, idx;

	idxp = bpf_map_lookup_elem(&stack_ids, &h);
	*hit = idxp != NULL;
	if (!idxp)
		return PT_STACK_UNKNOWN;
	idx = *idxp;
	rec = bpf_map_lookup_elem(&stacks, &idx);
	if (!rec || rec->nr != n || rec->py_nr != py_n || rec->pcs[0] != ts->pcs[0]) {
		count_err(PT_ERR_STACK_COLLISION);
		return PT_STACK_UNKNOWN;
	}
	return idx;
}

/* Store the stack in ts->pcs (its first n frames, the first py_n of the thread's Python words)
 * at the free index idx under hash h, and publish it; cut: the tier it was cut to (0: whole).
 * Returns the stack's index (another CPU's, if it published the same stack first). */
static __always_inline __u32 stack_store(struct thread_state *ts, __u32 n, __u32 py_n, __u64 h,
					 __u32 idx, __u32 cut)
{
	struct pt_stack_rec *rec;
	__u32 *idxp;

	rec = bpf_map_lookup_elem(&stacks, &idx);
	if (!rec)
		return PT_STACK_UNKNOWN;
	/* Fill the record before publishing its id, so a reader never sees a half stack. */
	__builtin_memcpy(rec->pcs, ts->pcs, sizeof(rec->pcs));
	rec->nr = n;
	rec->hash = h;
	rec->py_nr = 0;
	rec->py_at = 0;
	rec->cut = cut;
	if (py_n) {
		/* The pool, else the hash map. A stack whose words could not be stored keeps its
		 * native frames only, and is counted. */
		struct thread_aux *ta = thread_aux_get();     /* made by the walk: found */

		rec->py_at = pt_py_pool_store(ta, py_n);
		if (rec->py_at)
			rec->py_nr = py_n;
		else if (!ta || bpf_map_update_elem(&py_stacks, &idx, ta->py, BPF_ANY))
			count_err(PT_ERR_PY_STORE);
		else
			rec->py_nr = py_n;
	}
	if (bpf_map_update_elem(&stack_ids, &h, &idx, BPF_NOEXIST)) {
		/* Another CPU published the same stack first (its index wins; ours stays unused),
		 * or the id map is full. */
		idxp = bpf_map_lookup_elem(&stack_ids, &h);
		if (idxp)
			return *idxp;
		count_err(PT_ERR_STACK_FULL);
		return PT_STACK_UNKNOWN;
	}
	/* User space reads the new stack's code objects while the target still holds them. */
	if (rec->py_nr)
		emit_event(PT_EV_PY_STACK, idx, 0);
	return idx;
}

/* The stack in ts->pcs (n frames, py_n Python words) cut to tier t (pt_tier_start): found or
 * stored in that tier's part of the table; PT_STACK_UNKNOWN when that part is full. */
static __always_inline __u32 stack_tier(struct thread_state *ts, __u32 n, __u32 py_n, int t)
{
	__u32 cn = t == PT_TIER_LEAF ? 1 : n < PT_TIER_INNER_FRAMES ? n : PT_TIER_INNER_FRAMES;
	__u32 cpy = t == PT_TIER_LEAF ? (py_n ? 1 : 0) : py_n < PT_TIER_INNER_PY ? py_n : PT_TIER_INNER_PY;
	__u32 first = pt_tier_start(max_stacks, t);
	__u32 end = t == PT_TIER_LEAF ? max_stacks : pt_tier_start(max_stacks, PT_TIER_LEAF);
	__u64 h = 0x9e3779b97f4a7c15ULL ^ (__u64)t, at;
	__u32 i, idx;
	bool hit;

	/* Its own seed: a cut stack never takes the id of a whole one with the same frames. */
	for (i = 0; i < PT_TIER_INNER_FRAMES; i++) {
		if (i >= cn)
			break;
		h = mix64(h, ts->pcs[i]);
	}
	if (cpy) {
		struct thread_aux *ta = thread_aux_get();     /* made by the walk: found */

		if (!ta)
			return PT_STACK_UNKNOWN;
		for (i = 0; i < PT_TIER_INNER_PY; i++) {
			if (i >= cpy)
				break;
			h = mix64(h, ta->py[i]);
		}
	}
	h = mix64(h, cn | cpy << 16);
	idx = stack_lookup(ts, cn, cpy, h, &hit);
	if (hit)
		return idx;
	if (tier_next[t] >= end - first)
		return PT_STACK_UNKNOWN;
	at = __sync_fetch_and_add(&tier_next[t], 1);
	if (at >= end - first)
		return PT_STACK_UNKNOWN;
	idx = first + (__u32)at;
	return stack_store(ts, cn, cpy, h, idx, cn < n || cpy < py_n ? t : 0);
}

/* Map the stack in ts->pcs to its index, creating it if new. Never fails: a stack the whole
 * part of the table has no room for is kept cut (stack_tier), and one no tier has room for is
 * counted under PT_STACK_UNKNOWN; both in an error counter. */
static __always_inline __u32 stack_index(struct thread_state *ts, __u32 n, __u32 py_n, __u64 h)
{
	__u32 idx, whole_end = pt_tier_start(max_stacks, PT_TIER_INNER);
	bool hit;

	if (n == 0)
		return PT_STACK_UNKNOWN;
	idx = stack_lookup(ts, n, py_n, h, &hit);
	if (hit)
		return idx;
	/* Read first: once the whole part is full, no atomic on the shared line for every
	 * allocation from a stack not seen yet. */
	if (g.next_stack + 1 < whole_end) {
		idx = __sync_fetch_and_add(&g.next_stack, 1) + 1;
		if (idx < whole_end)
			return stack_store(ts, n, py_n, h, idx, 0);
	}
	idx = stack_tier(ts, n, py_n, PT_TIER_INNER);
	if (idx == PT_STACK_UNKNOWN)
		idx = stack_tier(ts, n, py_n, PT_TIER_LEAF);
	count_err(idx == PT_STACK_UNKNOWN ? PT_ERR_STACK_FULL : PT_ERR_STACK_CUT);
	return idx;
}

/* The stack at instruction ip with registers sp, bp (ip 0: at a function's entry, its return
 * address at [sp] on x86-64, in lr on arm64). lr: every caller keeps it in the thread's state
 * first, PT_ARCH_KEEP_LR (no store on x86-64): frame 0 at an entry, and at an ip the first
 * frame's return address where a leaf or a prologue still holds it in x30. In the state, not
 * an argument: a value live across the capture's helper calls was spilled to each program's
 * frame (on_rss_stat's chain went over the 448-byte budget on arm64). */
static __always_inline __u32 capture_at(struct thread_state *ts, __u64 ip, __u64 sp, __u64 bp)
{
	__u32 k = ip ? 1 : 0, n, py_n = 0, idx;
	__u64 h;

	n = unwind(ts, ip, sp, bp, &h);
	if (python && n)
		py_n = pt_py_walk(ts, &h);
	/* The stack this thread found last (an allocation or fault loop): stack_ids never drops
	 * an id, so what stack_index matched once for this hash, depth and frame 0 it matches
	 * again. Saves its hash lookup. */
	if (n && ts->last_h[k] == h && ts->last_n[k] == (n | py_n << 16) && ts->last_pc0[k] == ts->pcs[0])
		return ts->last_idx[k];
	idx = stack_index(ts, n, py_n, h);
	if (idx != PT_STACK_UNKNOWN) {
		ts->last_h[k] = h;
		ts->last_n[k] = n | py_n << 16;
		ts->last_pc0[k] = ts->pcs[0];
		ts->last_idx[k] = idx;
	}
	return idx;
}

static __always_inline __u32 capture(struct thread_state *ts, __u64 sp, __u64 bp)
{
	return capture_at(ts, 0, sp, bp);
}

#endif /* PEAKTRACE_STACK_BPF_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peaktrace.bpf.c — allocator uprobes, memory syscalls and RSS accounting, aggregated per stack
 * inside the kernel. Nothing per allocation crosses to user space; the ring buffer carries only
 * rare events (exit, new code mappings).
 *
 * Hot path budget (DESIGN.md §2): the traps themselves cost ~2.1 µs per allocation and ~1.1 µs
 * per free here, so the BPF work is kept to a task-storage lookup, one user-stack copy, one
 * stack-id hash lookup, one live-table bucket and a few atomics.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "peaktrace.h"
#include "peak.h"
#include "chunk.h"
#include "rapi.h"
#include "sample.h"
#include "inv.h"


char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Configuration, set by the loader between open and load. */
const volatile __u32 targ_tgid = 0;
const volatile __u32 live_bucket_mask = 0;  /* live buckets - 1 (power of two) */
const volatile __u32 max_stacks = PT_DEF_MAX_STACKS;
const volatile bool capture_stacks = true;
/* Unwind with the .eh_frame tables user/unwind_maps.c loads (--unwind dwarf), not frame pointers. */
const volatile bool dwarf_unwind = false;
/* The allocator is glibc: attribute each block to its arena from its chunk header (chunk.h). */
const volatile bool glibc_arenas = false;
/* jemalloc, tcmalloc, mimalloc: free_enter also looks at the thread's state, because their entry
 * points call each other. mimalloc's realloc frees a moved block through `free` (mi_free): that
 * free belongs to the realloc, accounted at its return. jemalloc's aligned sized operator delete
 * tail-jumps to sdallocx: one delete hits two free probes, the second before the block is really
 * freed (so nothing can have reused the pointer), and must not count as an unknown free.
 * glibc needs neither and keeps its free path without the lookup (false: no cost). */
const volatile bool free_checks_thread = false;
/* Find invocation boundaries in the target's Runtime API traffic (DESIGN.md §5). */
const volatile bool rapi_boundaries = false;
/* --sample-bytes: mean bytes between stack samples (sample.h); 0 = every allocation unwound. */
const volatile __u64 sample_bytes = 0;
/* The target runs CPython: read its frames (python.bpf.h). Off: the verifier drops the walk. */
const volatile bool python = false;

/* CPython layout and _PyRuntime's address (user/python.c; runtime is 0 until it is mapped). */
struct pt_py_offsets py_off = {};

/* Process-wide counters; user space reads them through the skeleton's .bss. */
struct pt_global g = {};

/* Per-thread state for the allocator call in progress. Task storage, not a per-CPU scratch:
 * a thread can migrate between the entry probe and the return probe, and a uprobe program
 * may be preempted, so anything that must survive (and the stack scratch) belongs to the task. */
struct thread_state {
	__u64 sp;        /* rsp at the outermost allocator entry */
	__u64 ra;        /* return address at that entry */
	__u64 size;      /* requested bytes */
	__u64 arg;       /* realloc: old pointer; posix_memalign: memptr */
	__u32 depth;     /* allocator calls in progress on this thread (outermost counted only) */
	__u32 fn;
	__u32 stack;     /* stack index of the outermost call */
	__u32 sc_nr;     /* syscall in progress (for the exit tracepoint) */
	__u64 heap_base; /* the thread arena heap of this thread's last allocation ... */
	__u32 heap_arena;/* ... and that arena's index (0: none cached) */
	__u32 tslot;     /* this thread's row in thread_slots (0: none yet) */
	/* --sample-bytes: bytes until this thread's next sample point; never 0 once drawn
	 * (gaps are >= 1 and a countdown stops above 0), so 0 means "not drawn yet". */
	__u64 sample_left;
	__u64 last_free; /* free_checks_thread: pointer the last free probe took */
	__u64 sc_arg0, sc_arg1, sc_arg2, sc_arg3;
	__u64 win[PT_STACK_WINDOW / 8];  /* copy of the user stack from rsp */
	__u64 pcs[PT_MAX_FRAMES];
	/* CPython (python.bpf.h): this thread's PyThreadState (re-checked at each use), the thread
	 * list head last searched in vain, the Python words of the stack being captured, and the
	 * walk's window on the data stack (valid during one walk only). */
	__u64 py_tstate;
	__u64 py_miss_head;
	__u64 py[PT_MAX_PY_FRAMES];
	__u64 pywin[PT_PY_WINDOW / 8];   /* copy of the Python data stack below a frame */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

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

/* key: stack index; value: its Python words (pyframe.h). Only stacks with Python frames have
 * an entry; not preallocated, so a target without Python costs nothing here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct pt_py_stack);
} py_stacks SEC(".maps");

/* key: stack index; value: its counters. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PT_DEF_MAX_STACKS);
	__type(key, __u32);
	__type(value, struct pt_stack_stats);
} stats SEC(".maps");

/* The live-pointer table: key: bucket number (hash of the pointer); value: 8 slots claimed with
 * compare-and-swap. An array lookup is inlined by the verifier, so insert and delete cost one
 * bucket scan instead of a hash-map update + delete (~2x cheaper on the free path, DESIGN.md §2).
 * max_entries is set by the loader (live slots / PT_BUCKET_SLOTS). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
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

/* glibc arenas. key: malloc_state address (heap_info.ar_ptr); value: arena index. */
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

/* key: enum pt_err; value: count. Per CPU so counting never contends. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PT_ERR_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} errors SEC(".maps");

/* Rare events only: exit, exec, new code mappings. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

static __always_inline void count_err(__u32 e)
{
	__u64 *v = bpf_map_lookup_elem(&errors, &e);

	if (v)
		*v += 1;
}

static __always_inline bool is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == targ_tgid;
}

static __always_inline struct thread_state *thread_get(bool create)
{
	return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline __u64 mix64(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 29);
}

#include "unwind.bpf.h"
#include "python.bpf.h"

static __always_inline void emit_event(__u32 type, __u64 addr, __u64 len);

/*
 * Stack capture. frames[0] = the return address at [sp] (exact on function entry). Then a
 * frame-pointer walk from bp, done inside one copy of PT_STACK_WINDOW bytes from sp: the kernel's
 * own walk (bpf_get_stackid) costs ~1.3 µs here mostly because it ends by faulting on the last
 * saved frame pointer; this one stops before reading an implausible frame pointer (zero,
 * misaligned, not above the previous frame, or more than 8 MiB above sp). With dwarf_unwind
 * set, frames 1.. come from the .eh_frame walk of unwind.bpf.h instead.
 *
 * Returns the number of PCs in ts->pcs and their hash in *hash.
 */
static __always_inline __u32 unwind(struct thread_state *ts, __u64 sp, __u64 bp, __u64 *hash)
{
	__u64 h = 0x84222325cbf29ce4ULL;
	__u64 prev = sp, fp = bp;
	__u32 n = 0, i;
	bool whole = true;

	if (bpf_probe_read_user(ts->win, sizeof(ts->win), (void *)sp)) {
		/* The stack top is less than a window above sp (deep in a short stack): read just
		 * the return address and walk with single reads. */
		whole = false;
		if (bpf_probe_read_user(ts->win, 8, (void *)sp)) {
			count_err(PT_ERR_STACK_READ);
			*hash = 0;
			return 0;
		}
	}
	ts->pcs[0] = ts->win[0];
	h = mix64(h, ts->win[0]);
	n = 1;
	if (!capture_stacks)
		goto out;
	if (dwarf_unwind) {
		/* CFI walk (unwind.bpf.h), frame pointers only where code has no CFI. */
		n = pt_dwarf_walk(ts, sp, bp, whole ? PT_STACK_WINDOW : 8, &h);
		goto out;
	}

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
		 * without frame pointers. */
		if (ra < 4096)
			break;
		ts->pcs[i] = ra;
		h = mix64(h, ra);
		n = i + 1;
		prev = fp;
		fp = next;
	}
out:
	*hash = mix64(h, n);
	return n;
}

/* Map the stack in ts->pcs to its index, creating it if new. Never fails: a stack that cannot
 * be stored is counted under PT_STACK_UNKNOWN and in an error counter. */
static __always_inline __u32 stack_index(struct thread_state *ts, __u32 n, __u32 py_n, __u64 h)
{
	struct pt_stack_rec *rec;
	__u32 *idxp, idx;

	if (n == 0)
		return PT_STACK_UNKNOWN;
	idxp = bpf_map_lookup_elem(&stack_ids, &h);
	if (idxp) {
		idx = *idxp;
		rec = bpf_map_lookup_elem(&stacks, &idx);
		/* A cheap collision check: depth and leaf must agree. */
		if (!rec || rec->nr != n || rec->py_nr != py_n || rec->pcs[0] != ts->pcs[0]) {
			count_err(PT_ERR_STACK_COLLISION);
			return PT_STACK_UNKNOWN;
		}
		return idx;
	}
	idx = __sync_fetch_and_add(&g.next_stack, 1) + 1;
	if (idx >= max_stacks) {
		count_err(PT_ERR_STACK_FULL);
		return PT_STACK_UNKNOWN;
	}
	rec = bpf_map_lookup_elem(&stacks, &idx);
	if (!rec)
		return PT_STACK_UNKNOWN;
	/* Fill the record before publishing its id, so a reader never sees a half stack. */
	__builtin_memcpy(rec->pcs, ts->pcs, sizeof(rec->pcs));
	rec->nr = n;
	rec->hash = h;
	rec->py_nr = 0;
	if (py_n) {
		/* A new stack is rare: the hash-map insert is off the hot path. A stack whose words
		 * could not be stored keeps its native frames only, and is counted. */
		if (bpf_map_update_elem(&py_stacks, &idx, ts->py, BPF_ANY))
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

static __always_inline __u32 capture(struct thread_state *ts, __u64 sp, __u64 bp)
{
	__u64 h;
	__u32 n = unwind(ts, sp, bp, &h), py_n = 0;

	if (python && n)
		py_n = pt_py_walk(ts, &h);
	return stack_index(ts, n, py_n, h);
}

/* Global live total; bumps peak_seq when a new maximum is set. */
/* Before a stack's counters change: keep what it held at the current invocation's peak. */
static __always_inline void inv_touch(struct pt_stack_stats *st)
{
	__u32 p = g.inv_seq & 1, q = p ^ 1;
	__u64 seq = g.inv[p].peak_seq, qseq = g.inv[q].peak_seq;

	if (st->inv_snap_seq[p] != seq) {
		st->inv_peak_count[p] = st->live_count;
		st->inv_peak_bytes[p] = st->live_bytes;
		st->inv_snap_seq[p] = seq;
	}
	/* The previous invocation has ended but user space may not have read it yet: a stack that
	 * changes now must first keep what it held at that invocation's peak too. */
	if (st->inv_snap_seq[q] != qseq && g.inv[q].state == PT_INV_ENDED) {
		st->inv_peak_count[q] = st->live_count;
		st->inv_peak_bytes[q] = st->live_bytes;
		st->inv_snap_seq[q] = qseq;
	}
}

static __always_inline void global_add(__s64 bytes, __s64 count)
{
	__s64 total = __sync_fetch_and_add(&g.live_bytes, bytes) + bytes;

	__sync_fetch_and_add(&g.live_count, count);
	if (bytes > 0) {
		struct pt_inv *inv = &g.inv[g.inv_seq & 1];

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
	if (alloc) {
		__sync_fetch_and_add(&st->alloc_count, wc);
		__sync_fetch_and_add(&st->alloc_bytes, wb);
		__sync_fetch_and_add(&st->live_count, wc);
		__sync_fetch_and_add(&st->live_bytes, wb);
	} else {
		__sync_fetch_and_add(&st->free_count, wc);
		__sync_fetch_and_add(&st->free_bytes, wb);
		__sync_fetch_and_add(&st->live_count, -wc);
		__sync_fetch_and_add(&st->live_bytes, -wb);
	}
}

/* Raise *peak to v (racy between CPUs; settled with a few compare-and-swaps). */
static __always_inline void max_s64(__s64 *peak, __s64 v)
{
	for (int i = 0; i < 3; i++) {
		__s64 old = *peak;

		if (v <= old || __sync_val_compare_and_swap(peak, old, v) == old)
			break;
	}
}

/*
 * Arena of a fresh glibc block (DESIGN.md §2, chunk.h): the chunk header says main arena, thread
 * arena or mmapped; a thread arena is named by the first word of its 64 MiB-aligned heap. A
 * thread keeps allocating from the same heap, so the heap -> arena index pair is cached in its
 * state: the second read and the map lookup happen only when the heap changes. Returns the packed
 * tid word (chunk.h) and sets *chunk to the chunk size.
 */
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
	row = bpf_map_lookup_elem(&thread_slots, &ts->tslot);
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
	row->extra++;
	count_err(PT_ERR_ARENA_FULL);
	return PT_TS_ARENA1;
}

/*
 * Arena of a fresh glibc block (DESIGN.md §2, chunk.h): the chunk header says main arena, thread
 * arena or mmapped; a thread arena is named by the first word of its 64 MiB-aligned heap. A
 * thread keeps allocating from the same heap, so the heap -> arena index pair is cached in its
 * state: the second read and the map lookup happen only when the heap changes. Returns the packed
 * owner word (chunk.h: thread row and sub-row, arena, kind) and sets *chunk to the chunk size.
 */
static __always_inline __u32 arena_of(struct thread_state *ts, __u64 ptr, __u64 size, __u32 tid,
				      __u64 *chunk)
{
	__u64 hdr, heap, ar;
	__u32 kind, idx, *known;

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
	return pt_tid_pack(pt_owner(ts->tslot, thread_sub(bpf_map_lookup_elem(&thread_slots, &ts->tslot), idx)),
			   kind, idx);
unknown:
	count_err(PT_ERR_CHUNK_READ);
	return pt_tid_pack(pt_owner(ts->tslot, PT_TS_UNKNOWN), PT_CHUNK_UNKNOWN, PT_ARENA_MAIN);
}

/* Count a glibc block in (alloc) or out of its arena, its chunk kind and its thread's row. */
static __always_inline void arena_account(__u32 tidw, __u64 size, __u64 chunk, bool alloc)
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

			if (alloc) {
				__sync_fetch_and_add(&a->alloc_count, 1);
				__sync_fetch_and_add(&a->alloc_bytes, size);
			} else {
				__sync_fetch_and_add(&a->free_count, 1);
				__sync_fetch_and_add(&a->free_bytes, size);
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
	if (alloc) {
		__sync_fetch_and_add(&t->alloc_count, 1);
		__sync_fetch_and_add(&t->alloc_bytes, size);
	} else {
		__sync_fetch_and_add(&t->free_count, 1);
		__sync_fetch_and_add(&t->free_bytes, size);
	}
	__sync_fetch_and_add(&t->live_chunk_bytes, cb);
}

/* Remove ptr from the live table. Returns true and its size/stack when it was live. */
static __always_inline bool live_take(__u64 ptr, __u64 *size, __u32 *stack, __u32 *tid)
{
	__u32 b = bucket_of(ptr);
	struct pt_live_bucket *bk = bpf_map_lookup_elem(&live, &b);
	struct pt_live_info *info;

	if (bk) {
		for (int i = 0; i < PT_BUCKET_SLOTS; i++) {
			struct pt_live_slot *s = &bk->s[i];

			if (s->ptr != ptr)
				continue;
			*size = s->size;
			*stack = s->stack;
			*tid = s->tid;
			/* Only one of two racing frees of the same pointer wins the slot. */
			if (__sync_val_compare_and_swap(&s->ptr, ptr, 0) == ptr)
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

/* Returns whether ptr was live (and now is not). */
static __always_inline bool do_free(__u64 ptr, bool quiet)
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
		arena_account(tid, size, pt_size_chunk(packed), false);
	stack_account(stack, size, false);
	__sync_fetch_and_add(&g.free_count, 1);
	__sync_fetch_and_add(&g.free_bytes, size);
	global_add(-(__s64)size, -1);
	return true;
}

static __always_inline void do_alloc(struct thread_state *ts, __u64 ptr, __u64 size, __u32 stack,
				     __u32 tid)
{
	__u32 b = bucket_of(ptr);
	struct pt_live_bucket *bk = bpf_map_lookup_elem(&live, &b);
	/* ~80 ns per allocation here; the coarse clock would do for an age but uprobe programs
	 * may not call bpf_ktime_get_coarse_ns. */
	__u64 now = bpf_ktime_get_ns(), chunk = size;
	bool stored = false;

	if (glibc_arenas)
		tid = arena_of(ts, ptr, size, tid, &chunk);
	else
		tid = pt_tid_pack(tid, PT_CHUNK_UNKNOWN, 0);
	size = pt_size_pack(size, chunk);

	if (bk) {
		int i;

		/* A pointer we still hold as live means its free was missed; retire it first. */
		for (i = 0; i < PT_BUCKET_SLOTS; i++) {
			if (bk->s[i].ptr == ptr) {
				count_err(PT_ERR_STALE_LIVE);
				do_free(ptr, true);
				break;
			}
		}
		for (i = 0; i < PT_BUCKET_SLOTS; i++) {
			struct pt_live_slot *s = &bk->s[i];

			if (s->ptr == 0 && __sync_val_compare_and_swap(&s->ptr, 0, ptr) == 0) {
				/* The pointer has not reached the program yet, so no free can race
				 * these stores. */
				s->size = size;
				s->stack = stack;
				s->tid = tid;
				s->ts = now;
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
			}
			if (sample_bytes && stack != PT_STACK_UNSAMPLED) {
				__sync_fetch_and_add(&g.sampled_count, 1);
				__sync_fetch_and_add(&g.sampled_bytes, size);
			}
			__sync_fetch_and_add(&g.alloc_count, 1);
			__sync_fetch_and_add(&g.alloc_bytes, size);
			return;
		}
	}
	size = pt_size_req(size);
	stack_account(stack, size, true);
	if (glibc_arenas)
		arena_account(tid, size, chunk, true);
	if (sample_bytes && stack != PT_STACK_UNSAMPLED) {
		__sync_fetch_and_add(&g.sampled_count, 1);
		__sync_fetch_and_add(&g.sampled_bytes, size);
	}
	__sync_fetch_and_add(&g.alloc_count, 1);
	__sync_fetch_and_add(&g.alloc_bytes, size);
	global_add(size, 1);
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

	switch (ts->fn) {
	case PT_FN_REALLOC:
	case PT_FN_REALLOCARRAY:
		old = ts->arg;
		if (!ret) {
			/* glibc's realloc(p, 0) frees p through free() (already seen by the free
			 * probe) and returns NULL; other failures leave p live. */
			if (ts->size == 0 && old)
				do_free(old, true);
			return 0;
		}
		if (old)
			do_free(old, false);
		do_alloc(ts, ret, ts->size, ts->stack, tid);
		return 0;
	case PT_FN_POSIX_MEMALIGN:
		/* Returns an error number; the pointer is stored through memptr. */
		if ((int)ret != 0)
			return 0;
		if (bpf_probe_read_user(&ptr, sizeof(ptr), (void *)ts->arg)) {
			count_err(PT_ERR_PTR_READ);
			return 0;
		}
		do_alloc(ts, ptr, ts->size, ts->stack, tid);
		return 0;
	default:
		if (!ret)
			return 0;
		do_alloc(ts, ret, ts->size, ts->stack, tid);
		return 0;
	}
}

/*
 * One entry program for every allocation function: the attach cookie says which one, so the
 * loader can attach all of them with a single uprobe-multi link (one RCU grace period to detach
 * instead of one per probe) and fall back to one perf-event uprobe per address on older kernels.
 */
SEC("uprobe")
int alloc_enter_prog(struct pt_regs *ctx)
{
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx);
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);

	switch (fn) {
	case PT_FN_MALLOC:
	case PT_FN_VALLOC:
	case PT_FN_PVALLOC:
		/* valloc/pvalloc: the requested size is counted, not the page rounding. */
		return alloc_enter(ctx, fn, a0, 0);
	case PT_FN_CALLOC:
		/* An overflowing product fails in calloc and is never counted. */
		return alloc_enter(ctx, fn, a0 * a1, 0);
	case PT_FN_REALLOC:
		return alloc_enter(ctx, fn, a1, a0);
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

SEC("uretprobe")
int alloc_return(struct pt_regs *ctx)
{
	return alloc_exit(ctx);
}

/*
 * free. No return probe, no thread state: a free only looks its pointer up. The probe may sit
 * a few bytes after the entry (glibc: free+3, past `test %rdi,%rdi`, so the kernel emulates the
 * `je` instead of single-stepping the test: 1.15 µs instead of 5.8 µs); rdi is unchanged there.
 */
SEC("uprobe")
int free_enter(struct pt_regs *ctx)
{
	__u64 ptr = PT_REGS_PARM1(ctx);

	if (!ptr || !is_target())
		return 0;
	if (free_checks_thread) {
		struct thread_state *ts = thread_get(true);

		if (!ts) {
			count_err(PT_ERR_THREAD_STATE);
			do_free(ptr, false);
			return 0;
		}
		if (ts->depth && (ts->fn == PT_FN_REALLOC || ts->fn == PT_FN_REALLOCARRAY) && ts->arg == ptr)
			return 0;
		/* Quiet when this thread's previous free probe took the same pointer. */
		if (do_free(ptr, ts->last_free == ptr))
			ts->last_free = ptr;
		return 0;
	}
	do_free(ptr, false);
	return 0;
}

/* ---- memory syscalls ---------------------------------------------------------------------- */

#define PROT_EXEC 0x4
#define MADV_DONTNEED 4
#define MADV_FREE 8

/* Stack of a syscall: inside an allocator call (glibc's sysmalloc mmaps) the allocation's own
 * stack is the useful one; otherwise unwind from the user registers saved at syscall entry. */
static __always_inline __u32 syscall_stack(struct thread_state *ts)
{
	struct pt_regs *regs;

	/* An unsampled allocation has no stack: a map call inside it (rare) is unwound here. */
	if (ts->depth && ts->stack != PT_STACK_UNSAMPLED)
		return ts->stack;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return capture(ts, BPF_CORE_READ(regs, sp), BPF_CORE_READ(regs, bp));
}

static __always_inline struct thread_state *syscall_enter(__u32 nr, __u64 a0, __u64 a1, __u64 a2,
							   __u64 a3)
{
	struct thread_state *ts;

	if (!is_target())
		return NULL;
	ts = thread_get(true);
	if (!ts) {
		count_err(PT_ERR_THREAD_STATE);
		return NULL;
	}
	ts->sc_nr = nr;
	ts->sc_arg0 = a0;
	ts->sc_arg1 = a1;
	ts->sc_arg2 = a2;
	ts->sc_arg3 = a3;
	return ts;
}

static __always_inline struct thread_state *syscall_exit(__u32 nr)
{
	struct thread_state *ts;

	if (!is_target())
		return NULL;
	ts = thread_get(false);
	if (!ts || ts->sc_nr != nr)
		return NULL;
	ts->sc_nr = 0;
	return ts;
}

static __always_inline __u64 page_round(__u64 len)
{
	return (len + 4095) & ~4095ULL;
}

static __always_inline void stack_map_account(__u32 stack, __u64 bytes, bool map)
{
	struct pt_stack_stats *st = bpf_map_lookup_elem(&stats, &stack);

	if (!st)
		return;
	if (map) {
		__sync_fetch_and_add(&st->mmap_count, 1);
		__sync_fetch_and_add(&st->mmap_bytes, bytes);
	} else {
		__sync_fetch_and_add(&st->munmap_count, 1);
		__sync_fetch_and_add(&st->munmap_bytes, bytes);
	}
}

static __always_inline void emit_event(__u32 type, __u64 addr, __u64 len)
{
	struct pt_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		count_err(PT_ERR_RINGBUF_LOST);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts = bpf_ktime_get_ns();
	e->addr = addr;
	e->len = len;
	bpf_ringbuf_submit(e, 0);
}

#define SYS_MMAP 9
#define SYS_MUNMAP 11
#define SYS_BRK 12
#define SYS_MREMAP 25
#define SYS_MADVISE 28

SEC("tp/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	/* addr, len, prot, flags, fd */
	syscall_enter(SYS_MMAP, ctx->args[1], ctx->args[2], ctx->args[3], ctx->args[4]);
	return 0;
}

SEC("tp/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct thread_state *ts = syscall_exit(SYS_MMAP);
	__u64 len;

	if (!ts || (unsigned long)ctx->ret > (unsigned long)-4096L)
		return 0;
	len = page_round(ts->sc_arg0);
	__sync_fetch_and_add(&g.mmap_count, 1);
	__sync_fetch_and_add(&g.mmap_bytes, len);
	stack_map_account(syscall_stack(ts), len, true);
	/* New code: user space re-reads /proc/PID/maps so symbols survive the target's exit. */
	if ((ts->sc_arg1 & PROT_EXEC) && (long)ts->sc_arg3 >= 0)
		emit_event(PT_EV_EXEC_MAP, ctx->ret, len);
	return 0;
}

SEC("tp/syscalls/sys_enter_munmap")
int on_munmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct thread_state *ts = syscall_enter(SYS_MUNMAP, ctx->args[0], ctx->args[1], 0, 0);
	__u64 len;

	if (!ts)
		return 0;
	len = page_round(ctx->args[1]);
	__sync_fetch_and_add(&g.munmap_count, 1);
	__sync_fetch_and_add(&g.munmap_bytes, len);
	stack_map_account(syscall_stack(ts), len, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_mremap")
int on_mremap_enter(struct trace_event_raw_sys_enter *ctx)
{
	/* addr, old_len, new_len */
	struct thread_state *ts = syscall_enter(SYS_MREMAP, ctx->args[0], ctx->args[1], ctx->args[2], 0);
	__u64 oldl, newl;

	if (!ts)
		return 0;
	__sync_fetch_and_add(&g.mremap_count, 1);
	oldl = page_round(ctx->args[1]);
	newl = page_round(ctx->args[2]);
	if (newl > oldl)
		stack_map_account(syscall_stack(ts), newl - oldl, true);
	else if (oldl > newl)
		stack_map_account(syscall_stack(ts), oldl - newl, false);
	return 0;
}

SEC("tp/syscalls/sys_enter_brk")
int on_brk_enter(struct trace_event_raw_sys_enter *ctx)
{
	syscall_enter(SYS_BRK, ctx->args[0], 0, 0, 0);
	return 0;
}

SEC("tp/syscalls/sys_exit_brk")
int on_brk_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct thread_state *ts = syscall_exit(SYS_BRK);
	__u64 cur = ctx->ret;

	if (!ts)
		return 0;
	__sync_fetch_and_add(&g.brk_count, 1);
	if (!g.brk_start)
		g.brk_start = cur;
	if (g.brk_cur && cur > g.brk_cur)
		stack_map_account(syscall_stack(ts), cur - g.brk_cur, true);
	else if (g.brk_cur && cur < g.brk_cur)
		stack_map_account(syscall_stack(ts), g.brk_cur - cur, false);
	g.brk_cur = cur;
	if (cur > g.brk_max)
		g.brk_max = cur;
	return 0;
}

SEC("tp/syscalls/sys_enter_madvise")
int on_madvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	/* DONTNEED and FREE give pages back: glibc trims thread-arena heaps this way. */
	if (!is_target() || (ctx->args[2] != MADV_DONTNEED && ctx->args[2] != MADV_FREE))
		return 0;
	__sync_fetch_and_add(&g.madv_count, 1);
	__sync_fetch_and_add(&g.madv_bytes, page_round(ctx->args[1]));
	return 0;
}

/* ---- invocation boundaries (Runtime API traffic) ------------------------------------------ */

/* key: tgid << 32 | fd; value: enum pt_rapi_fd_state (peaktrace.h): PT_RAPI_FD_AWAITING once
 * the socket sent "GET .../next" and awaits its answer; PT_RAPI_FD_CONNECTED for a Runtime API
 * socket found by user space at attach time, whose request may have been sent before we were
 * there. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} rapi_fds SEC(".maps");

/* Scratch for reading a write's first bytes (per CPU: used within one program run). */
struct rapi_scratch {
	char buf[PT_RAPI_HDR_SCAN + 16];   /* slack: pt_rapi_is_streaming reads past its index */
	char tail[8];
};

/* key: tgid << 32 | fd; value: the request id of a streaming response in progress on it. */
struct rapi_stream {
	__u32 id_len;
	char id[PT_REQID_LEN];
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct rapi_stream);
} rapi_streams SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rapi_scratch);
} rapi_buf SEC(".maps");

static __always_inline void inv_emit(__u32 type, __u64 seq, __u32 fd, const void *data, __u32 len)
{
	struct pt_inv_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		count_err(PT_ERR_RINGBUF_LOST);
		return;
	}
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->fd = fd;
	e->seq = seq;
	e->ts = bpf_ktime_get_ns();
	e->pad = 0;
	e->len = 0;
	if (data && len) {
		__u64 n = len;

		/* Clamp after an opaque move, or clang hands the helper the unclamped copy. */
		asm volatile("" : "+r"(n));
		if (n > PT_RAPI_COPY)
			n = PT_RAPI_COPY;
		if (bpf_probe_read_user(e->data, n, data) == 0)
			e->len = n;
	}
	bpf_ringbuf_submit(e, 0);
}

/* End the running invocation (or init phase). id may be NULL. */
static __always_inline void inv_end(__u32 outcome, const char *id, __u32 id_len, __u32 fd)
{
	__u64 seq = g.inv_seq;
	struct pt_inv *inv = &g.inv[seq & 1];

	if (inv->state != PT_INV_RUNNING)
		return;
	pt_inv_close(inv, &g, bpf_ktime_get_ns(), outcome);
	if (id && id_len) {
		if (id_len > PT_REQID_LEN)
			id_len = PT_REQID_LEN;
		for (int i = 0; i < PT_REQID_LEN; i++) {
			if (i >= id_len)
				break;
			inv->id[i] = id[i & (PT_RAPI_SCAN - 1)];
		}
		inv->id_len = id_len;
	}
	inv->boundary_fd = fd;
	inv->state = PT_INV_ENDED;
	inv_emit(PT_EV_INV_END, seq, fd, NULL, 0);
}

/* Start invocation seq + 1 in the other half of the double buffer. */
static __always_inline void inv_start(__u32 fd, const void *data, __u32 len)
{
	__u64 seq = g.inv_seq + 1;
	struct pt_inv *inv = &g.inv[seq & 1];
	__s64 rss = pt_rss_total(&g);

	/* The previous one never posted its result (or the init phase never asked for work). */
	inv_end(PT_OUT_UNFINISHED, NULL, 0, 0);
	/* Field by field: the record is too large for an inlined memset; id and traj[] are
	 * only read up to id_len and traj_n. */
	inv->end_ns = 0;
	inv->rss_end = inv->heap_end = 0;
	inv->alloc_count = inv->alloc_bytes = inv->free_count = inv->free_bytes = 0;
	inv->outcome = 0;
	inv->id_len = 0;
	inv->traj_n = 0;
	inv->seq = seq;
	inv->start_ns = bpf_ktime_get_ns();
	inv->rss_start = inv->rss_peak = rss;
	inv->heap_start = inv->heap_peak = g.live_bytes;
	inv->heap_peak_count = g.live_count;
	inv->alloc_count0 = g.alloc_count;
	inv->alloc_bytes0 = g.alloc_bytes;
	inv->free_count0 = g.free_count;
	inv->free_bytes0 = g.free_bytes;
	inv->peak_seq = __sync_fetch_and_add(&g.inv_peak_counter, 1) + 1;
	inv->boundary_fd = fd;
	inv->state = PT_INV_RUNNING;
	/* Publish last: the hot path reads g.inv_seq to pick the half it updates. */
	g.inv_seq = seq;
	inv_emit(PT_EV_INV_START, seq, fd, data, len);
}

/* A write-like syscall of the target: look at its first bytes for a Runtime API request. */
static __always_inline void rapi_write(__u32 fd, const void *buf, __u64 count)
{
	struct rapi_scratch *sc;
	struct rapi_stream *stream;
	__u32 zero = 0, len, id_off, id_len;
	__u64 key;
	int kind;

	if (!rapi_boundaries || !is_target())
		return;
	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return;
	key = (bpf_get_current_pid_tgid() & ~0xffffffffULL) | fd;
	stream = bpf_map_lookup_elem(&rapi_streams, &key);
	if (stream) {
		/* A streamed response in progress: the invocation ends with its last chunk. */
		__u32 n = count < 8 ? count : 8;

		if (bpf_probe_read_user(sc->buf, 3, buf))
			return;
		if (count >= 7 && bpf_probe_read_user(sc->tail, 7, buf + count - 7))
			return;
		if (pt_rapi_chunked_end(sc->buf, n, count >= 7 ? sc->tail : NULL)) {
			inv_end(PT_OUT_RESPONSE, stream->id, stream->id_len, fd);
			bpf_map_delete_elem(&rapi_streams, &key);
		}
		return;
	}
	if (count < PT_RAPI_NEXT_LEN)
		return;
	len = count < PT_RAPI_SCAN ? count : PT_RAPI_SCAN;
	if (bpf_probe_read_user(sc->buf, PT_RAPI_SCAN, buf) &&
	    bpf_probe_read_user(sc->buf, PT_RAPI_NEXT_LEN, buf))
		return;
	/* Only the common prefix "GET /2018" or "POST /201" is worth the full classification. */
	if (sc->buf[0] != 'G' && sc->buf[0] != 'P')
		return;
	kind = pt_rapi_classify(sc->buf, len, &id_off, &id_len);
	if (kind == PT_RAPI_RESPONSE) {
		/* The headers may say the body will be streamed. Read exactly what was written
		 * (up to PT_RAPI_HDR_SCAN): a longer read could cross into an unmapped page. */
		__u64 hl = count < PT_RAPI_HDR_SCAN ? count : PT_RAPI_HDR_SCAN;

		asm volatile("" : "+r"(hl));
		if (hl > PT_RAPI_HDR_SCAN)
			hl = PT_RAPI_HDR_SCAN;
		if ((hl <= PT_RAPI_SCAN || bpf_probe_read_user(sc->buf, hl, buf) == 0) &&
		    pt_rapi_is_streaming(sc->buf, (__u32)hl)) {
			struct rapi_stream rs = { .id_len = id_len < PT_REQID_LEN ? id_len : PT_REQID_LEN };

			for (int i = 0; i < PT_REQID_LEN; i++) {
				if (i >= rs.id_len)
					break;
				rs.id[i] = sc->buf[(id_off + i) & (PT_RAPI_HDR_SCAN - 1)];
			}
			/* A global counter, not count_err(): this program is near the verifier's
			 * limit and a map lookup here pushes it over. */
			if (bpf_map_update_elem(&rapi_streams, &key, &rs, BPF_ANY))
				__sync_fetch_and_add(&g.rapi_full, 1);
			return;
		}
	}
	switch (kind) {
	case PT_RAPI_NEXT: {
		__u32 one = PT_RAPI_FD_AWAITING;

		if (bpf_map_update_elem(&rapi_fds, &key, &one, BPF_ANY))
			__sync_fetch_and_add(&g.rapi_full, 1);
		/* Lambda's init phase ends when the runtime first asks for work. */
		if (g.inv_seq == 0)
			inv_end(PT_OUT_INIT, NULL, 0, fd);
		break;
	}
	case PT_RAPI_RESPONSE:
	case PT_RAPI_ERROR:
		inv_end(kind == PT_RAPI_RESPONSE ? PT_OUT_RESPONSE : PT_OUT_ERROR,
			sc->buf + (id_off & (PT_RAPI_SCAN - 1)), id_len, fd);
		break;
	case PT_RAPI_INIT_ERROR:
		if (g.inv_seq == 0)
			inv_end(PT_OUT_ERROR, NULL, 0, fd);
		break;
	}
}

SEC("tp/syscalls/sys_enter_write")
int on_write_enter(struct trace_event_raw_sys_enter *ctx)
{
	rapi_write(ctx->args[0], (const void *)ctx->args[1], ctx->args[2]);
	return 0;
}

SEC("tp/syscalls/sys_enter_sendto")
int on_sendto_enter(struct trace_event_raw_sys_enter *ctx)
{
	rapi_write(ctx->args[0], (const void *)ctx->args[1], ctx->args[2]);
	return 0;
}

SEC("tp/syscalls/sys_enter_writev")
int on_writev_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct { __u64 base, len; } iov;

	if (!rapi_boundaries || !is_target() || ctx->args[2] < 1)
		return 0;
	/* The request line is at the start of the first buffer. */
	if (bpf_probe_read_user(&iov, sizeof(iov), (const void *)ctx->args[1]))
		return 0;
	rapi_write(ctx->args[0], (const void *)iov.base, iov.len);
	return 0;
}

/*
 * The answer to "next" arrives as a read/recvfrom returning > 0 on the socket that asked. Its
 * fd and buffer come from the user registers saved at syscall entry (still intact at exit), not
 * from an entry probe: a runtime found waiting when we attach entered that syscall before us.
 */
static __always_inline int rapi_read_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs;
	__u32 *awaiting, fd;
	const void *buf;
	__u64 key;

	if (!rapi_boundaries || ctx->ret <= 0 || !is_target())
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fd = (__u32)BPF_CORE_READ(regs, di);
	buf = (const void *)BPF_CORE_READ(regs, si);
	key = (bpf_get_current_pid_tgid() & ~0xffffffffULL) | fd;
	awaiting = bpf_map_lookup_elem(&rapi_fds, &key);
	if (!awaiting)
		return 0;
	if (*awaiting == PT_RAPI_FD_CONNECTED) {
		/* Attached while the runtime waited for work: on a Runtime API socket only the
		 * answer to "next" is a 200 (posting a result gets 202). */
		char st[12];

		if (bpf_probe_read_user(st, sizeof(st), buf) || !pt_rapi_prefix(st, "HTTP/1.1 200", 12))
			return 0;
	}
	/* The first bytes of the answer to "next": the invocation starts now. */
	bpf_map_delete_elem(&rapi_fds, &key);
	inv_start(fd, buf, (__u32)ctx->ret);
	return 0;
}

SEC("tp/syscalls/sys_exit_read")
int on_read_exit(struct trace_event_raw_sys_exit *ctx)
{
	return rapi_read_exit(ctx);
}

SEC("tp/syscalls/sys_exit_recvfrom")
int on_recvfrom_exit(struct trace_event_raw_sys_exit *ctx)
{
	return rapi_read_exit(ctx);
}

/* libstdc++'s std::string (C++11 ABI) starts with its data pointer and length. */
struct cxx_string {
	__u64 ptr;
	__u64 len;
};

/* Copy a std::string at addr into the per-CPU scratch; returns its length (0 if unreadable). */
static __always_inline __u32 read_cxx_string(const void *addr, struct rapi_scratch *sc)
{
	struct cxx_string cs;
	__u64 n;

	if (bpf_probe_read_user(&cs, sizeof(cs), addr))
		return 0;
	n = cs.len;
	asm volatile("" : "+r"(n));
	if (n > PT_REQID_LEN)
		n = PT_REQID_LEN;
	if (!n || bpf_probe_read_user(sc->buf, n, (const void *)cs.ptr))
		return 0;
	return (__u32)n;
}

/*
 * Boundaries from uprobes on runtime functions. The attach cookie (enum pt_boundary_cookie) says
 * which edge this is: a user-named pair, or aws-lambda-cpp's own functions, whose arguments carry
 * the request id.
 */
SEC("uprobe")
int boundary_hit(struct pt_regs *ctx)
{
	struct rapi_scratch *sc;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 zero = 0, n;

	if (!is_target())
		return 0;
	switch (cookie) {
	case PT_BOUNDARY_START:
		inv_start(0, NULL, 0);
		return 0;
	case PT_BOUNDARY_END:
		inv_end(PT_OUT_RESPONSE, NULL, 0, 0);
		return 0;
	}
	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 0;
	if (cookie == PT_BOUNDARY_AWS_NEXT) {
		/* get_next() returns outcome<invocation_request, ...> through a hidden pointer,
		 * handed back in rax; invocation_request's request_id follows its payload string
		 * (32 bytes). */
		struct pt_inv *inv;

		n = read_cxx_string((const void *)(PT_REGS_RC(ctx) + 32), sc);
		inv_start(0, NULL, 0);
		inv = &g.inv[g.inv_seq & 1];
		for (int i = 0; i < PT_REQID_LEN; i++) {
			if (i >= n)
				break;
			inv->id[i] = sc->buf[i & (PT_RAPI_SCAN - 1)];
		}
		inv->id_len = n;
		return 0;
	}
	/* post_success/post_failure return an outcome through a hidden pointer too: rdi is it,
	 * rsi `this`, rdx the request id. */
	n = read_cxx_string((const void *)PT_REGS_PARM3(ctx), sc);
	inv_end(cookie == PT_BOUNDARY_AWS_SUCCESS ? PT_OUT_RESPONSE : PT_OUT_ERROR, sc->buf, n, 0);
	return 0;
}

/* ---- RSS ---------------------------------------------------------------------------------- */

/*
 * kmem:rss_stat fires whenever an mm's counter changes, with the counter's value in bytes.
 * curr == 1 means the mm is the current task's: that is how the target's mm_id is learned
 * (and re-learned after exec). Events for the same mm from other tasks (reclaim) have curr 0.
 */
SEC("tp/kmem/rss_stat")
int on_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	__s64 rss;
	int m = ctx->member;

	if (ctx->curr) {
		/* The current task's own mm: ours only if the task is the target. mm_id is a
		 * hash of the mm pointer, so once an mm is freed (the pre-exec copy in launch
		 * mode, the target at exit) another process may show the same id. */
		if (!is_target())
			return 0;
		g.mm_id = ctx->mm_id;
	} else if (!g.mm_id || ctx->mm_id != g.mm_id) {
		return 0;
	}
	if (g.exited)
		return 0;
	if (m < 0 || m >= PT_RSS_COUNT)
		return 0;
	g.rss[m & 3] = ctx->size;
	rss = pt_rss_total(&g);
	if (rss > g.rss_peak)
		g.rss_peak = rss;
	{
		struct pt_inv *inv = &g.inv[g.inv_seq & 1];

		if (inv->state == PT_INV_RUNNING) {
			__u32 n = inv->traj_n;
			__s64 step = (__s64)((__u64)inv->rss_peak >> 4), last;

			if (rss > inv->rss_peak)
				inv->rss_peak = rss;
			if (step < (1 << 20))
				step = 1 << 20;
			last = n ? inv->traj[(n - 1) & (PT_TRAJ_MAX - 1)].rss : inv->rss_start;
			if (rss - last >= step || last - rss >= step) {
				if (n >= PT_TRAJ_MAX)
					n = PT_TRAJ_MAX - 1;
				inv->traj[n & (PT_TRAJ_MAX - 1)].t_ns = bpf_ktime_get_ns();
				inv->traj[n & (PT_TRAJ_MAX - 1)].rss = rss;
				inv->traj_n = n + 1;
			}
		}
	}
	return 0;
}

/* ---- process lifetime --------------------------------------------------------------------- */

SEC("tp/sched/sched_process_exec")
int on_exec(void *ctx)
{
	if (!is_target())
		return 0;
	/* A new image: the pre-exec counters (in launch mode, a copy of peaktrace waiting to
	 * exec) are not the program's. */
	g.rss[0] = g.rss[1] = g.rss[2] = g.rss[3] = 0;
	g.rss_peak = 0;
	g.mm_id = 0;
	g.brk_start = g.brk_cur = g.brk_max = 0;
	emit_event(PT_EV_EXEC, 0, 0);
	return 0;
}

SEC("tp/sched/sched_process_exit")
int on_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	struct task_struct *task;
	struct pt_event *e;
	struct mm_struct *mm;
	__u64 id = bpf_get_current_pid_tgid();

	if ((id >> 32) != targ_tgid)
		return 0;
	/* group_dead (kernel 6.16+) says the last thread is leaving; older kernels: the leader. */
	if (bpf_core_field_exists(ctx->group_dead)) {
		if (!ctx->group_dead)
			return 0;
	} else if ((__u32)id != targ_tgid) {
		return 0;
	}
	/* The mm is torn down next: RSS falls to zero, which is no figure of the program's. */
	g.exited = 1;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_err(PT_ERR_RINGBUF_LOST);
		inv_end(PT_OUT_KILLED, NULL, 0, 0);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	task = bpf_get_current_task_btf();
	e->type = PT_EV_EXIT;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts = bpf_ktime_get_ns();
	e->exit_code = BPF_CORE_READ(task, exit_code);
	/* The tracepoint runs before exit_mm() since 6.16, so the mm's high-water mark is
	 * still readable; it is what /proc/PID/status calls VmHWM (in pages). */
	mm = BPF_CORE_READ(task, mm);
	if (mm)
		e->hiwater_rss = BPF_CORE_READ(mm, hiwater_rss) * 4096;
	bpf_ringbuf_submit(e, 0);
	/* After the exit event, so user space knows the high-water mark when it reads the
	 * invocation the process died in. */
	inv_end(PT_OUT_KILLED, NULL, 0, 0);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * peaktrace.h — the one contract between bpf/ and user/.
 *
 * Every struct, enum and limit that crosses the kernel/user line lives here, with __u64-style
 * types and a size assertion so a layout change breaks the build instead of the data.
 *
 * Who writes what (bpf/ declares each of these; user/ reaches them through the skeleton):
 *  - .rodata config (bpf/config.bpf.h): user space only, between open and load; BPF reads it,
 *    and the verifier drops the code a false flag disables. Map sizes the same way.
 *  - .bss g (struct pt_global): BPF, except what user space seeds after load and before the
 *    first probe is attached (listed at struct pt_global). User space otherwise only reads it,
 *    but for the timeline's interval maxima (tl_rss_max, tl_heap_max), which it swaps.
 *  - .bss py_off (pyframe.h): user space only, once _PyRuntime is mapped (address last).
 *  - .bss unw_ctl (unwind.h): user space publishes (sel, gen, mm = 0); the first BPF walk of a
 *    publication claims it by setting mm.
 *  - maps: BPF writes them all, except unwind_rows/unwind_maps/unwind_files (user space only),
 *    rapi_fds (user space seeds PT_RAPI_FD_CONNECTED entries at attach) and CPU 0's slot of
 *    the PT_ERR_UNWIND_ROWS_FULL/MAPS_FULL/FILE counters in errors (user/unwind/unwind_maps.c).
 *    The other "(user space)" PT_ERR_* values are counted in user space, never in the map.
 *  - attach cookies: user space sets them per probe (enum pt_alloc_fn, enum pt_boundary_cookie);
 *    the program switches on them.
 */
#ifndef PEAKTRACE_H
#define PEAKTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
/* The .eh_frame unwinder's rows, mappings and publication state (.bss unw_ctl). */
#include "unwind.h"
/* CPython frames: the Python words of a stack and the per-version offsets. */
#include "pyframe.h"

/* Frames kept per stack. frames[0] is the return address found at [rsp] on allocator entry
 * (the allocation site, exact without frame pointers); the rest come from the unwinder. */
#define PT_MAX_FRAMES 64
/* Bytes of user stack copied from rsp in one read; the frame-pointer walk runs inside it and
 * only reads user memory again for frames above it. */
#define PT_STACK_WINDOW 1024
/* Slots per live-table bucket: a bucket is probed in full, so no tombstones are needed. */
#define PT_BUCKET_SLOTS 8

/* Default table sizes (changed from the command line, set between open and load). */
#define PT_DEF_MAX_STACKS (1u << 16)
#define PT_DEF_LIVE_SLOTS (1u << 20)
#define PT_DEF_OVERFLOW (1u << 16)

/*
 * The stack table's tiers. When the whole stacks fill their part of the table, a new stack is
 * kept cut to its innermost frames (the allocating code, and the innermost Python frames),
 * where stacks that differ only further out share a slot; when that part fills too, cut to
 * its leaf (the allocation's call site and innermost Python line). Only then is a stack
 * counted under [unknown stack]. Indexes: whole [1, inner), innermost [inner, leaf), leaf
 * [leaf, max_stacks); each tier hands out its own indexes in order.
 */
enum { PT_TIER_WHOLE = 0, PT_TIER_INNER = 1, PT_TIER_LEAF = 2, PT_TIERS = 3 };
#define PT_TIER_INNER_FRAMES 12   /* native frames kept by the innermost tier */
#define PT_TIER_INNER_PY 8        /* Python words kept by the innermost tier */
/* The first index of tier t of a table of max stacks: an eighth for the innermost tier, a
 * sixty-fourth for the leaf tier (a program has a few thousand allocation call sites). */
static inline __u32 pt_tier_start(__u32 max, int t)
{
	return t == PT_TIER_WHOLE ? 1 : t == PT_TIER_INNER ? max - max / 8 : max - max / 64;
}

/* Stack index 0 is the "[unknown stack]" bucket: allocations whose stack could not be stored
 * are still counted, here. */
#define PT_STACK_UNKNOWN 0
/* With --sample-bytes, the stack of allocations not sampled: no index in the tables (lookups
 * miss), so their allocation and free skip all stack work; counted only in the totals. */
#define PT_STACK_UNSAMPLED 0xffffffffu

/* Allocator entry points peaktrace probes; also the attach cookie of alloc_enter_prog, which
 * reads each function's arguments by it (user/target/procmaps.h names them). */
enum pt_alloc_fn {
	PT_FN_MALLOC = 0, PT_FN_CALLOC, PT_FN_REALLOC, PT_FN_REALLOCARRAY, PT_FN_FREE,
	PT_FN_POSIX_MEMALIGN, PT_FN_ALIGNED_ALLOC, PT_FN_MEMALIGN, PT_FN_VALLOC, PT_FN_PVALLOC,
	PT_FN_MAX,
};
/* Attach-cookie flag on an enum pt_alloc_fn: a CPython object-allocator entry point
 * (--python-objects). Its blocks of 1..PT_PYMALLOC_MAX bytes are pymalloc's, not glibc chunks:
 * no arena accounting for them. Larger ones pymalloc takes from malloc. */
#define PT_FN_PYOBJ 0x100u
#define PT_PYMALLOC_MAX 512

/* Attach cookie of boundary_hit: which edge of an invocation this uprobe is. A user-named pair
 * (--boundary start=LIB:SYM,end=LIB:SYM), or aws-lambda-cpp's own functions (--boundary uprobe),
 * whose arguments carry the request id. */
enum pt_boundary_cookie {
	PT_BOUNDARY_START = 1,
	PT_BOUNDARY_END = 2,
	PT_BOUNDARY_AWS_NEXT = 3,      /* runtime::get_next() returned: outcome by sret (arch/) */
	PT_BOUNDARY_AWS_SUCCESS = 4,   /* runtime::post_success(const std::string &id, ...) */
	PT_BOUNDARY_AWS_FAILURE = 5,   /* runtime::post_failure(const std::string &id, ...) */
	PT_BOUNDARY_AWS_NEXT_CALL = 6, /* runtime::get_next() entered: the init phase ends */
};

/* Every path that can lose or distort data has a per-CPU counter, shown in every report. */
enum pt_err {
	PT_ERR_LIVE_FULL = 0,     /* live table and overflow map full: allocation not tracked as live */
	PT_ERR_STACK_FULL,        /* stack table full: counted under [unknown stack] */
	PT_ERR_STACK_COLLISION,   /* two stacks hashed alike: counted under [unknown stack] */
	PT_ERR_MISSED_RETURN,     /* allocator entry without its return (uretprobe lost) */
	PT_ERR_RINGBUF_LOST,      /* ring buffer full: a rare event was dropped */
	PT_ERR_UNKNOWN_FREE,      /* free of a pointer not allocated while tracing */
	PT_ERR_THREAD_STATE,      /* per-thread state could not be created: call not traced */
	PT_ERR_STACK_READ,        /* user stack unreadable: only frames read so far kept */
	PT_ERR_STALE_LIVE,        /* allocator returned a pointer still live in our table (missed free) */
	PT_ERR_PTR_READ,          /* posix_memalign result pointer unreadable */
	PT_ERR_RAPI_FULL,         /* (from g.rapi_full) Runtime API socket or stream table full */
	PT_ERR_INV_LOST,          /* (user space) invocations overwritten before they were read */
	/* .eh_frame unwinder (--unwind dwarf, bpf/unwind.bpf.h): why a stack was cut short, one
	 * count per cut stack (frames unwound so far are kept). */
	PT_ERR_UNWIND_NO_CFI,     /* a frame in code without CFI and without a usable frame pointer */
	PT_ERR_UNWIND_UNSUPPORTED,/* a CFI rule the row format cannot express (signal frame, ...) */
	PT_ERR_UNWIND_BAD_FRAME,  /* a CFA or frame pointer not above the previous frame, or > 8 MiB up */
	PT_ERR_UNWIND_READ,       /* a saved return address or rbp unreadable */
	PT_ERR_UNWIND_DEPTH,      /* more than PT_MAX_FRAMES frames */
	PT_ERR_UNWIND_FP_FALLBACK,/* stacks with frames unwound by frame pointer for lack of CFI */
	PT_ERR_UNWIND_PENDING,    /* stacks through a file whose tables were not loaded yet (built
	                           * while the target runs): frame pointers there, or cut */
	/* Counted by user space (user/unwind_maps.c writes CPU 0's slot; BPF never touches them). */
	PT_ERR_UNWIND_ROWS_FULL,  /* executable files left without CFI: row table full */
	PT_ERR_UNWIND_MAPS_FULL,  /* executable mappings beyond the mapping table */
	PT_ERR_UNWIND_FILE,       /* executable files whose CFI could not be read */
	/* glibc arenas (chunk.h): an allocation counted in totals but not in its arena's figures. */
	PT_ERR_ARENA_FULL,        /* arena table or (thread, arena) table full */
	PT_ERR_CHUNK_READ,        /* chunk header or heap_info unreadable or implausible */
	PT_ERR_CHUNK_SLACK,       /* chunk over 64 KiB larger than the request: its chunk bytes short */
	/* CPython frames (bpf/python.bpf.h, user/python.c). */
	PT_ERR_PY_READ,           /* a thread state or frame unreadable: Python frames cut there */
	PT_ERR_PY_DEPTH,          /* Python chains longer than PT_MAX_PY_FRAMES words, cut there */
	PT_ERR_PY_STORE,          /* Python words of a new stack not stored (py_stacks full) */
	PT_ERR_PY_CODE,           /* (user space) code objects unreadable when resolved (freed) */
	PT_ERR_PY_UNMATCHED,      /* (user space) Python frame runs without a native eval frame */
	PT_ERR_PY_LAYOUT,         /* (user space) CPythons whose frames cannot be read (offsets) */
	/* (user space) node images started without its perf-map flags (target/nodeflags.c). */
	PT_ERR_NODE_FLAGS,
	PT_ERR_STACK_CUT,         /* stack table's whole part full: counted under the stack cut to
	                           * its innermost frames (pt_tier_start) */
	PT_ERR_INV_STACKS_LOST,   /* (user space) invocations whose stacks at the peak were not read:
	                           * two newer starts first (their figures kept) */
	PT_ERR_PERF_MAP_CUT,      /* (user space) bytes of the JIT's perf map cut: past its budgets,
	                           * in holes or NUL runs, over-long or malformed lines
	                           * (symbolize/perfmap.h) */
	PT_ERR_RAPI_UNPARSED,     /* (from g.rapi_unparsed) Runtime API request lines not parsed */
	PT_ERR_SRET_UNKNOWN,      /* aws-lambda-cpp invocations started without their request id:
	                           * get_next's hidden result pointer not kept from its entry
	                           * (arm64 only: bpf/arch/arm64.bpf.h) */
	PT_ERR_COUNT,
};

/* One user stack: program counters, leaf first. Array map indexed by stack index. */
struct pt_stack_rec {
	__u64 hash;
	__u32 nr;
	__u32 py_nr;    /* Python words of this stack (0: none), ... */
	__u32 py_at;    /* ... in py_chunks[py_at ..] (py_nr words, PT_PY_CHUNK_WORDS a chunk);
			 * 0: in py_stacks[index] */
	__u32 cut;      /* 0: the whole stack; else the tier (PT_TIER_*) it was cut to because the
			 * table's larger tiers were full */
	__u64 pcs[PT_MAX_FRAMES];
};
_Static_assert(sizeof(struct pt_stack_rec) == 24 + 8 * PT_MAX_FRAMES, "pt_stack_rec layout");

/* The Python words of a stack (pyframe.h), leaf first. Hash map keyed by stack index, only
 * created for stacks that have Python frames (a non-Python target pays no memory for it):
 * where a stack's words go when the pool of chunks below is used up. */
struct pt_py_stack {
	__u64 w[PT_MAX_PY_FRAMES];
};
_Static_assert(sizeof(struct pt_py_stack) == 8 * PT_MAX_PY_FRAMES, "pt_py_stack layout");

/* The pool of Python words (stack.bpf.h py_chunks): an array of chunks handed out in order, a
 * stack's words in consecutive chunks from its py_at; chunk 0 is never handed out. */
#define PT_PY_CHUNK_WORDS 16
struct pt_py_chunk {
	__u64 w[PT_PY_CHUNK_WORDS];
};
_Static_assert(sizeof(struct pt_py_chunk) == 8 * PT_PY_CHUNK_WORDS, "pt_py_chunk layout");
_Static_assert(PT_MAX_PY_FRAMES % PT_PY_CHUNK_WORDS == 0, "whole chunks per stack");
_Static_assert(sizeof(struct pt_py_offsets) == 80, "pt_py_offsets layout");

/* Counters per stack. Array map indexed by stack index; updated with atomics.
 * What a stack holds live is not kept: it is alloc - free - unheld (pt_live_bytes_of in
 * peak.h), two atomics fewer on every allocation and every free.
 * peak_* is what the stack held at the last live-heap peak, valid when snap_seq equals the
 * global peak_seq; otherwise the stack has not changed since that peak and its live figure is
 * it (the lazy snapshot, see peak.h). */
struct pt_stack_stats {
	/* With --sample-bytes the counters of sampled stacks are weighted estimates (sample.h):
	 * bytes in bytes, counts (*_count) in units of 2^-PT_SAMPLE_COUNT_SHIFT allocation. */
	__u64 alloc_count;
	__u64 alloc_bytes;
	__u64 free_count;
	__u64 free_bytes;
	/* Allocated but never live: the live table had no room (PT_ERR_LIVE_FULL), so no free
	 * can ever subtract them. Rare; kept so live = alloc - free - unheld stays exact. */
	__s64 unheld_count;
	__s64 unheld_bytes;
	__s64 peak_count;
	__s64 peak_bytes;
	__u64 snap_seq;
	__u64 mmap_count;   /* mmap/mremap-grow calls made from this stack */
	__u64 mmap_bytes;
	__u64 munmap_count; /* munmap calls made from this stack */
	__u64 munmap_bytes;
	/* The same lazy snapshot for the peak of the current invocation, double-buffered by the
	 * invocation's parity so the last one can be read while the next one runs. */
	__s64 inv_peak_count[2];
	__s64 inv_peak_bytes[2];
	__u64 inv_snap_seq[2];
	/* Anonymous RSS this stack faulted in and still holds (bpf/rss.bpf.h), and what it held
	 * at the last RSS peak: rss_peak valid when rss_snap_seq equals pt_rss_global.peak_seq,
	 * else rss_now is it (the same lazy snapshot as the heap's, peak.h). */
	__s64 rss_now;
	__s64 rss_peak;
	__u64 rss_snap_seq;
	/* ... and at the current invocation's RSS peak, double-buffered like inv_peak_bytes:
	 * valid when rss_inv_seq[p] equals pt_rss_global.inv_peak_seq[p]. */
	__s64 rss_inv_peak[2];
	__u64 rss_inv_seq[2];
	/* Where its last attributed fault was and the user stack pointer then: the memory kind
	 * of its pages is decided from them against the maps at the end (user/rss/rsskind.c). */
	__u64 rss_addr;
	__u64 rss_sp;
};
_Static_assert(sizeof(struct pt_stack_stats) == 224, "pt_stack_stats layout");

/* One live allocation: the bucket's value of a slot, and the overflow map's value. */
struct pt_live_info {
	__u64 size;
	__u32 stack;
	__u32 tid;  /* allocating thread; chunk kind in the top 2 bits (chunk.h) */
	__u64 ts;   /* pt_global.epoch at allocation (which invocation made it) */
};
_Static_assert(sizeof(struct pt_live_info) == 24, "pt_live_info layout");

/* A bucket of the live table. The pointers, ptr[i] == 0 marking a free slot, fill one cache line
 * of their own: an insert checks every slot for a stale copy of its pointer and a free looks for
 * its pointer, and with each pointer beside its value (32-byte slots) that scan touched all four
 * lines of a bucket in a table larger than the L2 cache; now it touches one, and the slot's
 * value one more. */
struct pt_live_bucket {
	__u64 ptr[PT_BUCKET_SLOTS];
	struct pt_live_info v[PT_BUCKET_SLOTS];
};
_Static_assert(sizeof(struct pt_live_bucket) == 64 + 24 * PT_BUCKET_SLOTS, "pt_live_bucket layout");

/*
 * glibc arenas. Every glibc block is attributed, from its chunk header, to the main
 * arena, to one thread arena (by heap_info.ar_ptr) or to its own mmap. Arena index 0 is the main
 * arena, 1..PT_ARENA_OTHER-1 thread arenas in the order first seen, PT_ARENA_OTHER every thread
 * arena beyond the table (and PT_ERR_ARENA_FULL counts them). The per-thread table uses two
 * more pseudo arenas for mmapped and unclassified blocks.
 */
#define PT_MAX_ARENAS 256
#define PT_ARENA_MAIN 0
#define PT_ARENA_OTHER 255
#define PT_ARENA_MMAPPED 256
#define PT_ARENA_UNKNOWN 257
/* Threads get a row of their own in an array (an inlined lookup, not a hash map: ~250 ns less
 * per allocation + free pair here); the last row takes every thread beyond the table. */
#define PT_MAX_THREAD_SLOTS 4096
#define PT_TSLOT_OTHER (PT_MAX_THREAD_SLOTS - 1)
/* Blocks of at least this many bytes are "large": what a 32 KiB mmap threshold would move out
 * of the arenas (the setting peaktrace's advice measures). */
#define PT_ARENA_LARGE 32768

struct pt_arena_stats {
	__u64 addr;              /* malloc_state address (heap_info.ar_ptr); 0 for the main arena */
	__u64 alloc_count;
	__u64 alloc_bytes;
	__u64 free_count;
	__u64 free_bytes;
	__s64 live_count;        /* (user space: alloc - free, not kept in the kernel) */
	__s64 live_bytes;        /* requested bytes (user space: alloc - free) */
	__s64 live_chunk_bytes;  /* glibc chunk sizes (what mallinfo2's uordblks counts) */
	__u64 large_count;       /* allocations of >= PT_ARENA_LARGE bytes served by this arena */
	__u64 large_bytes;
	__s64 large_live_chunk_bytes;
	__s64 large_peak_chunk_bytes; /* maximum of large_live_chunk_bytes */
	__s64 peak_chunk_bytes;  /* maximum of live_chunk_bytes */
	__u64 pad[3];
};
_Static_assert(sizeof(struct pt_arena_stats) == 128, "pt_arena_stats layout");


/* A thread's blocks in one arena kind. Only the thread itself allocates into its row and, in
 * the common case, frees what it allocated: those counts are plain adds. Frees by other threads
 * (and everything in the shared "other threads" row) go to the xfree_* fields with atomics. User
 * space folds xfree_* into free_* and live_chunk_bytes (user/arenas/arenas.c read_thread_rows),
 * then fills live_* (alloc - free): the kernel never keeps live_*. */
struct pt_thread_arena {
	__u64 alloc_count;
	__u64 alloc_bytes;
	__u64 free_count;        /* frees of blocks this thread allocated (kernel: by itself) */
	__u64 free_bytes;
	union {
		__s64 live_count;        /* user space: alloc - free */
		__u64 xfree_count;       /* kernel: frees of these blocks by other threads */
	};
	union {
		__s64 live_bytes;        /* user space: alloc - free */
		__u64 xfree_bytes;
	};
	__s64 live_chunk_bytes;  /* kernel: less only the chunks freed by the thread itself */
	__u64 xfree_chunk_bytes; /* chunk bytes freed by other threads (user space: 0 once folded) */
};
_Static_assert(sizeof(struct pt_thread_arena) == 64, "pt_thread_arena layout");

/* Sub-rows of a thread's row: where its blocks live. A thread allocates from one arena (glibc
 * ties it to the arena it got first); a second one has its own sub-row, any further one is
 * counted with the second (and in `extra`, and PT_ERR_ARENA_FULL). */
enum pt_thread_sub { PT_TS_MAIN = 0, PT_TS_ARENA0, PT_TS_ARENA1, PT_TS_MMAPPED, PT_TS_UNKNOWN, PT_TS_N };

struct pt_thread_slot {
	__u32 tid;               /* 0 for the row of threads beyond the table */
	__u32 arena[2];          /* arena index of PT_TS_ARENA0 / PT_TS_ARENA1 (0: unused) */
	__u32 extra;             /* allocations from a third thread arena or more */
	struct pt_thread_arena c[PT_TS_N];
};
_Static_assert(sizeof(struct pt_thread_slot) == 16 + 64 * PT_TS_N, "pt_thread_slot layout");

/* rss_stat members, as in the kernel's enum (MM_FILEPAGES ...). */
enum { PT_RSS_FILE = 0, PT_RSS_ANON = 1, PT_RSS_SWAP = 2, PT_RSS_SHMEM = 3, PT_RSS_COUNT = 4 };

/* Value of the rapi_fds map, whose key is tgid << 32 | fd: PT_RAPI_FD_AWAITING once the socket
 * sent "GET .../next" and awaits its answer (BPF); PT_RAPI_FD_CONNECTED for a Runtime API socket
 * found by user space at attach time, whose request may have been sent before we were there. */
enum pt_rapi_fd_state { PT_RAPI_FD_AWAITING = 1, PT_RAPI_FD_CONNECTED = 2 };
/* Key of rapi_fds and rapi_streams: the process and its socket. */
#define PT_RAPI_FD_KEY(tgid, fd) (((__u64)(tgid) << 32) | (__u32)(fd))

/* Request ids are UUIDs (36 characters); room for longer ones from other runtimes. */
#define PT_REQID_LEN 64
/* Bytes of a Runtime API "next" response copied to user space, which reads the request id
 * from its headers. */
#define PT_RAPI_COPY 1024

#define PT_TRAJ_MAX 64

enum pt_inv_state { PT_INV_IDLE = 0, PT_INV_RUNNING = 1, PT_INV_ENDED = 2 };
enum pt_inv_outcome {
	PT_OUT_NONE = 0,
	PT_OUT_RESPONSE = 1,   /* POST .../response */
	PT_OUT_ERROR = 2,      /* POST .../error */
	PT_OUT_KILLED = 3,     /* the process died during the invocation */
	PT_OUT_INIT = 4,       /* the init phase ended (first GET .../next) */
	PT_OUT_UNFINISHED = 5, /* tracing stopped, or the next invocation began without an end */
};

/* One invocation (seq >= 1) or the init phase (seq 0). Two of them live in pt_global, indexed by
 * seq & 1: user space reads a finished one while the next runs. */
struct pt_inv {
	__u64 seq;
	__u64 start_ns;
	__u64 end_ns;
	/* pt_global.epoch taken at its start and at its end (0: not ended): a block whose epoch
	 * (pt_live_info.ts) is in [start_epoch, end_epoch) was allocated inside it. */
	__u64 start_epoch;
	__u64 end_epoch;
	__s64 rss_start;
	__s64 rss_peak;        /* true peak RSS within the invocation (kmem:rss_stat) */
	__s64 rss_end;
	__s64 heap_start;      /* live heap bytes */
	__s64 heap_peak;
	__s64 heap_peak_count;
	__s64 heap_end;
	__u64 alloc_count0;    /* global alloc/free counters at the start */
	__u64 alloc_bytes0;
	__u64 free_count0;
	__u64 free_bytes0;
	__u64 alloc_count;     /* ... and during the invocation, set at its end */
	__u64 alloc_bytes;
	__u64 free_count;
	__u64 free_bytes;
	__u64 peak_seq;        /* unique across invocations: stacks' inv_snap_seq compare to it */
	__u32 state;
	__u32 outcome;
	__u32 id_len;
	__u32 boundary_fd;     /* Runtime API socket that carried the boundary */
	char id[PT_REQID_LEN];
	/* RSS trajectory: a sample whenever RSS moved by max(1 MiB, peak/16) since the last one;
	 * when full, the last slot keeps being overwritten so the final state (death) is kept. */
	__u32 traj_n;
	__u32 traj_pad;
	struct { __u64 t_ns; __s64 rss; } traj[PT_TRAJ_MAX];
	/* The mm's high-water mark (hiwater_rss, bytes) at the end, read by BPF at the boundary:
	 * /proc/PID/status read later may already be reset (clear_refs) or gone. 0 if unknown. */
	__u64 hwm_end;
	/* The request id's whole length (id[] holds its first PT_REQID_LEN bytes) and its hash
	 * (rapi.h pt_rapi_hash_step over all of it; 0: not hashed). */
	__u64 id_hash;
	__u32 id_full_len;
	__u32 id_pad;
};
_Static_assert(sizeof(struct pt_inv) == 21 * 8 + 16 + PT_REQID_LEN + 8 + 16 * PT_TRAJ_MAX + 8 + 16,
	       "pt_inv layout");

/*
 * Process-wide state in .bss. BPF writes every field, and user space reads them through the
 * skeleton, except these, which user space seeds after load and before attaching any probe:
 *  - inv[0].state = PT_INV_RUNNING, inv[0].start_ns (now), inv[0].peak_seq = 1 and
 *    inv_peak_counter = 1: the init phase (seq 0) runs from then until the runtime first asks
 *    for work; BPF hands out peak_seq values after the counter;
 *  - attach mode only: rss[PT_RSS_ANON], rss[PT_RSS_FILE], rss[PT_RSS_SHMEM] from
 *    /proc/PID/status (RssAnon, RssFile, RssShmem), rss_peak as their sum, and
 *    inv[0].rss_start = inv[0].rss_peak = rss_peak: kmem:rss_stat reports a counter only when
 *    it changes.
 * User space also closes a copy of the running invocation at stop (pt_inv_close, inv.h), never
 * the record itself.
 */
struct pt_global {
	/* The first cache line (.bss starts on a page): what every allocation and free writes,
	 * and the peak it compares with. Nothing an allocation only reads is kept in it: a
	 * thread reading a line another CPU just wrote, then writing it, moves it twice. */
	__s64 live_bytes;
	__s64 live_count;
	__u64 alloc_count;
	__u64 alloc_bytes;
	__s64 peak_bytes;     /* maximum of live_bytes */
	__s64 peak_count;     /* live_count when peak_bytes was reached */
	/* Frees are not counted: they are alloc - live - unheld (bpf/inv.h pt_free_count), two
	 * atomics fewer on every free. unheld: allocated blocks the live table could not hold
	 * (PT_ERR_LIVE_FULL), never live, never freed from us. */
	__u64 unheld_count;
	__u64 unheld_bytes;
	/* Read by every allocation and free before the counters above change (peak.h), written
	 * only at a new peak: on the second line. */
	__u64 peak_seq;       /* bumped at every new live-heap peak */
	__u64 next_stack;     /* stack indexes handed out (index 0 is unknown) */
	/* RSS from kmem:rss_stat, in bytes */
	__u64 mm_id;
	__s64 rss[PT_RSS_COUNT];
	__s64 rss_peak;       /* max of FILE + ANON + SHMEM */
	/* syscalls */
	__u64 mmap_count;
	__u64 mmap_bytes;
	__u64 munmap_count;
	__u64 munmap_bytes;
	__u64 mremap_count;
	__u64 brk_count;
	__u64 brk_start;      /* first break seen */
	__u64 brk_cur;
	__u64 brk_max;
	__u64 madv_count;
	__u64 madv_bytes;
	__u64 exited;         /* the target's thread group died */
	/* live blocks and bytes of mmapped and unclassified glibc chunks (enum pt_chunk_kind; the
	 * arena kinds are the sums of the arenas' rows and are not kept here) */
	__s64 kind_live_count[4];
	__s64 kind_live_bytes[4];
	__s64 kind_live_chunk_bytes[4];
	__u64 arena_next;     /* thread arena indexes handed out */
	__u64 thread_slots;   /* thread rows handed out (row 0 unused) */
	/* invocations */
	__u64 rapi_full;      /* Runtime API table updates that failed (PT_ERR_RAPI_FULL) */
	__u64 rapi_unparsed;  /* Runtime API request lines not parsed (PT_ERR_RAPI_UNPARSED) */
	__u64 inv_seq;        /* current invocation (0 = init phase) */
	__u64 inv_peak_counter;
	/* --sample-bytes: allocations whose stack was sampled, exact (not weighted) */
	__u64 sampled_count;
	__u64 sampled_bytes;
	struct pt_inv inv[2];
	/* Timeline (user/timeline/timeline.c): maxima of RSS and of the live heap since user space
	 * last took them; it swaps in the current value at each sample, so a peak shorter than the
	 * sampling interval still shows in the sample after it. */
	__s64 tl_rss_max;
	__s64 tl_heap_max;
	/* Bumped at every invocation start and end (user space seeds 1, and bumps it once more
	 * when it closes the invocation still running): an allocation keeps the value it saw
	 * (pt_live_info.ts), which places it in its invocation exactly, for one plain load instead
	 * of a clock read (bpf_ktime_get_ns, ~30 ns) on every allocation. */
	__u64 epoch;
};
_Static_assert(__builtin_offsetof(struct pt_global, peak_seq) == 64, "pt_global: peak_seq off the counters' line");

/*
 * RSS attribution by page (bpf/rss.bpf.h), .bss rss_g. BPF writes it, except `before`, which user
 * space seeds in attach mode with g.rss[PT_RSS_ANON] (after load, before attaching). Every
 * change of the anonymous counter (kmem:rss_stat, member MM_ANONPAGES) lands in exactly one
 * field, so at any moment
 *   rss[ANON] == before + attributed + no_fault + other_task + table_full + raced
 *                - freed_unowned - (reclaimed - refaulted) - pending
 * (pt_rss_unattributed() in user/rss/rss.c). at_peak holds the same figures when the RSS
 * peak (g.rss_peak) was last raised.
 */
struct pt_rss_figures {
	__s64 anon;          /* rss[PT_RSS_ANON] */
	__s64 before;        /* resident before tracing (attach) or when the image was exec'd */
	__s64 attributed;    /* sum of the stacks' rss_now */
	__s64 no_fault;      /* grew in the target's own thread without a pending fault:
			      * MAP_POPULATE, mlock, MADV_POPULATE_*, get_user_pages */
	__s64 other_task;    /* grew from another task (curr 0): khugepaged, a debugger */
	__s64 table_full;    /* faulted in but the page table (rss_pages) was full */
	__s64 freed_unowned; /* decreases in the target with no attributed page to match */
	__s64 reclaimed;     /* decreases from another task (curr 0): reclaim, swap-out, ... */
	__s64 refaulted;     /* faults onto a page still attributed (swap-in after reclaim) */
	__s64 pending;       /* removed from stacks at a syscall's entry, not yet decremented */
	__s64 raced;         /* fault increases beyond one page or THP: another thread's fault
			      * counted in the same event (two CPUs at once), not attributed */
};

/* The file ([0]) or shmem ([1]) counter of one moment split by where it came from (rss.bpf.h):
 *   total == attributed + before + no_fault + other_task + vma_busy + table_full
 *            - released_unknown - reclaimed
 * where the last two are decrements no object was charged with (they stay on their objects). */
struct pt_rss_sh_figures {
	__s64 total;           /* rss[PT_RSS_FILE or PT_RSS_SHMEM] (set in at-peak copies only) */
	__s64 attributed;      /* sum of the objects' now */
	__s64 before;          /* resident before tracing, or at the exec */
	__s64 no_fault;        /* grew in the target's thread with no fault pending (MAP_POPULATE,
				* mlock, madvise WILLNEED+populate, get_user_pages) */
	__s64 other_task;      /* grew from another task (curr 0) */
	__s64 vma_busy;        /* a fault's mapping could not be looked up (bpf_find_vma busy) */
	__s64 table_full;      /* the objects' table was full */
	__s64 released_unknown;/* decreased in the target with no object known (a removal over
				* several mappings, truncation), or beyond what the object gained
				* while traced (its pages resident before attaching) */
	__s64 reclaimed;       /* decreased from another task: reclaim, another's truncation */
};

/* One file or shared-memory object with pages resident in the target (rss.bpf.h rss_objs;
 * key: its inode's kernel address, stable while the target maps it; 1 for the pages of
 * special mappings with no file, [vdso]: ino, dev and name 0). */
#define PT_RSS_OBJ_NAME 48
struct pt_rss_obj {
	__s64 now;             /* bytes of its pages resident in the target now */
	__s64 peak;            /* ... at the last RSS peak: valid when snap_seq equals
				* pt_rss_global.peak_seq, else now is it (lazy snapshot) */
	__u64 snap_seq;
	__u64 ino;             /* inode number and device (s_dev: major << 20 | minor), to find */
	__u32 dev;             /* its path in the target's maps */
	__u32 member;          /* PT_RSS_FILE or PT_RSS_SHMEM */
	char name[PT_RSS_OBJ_NAME]; /* its dentry's name (raw bytes: sanitize before printing) */
};
_Static_assert(sizeof(struct pt_rss_obj) == 88, "pt_rss_obj layout");

struct pt_rss_global {
	struct pt_rss_figures now;
	struct pt_rss_figures at_peak;
	__u64 peak_seq;      /* bumped at every new g.rss_peak (stacks' rss_snap_seq) */
	__u64 faults;        /* page faults of the target seen (user and kernel) */
	__u64 faults_used;   /* ... that made anonymous pages resident */
	__u64 odd_size;      /* fault increases of neither 4 KiB nor 2 MiB (see raced) */
	__u64 table_full_events;
	__u64 exec_reset;    /* 1 after an exec until the first anonymous change */
	/* Per invocation (by seq & 1): bumped at its start and at every new RSS peak of it;
	 * unique across invocations (from inv_counter; user space seeds [0] = counter = 1). */
	__u64 inv_peak_seq[2];
	__u64 inv_counter;
	__u64 removals_capped; /* removals or moves over more than 2 TiB: the rest not visited */
	__u64 stacks_cut;    /* fault stacks the unwinder cut short (counted here, not in the
			      * PT_ERR_UNWIND_* / PT_ERR_STACK_READ counters of allocations) */
	/* File-backed ([0]) and shared-memory ([1]) pages, per object (rss.bpf.h rss_sh_*): now
	 * and at the last RSS peak, a lazy snapshot like the stacks' (taken before the first
	 * change after a peak, so a new peak costs the anonymous path nothing more): sh_at_peak[i]
	 * is valid when sh_snap_seq[i] equals peak_seq, else sh_now[i] with total rss[] is it. */
	struct pt_rss_sh_figures sh_now[2];
	struct pt_rss_sh_figures sh_at_peak[2];
	__u64 sh_snap_seq[2];
	__u64 sh_exec_reset[2]; /* 1 after an exec until the first change of that counter */
	__u64 sh_faults;       /* file/shmem growth events resolved to their object */
	__u64 sh_vma_busy;     /* ... whose mapping could not be looked up (mmap lock taken) */
	__u64 sh_table_full_events;
	__u64 sh_split_removals; /* removals spanning several mappings: not charged to objects */
	__u64 sh_objs;         /* objects created in rss_objs (user space reads the maps for names) */
	__u64 sh_obj_reused;   /* faults on an inode at a freed one's address whose entry still had
				* figures: counted as table_full */
	__u64 map_gen;         /* bumped at each mmap, munmap, mremap, brk of the target: a thread's
				* cached file mapping (rss.bpf.h) is valid while it is unchanged */
	__u64 kind_ev_ns;      /* the last PT_EV_RSS_STACK's time (they are rate-limited) */
	__u64 kind_ev_skipped; /* stack faults in a new region not sent: rate limit, or the ring
				* buffer a quarter full (its room is for exits, execs, invocations) */
};

/* Rare events sent through the ring buffer (never one per allocation). */
enum pt_event_type {
	PT_EV_EXIT = 1,       /* target thread group died */
	PT_EV_EXEC_MAP = 2,   /* target mapped new code (refresh symbolization maps) */
	PT_EV_EXEC = 3,       /* target called execve; addr: first stack index of the new image */
	PT_EV_INV_START = 4,  /* an invocation began: seq, and the response bytes in data[] */
	PT_EV_INV_END = 5,    /* an invocation (or the init phase) ended: seq */
	PT_EV_PY_STACK = 6,   /* a new stack with Python frames: resolve its code objects now */
	PT_EV_RSS_OBJ = 7,    /* a new file/shmem object holds RSS: read the maps for its path now */
	PT_EV_RSS_STACK = 8,  /* a stack's attributed fault in a new region (its first, or 2 MiB or
			       * more from its last): addr, and the stack in len (user space tells
			       * a heap's pages while they are mapped) */
	PT_EV_INV_RECORD = 9, /* an ended invocation's whole record, just before its PT_EV_INV_END */
};
/* Ring buffer records lost, by enum pt_event_type (rb_lost[] in .bss; [0] unused), so a loss
 * names what it blinded. */
#define PT_RB_KINDS 16

struct pt_event {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__s32 exit_code;      /* PT_EV_EXIT: task->exit_code (status << 8 | signal) */
	__u64 ts;
	__u64 hiwater_rss;    /* PT_EV_EXIT: mm high-water mark in bytes, 0 if unknown */
	__u64 addr;           /* PT_EV_EXEC_MAP: mapping address */
	__u64 len;
};
_Static_assert(sizeof(struct pt_event) == 48, "pt_event layout");

/* PT_EV_INV_START / PT_EV_INV_END. */
struct pt_inv_event {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 fd;
	__u64 seq;
	__u64 ts;
	__u32 len;            /* bytes valid in data[] */
	__u32 pad;
	char data[PT_RAPI_COPY];
};
_Static_assert(sizeof(struct pt_inv_event) == 40 + PT_RAPI_COPY, "pt_inv_event layout");

/* PT_EV_INV_RECORD: the record as it was when the invocation ended. The double buffer's half
 * is reused when the invocation after next starts, which back-to-back short invocations did
 * before user space, reading the stacks of the one before, got to it (invocations_overwritten
 * 1-3 in 20 ONNX invocations of 2-35 ms); the ring buffer keeps every record in order. */
struct pt_inv_record_event {
	__u32 type;
	__u32 pad;
	struct pt_inv inv;
};
_Static_assert(sizeof(struct pt_inv_record_event) == 8 + sizeof(struct pt_inv), "pt_inv_record_event layout");

/*
 * The sandbox (--follow, several -p): every traced process together. The coordinating
 * peaktrace creates this one-entry array map; each process's own session reuses it in its BPF
 * object (sandbox.bpf.h) with its slot in sbx_slot. Each process's kmem:rss_stat handler
 * exchanges its RSS total into cur[slot] and adds the difference to sum, so the sum is kept in
 * the kernel and its peak is the peak of the sum, not a sum of peaks. Two sessions of one
 * process (the old image's, stopping, and the new one's, at an exec) write the same absolute
 * value into the same slot: no double count.
 */
#define PT_SBX_SLOTS 32
#define PT_SBX_INVS 64

/* One finished invocation of a process in the sandbox (its runtime): the peak of the sum while
 * it ran and each process's RSS at that moment. */
struct pt_sbx_inv {
	__u64 owner;          /* slot + 1 of the process whose invocation it was; 0: empty */
	__u64 seq;            /* that process's invocation number */
	__s64 start;          /* the sum when it started */
	__s64 peak;
	__u64 peak_ns;
	__s64 at_peak[PT_SBX_SLOTS];
};

struct pt_sandbox {
	__s64 sum;            /* RSS of every traced process now */
	__s64 peak;           /* the highest sum */
	__u64 peak_ns;
	__u64 updates;        /* rss_stat changes folded into the sum */
	__s64 cur[PT_SBX_SLOTS];       /* each process's RSS now */
	__s64 at_peak[PT_SBX_SLOTS];   /* each process's RSS when the sum peaked */
	__s64 own_peak[PT_SBX_SLOTS];  /* each process's own highest RSS */
	__u32 extension[PT_SBX_SLOTS]; /* requests to the Extensions API (/2020-01-01/extension/) */
	__u32 runtime[PT_SBX_SLOTS];   /* invocations started (Runtime API boundaries) */
	/* The invocation running now: inv_owner (slot + 1, 0: none) and its figures so far. */
	__u64 inv_owner;
	__u64 inv_seq;
	__s64 inv_start;
	__s64 inv_peak;
	__u64 inv_peak_ns;
	__s64 inv_at_peak[PT_SBX_SLOTS];
	__u64 inv_n;          /* invocations recorded in invs[], by inv_n % PT_SBX_INVS */
	__u64 inv_overlap;    /* an invocation started while another process's ran: not tracked */
	struct pt_sbx_inv invs[PT_SBX_INVS];
};

#endif /* PEAKTRACE_H */

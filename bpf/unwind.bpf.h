/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * unwind.bpf.h — .eh_frame unwinding in the kernel: x86-64, and arm64 through the PT_ARCH_ROW_*
 * macros of bpf/arch/ (where a row says the return address is, its PAC stripped).
 *
 * unwind() in stack.bpf.h calls pt_dwarf_walk() when the loader set dwarf_unwind; it uses
 * count_err(), mix64() and struct thread_state of state.bpf.h (the stack window ts->win and the
 * pcs[] being filled).
 *
 * Tables (bpf/unwind.h, loaded by user/unwind_maps.c):
 *  - unwind_rows: every file's CFI rows, concatenated (an ARRAY map: its lookups are inlined
 *    by the verifier, and keep the binary search's indices imprecise, see unwind.h);
 *  - unwind_maps: the target's executable mappings sorted by start, twice (two halves): user
 *    space rewrites the half BPF does not read, then flips unw_ctl.sel with one store. A
 *    sorted array costs log2(mappings) inlined lookups (<= 13); a hash keyed by page would
 *    cost a real hash lookup per frame and an entry per page of code;
 *  - unwind_files: (device, inode) -> rows, for code the published array does not cover yet:
 *    in launch mode the program runs before user space has read its maps (ld.so maps the
 *    libraries after exec), and after a dlopen until the refresh. bpf_find_vma() then names
 *    the file behind pc (only while the array is stale);
 *  - unwind_cache: per CPU, the row last found for a return address (most allocations come
 *    from a few call chains): a hit skips both searches.
 *
 * Per frame: find the mapping of (return address - 1), binary-search its rows, compute the
 * CFA from rsp or rbp (sp or x29), read the return address at CFA - 8 (arm64: where the row
 * says, or x30 in a fault's first frame) and the saved rbp (x29) if the row says
 * where, go up. Code without CFI (a PT_CFA_NONE row, no table, JIT code) is crossed with the
 * frame pointer when rbp looks like one. The walk ends at a PT_CFA_END row (_start, clone3),
 * at rbp == 0 in code without CFI (ld.so's _start), or is cut, counted by cause
 * (PT_ERR_UNWIND_*).
 *
 * User memory: ts->win holds up to PT_STACK_WINDOW bytes of stack; when a frame's slots lie
 * outside it, the window moves up to them with one read (never past the end of their page,
 * so a read next to the stack top cannot fail on bytes nobody needs): a deep stack costs one
 * user read per KiB, not one or two per frame.
 *
 * The verifier: every function that loops or does real work per frame is a global function
 * (pt_dwarf_walk, pt_unw_frame, the two searches, the by-file lookup). A global function is
 * verified once, for any arguments; a static one is re-verified at every call site and for
 * every state reaching it. Written as inlined code under bpf_loop, the walk needed 350K
 * instructions per program (with constants per frame and per stop cause multiplying the
 * callback's states) up to the 1M limit (the searches inlined); as global functions, ~10K.
 * A plain bounded loop calling pt_unw_frame verifies as fast as bpf_loop and runs faster.
 * Stack: the deepest call chain (alloc_enter_prog -> pt_dwarf_walk -> pt_unw_frame -> search /
 * bpf_find_vma callback) uses ~430 of the 512 bytes BPF allows in all frames together: keep
 * struct unw_walk and the locals small.
 */
#ifndef PEAKTRACE_UNWIND_BPF_H
#define PEAKTRACE_UNWIND_BPF_H

#include "state.bpf.h"
#include "unwind.h"

/* key: row index; value: one CFI row (unwind.h). max_entries set by the loader (rows).
 * Mmapable: user space copies the rows in (unwind_maps.c) instead of a syscall per 1024. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct pt_unwind_row);
} unwind_rows SEC(".maps");

/* key: half * PT_UNWIND_MAX_MAPS + i; value: the i-th executable mapping of that half, by
 * start address. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * PT_UNWIND_MAX_MAPS);
	__type(key, __u32);
	__type(value, struct pt_unwind_map);
} unwind_maps SEC(".maps");

/* key: (device, inode) of a file; value: its rows (for mappings not published yet). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_UNWIND_MAX_FILES);
	__type(key, struct pt_unwind_file_key);
	__type(value, struct pt_unwind_file);
} unwind_files SEC(".maps");

/* Which half of unwind_maps is live, for which mm, and its generation (user space writes it). */
struct pt_unwind_ctl unw_ctl = {};

/*
 * Frame cache: the row found for a return address, per CPU, direct-mapped. Allocation-heavy
 * code calls the allocator from the same few call chains over and over; a hit replaces the
 * mapping and row binary searches (~70 ns a frame here) with one inlined lookup (the whole
 * walk of allocbench's 4-frame stacks went from ~520 to ~275 ns over frame pointers). An entry is
 * valid for one publication of the mappings (a refresh may put other code at that address):
 * its tag mixes the address, the generation and the row itself, so a stale or half-written
 * entry never matches.
 */
#define UNW_CACHE_SLOTS 4096
struct unw_cache_ent {
	__u64 tag;
	__u64 row;              /* struct pt_unwind_row, as one word */
};

/* key: slot (hash of the return address); value: its cached row. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNW_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct unw_cache_ent);
} unwind_cache SEC(".maps");

static __always_inline __u32 unw_cache_slot(__u64 pc)
{
	return (__u32)((pc * 0x9E3779B97F4A7C15ULL) >> 40) & (UNW_CACHE_SLOTS - 1);
}

static __always_inline __u64 unw_cache_tag(__u64 pc, __u64 gen, __u64 row)
{
	/* Never 0, the "being written" tag. */
	return (mix64(pc ^ (gen << 48), row) | 1);
}

/* Beyond this above the allocator's rsp a CFA or frame pointer is not on this stack: the
 * default stack limit (a thread's stack is smaller still). */
#define UNW_MAX_SPAN (8ULL << 20)


/* struct pt_unw_memo.flags and unw_walk.memo. */
#define UNW_MEMO_VALID   1      /* the memo holds a whole walk */
#define UNW_MEMO_BP      2      /* the walk used the starting rbp (reuse needs the same) */
#define UNW_MEMO_FP      4      /* the walk crossed frames with frame pointers (counted) */
#define UNW_MEMO_BP_INIT 8      /* walk only: rbp is still the starting one */
#define UNW_MEMO_NO      16     /* walk only: not reusable (a read failed, or a file lookup
				 * through the current VMAs, which no publication fixes) */
#define UNW_MEMO_VMA     32     /* a frame was in anonymous memory (JIT code), known from the
				 * VMAs of the moment: reuse needs the same mm_lock_seq */

/* End the walk, cut short for this reason (enum pt_err). */
static __always_inline long unw_cut(struct unw_walk *w, __u32 why)
{
	w->stop = why;
	return 1;
}

/* 8 bytes of user stack at addr from the window, if it holds them. */
static __always_inline bool unw_in_win(struct unw_walk *w, __u64 addr)
{
	return addr >= w->win_lo && addr + 8 <= w->win_hi && !((addr - w->win_lo) & 7);
}

/*
 * Make the window hold [lo, lo + 8) (and what follows, up to PT_STACK_WINDOW bytes in lo's
 * page). A failed read zeroes the buffer: the window is then empty.
 */
static __always_inline int unw_rewindow(struct unw_walk *w, struct thread_state *ts, __u64 lo)
{
	__u64 len = 4096 - (lo & 4095);

	if (len > PT_STACK_WINDOW)
		len = PT_STACK_WINDOW;
	/* Clamp after an opaque move, or clang hands the helper the unclamped copy. */
	asm volatile("" : "+r"(len));
	if (len > PT_STACK_WINDOW || len < 8)
		len = 8;
	if (bpf_probe_read_user(ts->win, len, (void *)lo)) {
		w->win_lo = w->win_hi = 0;
		return -1;
	}
	w->win_lo = lo;
	w->win_hi = lo + len;
	return 0;
}

static __always_inline int unw_read(struct unw_walk *w, struct thread_state *ts, __u64 addr,
				    __u64 *val)
{
	__u64 off;

	if (!unw_in_win(w, addr)) {
		/* Misaligned (never in code a compiler wrote) or beyond the window: read it
		 * alone rather than move the window somewhere useless. */
		if (addr & 7)
			return bpf_probe_read_user(val, 8, (void *)addr) ? -1 : 0;
		if (unw_rewindow(w, ts, addr))
			return bpf_probe_read_user(val, 8, (void *)addr) ? -1 : 0;
	}
	off = (addr - w->win_lo) / 8;
	*val = ts->win[off & (PT_STACK_WINDOW / 8 - 1)];
	return 0;
}

/* unw_read for the walk itself: each word read goes into the thread's memo (in order), a failed
 * read makes the walk not reusable. */
static __always_inline int unw_read_log(struct unw_walk *w, struct thread_state *ts, __u64 addr,
					__u64 *val)
{
	struct pt_unw_memo *mo = &ts->memo[(w->memo >> 8) & 1];
	__u64 k = w->nreads;

	if (unw_read(w, ts, addr, val)) {
		w->memo |= UNW_MEMO_NO;
		return -1;
	}
	if (k >= PT_UNW_MEMO_READS) {
		w->memo |= UNW_MEMO_NO;
		return 0;
	}
	mo->addr[k & (PT_UNW_MEMO_READS - 1)] = addr;
	mo->val[k & (PT_UNW_MEMO_READS - 1)] = *val;
	w->nreads = k + 1;
	return 0;
}

/* The searches: global functions, each verified once, whose bounded loops over imprecise
 * indices prune to a few hundred instructions (unwind.h). */

/* Always 0, unknown to the verifier. The bounds each step learns about lo and hi are dropped
 * with it: kernels before 6.4 (6.1 measured) otherwise keep them, some step's lo < hi becomes
 * decided, lo and hi turn precise and no state of the 13 steps is pruned (over the 1M
 * instruction limit); 6.18 pruned them either way. One load a step. */
__u32 unw_opaque = 0;
#define UNW_OPAQUE0 (*(volatile __u32 *)&unw_opaque)

/* Index in unwind_maps of the published mapping holding pc, or -1. */
__noinline int pt_unw_map_search(__u32 half, __u32 nmaps, __u64 pc)
{
	__u32 lo = 0, hi = nmaps, base = half ? PT_UNWIND_MAX_MAPS : 0, key, mid;
	struct pt_unwind_map *m;
	int i;

	/* No clamp of hi here: a constant bound would make lo and hi exact and the verifier
	 * walk every path of the search. Beyond the half, lookups fail or find no mapping. */
	for (i = 0; i < PT_UNWIND_MAP_STEPS && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		key = base + mid;
		m = bpf_map_lookup_elem(&unwind_maps, &key);
		if (!m)
			return -1;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
		lo |= UNW_OPAQUE0;
		hi |= UNW_OPAQUE0;
	}
	if (lo == 0)
		return -1;
	key = base + lo - 1;
	m = bpf_map_lookup_elem(&unwind_maps, &key);
	if (!m || pc >= m->end)
		return -1;
	return (int)key;
}

/* Index in unwind_rows of the row in force at vaddr among rows[first, first + nrows), or -1
 * below the first one. */
__noinline int pt_unw_row_search(__u32 first, __u32 nrows, __u32 vaddr)
{
	__u32 lo = first, hi = first + nrows, mid;
	struct pt_unwind_row *r;
	int i;

	if (nrows > PT_UNWIND_MAX_ROWS)
		return -1;
	for (i = 0; i < PT_UNWIND_SEARCH_STEPS && lo < hi; i++) {
		mid = pt_unwind_mid(lo, hi);
		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return -1;
		pt_unwind_step(&lo, &hi, mid, r->pc, vaddr);
		lo |= UNW_OPAQUE0;
		hi |= UNW_OPAQUE0;
	}
	if (lo == first)
		return -1;
	return (int)(lo - 1);
}

static __always_inline bool unw_find_map(struct unw_walk *w, __u64 pc)
{
	struct pt_unwind_map *m;
	int idx = pt_unw_map_search(w->half, w->nmaps, pc);
	__u32 key;

	if (idx < 0)
		return false;
	key = idx;
	m = bpf_map_lookup_elem(&unwind_maps, &key);
	if (!m)
		return false;
	w->m_start = m->start;
	w->m_end = m->end;
	w->m_bias = m->bias;
	w->m_first = m->first;
	w->m_nrows = m->nrows;
	return true;
}

/* Weak: resolved only where the kernel has it (6.2+); has_rdonly_cast says so. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* The current task as an untrusted BTF pointer: the same probe-mem loads as through
 * bpf_get_current_task_btf() (the kfunc is a register move once verified), but the verifier
 * does not look up "task_struct__safe_*" types for each pointer it loads through it (a linear
 * search of the kernel's BTF each time on 6.18: ~1/4 of the start-up's verification). Before
 * 6.2 the trusted pointer itself, which allows the same direct loads. */
static __always_inline struct task_struct *unw_task(void)
{
	if (has_rdonly_cast)
		return bpf_rdonly_cast(bpf_get_current_task_btf(), bpf_core_type_id_kernel(struct task_struct));
	return bpf_get_current_task_btf();
}

struct unw_vma {
	__u64 start, end, pgoff;
	struct pt_unwind_file_key key;
	bool file;
};

static long unw_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct unw_vma *v = ctx;
	struct inode *inode;
	struct file *f;

	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	f = BPF_CORE_READ(vma, vm_file);
	if (!f)
		return 0;
	/* The inode /proc/PID/maps names, on plain filesystems. On overlayfs (6.6+: backing
	 * files) maps shows the overlay's inode, f_inode the real one: then this misses and
	 * the frame waits for the next refresh (the published array matches either way). */
	inode = BPF_CORE_READ(f, f_inode);
	v->key.ino = BPF_CORE_READ(inode, i_ino);
	v->key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	v->file = true;
	return 0;
}

/* For user space (unwind_maps.c, via BPF_PROG_TEST_RUN in its own context): the key the
 * by-file fallback below gives the file peaktrace mapped at unw_key_addr in its own address
 * space, through the same callback. On overlayfs neither fstat nor /proc/PID/maps names the
 * inode vm_file->f_inode is (Debian's 6.12 in a VM whose root is an overlay: devices 0:28,
 * 0:26 and 0:24 for one libc), so a table registered under either was never found here. */
__u64 unw_key_addr = 0;
struct pt_unwind_file_key unw_key_out = {};

static __always_inline int unw_key_of_own(void)
{
	struct unw_vma v = {};

	if (bpf_find_vma(bpf_get_current_task_btf(), unw_key_addr, unw_vma_cb, &v, 0) || !v.file)
		return 1;
	unw_key_out = v.key;
	return 0;
}

/* pc in no published mapping: ask the kernel which file it is in, and find that file's rows.
 * 0 with *out set; -2 when the file has no entry yet (user space builds tables while the target
 * runs, and gives every file it tried an entry, rows or not); -3 when pc is in anonymous memory
 * (JIT code: no rows while that VMA stays); -1 otherwise. */
__noinline int pt_unw_file_map(__u64 pc, struct pt_unwind_map *out)
{
	struct unw_vma v = {};
	struct pt_unwind_file *f;

	if (!out)
		return -1;
	/* -EBUSY when another thread holds mmap_lock for writing (mmap, munmap): no table. */
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, unw_vma_cb, &v, 0))
		return -1;
	out->start = v.start;
	out->end = v.end;
	if (!v.file)
		return -3;
	f = bpf_map_lookup_elem(&unwind_files, &v.key);
	if (!f)
		return -2;
	out->start = v.start;
	out->end = v.end;
	out->bias = v.start - v.pgoff * 4096 - f->adj;
	out->first = f->first;
	out->nrows = f->nrows;
	return 0;
}

static __always_inline bool unw_find_file(struct unw_walk *w, struct thread_state *ts, __u64 pc)
{
	struct pt_unwind_map *m = &w->fm;
	__u64 mm = (__u64)unw_task()->mm;
	__u32 seq = w->memo >> 32;
	int err;

	/* In the anonymous VMA this thread's walks met last, in the same address space (an exec
	 * starts another's sequence), and no VMA changed since the sequence read before that lookup: JIT code again, without bpf_find_vma (mmap_lock
	 * trylock and a tree walk per JIT frame). */
	if (!(seq & 1) && ts->unw_anon_seq == seq && ts->unw_anon_mm == mm &&
	    pc >= ts->unw_anon_lo && pc < ts->unw_anon_hi) {
		w->memo |= UNW_MEMO_VMA;
		return false;
	}
	err = pt_unw_file_map(pc, m);
	if (err == -2)
		w->pending = 1;
	/* Anonymous code (V8's JIT): an answer that holds while the VMAs do (mm_lock_seq). */
	w->memo |= err == -3 ? UNW_MEMO_VMA : UNW_MEMO_NO;
	if (err == -3 && !(seq & 1)) {
		ts->unw_anon_lo = m->start;
		ts->unw_anon_hi = m->end;
		ts->unw_anon_seq = seq;
		ts->unw_anon_mm = mm;
	}
	if (err)
		return false;
	w->m_start = m->start;
	w->m_end = m->end;
	w->m_bias = m->bias;
	w->m_first = m->first;
	w->m_nrows = m->nrows;
	return true;
}

/* The row in force at pc in the current mapping's file; NULL below its first row. */
static __always_inline struct pt_unwind_row *unw_find_row(struct unw_walk *w, __u64 pc)
{
	__u64 vaddr = pc - w->m_bias;
	__u32 key;
	int idx;

	if (vaddr > 0xffffffffULL || !w->m_nrows)
		return NULL;
	idx = pt_unw_row_search(w->m_first, w->m_nrows, (__u32)vaddr);
	if (idx < 0)
		return NULL;
	key = idx;
	return bpf_map_lookup_elem(&unwind_rows, &key);
}

/* The row for (return address - 1) in the frame cache, if this publication stored it there. */
static __always_inline bool unw_cache_get(struct unw_walk *w, __u64 look, struct pt_unwind_row *row)
{
	__u32 slot = unw_cache_slot(look);
	struct unw_cache_ent *e = bpf_map_lookup_elem(&unwind_cache, &slot);
	__u64 bits;

	if (!e)
		return false;
	bits = e->row;
	if (e->tag != unw_cache_tag(look, w->gen, bits))
		return false;
	__builtin_memcpy(row, &bits, sizeof(*row));
	return true;
}

static __always_inline void unw_cache_put(struct unw_walk *w, __u64 look,
					  const struct pt_unwind_row *row)
{
	__u32 slot = unw_cache_slot(look);
	struct unw_cache_ent *e = bpf_map_lookup_elem(&unwind_cache, &slot);
	__u64 bits;

	if (!e)
		return;
	__builtin_memcpy(&bits, row, sizeof(bits));
	/* A program preempted between these stores and another one reading the slot on this
	 * CPU sees a tag that does not match the row: a miss, never a wrong row. */
	e->tag = 0;
	e->row = bits;
	e->tag = unw_cache_tag(look, w->gen, bits);
}

/*
 * pt_unw_frame's end where the row says the return address is still in lr (arm64's x30: a
 * leaf, or a prologue before it saved x30). Only the frame of a fault's ip (memo 1, the first
 * frame) has its x30, kept by the capture in ts->uw_lr: a caller's was clobbered by its bl.
 * The walk then depends on a register its memo does not record: not reusable. The caller's
 * sp may equal this frame's (a leaf that did not move sp); the next frame makes progress.
 */
static __always_inline int unw_frame_lr(struct unw_walk *w, struct thread_state *ts, __u64 cfa,
					__u64 bp_at)
{
	__u64 n = w->n, bp = w->bp, ra, slot;

	if (n != 1 || !(w->memo & (1 << 8)))
		return unw_cut(w, PT_ERR_UNWIND_UNSUPPORTED);
	if (cfa < w->sp || cfa - w->sp0 > UNW_MAX_SPAN)
		return unw_cut(w, PT_ERR_UNWIND_BAD_FRAME);
	if (bp_at && unw_read_log(w, ts, bp_at, &bp))
		return unw_cut(w, PT_ERR_UNWIND_READ);
	if (bp_at)
		w->memo &= ~(__u64)UNW_MEMO_BP_INIT;
	w->memo |= UNW_MEMO_NO;
	ra = PT_ARCH_STRIP_RA(ts->uw_lr);
	if (ra == 0)
		return 1;       /* _start clears x30 */
	if (ra < 4096)
		return unw_cut(w, PT_ERR_UNWIND_BAD_FRAME);
	slot = n;
	asm volatile("" : "+r"(slot));
	ts->pcs[slot & (PT_MAX_FRAMES - 1)] = ra;
	w->h = mix64(w->h, ra);
	w->n = n + 1;
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
}

/* One frame: from (pc, sp, bp) of a frame to its caller's. 0, or 1 when the walk ends. */
__noinline int pt_unw_frame(struct unw_walk *w, struct thread_state *ts)
{
	struct pt_unwind_row row = {}, *r;
	__u64 look, cfa, ra, bp, bp_at = 0;
	bool have = false;
	__u64 n, slot;

	if (!w || !ts)
		return 1;
	n = w->n;
	look = w->pc - 1;       /* return addresses point after the call: look up the call */
	bp = w->bp;

	/* Only rows of the published mappings are cached (their generation tags them); the
	 * by-file fallback is for the moments before a refresh. */
	if (w->nmaps && unw_cache_get(w, look, &row)) {
		have = true;
	} else if (look >= w->m_start && look < w->m_end) {
		r = unw_find_row(w, look);
		if (r) {
			row = *r;
			have = true;
			if (w->m_published)
				unw_cache_put(w, look, &row);
		}
	} else if (unw_find_map(w, look)) {
		w->m_published = 1;
		r = unw_find_row(w, look);
		if (r) {
			row = *r;
			have = true;
			unw_cache_put(w, look, &row);
		}
	} else {
		/* Found (or not) through the VMAs of the moment, not a publication: unw_find_file
		 * says whether the memo may keep it. */
		if (unw_find_file(w, ts, look)) {
			w->m_published = 0;
			r = unw_find_row(w, look);
			if (r) {
				row = *r;
				have = true;
			}
		}
	}
	if (have && PT_ARCH_ROW_KIND(row) == PT_CFA_END)
		return 1;       /* outermost frame: the stack is complete */
	if (n >= PT_MAX_FRAMES)
		return unw_cut(w, PT_ERR_UNWIND_DEPTH);
	if (have && PT_ARCH_ROW_KIND(row) == PT_CFA_UNSUPPORTED)
		return unw_cut(w, PT_ERR_UNWIND_UNSUPPORTED);
	if (have && PT_ARCH_ROW_KIND(row) != PT_CFA_NONE) {
		if (PT_ARCH_ROW_KIND(row) == PT_CFA_RBP && (w->memo & UNW_MEMO_BP_INIT))
			w->memo |= UNW_MEMO_BP;
		if (pt_unwind_cfa_kind(PT_ARCH_ROW_KIND(row), &row, look, w->sp, w->bp, &cfa))
			return unw_cut(w, PT_ERR_UNWIND_UNSUPPORTED);
		PT_ARCH_ROW_FP_AT(row, cfa, bp_at);
		/* arm64: the return address still in x30 (0 on x86-64: no code), else where the
		 * row says (kept in the thread's state, off this frame: PT_ARCH_ROW_RA_AT). */
		if (PT_ARCH_ROW_RA_IN_LR(row))
			return unw_frame_lr(w, ts, cfa, bp_at);
		PT_ARCH_ROW_RA_KEEP(ts, row, cfa);
	} else {
		/* No CFI here. rbp == 0 marks the outermost frame (x86-64 psABI; the kernel
		 * starts a program with it, and ld.so's _start, which has no CFI, keeps it):
		 * the stack is complete. Otherwise trust rbp if it looks like a frame pointer
		 * of this frame (aligned, at or above its rsp, on this stack). */
		if (w->memo & UNW_MEMO_BP_INIT)
			w->memo |= UNW_MEMO_BP;
		if (w->bp == 0)
			return 1;
		if ((w->bp & 7) || w->bp < w->sp || w->bp - w->sp0 > UNW_MAX_SPAN)
			return unw_cut(w, PT_ERR_UNWIND_NO_CFI);
		cfa = PT_ARCH_FP_CFA(w->bp);
		bp_at = w->bp;
		/* The return address beside it: at CFA - 8 (arm64: a row saying so). */
		PT_ARCH_FP_RA_KEEP(ts, cfa);
		w->fp_frames++;
	}
	/* The caller's rsp must be above ours (progress) and on this stack. */
	if (cfa <= w->sp || cfa - w->sp0 > UNW_MAX_SPAN)
		return unw_cut(w, PT_ERR_UNWIND_BAD_FRAME);
	/* The lower slot first: with the usual rbp at CFA - 16, one window move covers both. */
	if (bp_at && bp_at < PT_ARCH_ROW_RA_AT(ts, cfa) && unw_read_log(w, ts, bp_at, &bp))
		return unw_cut(w, PT_ERR_UNWIND_READ);
	if (unw_read_log(w, ts, PT_ARCH_ROW_RA_AT(ts, cfa), &ra))
		return unw_cut(w, PT_ERR_UNWIND_READ);
	if (bp_at && bp_at >= PT_ARCH_ROW_RA_AT(ts, cfa) && unw_read_log(w, ts, bp_at, &bp))
		return unw_cut(w, PT_ERR_UNWIND_READ);
	ra = PT_ARCH_STRIP_RA(ra);
	if (bp_at)
		w->memo &= ~(__u64)UNW_MEMO_BP_INIT;    /* rbp is now a word read from the stack */
	if (ra == 0)
		return 1;       /* some runtimes end their chains with a zero return address */
	if (ra < 4096)
		return unw_cut(w, PT_ERR_UNWIND_BAD_FRAME);
	/* The mask kept (clang drops it where it knows n < 64, and 6.1's verifier loses that
	 * bound across the spill: "math between mem pointer and register with unbounded min"). */
	slot = n;
	asm volatile("" : "+r"(slot));
	ts->pcs[slot & (PT_MAX_FRAMES - 1)] = ra;
	w->h = mix64(w->h, ra);
	w->n = n + 1;
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
}

struct unw_replay {
	struct unw_walk *w;
	struct thread_state *ts;
	struct pt_unw_memo *mo;
	__u64 differs;
};

/* Words replayed inline before the loop: two per frame of a 4-frame stack. */
#define UNW_REPLAY_INLINE 8

/* One word of the memo's log read again (after the inline ones): 1 (stop) when it cannot be
 * read or differs. */
static long unw_replay_word(__u64 i, void *ctx)
{
	struct unw_replay *r = ctx;
	__u64 k = (i + UNW_REPLAY_INLINE) & (PT_UNW_MEMO_READS - 1), v;

	if (unw_read(r->w, r->ts, r->mo->addr[k], &v) || v != r->mo->val[k]) {
		r->differs = 1;
		return 1;
	}
	return 0;
}

/* 0 when every word the memo's walk read still holds what it read then (through the same
 * window), so the walk would find the same frames again. The first UNW_REPLAY_INLINE words in a
 * bounded loop, the rest under bpf_loop, whose callback the verifier checks once: all 128 as a
 * bounded loop were half of what a program with a stack capture cost to verify (~20K of ~40K
 * instructions, in each of them); all under bpf_loop cost allocbench's malloc entry ~15 ns
 * (a call per word). */
__noinline int pt_unw_replay(struct unw_walk *w, struct thread_state *ts, struct pt_unw_memo *mo)
{
	struct unw_replay r = { .w = w, .ts = ts, .mo = mo };
	__u32 n, i;
	__u64 v;

	if (!w || !ts || !mo)
		return -1;
	n = mo->nreads;
	for (i = 0; i < UNW_REPLAY_INLINE && i < n; i++) {
		if (unw_read(w, ts, mo->addr[i], &v) || v != mo->val[i])
			return -1;
	}
	if (n <= UNW_REPLAY_INLINE)
		return 0;
	n -= UNW_REPLAY_INLINE;
	bpf_loop(n < PT_UNW_MEMO_READS - UNW_REPLAY_INLINE ? n : PT_UNW_MEMO_READS - UNW_REPLAY_INLINE,
		 unw_replay_word, &r, 0);
	return r.differs ? -1 : 0;
}

/*
 * Frames 1.. of the stack whose frame 0 (ts->pcs[0], the return address at the allocator's
 * entry: [sp] on x86-64, x30 on arm64) is already recorded. The allocator's own frame has
 * CFA = sp + 8 at its entry on x86-64 (sp on arm64: PT_ARCH_ENTRY_SP_ADJ), so the walk starts
 * in the caller: pc = pcs[0], sp = that CFA, rbp (x29) unchanged.
 * ts->win holds [sp, sp + win_len). Returns the number of pcs; *hash is updated.
 */
/* win_len | UNW_AT_IP: pcs[0] is the instruction itself + 1 (read as a return address), sp that frame's own rsp (the row is
 * found for pc - 1, as for a return address), not a return address at [sp]. */
#define UNW_AT_IP (1ULL << 63)

/*
 * The address space's mmap_lock write sequence (mm->mm_lock_seq, 6.4+ with per-VMA locks): odd
 * while a writer holds the lock, bumped again at its unlock; every change of a VMA (mmap,
 * munmap, mremap, mprotect, exec) happens under that lock. Two equal even readings bracket a
 * stretch in which no VMA changed. 1 (odd: never reusable) on kernels without it.
 */
/* 6.4-6.12: mm_lock_seq is an int bumped by one at each write unlock (vma_end_write_all),
 * never odd while the lock is held; 6.13 made it a seqcount_t. */
struct mm_struct___int_seq {
	int mm_lock_seq;
} __attribute__((preserve_access_index));

static __always_inline __u32 unw_mm_seq(struct task_struct *task)
{
	struct mm_struct *mm = task->mm;

	if (!mm)
		return 1;
	/* Direct loads through the task's BTF pointer: no helper call per hop. */
	if (bpf_core_field_exists(((struct mm_struct *)0)->mm_lock_seq.sequence))
		return mm->mm_lock_seq.sequence;
	/* The int: doubled, so it stays even (odd means "a writer holds it" above) and two
	 * readings are equal exactly when no write unlock came between them. Nothing tells a
	 * writer in progress here: a walk that saw VMAs mid-change is reused only until that
	 * writer unlocks, as the kernel's own per-VMA lock readers are. */
	if (bpf_core_field_exists(((struct mm_struct___int_seq *)0)->mm_lock_seq))
		return (__u32)((struct mm_struct___int_seq *)mm)->mm_lock_seq << 1;
	return 1;
}

__noinline __u32 pt_dwarf_walk(struct thread_state *ts, __u64 sp, __u64 bp, __u64 win_len,
			       __u64 *hash)
{
	struct task_struct *task = unw_task();
	/* gen before sel, in this order: user space stores sel first, then gen (unwind_maps.c),
	 * so a walk that sees a new generation also sees the new mappings, and rows of an older
	 * set are never cached under a newer generation. */
	__u64 gen = *(volatile __u64 *)&unw_ctl.gen;
	__u64 sel = *(volatile __u64 *)&unw_ctl.sel;
	__u64 mm = (__u64)task->mm, owner = unw_ctl.mm;
	__u32 vmaseq = unw_mm_seq(task);
	bool at_ip = win_len & UNW_AT_IP;
	struct pt_unw_memo *mo;
	struct unw_walk *w;
	int i;

	/* A global function's pointer arguments may be NULL to the verifier. */
	if (!ts || !hash || unw_pre_exec)
		return 1;
	/* What the walk started from goes into w at once and is read back from there after
	 * the calls below: kept in locals, the values live across those calls were spilled to
	 * this frame (96 bytes, now 64), which sits under every capture's deepest chain. */
	w = &ts->uw;
	__builtin_memset(w, 0, sizeof(*w));
	w->sp = sp + PT_ARCH_ENTRY_SP_ADJ;
	w->bp = bp;
	w->sp0 = sp;
	w->bp0 = bp;
	w->win_lo = sp;
	w->win_hi = sp + (win_len & ~UNW_AT_IP);
	w->n = 1;
	w->pc = ts->pcs[0];
	w->at_gen = gen;
	w->at_sel = sel;
	w->at_mm = mm;
	w->memo = UNW_MEMO_BP_INIT | (at_ip ? 1 << 8 : 0) | (__u64)vmaseq << 32;
	/* at_ip: pcs[0] is already the faulting ip + 1 (stack.bpf.h unwind), read as a return
	 * address like every other frame. */
	if (at_ip)
		w->sp = sp;
	w->h = *hash;
	/* The published mappings describe one address space: claim a fresh publication for
	 * ours; after an exec (another mm) they are stale until the next refresh, and only the
	 * by-file fallback is used. */
	if (owner == 0)
		owner = __sync_val_compare_and_swap(&unw_ctl.mm, 0, mm) ?: mm;
	if (owner == mm) {
		w->half = sel >> 32;
		w->nmaps = (__u32)sel;
		w->gen = gen;
	}
	mo = &ts->memo[at_ip ? 1 : 0];
	/* The same start, tables and address space as this thread's last walk of this kind, and
	 * every word it read unchanged: the same frames (an allocation loop, a loop of faults
	 * through one buffer). Compared, not searched: no row lookups and no hashing. */
	if (w->nmaps && (mo->flags & UNW_MEMO_VALID) && mo->sp == sp && mo->pc0 == w->pc &&
	    mo->gen == gen && mo->sel == sel && mo->mm == mm &&
	    (!(mo->flags & UNW_MEMO_BP) || mo->bp == bp) &&
	    (!(mo->flags & UNW_MEMO_VMA) || mo->vmaseq == vmaseq) && !pt_unw_replay(w, ts, mo)) {
		/* Only the frames it found: the whole array is 64 words, a short stack a few,
		 * and the words past n are never read (struct pt_stack_rec.nr). */
		for (i = 1; i < PT_MAX_FRAMES && i < mo->n; i++)
			ts->pcs[i] = mo->pcs[i];
		if (mo->stop)
			count_err(mo->stop);
		if (mo->flags & UNW_MEMO_FP)
			count_err(PT_ERR_UNWIND_FP_FALLBACK);
		*hash = mo->h;
		return mo->n;
	}
	/* A replay that moved the window left it elsewhere: start with none (read on demand). */
	if (w->win_lo != w->sp0)
		w->win_lo = w->win_hi = 0;
	mo->flags = 0;
	for (i = 0; i < PT_MAX_FRAMES; i++)
		if (pt_unw_frame(w, ts))
			break;
	if (w->stop)
		count_err(w->stop);
	if (w->fp_frames)
		count_err(PT_ERR_UNWIND_FP_FALLBACK);
	if (w->pending)
		count_err(PT_ERR_UNWIND_PENDING);
	*hash = w->h;
	vmaseq = w->memo >> 32;
	/* A frame known from the VMAs: only if none changed during the walk. */
	if ((w->memo & UNW_MEMO_VMA) && ((vmaseq & 1) || unw_mm_seq(unw_task()) != vmaseq))
		w->memo |= UNW_MEMO_NO;
	if (w->nmaps && !(w->memo & UNW_MEMO_NO) && w->stop != PT_ERR_UNWIND_READ) {
		mo = &ts->memo[(w->memo >> 8) & 1];
		mo->sp = w->sp0;
		mo->bp = w->bp0;
		mo->pc0 = ts->pcs[0];
		mo->gen = w->at_gen;
		mo->sel = w->at_sel;
		mo->mm = w->at_mm;
		mo->h = w->h;
		mo->n = w->n;
		mo->nreads = w->nreads;
		mo->vmaseq = vmaseq;
		mo->stop = w->stop;
		__builtin_memcpy(mo->pcs, ts->pcs, sizeof(mo->pcs));
		mo->flags = UNW_MEMO_VALID | (w->memo & (UNW_MEMO_BP | UNW_MEMO_VMA)) |
			    (w->fp_frames ? UNW_MEMO_FP : 0);
	}
	return w->n;
}

/*
 * 0 when this thread's fault walk memo (memo[1]), whose hash is h, is what a walk from a fault
 * at (ip, sp, bp) would reuse now: the same start, publication and address space, the VMAs
 * unchanged if it crossed JIT code, and every word it read unchanged (rss.bpf.h's fault memo
 * asks this instead of walking).
 */
__noinline int pt_unw_fault_memo_holds(struct thread_state *ts, __u64 ip, __u64 sp, __u64 bp,
				       __u64 h)
{
	struct task_struct *task = unw_task();
	__u64 gen = *(volatile __u64 *)&unw_ctl.gen;
	__u64 sel = *(volatile __u64 *)&unw_ctl.sel;
	__u64 mm = (__u64)task->mm;
	struct unw_walk *w;
	struct pt_unw_memo *mo;

	if (!ts)
		return -1;
	mo = &ts->memo[1];
	if (!(mo->flags & UNW_MEMO_VALID) || mo->h != h || mo->sp != sp || mo->pc0 != ip + 1 ||
	    mo->gen != gen || mo->sel != sel || mo->mm != mm || unw_ctl.mm != mm ||
	    ((mo->flags & UNW_MEMO_BP) && mo->bp != bp) ||
	    ((mo->flags & UNW_MEMO_VMA) && mo->vmaseq != unw_mm_seq(task)))
		return -1;
	if (bpf_probe_read_user(ts->win, sizeof(ts->win), (void *)sp))
		return -1;
	w = &ts->uw;
	__builtin_memset(w, 0, sizeof(*w));
	w->win_lo = sp;
	w->win_hi = sp + sizeof(ts->win);
	return pt_unw_replay(w, ts, mo);
}

#endif /* PEAKTRACE_UNWIND_BPF_H */

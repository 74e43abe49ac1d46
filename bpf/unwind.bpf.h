/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * unwind.bpf.h — .eh_frame unwinding in the kernel, x86-64 (issue 5, part 1).
 *
 * Included by peaktrace.bpf.c just before its unwind(), which calls pt_dwarf_walk() when the
 * loader set dwarf_unwind; uses its count_err(), mix64() and struct thread_state (the 1 KiB
 * stack window and the pcs[] being filled).
 *
 * Tables (bpf/unwind.h, loaded by user/unwind_maps.c):
 *  - unwind_rows: every file's CFI rows, concatenated (one ARRAY map: a lookup is inlined by
 *    the verifier, ~2 ns, and keeps the binary search's indices imprecise so its 25 steps
 *    verify once, see unwind.h);
 *  - unwind_maps: the target's executable mappings sorted by start, twice (two halves): user
 *    space rewrites the half BPF does not read, then flips unw_ctl.sel with one store. A
 *    sorted array costs log2(mappings) inlined lookups (<= 13, ~30 ns); a hash keyed by page
 *    would cost one real hash lookup per frame (~50-100 ns) and one entry per code page;
 *  - unwind_files: (device, inode) -> rows, for code the published array does not cover yet:
 *    in launch mode the program runs before user space has read its maps (ld.so maps the
 *    libraries after exec), and after a dlopen until the refresh. bpf_find_vma() then names
 *    the file behind pc (~0.2 µs, and only while the array is stale).
 *
 * Per frame: find the mapping of (return address - 1), binary-search its rows, compute the
 * CFA from rsp or rbp, read the return address at CFA - 8 and the saved rbp if the row says
 * where, go up. Code without CFI (a PT_CFA_NONE row, no table, JIT code) is crossed with the
 * frame pointer when rbp looks like one. The walk ends at a PT_CFA_END row (_start, clone3:
 * the stack is complete) or is cut, counted by cause (PT_ERR_UNWIND_*).
 *
 * User memory: the window ts->win holds up to PT_STACK_WINDOW bytes of stack; when a frame's
 * slots lie outside it, the window moves up to them with one read (never past the end of the
 * page holding them, so a read next to the stack top cannot fail on bytes nobody needs), so
 * a deep stack costs one user read per KiB, not two per frame.
 */
#ifndef PEAKTRACE_UNWIND_BPF_H
#define PEAKTRACE_UNWIND_BPF_H

#include "unwind.h"

/* key: row index; value: one CFI row (unwind.h). max_entries set by the loader (rows). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
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

/* Which half of unwind_maps is live, and for which mm (user space writes it). */
struct pt_unwind_ctl unw_ctl = {};

/* Beyond this above the allocator's rsp a CFA or frame pointer is not on this stack: the
 * default stack limit (a thread's stack is smaller still). */
#define UNW_MAX_SPAN (8ULL << 20)

struct unw_walk {
	struct thread_state *ts;
	__u64 pc;               /* return address into the frame being unwound */
	__u64 sp, bp;           /* that frame's rsp (its callee's CFA) and rbp */
	__u64 sp0;              /* rsp at the allocator's entry: lower bound of the stack */
	__u64 win_lo, win_hi;   /* user addresses ts->win holds, [lo, hi) */
	__u64 h;                /* hash of the pcs so far */
	__u32 n;                /* pcs in ts->pcs */
	__u32 stop;             /* why the walk was cut: PT_ERR_UNWIND_*, 0 = complete */
	__u32 half, nmaps;      /* published mappings usable by this walk (nmaps 0: none) */
	__u32 fp_frames;        /* frames crossed with frame pointers */
	__u32 m_first, m_nrows; /* mapping of the previous frame: most frames stay in one file */
	__u64 m_start, m_end, m_bias;
};

/* 8 bytes of user stack at addr from the window, if it holds them. */
static __always_inline bool unw_in_win(struct unw_walk *w, __u64 addr)
{
	return addr >= w->win_lo && addr + 8 <= w->win_hi && !((addr - w->win_lo) & 7);
}

/*
 * Make the window hold [lo, lo + 8) (and what follows, up to PT_STACK_WINDOW bytes in lo's
 * page). A failed read zeroes the buffer: the window is then empty.
 */
static __always_inline int unw_rewindow(struct unw_walk *w, __u64 lo)
{
	__u64 len = 4096 - (lo & 4095);

	if (len > PT_STACK_WINDOW)
		len = PT_STACK_WINDOW;
	/* Clamp after an opaque move, or clang hands the helper the unclamped copy. */
	asm volatile("" : "+r"(len));
	if (len > PT_STACK_WINDOW || len < 8)
		len = 8;
	if (bpf_probe_read_user(w->ts->win, len, (void *)lo)) {
		w->win_lo = w->win_hi = 0;
		return -1;
	}
	w->win_lo = lo;
	w->win_hi = lo + len;
	return 0;
}

static __always_inline int unw_read(struct unw_walk *w, __u64 addr, __u64 *val)
{
	__u64 off;

	if (!unw_in_win(w, addr)) {
		/* Misaligned (never in code a compiler wrote) or beyond the window: read it
		 * alone rather than move the window somewhere useless. */
		if (addr & 7)
			return bpf_probe_read_user(val, 8, (void *)addr) ? -1 : 0;
		if (unw_rewindow(w, addr))
			return bpf_probe_read_user(val, 8, (void *)addr) ? -1 : 0;
	}
	off = (addr - w->win_lo) / 8;
	*val = w->ts->win[off & (PT_STACK_WINDOW / 8 - 1)];
	return 0;
}

/* Binary search of the published mappings for the one holding pc. */
static __always_inline bool unw_find_map(struct unw_walk *w, __u64 pc)
{
	__u32 lo = 0, hi = w->nmaps, base = w->half ? PT_UNWIND_MAX_MAPS : 0, key, mid;
	struct pt_unwind_map *m;
	int i;

	for (i = 0; i < PT_UNWIND_MAP_STEPS && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		key = base + mid;
		m = bpf_map_lookup_elem(&unwind_maps, &key);
		if (!m)
			return false;
		if (m->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	key = base + lo - 1;
	m = bpf_map_lookup_elem(&unwind_maps, &key);
	if (!m || pc >= m->end)
		return false;
	w->m_start = m->start;
	w->m_end = m->end;
	w->m_bias = m->bias;
	w->m_first = m->first;
	w->m_nrows = m->nrows;
	return true;
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

/* pc in no published mapping: ask the kernel which file it is in. */
static __always_inline bool unw_find_file(struct unw_walk *w, __u64 pc)
{
	struct unw_vma v = {};
	struct pt_unwind_file *f;

	/* -EBUSY when another thread holds mmap_lock for writing (mmap, munmap): no table. */
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, unw_vma_cb, &v, 0) || !v.file)
		return false;
	f = bpf_map_lookup_elem(&unwind_files, &v.key);
	if (!f)
		return false;
	w->m_start = v.start;
	w->m_end = v.end;
	w->m_bias = v.start - v.pgoff * 4096 - f->adj;
	w->m_first = f->first;
	w->m_nrows = f->nrows;
	return true;
}

/* The row in force at pc in the current mapping's file; NULL below its first row. */
static __always_inline struct pt_unwind_row *unw_find_row(struct unw_walk *w, __u64 pc)
{
	__u64 vaddr = pc - w->m_bias;
	__u32 lo = w->m_first, hi = w->m_first + w->m_nrows, mid, idx;
	struct pt_unwind_row *r;
	int i;

	if (vaddr > 0xffffffffULL)
		return NULL;
	for (i = 0; i < PT_UNWIND_SEARCH_STEPS && lo < hi; i++) {
		mid = pt_unwind_mid(lo, hi);
		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return NULL;
		pt_unwind_step(&lo, &hi, mid, r->pc, (__u32)vaddr);
	}
	if (lo == w->m_first)
		return NULL;
	idx = lo - 1;
	return bpf_map_lookup_elem(&unwind_rows, &idx);
}

/* One frame: from (pc, sp, bp) of a frame to its caller's. bpf_loop callback: 1 ends the walk. */
static long unw_step(__u32 i, void *ctx)
{
	struct unw_walk *w = ctx;
	struct pt_unwind_row *row = NULL;
	__u64 look = w->pc - 1, cfa, ra, bp = w->bp, bp_at = 0;
	__u32 n = w->n;
	bool found;

	/* Return addresses point after the call: look up the call itself (unwind.h). */
	found = look >= w->m_start && look < w->m_end;
	if (!found)
		found = unw_find_map(w, look) || unw_find_file(w, look);
	if (found)
		row = unw_find_row(w, look);
	if (row && row->cfa_reg == PT_CFA_END)
		return 1;       /* outermost frame: the stack is complete */
	if (n >= PT_MAX_FRAMES) {
		w->stop = PT_ERR_UNWIND_DEPTH;
		return 1;
	}
	if (row && row->cfa_reg == PT_CFA_UNSUPPORTED) {
		w->stop = PT_ERR_UNWIND_UNSUPPORTED;
		return 1;
	}
	if (row && row->cfa_reg != PT_CFA_NONE) {
		if (pt_unwind_cfa(row, look, w->sp, w->bp, &cfa)) {
			w->stop = PT_ERR_UNWIND_UNSUPPORTED;
			return 1;
		}
		if (row->rbp_off8)
			bp_at = cfa + 8 * (__s64)row->rbp_off8;
	} else {
		/* No CFI here: trust rbp if it looks like a frame pointer of this frame
		 * (aligned, at or above its rsp, on this stack). */
		if ((w->bp & 7) || w->bp < w->sp || w->bp - w->sp0 > UNW_MAX_SPAN) {
			w->stop = PT_ERR_UNWIND_NO_CFI;
			return 1;
		}
		cfa = w->bp + 16;
		bp_at = w->bp;
		w->fp_frames++;
	}
	/* The caller's rsp must be above ours (progress) and on this stack. */
	if (cfa <= w->sp || cfa - w->sp0 > UNW_MAX_SPAN) {
		w->stop = PT_ERR_UNWIND_BAD_FRAME;
		return 1;
	}
	/* The lower slot first: with the usual rbp at CFA - 16, one window move covers both. */
	if (bp_at && bp_at < cfa - 8 && unw_read(w, bp_at, &bp)) {
		w->stop = PT_ERR_UNWIND_READ;
		return 1;
	}
	if (unw_read(w, cfa + PT_UNWIND_RA_OFF, &ra)) {
		w->stop = PT_ERR_UNWIND_READ;
		return 1;
	}
	if (bp_at && bp_at >= cfa - 8 && unw_read(w, bp_at, &bp)) {
		w->stop = PT_ERR_UNWIND_READ;
		return 1;
	}
	if (ra == 0)
		return 1;       /* some runtimes end their chains with a zero return address */
	if (ra < 4096) {
		w->stop = PT_ERR_UNWIND_BAD_FRAME;
		return 1;
	}
	w->ts->pcs[n & (PT_MAX_FRAMES - 1)] = ra;
	w->h = mix64(w->h, ra);
	w->n = n + 1;
	w->pc = ra;
	w->sp = cfa;
	w->bp = bp;
	return 0;
}

/*
 * Frames 1.. of the stack whose frame 0 (ts->pcs[0], the return address at [sp] on the
 * allocator's entry) is already recorded. The allocator's own frame has CFA = sp + 8 at its
 * entry, so the walk starts in the caller: pc = pcs[0], rsp = sp + 8, rbp unchanged.
 * ts->win holds [sp, sp + win_len). Returns the number of pcs; *hash is updated.
 */
static __always_inline __u32 pt_dwarf_walk(struct thread_state *ts, __u64 sp, __u64 bp,
					   __u64 win_len, __u64 *hash)
{
	struct unw_walk w = {
		.ts = ts, .pc = ts->pcs[0], .sp = sp + 8, .bp = bp, .sp0 = sp,
		.win_lo = sp, .win_hi = sp + win_len, .h = *hash, .n = 1,
	};
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 sel = unw_ctl.sel, mm = (__u64)task->mm, owner = unw_ctl.mm;

	/* The published mappings describe one address space: claim a fresh publication for
	 * ours; after an exec (another mm) they are stale until the next refresh, and only the
	 * by-file fallback is used. */
	if (owner != mm && owner == 0)
		owner = __sync_val_compare_and_swap(&unw_ctl.mm, 0, mm) ?: mm;
	if (owner == mm) {
		w.half = sel >> 32;
		w.nmaps = (__u32)sel;
		if (w.nmaps > PT_UNWIND_MAX_MAPS)
			w.nmaps = PT_UNWIND_MAX_MAPS;
	}
	bpf_loop(PT_MAX_FRAMES, unw_step, &w, 0);
	if (w.stop)
		count_err(w.stop);
	if (w.fp_frames)
		count_err(PT_ERR_UNWIND_FP_FALLBACK);
	*hash = w.h;
	return w.n;
}

#endif /* PEAKTRACE_UNWIND_BPF_H */

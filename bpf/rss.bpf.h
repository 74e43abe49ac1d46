/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rss.bpf.h — RSS attribution by page: every anonymous page that becomes resident in the target
 * through one of its page faults is counted on the user stack that faulted it in (the heap's
 * unwinder, Python frames included), until munmap, madvise(DONTNEED/REMOVE), an mremap shrink,
 * a brk shrink or an exec takes it away.
 *
 * How a page is found: exceptions:page_fault_user/kernel (the kernel one: a syscall writing
 * into a fresh user buffer) leave the fault address in the thread's state; the kernel then
 * accounts what the fault installed in the same thread, and the next kmem:rss_stat of
 * MM_ANONPAGES with curr == 1 says by how much (4 KiB, or 2 MiB for a transparent huge page:
 * then the 2 MiB-aligned block around the address). Only then is the stack unwound, from the
 * registers the fault saved (bpf_task_pt_regs): a fault that installs nothing (a read of the
 * zero page, a file page) costs one task-storage store.
 *
 * Ownership: rss_pages maps a 2 MiB-aligned block of address space to the owner of each of
 * its 512 pages (stack index + 1; 0 = none), so a removal finds whose pages leave; it runs at
 * the syscall's entry, before the kernel's rss_stat decrements, which it pre-pays in
 * rss_g.now.pending. Every change of the anonymous counter lands in exactly one figure of
 * struct pt_rss_figures (peaktrace.h), so attributed + unattributed == rss_stat's anon.
 *
 * At-peak figures: the lazy snapshot of peak.h, with its own sequence (rss_g.peak_seq, bumped
 * at every new g.rss_peak in memstat.bpf.h's rss_stat): a stack keeps what it held at the last
 * peak before its first change after it.
 *
 * File-backed and shared-memory pages are charged per object (the mapping's inode), below.
 *
 * The verifier: loops over pages and blocks run under bpf_loop (a removal may span many
 * blocks, each up to 512 pages).
 */
#ifndef PEAKTRACE_RSS_BPF_H
#define PEAKTRACE_RSS_BPF_H

#include "state.bpf.h"
#include "stack.bpf.h"

#define RSS_PAGE 4096ULL
#define RSS_BLOCK_SHIFT 21
#define RSS_BLOCK (1ULL << RSS_BLOCK_SHIFT)
#define RSS_PAGES 512
/* A walk's counters, all from RSS_OPAQUE0. */
#define RSS_WALK_INIT(w) do { \
	(w)->lo = RSS_OPAQUE0; (w)->owner = RSS_OPAQUE0; (w)->run = RSS_OPAQUE0; \
	(w)->removed = RSS_OPAQUE0; (w)->replaced = RSS_OPAQUE0; \
} while (0)

/* Blocks one removal visits at most (2 TiB of address space; the rest is not looked at). */
#define RSS_MAX_BLOCKS (1u << 20)
/* Blocks with a page owner: 32 GiB of touched address space (not preallocated). */
#define RSS_MAX_TABLE 16384

#ifndef MADV_DONTNEED
#define MADV_DONTNEED 4
#endif
#define MADV_REMOVE 9
#define MADV_DONTNEED_LOCKED 24

struct rss_block {
	__u32 owner[RSS_PAGES];
};

struct pt_rss_global rss_g = {};

/* Always 0, but unknown to the verifier: a bpf_loop callback is verified until its state
 * repeats, so the counters a walk carries start from this, not from a constant, whose every
 * new value would be a new state (then "the sequence of 8193 jumps is too complex"). */
__u64 rss_opaque = 0;
#define RSS_OPAQUE0 (*(volatile __u64 *)&rss_opaque)

/* key: 2 MiB-aligned address; value: the owner of each of its pages. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RSS_MAX_TABLE);
	__type(key, __u64);
	__type(value, struct rss_block);
} rss_pages SEC(".maps");

/* One zeroed block, the value a new entry of rss_pages starts from. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rss_block);
} rss_zero SEC(".maps");

/* Before a stack's rss_now changes: keep what it held at the running invocation's RSS peak,
 * and at the last one's if that has ended but may not have been read (heap.bpf.h inv_touch). */
static __always_inline void rss_inv_touch(struct pt_stack_stats *st)
{
	__u32 p = g.inv_seq & 1, q = p ^ 1;
	__u64 seq = rss_g.inv_peak_seq[p], qseq = rss_g.inv_peak_seq[q];

	if (st->rss_inv_seq[p] != seq) {
		st->rss_inv_peak[p] = st->rss_now;
		st->rss_inv_seq[p] = seq;
	}
	if (st->rss_inv_seq[q] != qseq && g.inv[q].state == PT_INV_ENDED) {
		st->rss_inv_peak[q] = st->rss_now;
		st->rss_inv_seq[q] = qseq;
	}
}

/* A new snapshot sequence for invocation half p: at its start and at each new RSS peak of it. */
static __always_inline void rss_inv_new_peak(__u32 p)
{
	rss_g.inv_peak_seq[p & 1] = __sync_fetch_and_add(&rss_g.inv_counter, 1) + 1;
}

/* A stack's resident bytes change by bytes (its owner value o = stack index + 1). A global
 * function: the page walks' bpf_loop callbacks call it, and the verifier checks a callback
 * until its states repeat, re-checking an inlined body at every round (about half of what the
 * removal walk cost to verify). Returns 0. */
__noinline int pt_rss_owner_add(__u32 o, __s64 bytes)
{
	__u32 stack = o - 1;
	struct pt_stack_stats *st;

	if (!o || !bytes)
		return 0;
	st = bpf_map_lookup_elem(&stats, &stack);
	if (!st)
		return 0;
	if (st->rss_snap_seq != rss_g.peak_seq) {
		st->rss_peak = st->rss_now;
		st->rss_snap_seq = rss_g.peak_seq;
	}
	rss_inv_touch(st);
	__sync_fetch_and_add(&st->rss_now, bytes);
	__sync_fetch_and_add(&rss_g.now.attributed, bytes);
	return 0;
}

/* A page fault of the target: remember where, for the rss_stat that may follow. */
/* exceptions:page_fault_user/kernel's faulting address (their raw arguments: address, regs,
 * error_code). */
static __always_inline int rss_fault(__u64 address)
{
	struct thread_state *ts;

	if (!is_target() || (__s64)address < 0)
		return 0;
	ts = thread_get(true);
	if (!ts) {
		count_err(PT_ERR_THREAD_STATE);
		return 0;
	}
	ts->pf_addr = address ? address : 1;
	ts->sh_addr = 0;
	__sync_fetch_and_add(&rss_g.faults, 1);
	return 0;
}

#ifdef PT_ARCH_FAULT_FENTRY
#include "fault.h"

/*
 * Where there are no page-fault tracepoints (arm64), the entry of handle_mm_fault (on_mm_fault)
 * feeds rss_fault's state instead. What that entry sees, against x86's tracepoints:
 *  - The kernel also calls it with no exception and no registers (regs NULL): get_user_pages
 *    (MAP_POPULATE, mlock, madvise(MADV_POPULATE_*), O_DIRECT buffers, ptrace, execve's
 *    arguments) and fixup_user_fault (futexes). The tracepoints never see those: skipped, so
 *    what they make resident goes to no_fault ("populated without a fault"), as on x86.
 *  - One fault may call it several times (bpf/fault.h): an attempt that returns VM_FAULT_RETRY
 *    has installed nothing, so its address simply stays pending, and rss_g.faults counts the
 *    fault once (pt_fault_is_retry).
 *  - Faults that end before it are not seen: no mapping or no access (SIGSEGV, -EFAULT),
 *    faults with page faults disabled (bpf_probe_read_user, copy_*_nofault), kernel addresses.
 *    They make nothing resident; rss_g.faults is lower than x86's tracepoints would count for
 *    them (x86's page_fault_kernel also fires for the BPF programs' own reads of the target's
 *    stack that fault, and leaves their address pending).
 * A kernel fault on a user address (copy_to_user: read() into a fresh buffer) comes here with
 * the kernel's registers: the stack is then the syscall's user one (bpf_task_pt_regs at the
 * rss_stat), as for page_fault_kernel. FAULT_FLAG_* by CO-RE (VMA_LOCK: 6.4+).
 */
static __always_inline int rss_mm_fault(__u64 address, __u32 flags, struct pt_regs *regs)
{
	struct pt_fault_bits b = {
		.tried = bpf_core_enum_value(enum fault_flag, FAULT_FLAG_TRIED),
		.user = bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER),
	};
	struct thread_state *ts;
	__u64 pf = address ? address : 1;
	bool retry;

	if (!regs || !is_target() || (__s64)address < 0)
		return 0;
	if (bpf_core_enum_value_exists(enum fault_flag, FAULT_FLAG_VMA_LOCK))
		b.vma_lock = bpf_core_enum_value(enum fault_flag, FAULT_FLAG_VMA_LOCK);
	ts = thread_get(true);
	if (!ts) {
		count_err(PT_ERR_THREAD_STATE);
		return 0;
	}
	retry = pt_fault_is_retry(ts->pf_flags, flags, ts->pf_addr == pf, &b);
	ts->pf_flags = flags;
	ts->pf_addr = pf;
	ts->sh_addr = 0;
	if (!retry)
		__sync_fetch_and_add(&rss_g.faults, 1);
	return 0;
}
#endif

/* The stack a fault's pages belong to: inside an allocator call the allocation's (as for its
 * syscalls, memstat.bpf.h), else the faulting instruction's, unwound from the saved registers
 * (a kernel fault: the syscall's own user stack). */
/* The counters a stack cut short bumps (PT_ERR_STACK_READ, then PT_ERR_UNWIND_NO_CFI...
 * PT_ERR_UNWIND_FP_FALLBACK, consecutive): a fault's unwind is counted in rss_g.stacks_cut
 * instead, so theirs keep meaning "allocation stacks". */
static __always_inline __u32 rss_err_key(int i)
{
	return i == 0 ? PT_ERR_STACK_READ : PT_ERR_UNWIND_NO_CFI + i - 1;
}
#define RSS_ERR_N (1 + PT_ERR_UNWIND_FP_FALLBACK - PT_ERR_UNWIND_NO_CFI + 1)

/*
 * The fault memo (struct pt_rss_fmemo): consecutive faults of a thread often come from the same
 * code (a memset over a new buffer, a string filled page by page), and their stack is then
 * reused instead of captured again, but only when it is shown to be the same, never guessed:
 * the registers alone are not enough (two callers of one function with equal frame sizes fault
 * at the same ip with the same rsp and rbp; under CPython, every Python function runs in the
 * same native frames, and one Python function called from two others can sit at the same
 * data-stack address with the same code and instruction). Shown by: the same registers; the
 * fault walk memo (unwind.bpf.h) that gave this stack's native frames still holding, every
 * stack word it read unchanged; and every frame of the Python chain (thread state, current
 * frame, then each frame's code, previous, instruction, owner and entry) as it was. What the
 * full capture would then compute is a function of exactly these, so it is the same stack.
 * Compared in one read of the data stack, without the walk's per-frame steps, copies, hashing
 * or stack-table lookups.
 */
#define RSS_FM_VALID 1
#define RSS_FM_CUT   2

/* The current interpreter frame of thread state t. */
static __always_inline int rss_py_current(__u64 t, __u64 *f)
{
	if (py_off.ts_cframe)
		return py_read(t + py_off.ts_cframe, f) || !*f || py_read(*f + py_off.cframe_current, f);
	return py_read(t + py_off.cframe_current, f);
}

/* The frame offsets the memo reads, checked as pt_py_frame checks them (they come from .bss). */
static __always_inline bool rss_py_offs_ok(void)
{
	__u32 oc = py_off.fr_code, op = py_off.fr_previous, oi = py_off.fr_instr;

	return oc <= PY_FRAME_READ - 8 && op <= PY_FRAME_READ - 8 && oi <= PY_FRAME_READ - 8 &&
	       py_off.fr_owner < PY_FRAME_READ && py_off.fr_is_entry < PY_FRAME_READ &&
	       !((oc | op | oi) & 7);
}

/* After a full capture: the Python chain it walked, frame by frame, if it lies in one data-stack
 * span of at most PT_PY_WINDOW bytes and ends within PT_RSS_FM_PYF frames. 0 when kept. */
__noinline int rss_fm_py_record(struct thread_state *ts, struct thread_aux *ta)
{
	struct pt_rss_fmemo *fm;
	__u32 oc = py_off.fr_code, op = py_off.fr_previous, oi = py_off.fr_instr;
	__u32 oo = py_off.fr_owner, oe = py_off.fr_is_entry;
	__u64 t, f = 0, lo = ~0ULL, hi = 0, fr[PY_FRAME_READ / 8];
	__u8 owner;
	__u32 i;

	if (!ts || !ta || !rss_py_offs_ok())
		return -1;
	fm = &ta->fmemo;
	t = ts->py_tstate;
	if (!t || rss_py_current(t, &f) || !f)
		return -1;
	fm->py_t = t;
	fm->py_f = f;
	for (i = 0; i < PT_RSS_FM_PYF && f; i++) {
		if (bpf_probe_read_user(fr, sizeof(fr), (void *)f))
			return -1;
		owner = ((__u8 *)fr)[oo & (PY_FRAME_READ - 1)];
		/* A frame the walk stops at (no code, not 3.12's shim): not kept. */
		if (!fr[(oc / 8) & 7] && !(owner == PT_PY_OWNED_BY_CSTACK && !oe))
			return -1;
		fm->fr[i][0] = f;
		fm->fr[i][1] = fr[(oc / 8) & 7];
		fm->fr[i][2] = fr[(op / 8) & 7];
		fm->fr[i][3] = fr[(oi / 8) & 7];
		fm->fr_oe[i] = owner | (__u64)(oe ? ((__u8 *)fr)[oe & (PY_FRAME_READ - 1)] : 0) << 8;
		if (f < lo)
			lo = f;
		if (f + PY_FRAME_READ > hi)
			hi = f + PY_FRAME_READ;
		f = fr[(op / 8) & 7];
	}
	if (f || !i || hi - lo > PT_PY_WINDOW)
		return -1;
	fm->py_n = i;
	fm->py_lo = lo;
	fm->py_len = hi - lo;
	return 0;
}

/* 0 when the Python chain is still the one fm recorded. */
__noinline int rss_fm_py_holds(struct thread_state *ts, struct thread_aux *ta)
{
	struct pt_rss_fmemo *fm;
	__u32 oc = py_off.fr_code, op = py_off.fr_previous, oi = py_off.fr_instr;
	__u32 oo = py_off.fr_owner, oe = py_off.fr_is_entry;
	__u64 t, f = 0, len, base;
	__u8 *b;
	__u32 i, n;

	if (!ts || !ta || !py_off.runtime || !rss_py_offs_ok())
		return -1;
	fm = &ta->fmemo;
	t = py_tstate(ts, py_off.runtime);
	if (!t || t != fm->py_t || rss_py_current(t, &f) || f != fm->py_f)
		return -1;
	len = fm->py_len;
	asm volatile("" : "+r"(len));
	if (len > PT_PY_WINDOW || len < PY_FRAME_READ)
		return -1;
	if (bpf_probe_read_user(ta->pywin, len, (void *)fm->py_lo))
		return -1;
	b = (__u8 *)ta->pywin;
	n = fm->py_n;
	for (i = 0; i < PT_RSS_FM_PYF && i < n; i++) {
		base = fm->fr[i][0] - fm->py_lo;
		if (base > len - PY_FRAME_READ)
			return -1;
		if (ta->pywin[((base + oc) / 8) & (PT_PY_WINDOW / 8 - 1)] != fm->fr[i][1] ||
		    ta->pywin[((base + op) / 8) & (PT_PY_WINDOW / 8 - 1)] != fm->fr[i][2] ||
		    ta->pywin[((base + oi) / 8) & (PT_PY_WINDOW / 8 - 1)] != fm->fr[i][3] ||
		    (b[(base + oo) & (PT_PY_WINDOW - 1)] |
		     (__u64)(oe ? b[(base + oe) & (PT_PY_WINDOW - 1)] : 0) << 8) != fm->fr_oe[i])
			return -1;
	}
	return 0;
}

static __always_inline __u32 rss_fault_stack(struct thread_state *ts)
{
	struct thread_aux *ta;
	struct pt_rss_fmemo *fm;
	struct pt_regs *regs;
	__u64 *v, cut = 0, ip, sp, bp;
	__u32 k, stack;
	int i;

	if (ts->depth && ts->stack != PT_STACK_UNSAMPLED)
		return ts->stack;
	/* The saved registers by direct loads (bpf_task_pt_regs gives a BTF pointer), not a
	 * probe-read helper call each: ~10-15 ns apiece on every fault. */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	ip = regs->PT_ARCH_IP;
	sp = regs->PT_ARCH_SP;
	bp = regs->PT_ARCH_FP;
	PT_ARCH_KEEP_LR(ts, PT_ARCH_REGS_LR(regs));  /* arm64: a leaf's x30 (stack.bpf.h) */
	ta = thread_aux_get();
	if (!ta)
		return capture_at(ts, ip, sp, bp);
	fm = &ta->fmemo;
	/* With python (on for every target: CPython may be found later), a memo kept without a
	 * Python chain (py_t 0) holds only while no CPython runtime is known. */
	if ((fm->flags & RSS_FM_VALID) && fm->ip == ip && fm->sp == sp && fm->bp == bp &&
	    !pt_unw_fault_memo_holds(ts, ip, sp, bp, fm->nh) &&
	    (!python || (fm->py_t ? !rss_fm_py_holds(ts, ta) : !py_off.runtime))) {
		if (fm->flags & RSS_FM_CUT)
			__sync_fetch_and_add(&rss_g.stacks_cut, 1);
		return fm->idx;
	}
	fm->flags = 0;
	for (i = 0; i < RSS_ERR_N && i < 8; i++) {
		k = rss_err_key(i);
		v = bpf_map_lookup_elem(&errors, &k);
		ts->rss_err[i] = v ? *v : 0;
	}
	stack = capture_at(ts, ip, sp, bp);
	for (i = 0; i < RSS_ERR_N && i < 8; i++) {
		k = rss_err_key(i);
		v = bpf_map_lookup_elem(&errors, &k);
		if (v && *v != ts->rss_err[i]) {
			/* fp fallback is not a cut: the stack is whole */
			if (k != PT_ERR_UNWIND_FP_FALLBACK)
				cut = 1;
			*v = ts->rss_err[i];
		}
	}
	if (cut)
		__sync_fetch_and_add(&rss_g.stacks_cut, 1);
	/* Kept for the next fault when its native frames came from (or went into) the fault walk
	 * memo, and its Python chain could be recorded: in a target whose CPython runtime is not
	 * known (Node, C: python is on for every target), there is none, and py_t 0 says so (every
	 * fault of those was captured whole before: the chain was required). */
	fm->py_t = 0;
	if (dwarf_unwind && capture_stacks && stack != PT_STACK_UNKNOWN && ts->last_idx[1] == stack &&
	    (ts->memo[1].flags & UNW_MEMO_VALID) && ts->memo[1].sp == sp && ts->memo[1].pc0 == ip + 1 &&
	    (!python || !py_off.runtime || ((ts->last_n[1] >> 16) && !rss_fm_py_record(ts, ta)))) {
		fm->ip = ip;
		fm->sp = sp;
		fm->bp = bp;
		fm->nh = ts->memo[1].h;
		fm->idx = stack;
		fm->flags = RSS_FM_VALID | (cut ? RSS_FM_CUT : 0);
	}
	return stack;
}

/* ---- file-backed and shared-memory pages, per object ------------------------------------- */

/*
 * A file or shmem page is charged to its object (the mapping's inode), not to a stack: page
 * cache pages are shared, and the object is the answer users act on ("the 40 MiB model file",
 * "memfd:cache"); a per-stack unwind on every file fault would cost the anonymous path's price
 * on every fault-around. The object is looked up only when the file or shmem counter grows in
 * a thread with a fault pending (bpf_find_vma, under the mmap lock's trylock), once per fault:
 * the anonymous path is not touched. Removals charge their object when the range lies in one
 * mapping; anything else is a named figure of struct pt_rss_sh_figures.
 */
#define RSS_MAX_OBJS 4096
#define RSS_OBJ_SPECIAL 1   /* the key of special mappings' pages (no file, no inode) */

/* key: the inode's kernel address; value: the object's figures and names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RSS_MAX_OBJS);
	__type(key, __u64);
	__type(value, struct pt_rss_obj);
} rss_objs SEC(".maps");

struct rss_vma_ctx {
	__u64 key, start, end;
	struct file *file;
};

static long rss_vma_cb(struct task_struct *task, struct vm_area_struct *vma, struct rss_vma_ctx *c)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);

	c->start = BPF_CORE_READ(vma, vm_start);
	c->end = BPF_CORE_READ(vma, vm_end);
	if (!f) {
		/* A special mapping's page counted as a file page ([vdso]): one object for all. */
		c->key = RSS_OBJ_SPECIAL;
		return 0;
	}
	c->file = f;
	c->key = (__u64)BPF_CORE_READ(f, f_inode);
	return 0;
}

/* The file behind the target's mapping at addr: 0 when none or the lock was busy. */
static __always_inline long rss_vma_at(__u64 addr, struct rss_vma_ctx *c)
{
	return bpf_find_vma(bpf_get_current_task_btf(), addr, rss_vma_cb, c, 0);
}

/* An object's resident bytes change by d (counter i: 0 file, 1 shmem). It never goes below 0:
 * a release beyond what it gained while traced took pages resident before (attach mode), so
 * the rest is released_unknown (taken from the `before` bucket in the report). */
static __always_inline void rss_obj_add(struct pt_rss_obj *o, int i, __s64 d)
{
	__s64 held = o->now;

	if (d < 0 && held + d < 0) {
		__sync_fetch_and_add(&rss_g.sh_now[i & 1].released_unknown, -(held + d));
		d = held > 0 ? -held : 0;
	}
	if (o->snap_seq != rss_g.peak_seq) {
		o->peak = o->now;
		o->snap_seq = rss_g.peak_seq;
	}
	__sync_fetch_and_add(&o->now, d);
	__sync_fetch_and_add(&rss_g.sh_now[i & 1].attributed, d);
}

/* The object c found, created (with its names) when new; NULL when the table is full, or when
 * the entry is a freed inode's whose address the new one reuses and it still has figures to
 * report (then counted in sh_obj_reused; one with none is taken over by the new inode). */
static __always_inline struct pt_rss_obj *rss_obj_get(struct rss_vma_ctx *c, int i)
{
	struct pt_rss_obj *o = bpf_map_lookup_elem(&rss_objs, &c->key), n = {};
	struct inode *ino;
	struct file *file = c->file;   /* a local: CO-RE relocates the whole chain it reads */
	const unsigned char *name;

	n.member = i ? PT_RSS_SHMEM : PT_RSS_FILE;
	n.snap_seq = rss_g.peak_seq;
	if (c->key != RSS_OBJ_SPECIAL) {
		ino = (struct inode *)c->key;
		n.ino = BPF_CORE_READ(ino, i_ino);
		n.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	}
	if (o && (c->key == RSS_OBJ_SPECIAL || (o->ino == n.ino && o->dev == n.dev)))
		return o;
	if (o && (o->now || (o->snap_seq == rss_g.peak_seq && o->peak))) {
		__sync_fetch_and_add(&rss_g.sh_obj_reused, 1);
		return NULL;
	}
	if (c->key != RSS_OBJ_SPECIAL) {
		name = BPF_CORE_READ(file, f_path.dentry, d_name.name);
		bpf_probe_read_kernel_str(n.name, sizeof(n.name), name);
	}
	if (o) {
		/* Taken over: nothing of the old inode is left to report. */
		*o = n;
		__sync_fetch_and_add(&rss_g.sh_objs, 1);
		emit_event(PT_EV_RSS_OBJ, c->key, 0);
		return o;
	}
	if (!bpf_map_update_elem(&rss_objs, &c->key, &n, BPF_NOEXIST)) {
		__sync_fetch_and_add(&rss_g.sh_objs, 1);
		/* While the target still maps it: user space names it from the maps. */
		emit_event(PT_EV_RSS_OBJ, c->key, 0);
	}
	return bpf_map_lookup_elem(&rss_objs, &c->key);
}

/* A change of d bytes to counter figures f that no object is charged with: a gain goes to
 * bucket, a loss to released_unknown. */
static __always_inline void rss_sh_unowned(struct pt_rss_sh_figures *f, __s64 *bucket, __s64 d)
{
	if (d > 0)
		__sync_fetch_and_add(bucket, d);
	else
		__sync_fetch_and_add(&f->released_unknown, -d);
}

/* The counter i changed by d in a fault at addr: charge the mapping's object. */
static __always_inline void rss_sh_fault(struct thread_state *ts, __u64 addr, int i, __s64 d)
{
	struct pt_rss_sh_figures *f = &rss_g.sh_now[i & 1];
	struct rss_vma_ctx c = {};
	struct pt_rss_obj *o = NULL;
	__u64 key;

	/* The same fault's next event (one per folio on some paths), or a fault in the mapping
	 * this thread looked up last while no mmap, munmap, mremap or brk happened since: no
	 * lookup. (shmat/shmdt are not traced: a segment attached where another file was
	 * mapped, with no traced syscall between, would be charged to that file.) */
	if (ts->sh_obj && (ts->sh_addr == addr || (addr >= ts->sh_lo && addr < ts->sh_hi &&
						 ts->sh_gen == rss_g.map_gen))) {
		key = ts->sh_obj;       /* a stack copy: 6.1 refuses plain memory as a map key */
		o = bpf_map_lookup_elem(&rss_objs, &key);
	}
	if (!o) {
		if (rss_vma_at(addr, &c) || !c.key) {
			__sync_fetch_and_add(&rss_g.sh_vma_busy, 1);
			rss_sh_unowned(f, &f->vma_busy, d);
			return;
		}
		o = rss_obj_get(&c, i);
		if (!o) {
			__sync_fetch_and_add(&rss_g.sh_table_full_events, 1);
			rss_sh_unowned(f, &f->table_full, d);
			return;
		}
		ts->sh_addr = addr;
		ts->sh_obj = c.key;
		ts->sh_lo = c.start;
		ts->sh_hi = c.end;
		ts->sh_gen = rss_g.map_gen;
	}
	if (o->member != (i ? PT_RSS_SHMEM : PT_RSS_FILE)) {
		/* A private file mapping's page that was shmem (or the reverse) is not this
		 * object's: counted, never guessed. */
		rss_sh_unowned(f, &f->vma_busy, d);
		return;
	}
	if (d > 0)
		__sync_fetch_and_add(&rss_g.sh_faults, 1);
	rss_obj_add(o, i, d);
}

/* The number of the syscall the current task is in (PT_ARCH_SYSNR; -1 outside one). */
static __always_inline __u64 rss_syscall_nr(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return BPF_CORE_READ(regs, PT_ARCH_SYSNR);
}

/* A removal syscall over [start, end) begins: if the range lies in one file or shmem mapping,
 * the file/shmem decrements it makes are that object's (there is no exit probe on every
 * removal syscall: the stash is valid while the task is still in the same syscall). */
static __always_inline void rss_sh_removal(__u64 start, __u64 end)
{
	struct thread_state *ts = thread_get(false);
	struct rss_vma_ctx c = {};

	if (!ts)
		return;
	ts->rm_obj = 0;
	if (rss_vma_at(start, &c) || !c.key)
		return;
	if (c.start <= start && end <= c.end) {
		ts->rm_obj = c.key;
		ts->rm_nr = rss_syscall_nr();
	} else {
		__sync_fetch_and_add(&rss_g.sh_split_removals, 1);
	}
}

/* kmem:rss_stat of the file or shmem counter (m), before g.rss[m] takes the new value size.
 * A global function: its locals (an object's figures and name, the VMA lookup's context, ~130
 * bytes) then sit in a frame of their own, beside the anonymous path's stack capture and not
 * under it (the BPF stack of a call chain is 512 bytes: tools/check-stack.py). */
__noinline int pt_rss_sh_change(__u32 curr, int m, __s64 size)
{
	int i = m == PT_RSS_SHMEM;
	struct pt_rss_sh_figures *f = &rss_g.sh_now[i & 1];
	__s64 d = size - g.rss[m & 3];
	struct thread_state *ts;
	struct pt_rss_obj *o = NULL;
	__u64 key;

	/* The figures at the last peak: unchanged since, so what they are now (lazy snapshot). */
	if (rss_g.sh_snap_seq[i & 1] != rss_g.peak_seq) {
		rss_g.sh_at_peak[i & 1] = *f;
		rss_g.sh_at_peak[i & 1].total = g.rss[m & 3];
		rss_g.sh_snap_seq[i & 1] = rss_g.peak_seq;
	}
	if (rss_g.sh_exec_reset[i & 1]) {
		/* The first change after an exec (g.rss was zeroed): a new image has no file or
		 * shmem page before its first fault (exec reads the ELF, it does not map its pages
		 * in), so a fault's growth is that fault's; anything else is what exec left. */
		rss_g.sh_exec_reset[i & 1] = 0;
		ts = curr && d > 0 ? thread_get(false) : NULL;
		if (!ts || !ts->pf_addr) {
			__sync_fetch_and_add(&f->before, d);
			return 0;
		}
	}
	if (!d)
		return 0;
	if (!curr) {
		if (d > 0)
			__sync_fetch_and_add(&f->other_task, d);
		else
			__sync_fetch_and_add(&f->reclaimed, -d);
		return 0;
	}
	ts = thread_get(false);
	if (d > 0) {
		__u64 addr = ts ? (ts->pf_addr ? ts->pf_addr : ts->sh_addr) : 0;

		if (!addr) {
			__sync_fetch_and_add(&f->no_fault, d);
			return 0;
		}
		/* This fault was not anonymous: a later anonymous growth is not its. */
		ts->pf_addr = 0;
		rss_sh_fault(ts, addr, i, d);
		return 0;
	}
	/* A write fault copying a private file page drops the file page first (then the
	 * anonymous one comes: pf_addr stays for it). */
	if (ts && ts->pf_addr) {
		rss_sh_fault(ts, ts->pf_addr, i, d);
		return 0;
	}
	if (ts && ts->rm_obj && ts->rm_nr == rss_syscall_nr()) {
		key = ts->rm_obj;       /* a stack copy: 6.1 refuses plain memory as a map key */
		o = bpf_map_lookup_elem(&rss_objs, &key);
	}
	if (o && o->member == (i ? PT_RSS_SHMEM : PT_RSS_FILE))
		rss_obj_add(o, i, d);
	else
		__sync_fetch_and_add(&f->released_unknown, -d);
	return 0;
}

static long rss_exec_obj(struct bpf_map *map, __u64 *key, struct pt_rss_obj *o, void *unused)
{
	bpf_map_delete_elem(map, key);
	return 0;
}

/* ---- page loops ----------------------------------------------------------------------------- */

struct rss_walk {
	struct rss_block *b;
	__u64 start, end;     /* removal / move: the range */
	__u64 dst;            /* move: where start goes */
	__u32 lo;             /* first page of the range in block b */
	__u32 owner;          /* fill: the new owner; removal: the owner of the current run */
	__s64 run;            /* removal: bytes of the current run */
	__s64 removed;        /* removal: bytes taken off stacks */
	__s64 replaced;       /* fill, move: bytes that still had an owner */
};

/* The run restarts from RSS_OPAQUE0, not from 0: a constant there grows by one page at each page
 * of the next run, and once an `if (w->run)` has been decided on such a constant (which marks it
 * precise), the callback's states differ at every page and are never found equal: the walk is
 * verified page by page until "the sequence of 8193 jumps is too complex". Debian's arm64 7.3
 * did that (its log: the block's flush after the inner loop reached with w->run == 4096, then
 * w->run precise, 0x1000 apart at each page, 93,251 instructions); amd64 7.3's verifier, on the
 * same code, widened the constant to an unknown before any branch was decided on it. */
static __always_inline void rss_run_flush(struct rss_walk *w)
{
	if (w->run) {
		pt_rss_owner_add(w->owner, -w->run);
		w->removed += w->run;
		w->run = RSS_OPAQUE0;
	}
}

/* Fill: page lo + i of block b gets owner w->owner; a page that had one leaves it. */
static long rss_fill_page(__u64 i, struct rss_walk *w)
{
	__u64 k = w->lo + i;
	__u32 old;

	if (!w->b || k >= RSS_PAGES)
		return 1;
	old = w->b->owner[k];
	w->b->owner[k] = w->owner;
	if (old) {
		pt_rss_owner_add(old, -(__s64)RSS_PAGE);
		w->replaced += RSS_PAGE;
	}
	return 0;
}

/* Removal: page lo + i of block b loses its owner. */
static long rss_rm_page(__u64 i, struct rss_walk *w)
{
	__u64 k = w->lo + i;
	__u32 o;

	if (!w->b || k >= RSS_PAGES)
		return 1;
	o = w->b->owner[k];
	if (!o)
		return 0;
	w->b->owner[k] = 0;
	if (o != w->owner) {
		rss_run_flush(w);
		w->owner = o;
	}
	w->run += RSS_PAGE;
	return 0;
}

static long rss_rm_block(__u64 i, struct rss_walk *w)
{
	__u64 blk = (w->start & ~(RSS_BLOCK - 1)) + (i << RSS_BLOCK_SHIFT);
	__u64 lo = w->start > blk ? w->start : blk;
	__u64 hi = w->end < blk + RSS_BLOCK ? w->end : blk + RSS_BLOCK;

	if (hi <= lo)
		return 1;
	w->b = bpf_map_lookup_elem(&rss_pages, &blk);
	if (!w->b)
		return 0;
	w->lo = (lo - blk) >> 12;
	bpf_loop((hi - lo + RSS_PAGE - 1) >> 12, rss_rm_page, w, 0);
	rss_run_flush(w);
	if (lo == blk && hi == blk + RSS_BLOCK)
		bpf_map_delete_elem(&rss_pages, &blk);
	return 0;
}

/* [start, end) leaves the address space or its pages are dropped: their stacks lose them now,
 * and the decrements rss_stat reports next are pre-paid in `pending`. A global function: the
 * memory syscalls' program (memstat.bpf.h) removes ranges for five syscalls, and the walk's
 * nested bpf_loop callbacks (~25K instructions to verify) are then verified once, not once per
 * call site and caller state. Returns 0. */
__noinline int pt_rss_remove(__u64 start, __u64 end)
{
	struct rss_walk w = { .start = start & ~(RSS_PAGE - 1), .end = end };
	__u64 nblk;

	RSS_WALK_INIT(&w);
	if (end <= w.start)
		return 0;
	rss_sh_removal(w.start, end);
	nblk = ((end - 1) >> RSS_BLOCK_SHIFT) - (w.start >> RSS_BLOCK_SHIFT) + 1;
	if (nblk > RSS_MAX_BLOCKS)
		__sync_fetch_and_add(&rss_g.removals_capped, 1);
	bpf_loop(nblk < RSS_MAX_BLOCKS ? nblk : RSS_MAX_BLOCKS, rss_rm_block, &w, 0);
	if (w.removed)
		__sync_fetch_and_add(&rss_g.now.pending, w.removed);
	return 0;
}

/* The block of address a, created if new; NULL when the table is full. */
static __always_inline struct rss_block *rss_block_get(__u64 a)
{
	__u64 blk = a & ~(RSS_BLOCK - 1);
	struct rss_block *b = bpf_map_lookup_elem(&rss_pages, &blk);
	__u32 zero = 0;
	struct rss_block *z;

	if (b)
		return b;
	z = bpf_map_lookup_elem(&rss_zero, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&rss_pages, &blk, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&rss_pages, &blk);
}

/* Move: page lo + i of the source block goes, with its owner, to dst + (its offset). */
static long rss_mv_page(__u64 i, struct rss_walk *w)
{
	__u64 k = w->lo + i, src, to;
	struct rss_block *d;
	__u32 o, old;

	if (!w->b || k >= RSS_PAGES)
		return 1;
	o = w->b->owner[k];
	if (!o)
		return 0;
	w->b->owner[k] = 0;
	src = ((w->start & ~(RSS_BLOCK - 1)) + (k << 12));
	to = w->dst + (src - w->end);
	d = rss_block_get(to);
	if (!d) {
		/* The owner is lost with the table full: its bytes leave the stack, counted. */
		pt_rss_owner_add(o, -(__s64)RSS_PAGE);
		__sync_fetch_and_add(&rss_g.now.table_full, RSS_PAGE);
		__sync_fetch_and_add(&rss_g.table_full_events, 1);
		return 0;
	}
	k = (to >> 12) & (RSS_PAGES - 1);
	old = d->owner[k];
	d->owner[k] = o;
	if (old) {
		pt_rss_owner_add(old, -(__s64)RSS_PAGE);
		w->replaced += RSS_PAGE;
	}
	return 0;
}

struct rss_move {
	__u64 from, len, to;
	__s64 replaced;
};

static long rss_mv_block(__u64 i, struct rss_move *m)
{
	__u64 blk = (m->from & ~(RSS_BLOCK - 1)) + (i << RSS_BLOCK_SHIFT);
	__u64 lo = m->from > blk ? m->from : blk;
	__u64 hi = m->from + m->len < blk + RSS_BLOCK ? m->from + m->len : blk + RSS_BLOCK;
	/* end: the source address that maps to dst (to = dst + src - end) */
	struct rss_walk w = { .start = blk, .end = m->from, .dst = m->to };

	RSS_WALK_INIT(&w);
	if (hi <= lo)
		return 1;
	w.b = bpf_map_lookup_elem(&rss_pages, &blk);
	if (!w.b)
		return 0;
	w.lo = (lo - blk) >> 12;
	bpf_loop((hi - lo + RSS_PAGE - 1) >> 12, rss_mv_page, &w, 0);
	m->replaced += w.replaced;
	return 0;
}

/* ---- syscalls ------------------------------------------------------------------------------- */

static __always_inline void rss_munmap(__u64 addr, __u64 len)
{
	pt_rss_remove(addr, addr + ((len + RSS_PAGE - 1) & ~(RSS_PAGE - 1)));
}

#define RSS_MAP_FIXED 0x10

static __always_inline void rss_mmap_fixed(__u64 addr, __u64 len, __u64 flags)
{
	if (flags & RSS_MAP_FIXED)
		rss_munmap(addr, len);
}

/* madvise: DONTNEED and REMOVE drop the pages now; FREE does not (they stay resident, and in
 * rss_stat, until reclaim takes them: counted then as `reclaimed`). */
static __always_inline void rss_madvise(__u64 addr, __u64 len, __u64 advice)
{
	if (advice == MADV_DONTNEED || advice == MADV_REMOVE || advice == MADV_DONTNEED_LOCKED)
		rss_munmap(addr, len);
}

/* mremap entry: a shrink drops the tail. */
static __always_inline void rss_mremap_enter(__u64 addr, __u64 oldl, __u64 newl)
{
	oldl = (oldl + RSS_PAGE - 1) & ~(RSS_PAGE - 1);
	newl = (newl + RSS_PAGE - 1) & ~(RSS_PAGE - 1);
	if (newl < oldl)
		pt_rss_remove(addr + newl, addr + oldl);
}

/* mremap exit: the mapping moved to `to`: its pages' owners move with them. */
static __always_inline void rss_mremap_exit(__u64 addr, __u64 oldl, __u64 newl, __u64 to)
{
	struct rss_move m = { .from = addr, .to = to };
	__u64 nblk;

	m.replaced = RSS_OPAQUE0;
	if (to == addr || to > (__u64)-4096L)
		return;
	oldl = (oldl + RSS_PAGE - 1) & ~(RSS_PAGE - 1);
	newl = (newl + RSS_PAGE - 1) & ~(RSS_PAGE - 1);
	m.len = oldl < newl ? oldl : newl;
	if (!m.len)
		return;
	nblk = ((addr + m.len - 1) >> RSS_BLOCK_SHIFT) - (addr >> RSS_BLOCK_SHIFT) + 1;
	if (nblk > RSS_MAX_BLOCKS)
		__sync_fetch_and_add(&rss_g.removals_capped, 1);
	bpf_loop(nblk < RSS_MAX_BLOCKS ? nblk : RSS_MAX_BLOCKS, rss_mv_block, &m, 0);
	if (m.replaced)
		__sync_fetch_and_add(&rss_g.now.refaulted, m.replaced);
}

/* brk to a lower break: the pages above it go. */
static __always_inline void rss_brk_enter(__u64 newbrk)
{
	if (newbrk && g.brk_cur && newbrk < g.brk_cur && newbrk >= g.brk_start)
		pt_rss_remove((newbrk + RSS_PAGE - 1) & ~(RSS_PAGE - 1),
			   (g.brk_cur + RSS_PAGE - 1) & ~(RSS_PAGE - 1));
}

/* ---- exec ----------------------------------------------------------------------------------- */

static long rss_exec_block(struct bpf_map *map, __u64 *key, struct rss_block *b, void *unused)
{
	struct rss_walk w = { .b = b };

	RSS_WALK_INIT(&w);
	bpf_loop(RSS_PAGES, rss_rm_page, &w, 0);
	rss_run_flush(&w);
	bpf_map_delete_elem(map, key);
	return 0;
}

/* A new image: the old one's pages are gone with its mm; the new one's first figure is what
 * exec left resident (its stack), counted as `before`. */
static __always_inline void rss_exec(void)
{
	bpf_for_each_map_elem(&rss_pages, rss_exec_block, NULL, 0);
	__builtin_memset(&rss_g.now, 0, sizeof(rss_g.now));
	__builtin_memset(&rss_g.at_peak, 0, sizeof(rss_g.at_peak));
	bpf_for_each_map_elem(&rss_objs, rss_exec_obj, NULL, 0);
	__sync_fetch_and_add(&rss_g.map_gen, 1);
	__builtin_memset(&rss_g.sh_now, 0, sizeof(rss_g.sh_now));
	__builtin_memset(&rss_g.sh_at_peak, 0, sizeof(rss_g.sh_at_peak));
	rss_g.sh_exec_reset[0] = rss_g.sh_exec_reset[1] = 1;
	rss_g.peak_seq++;
	rss_g.exec_reset = 1;
}

/* ---- kmem:rss_stat -------------------------------------------------------------------------- */

/* At most one every RSS_KIND_EV_NS, and only while the ring buffer is three quarters empty:
 * a random-access workload would otherwise send one per fault and crowd out the events that
 * must not be lost. The skipped ones are counted (their stacks keep the kind seen at the end). */
#define RSS_KIND_EV_NS 10000ULL
static __always_inline void rss_kind_event(__u32 stack, __u64 addr)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - rss_g.kind_ev_ns < RSS_KIND_EV_NS ||
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > 16 * 1024) {
		__sync_fetch_and_add(&rss_g.kind_ev_skipped, 1);
		return;
	}
	rss_g.kind_ev_ns = now;
	emit_event(PT_EV_RSS_STACK, addr, stack);
}

/* The stack's last fault: its address and the user sp then (two stores, for the memory kind). */
static __always_inline void rss_owner_where(__u32 o, __u64 addr)
{
	__u32 stack = o - 1;
	struct pt_stack_stats *st = bpf_map_lookup_elem(&stats, &stack);
	struct pt_regs *regs;

	if (!o || !st)
		return;
	/* Its first fault, or one 2 MiB or more from its last: a runtime's heap is often
	 * unmapped by the end (an interpreter's teardown, a freed big block), so user space
	 * looks at this region's heap headers soon, while it is mapped. Sequential touching
	 * sends one event per region, not per page. */
	if (!st->rss_addr || addr - st->rss_addr + RSS_BLOCK >= 2 * RSS_BLOCK)
		rss_kind_event(stack, addr);
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	st->rss_addr = addr;
	st->rss_sp = regs->PT_ARCH_SP;
}

/* A fault made d bytes resident at addr: its pages get the fault's stack. */
static __always_inline void rss_fault_pages(struct thread_state *ts, __u64 addr, __s64 d)
{
	struct rss_block *b;
	struct rss_walk w;
	__u64 start;
	__u32 owner;

	/* One page, or a THP (the only sizes this kernel's anonymous faults install unless
	 * mTHP sizes are enabled). Any other delta holds another thread's fault reported at the
	 * same time (its own event then sees less): the fault gets its page or THP, the rest is
	 * counted as `raced` (unattributed), never guessed. */
	if (d != (__s64)RSS_PAGE && d != (__s64)RSS_BLOCK) {
		__s64 folio = d > (__s64)RSS_BLOCK ? RSS_BLOCK : RSS_PAGE;

		__sync_fetch_and_add(&rss_g.odd_size, 1);
		if (d < folio) {
			__sync_fetch_and_add(&rss_g.now.raced, d);
			return;
		}
		__sync_fetch_and_add(&rss_g.now.raced, d - folio);
		d = folio;
	}
	start = addr & ~((__u64)d - 1);
	b = rss_block_get(start);
	if (!b) {
		__sync_fetch_and_add(&rss_g.now.table_full, d);
		__sync_fetch_and_add(&rss_g.table_full_events, 1);
		return;
	}
	/* The stack first, the page walk's state after: w is not live across the capture, so
	 * its 64 bytes share the frame's slots with the capture's (the BPF stack of a whole
	 * call chain is 512 bytes: tools/check-stack.py). */
	owner = rss_fault_stack(ts) + 1;
	__builtin_memset(&w, 0, sizeof(w));
	RSS_WALK_INIT(&w);
	w.b = b;
	w.owner = owner;
	w.lo = (start >> 12) & (RSS_PAGES - 1);
	__sync_fetch_and_add(&rss_g.faults_used, 1);
	if (d == RSS_PAGE)
		rss_fill_page(0, &w);
	else
		bpf_loop(d >> 12, rss_fill_page, &w, 0);
	pt_rss_owner_add(w.owner, d);
	rss_owner_where(w.owner, addr);
	if (w.replaced)
		__sync_fetch_and_add(&rss_g.now.refaulted, w.replaced);
}

/*
 * Called by rss_stat (memstat.bpf.h) for the target's mm, before g.rss[m] takes the new value
 * size. Anonymous growth in the target's thread with a pending fault is attributed; any other
 * change goes to its figure.
 */
static __always_inline bool rss_change(__u32 curr, int m, __s64 size)
{
	struct thread_state *ts;
	__s64 d, pend, take;
	__u64 addr;

	if (m != PT_RSS_ANON) {
		if (m == PT_RSS_FILE || m == PT_RSS_SHMEM)
			pt_rss_sh_change(curr, m, size);
		return false;
	}
	/* Exchanged, so that with two CPUs reporting at once the deltas still add up to the
	 * counter (each event's own delta may then include the other's page: `raced`). */
	d = size - (__s64)__sync_lock_test_and_set((__u64 *)&g.rss[PT_RSS_ANON], (__u64)size);
	if (rss_g.exec_reset) {
		rss_g.exec_reset = 0;
		__sync_fetch_and_add(&rss_g.now.before, d);
		if (curr && (ts = thread_get(false)))
			ts->pf_addr = 0;
		return true;
	}
	if (!d)
		return true;
	if (!curr) {
		if (d > 0)
			__sync_fetch_and_add(&rss_g.now.other_task, d);
		else
			__sync_fetch_and_add(&rss_g.now.reclaimed, -d);
		return true;
	}
	if (d < 0) {
		pend = rss_g.now.pending;
		take = -d < pend ? -d : pend;
		if (take > 0)
			__sync_fetch_and_add(&rss_g.now.pending, -take);
		else
			take = 0;
		if (-d - take > 0)
			__sync_fetch_and_add(&rss_g.now.freed_unowned, -d - take);
		return true;
	}
	ts = thread_get(false);
	if (!ts || !ts->pf_addr) {
		__sync_fetch_and_add(&rss_g.now.no_fault, d);
		return true;
	}
	addr = ts->pf_addr;
	ts->pf_addr = 0;
	rss_fault_pages(ts, addr, d);
	return true;
}

/* After rss_stat raised g.rss_peak: the figures at this peak, and a new snapshot sequence. */
static __always_inline void rss_new_peak(void)
{
	rss_g.at_peak = rss_g.now;
	rss_g.at_peak.anon = g.rss[PT_RSS_ANON];
	__sync_fetch_and_add(&rss_g.peak_seq, 1);
}

#endif /* PEAKTRACE_RSS_BPF_H */

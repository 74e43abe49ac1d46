/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * memstat.bpf.h — the target's memory syscalls (mmap, munmap, mremap, brk, madvise), counted in
 * the totals and on the stack that made them, and its RSS from kmem:rss_stat.
 */
#ifndef PEAKTRACE_MEMSTAT_BPF_H
#define PEAKTRACE_MEMSTAT_BPF_H

#include "state.bpf.h"
#include "stack.bpf.h"
#include "invocation.bpf.h"
#include "inv.h"
#include "rss.bpf.h"
#include "sandbox.bpf.h"

#define PROT_EXEC 0x4
#define PT_PF_EXITING 0x00000004     /* task_struct.flags: in do_exit() (include/linux/sched.h) */
#ifndef MADV_DONTNEED
#define MADV_DONTNEED 4
#endif
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
	PT_ARCH_KEEP_LR(ts, PT_ARCH_REGS_LR(regs));     /* arm64: frame 0 (stack.bpf.h) */
	return capture(ts, BPF_CORE_READ(regs, PT_ARCH_SP), BPF_CORE_READ(regs, PT_ARCH_FP));
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
	ts->pf_addr = 0;   /* what the syscall makes resident is not a pending fault's */
	ts->sh_addr = 0;
	ts->rm_obj = 0;
	/* Mappings may change: every thread's cached file mapping is stale (rss.bpf.h). */
	__sync_fetch_and_add(&rss_g.map_gen, 1);
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

#define SYS_MMAP PT_ARCH_NR_MMAP
#define SYS_MUNMAP PT_ARCH_NR_MUNMAP
#define SYS_BRK PT_ARCH_NR_BRK
#define SYS_MREMAP PT_ARCH_NR_MREMAP
#define SYS_MADVISE PT_ARCH_NR_MADVISE

static __always_inline int mmap_enter(const __u64 *args)
{
	/* addr, len, prot, flags, fd */
	struct thread_state *ts = syscall_enter(SYS_MMAP, args[1], args[2], args[3],
						 args[4]);

	/* MAP_FIXED replaces what was mapped there: its pages go (rss.bpf.h). */
	if (ts)
		rss_mmap_fixed(args[0], ts->sc_arg0, ts->sc_arg2);
	return 0;
}

static __always_inline int mmap_exit(struct trace_event_raw_sys_exit *ctx)
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

static __always_inline int munmap_enter(const __u64 *args)
{
	struct thread_state *ts = syscall_enter(SYS_MUNMAP, args[0], args[1], 0, 0);
	__u64 len;

	if (!ts)
		return 0;
	len = page_round(args[1]);
	rss_munmap(args[0], len);
	__sync_fetch_and_add(&g.munmap_count, 1);
	__sync_fetch_and_add(&g.munmap_bytes, len);
	/* Its stack is counted at the exit (munmap_exit), whatever the result, as it was here: the
	 * entry program then has no stack capture to verify. */
	return 0;
}

/* munmap's exit: the stack that unmapped (the user registers are those of the entry). */
static __always_inline int munmap_exit(void)
{
	struct thread_state *ts = syscall_exit(SYS_MUNMAP);

	if (ts)
		stack_map_account(syscall_stack(ts), page_round(ts->sc_arg1), false);
	return 0;
}

static __always_inline int mremap_enter(const __u64 *args)
{
	/* addr, old_len, new_len */
	struct thread_state *ts = syscall_enter(SYS_MREMAP, args[0], args[1], args[2], 0);

	if (!ts)
		return 0;
	__sync_fetch_and_add(&g.mremap_count, 1);
	rss_mremap_enter(ts->sc_arg0, ts->sc_arg1, ts->sc_arg2);
	/* Its stack is counted at the exit (mremap_exit), whatever the result. */
	return 0;
}

static __always_inline int brk_enter(const __u64 *args)
{
	if (syscall_enter(SYS_BRK, args[0], 0, 0, 0))
		rss_brk_enter(args[0]);
	return 0;
}

static __always_inline int brk_exit(struct trace_event_raw_sys_exit *ctx)
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

static __always_inline int madvise_enter(const __u64 *args)
{
	if (is_target())
		rss_madvise(args[0], args[1], args[2]);
	/* DONTNEED and FREE give pages back: glibc trims thread-arena heaps this way. */
	if (!is_target() || (args[2] != MADV_DONTNEED && args[2] != MADV_FREE))
		return 0;
	__sync_fetch_and_add(&g.madv_count, 1);
	__sync_fetch_and_add(&g.madv_bytes, page_round(args[1]));
	return 0;
}

/* ---- RSS ---------------------------------------------------------------------------------- */

/*
 * kmem:rss_stat fires whenever an mm's counter changes, with the counter's value in bytes.
 * curr == 1 means the mm is the current task's: that is how the target's mm_id is learned
 * (and re-learned after exec). Events for the same mm from other tasks (reclaim) have curr 0.
 */
static __always_inline int rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	__s64 rss, old, size = ctx->size;   /* read once: clang may otherwise compute the
					     * field's address and load through it (a ctx
					     * pointer the verifier refuses to see modified) */
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
	} else if (is_target() &&
		   (BPF_CORE_READ((struct task_struct *)bpf_get_current_task_btf(), flags) & PT_PF_EXITING)) {
		/* Our mm, no longer the exiting thread's own: exit_mm() is tearing it down.
		 * Before 6.16 that happens before sched_process_exit (process.bpf.h), so the
		 * counters fell to zero before g.exited was set, and "at the end" read 0
		 * (measured on 6.12). The end is now. */
		g.exited = 1;
		return 0;
	}
	if (g.exited)
		return 0;
	if (m < 0 || m >= PT_RSS_COUNT)
		return 0;
	/* The anonymous counter is stored by rss_change itself (an atomic exchange). */
	if (!rss_change(ctx->curr, m, size))
		g.rss[m & 3] = size;
	rss = pt_rss_total(&g);
	sbx_rss(rss);
	if (rss > g.rss_peak) {
		g.rss_peak = rss;
		rss_new_peak();
	}
	if (rss > g.tl_rss_max)
		g.tl_rss_max = rss;   /* the timeline's interval maximum (peaktrace.h) */
	old = g.inv[g.inv_seq & 1].rss_peak;
	inv_rss(rss);
	if (g.inv[g.inv_seq & 1].rss_peak > old)
		rss_inv_new_peak(g.inv_seq);
	return 0;
}

/* mremap's exit: a moved mapping takes its pages' owners along (rss.bpf.h); the stack that grew
 * or shrank the mapping is counted, whatever the result. */
static __always_inline int mremap_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct thread_state *ts = syscall_exit(SYS_MREMAP);
	__u64 oldl, newl;

	if (!ts)
		return 0;
	rss_mremap_exit(ts->sc_arg0, ts->sc_arg1, ts->sc_arg2, ctx->ret);
	oldl = page_round(ts->sc_arg1);
	newl = page_round(ts->sc_arg2);
	if (newl > oldl)
		stack_map_account(syscall_stack(ts), newl - oldl, true);
	else if (oldl > newl)
		stack_map_account(syscall_stack(ts), oldl - newl, false);
	return 0;
}

/*
 * One program for the entries of the five memory syscalls and one for the exits of mmap, munmap,
 * mremap and brk (peaktrace.bpf.c; user/attach/probes.c attaches each to its tracepoints): the
 * syscall number tells them apart. Eight programs each carried their own copy of the stack
 * capture and of the RSS range walk, and the verifier checked every copy at load (~225K
 * instructions, over a third of the start-up's verification). Now the entry program walks the
 * ranges that go and the exit program captures every syscall's stack: each is checked once.
 */
static __always_inline int mem_syscall_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct pt_regs *regs;
	__u64 args[5];

	if (!is_target())
		return 0;
	/* The arguments from the registers the syscall saved (arch/; x86-64: rdi, rsi, rdx, r10,
	 * r8), not from ctx->args: the kernel refuses to attach a program to a syscall's tracepoint
	 * if it reads ctx past that syscall's own arguments (munmap has two, brk one). */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	args[0] = BPF_CORE_READ(regs, PT_ARCH_SYSARG0);
	args[1] = BPF_CORE_READ(regs, PT_ARCH_SYSARG1);
	args[2] = BPF_CORE_READ(regs, PT_ARCH_SYSARG2);
	args[3] = BPF_CORE_READ(regs, PT_ARCH_SYSARG3);
	args[4] = BPF_CORE_READ(regs, PT_ARCH_SYSARG4);
	switch (ctx->id) {
	case SYS_MMAP:
		return mmap_enter(args);
	case SYS_MUNMAP:
		return munmap_enter(args);
	case SYS_MREMAP:
		return mremap_enter(args);
	case SYS_BRK:
		return brk_enter(args);
	case SYS_MADVISE:
		return madvise_enter(args);
	}
	return 0;
}

static __always_inline int mem_syscall_exit(struct trace_event_raw_sys_exit *ctx)
{
	switch (ctx->id) {
	case SYS_MMAP:
		return mmap_exit(ctx);
	case SYS_MUNMAP:
		return munmap_exit();
	case SYS_MREMAP:
		return mremap_exit(ctx);
	case SYS_BRK:
		return brk_exit(ctx);
	}
	return 0;
}

#endif /* PEAKTRACE_MEMSTAT_BPF_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peaktrace.bpf.c — allocator uprobes, memory syscalls and RSS accounting, aggregated per stack
 * inside the kernel. Nothing per allocation crosses to user space; the ring buffer carries only
 * rare events (exit, new code mappings).
 *
 * Hot path budget: the traps themselves cost ~2.1 µs per allocation and ~1.1 µs
 * per free here, so the BPF work is kept to a task-storage lookup, one user-stack copy, one
 * stack-id hash lookup, one live-table bucket and a few atomics.
 *
 * This file is what is attached where: every program, each a thin wrapper around its concern.
 *   config.bpf.h      the loader's configuration (.rodata)
 *   state.bpf.h       .bss g, per-thread state, error counters, the ring buffer
 *   stack.bpf.h       stack capture (unwind.bpf.h: .eh_frame; python.bpf.h: CPython frames)
 *   heap.bpf.h        allocator entry/return and free, the live table, heap accounting
 *   arenas.bpf.h      glibc arenas
 *   memstat.bpf.h     memory syscalls and RSS
 *   rss.bpf.h         RSS attribution by page (page faults, page owners)
 *   invocation.bpf.h  invocation boundaries (Runtime API traffic, runtime uprobes)
 *   process.bpf.h     exec and exit
 * The contract with user space (structs, enums, cookies, who writes what) is peaktrace.h.
 */
#include "config.bpf.h"
#include "state.bpf.h"
#include "stack.bpf.h"
#include "heap.bpf.h"
#include "arenas.bpf.h"
#include "invocation.bpf.h"
#include "memstat.bpf.h"
#include "process.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- allocator ---------------------------------------------------------------------------- */

/*
 * One entry program for every allocation function: the attach cookie (enum pt_alloc_fn) says
 * which one, so the loader can attach all of them with a single uprobe-multi link (one RCU grace
 * period to detach instead of one per probe) and fall back to one perf-event uprobe per address
 * on older kernels.
 */
SEC("uprobe")
int alloc_enter_prog(struct pt_regs *ctx)
{
	PT_FLOOR_RETURN();
	return alloc_enter_by_cookie(ctx);
}

SEC("uretprobe")
int alloc_return(struct pt_regs *ctx)
{
	PT_FLOOR_RETURN();
	return alloc_exit(ctx);
}

/* free: no return probe, no thread state; possibly a few bytes past the entry (heap.bpf.h). */
SEC("uprobe")
int free_enter(struct pt_regs *ctx)
{
	PT_FLOOR_RETURN();
	return free_probe(ctx);
}

/* ---- memory syscalls ---------------------------------------------------------------------- */

/* The entries of mmap, munmap, mremap, brk and madvise: one program, attached to the five
 * tracepoints (user/attach/probes.c), told apart by syscall number (memstat.bpf.h), so the
 * verifier checks the stack capture and the RSS range walk once, not once per syscall ... */
SEC("tp/syscalls/sys_enter_mmap")
int on_mem_enter(struct trace_event_raw_sys_enter *ctx)
{
	PT_FLOOR_RETURN();
	return mem_syscall_enter(ctx);
}

/* ... and the exits of mmap, munmap, mremap and brk (where each one's stack is captured). */
SEC("tp/syscalls/sys_exit_mmap")
int on_mem_exit(struct trace_event_raw_sys_exit *ctx)
{
	PT_FLOOR_RETURN();
	return mem_syscall_exit(ctx);
}

/* ---- invocation boundaries ---------------------------------------------------------------- */

/* A Runtime API request is written with write, sendto or writev (its first buffer): one
 * program, attached to the three tracepoints (user/attach/probes.c), so the verifier checks the
 * request parser once, not three times (~0.1 s each on a loaded machine) ... */
SEC("tp/syscalls/sys_enter_write")
int on_write_enter(struct trace_event_raw_sys_enter *ctx)
{
	PT_FLOOR_RETURN();
	return rapi_write_like(ctx);
}

/* ... and the answer to "next" read with read or recvfrom. */
SEC("tp/syscalls/sys_exit_read")
int on_read_exit(struct trace_event_raw_sys_exit *ctx)
{
	PT_FLOOR_RETURN();
	return rapi_read_exit(ctx);
}

SEC("tp/syscalls/sys_exit_recvfrom")
int on_recvfrom_exit(struct trace_event_raw_sys_exit *ctx)
{
	PT_FLOOR_RETURN();
	return rapi_read_exit(ctx);
}

/* Uprobes on runtime functions: the attach cookie (enum pt_boundary_cookie) names the edge. */
SEC("uprobe")
int boundary_hit(struct pt_regs *ctx)
{
	PT_FLOOR_RETURN();
	return boundary_uprobe(ctx);
}

/* ---- RSS ---------------------------------------------------------------------------------- */

SEC("tp/kmem/rss_stat")
int on_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	PT_FLOOR_RETURN();
	return rss_stat(ctx);
}

/* ---- RSS attribution by page (rss.bpf.h) ------------------------------------------------- */

SEC("tp/exceptions/page_fault_user")
int on_page_fault_user(struct pt_fault_ctx *ctx)
{
	PT_FLOOR_RETURN();
	return rss_fault(ctx);
}

SEC("tp/exceptions/page_fault_kernel")
int on_page_fault_kernel(struct pt_fault_ctx *ctx)
{
	PT_FLOOR_RETURN();
	return rss_fault(ctx);
}

/* ---- process lifetime --------------------------------------------------------------------- */

SEC("tp/sched/sched_process_exec")
int on_exec(void *ctx)
{
	PT_FLOOR_RETURN();
	return process_exec();
}

SEC("tp/sched/sched_process_exit")
int on_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	PT_FLOOR_RETURN();
	return process_exit(ctx);
}

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

/*
 * The tracepoints below are BTF raw tracepoints (tp_btf): their programs get the tracepoint's
 * own arguments, with no perf record filled first, and their links' release does not wait for
 * a grace period under the kernel's event_mutex, as a perf-event tracepoint's close does
 * (~35 ms each, one after the other: attach/links.c). kmem:rss_stat stays a perf-event
 * tracepoint: its record's size is the counter summed over the CPUs under the counter's lock,
 * which its raw arguments (mm, member) do not give. The syscalls' stay per-syscall: a raw
 * sys_enter program would run for every system call of every process.
 */

/* ---- RSS attribution by page (rss.bpf.h) ------------------------------------------------- */

/* Each architecture's object has the fault programs its kernel can attach (arch/x86.bpf.h and
 * arch/arm64.bpf.h say which; user/arch names them to the loader): x86's two tracepoints, or
 * arm64's fentry. */
#ifdef PT_ARCH_FAULT_TRACEPOINTS
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	PT_FLOOR_RETURN();
	return rss_fault(address);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(on_page_fault_kernel, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	PT_FLOOR_RETURN();
	return rss_fault(address);
}
#endif

#ifdef PT_ARCH_FAULT_FENTRY
/* A BPF trampoline, not a raw tracepoint: it runs at every handle_mm_fault of every process
 * (as the tracepoints run at every fault), the target's own checked first (rss_mm_fault). */
SEC("fentry/handle_mm_fault")
int BPF_PROG(on_mm_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags,
	     struct pt_regs *regs)
{
	PT_FLOOR_RETURN();
	return rss_mm_fault(address, flags, regs);
}
#endif

/* ---- process lifetime --------------------------------------------------------------------- */

SEC("tp_btf/sched_process_exec")
int on_exec(__u64 *ctx)
{
	PT_FLOOR_RETURN();
	return process_exec();
}

/* sched_process_exit's raw arguments are (task, group_dead) since 6.16, (task) before: the
 * event record's group_dead field came with the argument, and its existence (a CO-RE
 * relocation) drops the read of a second argument on an older kernel before the verifier
 * checks it. */
SEC("tp_btf/sched_process_exit")
int on_exit(__u64 *ctx)
{
	PT_FLOOR_RETURN();
	if (bpf_core_field_exists(((struct trace_event_raw_sched_process_exit *)0)->group_dead))
		return process_exit(true, (bool)ctx[1]);
	return process_exit(false, false);
}

/* ---- asked by user space ------------------------------------------------------------------ */

/* Never attached: run with BPF_PROG_TEST_RUN by unwind_maps.c (a raw tracepoint program runs
 * there in the caller's own context), for the kernel's key of a file (unwind.bpf.h). */
SEC("raw_tp")
int unw_key_probe(void *ctx)
{
	return unw_key_of_own();
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch/x86.bpf.h — x86-64: the struct pt_regs fields the programs read (field names, so that a
 * direct load `regs->PT_ARCH_SP` and BPF_CORE_READ(regs, PT_ARCH_SP) both work), the syscall
 * numbers of arch/x86/entry/syscalls/syscall_64.tbl, and where the C++ ABI puts a hidden result
 * pointer. Included only through arch/arch.bpf.h.
 */
#ifndef PEAKTRACE_ARCH_X86_BPF_H
#define PEAKTRACE_ARCH_X86_BPF_H

#include "sysnr.h"

/* The user registers a fault or a syscall saved. */
#define PT_ARCH_IP      ip
#define PT_ARCH_SP      sp
#define PT_ARCH_FP      bp        /* rbp: the frame-pointer chain */
/* The syscall's number while inside it (-1 outside one). */
#define PT_ARCH_SYSNR   orig_ax
/* A syscall's first five arguments as saved at entry; still intact at its exit (rax, not
 * these, takes the return value). */
#define PT_ARCH_SYSARG0 di
#define PT_ARCH_SYSARG1 si
#define PT_ARCH_SYSARG2 dx
#define PT_ARCH_SYSARG3 r10
#define PT_ARCH_SYSARG4 r8

/* Syscall numbers (ctx->id of the raw syscall tracepoints). */
#define PT_ARCH_NR_MMAP PT_X86_64_NR_MMAP
#define PT_ARCH_NR_MUNMAP PT_X86_64_NR_MUNMAP
#define PT_ARCH_NR_BRK PT_X86_64_NR_BRK
#define PT_ARCH_NR_MREMAP PT_X86_64_NR_MREMAP
#define PT_ARCH_NR_MADVISE PT_X86_64_NR_MADVISE
#define PT_ARCH_NR_WRITEV PT_X86_64_NR_WRITEV

/* A C++ function returning a class by value through a hidden pointer (System V: the pointer
 * is the first argument, rdi, and comes back in rax): at its return, the pointer; at its
 * entry, its N-th declared argument (`this` is 1) is one register further on. */
#define PT_ARCH_SRET_AT_RETURN(ctx) PT_REGS_RC(ctx)
#define PT_ARCH_SRET_ARG2(ctx)      PT_REGS_PARM3(ctx)

/* Page faults: the tracepoints exceptions:page_fault_user and page_fault_kernel (peaktrace.bpf.c
 * on_page_fault_user/kernel), fired at every fault's exception entry. */
#define PT_ARCH_FAULT_TRACEPOINTS 1

#endif /* PEAKTRACE_ARCH_X86_BPF_H */

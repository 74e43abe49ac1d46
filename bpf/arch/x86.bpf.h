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
 * is the first argument, rdi, and comes back in rax): at its return, the pointer, so nothing
 * is kept from the entry (PT_ARCH_SRET_KEPT 0); at its entry, its N-th declared argument
 * (`this` is 1) is one register further on. */
#define PT_ARCH_SRET_KEPT 0
#define PT_ARCH_SRET_ENTRY(ctx) do { } while (0)
#define PT_ARCH_SRET_AT_RETURN(ctx) PT_REGS_RC(ctx)
#define PT_ARCH_SRET_ARG2(ctx)      PT_REGS_PARM3(ctx)

/* Stacks (stack.bpf.h, unwind.bpf.h). At a function's entry the call has pushed the return
 * address: frame 0 is the word at [sp] and the caller's rsp is sp + 8. No link register:
 * nothing is kept (PT_ARCH_KEEP_LR's argument is not even evaluated). */
#define PT_ARCH_REGS_LR(regs)         0
#define PT_ARCH_KEEP_LR(ts, lr)       do { } while (0)
#define PT_ARCH_ENTRY_RA(ts)          ((ts)->win[0])
#define PT_ARCH_ENTRY_SP_ADJ          8
/* Frame 0 at an entry is read from [sp]: an unreadable sp there leaves no stack at all. */
#define PT_ARCH_ENTRY_RA_IN_REG       0
/* Return addresses are plain addresses. */
#define PT_ARCH_STRIP_RA(ra)          (ra)
/* The frame-pointer walk's first rbp lies above the pushed return address: above sp. */
#define PT_ARCH_FP_FLOOR(sp)          (sp)
/* CFI rows (unwind.h): the kind is the whole byte, the return address always at CFA - 8. */
#define PT_ARCH_ROW_KIND(row)         ((row).cfa_reg)
/* rbp saved at CFA + 8 * rbp_off8 (0: not saved). */
#define PT_ARCH_ROW_FP_AT(row, cfa, bp_at)                           \
	do {                                                         \
		if ((row).rbp_off8)                                  \
			bp_at = (cfa) + 8 * (__s64)(row).rbp_off8;   \
	} while (0)
#define PT_ARCH_ROW_RA_IN_LR(row)     0
#define PT_ARCH_ROW_RA_KEEP(ts, row, cfa) do { } while (0)
#define PT_ARCH_ROW_RA_AT(ts, cfa)    ((cfa) + PT_UNWIND_RA_OFF)
/* The frame-pointer fallback: [rbp] = the caller's rbp, [rbp + 8] the return address, and
 * the caller's rsp is rbp + 16 (its CFA). */
#define PT_ARCH_FP_RA_KEEP(ts, cfa)   do { } while (0)
#define PT_ARCH_FP_CFA(fp)            ((fp) + 16)

/* Page faults: the tracepoints exceptions:page_fault_user and page_fault_kernel (peaktrace.bpf.c
 * on_page_fault_user/kernel), fired at every fault's exception entry. */
#define PT_ARCH_FAULT_TRACEPOINTS 1

#endif /* PEAKTRACE_ARCH_X86_BPF_H */

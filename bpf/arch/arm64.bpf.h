/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch/arm64.bpf.h — AArch64: what arch/x86.bpf.h names, for arm64's struct pt_regs
 * (regs[0..30], sp, pc, orig_x0, syscallno: arch/arm64/include/asm/ptrace.h) and the generic
 * syscall table (include/uapi/asm-generic/unistd.h: no open, no mmap2). Included only through
 * arch/arch.bpf.h. Compiled, not yet loaded anywhere: the arm64 VM matrix (issue 24) will.
 */
#ifndef PEAKTRACE_ARCH_ARM64_BPF_H
#define PEAKTRACE_ARCH_ARM64_BPF_H

#include "sysnr.h"

#define PT_ARCH_IP      pc
#define PT_ARCH_SP      sp
/* x29: the frame-record chain, laid out as x86's rbp chain ([x29] = the caller's x29,
 * [x29 + 8] = the saved x30, its return address). */
#define PT_ARCH_FP      regs[29]
#define PT_ARCH_SYSNR   syscallno /* an int: -1 (NO_SYSCALL) outside a syscall, as orig_ax */
/* The first argument from orig_x0: x0 takes the return value, so at a syscall's exit regs[0]
 * is no longer the argument; the others are not written by the syscall's return. */
#define PT_ARCH_SYSARG0 orig_x0
#define PT_ARCH_SYSARG1 regs[1]
#define PT_ARCH_SYSARG2 regs[2]
#define PT_ARCH_SYSARG3 regs[3]
#define PT_ARCH_SYSARG4 regs[4]

#define PT_ARCH_NR_MMAP PT_ARM64_NR_MMAP
#define PT_ARCH_NR_MUNMAP PT_ARM64_NR_MUNMAP
#define PT_ARCH_NR_BRK PT_ARM64_NR_BRK
#define PT_ARCH_NR_MREMAP PT_ARM64_NR_MREMAP
#define PT_ARCH_NR_MADVISE PT_ARM64_NR_MADVISE
#define PT_ARCH_NR_WRITEV PT_ARM64_NR_WRITEV

/* AAPCS64 passes the hidden result pointer in x8, not as an argument, and does not return it:
 * at the return it is gone (a later step keeps it from an entry probe; until then user space
 * does not attach aws-lambda-cpp's get_next on arm64 and reading address 32 fails, counted).
 * The N-th declared argument is xN-1: `this` is x0. */
#define PT_ARCH_SRET_AT_RETURN(ctx) 0
#define PT_ARCH_SRET_ARG2(ctx)      PT_REGS_PARM2(ctx)

/* Page faults: arm64 has no exceptions:page_fault_user/kernel (x86's tracepoints); the fault
 * handler's calls of handle_mm_fault are traced at their entry instead (fentry: 6.4+ on arm64,
 * where ftrace has direct calls), peaktrace.bpf.c's on_mm_fault and rss.bpf.h's rss_mm_fault. */
#define PT_ARCH_FAULT_FENTRY 1

#endif /* PEAKTRACE_ARCH_ARM64_BPF_H */

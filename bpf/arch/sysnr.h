/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch/sysnr.h — the syscall numbers the BPF programs compare a raw syscall tracepoint's id
 * with, per architecture (arch/x86.bpf.h and arch/arm64.bpf.h pick theirs). A pure header:
 * tests/unit/test_arch_arm64.c checks both sets against the C libraries' own tables.
 * x86-64: arch/x86/entry/syscalls/syscall_64.tbl. arm64: the generic table
 * (include/uapi/asm-generic/unistd.h), which has no open, no mmap2.
 */
#ifndef PEAKTRACE_ARCH_SYSNR_H
#define PEAKTRACE_ARCH_SYSNR_H

#define PT_X86_64_NR_MMAP    9
#define PT_X86_64_NR_MUNMAP  11
#define PT_X86_64_NR_BRK     12
#define PT_X86_64_NR_MREMAP  25
#define PT_X86_64_NR_MADVISE 28
#define PT_X86_64_NR_WRITEV  20

#define PT_ARM64_NR_MMAP     222
#define PT_ARM64_NR_MUNMAP   215
#define PT_ARM64_NR_BRK      214
#define PT_ARM64_NR_MREMAP   216
#define PT_ARM64_NR_MADVISE  233
#define PT_ARM64_NR_WRITEV   66

#endif /* PEAKTRACE_ARCH_SYSNR_H */

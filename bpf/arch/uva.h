/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch/uva.h — how many bits a user-space address has, for the words the BPF programs and user
 * space share (pyframe.h packs a code object's address into 44-45 bits of a 64-bit word).
 * Included by headers both sides compile: the BPF programs see -D__TARGET_ARCH_$(ARCH) (and no
 * machine of their own: -target bpf), user space its compiler's __x86_64__ / __aarch64__; a
 * unit test may define PT_ARCH_USER_VA_BITS first to check another architecture's layout.
 *
 *   x86-64  47: 4-level paging; 5-level kernels map above 2^47 only what asks for it (a hint
 *           above), which CPython's allocators never do. Addresses are below 0x8000'0000'0000
 *           (PIE at 0x55.., libraries and mmaps at 0x7f..).
 *   arm64   48: Debian's kernels (VA_BITS 48; 52 again only for mappings asked above 2^48).
 *           mmaps (pymalloc's arenas, large mallocs) just below 0xffff'ffff'ffff and a PIE at
 *           2/3 of TASK_SIZE (0xaaaa'aaaa'...., its brk heap after it): their addresses have
 *           bit 47 set, which a 47-bit field loses.
 */
#ifndef PEAKTRACE_ARCH_UVA_H
#define PEAKTRACE_ARCH_UVA_H

#ifndef PT_ARCH_USER_VA_BITS
#if defined(__TARGET_ARCH_arm64) || (!defined(__TARGET_ARCH_x86) && defined(__aarch64__))
#define PT_ARCH_USER_VA_BITS 48
#elif defined(__TARGET_ARCH_x86) || defined(__x86_64__)
#define PT_ARCH_USER_VA_BITS 47
#else
#error "peaktrace is written for x86-64 and arm64 (user address bits unknown)"
#endif
#endif

#endif /* PEAKTRACE_ARCH_UVA_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch.bpf.h — the one place the BPF programs test the architecture: the Makefile compiles them
 * with -D__TARGET_ARCH_$(ARCH) (bpf_tracing.h's PT_REGS_* for a probe's ctx follow it too), and
 * this picks the header that names what the programs read from a task's saved registers
 * (bpf_task_pt_regs), the syscall numbers they compare with and the C++ ABI's hidden result
 * pointer. Every other BPF file uses only the PT_ARCH_* names.
 */
#ifndef PEAKTRACE_ARCH_BPF_H
#define PEAKTRACE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "x86.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arm64.bpf.h"
#else
#error "peaktrace's BPF programs are written for x86 and arm64 (make ARCH=x86 or ARCH=arm64)"
#endif

#endif /* PEAKTRACE_ARCH_BPF_H */

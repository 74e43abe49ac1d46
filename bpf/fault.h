/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fault.h — where page faults are traced at the entry of handle_mm_fault (arm64: bpf/rss.bpf.h
 * rss_mm_fault), whether a call is the retry of the fault before it, counted once. Pure, shared
 * by the BPF program and tests/unit/test_fault.c.
 *
 * One fault can call handle_mm_fault several times (arch/arm64/mm/fault.c do_page_fault, as
 * x86's): first under the VMA's own lock (FAULT_FLAG_VMA_LOCK, 6.4+), for a user fault whose VMA
 * could be locked under RCU; when that returns VM_FAULT_RETRY (a new anonymous mapping's first
 * fault, a page being read, a swap-in), again under mmap_lock without that flag (with
 * FAULT_FLAG_TRIED only if the first try was a major fault); and after each VM_FAULT_RETRY under
 * mmap_lock, with FAULT_FLAG_TRIED. A retry is at the same address, by the same side (user or
 * kernel): a kernel fault on the same address (copy_to_user into the page a user fault only
 * read) is a new fault. What cannot be told apart: a new user fault at that address whose VMA
 * could not be locked under RCU (another thread changing the mapping), right after one there
 * that made nothing resident: it is taken for a retry (one fault fewer in the count; its page,
 * if it makes one resident, is attributed all the same).
 */
#ifndef PEAKTRACE_FAULT_H
#define PEAKTRACE_FAULT_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#include <linux/types.h>
#endif

/* The FAULT_FLAG_* bits it looks at, the running kernel's (BPF: by CO-RE; vma_lock 0 before
 * 6.4, when there is no such flag and no such retry). */
struct pt_fault_bits {
	__u32 tried, user, vma_lock;
};

/* Is a call with flags at an address the retry of the thread's previous call (prev: its flags;
 * same_addr: at the same address, still pending)? */
static inline bool pt_fault_is_retry(__u32 prev, __u32 flags, bool same_addr,
				     const struct pt_fault_bits *b)
{
	if (flags & b->tried)
		return true;
	return (prev & b->vma_lock) && !(flags & b->vma_lock) && same_addr &&
	       !((prev ^ flags) & b->user);
}

#endif /* PEAKTRACE_FAULT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * config.bpf.h — the loader's configuration (.rodata, set between open and load, never by
 * rebuilding), and the includes every BPF header starts from. A false flag lets the verifier
 * drop the code it disables: the feature costs nothing when off.
 */
#ifndef PEAKTRACE_CONFIG_BPF_H
#define PEAKTRACE_CONFIG_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "peaktrace.h"
#include "arch/arch.bpf.h"

/* Configuration, set by the loader between open and load. */
/* The target's host tgid: in .bss, not .rodata, so that a spare session (loaded before its
 * process is known, user/session.c) can be given it after the load with every setting still a
 * constant to the verifier; one load from the map value per check. */
__u32 targ_tgid = 0;
const volatile __u32 live_bucket_mask = 0;  /* live buckets - 1 (power of two) */
const volatile __u32 max_stacks = PT_DEF_MAX_STACKS;
const volatile bool capture_stacks = true;
/* Unwind with the .eh_frame tables user/unwind_maps.c loads (--unwind dwarf), not frame pointers. */
const volatile bool dwarf_unwind = false;
/* The allocator is glibc: attribute each block to its arena from its chunk header (chunk.h). */
const volatile bool glibc_arenas = false;
/* jemalloc, tcmalloc, mimalloc: free_enter also looks at the thread's state, because their entry
 * points call each other. mimalloc's realloc frees a moved block through `free` (mi_free): that
 * free belongs to the realloc, accounted at its return. jemalloc's aligned sized operator delete
 * tail-jumps to sdallocx: one delete hits two free probes, the second before the block is really
 * freed (so nothing can have reused the pointer), and must not count as an unknown free.
 * glibc needs neither and keeps its free path without the lookup (false: no cost). */
const volatile bool free_checks_thread = false;
/* Find invocation boundaries in the target's Runtime API traffic. */
const volatile bool rapi_boundaries = false;
/* aws-lambda-cpp boundaries (--boundary uprobe: get_next's return), attach mode: a runtime
 * attached while it waits in get_next entered it before the probes (no return probe for that
 * call), so its first start is the answer to that "next" read on a Runtime API socket found at
 * attach — only while no boundary has ended or started an invocation yet. */
const volatile bool rapi_first_start = false;
/* --sample-bytes: mean bytes between stack samples (sample.h); 0 = every allocation unwound. */
const volatile __u64 sample_bytes = 0;
/* Bytes of the ring buffer invocation records may fill (three quarters of it: user space sets
 * it with the ring's size; inv_room in invocation.bpf.h). */
const volatile __u64 rb_inv_room = 768 * 1024;
/* The target runs CPython: read its frames (python.bpf.h). Off: the verifier drops the walk. */
const volatile bool python = false;
/* The probe floor (hidden --probe-floor, for tools/bench/bench.sh): every program returns at
 * once, so a run attaches exactly the same uprobes, uretprobes and tracepoints and costs only the
 * traps. Full mode's cost is shown as a ratio to it. The verifier drops the rest when it is off. */
const volatile bool probe_floor = false;

/* The kernel has the bpf_rdonly_cast kfunc (6.2+; user/kernel/features.c looks it up in the
 * kernel's BTF). Off: unw_task() uses bpf_get_current_task_btf()'s pointer itself (the same
 * loads; only the verification is slower) and the verifier drops the kfunc call, which is a
 * weak extern that libbpf leaves unresolved on an older kernel. */
const volatile bool has_rdonly_cast = false;

/* The first statement of every attached program. */
#define PT_FLOOR_RETURN()                                                                      \
	do {                                                                                   \
		if (probe_floor)                                                               \
			return 0;                                                              \
	} while (0)

#endif /* PEAKTRACE_CONFIG_BPF_H */

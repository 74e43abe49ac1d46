/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* probes.h — where the allocator's entry points are probed, and attaching the BPF programs. */
#ifndef PEAKTRACE_PROBES_H
#define PEAKTRACE_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "target/procmaps.h"
#include "attach/probeplace.h"
#include "attach/links.h"

struct peaktrace_bpf;

/* Where one allocator entry point was probed. */
struct pt_probe_info {
	int fn;                 /* enum pt_alloc_fn: the function, or the one an extra entry point
	                         * (C++ operator, jemalloc *allocx) behaves like */
	const char *symbol;
	uint64_t entry;         /* file offset of the entry point */
	uint64_t offset;        /* file offset of the probe (entry + skip) */
	struct pt_probe_place place;
	bool return_probe;
	int shared_with;        /* -1, or the fn whose probe this address already has */
	const char *shared_symbol;  /* that probe's symbol */
	bool forwards;          /* a `jmp` thunk to another entry point: not probed */
	bool attached;
};

/* The C entry points plus the extra ones (procmaps.h). */
#define PT_PROBES_MAX (PT_FN_MAX + PT_EXTRA_FN_MAX)

/* Decide where each of a's entry points is probed (before load): probes[0..*nprobes), which
 * holds PT_PROBES_MAX. Returns 0 or -errno (the allocator cannot be read; said on stderr). */
int pt_plan_probes(const struct pt_allocator *a, struct pt_probe_info *probes, int *nprobes);

/* Attach the allocator probes planned by pt_plan_probes (after load), in the order a running
 * target needs; multi: uprobe-multi links. Returns 0 or -errno (said on stderr). */
int pt_attach_allocator(struct peaktrace_bpf *skel, struct pt_links *links,
			const struct pt_allocator *a, pid_t pid, struct pt_probe_info *probes,
			int nprobes, bool multi);

/* The memory-syscall, rss_stat, exec and exit tracepoints, and with boundaries the Runtime API
 * socket ones. Returns 0 or -errno (said on stderr). */
int pt_attach_tracepoints(struct peaktrace_bpf *skel, struct pt_links *links, bool boundaries);

#endif

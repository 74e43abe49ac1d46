/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* attachall.h — the allocator's probes and the tracepoints, attached together. */
#ifndef PEAKTRACE_ATTACH_ATTACHALL_H
#define PEAKTRACE_ATTACH_ATTACHALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "attach/links.h"
#include "attach/probes.h"

/*
 * The allocator a's probes (pt_attach_allocator), then the tracepoints (boundaries: the Runtime
 * API's too). parallel (a launched command held before its exec, nothing of it runs, so their
 * order makes no difference): both at once on two threads (the uprobe-multi link alone is ~9 ms
 * of kernel work, the tracepoints ~0.5 ms each). Every link is kept in links (detached at the
 * end) whether or not either failed. *uprobe_links: how many links the allocator's probes took
 * (what attaching them one by one cost on a kernel without uprobe-multi links). 0, else nonzero.
 */
int pt_attach_all(struct peaktrace_bpf *skel, struct pt_links *links, const struct pt_allocator *a,
		  pid_t pid, struct pt_probe_info *probes, int nprobes, bool multi, bool boundaries,
		  bool parallel, uint32_t *uprobe_links);

/* Tracepoints are attached by their tracefs ids: a fresh system may not have it mounted. Mounted
 * on /sys/kernel/tracing when neither it nor debugfs' has the events (a warning if it cannot). */
void pt_tracefs_mount(void);

#endif

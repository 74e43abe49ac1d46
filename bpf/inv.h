/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * inv.h — what an invocation records when it ends: one rule for both sides.
 *
 * Pure functions shared by the BPF program (an invocation closed at its boundary) and user space
 * (the invocation, or init phase, still running when tracing stops), so what an invocation
 * records is changed in one place. Unit-tested in tests/unit/test_boundary.c.
 */
#ifndef PEAKTRACE_INV_H
#define PEAKTRACE_INV_H

#include "peaktrace.h"

/* Resident bytes as kmem:rss_stat counts them (file + anonymous + shared memory). */
static inline __s64 pt_rss_total(const struct pt_global *g)
{
	return g->rss[PT_RSS_FILE] + g->rss[PT_RSS_ANON] + g->rss[PT_RSS_SHMEM];
}

/* The frees so far, derived (struct pt_global keeps no free counters). */
static inline __u64 pt_free_count(const struct pt_global *g)
{
	return g->alloc_count - (__u64)g->live_count - g->unheld_count;
}

static inline __u64 pt_free_bytes(const struct pt_global *g)
{
	return g->alloc_bytes - (__u64)g->live_bytes - g->unheld_bytes;
}

/* End figures of inv from the process-wide state g at now_ns: RSS and live heap at its end, and
 * the allocations and frees made since it started (g's counters less those saved at its start).
 * The request id, the boundary socket and the state are the caller's (only a boundary has them). */
static inline void pt_inv_close(struct pt_inv *inv, const struct pt_global *g, __u64 now_ns,
				__u32 outcome)
{
	inv->end_ns = now_ns;
	inv->rss_end = pt_rss_total(g);
	inv->heap_end = g->live_bytes;
	inv->alloc_count = g->alloc_count - inv->alloc_count0;
	inv->alloc_bytes = g->alloc_bytes - inv->alloc_bytes0;
	inv->free_count = pt_free_count(g) - inv->free_count0;
	inv->free_bytes = pt_free_bytes(g) - inv->free_bytes0;
	inv->outcome = outcome;
}

#endif

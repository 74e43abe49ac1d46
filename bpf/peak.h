/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * peak.h — exact attribution of the live-heap peak without an event log.
 *
 * Pure functions shared by the BPF program and the host unit tests (tests/unit/test_peak.c).
 *
 * A global peak_seq is bumped whenever the live total sets a new maximum. Before a stack's live
 * counters change, if the stack has not been snapshotted since the last peak, its current live
 * values are what it held at that peak: copy them to peak_* and stamp snap_seq. At report time a
 * stack whose snap_seq is current has peak_* as its value at the peak; any other stack has not
 * changed since, so live_* is its value at the peak. O(1) per event, no per-peak walk.
 *
 * Order matters: the allocating stack is touched BEFORE its live counters grow, and the global
 * total (which may bump peak_seq) is updated AFTER, so the allocation that makes the peak is part
 * of its stack's "live" at that peak.
 */
#ifndef PEAKTRACE_PEAK_H
#define PEAKTRACE_PEAK_H

#include "peaktrace.h"

/* What a stack holds live now: derived, never kept (struct pt_stack_stats). */
static inline __s64 pt_live_bytes_of(const struct pt_stack_stats *st)
{
	return (__s64)(st->alloc_bytes - st->free_bytes) - st->unheld_bytes;
}

static inline __s64 pt_live_count_of(const struct pt_stack_stats *st)
{
	return (__s64)(st->alloc_count - st->free_count) - st->unheld_count;
}

static inline void pt_peak_touch(struct pt_stack_stats *st, __u64 peak_seq)
{
	if (st->snap_seq != peak_seq) {
		st->peak_count = pt_live_count_of(st);
		st->peak_bytes = pt_live_bytes_of(st);
		st->snap_seq = peak_seq;
	}
}

/* What a stack held at the last peak. */
static inline __s64 pt_peak_bytes_of(const struct pt_stack_stats *st, __u64 peak_seq)
{
	return st->snap_seq == peak_seq ? st->peak_bytes : pt_live_bytes_of(st);
}

static inline __s64 pt_peak_count_of(const struct pt_stack_stats *st, __u64 peak_seq)
{
	return st->snap_seq == peak_seq ? st->peak_count : pt_live_count_of(st);
}

/* After the live total changed to new_total: returns 1 when a new peak was set. Single-writer
 * form, used by the unit tests; the BPF side does the same with compare-and-swap. */
static inline int pt_peak_update(struct pt_global *g, __s64 new_total)
{
	if (new_total > g->peak_bytes) {
		g->peak_bytes = new_total;
		g->peak_count = g->live_count;
		g->peak_seq++;
		return 1;
	}
	return 0;
}

#endif

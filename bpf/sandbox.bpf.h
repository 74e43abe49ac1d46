/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sandbox.bpf.h — this process's part of the sandbox's summed RSS (struct pt_sandbox,
 * peaktrace.h): the map is shared by every traced process's object, each writing its own slot.
 * sbx_on false (a session of its own): the verifier drops all of it.
 */
#ifndef PEAKTRACE_SANDBOX_BPF_H
#define PEAKTRACE_SANDBOX_BPF_H

#include "config.bpf.h"

/* One process of a sandbox (a setting), and its slot in the sandbox map: the slot in .bss, so a
 * spare session loaded before its process is known is given it after the load. */
const volatile bool sbx_on = false;
__u32 sbx_slot = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pt_sandbox);
} sandbox SEC(".maps");

static __always_inline struct pt_sandbox *sbx_get(void)
{
	__u32 zero = 0;

	if (!sbx_on || sbx_slot >= PT_SBX_SLOTS)
		return NULL;
	return bpf_map_lookup_elem(&sandbox, &zero);
}

/* Each slot's RSS now, copied where the sum peaked. Another CPU may move a slot during the
 * copy: the shares then differ from the peak by that much (the report says by how much). */
static __always_inline void sbx_copy(__s64 *dst, const __s64 *src)
{
	for (int i = 0; i < PT_SBX_SLOTS; i++)
		dst[i] = src[i];
}

/* This process's RSS total is now rss (absolute): fold the change into the sum. */
static __always_inline void sbx_rss(__s64 rss)
{
	struct pt_sandbox *s = sbx_get();
	__s64 old, sum;

	if (!s)
		return;
	old = __sync_lock_test_and_set(&s->cur[sbx_slot & (PT_SBX_SLOTS - 1)], rss);
	if (old == rss)
		return;
	if (rss > s->own_peak[sbx_slot & (PT_SBX_SLOTS - 1)])
		s->own_peak[sbx_slot & (PT_SBX_SLOTS - 1)] = rss;
	sum = __sync_fetch_and_add(&s->sum, rss - old) + (rss - old);
	__sync_fetch_and_add(&s->updates, 1);
	if (sum > s->peak) {
		s->peak = sum;
		s->peak_ns = bpf_ktime_get_ns();
		sbx_copy(s->at_peak, s->cur);
	}
	if (s->inv_owner && sum > s->inv_peak) {
		s->inv_peak = sum;
		s->inv_peak_ns = bpf_ktime_get_ns();
		sbx_copy(s->inv_at_peak, s->cur);
	}
}

/* One of this process's invocations starts: the sandbox's figures for it from now. */
static __always_inline void sbx_inv_start(__u64 seq)
{
	struct pt_sandbox *s = sbx_get();

	if (!s)
		return;
	__sync_fetch_and_add(&s->runtime[sbx_slot & (PT_SBX_SLOTS - 1)], 1);
	if (s->inv_owner && s->inv_owner != (__u64)sbx_slot + 1) {
		/* Another process's invocation runs: one at a time is tracked. */
		__sync_fetch_and_add(&s->inv_overlap, 1);
		return;
	}
	s->inv_seq = seq;
	s->inv_start = s->inv_peak = s->sum;
	s->inv_peak_ns = bpf_ktime_get_ns();
	sbx_copy(s->inv_at_peak, s->cur);
	s->inv_owner = (__u64)sbx_slot + 1;
}

/* It ends: its record into the ring of finished ones. */
static __always_inline void sbx_inv_end(__u64 seq)
{
	struct pt_sandbox *s = sbx_get();
	struct pt_sbx_inv *r;
	__u64 n;

	if (!s || s->inv_owner != (__u64)sbx_slot + 1 || s->inv_seq != seq)
		return;
	n = __sync_fetch_and_add(&s->inv_n, 1);
	r = &s->invs[n & (PT_SBX_INVS - 1)];
	r->owner = s->inv_owner;
	r->seq = seq;
	r->start = s->inv_start;
	r->peak = s->inv_peak;
	r->peak_ns = s->inv_peak_ns;
	sbx_copy(r->at_peak, s->inv_at_peak);
	s->inv_owner = 0;
}

/* The process is gone: its memory no longer counts. */
static __always_inline void sbx_exit(void)
{
	sbx_rss(0);
}

static __always_inline void sbx_extension(void)
{
	struct pt_sandbox *s = sbx_get();

	if (s)
		__sync_fetch_and_add(&s->extension[sbx_slot & (PT_SBX_SLOTS - 1)], 1);
}

#endif /* PEAKTRACE_SANDBOX_BPF_H */

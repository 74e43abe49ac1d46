// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tests/stack/over.bpf.c — a BPF object whose deepest call chain is over the stack budget, for
 * the layout section's case layout/check-stack: tools/check-stack.py must name the chain
 * (prog 288 + walk 224 + the bpf_loop callback 64 = 576 bytes, as the kernel before 6.9 counts
 * it), and pass the program that stays under. Never loaded: only read.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct cb_ctx {
	__u64 w[6];
};

/* A callback passed to bpf_loop: the verifier counts it as a call frame. */
static long leaf_cb(__u64 i, struct cb_ctx *c)
{
	__u64 buf[5];

	bpf_probe_read_user(buf, sizeof(buf), (void *)c->w[i & 3]);
	c->w[0] += buf[0] + buf[4];
	return 0;
}

__noinline int walk(__u64 p)
{
	__u64 buf[22];
	struct cb_ctx c = { .w = { p } };

	bpf_probe_read_user(buf, sizeof(buf), (void *)p);
	bpf_loop(4, leaf_cb, &c, 0);
	return buf[0] + buf[21] + c.w[0];
}

SEC("uprobe")
int over_budget(struct pt_regs *ctx)
{
	__u64 buf[34];

	bpf_probe_read_user(buf, sizeof(buf), (void *)ctx->sp);
	return walk(buf[0] + buf[33]);
}

SEC("uprobe")
int under_budget(struct pt_regs *ctx)
{
	__u64 buf[4];

	bpf_probe_read_user(buf, sizeof(buf), (void *)ctx->sp);
	return walk(buf[0] + buf[3]);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

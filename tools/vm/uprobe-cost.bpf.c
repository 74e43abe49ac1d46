// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprobe-cost.bpf.c: the smallest uprobe program, one counter bumped per hit
 * (tools/vm/uprobe-cost.c attaches it; the cost measured is the kernel's, not this program's). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("uprobe")
int on_hit(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

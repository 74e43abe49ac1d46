// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_stacksize.c — the stack table's default size from the machine (pt_stacks_for_memory,
 * user/cli.c) and its tiers (pt_tier_start, bpf/peaktrace.h): the parts for whole stacks, stacks
 * cut to their innermost frames and stacks cut to their leaf. */
#include <stdint.h>
#include "check.h"
#include "bpf/peaktrace.h"
#include "cli.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

int main(void)
{
	/* ~968 bytes a slot: 2^18 slots need 242 MiB, within a sixteenth of 3.9 GiB. */
	CHECK_EQ_U64(pt_stacks_for_memory(24 * GiB, 0), 262144, "24 GiB available: the most (2^18)");
	CHECK_EQ_U64(pt_stacks_for_memory(4 * GiB, 0), 262144, "4 GiB: 2^18 (242 MiB of 256)");
	CHECK_EQ_U64(pt_stacks_for_memory(3 * GiB, 0), 131072, "3 GiB: 2^17");
	CHECK_EQ_U64(pt_stacks_for_memory(1 * GiB, 0), 65536, "1 GiB (a small VM): 2^16, the old default");
	CHECK_EQ_U64(pt_stacks_for_memory(100 * MiB, 0), 16384, "100 MiB: never below 2^14");
	CHECK_EQ_U64(pt_stacks_for_memory(0, 0), 16384, "unknown memory: 2^14");
	CHECK_EQ_U64(pt_stacks_for_memory(24 * GiB, 512 * MiB), 65536,
		     "a cgroup with 512 MiB left: an eighth of it (64 MiB) -> 2^16, the old default");
	CHECK_EQ_U64(pt_stacks_for_memory(24 * GiB, 1), 16384, "a cgroup at its limit: 2^14");

	CHECK_EQ_U64(pt_tier_start(65536, PT_TIER_WHOLE), 1, "whole stacks from index 1 (0 is unknown)");
	CHECK_EQ_U64(pt_tier_start(65536, PT_TIER_INNER), 57344, "the innermost tier: the last eighth");
	CHECK_EQ_U64(pt_tier_start(65536, PT_TIER_LEAF), 64512, "the leaf tier: the last 64th");
	CHECK(pt_tier_start(16384, PT_TIER_INNER) < pt_tier_start(16384, PT_TIER_LEAF) &&
	      pt_tier_start(16384, PT_TIER_LEAF) < 16384, "at the smallest default the tiers are in order, none empty");
	return CHECK_DONE();
}

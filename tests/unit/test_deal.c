// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_deal.c — pt_deal (user/bpfload.c): the programs dealt to the two loading threads by
 * verifier cost, and the maps by the bytes the kernel zeroes, so both threads end together. */
#include <stdint.h>
#include "check.h"
#include "bpfload.h"

static uint64_t worker_load(const uint64_t *cost, const int *part, int n, int w)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++)
		if (part[i] == w)
			s += cost[i];
	return s;
}

int main(void)
{
	/* The default run's programs, in skeleton order, with the costs bpfload.c deals by:
	 * alloc_enter_prog, free_enter, boundary_hit (not loaded), alloc_return, on_mem_enter,
	 * on_mem_exit, on_write_enter, on_read_exit, on_recvfrom_exit, on_rss_stat, and four
	 * small tracepoint programs. */
	uint64_t cost[] = { 15400, 300, 2000, 5200, 8600, 14300, 8700, 300, 300, 28000, 300, 300, 300, 300 };
	int n = sizeof(cost) / sizeof(cost[0]), part[14];
	uint64_t a, b;

	for (int i = 0; i < n; i++)
		part[i] = i == 2 ? -1 : 0;
	pt_deal(cost, n, 2, part);
	CHECK(part[2] == -1, "a program not loaded is dealt to no thread");
	CHECK(part[9] == 0, "the dearest (on_rss_stat) first, to the first thread");
	a = worker_load(cost, part, n, 0);
	b = worker_load(cost, part, n, 1);
	CHECK_EQ_U64(a + b, 82300, "every loaded program dealt once (the costs add up)");
	{
		/* Dealt greedily, the busier thread was the idler one when it took its last
		 * (cheapest) program: they differ by at most that program's cost. */
		int heavy = a >= b ? 0 : 1;
		uint64_t least = UINT64_MAX;

		for (int i = 0; i < n; i++)
			if (part[i] == heavy && cost[i] < least)
				least = cost[i];
		CHECK((a > b ? a - b : b - a) <= least,
		      "the threads' verifier time (%llu, %llu) differ by at most the busier one's cheapest program (%llu)",
		      (unsigned long long)a, (unsigned long long)b, (unsigned long long)least);
		CHECK(a == 41900 && b == 40400, "the default run's split: 41.9 ms and 40.4 ms of verification");
	}
	for (int i = 0; i < n; i++)
		if (i != 2 && (part[i] < 0 || part[i] > 1))
			CHECK(0, "program %d dealt to thread %d", i, part[i]);

	/* One part: everything to it (a spare session). */
	for (int i = 0; i < n; i++)
		part[i] = i == 2 ? -1 : 0;
	pt_deal(cost, n, 1, part);
	a = 0;
	for (int i = 0; i < n; i++)
		a += part[i] == 0;
	CHECK(a == (uint64_t)n - 1 && part[2] == -1, "one copy: every loaded program to it");

	/* The maps: the big preallocated ones of the default configuration (bytes, roughly), the small
	 * ones as 0. The two largest go to different threads. */
	{
		uint64_t bytes[] = { 262144, 8388608, 0, 33554432, 2129920, 14680064, 0, 0, 0, 65536,
				     786432, 34603008, 0, 0 };
		int m = sizeof(bytes) / sizeof(bytes[0]), to[14];

		for (int i = 0; i < m; i++)
			to[i] = 0;
		pt_deal(bytes, m, 2, to);
		CHECK(to[11] != to[3], "stacks (34.6 MB) and live (33.5 MB) created on different threads");
		a = worker_load(bytes, to, m, 0);
		b = worker_load(bytes, to, m, 1);
		CHECK(a > b ? a - b <= 14680064 : b - a <= 14680064,
		      "the threads' bytes within the third largest map's (%llu against %llu)",
		      (unsigned long long)a, (unsigned long long)b);
	}

	/* Ties: the lowest index first, to the lowest worker. */
	{
		uint64_t same[] = { 5, 5, 5, 5 };
		int p[4] = { 0, 0, 0, 0 };

		pt_deal(same, 4, 2, p);
		CHECK(p[0] == 0 && p[1] == 1 && p[2] == 0 && p[3] == 1, "equal costs alternate (%d %d %d %d)",
		      p[0], p[1], p[2], p[3]);
	}
	/* How many copies: two only with two CPUs ours. */
	CHECK(pt_load_parts_for(2, 0) == 2, "2 CPUs, no limit: two copies");
	CHECK(pt_load_parts_for(1, 0) == 1, "1 CPU: one copy");
	CHECK(pt_load_parts_for(8, 1.0) == 1, "8 CPUs but a 1-CPU cgroup quota: one copy");
	CHECK(pt_load_parts_for(8, 1.5) == 1, "a 1.5-CPU quota: one copy");
	CHECK(pt_load_parts_for(8, 2.0) == 2, "a 2-CPU quota: two copies");
	CHECK(pt_load_parts_for(2, 4.0) == 2, "a quota above the CPUs: the CPUs decide");

	/* Out-of-range worker counts fall back to PT_LOAD_PARTS; nothing to deal is fine. */
	{
		uint64_t c[] = { 1, 2 };
		int p[2] = { 0, 0 };

		pt_deal(c, 2, 7, p);
		CHECK(p[1] == 0 && p[0] == 1, "7 workers asked: two used");
		pt_deal(c, 0, 2, p);
		CHECK(1, "no items");
	}
	return CHECK_DONE();
}

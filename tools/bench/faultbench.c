// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * faultbench — the cost of an anonymous page fault, for tools/bench/faults.sh.
 *
 * Usage: faultbench MIB ROUNDS
 *   Transparent huge pages off (PR_SET_THP_DISABLE), so every page is one fault. Each round
 *   maps MIB MiB, writes one byte per 4 KiB page (timed with CLOCK_MONOTONIC) and unmaps it.
 *   Prints "ns_per_fault X cpu_ns_per_fault Y": the median round's nanoseconds per page, by the
 *   clock and in CPU time of the process (CLOCK_PROCESS_CPUTIME_ID: the fault handling and the
 *   BPF programs run for it, not the time it waited for a CPU).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

static double clock_at(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double now(void)
{
	return clock_at(CLOCK_MONOTONIC);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 256) << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r;
	double t[64], c[64];

	if (rounds < 1 || rounds > 64)
		return 2;
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	for (r = 0; r < rounds; r++) {
		volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t0, c0;

		if (p == MAP_FAILED)
			return 1;
		c0 = clock_at(CLOCK_PROCESS_CPUTIME_ID);
		t0 = now();
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		t[r] = (now() - t0) / (double)(len / 4096);
		c[r] = (clock_at(CLOCK_PROCESS_CPUTIME_ID) - c0) / (double)(len / 4096);
		munmap((void *)p, len);
	}
	qsort(t, rounds, sizeof(t[0]), cmp);
	qsort(c, rounds, sizeof(c[0]), cmp);
	printf("ns_per_fault %.1f cpu_ns_per_fault %.1f\n", t[rounds / 2], c[rounds / 2]);
	return 0;
}

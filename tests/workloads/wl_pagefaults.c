/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_pagefaults — a known number of page faults, for the rss section's "faults counted once" case
 * (tests/sections/rss.py): N one-page anonymous regions, each its own VMA (a PROT_NONE guard
 * page after it keeps neighbours from merging), each written once. Its own count of them
 * (getrusage's minor + major faults across the loop: the kernel counts a fault once, when it
 * completes, however often handle_mm_fault was called for it) is logged: "regions N",
 * "own_faults M".
 *
 * Usage: wl_pagefaults LOG N
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "wl_common.h"

static long faults_so_far(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt + u.ru_majflt;
}

static WL_SCENARIO void scn_regions(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || mprotect(p + 4096, 4096, PROT_NONE))
			exit(1);
		p[0] = 1;
	}
}

int main(int argc, char **argv)
{
	long n, f0;
	int fd;

	if (argc < 3)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	n = atol(argv[2]);
	if (fd < 0 || n < 0)
		return 2;
	/* Small pages: a region's fault is one page whatever the THP mode. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	f0 = faults_so_far();
	scn_regions(n);
	wl_say_val(fd, "regions", n);
	wl_say_val(fd, "own_faults", faults_so_far() - f0);
	return 0;
}

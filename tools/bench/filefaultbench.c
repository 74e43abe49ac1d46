// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * filefaultbench — the cost of a file-backed or shared-memory page fault, for
 * tools/bench/filefaults.sh (what charging file/shmem pages to their object costs, bpf/rss.bpf.h).
 *
 * Usage: filefaultbench file|shmem MIB ROUNDS DIR
 *   file: DIR/filefaultbench.data (MIB MiB, written once, so in the page cache, then unlinked),
 *   mapped shared read-only; one byte of every 16th page is read: each read is one fault that
 *   maps its 64 KiB fault-around window (the kernel's default). shmem: a memfd of MIB MiB
 *   mapped shared, every page written (one page per fault). Each round maps, touches (timed
 *   with CLOCK_MONOTONIC), unmaps. Prints "ns_per_fault X", the median round's nanoseconds per
 *   fault.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int shmem = argc > 1 && !strcmp(argv[1], "shmem");
	size_t len = (size_t)(argc > 2 ? atol(argv[2]) : 256) << 20;
	int rounds = argc > 3 ? atoi(argv[3]) : 5, r, fd;
	size_t step = shmem ? 4096 : 16 * 4096;
	char path[4096];
	static char block[1 << 16];
	double t[64];
	volatile long sum = 0;

	if (rounds < 1 || rounds > 64 || argc < 5)
		return 2;
	if (shmem) {
		fd = memfd_create("filefaultbench", 0);
		if (fd < 0 || ftruncate(fd, (off_t)len))
			return 1;
	} else {
		snprintf(path, sizeof(path), "%s/filefaultbench.data", argv[4]);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 1;
		memset(block, 1, sizeof(block));
		for (size_t i = 0; i < len; i += sizeof(block))
			if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
				return 1;
		unlink(path);
	}
	for (r = 0; r < rounds; r++) {
		volatile char *p = mmap(NULL, len, shmem ? PROT_READ | PROT_WRITE : PROT_READ,
					MAP_SHARED, fd, 0);
		double t0;

		if (p == MAP_FAILED)
			return 1;
		t0 = now();
		for (size_t i = 0; i < len; i += step) {
			if (shmem)
				p[i] = 1;
			else
				sum += p[i];
		}
		t[r] = (now() - t0) / (double)(len / step);
		munmap((void *)p, len);
	}
	qsort(t, rounds, sizeof(t[0]), cmp);
	printf("ns_per_fault %.1f\n", t[rounds / 2]);
	return 0;
}

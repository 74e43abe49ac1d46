/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * allocbench — a deterministic, allocation-heavy program for overhead measurements.
 *
 * Usage: allocbench [--wait] [--time] [OPS]       (OPS default 1000000)
 *
 * OPS operations on a ring of 1024 slots. Each operation draws from a fixed-seed
 * 64-bit LCG a slot and a size in 16..4096, frees the slot's previous block and
 * allocates a new one: 1 in 64 operations uses calloc(1, size), 1 in 64 grows or
 * shrinks the slot's block with realloc instead of free+malloc, the rest use malloc.
 * The first byte of every block is written (the block is really used) and folded into
 * a checksum together with the sizes, so the result is the same on every run and
 * nothing can be optimized away. At the end all slots are freed.
 *
 * Prints only "checksum=<hex>" on stdout at the end (after the measured loop, so
 * stdio's own buffer allocation is outside it).
 *   --time  also prints "allocbench: loop_ns=<ns> ops=<n>" on stderr: the time of
 *           the operation loop alone, measured with CLOCK_MONOTONIC. Tools that
 *           attach after start-up (memleak -p) or have start-up/teardown costs
 *           (peaktrace, heaptrack) are compared on this number.
 *   --wait  block SIGUSR1 first, write "allocbench: waiting for SIGUSR1" on stdout
 *           and wait for it before the loop (for attach-mode measurements).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 1024

static uint64_t lcg_state = 0x243f6a8885a308d3ull;   /* fixed seed: deterministic */

/* Knuth's MMIX LCG; the high bits are the good ones. */
static inline uint64_t lcg_next(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return lcg_state;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0) {
		/* nothing to do: the caller waits for this line and will time out */
	}
}

int main(int argc, char **argv)
{
	static unsigned char *slot[SLOTS];
	long ops = 1000000;
	int report_time = 0;
	uint64_t sum = 0, t0, t1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--wait") == 0) {
			sigset_t set;
			int sig;
			sigemptyset(&set);
			sigaddset(&set, SIGUSR1);
			sigprocmask(SIG_BLOCK, &set, NULL);
			say("allocbench: waiting for SIGUSR1\n");
			while (sigwait(&set, &sig) != 0 || sig != SIGUSR1)
				;
		} else if (strcmp(argv[i], "--time") == 0) {
			report_time = 1;
		} else {
			ops = strtol(argv[i], NULL, 10);
		}
	}

	t0 = now_ns();
	for (long i = 0; i < ops; i++) {
		uint64_t r = lcg_next();
		unsigned idx = (unsigned)(r >> 54) % SLOTS;     /* top 10 bits */
		size_t size = 16 + (size_t)((r >> 20) % 4081);  /* 16..4096 */
		unsigned char *p;

		switch (i % 64) {
		case 0:
			free(slot[idx]);
			p = calloc(1, size);
			break;
		case 1:
			p = realloc(slot[idx], size);  /* realloc(NULL, n) on an empty slot */
			break;
		default:
			free(slot[idx]);
			p = malloc(size);
			break;
		}
		if (!p)
			return 1;
		p[0] = (unsigned char)i;
		slot[idx] = p;
		sum = sum * 31 + size + p[0];
	}
	for (unsigned i = 0; i < SLOTS; i++)
		free(slot[i]);
	t1 = now_ns();

	printf("checksum=%016llx\n", (unsigned long long)sum);
	if (report_time)
		fprintf(stderr, "allocbench: loop_ns=%llu ops=%ld\n", (unsigned long long)(t1 - t0), ops);
	return 0;
}

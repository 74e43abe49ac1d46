/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * allocbench — a deterministic, allocation-heavy program for overhead measurements.
 *
 * Usage: allocbench [--wait] [--time] [--threads N] [OPS]       (OPS default 1000000)
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
 *   --time  also prints "allocbench: loop_ns=<ns> cpu_ns=<ns> ops=<n>" on stderr: the time
 *           of the operation loop alone, measured with CLOCK_MONOTONIC, and the CPU time the
 *           process spent in it (CLOCK_PROCESS_CPUTIME_ID: user + system of every thread,
 *           which includes the uprobe traps and BPF programs run on its behalf, but not the
 *           time it waited for a CPU another process held). Tools that
 *           attach after start-up (memleak -p) or have start-up/teardown costs
 *           (peaktrace, heaptrack) are compared on this number.
 *   --threads N  run the loop in N threads at once (default 1), each OPS operations on a ring
 *           of its own with its own fixed seed, so glibc's thread arenas and the tracer's
 *           per-thread paths are exercised; the checksum folds the threads' in thread order
 *           and loop_ns is from the start of all threads to the end of the last.
 *   --wait  block SIGUSR1 first, write "allocbench: waiting for SIGUSR1" on stdout
 *           and wait for it before the loop (for attach-mode measurements).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 1024

#define MAX_THREADS 64

/* Knuth's MMIX LCG; the high bits are the good ones. */
static inline uint64_t lcg_next(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state;
}

struct worker {
	pthread_t th;
	long ops;
	uint64_t seed;       /* fixed per thread: deterministic */
	uint64_t sum;
	int failed;
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0) {
		/* nothing to do: the caller waits for this line and will time out */
	}
}

static void *run_ops(void *arg)
{
	struct worker *w = arg;
	unsigned char **slot = calloc(SLOTS, sizeof(*slot));
	uint64_t lcg = w->seed, sum = 0;

	if (!slot) {
		w->failed = 1;
		return NULL;
	}
	for (long i = 0; i < w->ops; i++) {
		uint64_t r = lcg_next(&lcg);
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
		if (!p) {
			w->failed = 1;
			break;
		}
		p[0] = (unsigned char)i;
		slot[idx] = p;
		sum = sum * 31 + size + p[0];
	}
	for (unsigned i = 0; i < SLOTS; i++)
		free(slot[i]);
	free(slot);
	w->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	long ops = 1000000;
	int report_time = 0, nthreads = 1;
	uint64_t sum = 0, t0, t1, c0, c1;

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
		} else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
			nthreads = atoi(argv[++i]);
			if (nthreads < 1 || nthreads > MAX_THREADS)
				return 2;
		} else {
			ops = strtol(argv[i], NULL, 10);
		}
	}
	for (int t = 0; t < nthreads; t++) {
		w[t].ops = ops;
		w[t].seed = 0x243f6a8885a308d3ull + 0x9e3779b97f4a7c15ull * (uint64_t)t;
	}

	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now_ns();
	if (nthreads == 1) {
		run_ops(&w[0]);     /* on the main thread, as before threads were an option */
	} else {
		for (int t = 0; t < nthreads; t++)
			if (pthread_create(&w[t].th, NULL, run_ops, &w[t]))
				return 1;
		for (int t = 0; t < nthreads; t++)
			pthread_join(w[t].th, NULL);
	}
	for (int t = 0; t < nthreads; t++) {
		if (w[t].failed)
			return 1;
		sum = sum * 1000003 + w[t].sum;
	}
	t1 = now_ns();
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	printf("checksum=%016llx\n", (unsigned long long)sum);
	if (report_time)
		fprintf(stderr, "allocbench: loop_ns=%llu cpu_ns=%llu ops=%ld threads=%d\n",
			(unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0), ops * nthreads,
			nthreads);
	return 0;
}

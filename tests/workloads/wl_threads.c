/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_threads — four threads allocating concurrently, with a deterministic peak.
 *
 * Usage: wl_threads [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Thread i (0..3) runs scn_thread<i>() (its own frames[0]), in three phases:
 *   1. churn:  10 x (malloc(C_i) + free)            C_i = 1100 + 10*i
 *   2. hold:   N_i = 2*(i+1) blocks of S_i bytes      S_i = 2000 + 1000*i
 *   3. barrier (all four hold their blocks), then free all but (i+1) of them.
 * Figures per thread: a(10+N_i) / (10*C_i + N_i*S_i), f(10+i+1) / (10*C_i + (i+1)*S_i),
 * live (i+1) / (i+1)*S_i, peak N_i / N_i*S_i.
 *
 * Why the peak is exact despite the scheduler: a thread only ever holds its churn
 * block (C_i < S_i <= its held set) before it holds its set, and nothing is allocated
 * after the barrier, so the live total is maximal exactly once: when the last thread
 * completes phase 2, with every thread holding its set (plus main's block and the
 * DTVs below). No free happens in between, so no other moment ties with it.
 *
 * All sizes are above glibc's largest tcache size (1032 bytes): freed blocks never sit
 * in a thread's tcache, so at thread exit glibc's tcache_thread_shutdown() frees only
 * the tcache itself (a block glibc allocated internally, never through malloc): peaktrace
 * sees exactly one free of an unknown pointer per thread (errors.unknown_free = 4).
 *
 * pthread_create() also makes one calloc from ld.so per thread (the thread's DTV,
 * _dl_allocate_tls): calloc(17, 16) = 272 bytes (17 = 1 TLS module, libc's, + 14 spare
 * + 2 header slots), 4 x 272 live to the end (kept with the cached thread stacks).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "wl_common.h"

#define NTHREADS 4

static pthread_barrier_t barrier;

/* Body shared by the four scenario functions. Always inlined into each of them so
 * that the malloc call sites (and so frames[0]) belong to scn_thread<i>. */
static inline __attribute__((always_inline)) void thread_body(int i)
{
	const size_t churn = 1100 + 10 * (size_t)i;
	const size_t size = 2000 + 1000 * (size_t)i;
	const int n = 2 * (i + 1);
	void *held[8];

	for (int k = 0; k < 10; k++) {
		void *p = malloc(churn);
		wl_sink(p);
		free(p);
	}
	for (int k = 0; k < n; k++) {
		held[k] = malloc(size);
		wl_sink(held[k]);
	}
	pthread_barrier_wait(&barrier);
	for (int k = i + 1; k < n; k++)
		free(held[k]);
}

WL_SCENARIO void scn_thread0(void) { thread_body(0); }
WL_SCENARIO void scn_thread1(void) { thread_body(1); }
WL_SCENARIO void scn_thread2(void) { thread_body(2); }
WL_SCENARIO void scn_thread3(void) { thread_body(3); }

static void (*const scenarios[NTHREADS])(void) = { scn_thread0, scn_thread1, scn_thread2, scn_thread3 };

static void *thread_main(void *arg)
{
	scenarios[(uintptr_t)arg]();
	return NULL;
}

/* a1/1500 l1/1500 p1/1500 — main's own block, live across the whole run. */
WL_SCENARIO void scn_main_before(void)
{
	wl_sink(malloc(1500));
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];

	wl_maybe_wait(argc, argv);

	scn_main_before();
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	return 0;
}

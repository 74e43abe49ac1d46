/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_churn — many short-lived threads, in waves, each with a known allocation pattern
 * (tests/sections/fault.py, case fault/thread churn).
 *
 * Usage: wl_churn [--wait] WAVES PER_WAVE     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * WAVES times: PER_WAVE threads created, then all joined (in order). Each thread runs
 * scn_churn_thread():  a = malloc(1100); b = malloc(2200); free(a); c = malloc(3300);
 * free(b); free(c)  ->  a3/6600 f3/6600 per thread, nothing live at its exit.
 * All sizes are above glibc's largest tcache size (1032 bytes), so no freed block waits
 * in a tcache: at thread exit tcache_thread_shutdown() frees only the tcache struct
 * itself, which glibc allocated internally (not through malloc): exactly one free of a
 * pointer peaktrace never saw per thread, errors.unknown_free = WAVES*PER_WAVE.
 *
 * glibc's own allocations, made deterministic: every thread runs on a stack this program
 * provides (pthread_attr_setstack, PER_WAVE stacks mmapped once and reused by each wave),
 * so glibc keeps no stack cache. Then pthread_create() makes exactly one calloc from
 * ld.so, the thread's DTV (_dl_allocate_tls: calloc(17, 16) = 272 bytes here: libc's TLS
 * module + 14 spare + 2 header slots), and pthread_join() frees it (__nptl_deallocate_stack
 * -> _dl_deallocate_tls, for a user stack) — both in the main thread. With glibc's default
 * stacks the DTVs would stay with the cached stacks, and how many stacks the cache keeps
 * depends on timing. The test still takes the truth from the reference tracer
 * (ref_preload.so) and checks that it agrees with these formulas:
 *   alloc_count = T*(3+1), alloc_bytes = T*(6600+272), free_count = T*4, free_bytes = same,
 *   live 0, with T = WAVES*PER_WAVE.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "wl_common.h"

#define STACK_SIZE (128 * 1024)
#define MAX_PER_WAVE 1024

WL_SCENARIO void scn_churn_thread(void)
{
	void *a, *b, *c;

	a = malloc(wl_opaque_size(1100));
	wl_sink(a);
	b = malloc(wl_opaque_size(2200));
	wl_sink(b);
	free(a);
	c = malloc(wl_opaque_size(3300));
	wl_sink(c);
	free(b);
	free(c);
}

static void *thread_main(void *arg)
{
	(void)arg;
	scn_churn_thread();
	return NULL;
}

static int num(const char *s)
{
	int v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

int main(int argc, char **argv)
{
	static pthread_t t[MAX_PER_WAVE];
	static pthread_attr_t attr[MAX_PER_WAVE];
	int i = wl_maybe_wait(argc, argv);
	int waves, per;
	char *stacks;

	if (argc - i < 2)
		return 2;
	waves = num(argv[i]);
	per = num(argv[i + 1]);
	if (waves < 1 || per < 1 || per > MAX_PER_WAVE)
		return 2;
	stacks = mmap(NULL, (size_t)per * STACK_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stacks == MAP_FAILED)
		return 4;
	for (int k = 0; k < per; k++) {
		/* pthread_attr_init/setstack allocate nothing (no cpuset, no sched params). */
		if (pthread_attr_init(&attr[k]) != 0 ||
		    pthread_attr_setstack(&attr[k], stacks + (size_t)k * STACK_SIZE, STACK_SIZE) != 0)
			return 4;
	}
	for (int w = 0; w < waves; w++) {
		for (int k = 0; k < per; k++)
			if (pthread_create(&t[k], &attr[k], thread_main, NULL) != 0)
				return 5;
		for (int k = 0; k < per; k++)
			if (pthread_join(t[k], NULL) != 0)
				return 6;
	}
	wl_say(1, "wl: churn done\n");
	return 0;
}

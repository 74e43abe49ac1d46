// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * demo_app — a stand-in for a serverless function, for `make demo`.
 *
 * It handles a series of "invocations" the way real functions go wrong: the whole response is
 * buffered and then copied once more to serialize it, the request context is duplicated per
 * request, a cache leaks a little on every invocation, and worker threads allocate scratch
 * buffers. Every figure is deterministic, so the report can be checked by eye:
 *   per invocation: response 4 MiB + copy 4 MiB (freed at the end), context 64 KiB (freed),
 *                   cache entry 16 KiB (never freed: 10 invocations leak 160 KiB),
 *                   4 worker threads x 64 scratch buffers of 24 KiB (freed before the next).
 * Built with frame pointers so the flame graphs show whole call chains.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INVOCATIONS 10
#define RESPONSE_BYTES (4u << 20)
#define CONTEXT_BYTES (64u << 10)
#define CACHE_ENTRY_BYTES (16u << 10)
#define WORKERS 4
#define SCRATCH_PER_WORKER 64
#define SCRATCH_BYTES (24u << 10)

/* Visible to the linker so the compiler cannot drop the leak as a dead store. */
void *volatile cache[INVOCATIONS];

static __attribute__((noinline)) char *build_response(int inv)
{
	char *buf = malloc(RESPONSE_BYTES);

	memset(buf, 'a' + inv % 26, RESPONSE_BYTES);
	return buf;
}

static __attribute__((noinline)) char *serialize_response(const char *resp)
{
	/* The classic extra copy: serialize into a second buffer of the same size. */
	char *out = malloc(RESPONSE_BYTES);

	memcpy(out, resp, RESPONSE_BYTES);
	return out;
}

static __attribute__((noinline)) char *copy_context(int inv)
{
	char *ctx = calloc(1, CONTEXT_BYTES);

	ctx[inv] = 1;
	return ctx;
}

static __attribute__((noinline)) void remember_in_cache(int inv)
{
	/* Leaks on purpose: nothing ever evicts the cache. */
	cache[inv] = malloc(CACHE_ENTRY_BYTES);
	memset((void *)cache[inv], 0, CACHE_ENTRY_BYTES);
}

static __attribute__((noinline)) void *worker(void *arg)
{
	void *scratch[SCRATCH_PER_WORKER];
	int i;

	for (i = 0; i < SCRATCH_PER_WORKER; i++) {
		scratch[i] = malloc(SCRATCH_BYTES);
		memset(scratch[i], i, SCRATCH_BYTES);
	}
	for (i = 0; i < SCRATCH_PER_WORKER; i++)
		free(scratch[i]);
	return arg;
}

static __attribute__((noinline)) void run_workers(void)
{
	pthread_t t[WORKERS];
	int i;

	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
}

static __attribute__((noinline)) void handle_invocation(int inv)
{
	char *ctx = copy_context(inv);
	char *resp = build_response(inv);
	char *wire = serialize_response(resp);

	run_workers();
	remember_in_cache(inv);
	free(resp);
	free(wire);
	free(ctx);
}

int main(void)
{
	int inv;

	for (inv = 0; inv < INVOCATIONS; inv++) {
		handle_invocation(inv);
		usleep(20000);
	}
	return 0;
}

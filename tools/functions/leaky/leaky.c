// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * leaky — a Lambda function whose module-level cache grows by one entry per invocation and is
 * never evicted: the slow leak that only shows after many warm invocations.
 *
 * Event: {"kb": K}   (optional; default 256)
 * Per invocation, exactly one malloc(K << 10) (256 KiB by default), fully written, linked into
 * the cache and never freed. At 256 KiB it is above glibc's 128 KiB mmap threshold (pinned, see
 * main), so every entry is its own mapping of 65 pages (glibc's 16-byte chunk header pushes the
 * block onto one more page): RSS grows by exactly 260 KiB per invocation (measured), and after n
 * invocations the cache holds n * 262144 bytes.
 * The response is {"request_id":"...","leaked_total":BYTES,"entries":n} (< 200 bytes).
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

#define MAX_KB (1LL << 20)

struct entry {
	struct entry *next;
	size_t bytes;
	char data[];
};

/* Module-level state, like a global dict in a Python handler: lives as long as the sandbox. */
static struct entry *cache;
static size_t cache_entries, cache_bytes;

static __attribute__((noinline)) void remember(size_t bytes)
{
	struct entry *e = malloc(bytes);

	if (!e)
		return;
	memset(e, 0x5a, bytes);
	e->bytes = bytes;
	e->next = cache;
	cache = e;
	cache_entries++;
	cache_bytes += bytes;
}

static int handle(const struct rt_event *ev, struct rt_buf *out, void *arg)
{
	long long kb = rt_json_int(ev->body, ev->len, "kb", 256);

	if (kb < 1 || kb > MAX_KB)
		return rt_error_json(out, "InvalidEvent", "kb must be between 1 and %lld", MAX_KB), RT_ERROR;
	remember((size_t)kb << 10);
	rt_buf_printf(out, "{\"request_id\":\"%s\",\"leaked_total\":%zu,\"entries\":%zu}",
		      ev->request_id, cache_bytes, cache_entries);
	return RT_OK;
}

int main(void)
{
	/* Pin the threshold so each entry is a separate mmap, the same on every invocation. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	return rt_run("leaky", handle, NULL);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * oom — a Lambda function that needs as much memory as its event says, then gives it back.
 *
 * Event: {"mb": N, "sleep_ms": S, "fail": false}   (all optional; defaults N = 0, S = 0)
 * Per invocation, exactly:
 *   - one malloc(N << 20), every byte written (memset), then free() — so RSS rises by N MiB and
 *     falls back at the end. M_MMAP_THRESHOLD is pinned at 128 KiB at start-up, which turns off
 *     glibc's dynamic threshold: every such block is its own mmap, returned by munmap on free,
 *     whatever the previous event asked for. An {"mb":64} after an {"mb":128} therefore peaks at
 *     its own ~64 MiB (plus the ~1 MiB process baseline) while the sandbox high-water mark
 *     (Lambda's Max Memory Used) still says 128+.
 *   - N larger than the memory limit minus the baseline gets the kernel's cgroup OOM kill while
 *     memset touches the pages, as on Lambda.
 *   - "sleep_ms" sleeps while holding the block (for timeouts and for sampling RSS mid-invocation).
 *   - "fail": true returns a function error instead of a response (the /error path).
 * The response is {"request_id":"...","mb":N,"touched":BYTES} (< 200 bytes).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime.h"

#define MAX_MB (1LL << 20)   /* 1 TiB: a bound on the event, not a memory limit */

static __attribute__((noinline)) char *grab(size_t bytes)
{
	char *p = malloc(bytes);

	/* Touch every page: malloc'd memory is not RSS until written. */
	if (p)
		memset(p, 0xa5, bytes);
	return p;
}

static int handle(const struct rt_event *ev, struct rt_buf *out, void *arg)
{
	long long mb = rt_json_int(ev->body, ev->len, "mb", 0);
	long long sleep_ms = rt_json_int(ev->body, ev->len, "sleep_ms", 0);
	size_t bytes;
	char *p = NULL;

	if (mb < 0 || mb > MAX_MB)
		return rt_error_json(out, "InvalidEvent", "mb must be between 0 and %lld", MAX_MB), RT_ERROR;
	bytes = (size_t)mb << 20;
	if (bytes && !(p = grab(bytes)))
		return rt_error_json(out, "MemoryError", "malloc(%zu) failed", bytes), RT_ERROR;
	if (sleep_ms > 0) {
		struct timespec ts = { .tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	free(p);
	if (rt_json_bool(ev->body, ev->len, "fail", false))
		return rt_error_json(out, "RequestedFailure", "the event asked to fail"), RT_ERROR;
	rt_buf_printf(out, "{\"request_id\":\"%s\",\"mb\":%lld,\"touched\":%zu}", ev->request_id, mb,
		      bytes);
	return RT_OK;
}

int main(void)
{
	/* Fixed threshold = no dynamic adjustment: big blocks are always mmap'd and munmap'd. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	return rt_run("oom", handle, NULL);
}
